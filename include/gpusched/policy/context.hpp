// SPDX-License-Identifier: Apache-2.0
/// @file
/// `schedule_context`: the one argument every policy decision function takes: the state (ledger
/// and cluster), the clock, the seeded random engine, and the job history (attained service,
/// last placements) kept by whoever drives the cycles. New inputs are added here, so adding
/// one breaks no policy's signature.
#pragma once

#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/core/random.hpp"
#include "gpusched/core/time.hpp"
#include "gpusched/workload/history.hpp"
#include "gpusched/workload/ledger.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief What a policy sees. Non-owning; valid for one cycle. During placement the cluster
/// reflects the open transaction's tentative changes.
class schedule_context {
 public:
  /// `history`: the jobs' history (not owned; null: an empty one). A pipeline passes its own.
  schedule_context(const ledger& book, sim_time now, random_engine& rng,
                   const job_history* history = nullptr) noexcept
      : book_(&book), now_(now), rng_(&rng), history_(history) {}
  /// The cluster's current (possibly tentative) state.
  [[nodiscard]] const cluster& state() const noexcept { return book_->state(); }
  /// Who holds what: the running jobs and their allocations.
  [[nodiscard]] const ledger& book() const noexcept { return *book_; }
  /// The time of the cycle (the `now` given to `pipeline::schedule`).
  [[nodiscard]] sim_time now() const noexcept { return now_; }
  /// The seeded engine; draws from it are the only source of randomness a policy may use.
  [[nodiscard]] random_engine& rng() const noexcept { return *rng_; }
  /// What the jobs have done so far: attained service and last placements (`job_history`),
  /// kept by the driver of the cycles (the simulator feeds the pipeline's); empty when none was
  /// given. Read by the attained-service orderings and preemptions and by the topology-aware
  /// placement.
  [[nodiscard]] const job_history& history() const noexcept {
    return history_ != nullptr ? *history_ : empty_job_history();
  }

 private:
  const ledger* book_;
  sim_time now_;
  random_engine* rng_;
  const job_history* history_;
};

GPUSCHED_END_NAMESPACE
