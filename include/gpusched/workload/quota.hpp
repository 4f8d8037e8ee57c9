// SPDX-License-Identifier: Apache-2.0
/// @file
/// Quotas with cohorts, borrowing and lending, in Kueue's semantics.
///
/// A `quota_tree` has cohorts (inner nodes, which may hold quota of their own) and queues
/// (leaves; each serves one tenant). Every node may set, per resource: a nominal quota, a
/// borrowing limit and a lending limit. Resources: CPU (millicores), memory (MiB), milli-GPU
/// (any model; whole GPUs count 1000, MIG instances their memory-slice fraction x 1000) and
/// whole GPUs of one model. A resource is *governed* when some node sets a nominal quota for it;
/// then nodes that do not set one have nominal 0, as a Kueue ClusterQueue with a covered
/// resource and no quota. Resources no node governs are not limited.
///
/// What a queue may use of resource r (Kueue's recursion, ClusterQueue -> Cohort -> ...):
///   subtree(n)    = nominal(n) + sum over children c of (subtree(c) - guaranteed(c))
///   guaranteed(n) = lending limit set ? max(0, subtree(n) - lending limit) : 0
///   usage(cohort) = sum over children c of max(0, usage(c) - guaranteed(c))
///   available(root) = subtree(root) - usage(root)
///   available(n)  = max(0, guaranteed(n) - usage(n))
///                   + min(available(parent),
///                         borrowing limit set ? subtree(n) - guaranteed(n)
///                                               - max(0, usage(n) - guaranteed(n))
///                                               + borrowing limit
///                                             : infinity)
/// so Kueue's documented examples hold: with team-a (nominal 9, borrowing limit 1) and team-b
/// (nominal 12) in one cohort, team-a may use 10 CPUs when team-b is idle; with team-b's
/// lending limit 1 instead, team-a may use 9 + 1 = 10, and team-b may use 12 + 9 = 21.
///
/// Errors (`invalid_value_error`, naming the node and field): duplicate names or tenants,
/// an unknown parent (orphan), a parent that is a queue, a cycle of cohorts, negative limits,
/// a queue's lending limit above its nominal quota. A cohort's lending limit may exceed the
/// cohort's own nominal quota (Kueue validates this for ClusterQueues only): a cohort lends
/// from its subtree quota, what its children lend to it included, so
/// `guaranteed(cohort) = max(0, subtree - lending limit)` keeps the formula above.
///
/// `potential_available(q, d)` is Kueue's `PotentialAvailable`: the largest demand queue `q`
/// could ever be admitted with, assuming no usage anywhere:
///   potential(root) = subtree(root)
///   potential(n)    = min(guaranteed(n) + potential(parent),
///                         borrowing limit set ? subtree(n) + borrowing limit : infinity)
///
/// Also the quota vocabulary preemption reads: `tenant_quota` (a tenant's GPU position: usage,
/// nominal quota, fair-sharing weight) and `quota_view` (a callable giving it per tenant).
#pragma once

#include <algorithm>  // std::min, std::max, std::fill
#include <bit>        // std::popcount
#include <cstdint>
#include <functional>  // std::function
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpusched/cluster/allocation.hpp"
#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/ids.hpp"
#include "gpusched/resource/gpu_model.hpp"
#include "gpusched/workload/job.hpp"
#include "gpusched/workload/ledger.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief One quota dimension.
struct quota_resource {
  /// The kind of dimension: CPU (millicores), memory (MiB), milli-GPU of any model, or whole GPUs
  /// of one model.
  enum class kind : std::uint8_t { cpu, memory, gpu_milli, gpus };
  /// The dimension's kind.
  kind what = kind::cpu;
  gpu_model_id model{};  ///< for `gpus`

