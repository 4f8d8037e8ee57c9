// SPDX-License-Identifier: Apache-2.0
/// @file
/// Quota reclaim when the quota, not the cluster, is short (Kueue `reclaimWithinCohort`).
///
/// A gang within its tenant's nominal quota may be refused by a quota admission policy because
/// cohort peers borrow the rest of the cohort's quota, although free GPUs would hold it. The
/// pipeline then takes its *free-quota preemption path*: the admission policy describes the
/// reclaim in a `reclaim_scope` (`policy/decision.hpp`: the running jobs of the cohort's borrowing
/// queues that may be evicted, and whether a candidate's queue still borrows once some candidates
/// are gone), and a preemption policy with `select_reclaim(ctx, job, scope, probe)` picks victims
/// among them. The probe the pipeline passes places the gang after the evictions *and* asks the
/// admission policy's exact quota check, so victims are counted by the quota they return, not by
/// the GPUs they free. `reclaim_victims` is the shared selection (Kueue's minimal preemptions with
/// fill back); policies differ in the order in which they offer the candidates.
#pragma once

#include <algorithm>  // std::min
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>  // std::move
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/preemption/prefix_search.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Kueue's minimal reclaim over `scope`'s candidates offered in `order` (indices into
/// `scope.candidates()`, the policy's preference first).
///
/// 1. The sequence: the candidates in `order`, each kept only if its queue still borrows once
///    the kept ones before it are gone (`scope.borrowing`).
/// 2. The shortest prefix of the sequence after which `probe` passes, by galloping then
///    bisection (assuming more victims never hurt; the prefix returned always probed true).
/// 3. Fill back: from the second-to-last victim to the first, a victim whose eviction is not
///    needed (the probe passes without it) is spared. So no victim can be spared at the end.
/// If even the whole sequence does not pass, nobody is evicted: `why` is `no_victims` with the
/// number of candidates in `available`. Victims are whole jobs (no shrinks).
/// Probes: O(log s) + (victims - 1) for a sequence of s candidates; O(s x taken) borrowing
/// tests. Allocates its scratch (the path is taken rarely).
[[nodiscard]] inline preemption_plan reclaim_victims(const reclaim_scope& scope,
                                                     std::span<const std::uint32_t> order,
                                                     fit_probe probe) {
  const auto cand = scope.candidates();
  std::vector<std::uint32_t> seq;
  seq.reserve(order.size());
  for (const std::uint32_t i : order) {
    if (scope.borrowing(i, seq)) seq.push_back(i);
  }
  std::vector<job_id> ids;
  ids.reserve(seq.size());
  for (const std::uint32_t i : seq) ids.push_back(cand[i]->spec.id);
  preemption_plan plan = detail::shortest_prefix_plan(ids, probe);
  if (plan.victims.empty()) return plan;
  // fill back: the last victim is needed (the prefix one shorter did not fit)
  std::vector<job_id> without;
  for (std::size_t p = plan.victims.size() - 1; p-- > 0;) {
    without.assign(plan.victims.begin(), plan.victims.end());
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(p));
    if (probe(std::span<const job_id>(without))) plan.victims.swap(without);
  }
  return plan;
}

/// @brief `reclaim_victims` run by run over a scope with Kueue's structure
/// (`reclaim_scope::with_runs`): for each run in order, `scope.begin_run(run)`, then
/// `reclaim_victims` over the candidates of `order` eligible in that run; the first run that
/// finds victims gives the plan. A scope without the structure has one run with every
/// candidate, so this is `reclaim_victims(scope, order, probe)`. Without victims in any run the
/// plan of the last run is returned (reason `no_victims`).
/// Probes: those of `reclaim_victims`, per run.
[[nodiscard]] inline preemption_plan reclaim_in_runs(const reclaim_scope& scope,
                                                     std::span<const std::uint32_t> order,
                                                     fit_probe probe) {
  if (scope.runs() <= 1 && !scope.structured()) return reclaim_victims(scope, order, probe);
  preemption_plan plan;
  plan.why = reason::no_victims();
  std::vector<std::uint32_t> sub;
  for (std::size_t run = 0; run < scope.runs(); ++run) {
    sub.clear();
    for (const std::uint32_t i : order) {
      if (scope.eligible(i, run)) sub.push_back(i);
    }
    scope.begin_run(run);
    plan = reclaim_victims(scope, sub, probe);
    if (!plan.victims.empty()) return plan;
  }
  return plan;
}

GPUSCHED_END_NAMESPACE
