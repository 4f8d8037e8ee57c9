// SPDX-License-Identifier: Apache-2.0
/// @file
/// Kueue-style fair sharing inside one cohort: each tenant (ClusterQueue) has a nominal quota;
/// what it uses above the quota is borrowed from the cohort, and its dominant resource share is
///
///   `DRS(t) = max_r max(0, usage_r - nominal_r) / lendable_r x 1000 / weight_t`
///
/// where `lendable_r` is the sum of the cohort's nominal quotas on `r` (Kueue's potential
/// availability of the root cohort). A tenant within its quota has DRS 0: fairness applies to
/// borrowed capacity only, unlike Volcano (cluster share) or YuniKorn (guaranteed share).
/// Weight 0 gives +infinity as soon as the tenant borrows (Kueue: lowest priority, first to be
/// preempted). Dimensions: pooled milli-GPU, CPU millicores, memory MiB.
///
/// `kueue_share_ordering` orders jobs by the DRS their tenant would have *after* admitting the
/// job (Kueue's admission fair-sharing iterator), lowest first; ties by priority (higher first),
/// then FIFO. `share(tenant, usage)` is exposed for fair preemption (highest DRS is the target).
#pragma once

#include <algorithm>
#include <cmath>  // std::isfinite
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/workload/quota.hpp"
#include "gpusched/workload/tenant.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief A tenant's nominal quota in a cohort, and its fair-sharing weight.
struct cohort_quota {
  /// The tenant.
  tenant_id tenant;
  std::int64_t gpu_milli = 0;  ///< milli-GPU (1000 = one GPU), all models pooled
  /// Its nominal CPU quota.
  cpu_millis cpu{};
  /// Its nominal memory quota.
  memory_mib memory{};
  double weight = 1.0;  ///< `fairSharing.weight`; 0 allowed (never favoured when borrowing)
};

/// A usage (or demand) vector in cohort dimensions: GPU milli, CPU millicores, memory MiB.
struct cohort_usage {
  /// Milli-GPU, CPU millicores and memory MiB.
  ///@{
  double gpu_milli = 0, cpu = 0, memory = 0;
  ///@}
  /// Adds `o` elementwise.
  cohort_usage& operator+=(const cohort_usage& o) noexcept {
    gpu_milli += o.gpu_milli;
    cpu += o.cpu;
    memory += o.memory;
    return *this;
  }
};

/// @brief The cohort quotas of `tree`'s queues, in tree order: per queue, its tenant, its
/// nominal milli-GPU (the `gpu_milli` dimension when the tree governs it, else its whole GPUs
/// of every model x 1000), CPU and memory, and the weight of its tenant in `tenants` (1 when
/// `tenants` is null or lacks it). O(queues x dims).
[[nodiscard]] inline std::vector<cohort_quota> cohort_quotas_of(const quota_tree& tree,
                                                                const tenant_tree* tenants) {
  std::vector<cohort_quota> out;
  const auto nodes = tree.nodes();
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (!nodes[n].queue) continue;
    const auto q = static_cast<std::int32_t>(n);
    cohort_quota c;
    c.tenant = nodes[n].tenant;
    if (tree.governed(quota_resource::gpu_milli().index())) {
      c.gpu_milli = tree.nominal(q, quota_resource::gpu_milli().index());
    } else {
      for (std::size_t d = 3; d < tree.dims(); ++d) c.gpu_milli += tree.nominal(q, d) * 1000;
    }
    c.cpu = cpu_millis{tree.nominal(q, quota_resource::cpu().index())};
    c.memory = memory_mib{tree.nominal(q, quota_resource::memory().index())};
    if (tenants != nullptr) {
      if (const auto p = tenants->find(c.tenant)) c.weight = (*tenants)[*p].weight;
    }
    out.push_back(c);
  }
  return out;
}

/// @brief Kueue dominant-resource-share ordering over one cohort. A strict weak order for a
/// fixed ledger. Complexity: `order` O(R + n log n); `before` O(R) (recomputes usage).
class kueue_share_ordering {
 public:
  /// Opts into the ordering family.
  using policy_category = ordering_tag;