  /// CPU, in millicores.
  static constexpr quota_resource cpu() noexcept { return {kind::cpu, {}}; }
  /// Memory, in MiB.
  static constexpr quota_resource memory() noexcept { return {kind::memory, {}}; }
  /// Milli-GPU of any model (whole GPUs 1000, MIG instances their slice fraction, replicas
  /// 1000 / N).
  static constexpr quota_resource gpu_milli() noexcept { return {kind::gpu_milli, {}}; }
  /// Whole GPUs of model `m`.
  static constexpr quota_resource gpus(gpu_model_id m) noexcept { return {kind::gpus, m}; }
  /// Index of the dimension in a quota vector.
  [[nodiscard]] constexpr std::size_t index() const noexcept {
    return what == kind::gpus ? 3 + model.value() : static_cast<std::size_t>(what);
  }
  friend constexpr bool operator==(quota_resource, quota_resource) noexcept = default;
};

/// A vector of amounts, one per quota dimension (3 + models of the catalog).
using quota_vector = std::vector<std::int64_t>;

/// @brief What a set of task allocations uses, per quota dimension. O(grants).
/// Milli-GPU charges: `charged_milli` (a grant's milli, 1000 for a whole GPU; a MIG instance
/// `1000 x memory slices / slices`; one replica of a GPU advertised as N replicas `1000 / N`,
/// rounded down, so N replicas of a GPU charge about one GPU).
inline void add_usage(const cluster& c, std::span<const task_allocation> tasks,
                      std::span<std::int64_t> out, std::int64_t sign = 1) {
  for (const auto& t : tasks) {
    out[0] += sign * t.cpu.value();
    out[1] += sign * t.memory.value();
    for (const auto& g : t.gpus) {
      out[2] += sign * charged_milli(c, g);
      if (g.mig_slots == 0 && !g.replica && g.milli == whole_gpu_milli) {
        out[3 + c.gpu(g.gpu).model.value()] += sign;
      }
    }
  }
}

/// @brief A lower bound of what job `j` will use at its minimum size, known before placement:
/// CPU, memory and milli-GPU always; whole GPUs of a model when the request allows exactly one.
/// A replica demand counts 0 milli here (its charge, `1000 / N`, depends on the GPU it lands
/// on); `add_usage` charges it once placed, which is what admission approves.
/// Written into `v` (resized to `dims`), so a caller can reuse its buffer. O(groups x dims).
inline void demand_lower_bound(const job_spec& j, std::size_t dims, quota_vector& v) {
  v.assign(dims, 0);
  for (const auto& g : j.groups) {
    const auto n = g.minimum();
    v[0] += g.request.cpu.value() * n;
    v[1] += g.request.memory.value() * n;
    v[2] += std::int64_t{g.request.gpu.milli().value()} * n;
    if (g.request.gpu.kind == gpu_demand_kind::whole && g.request.allowed_models.size() == 1) {
      for (std::size_t m = 0; m + 3 < dims; ++m) {
        if (g.request.allowed_models.contains(gpu_model_id{static_cast<gpu_model_id::rep>(m)})) {
          v[3 + m] += std::int64_t{g.request.gpu.count.value()} * n;
        }
      }
    }
  }
}

/// @brief As above, returned as a new vector.
inline quota_vector demand_lower_bound(const job_spec& j, std::size_t dims) {
  quota_vector v;
  demand_lower_bound(j, dims, v);
  return v;
}

/// @brief Why a demand does not fit: the first dimension short, at which node.
struct quota_shortfall {
  /// The first dimension that is short.
  quota_resource resource;
  /// What the demand needs of it.
  std::int64_t needed = 0;
  /// What the binding node's quota leaves of it.
  std::int64_t available = 0;
  std::int32_t limiting_node = -1;  ///< the node whose quota or limit binds
};

/// @brief The quota tree with its usage; see the file documentation.
class quota_tree {
 public:
  /// The limits one node sets on one dimension; absent means not set.
  struct limits {
    /// Nominal quota, borrowing limit and lending limit, in the dimension's unit.
    ///@{
    std::optional<std::int64_t> nominal, borrowing_limit, lending_limit;
    ///@}
  };
  /// One cohort or queue of the tree.
  struct node {
    /// Its unique name.
    std::string name;
    /// Its parent's position in `nodes()`, or -1 for a root.
    std::int32_t parent = -1;
    /// True for a queue (a leaf serving one tenant), false for a cohort.
    bool queue = false;
    /// The tenant a queue serves (unused for a cohort).
    tenant_id tenant;
    /// Its limits, one per dimension (`quota_resource::index()`).
    std::vector<limits> per_dim;
    /// Its children's positions.
    std::vector<std::int32_t> children;
  };

