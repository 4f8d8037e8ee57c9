// SPDX-License-Identifier: Apache-2.0
/// @file
/// `schedule_context`: the one argument every policy decision function takes: the state (ledger
/// and cluster), the clock, and the seeded random engine. New inputs are added here, so adding
/// one breaks no policy's signature.
#pragma once

#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/core/random.hpp"
#include "gpusched/core/time.hpp"
#include "gpusched/workload/ledger.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief What a policy sees. Non-owning; valid for one cycle. During placement the cluster
/// reflects the open transaction's tentative changes.
class schedule_context {
 public:
  schedule_context(const ledger& book, sim_time now, random_engine& rng) noexcept
      : book_(&book), now_(now), rng_(&rng) {}
  /// The cluster's current (possibly tentative) state.
  [[nodiscard]] const cluster& state() const noexcept { return book_->state(); }
  /// Who holds what: the running jobs and their allocations.
  [[nodiscard]] const ledger& book() const noexcept { return *book_; }
  [[nodiscard]] sim_time now() const noexcept { return now_; }
  /// The seeded engine; draws from it are the only source of randomness a policy may use.
  [[nodiscard]] random_engine& rng() const noexcept { return *rng_; }

 private:
  const ledger* book_;
  sim_time now_;
  random_engine* rng_;
};

GPUSCHED_END_NAMESPACE
