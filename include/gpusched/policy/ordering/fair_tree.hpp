// SPDX-License-Identifier: Apache-2.0
/// @file
/// Slurm's **Fair Tree** fair-share (the default since Slurm 19.05): users (leaf tenants) are
/// ranked by a depth-first walk of the tenant tree in which, at every level, siblings are visited
/// in decreasing **Level Fairshare** `LF = S / U`:
///  - `S` = the tenant's weight over the sum of its siblings' weights (itself included);
///  - `U` = the tenant's decayed usage over the sum of its siblings' (itself included); an
///    account's usage is the sum of its subtree's; `LF` is infinite when `U` is 0.
///
/// The walk hands out ranks from the number of leaves downwards, so if accounts A and B are
/// siblings and A has the higher LF, **every leaf under A ranks above every leaf under B**, at
/// every level (the property Fair Tree exists for; tested). The fair-share factor of a leaf is
/// `rank / leaves`, in (0, 1]; tenants that are not leaves of the tree get 0.
///
/// Ties, as Slurm documents them: sibling leaves with equal LF share one rank; sibling accounts
/// with equal LF have their children merged into one list before it is sorted; a leaf tied with
/// an account gets the rank of that account's highest-ranked leaf. After a tie the rank counter
/// drops by the number of leaves it covered. Equal LF is exact equality of the computed doubles
/// (both infinite included); order inside a tie, where it matters, is by tenant id.
///
/// Usage is multi-dimensional here (`decayed_usage` over a `resource_basis`): a subtree's usage
/// vector is summed, then reduced to a scalar as Slurm's normalised usage is, `max_r u_r / t_r`
/// over dimensions with a non-zero cluster total `t_r`.
///
/// `fair_tree_ordering` orders jobs by their tenant's factor (higher first), then FIFO
/// (submit, id), over the caller's usage and tree or over its own usage and the run's tree
/// (`schedule_context::tenants()`). `fair_tree_factor` is the same factor for
/// `multifactor_ordering`. Complexity: ranking is O(T log T + T x D) for T tenants and D
/// dimensions; ordering n jobs adds O(n log n).
#pragma once

#include <algorithm>  // std::sort, std::max
#include <chrono>
#include <cmath>  // std::isinf
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/detail/order_by_score.hpp"
#include "gpusched/policy/hooks.hpp"
#include "gpusched/policy/ordering/decay.hpp"
#include "gpusched/policy/ordering/multifactor.hpp"  // decayed_fair_share_factor
#include "gpusched/workload/tenant.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Fair Tree ranks of every tenant of `tree` given decayed `usage` at `now`.
/// @returns per tree position: `rank / leaves` for a leaf (1 for the best), 0 for an inner
/// tenant. Also fills `level_fs` (when given) with each position's Level Fairshare.
[[nodiscard]] inline std::vector<double> fair_tree_factors(
    const tenant_tree& tree, const decayed_usage& usage, sim_time now,
    std::vector<double>* level_fs = nullptr) {
  const std::size_t n = tree.size();
  std::vector<double> factor(n, 0.0);
  if (n == 0) return factor;
  // Subtree usage vectors (children after parents is not guaranteed: accumulate by depth).
  const share_vector total = usage.total(now);
  std::vector<share_vector> sub(n);
  std::vector<std::uint32_t> by_depth(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    by_depth[i] = i;
    sub[i] = usage.usage(tree[i].id, now);
  }
  std::sort(by_depth.begin(), by_depth.end(), [&](std::uint32_t a, std::uint32_t b) {
    return tree.depth(a) != tree.depth(b) ? tree.depth(a) > tree.depth(b) : a < b;
  });
  for (const auto i : by_depth) {
    if (const auto p = tree.parent(i); p != tenant_tree::npos) sub[p] += sub[i];
  }
  std::vector<double> scalar(n, 0.0);
  for (std::uint32_t i = 0; i < n; ++i) {
    double m = 0;
    for (Eigen::Index r = 0; r < total.size(); ++r) {
      if (total[r] > 0) m = std::max(m, sub[i][r] / total[r]);
    }
    scalar[i] = m;
  }
  // Level Fairshare of every tenant among its siblings.
  std::vector<double> lf(n, 0.0);
  const auto level = [&](std::span<const std::uint32_t> sibs) {
    double w = 0, u = 0;
    for (const auto s : sibs) {
      w += tree[s].weight;
      u += scalar[s];
    }
    for (const auto s : sibs) {
      const double share = tree[s].weight / w;
      const double use = u > 0 ? scalar[s] / u : 0.0;
      lf[s] = use > 0 ? share / use : std::numeric_limits<double>::infinity();
    }
  };
  level(tree.children(tenant_tree::npos));
  for (std::uint32_t i = 0; i < n; ++i) level(tree.children(i));
  if (level_fs != nullptr) *level_fs = lf;

  std::size_t leaves = 0;
  for (std::uint32_t i = 0; i < n; ++i) leaves += tree.is_leaf(i) ? 1u : 0u;
  // Depth-first walk; `rank` counts down from the number of leaves.
  std::size_t rank = leaves;
  const auto walk = [&](auto&& self, std::vector<std::uint32_t> list) -> void {
    std::sort(list.begin(), list.end(), [&](std::uint32_t a, std::uint32_t b) {
      if (lf[a] != lf[b]) return lf[a] > lf[b];
      return tree[a].id < tree[b].id;
    });
    for (std::size_t g = 0; g < list.size();) {
      std::size_t e = g + 1;
      while (e < list.size() && lf[list[e]] == lf[list[g]]) ++e;
      const std::size_t top = rank;
      std::vector<std::uint32_t> merged;  // children of the tied accounts
      std::size_t tied_leaves = 0;
      for (std::size_t k = g; k < e; ++k) {
        if (tree.is_leaf(list[k])) {
          ++tied_leaves;
        } else {
          const auto c = tree.children(list[k]);
          merged.insert(merged.end(), c.begin(), c.end());
        }
      }
      if (!merged.empty()) self(self, std::move(merged));  // its best leaf gets `top`
      for (std::size_t k = g; k < e; ++k) {
        if (tree.is_leaf(list[k]))
          factor[list[k]] = static_cast<double>(top) / static_cast<double>(leaves);
      }
      rank -= tied_leaves;
      g = e;
    }
  };
  const auto roots = tree.children(tenant_tree::npos);
  walk(walk, std::vector<std::uint32_t>(roots.begin(), roots.end()));
  return factor;
}

