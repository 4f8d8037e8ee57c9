// SPDX-License-Identifier: Apache-2.0
/// @file
/// `schedule_context`: the one argument every policy decision function takes: the state (ledger
/// and cluster), the clock, the seeded random engine, and the run's environment kept by whoever
/// drives the cycles: the job history (attained service, last placements) and the run's quota
/// tree and tenant tree (`policy_environment`). New inputs are added here, so adding one breaks
/// no policy's signature.
///
/// `policy_environment` is what a pipeline owns besides its policies (`pipeline::environment()`):
/// the history, which the driver of the cycles feeds, and the trees, which are given once per run
/// (immutable, shared: copying a pipeline shares them). The registry's `make_pipeline` installs
/// the trees of its `policy_inputs`; a policy reads them as `ctx.quotas()` and `ctx.tenants()`,
/// never through a pointer into another policy.
#pragma once

#include <memory>  // std::shared_ptr

#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/core/random.hpp"
#include "gpusched/core/time.hpp"
#include "gpusched/workload/history.hpp"
#include "gpusched/workload/ledger.hpp"

GPUSCHED_BEGIN_NAMESPACE

class quota_tree;   // workload/quota.hpp
class tenant_tree;  // workload/tenant.hpp

/// @brief What a pipeline owns besides its policies: the jobs' history and the run's trees.
/// Copying copies the history and shares the trees (they are immutable).
struct policy_environment {
  /// The jobs' history (attained service, last placements), fed by the driver of the cycles.
  job_history history{};
  /// The run's quota tree (cohorts and queues, Kueue semantics): its structure and limits.
  /// Its usage is not kept here (a policy counts usage from the ledger). Null: none.
  std::shared_ptr<const quota_tree> quotas{};
  /// The run's tenant tree (accounts and users with weights, Slurm fair share). Null: none.
  std::shared_ptr<const tenant_tree> tenants{};
};

/// @brief What a policy sees. Non-owning; valid for one cycle. During placement the cluster
/// reflects the open transaction's tentative changes.
class schedule_context {
 public:
  /// `history`: the jobs' history (not owned; null: an empty one); no trees.
  schedule_context(const ledger& book, sim_time now, random_engine& rng,
                   const job_history* history = nullptr) noexcept
      : book_(&book), now_(now), rng_(&rng), history_(history) {}
  /// The environment `env` (not owned): its history and trees. A pipeline passes its own.
  schedule_context(const ledger& book, sim_time now, random_engine& rng,
                   const policy_environment& env) noexcept
      : book_(&book),
        now_(now),
        rng_(&rng),
        history_(&env.history),
        quotas_(env.quotas.get()),
        tenants_(env.tenants.get()) {}
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
  /// The run's quota tree (structure and limits; usage is the ledger's), or null when the run
  /// has none. Read by `checkpoint_aware_preemption` (quota reclaim, fair-share strategies)
  /// and `kueue_share_ordering` made without quotas of their own. O(1).
  [[nodiscard]] const quota_tree* quotas() const noexcept { return quotas_; }
  /// The run's tenant tree, or null when the run has none. Read by `fair_tree_ordering` made
  /// without a tree of its own, and for tenants' weights. O(1).
  [[nodiscard]] const tenant_tree* tenants() const noexcept { return tenants_; }

 private:
  const ledger* book_;
  sim_time now_;
  random_engine* rng_;
  const job_history* history_;
  const quota_tree* quotas_ = nullptr;
  const tenant_tree* tenants_ = nullptr;
};

GPUSCHED_END_NAMESPACE