  class builder;

  /// The quota a subtree brings: its nominal plus what its children lend. O(1).
  [[nodiscard]] std::int64_t subtree_quota(std::int32_t n, std::size_t d) const noexcept {
    return subtree_[idx(n, d)];
  }
  /// The part of a node's quota that it keeps (does not lend). O(1).
  [[nodiscard]] std::int64_t guaranteed_quota(std::int32_t n, std::size_t d) const noexcept {
    return guaranteed_[idx(n, d)];
  }
  /// The node named `name`, or -1. O(nodes).
  [[nodiscard]] std::int32_t find(std::string_view name) const noexcept {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].name == name) return static_cast<std::int32_t>(i);
    }
    return -1;
  }

  /// Number of dimensions: 3 + the catalog's models.
  [[nodiscard]] std::size_t dims() const noexcept { return dims_; }
  /// All nodes, in the order they were added to the builder.
  [[nodiscard]] std::span<const node> nodes() const noexcept { return nodes_; }
  /// The node at position `n`. @pre `0 <= n < nodes().size()`.
  [[nodiscard]] const node& at(std::int32_t n) const noexcept {
    return nodes_[static_cast<std::size_t>(n)];
  }
  /// The queue serving `t`, or -1 (then no quota governs the tenant).
  [[nodiscard]] std::int32_t queue_of(tenant_id t) const noexcept {
    const auto it = queue_of_.find(t);
    return it == queue_of_.end() ? -1 : it->second;
  }
  /// True when some node sets a nominal quota for dimension `d` (then it is limited).
  [[nodiscard]] bool governed(std::size_t d) const noexcept { return governed_[d]; }
  /// What node `n`'s subtree uses of dimension `d`: its own usage for a queue, the children's
  /// usage beyond their guaranteed quota for a cohort. O(1).
  [[nodiscard]] std::int64_t usage(std::int32_t n, std::size_t d) const noexcept {
    return usage_[idx(n, d)];
  }
  /// Node `n`'s nominal quota of dimension `d` (0 when not set). O(1).
  [[nodiscard]] std::int64_t nominal(std::int32_t n, std::size_t d) const noexcept {
    return at(n).per_dim[d].nominal.value_or(0);
  }
  /// Usage above nominal quota (0 when within). A queue with a positive value is borrowing.
  [[nodiscard]] std::int64_t borrowed(std::int32_t n, std::size_t d) const noexcept {
    return std::max<std::int64_t>(0, usage(n, d) - nominal(n, d));
  }
  /// True when tenant `t`'s queue uses more than its nominal quota of any governed resource.
  [[nodiscard]] bool is_borrowing(tenant_id t) const noexcept {
    const auto q = queue_of(t);
    if (q < 0) return false;
    for (std::size_t d = 0; d < dims_; ++d) {
      if (governed_[d] && borrowed(q, d) > 0) return true;
    }
    return false;
  }

  /// What queue `q` may still use of dimension `d` (the recursion above); the node whose limit
  /// binds goes to `limiting`. O(depth).
  [[nodiscard]] std::int64_t available(std::int32_t q, std::size_t d,
                                       std::int32_t* limiting = nullptr) const noexcept {
    const node& n = at(q);
    const auto sub = subtree_[idx(q, d)];
    const auto gua = guaranteed_[idx(q, d)];
    const auto use = usage_[idx(q, d)];
    if (n.parent < 0) {
      if (limiting != nullptr) *limiting = q;
      return sub - use;
    }
    const std::int64_t local = std::max<std::int64_t>(0, gua - use);
    std::int32_t parent_limit = -1;
    std::int64_t from_parent = available(n.parent, d, &parent_limit);
    if (const auto& bl = n.per_dim[d].borrowing_limit) {
      const std::int64_t stored = sub - gua;
      const std::int64_t used = std::max<std::int64_t>(0, use - gua);
      const std::int64_t cap = stored - used + *bl;
      if (cap < from_parent) {
        from_parent = cap;
        parent_limit = q;
      }
    }
    if (limiting != nullptr) *limiting = parent_limit;
    return local + from_parent;
  }

  /// What node `n` could use of dimension `d` if nothing were in use (Kueue's
  /// `PotentialAvailable`, see the file documentation). Independent of usage. O(depth).
  [[nodiscard]] std::int64_t potential_available(std::int32_t n, std::size_t d) const noexcept {
    const node& x = at(n);
    const auto sub = subtree_[idx(n, d)];
    if (x.parent < 0) return sub;
    std::int64_t avail = guaranteed_[idx(n, d)] + potential_available(x.parent, d);
    if (const auto& bl = x.per_dim[d].borrowing_limit) avail = std::min(avail, sub + *bl);
    return avail;
  }

  /// Whether `demand` fits tenant `t`'s queue; the first shortfall otherwise. O(dims x depth).
  [[nodiscard]] std::optional<quota_shortfall> check(tenant_id t,
                                                     const quota_vector& demand) const {
    const auto q = queue_of(t);
    if (q < 0) return std::nullopt;
    for (std::size_t d = 0; d < dims_; ++d) {
      if (!governed_[d] || demand[d] <= 0) continue;
      std::int32_t limiting = -1;
      const auto av = available(q, d, &limiting);
      if (demand[d] > av) return quota_shortfall{resource_of(d), demand[d], av, limiting};
    }
    return std::nullopt;
  }

  /// Whether `demand` stays within tenant `t`'s own nominal quota: usage + demand <= nominal
  /// for every governed resource `demand` asks for. Such a demand may still fail `check` when
  /// cohort peers borrow the rest of the cohort's quota; Kueue then reclaims the tenant's
  /// nominal quota from the borrowers by preemption (`reclaimWithinCohort`). True for a tenant
  /// without a queue (not limited). O(dims).
  [[nodiscard]] bool within_nominal(tenant_id t, const quota_vector& demand) const noexcept {
    const auto q = queue_of(t);
    if (q < 0) return true;
    for (std::size_t d = 0; d < dims_; ++d) {
      if (!governed_[d] || demand[d] <= 0) continue;
      if (usage(q, d) + demand[d] > nominal(q, d)) return false;
    }
    return true;
  }

  /// Adds (`sign` +1) or removes (-1) `amount` to tenant `t`'s usage, propagating to cohorts.
  /// No effect for a tenant without a queue. O(dims x depth).
  void charge(tenant_id t, const quota_vector& amount, std::int64_t sign = 1) {
    const auto q = queue_of(t);
    if (q < 0) return;
    for (std::size_t d = 0; d < dims_; ++d) {
      if (amount[d] == 0) continue;
      std::int32_t n = q;
      std::int64_t delta = sign * amount[d];
      while (n >= 0 && delta != 0) {
        const auto i = idx(n, d);
        const auto before = std::max<std::int64_t>(0, usage_[i] - guaranteed_[i]);
        usage_[i] += delta;
        const auto after = std::max<std::int64_t>(0, usage_[i] - guaranteed_[i]);
        delta = after - before;  // what the parent sees changes only above the guarantee
        n = at(n).parent;
      }
    }
  }

  /// Sets usage to what `book`'s running jobs hold: each job's usage goes to its queue, then
  /// cohorts are summed children first (the same result as charging job by job).
  /// O(nodes x dims + running tasks).
  void recompute(const ledger& book) {
    clear_usage();
    for (const auto& r : book.running()) {
      const auto q = queue_of(r.spec.tenant);
      if (q < 0) continue;
      add_usage(book.state(), r.tasks, std::span<std::int64_t>(usage_).subspan(idx(q, 0), dims_));
    }
    for (const std::int32_t n : post_order_) {
      const auto parent = at(n).parent;
      if (parent < 0) continue;
      for (std::size_t d = 0; d < dims_; ++d) {
        usage_[idx(parent, d)] +=
            std::max<std::int64_t>(0, usage_[idx(n, d)] - guaranteed_[idx(n, d)]);
      }
    }
  }

  /// Clears usage. O(nodes x dims).
  void clear_usage() noexcept { std::fill(usage_.begin(), usage_.end(), 0); }

  /// The resource of dimension `d` (inverse of `quota_resource::index()`).
  [[nodiscard]] quota_resource resource_of(std::size_t d) const noexcept {
    if (d < 3) return {static_cast<quota_resource::kind>(d), {}};
    return quota_resource::gpus(gpu_model_id{static_cast<gpu_model_id::rep>(d - 3)});
  }

 private:
  [[nodiscard]] std::size_t idx(std::int32_t n, std::size_t d) const noexcept {
    return static_cast<std::size_t>(n) * dims_ + d;
  }
  /// Computes subtree and guaranteed quota of `n` after its children. O(subtree x dims).
  void fill(std::int32_t n, std::vector<bool>& done) {
    const auto ni = static_cast<std::size_t>(n);
    if (done[ni]) return;
    for (auto c : nodes_[ni].children) fill(c, done);
    for (std::size_t d = 0; d < dims_; ++d) {
      std::int64_t sub = nominal(n, d);
      for (auto c : nodes_[ni].children) sub += subtree_[idx(c, d)] - guaranteed_[idx(c, d)];
      subtree_[idx(n, d)] = sub;
      if (const auto& ll = nodes_[ni].per_dim[d].lending_limit) {
        guaranteed_[idx(n, d)] = std::max<std::int64_t>(0, sub - *ll);
      }
    }
    done[ni] = true;
    post_order_.push_back(n);
  }

  std::size_t dims_ = 3;
  std::vector<node> nodes_;
  std::unordered_map<tenant_id, std::int32_t> queue_of_;
  std::vector<bool> governed_;
  std::vector<std::int64_t> subtree_, guaranteed_, usage_;
  std::vector<std::int32_t> post_order_;  // every node after its children
};

