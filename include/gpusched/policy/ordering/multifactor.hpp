// SPDX-License-Identifier: Apache-2.0
/// @file
/// Slurm-style multifactor priority (`priority/multifactor`): a job's priority is a weighted sum
/// of factors, each normalised to [0, 1] as Slurm does:
///
/// | factor                      | value                                                          |
/// |-----------------------------|----------------------------------------------------------------|
/// | `age_factor`                | `min(now - submit, max_age) / max_age` (PriorityMaxAge, 7 d)   |
/// | `job_size_factor`           | job milli-GPU / cluster milli-GPU (`1 - that`: favor_small)    |
/// | `fair_share_factor`         | `2^(-U / S)`, U: given normalised decayed usage, S: shares     |
/// | `decayed_fair_share_factor` | `2^(-U / S)` on decayed usage it accrues from the ledger       |
/// | `qos_factor`                | `job.priority / max_priority`, clamped (QOS / partition)       |
/// | `tenant_priority_factor`    | association priority / the largest in the tree                 |
///
/// (U: the tenant's fraction of all decayed usage; S: its normalised shares.)
///
/// `multifactor_ordering<F...>` composes any factors (each a type with `double operator()(ctx,
/// job) const` and `name()`), each with a non-negative weight: `priority = sum w_i f_i`.
/// Higher priority first, ties FIFO (submit, id). A strict weak order.
///
/// Stateful factors: a factor may have `prepare(ctx)`, which `multifactor_ordering::order`
/// calls once at the start of every `order` (before any job is scored), and
/// `on_released(ctx, job, grant)` / `on_admitted(ctx, job, grant)`, which the ordering forwards
/// (it is then an `incremental_ordering_policy`, so the pipeline reports finished jobs). The
/// factor values are const calls: `priority`, `explain` and `before` read the state of the
/// last `prepare`; call `multifactor_ordering::prepare(ctx)` first when using them outside
/// `order` on a new cycle.
#pragma once

#include <algorithm>  // std::clamp, std::sort
#include <chrono>
#include <cmath>   // std::exp2, std::isfinite
#include <cstdio>  // std::snprintf
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>  // std::remove_cvref_t
#include <unordered_set>
#include <utility>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/detail/order_by_score.hpp"
#include "gpusched/policy/hooks.hpp"
#include "gpusched/policy/ordering/decay.hpp"
#include "gpusched/workload/ledger.hpp"
#include "gpusched/workload/tenant.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// Age: waiting time over `max_age`, capped at 1 (Slurm `PriorityMaxAge`, default 7 days).
struct age_factor {
  /// The wait at which the factor reaches 1 (0 or less: always 1).
  sim_duration max_age = std::chrono::duration_cast<sim_duration>(std::chrono::hours{24 * 7});
  /// The factor's name: `age`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "age"; }
  /// The factor for `j` at `ctx.now()`, in [0, 1]. O(1).
  [[nodiscard]] double operator()(const schedule_context& ctx, const job_spec& j) const noexcept {
    if (max_age <= sim_duration{0}) return 1.0;
    const double waited = to_seconds(ctx.now() - j.submit);
    return std::clamp(waited / to_seconds(max_age), 0.0, 1.0);
  }
};

/// Job size: the job's GPUs (milli, full size) over the cluster's; `favor_small` inverts it
/// (Slurm `PriorityFavorSmall`). 0 on a cluster without GPUs.
struct job_size_factor {
  /// Invert the factor, so that smaller jobs score higher.
  bool favor_small = false;
  /// The factor's name: `job-size`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "job-size"; }
  /// The factor for `j`, in [0, 1]. O(groups).
  [[nodiscard]] double operator()(const schedule_context& ctx, const job_spec& j) const noexcept {
    const double total = 1000.0 * static_cast<double>(ctx.state().total_gpus());
    if (total <= 0) return 0.0;
    const double f = std::clamp(static_cast<double>(j.milli_gpus()) / total, 0.0, 1.0);
    return favor_small ? 1.0 - f : f;
  }
};

