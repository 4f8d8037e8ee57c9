// SPDX-License-Identifier: Apache-2.0
/// @file
/// `quota_admission<Inner>`: tenant quotas with cohorts, borrowing and lending (Kueue
/// semantics, see `workload/quota.hpp`) in front of another admission policy (by default
/// `gang_admission`, which keeps its queueing, backfill and backoff).
///
/// Two checks: before placement, a lower bound of the gang's demand at its minimum size (CPU,
/// memory, milli-GPU, and whole GPUs of a model when a request allows exactly one model) must
/// fit, so a gang that can never fit its quota now is deferred without a placement attempt;
/// after the tentative placement (`approve`), the exact usage of what was placed (GPUs counted
/// per model they landed on) must fit, with any victims' usage returned first. The first check
/// also passes a gang whose lower bound stays within its tenant's own nominal quota
/// (`quota_tree::within_nominal`) even when cohort peers' borrowing leaves nothing available:
/// that quota may be reclaimed (Kueue `reclaimWithinCohort`), so the gang goes on to placement
/// and preemption, and `approve` decides exactly with the victims' usage returned. (When such
/// a gang is placed on free resources without victims and the cohort is still full, `approve`
/// defers it, and the pipeline does not try preemption after a refusal.) Usage is
/// recomputed from the ledger at the start of every cycle (so releases between cycles count
/// exactly) and kept in step with every commit during the cycle. Tenants without a queue in the
/// tree are not limited.
///
/// Elastic gangs (Kueue's partial admission): the quota is checked on what the placement
/// actually granted (the placement policy may already have chosen a reduced size to fit the
/// cluster). If that is over quota and the gang can shrink further, the largest size that fits
/// both the cluster and the quota is admitted: sizes are reductions `x` of the full gang,
/// spread over the elastic groups as `reduced_sizes(j, x)` does (policy/placement/gang.hpp),
/// each placed again with the pipeline's placement policy in the same transaction and checked
/// exactly; `x` is found by bisection between the granted size and the minimum, assuming that
/// a smaller gang fits (cluster and quota) whenever a larger one does. The decision's placement
/// shows the size admitted; a gang over quota even at its minimum is deferred with the
/// shortfall at its minimum. The inner policy's `approve` (backfill reservations) then judges
/// the final placement.
/// Complexity: O(dims x tree depth) per check; an elastic gang shrunk for quota costs
/// O(log(max - min)) placements; O(running tasks) per cycle for the recompute.
#pragma once

#include <algorithm>  // std::fill
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>  // std::move

#include "gpusched/config.hpp"
#include "gpusched/policy/admission/gang.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/placement/gang.hpp"  // reduced_sizes
#include "gpusched/workload/quota.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// The over-quota reason for a shortfall in tenant's queue.
[[nodiscard]] inline reason over_quota_reason(const quota_shortfall& s) {
  reason r{reason_code::over_quota, resource_kind::none, s.needed, s.available, -1, {}, {}};
  switch (s.resource.what) {
    case quota_resource::kind::cpu:
      r.resource = resource_kind::cpu;
      break;
    case quota_resource::kind::memory:
      r.resource = resource_kind::memory;
      break;
    case quota_resource::kind::gpu_milli:
      r.resource = resource_kind::gpu_share;
      break;
    case quota_resource::kind::gpus:
      r.resource = resource_kind::gpu;
      r.model = s.resource.model;
      break;
  }
  r.scope = s.limiting_node;
  return r;
}

/// Renders an over-quota reason with the names of the quota node and GPU model, e.g.
/// `over quota: needs 16 GPUs of H100-SXM5-80GB, 8 left under cohort 'research'`.
[[nodiscard]] inline std::string describe_quota(const reason& r, const quota_tree& q,
                                                const gpu_catalog& catalog) {
  if (r.code != reason_code::over_quota) return describe(r);
  std::string s = "over quota: needs " + amount_text(r.needed, r.resource);
  if (r.model.valid() && catalog.contains(r.model)) s += " of " + catalog[r.model].name;
  s += ", " + std::to_string(r.available) + " left";
  if (r.scope >= 0 && static_cast<std::size_t>(r.scope) < q.nodes().size()) {
    const auto& n = q.at(r.scope);
    s += std::string(n.queue ? " in queue '" : " under cohort '") + n.name + "'";
  }
  return s;
}

/// @brief Quota gate in front of `Inner`; see the file documentation.
template <class Inner = gang_admission>
  requires admission_policy<Inner>
class quota_admission {
 public:
  using policy_category = admission_tag;

  explicit quota_admission(quota_tree tree, Inner inner = {})
      : tree_(std::move(tree)), inner_(std::move(inner)) {}

  [[nodiscard]] static constexpr std::string_view name() noexcept { return "quota"; }
  [[nodiscard]] const quota_tree& quotas() const noexcept { return tree_; }
  [[nodiscard]] const Inner& inner() const noexcept { return inner_; }
  [[nodiscard]] Inner& inner() noexcept { return inner_; }

  void begin_cycle(const schedule_context& ctx) {
    if constexpr (requires { inner_.begin_cycle(ctx); }) inner_.begin_cycle(ctx);
    tree_.recompute(ctx.book());
  }

  [[nodiscard]] admission_verdict admit(const schedule_context& ctx, const job_spec& j) {
    admission_verdict v = inner_.admit(ctx, j);
    if (v.kind != verdict::admit) return v;
    demand_lower_bound(j, tree_.dims(), buffer_);
    if (const auto s = tree_.check(j.tenant, buffer_)) {
      // within its own nominal quota: reclaimable from borrowers, so placement and preemption
      // are tried; approve() checks exactly with the victims' usage returned
      if (!tree_.within_nominal(j.tenant, buffer_)) return {verdict::defer, over_quota_reason(*s)};
    }
    return v;
  }

