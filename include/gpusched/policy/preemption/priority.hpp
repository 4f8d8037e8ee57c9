// SPDX-License-Identifier: Apache-2.0
/// @file
/// Preemption baselines: `no_preemption`, and `priority_preemption`, which evicts the
/// lowest-priority preemptible jobs first (most recently started first among equals) until the
/// preemptor fits, and reclaims quota from borrowing cohort peers in the same order
/// (`select_reclaim`, see `policy/preemption/reclaim.hpp`).
#pragma once

#include <algorithm>  // std::sort, std::min
#include <cstddef>    // std::ptrdiff_t
#include <cstdint>
#include <string_view>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/hooks.hpp"
#include "gpusched/policy/preemption/prefix_search.hpp"
#include "gpusched/policy/preemption/reclaim.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Never preempts.
struct no_preemption {
  /// Opts into the preemption family.
  using policy_category = preemption_tag;
  /// The policy's name: `none`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "none"; }
  /// Never evicts: an empty plan with reason `no_victims`.
  [[nodiscard]] preemption_plan select(const schedule_context& /*ctx*/, const job_spec& /*j*/,
                                       fit_probe /*probe*/) const {
    return {{}, reason::no_victims()};
  }
  friend constexpr bool operator==(no_preemption, no_preemption) noexcept { return true; }
};

/// @brief Priority-only victim selection.
///
/// Candidates: running, preemptible jobs with priority strictly below the preemptor's, taken
/// lowest priority first, then most recent start, then highest id. The victims are the shortest
/// prefix of that list after which `probe` says the preemptor fits (found by galloping then
/// bisection, assuming more room never hurts; the prefix returned is always one that probed
/// true). No reprieve pass. If even all candidates do not make room, nobody is evicted.
/// Probes: O(log candidates); complexity O(R log R + log R x probe) for R running jobs.
///
/// Quota reclaim (`select_reclaim`, the pipeline's reclaim path): the scope's candidates (the
/// borrowers' jobs, whatever their priority, Kueue `reclaimWithinCohort: Any`, unless the
/// admission policy narrows the scope; with a queue's Kueue preemption settings also its own
/// queue's jobs), offered in Kueue's order (the scope's group: borrowers before the own
/// queue; then lowest priority, most recent start, highest id) to `reclaim_in_runs`.
struct priority_preemption {
  /// Opts into the preemption family.
  using policy_category = preemption_tag;
  /// The optional hooks it implements, called by the pipeline (`policy/hooks.hpp`).
  using hooks = hook_list<hook::select_reclaim>;
  /// The policy's name: `priority`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "priority"; }

  /// The victims (and shrinks) that make room for `j`, verified with the probe; an empty plan
  /// with its reason when no admissible set exists.
  [[nodiscard]] preemption_plan select(const schedule_context& ctx, const job_spec& j,
                                       fit_probe probe) const {
    std::vector<const running_job*> cand;
    for (const auto& r : ctx.book().running()) {
      if (r.spec.preemptible && r.spec.priority < j.priority) cand.push_back(&r);
    }
    std::sort(cand.begin(), cand.end(), [](const running_job* a, const running_job* b) {
      if (a->spec.priority != b->spec.priority) return a->spec.priority < b->spec.priority;
      if (a->start != b->start) return a->start > b->start;
      return a->spec.id > b->spec.id;
    });
    // Gallop over prefix lengths 1, 2, 4, ... until one fits, then bisect down to the shortest
    // fitting prefix: O(log candidates) probes instead of one per candidate. Each probe is a
    // real placement, so the returned set is verified whatever the shape of the search.
    std::vector<job_id> prefix;
    prefix.reserve(cand.size());
    for (const running_job* r : cand) prefix.push_back(r->spec.id);
    return detail::shortest_prefix_plan(prefix, probe);
  }

  /// Quota reclaim: `reclaim_in_runs` over the scope's candidates, by group (Kueue's rank:
  /// borrowers before the preemptor's own queue), then lowest priority, then most recent
  /// start, then highest id. O(C log C) plus the probes of `reclaim_in_runs`.
  [[nodiscard]] preemption_plan select_reclaim(const schedule_context& /*ctx*/,
                                               const job_spec& /*j*/, const reclaim_scope& scope,
                                               fit_probe probe) const {
    const auto cand = scope.candidates();
    std::vector<std::uint32_t> order(cand.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
    std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
      if (scope.group(x) != scope.group(y)) return scope.group(x) < scope.group(y);
      const running_job& a = *cand[x];
      const running_job& b = *cand[y];
      if (a.spec.priority != b.spec.priority) return a.spec.priority < b.spec.priority;
      if (a.start != b.start) return a.start > b.start;
      return a.spec.id > b.spec.id;
    });
    return reclaim_in_runs(scope, order, probe);
  }
  friend constexpr bool operator==(priority_preemption, priority_preemption) noexcept {
    return true;
  }
};

static_assert(preemption_policy<no_preemption>);
static_assert(preemption_policy<priority_preemption>);

GPUSCHED_END_NAMESPACE