/// @brief Builds a `quota_tree`. Nodes are added in any order (parents by name); limits apply to
/// the node added or selected last. `build()` validates everything and throws
/// `invalid_value_error` naming the node and field; the builder can be fixed and rebuilt.
/// @code
/// quota_tree::builder b(catalog);
/// b.cohort("team-ab");
/// b.queue("team-a", tenant_id{1}, "team-ab").nominal(quota_resource::cpu(), 9000)
///     .borrowing_limit(quota_resource::cpu(), 1000);
/// b.queue("team-b", tenant_id{2}, "team-ab").nominal(quota_resource::cpu(), 12000);
/// quota_tree q = b.build();
/// @endcode
class quota_tree::builder {
 public:
  /// A builder for trees over the dimensions of `catalog`'s models.
  explicit builder(const gpu_catalog& catalog) : dims_(3 + catalog.size()) {}

  /// Adds cohort `name` under cohort `parent` (empty: a root) and selects it.
  builder& cohort(std::string name, std::string parent = "") {
    return add(std::move(name), std::move(parent), false, tenant_id{});
  }
  /// Adds queue `name` serving `tenant` under cohort `cohort` (empty: a root) and selects it.
  builder& queue(std::string name, tenant_id tenant, std::string cohort = "") {
    return add(std::move(name), std::move(cohort), true, tenant);
  }
  /// Selects an added node for the limit setters. @throws invalid_value_error if unknown.
  builder& select(std::string_view name) {
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      if (specs_[i].name == name) {
        current_ = i;
        return *this;
      }
    }
    throw invalid_value_error(error_id::unknown_name, "quota tree", "node", std::string(name),
                              "no such node");
  }
  /// Sets the selected node's nominal quota of `r` to `v`. @throws invalid_value_error for a
  /// model not in the catalog.
  builder& nominal(quota_resource r, std::int64_t v) { return set(r, v, &limits::nominal); }
  /// Sets the selected node's borrowing limit of `r` to `v` (see `nominal`).
  builder& borrowing_limit(quota_resource r, std::int64_t v) {
    return set(r, v, &limits::borrowing_limit);
  }
  /// Sets the selected node's lending limit of `r` to `v` (see `nominal`).
  builder& lending_limit(quota_resource r, std::int64_t v) {
    return set(r, v, &limits::lending_limit);
  }

  /// Validates the nodes and builds the tree (see the file documentation for the errors).
  [[nodiscard]] quota_tree build() const {
    quota_tree t;
    t.dims_ = dims_;
    std::unordered_map<std::string, std::int32_t> by_name;
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      const auto& s = specs_[i];
      const std::string where = (s.queue ? "quota queue '" : "quota cohort '") + s.name + "'";
      if (s.name.empty()) {
        throw invalid_value_error(error_id::invalid_value, "quota tree", "name", "\"\"",
                                  "a node needs a name");
      }
      if (!by_name.emplace(s.name, static_cast<std::int32_t>(i)).second) {
        throw invalid_value_error(error_id::duplicate_id, where, "name", s.name,
                                  "duplicate node name");
      }
      if (s.queue && !s.tenant.valid()) {
        throw invalid_value_error(error_id::invalid_value, where, "tenant", "invalid",
                                  "a queue serves a tenant");
      }
      if (s.queue && !t.queue_of_.emplace(s.tenant, static_cast<std::int32_t>(i)).second) {
        throw invalid_value_error(error_id::duplicate_id, where, "tenant",
                                  std::to_string(s.tenant.value()), "tenant has two queues");
      }
      for (std::size_t d = 0; d < dims_; ++d) {
        const auto& l = s.per_dim[d];
        const auto field = [&](const char* f) { return std::string(f) + "[" + dim_name(d) + "]"; };
        for (const auto& [v, f] :
             {std::pair{l.nominal, "nominal"}, std::pair{l.borrowing_limit, "borrowing_limit"},
              std::pair{l.lending_limit, "lending_limit"}}) {
          if (v && *v < 0) {
            throw invalid_value_error(error_id::invalid_value, where, field(f), std::to_string(*v),
                                      "must not be negative");
          }
        }
        // Kueue checks this for ClusterQueues only: a cohort lends from its subtree quota
        if (s.queue && l.lending_limit && *l.lending_limit > l.nominal.value_or(0)) {
          throw invalid_value_error(
              error_id::inconsistent, where, field("lending_limit"),
              std::to_string(*l.lending_limit),
              "exceeds the nominal quota " + std::to_string(l.nominal.value_or(0)));
        }
      }
    }
    // Resolve parents; no orphans, no queue parents, no cycles.
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      const auto& s = specs_[i];
      node n{s.name, -1, s.queue, s.tenant, s.per_dim, {}};
      if (!s.parent.empty()) {
        const std::string where = (s.queue ? "quota queue '" : "quota cohort '") + s.name + "'";
        const auto it = by_name.find(s.parent);
        if (it == by_name.end()) {
          throw invalid_value_error(error_id::unknown_name, where, "parent", s.parent,
                                    "no such cohort (orphan node)");
        }
        if (specs_[static_cast<std::size_t>(it->second)].queue) {
          throw invalid_value_error(error_id::inconsistent, where, "parent", s.parent,
                                    "a queue cannot have children");
        }
        n.parent = it->second;
      }
      t.nodes_.push_back(std::move(n));
    }
    for (std::size_t i = 0; i < t.nodes_.size(); ++i) {
      std::int32_t p = t.nodes_[i].parent;
      for (std::size_t steps = 0; p >= 0; ++steps) {
        if (steps > t.nodes_.size()) {
          throw invalid_value_error(error_id::inconsistent,
                                    "quota cohort '" + t.nodes_[i].name + "'", "parent",
                                    specs_[i].parent, "cohorts form a cycle");
        }
        p = t.nodes_[static_cast<std::size_t>(p)].parent;
      }
      if (t.nodes_[i].parent >= 0) {
        t.nodes_[static_cast<std::size_t>(t.nodes_[i].parent)].children.push_back(
            static_cast<std::int32_t>(i));
      }
    }
    // Governed dimensions, then subtree quotas and guarantees bottom-up.
    t.governed_.assign(dims_, false);
    for (const auto& n : t.nodes_) {
      for (std::size_t d = 0; d < dims_; ++d) {
        if (n.per_dim[d].nominal) t.governed_[d] = true;
      }
    }
    const std::size_t cells = t.nodes_.size() * dims_;
    t.subtree_.assign(cells, 0);
    t.guaranteed_.assign(cells, 0);
    t.usage_.assign(cells, 0);
    std::vector<bool> done(t.nodes_.size(), false);
    for (std::size_t i = 0; i < t.nodes_.size(); ++i) t.fill(static_cast<std::int32_t>(i), done);
    return t;
  }

 private:
  struct spec {
    std::string name, parent;
    bool queue = false;
    tenant_id tenant;
    std::vector<limits> per_dim;
  };
  builder& add(std::string name, std::string parent, bool queue, tenant_id tenant) {
    specs_.push_back(
        {std::move(name), std::move(parent), queue, tenant, std::vector<limits>(dims_)});
    current_ = specs_.size() - 1;
    return *this;
  }
  builder& set(quota_resource r, std::int64_t v, std::optional<std::int64_t> limits::* field) {
    GPUSCHED_EXPECTS(!specs_.empty());
    if (r.index() >= dims_) {
      throw invalid_value_error(
          error_id::unknown_name, "quota node '" + specs_[current_].name + "'", "resource",
          "gpus of model #" + std::to_string(r.model.value()), "not a model of the catalog");
    }
    specs_[current_].per_dim[r.index()].*field = v;
    return *this;
  }
  [[nodiscard]] std::string dim_name(std::size_t d) const {
    switch (d) {
      case 0:
        return "cpu";
      case 1:
        return "memory";
      case 2:
        return "gpu_milli";
      default:
        return "gpus#" + std::to_string(d - 3);
    }
  }

  std::size_t dims_;
  std::vector<spec> specs_;
  std::size_t current_ = 0;
};

