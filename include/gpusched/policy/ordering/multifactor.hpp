// SPDX-License-Identifier: Apache-2.0
/// @file
/// Slurm-style multifactor priority (`priority/multifactor`): a job's priority is a weighted sum
/// of factors, each normalised to [0, 1] as Slurm does:
///
/// | factor                   | value                                                     |
/// |--------------------------|-----------------------------------------------------------|
/// | `age_factor`             | `min(now - submit, max_age) / max_age` (PriorityMaxAge, 7 days) |
/// | `job_size_factor`        | requested milli-GPU / cluster milli-GPU; `1 - that` with
/// favor_small | | `fair_share_factor`      | classic `2^(-U / S)`: U = tenant's normalised decayed
/// usage, S = its normalised shares | | `qos_factor`             | `job.priority / max_priority`,
/// clamped (QOS / partition priority) | | `tenant_priority_factor` | association priority / the
/// largest in the tree            |
///
/// `multifactor_ordering<F...>` composes any factors (each a type with `double operator()(ctx,
/// job) const` and `name()`), each with a non-negative weight: `priority = sum w_i f_i`.
/// Higher priority first, ties FIFO (submit, id). A strict weak order.
#pragma once

#include <algorithm>  // std::clamp, std::sort
#include <chrono>
#include <cmath>   // std::exp2, std::isfinite
#include <cstdio>  // std::snprintf
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/ordering/fifo.hpp"  // detail::order_by_score
#include "gpusched/policy/ordering/decay.hpp"
#include "gpusched/workload/tenant.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// Age: waiting time over `max_age`, capped at 1 (Slurm `PriorityMaxAge`, default 7 days).
struct age_factor {
  sim_duration max_age = std::chrono::duration_cast<sim_duration>(std::chrono::hours{24 * 7});
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "age"; }
  [[nodiscard]] double operator()(const schedule_context& ctx, const job_spec& j) const noexcept {
    if (max_age <= sim_duration{0}) return 1.0;
    const double waited = to_seconds(ctx.now() - j.submit);
    return std::clamp(waited / to_seconds(max_age), 0.0, 1.0);
  }
};

/// Job size: the job's GPUs (milli, full size) over the cluster's; `favor_small` inverts it
/// (Slurm `PriorityFavorSmall`). 0 on a cluster without GPUs.
struct job_size_factor {
  bool favor_small = false;
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "job-size"; }
  [[nodiscard]] double operator()(const schedule_context& ctx, const job_spec& j) const noexcept {
    const double total = 1000.0 * static_cast<double>(ctx.state().total_gpus());
    if (total <= 0) return 0.0;
    const double f = std::clamp(static_cast<double>(j.milli_gpus()) / total, 0.0, 1.0);
    return favor_small ? 1.0 - f : f;
  }
};

/// QOS / partition: `job.priority / max_priority`, clamped to [0, 1].
struct qos_factor {
  std::int32_t max_priority = 1;
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "qos"; }
  [[nodiscard]] double operator()(const schedule_context&, const job_spec& j) const noexcept {
    if (max_priority <= 0) return 0.0;
    return std::clamp(static_cast<double>(j.priority) / max_priority, 0.0, 1.0);
  }
};

/// Association: the tenant's `priority` over the largest in the tree (0 if not in the tree).
class tenant_priority_factor {
 public:
  explicit tenant_priority_factor(std::shared_ptr<const tenant_tree> t) : tree_(std::move(t)) {
    GPUSCHED_EXPECTS(tree_ != nullptr);
    for (const auto& s : tree_->tenants()) max_ = std::max(max_, s.priority);
  }
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "assoc"; }
  [[nodiscard]] double operator()(const schedule_context&, const job_spec& j) const {
    const auto p = tree_->find(j.tenant);
    if (!p || max_ <= 0) return 0.0;
    return static_cast<double>((*tree_)[*p].priority) / max_;
  }

 private:
  std::shared_ptr<const tenant_tree> tree_;
  std::int32_t max_ = 0;
};