/// QOS / partition: `job.priority / max_priority`, clamped to [0, 1].
struct qos_factor {
  /// The priority at which the factor reaches 1 (0 or less: always 0).
  std::int32_t max_priority = 1;
  /// The factor's name: `qos`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "qos"; }
  /// The factor for `j`, in [0, 1]. O(1).
  [[nodiscard]] double operator()(const schedule_context&, const job_spec& j) const noexcept {
    if (max_priority <= 0) return 0.0;
    return std::clamp(static_cast<double>(j.priority) / max_priority, 0.0, 1.0);
  }
};

/// Association: the tenant's `priority` over the largest in the tree (0 if not in the tree).
class tenant_priority_factor {
 public:
  /// Reads the tenants' priorities from `t`. @pre `t` is not null. O(tenants).
  explicit tenant_priority_factor(std::shared_ptr<const tenant_tree> t) : tree_(std::move(t)) {
    GPUSCHED_EXPECTS(tree_ != nullptr);
    for (const auto& s : tree_->tenants()) max_ = std::max(max_, s.priority);
  }
  /// The factor's name: `assoc`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "assoc"; }
  /// The factor for `j`'s tenant, in [0, 1]. O(1) expected.
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
  /// Reads usage from `usage` and shares from `tenants`. @pre neither is null.
  fair_share_factor(std::shared_ptr<const decayed_usage> usage,
                    std::shared_ptr<const tenant_tree> tenants)
      : usage_(std::move(usage)), tree_(std::move(tenants)) {
    GPUSCHED_EXPECTS(usage_ != nullptr && tree_ != nullptr);
  }
  /// The factor's name: `fair-share`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "fair-share"; }
  /// The factor for `j`'s tenant at `ctx.now()`, in (0, 1]. O(dimensions) plus the tree lookup.
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

/// Options of `decayed_fair_share_factor`.
struct decayed_fair_share_options {
  /// Slurm `PriorityDecayHalfLife` (default 7 days): usage `dt` old counts `2^(-dt / h)`.
  sim_duration half_life = std::chrono::duration_cast<sim_duration>(std::chrono::hours{24 * 7});
  /// Shares per tenant (`tenant_tree::global_share`, hierarchical as Slurm normalises them);
  /// null: every tenant that has held resources gets an equal share (Slurm's default
  /// `FairShare=1` on every association), `S = 1 / tenants seen`.
  std::shared_ptr<const tenant_tree> tenants{};
  /// Usage dimensions (`resource_basis` of the cluster): all GPUs pooled in one dimension by
  /// default, plus CPU and memory. U is the largest of the tenant's fractions over the
  /// dimensions (as Slurm's `PriorityFlags=MAX_TRES`).
  resource_basis::gpu_dimensions gpus = resource_basis::gpu_dimensions::pooled;
};

/// @brief Classic Slurm fair-share (`F = 2^(-U / S)`, `PriorityFlags=NO_FAIR_TREE`) that keeps
/// its own decayed usage, so it needs no external state (the policy registry's `multifactor`).
///
/// `prepare(ctx)` charges every running job of `ctx.book()` for the time since the previous
/// `prepare` (exact decay integral, `decayed_usage::accrue`) and records the tenants that hold
/// resources; `on_released` does the same just before a job gives its resources back, so a job
/// that ends between two cycles is charged up to its end (when the caller releases through
/// `pipeline::release`; a `ledger::release` behind the factor's back loses that last interval).
/// U = `decayed_usage::normalized_usage` (the tenant's fraction of all decayed usage), S = its
/// normalised shares (see `decayed_fair_share_options::tenants`; a tenant outside a given tree,
/// or with zero shares, gets 0). A tenant with shares and no usage gets 1.
///
/// State: held by value, so a copy (e.g. `any_ordering_policy`'s clone) carries the usage
/// accrued so far and evolves independently afterwards; nothing is shared but the read-only
/// tenant tree. The state follows one ledger in time order: a `prepare` on another ledger, or
/// at a time before the previous one, starts from zero usage (a new run).
/// Complexity: `prepare` O(running tasks x dimensions) (no allocation once every tenant has
/// been seen); a factor value O(dimensions) (+ tree lookup). Deterministic.
class decayed_fair_share_factor {
 public:
  /// @throws invalid_value_error (field `half_life`) unless the half-life is positive.
  explicit decayed_fair_share_factor(decayed_fair_share_options o = {}) : opts_(std::move(o)) {
    if (opts_.half_life <= sim_duration{0}) {
      throw invalid_value_error(error_id::invalid_value, "fair-share factor", "half_life",
                                std::to_string(opts_.half_life.count()) + "ms",
                                "must be positive (Slurm PriorityDecayHalfLife)");
    }
  }
  /// The factor's name: `fair-share`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "fair-share"; }
  /// The options the factor was made with.
  [[nodiscard]] const decayed_fair_share_options& options() const noexcept { return opts_; }

