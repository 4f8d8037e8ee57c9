// SPDX-License-Identifier: Apache-2.0
/// @file
/// `quota_view_of(tree)`: the borrowing information of a Kueue-style `quota_tree`
/// (`workload/quota.hpp`) as the `quota_view` that `checkpoint_aware_preemption` reads for
/// quota reclaim and fair-share preemption, so that a user with a quota tree needs no glue.
///
/// For tenant `t` the view returns, in milli-GPU, the usage and nominal quota of the queue
/// serving `t` in one quota dimension (by default `quota_resource::gpu_milli()`; for
/// `quota_resource::gpus(model)` whole GPUs count 1000), so `tenant_quota::borrowed()` is the
/// queue's usage above its nominal quota, Kueue's definition of borrowing (a ClusterQueue
/// using more than its nominal quota is the one `reclaimWithinCohort` takes victims from).
/// A tenant without a queue, or a dimension the tree does not govern, gives no position
/// (never borrowing). The weight is `weight(t)` when given (Kueue `fairSharing.weight`), else 1.
///
/// Three forms:
/// - the run's quota tree, read through the context (no glue, no view): a pipeline whose
///   environment has a quota tree (`pipeline::environment().quotas`, installed by the
///   registry's `make_pipeline` from `policy_inputs::quotas`) gives it to every policy as
///   `ctx.quotas()`, and `checkpoint_aware_preemption` without a view of its own reads it with
///   `tenant_quota_from(ctx, tree, t)`: usage counted from the ledger, weights from the run's
///   tenant tree. This is the form the registry uses (`preemption=checkpoint-aware-reclaim`).
/// - `quota_view_of(tree, book)`: keeps a copy of the tree's quotas and counts the
///   tenant's usage from the ledger's running jobs when called, so it is always current.
///   The ledger must outlive the view. O(running tasks) per call; the policy calls it once
///   per tenant per selection.
/// - `quota_view_of(tree)`: reads the tree's own usage when called (O(1)); the tree must
///   outlive the view and be current when the policy selects (a tree whose usage the caller
///   keeps, e.g. with `quota_tree::recompute`).
///
/// The view serves reclaim under a GPU shortage (`select`). When GPUs are free but the cohort's
/// quota is lent out, the pipeline's free-quota path asks `quota_admission::reclaim_for` for the
/// borrowers instead (`policy/preemption/reclaim.hpp`), and no view is needed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>  // std::make_shared
#include <optional>
#include <string>
#include <utility>  // std::move

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/ids.hpp"
#include "gpusched/policy/context.hpp"
#include "gpusched/workload/quota.hpp"
#include "gpusched/workload/tenant.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Tenant `t`'s position in `tree` for quota dimension `r`, in milli-GPU; see the file
/// documentation. O(1). @pre `r` is a GPU dimension of the tree (see `quota_view_of`).
[[nodiscard]] inline std::optional<tenant_quota> tenant_quota_in(const quota_tree& tree,
                                                                 tenant_id t, quota_resource r,
                                                                 double weight = 1.0) {
  const auto d = r.index();
  const auto q = tree.queue_of(t);
  if (q < 0 || d >= tree.dims() || !tree.governed(d)) return std::nullopt;
  const std::int64_t scale = r.what == quota_resource::kind::gpus ? 1000 : 1;
  return tenant_quota{tree.usage(q, d) * scale, tree.nominal(q, d) * scale, weight};
}

/// @brief Tenant `t`'s position in the run's quota tree `tree` for dimension `r`, with usage
/// counted from `ctx.book()`'s running jobs of `t` (the tree's own usage is not read) and the
/// weight of `t` in `ctx.tenants()` (1 when the run has no tenant tree or `t` is not in it).
/// O(running tasks). @pre `r` is a GPU dimension of the tree (see `quota_view_of`).
[[nodiscard]] inline std::optional<tenant_quota> tenant_quota_from(
    const schedule_context& ctx, const quota_tree& tree, tenant_id t,
    quota_resource r = quota_resource::gpu_milli()) {
  double weight = 1.0;
  if (const tenant_tree* tenants = ctx.tenants()) {
    if (const auto p = tenants->find(t)) weight = (*tenants)[*p].weight;
  }
  auto q = tenant_quota_in(tree, t, r, weight);
  if (!q) return q;
  quota_vector used(tree.dims(), 0);
  for (const auto& job : ctx.book().running()) {
    if (job.spec.tenant == t) add_usage(ctx.state(), job.tasks, used);
  }
  q->usage = used[r.index()] * (r.what == quota_resource::kind::gpus ? 1000 : 1);
  return q;
}

/// @brief A `quota_view` reading `tree` (see the file documentation).
/// @throws invalid_value_error when `r` is not a GPU dimension (`gpu_milli` or `gpus(model)`)
/// or names a GPU model beyond the tree's catalog.
[[nodiscard]] inline quota_view quota_view_of(const quota_tree& tree,
                                              quota_resource r = quota_resource::gpu_milli(),
                                              std::function<double(tenant_id)> weight = {}) {
  if (r.what != quota_resource::kind::gpu_milli && r.what != quota_resource::kind::gpus) {
    throw invalid_value_error(error_id::invalid_value, "quota view", "resource",
                              r.what == quota_resource::kind::cpu ? "cpu" : "memory",
                              "preemption reads GPU quota: use gpu_milli or gpus(model)");
  }
  if (r.index() >= tree.dims()) {
    throw invalid_value_error(error_id::unknown_name, "quota view", "resource",
                              "gpus of model #" + std::to_string(r.model.value()),
                              "not a model of the quota tree's catalog");
  }
  return [tree = &tree, r, weight = std::move(weight)](tenant_id t) {
    return tenant_quota_in(*tree, t, r, weight ? weight(t) : 1.0);
  };
}

/// @brief A `quota_view` with the quotas of `tree` (copied) and usage counted from `book`'s
/// running jobs at each call (see the file documentation).
/// @throws invalid_value_error as `quota_view_of(tree, r, weight)`.
[[nodiscard]] inline quota_view quota_view_of(const quota_tree& tree, const ledger& book,
                                              quota_resource r = quota_resource::gpu_milli(),
                                              std::function<double(tenant_id)> weight = {}) {
  (void)quota_view_of(tree, r);  // validates `r`
  auto copy = std::make_shared<quota_tree>(tree);
  copy->clear_usage();
  return [tree = std::move(copy), book = &book, r, weight = std::move(weight)](tenant_id t) {
    const auto d = r.index();
    auto q = tenant_quota_in(*tree, t, r, weight ? weight(t) : 1.0);
    if (!q) return q;
    quota_vector used(tree->dims(), 0);
    for (const auto& job : book->running()) {
      if (job.spec.tenant == t) add_usage(book->state(), job.tasks, used);
    }
    q->usage = used[d] * (r.what == quota_resource::kind::gpus ? 1000 : 1);
    return q;
  };
}

GPUSCHED_END_NAMESPACE