  /// After the tentative placement in `tx`: the exact quota check (shrinking an elastic gang
  /// until it fits, see the file documentation), then the inner policy's `approve`.
  [[nodiscard]] admission_verdict approve(const schedule_context& ctx, const job_spec& j,
                                          ledger::transaction& tx, const admission_tools& tools) {
    for_victims(ctx, tx, -1);  // victims' usage is returned for the checks
    auto s = placed_shortfall(j, tx);
    if (s && is_elastic(j)) s = shrink_to_quota(j, tx, tools, *s);
    for_victims(ctx, tx, +1);
    if (s) return {verdict::defer, over_quota_reason(*s)};
    if constexpr (requires { inner_.approve(ctx, j, tx, tools); }) {
      return inner_.approve(ctx, j, tx, tools);
    } else if constexpr (requires { inner_.approve(ctx, j, tx); }) {
      return inner_.approve(ctx, j, tx);
    } else {
      return {verdict::admit, {}};
    }
  }

  void on_committed(const schedule_context& ctx, const decision& d) {
    if constexpr (requires { inner_.on_committed(ctx, d); }) inner_.on_committed(ctx, d);
    if (!d.victims.empty() || !d.shrinks.empty()) {
      tree_.recompute(ctx.book());  // victims' allocations are gone: count again, exactly
      return;
    }
    if (const auto* r = ctx.book().find(d.job)) {
      quota_vector v(tree_.dims(), 0);
      add_usage(ctx.state(), r->tasks, v);
      tree_.charge(r->spec.tenant, v);
    }
  }

  void on_admitted(const schedule_context& ctx, const job_spec& j) {
    if constexpr (requires { inner_.on_admitted(ctx, j); }) inner_.on_admitted(ctx, j);
  }

  [[nodiscard]] queue_action on_unplaced(const schedule_context& ctx, const job_spec& j,
                                         const reason& why, const admission_tools& tools) {
    if constexpr (requires { inner_.on_unplaced(ctx, j, why, tools); }) {
      return inner_.on_unplaced(ctx, j, why, tools);
    } else {
      return inner_.on_unplaced(ctx, j, why);
    }
  }

 private:
  static bool is_elastic(const job_spec& j) noexcept {
    for (const auto& g : j.groups) {
      if (g.elastic()) return true;
    }
    return false;
  }

  /// The quota shortfall of what `tx` placed, if any. O(grants + dims x depth).
  std::optional<quota_shortfall> placed_shortfall(const job_spec& j,
                                                  const ledger::transaction& tx) {
    buffer_.assign(tree_.dims(), 0);
    add_usage(tx.state(), tx.placed(), buffer_);
    return tree_.check(j.tenant, buffer_);
  }

  /// Replaces the over-quota placement of elastic `j` in `tx` by the largest size that fits the
  /// cluster and the quota; nullopt when one was placed, else the shortfall (at the minimum
  /// size when that places, otherwise the granted size's). Victims stay evicted.
  std::optional<quota_shortfall> shrink_to_quota(const job_spec& j, ledger::transaction& tx,
                                                 const admission_tools& tools,
                                                 const quota_shortfall& why) {
    std::int64_t slack = 0;
    for (const auto& g : j.groups) slack += g.count - g.minimum();
    // The placement holds only `j`'s tasks (evictions and shrinks come before it): undo to
    // here to try other sizes. `granted`: the reduction the placement chose, over quota.
    const auto granted =
        std::max<std::int64_t>(0, j.task_count() - static_cast<std::int64_t>(tx.placed().size()));
    if (granted >= slack) return why;
    const ledger::transaction::savepoint before{0, tx.shrunk().size(), tx.evicted().size()};
    sized_ = j;
    auto try_reduction = [&](std::int64_t x) -> std::optional<quota_shortfall> {
      tx.rollback_to(before);
      const auto sizes = reduced_sizes(j, x);
      for (std::size_t g = 0; g < sized_.groups.size(); ++g) {
        sized_.groups[g].count = sizes[g];
        sized_.groups[g].min_count = -1;  // exactly this size
      }
      if (!tools.place(sized_, tx).placed) {
        tx.rollback_to(before);
        return why;  // does not fit the cluster at this size: treated as too large
      }
      return placed_shortfall(j, tx);
    };
    if (auto at_min = try_reduction(slack)) return at_min;
    std::int64_t lo = granted;  // over quota (or not placeable)
    std::int64_t hi = slack;    // fits; `tx` holds this size
    bool holds_hi = true;
    while (hi - lo > 1) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (!try_reduction(mid)) {
        hi = mid;
        holds_hi = true;
      } else {
        lo = mid;
        holds_hi = false;
      }
    }
    if (!holds_hi && try_reduction(hi)) return why;  // not monotone after all: give up
    return std::nullopt;
  }

  void for_victims(const schedule_context& ctx, const ledger::transaction& tx, std::int64_t sign) {
    for (job_id id : tx.evicted()) {
      const auto* r = ctx.book().find(id);
      if (r == nullptr) continue;
      victim_.assign(tree_.dims(), 0);
      add_usage(ctx.state(), r->tasks, victim_);
      tree_.charge(r->spec.tenant, victim_, sign);
    }
  }

  quota_tree tree_;
  Inner inner_;
  quota_vector buffer_, victim_;  // reused: no allocation per check once warmed up
  job_spec sized_;                // an elastic gang at a trial size
};

static_assert(admission_policy<quota_admission<>>);

GPUSCHED_END_NAMESPACE