  /// Accrues the running jobs' usage up to `ctx.now()` (see the class comment).
  /// @throws invalid_value_error when the cluster has no resource dimension; nothing changes.
  void prepare(const schedule_context& ctx) {
    const ledger& b = ctx.book();
    if (book_ != &b || !usage_ || ctx.now() < last_) restart(b);
    usage_->accrue(b, *basis_, ctx.now());
    for (const auto& r : b.running()) seen_.insert(r.spec.tenant);
    last_ = ctx.now();
  }
  /// `job` is about to give back its resources: charges the running jobs (the job included) up
  /// to `ctx.now()`. O(1) when already prepared at this time on this ledger.
  void on_released(const schedule_context& ctx, const job_spec&, std::span<const task_allocation>) {
    if (book_ == &ctx.book() && usage_ && ctx.now() == last_) return;
    prepare(ctx);
  }

  /// `2^(-U / S)` as of `ctx.now()`, on the usage of the last `prepare` (1 before any).
  [[nodiscard]] double operator()(const schedule_context& ctx, const job_spec& j) const {
    double s = 1.0;
    if (opts_.tenants) {
      const auto p = opts_.tenants->find(j.tenant);
      if (!p) return 0.0;
      s = opts_.tenants->global_share(*p);
    } else if (!seen_.empty()) {
      s = 1.0 / static_cast<double>(seen_.size());
    }
    if (!(s > 0)) return 0.0;  // no shares
    const double u = usage_ ? usage_->normalized_usage(j.tenant, ctx.now()) : 0.0;
    return std::exp2(-u / s);
  }

  /// The decayed usage accrued so far (null before the first `prepare`).
  [[nodiscard]] const decayed_usage* usage() const noexcept { return usage_ ? &*usage_ : nullptr; }
  /// Tenants that have held resources since the state (re)started: the equal-share divisor.
  [[nodiscard]] std::size_t tenants_seen() const noexcept { return seen_.size(); }

 private:
  void restart(const ledger& b) {
    resource_basis basis(b.state(), opts_.gpus);
    decayed_usage usage(opts_.half_life, basis.size());  // throws on 0 dimensions
    basis_ = std::move(basis);
    usage_ = std::move(usage);
    seen_.clear();
    book_ = &b;
  }