/// @brief A tenant's GPU quota position, in milli-GPU: what it uses, its nominal quota, and its
/// fair-sharing weight (Kueue `fairSharing.weight`).
struct tenant_quota {
  std::int64_t usage = 0;    ///< milli-GPU in use now
  std::int64_t nominal = 0;  ///< nominal quota; usage above it is borrowed
  double weight = 1.0;       ///< share = borrowed / weight; weight 0 while borrowing: infinite

  /// Milli-GPU used above the nominal quota after usage changes by `delta` (0 when within).
  [[nodiscard]] std::int64_t borrowed(std::int64_t delta = 0) const noexcept {
    return std::max<std::int64_t>(0, usage + delta - nominal);
  }
  /// The tenant's share after its usage changes by `delta` milli-GPU.
  [[nodiscard]] double share(std::int64_t delta = 0) const noexcept {
    const auto b = borrowed(delta);
    if (b == 0) return 0.0;
    if (!(weight > 0)) return std::numeric_limits<double>::infinity();
    return static_cast<double>(b) / weight;
  }
};

/// @brief The borrowing information a preemption policy (`checkpoint_aware_preemption`) needs
/// from a quota system, as a callable:
/// `quotas(tenant)` returns the tenant's position, or nothing for a tenant without a quota
/// (treated as never borrowing). Any `tenant_id -> std::optional<tenant_quota>` callable plugs in;
/// `quota_view_of(tree)` (`policy/preemption/quota_tree_view.hpp`) reads a `quota_tree`.
using quota_view = std::function<std::optional<tenant_quota>(tenant_id)>;

GPUSCHED_END_NAMESPACE