/// Classic Slurm fair-share: `F = 2^(-U / S)`, U = `usage.normalized_usage(tenant, now)`
/// (decayed, fraction of all usage, max over dimensions), S = the tenant's normalised shares
/// (`tenant_tree::global_share`). A tenant outside the tree gets 0 (it has no shares).
class fair_share_factor {
 public:
  fair_share_factor(std::shared_ptr<const decayed_usage> usage,
                    std::shared_ptr<const tenant_tree> tenants)
      : usage_(std::move(usage)), tree_(std::move(tenants)) {
    GPUSCHED_EXPECTS(usage_ != nullptr && tree_ != nullptr);
  }
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "fair-share"; }
  [[nodiscard]] double operator()(const schedule_context& ctx, const job_spec& j) const {
    const auto p = tree_->find(j.tenant);
    if (!p) return 0.0;
    const double s = tree_->global_share(*p);
    const double u = usage_->normalized_usage(j.tenant, ctx.now());
    return std::exp2(-u / s);
  }

 private:
  std::shared_ptr<const decayed_usage> usage_;
  std::shared_ptr<const tenant_tree> tree_;
};

/// A factor with its weight (Slurm `PriorityWeight<Factor>`).
template <class F>
struct weighted_factor {
  F factor;
  double weight = 1.0;
};
/// Pairs a factor with its weight.
template <class F>
weighted_factor<F> weighted(F f, double w) {
  return {std::move(f), w};
}

/// @brief The weighted sum of factors. See the file comment.
/// Complexity: `order` evaluates each factor once per job, then sorts: O(n (k + log n)).
template <class... F>
class multifactor_ordering {
 public:
  using policy_category = ordering_tag;
  /// @throws invalid_value_error naming the factor and field `weight` when a weight is
  /// negative or not finite.
  explicit multifactor_ordering(weighted_factor<F>... f) : factors_(std::move(f)...) {
    std::apply([](const auto&... wf) { (check(wf), ...); }, factors_);
  }
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "multifactor"; }

  /// `sum_i w_i f_i(ctx, j)`, each factor clamped to [0, 1].
  [[nodiscard]] double priority(const schedule_context& ctx, const job_spec& j) const {
    return std::apply(
        [&](const auto&... wf) {
          return (0.0 + ... + (wf.weight * std::clamp(wf.factor(ctx, j), 0.0, 1.0)));
        },
        factors_);
  }
  /// Each factor's name, value and weighted contribution, for "why is my job pending?".
  [[nodiscard]] std::string explain(const schedule_context& ctx, const job_spec& j) const {
    std::string out;
    std::apply(
        [&](const auto&... wf) {
          ((out += (out.empty() ? "" : " + ") + std::string(wf.factor.name()) + " " +
                   fmt(wf.weight) + "x" + fmt(std::clamp(wf.factor(ctx, j), 0.0, 1.0))),
           ...);
        },
        factors_);
    return out + " = " + fmt(priority(ctx, j));
  }
  [[nodiscard]] bool before(const schedule_context& ctx, const job_spec& a,
                            const job_spec& b) const {
    const double pa = priority(ctx, a), pb = priority(ctx, b);
    if (pa != pb) return pa > pb;
    if (a.submit != b.submit) return a.submit < b.submit;
    return a.id < b.id;
  }
  void order(const schedule_context& ctx, std::span<const job_spec*> jobs) {
    keyed_.clear();
    for (const job_spec* j : jobs) keyed_.emplace_back(priority(ctx, *j), j);
    detail::order_by_score(keyed_, jobs);
  }

 private:
  template <class W>
  static void check(const W& wf) {
    if (!std::isfinite(wf.weight) || wf.weight < 0) {
      throw invalid_value_error(
          error_id::invalid_value, "multifactor factor '" + std::string(wf.factor.name()) + "'",
          "weight", std::to_string(wf.weight), "must be finite and not negative");
    }
  }
  static std::string fmt(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", x);
    return buf;
  }
  std::tuple<weighted_factor<F>...> factors_;
  std::vector<std::pair<double, const job_spec*>> keyed_;
};

/// Builds a `multifactor_ordering` from weighted factors.
template <class... F>
multifactor_ordering<F...> make_multifactor(weighted_factor<F>... f) {
  return multifactor_ordering<F...>(std::move(f)...);
}

GPUSCHED_END_NAMESPACE
