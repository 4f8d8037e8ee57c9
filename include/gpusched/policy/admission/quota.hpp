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
/// per model they landed on) must fit, with any victims' usage returned first. Usage is
/// recomputed from the ledger at the start of every cycle (so releases between cycles count
/// exactly) and kept in step with every commit during the cycle.
///
/// Tenants without a queue in the tree are not limited. An elastic gang is checked at the size
/// the placement policy chose (the largest that fits the cluster): if that size exceeds the
/// quota the gang is deferred, not shrunk further.
/// Complexity: O(dims x tree depth) per check; O(running tasks) per cycle for the recompute.
#pragma once

#include <string>
#include <string_view>
#include <utility>  // std::move

#include "gpusched/config.hpp"
#include "gpusched/policy/admission/gang.hpp"
#include "gpusched/policy/concepts.hpp"
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
  std::string s =
      "over quota: needs " + std::to_string(r.needed) + " " + std::string(to_string(r.resource));
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
    if (const auto s = tree_.check(j.tenant, demand_lower_bound(j, tree_.dims()))) {
      return {verdict::defer, over_quota_reason(*s)};
    }
    return v;
  }

  [[nodiscard]] admission_verdict approve(const schedule_context& ctx, const job_spec& j,
                                          ledger::transaction& tx, const admission_tools& tools) {
    if constexpr (requires { inner_.approve(ctx, j, tx, tools); }) {
      const auto v = inner_.approve(ctx, j, tx, tools);
      if (v.kind != verdict::admit) return v;
    } else if constexpr (requires { inner_.approve(ctx, j, tx); }) {
      const auto v = inner_.approve(ctx, j, tx);
      if (v.kind != verdict::admit) return v;
    }
    // Exact usage of the tentative placement, with victims' usage returned for the check.
    quota_vector mine(tree_.dims(), 0);
    add_usage(tx.state(), tx.placed(), mine);
    for_victims(ctx, tx, -1);
    const auto s = tree_.check(j.tenant, mine);
    for_victims(ctx, tx, +1);
    if (s) return {verdict::defer, over_quota_reason(*s)};
    return {verdict::admit, {}};
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
  void for_victims(const schedule_context& ctx, const ledger::transaction& tx, std::int64_t sign) {
    quota_vector v(tree_.dims(), 0);
    for (job_id id : tx.evicted()) {
      const auto* r = ctx.book().find(id);
      if (r == nullptr) continue;
      std::fill(v.begin(), v.end(), 0);
      add_usage(ctx.state(), r->tasks, v);
      tree_.charge(r->spec.tenant, v, sign);
    }
  }

  quota_tree tree_;
  Inner inner_;
};

static_assert(admission_policy<quota_admission<>>);

GPUSCHED_END_NAMESPACE