  /// @throws invalid_value_error naming the tenant and field: invalid or duplicate tenant,
  /// negative quota (`gpu_milli`, `cpu`, `memory`), negative or non-finite `weight`.
  explicit kueue_share_ordering(std::vector<cohort_quota> quotas) { assign(std::move(quotas)); }
  /// Reads the run's quota tree (`schedule_context::quotas()`, the pipeline's environment) at
  /// every `order`: its queues are the cohort's tenants (`cohort_quotas_of`, weights from the
  /// run's tenant tree), all in one cohort (exact for a tree with one root cohort). The
  /// registry's `kueue-drs`. @throws invalid_value_error from `order` and `before` when the run
  /// has no quota tree.
  kueue_share_ordering() : from_run_(true) {}
  /// The policy's name: `kueue-drs`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "kueue-drs"; }
  /// The cohort's lendable resources: the sum of its tenants' nominal quotas.
  [[nodiscard]] const cohort_usage& lendable() const noexcept { return lendable_; }

  /// The DRS of `t` at `usage` (x1000, divided by weight). A tenant without a quota borrows
  /// everything it uses, with weight 1.
  [[nodiscard]] double share(tenant_id t, const cohort_usage& usage) const noexcept {
    cohort_usage nominal;
    double w = 1.0;
    if (const auto it = index_.find(t); it != index_.end()) {
      const auto& q = quotas_[it->second];
      nominal = {static_cast<double>(q.gpu_milli), static_cast<double>(q.cpu.value()),
                 static_cast<double>(q.memory.value())};
      w = q.weight;
    }
    double drs = 0;
    const auto dim = [&](double used, double nom, double lend) {
      const double borrowed = std::max(0.0, used - nom);
      if (borrowed <= 0) return;
      drs = std::max(drs, lend > 0 ? borrowed / lend : std::numeric_limits<double>::infinity());
    };
    dim(usage.gpu_milli, nominal.gpu_milli, lendable_.gpu_milli);
    dim(usage.cpu, nominal.cpu, lendable_.cpu);
    dim(usage.memory, nominal.memory, lendable_.memory);
    if (drs == 0) return 0;
    return w == 0 ? std::numeric_limits<double>::infinity() : drs * 1000.0 / w;
  }
  /// A job's full-size demand in cohort dimensions (MIG counts 0 GPU milli).
  [[nodiscard]] static cohort_usage demand(const job_spec& j) noexcept {
    cohort_usage u;
    for (const auto& g : j.groups) {
      u.gpu_milli += static_cast<double>(g.request.gpu.milli().value()) * g.count;
      u.cpu += static_cast<double>(g.request.cpu.value()) * g.count;
      u.memory += static_cast<double>(g.request.memory.value()) * g.count;
    }
    return u;
  }
  /// What `t` holds now in `book`. O(R).
  [[nodiscard]] static cohort_usage usage(const ledger& book, tenant_id t) noexcept {
    cohort_usage u;
    for (const auto& r : book.running()) {
      if (r.spec.tenant != t) continue;
      for (const auto& task : r.tasks) {
        u.cpu += static_cast<double>(task.cpu.value());
        u.memory += static_cast<double>(task.memory.value());
        for (const auto& g : task.gpus) u.gpu_milli += g.milli.value();
      }
    }
    return u;
  }
  /// The DRS `j`'s tenant would have after admitting `j`.
  [[nodiscard]] double share_after(const schedule_context& ctx, const job_spec& j) const {
    cohort_usage u = usage(ctx.book(), j.tenant);
    u += demand(j);
    return share(j.tenant, u);
  }