/// @brief Fair Tree factor for `multifactor_ordering`: `rank / leaves` of the job's tenant
/// (0 outside the tree or for an inner tenant). Ranks are recomputed when `now` or the usage
/// total changes, and cached otherwise; one object must not be shared across threads.
class fair_tree_factor {
 public:
  /// Reads decayed usage from `usage` and the tenants from `tenants`. @pre neither is null.
  fair_tree_factor(std::shared_ptr<const decayed_usage> usage,
                   std::shared_ptr<const tenant_tree> tenants)
      : usage_(std::move(usage)), tree_(std::move(tenants)) {
    GPUSCHED_EXPECTS(usage_ != nullptr && tree_ != nullptr);
  }
  /// The factor's name: `fair-tree`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "fair-tree"; }
  /// The factor for `j`'s tenant at `ctx.now()`: `rank / leaves`, in [0, 1].
  [[nodiscard]] double operator()(const schedule_context& ctx, const job_spec& j) const {
    refresh(ctx.now());
    const auto p = tree_->find(j.tenant);
    return p ? cache_[*p] : 0.0;
  }
  /// The factor of every tree position at `now`.
  [[nodiscard]] std::span<const double> factors(sim_time now) const {
    refresh(now);
    return cache_;
  }

 private:
  void refresh(sim_time now) const {
    const share_vector t = usage_->total(now);
    const double key = t.size() == 0 ? 0.0 : t.sum();
    if (cached_at_ && *cached_at_ == now && key == cached_total_) return;
    cache_ = fair_tree_factors(*tree_, *usage_, now);
    cached_at_ = now;
    cached_total_ = key;
  }
  std::shared_ptr<const decayed_usage> usage_;
  std::shared_ptr<const tenant_tree> tree_;
  mutable std::vector<double> cache_;
  mutable std::optional<sim_time> cached_at_;
  mutable double cached_total_ = 0;
};

/// @brief Options of a `fair_tree_ordering` that keeps its own decayed usage and reads the run's
/// tenant tree (the registry's `fair-tree`).
struct fair_tree_options {
  /// Slurm `PriorityDecayHalfLife` (default 7 days): usage `dt` old counts `2^(-dt / h)`.
  sim_duration half_life = std::chrono::duration_cast<sim_duration>(std::chrono::hours{24 * 7});
  /// Usage dimensions (`resource_basis` of the cluster): all GPUs pooled by default, plus CPU
  /// and memory.
  resource_basis::gpu_dimensions gpus = resource_basis::gpu_dimensions::pooled;
};