  decayed_fair_share_options opts_;
  std::optional<resource_basis> basis_;
  std::optional<decayed_usage> usage_;
  std::unordered_set<tenant_id> seen_;
  const ledger* book_ = nullptr;
  sim_time last_{};
};

/// A factor with its weight (Slurm `PriorityWeight<Factor>`).
template <class F>
struct weighted_factor {
  /// The factor.
  F factor;
  /// Its weight (Slurm `PriorityWeight<Factor>`).
  double weight = 1.0;
};
/// Pairs a factor with its weight.
template <class F>
weighted_factor<F> weighted(F f, double w) {
  return {std::move(f), w};
}

namespace detail {
/// A multifactor factor with per-cycle preparation (called once per `order`).
template <class F>
concept preparing_factor = requires(F& f, const schedule_context& c) { f.prepare(c); };
/// A multifactor factor told of jobs giving back resources.
template <class F>
concept releasing_factor = requires(F& f, const schedule_context& c, const job_spec& j,
                                    std::span<const task_allocation> g) { f.on_released(c, j, g); };
/// A multifactor factor told of jobs taking resources.
template <class F>
concept admitting_factor = requires(F& f, const schedule_context& c, const job_spec& j,
                                    std::span<const task_allocation> g) { f.on_admitted(c, j, g); };
}  // namespace detail

/// @brief The weighted sum of factors. See the file comment.
/// Complexity: `order` prepares each preparing factor once, evaluates each factor once per
/// job, then sorts: O(prepare + n (k + log n)).
template <class... F>
class multifactor_ordering {
 public:
  /// Opts into the ordering family.
  using policy_category = ordering_tag;
  /// Incremental (`hook::incremental`) when a factor has a release or admission hook.
  using hooks = std::conditional_t<(... || (detail::releasing_factor<F> ||
                                            detail::admitting_factor<F>)),
                                   hook_list<hook::incremental>, hook_list<>>;
  /// @throws invalid_value_error naming the factor and field `weight` when a weight is
  /// negative or not finite.
  explicit multifactor_ordering(weighted_factor<F>... f) : factors_(std::move(f)...) {
    std::apply([](const auto&... wf) { (check(wf), ...); }, factors_);
  }
  /// The policy's name: `multifactor`.
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
  /// True when `a` goes before `b`: the strict weak order `order` sorts by.
  [[nodiscard]] bool before(const schedule_context& ctx, const job_spec& a,
                            const job_spec& b) const {
    const double pa = priority(ctx, a), pb = priority(ctx, b);
    if (pa != pb) return pa > pb;
    if (a.submit != b.submit) return a.submit < b.submit;
    return a.id < b.id;
  }
  /// Calls `prepare(ctx)` on every factor that has it (in factor order). `order` calls it
  /// once at its start; call it before `priority`, `explain` or `before` on a new cycle.
  void prepare(const schedule_context& ctx) {
    std::apply(
        [&](auto&... wf) {
          (
              [&](auto& f) {
                if constexpr (detail::preparing_factor<std::remove_cvref_t<decltype(f)>>)
                  f.prepare(ctx);
              }(wf.factor),
              ...);
        },
        factors_);
  }
  /// Forwarded to the factors that have it. Present only when a factor has either hook (the
  /// ordering is then an `incremental_ordering_policy`).
  void on_admitted(const schedule_context& ctx, const job_spec& j,
                   std::span<const task_allocation> grant)
    requires((... || (detail::releasing_factor<F> || detail::admitting_factor<F>)))
  {
    std::apply(
        [&](auto&... wf) {
          (
              [&](auto& f) {
                if constexpr (detail::admitting_factor<std::remove_cvref_t<decltype(f)>>)
                  f.on_admitted(ctx, j, grant);
              }(wf.factor),
              ...);
        },
        factors_);
  }
  /// Forwarded to the factors that have it (see `on_admitted`).
  void on_released(const schedule_context& ctx, const job_spec& j,
                   std::span<const task_allocation> grant)
    requires((... || (detail::releasing_factor<F> || detail::admitting_factor<F>)))
  {
    std::apply(
        [&](auto&... wf) {
          (
              [&](auto& f) {
                if constexpr (detail::releasing_factor<std::remove_cvref_t<decltype(f)>>)
                  f.on_released(ctx, j, grant);
              }(wf.factor),
              ...);
        },
        factors_);
  }
  /// The factors with their weights.
  [[nodiscard]] const std::tuple<weighted_factor<F>...>& factors() const noexcept {
    return factors_;
  }

  /// Prepares the factors (`prepare`), scores every job once and sorts.
  void order(const schedule_context& ctx, std::span<const job_spec*> jobs) {
    prepare(ctx);
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