  /// True when `a` goes before `b`: the strict weak order `order` sorts by.
  [[nodiscard]] bool before(const schedule_context& ctx, const job_spec& a,
                            const job_spec& b) const {
    if (from_run_ && (run_tree(ctx) != adopted_ || ctx.tenants() != adopted_tenants_)) {
      const kueue_share_ordering now(cohort_quotas_of(*ctx.quotas(), ctx.tenants()));
      return now.before(ctx, a, b);
    }
    return less({share_after(ctx, a), &a}, {share_after(ctx, b), &b});
  }
  /// Sorts `jobs` by this policy's rule (see the class), the first to be considered first.
  /// @throws invalid_value_error when made to read the run's quota tree and the run has none.
  void order(const schedule_context& ctx, std::span<const job_spec*> jobs) {
    adopt(ctx);
    held_.clear();
    for (const auto& r : ctx.book().running()) {
      auto& u = held_[r.spec.tenant];
      for (const auto& task : r.tasks) {
        u.cpu += static_cast<double>(task.cpu.value());
        u.memory += static_cast<double>(task.memory.value());
        for (const auto& g : task.gpus) u.gpu_milli += g.milli.value();
      }
    }
    keyed_.clear();
    for (const job_spec* j : jobs) {
      cohort_usage u;
      if (const auto it = held_.find(j->tenant); it != held_.end()) u = it->second;
      u += demand(*j);
      keyed_.push_back({share(j->tenant, u), j});
    }
    std::sort(keyed_.begin(), keyed_.end(), less);
    for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i] = keyed_[i].job;
  }

 private:
  struct keyed {
    double drs;
    const job_spec* job;
  };
  /// Validates and installs `quotas` (see the first constructor).
  void assign(std::vector<cohort_quota> quotas) {
    quotas_ = std::move(quotas);
    index_.clear();
    lendable_ = {};
    for (std::size_t i = 0; i < quotas_.size(); ++i) {
      const auto& q = quotas_[i];
      const std::string where = "cohort tenant " + std::to_string(q.tenant.value());
      if (!q.tenant.valid() || !index_.emplace(q.tenant, i).second) {
        throw invalid_value_error(error_id::duplicate_id, where, "tenant",
                                  std::to_string(q.tenant.value()), "invalid or duplicate tenant");
      }
      if (q.gpu_milli < 0) {
        throw invalid_value_error(error_id::invalid_value, where, "gpu_milli",
                                  std::to_string(q.gpu_milli), "must not be negative");
      }
      if (q.cpu < cpu_millis{0}) {
        throw invalid_value_error(error_id::invalid_value, where, "cpu",
                                  std::to_string(q.cpu.value()), "must not be negative");
      }
      if (q.memory < memory_mib{0}) {
        throw invalid_value_error(error_id::invalid_value, where, "memory",
                                  std::to_string(q.memory.value()), "must not be negative");
      }
      if (!std::isfinite(q.weight) || q.weight < 0) {
        throw invalid_value_error(error_id::invalid_value, where, "weight",
                                  std::to_string(q.weight), "must be finite and not negative");
      }
      lendable_.gpu_milli += static_cast<double>(q.gpu_milli);
      lendable_.cpu += static_cast<double>(q.cpu.value());
      lendable_.memory += static_cast<double>(q.memory.value());
    }
  }
  /// In run mode: the quotas of the run's tree (rebuilt when the trees change).
  void adopt(const schedule_context& ctx) {
    if (!from_run_) return;
    const quota_tree* tree = run_tree(ctx);
    if (tree == adopted_ && ctx.tenants() == adopted_tenants_) return;
    assign(cohort_quotas_of(*tree, ctx.tenants()));
    adopted_ = tree;
    adopted_tenants_ = ctx.tenants();
  }
  static const quota_tree* run_tree(const schedule_context& ctx) {
    if (ctx.quotas() == nullptr) {
      throw invalid_value_error(error_id::invalid_value, "kueue-drs ordering", "quotas", "none",
                                "needs the run's quota tree (policy_inputs::quotas, or "
                                "gpusched-replay --quotas FILE)");
    }
    return ctx.quotas();
  }
  static bool less(const keyed& x, const keyed& y) noexcept {
    if (x.drs != y.drs) return x.drs < y.drs;
    if (x.job->priority != y.job->priority) return x.job->priority > y.job->priority;
    if (x.job->submit != y.job->submit) return x.job->submit < y.job->submit;
    return x.job->id < y.job->id;
  }
  bool from_run_ = false;  // reads the run's quota tree (see the default constructor)
  const quota_tree* adopted_ = nullptr;
  const tenant_tree* adopted_tenants_ = nullptr;
  std::vector<cohort_quota> quotas_;
  std::unordered_map<tenant_id, std::size_t> index_;
  cohort_usage lendable_;
  std::unordered_map<tenant_id, cohort_usage> held_;
  std::vector<keyed> keyed_;
};

static_assert(comparison_ordering_policy<kueue_share_ordering>);

GPUSCHED_END_NAMESPACE