/// @brief Orders jobs by their tenant's Fair Tree factor (higher first), then FIFO (submit,
/// id). A strict weak order. O(T log T + n log n) per `order`.
///
/// Two ways to make it:
/// - `fair_tree_ordering(usage, tenants)`: the caller's decayed usage (which the caller
///   accrues) and tenant tree;
/// - `fair_tree_ordering(fair_tree_options)` (the registry's `fair-tree`): its own decayed
///   usage, accrued from the ledger's running jobs at every `order` (as the `multifactor`
///   fair-share factor does), over the run's tenant tree, read through the context
///   (`schedule_context::tenants()`, the pipeline's environment). Ranks are recomputed when
///   the time or the usage changes; the accrual is O(running tasks) per `order`.
///   @throws invalid_value_error from `order` when the run has no tenant tree.
class fair_tree_ordering {
 public:
  /// Opts into the ordering family.
  using policy_category = ordering_tag;
  /// Told of releases, to charge its own usage up to them (a no-op with the caller's usage).
  using hooks = hook_list<hook::incremental>;
  /// Reads decayed usage from `usage` and the tenants from `tenants`. @pre neither is null.
  fair_tree_ordering(std::shared_ptr<const decayed_usage> usage,
                     std::shared_ptr<const tenant_tree> tenants)
      : factor_(std::in_place, std::move(usage), std::move(tenants)) {}
  /// Keeps its own decayed usage and reads the run's tenant tree (see the class).
  /// @throws invalid_value_error (field `half_life`) unless the half-life is positive.
  explicit fair_tree_ordering(fair_tree_options o = {})
      : own_(std::in_place, decayed_fair_share_options{o.half_life, nullptr, o.gpus}) {}
  /// The policy's name: `fair-tree`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "fair-tree"; }
  /// The factor it orders by. @pre made from a usage and a tree (the first constructor).
  [[nodiscard]] const fair_tree_factor& factor() const noexcept {
    GPUSCHED_EXPECTS(factor_.has_value());
    return *factor_;
  }
  /// The factor of every position of the run's tenant tree, as of the last `order` (empty
  /// before it, or when made from a usage and a tree).
  [[nodiscard]] std::span<const double> own_factors() const noexcept { return cache_; }

  /// Incremental hook: nothing to do (usage is accrued from the ledger).
  void on_admitted(const schedule_context&, const job_spec&, std::span<const task_allocation>) {}
  /// Incremental hook: `job` is about to give back its resources; its own usage is charged up
  /// to `ctx.now()` first (O(running tasks); nothing with the caller's usage).
  void on_released(const schedule_context& ctx, const job_spec& j,
                   std::span<const task_allocation> g) {
    if (own_) own_->on_released(ctx, j, g);
  }

  /// Sorts `jobs` by this policy's rule (see the class), the first to be considered first.
  /// @throws invalid_value_error when made without a tree and the run has none.
  void order(const schedule_context& ctx, std::span<const job_spec*> jobs) {
    keyed_.clear();
    if (factor_) {
      for (const job_spec* j : jobs) keyed_.emplace_back((*factor_)(ctx, *j), j);
    } else {
      const tenant_tree* tree = ctx.tenants();
      if (tree == nullptr) {
        throw invalid_value_error(error_id::invalid_value, "fair-tree ordering", "tenants", "none",
                                  "needs the run's tenant tree (policy_inputs::tenants, or "
                                  "gpusched-replay --quotas FILE)");
      }
      own_->prepare(ctx);
      refresh(*tree, ctx.now());
      for (const job_spec* j : jobs) {
        const auto p = tree->find(j->tenant);
        keyed_.emplace_back(p ? cache_[*p] : 0.0, j);
      }
    }
    detail::order_by_score(keyed_, jobs);
  }

 private:
  void refresh(const tenant_tree& tree, sim_time now) {
    const decayed_usage* usage = own_->usage();
    const share_vector t = usage->total(now);
    const double key = t.size() == 0 ? 0.0 : t.sum();
    if (cached_at_ && *cached_at_ == now && key == cached_total_ && cached_tree_ == &tree &&
        cache_.size() == tree.size()) {
      return;
    }
    cache_ = fair_tree_factors(tree, *usage, now);
    cached_at_ = now;
    cached_total_ = key;
    cached_tree_ = &tree;
  }
  std::optional<fair_tree_factor> factor_;        // the caller's usage and tree
  std::optional<decayed_fair_share_factor> own_;  // or its own usage (the run's tree)
  std::vector<double> cache_;                     // own_: factors per tree position
  std::optional<sim_time> cached_at_;
  double cached_total_ = 0;
  const tenant_tree* cached_tree_ = nullptr;
  std::vector<std::pair<double, const job_spec*>> keyed_;
};

GPUSCHED_END_NAMESPACE
