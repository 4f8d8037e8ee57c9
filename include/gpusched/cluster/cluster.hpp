// SPDX-License-Identifier: Apache-2.0
/// @file
/// The cluster: nodes with GPUs (model, free milli share, MIG slot occupancy, sharing mode and
/// replica use), CPU, memory, labels and a topology handle; plus indexes that answer first-fit
/// queries in O(log n).
///
/// GPU sharing modes (`gpu_sharing`), per GPU: `exclusive` GPUs serve whole-GPU and milli-share
/// demands (or MIG demands on MIG nodes); a GPU in `time_slicing` or `mps` mode is advertised as
/// N replicas (NVIDIA device plugin style) and serves only `gpu_demand::replica`, at most N at a
/// time (the oversubscription limit). MPS divides device memory evenly: each replica may use
/// `memory / N`; time-slicing isolates no memory. Quotas (`add_usage`) and DRF shares
/// (`resource_basis`) charge a held replica `1000 / N` milli-GPU; `gpu_demand::milli()` is 0 for
/// a replica demand, since its charge depends on the GPU it lands on.
///
/// State changes only through the `ledger` (see `workload/ledger.hpp`), which applies and undoes
/// `task_allocation`s; everybody else sees a `const cluster&`.
#pragma once

#include <algorithm>  // std::max, std::find_if
#include <bit>        // std::popcount
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>  // std::move, std::pair
#include <vector>

#include "gpusched/cluster/allocation.hpp"
#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/ids.hpp"
#include "gpusched/core/quantity.hpp"
#include "gpusched/detail/max_tree.hpp"
#include "gpusched/resource/gpu_model.hpp"
#include "gpusched/resource/mig_catalog.hpp"
#include "gpusched/resource/request.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// How one GPU is shared. A GPU is switched between modes only while idle
/// (`ledger::configure_sharing`).
enum class gpu_sharing : std::uint8_t {
  exclusive,     ///< not replicated: whole GPUs, milli shares, or MIG instances (MIG nodes)
  time_slicing,  ///< N replicas taking turns on the whole GPU; no memory isolation
  mps,           ///< N replicas running concurrently (MPS); each limited to memory / N
};

/// The mode's name: `exclusive`, `time-slicing` or `mps`.
[[nodiscard]] constexpr std::string_view to_string(gpu_sharing m) noexcept {
  switch (m) {
    case gpu_sharing::exclusive:
      return "exclusive";
    case gpu_sharing::time_slicing:
      return "time-slicing";
    case gpu_sharing::mps:
      return "mps";
  }
  return "?";
}

/// The most replicas one GPU may be advertised as.
inline constexpr int max_gpu_replicas = 255;

/// @brief Description of one node, as given to the `cluster` constructor.
///
/// Every field has a default, so a node is written with designated initializers naming only
/// what matters: `{.id = node_id{1}, .name = "dgx-1", .gpu_model = "H100-SXM5-80GB",
/// .gpus = 8_gpus, .cpu = 112_cores, .memory = 2048_gib}`.
struct node_spec {
  /// The caller's id of the node; unique in the cluster, must be valid.
  node_id id{};
  /// The node's name (in decisions and errors); unique when not empty.
  std::string name{};
  std::string gpu_model{};   ///< catalog name; may be empty when `gpus` is 0
  gpu_count gpus{};          ///< 0..max_gpus_per_node
  bool mig_enabled = false;  ///< GPUs in MIG mode serve only MIG demands
  /// CPU capacity of the node.
  cpu_millis cpu{};
  /// Host memory capacity of the node.
  memory_mib memory{};
  /// Free-form key/value labels (a rack, a zone), kept for the caller's policies.
  std::vector<std::pair<std::string, std::string>> labels{};
  std::uint32_t topology = 0;  ///< handle into a topology description (0: none)
  /// Sharing mode of every GPU of the node (change single GPUs with
  /// `ledger::configure_sharing`); not with `mig_enabled`.
  gpu_sharing sharing = gpu_sharing::exclusive;
  int replicas = 0;  ///< time_slicing / mps: replicas per GPU, 1..max_gpu_replicas; else 0
};

/// @brief The state of one GPU.
struct gpu_state {
  /// The GPU's model in the cluster's catalog.
  gpu_model_id model;
  /// The node the GPU belongs to.
  node_index node;
  milli_gpu free = whole_gpu_milli;  ///< unallocated share (non-MIG mode)
  mig_slot_mask mig_used = 0;        ///< occupied MIG memory slices (MIG mode)
  std::uint8_t mig_instances = 0;    ///< MIG instances on this GPU
  bool mig_media_used = false;       ///< a `+me` instance exists
  /// The GPU is in MIG mode and serves only MIG demands.
  bool mig_enabled = false;
  /// How the GPU is shared (time-slicing and MPS replicas, or exclusive).
  gpu_sharing sharing = gpu_sharing::exclusive;
  std::uint8_t replicas = 0;       ///< advertised replicas (0 when exclusive)
  std::uint8_t replicas_used = 0;  ///< replicas granted
  memory_mib replica_memory{};     ///< MPS: memory limit of one replica (memory / N); else 0
  /// Out of service (a GPU failure; `ledger::set_gpu_available`). A failed GPU holds no grant
  /// and reads as fully occupied (`free == 0`, every MIG slot and replica used, the `+me`
  /// engine taken), so every placement that inspects GPUs passes it over and `can_apply`
  /// refuses it; repair restores the idle state of its sharing mode.
  bool failed = false;

  /// Whole and idle: can be granted as a whole GPU. (A replicated GPU has `free == 0`: it
  /// offers no milli shares.)
  [[nodiscard]] constexpr bool whole_free() const noexcept {
    return !mig_enabled && free == whole_gpu_milli;
  }
  /// In time-slicing or MPS mode.
  [[nodiscard]] constexpr bool replicated() const noexcept {
    return sharing != gpu_sharing::exclusive;
  }
  /// Replicas not granted (`replicas - replicas_used`); 0 when exclusive.
  [[nodiscard]] constexpr int free_replicas() const noexcept {
    return static_cast<int>(replicas) - static_cast<int>(replicas_used);
  }
};

/// @brief Nodes and GPUs with their free capacity, in struct-of-arrays form, plus indexes.
///
/// Construction validates every node (@throws invalid_value_error naming node and field:
/// duplicate id or name, negative CPU or memory, CPU or memory totals beyond 64 bits, GPU count
/// outside 0..16, unknown model, MIG mode on a model without MIG, a sharing mode on a MIG node
/// or without GPUs, replicas outside 1..max_gpu_replicas for a shared node or not 0 for an
/// exclusive one). Queries are O(1) unless
/// stated; index queries O(log nodes).
class cluster {
 public:
  cluster() = default;
  /// Builds the cluster of `nodes`, all idle, with the GPU models of `catalog`. @throws
  /// invalid_value_error (see the class) before any state is kept. O(nodes + GPUs).
  cluster(gpu_catalog catalog, std::span<const node_spec> nodes) : catalog_(std::move(catalog)) {
    std::unordered_set<node_id> ids;
    std::unordered_set<std::string> names;
    std::int64_t cpu_sum = 0, memory_sum = 0;
    for (const auto& s : nodes) {
      const std::string where = "node " + std::to_string(s.id.value()) + " '" + s.name + "'";
      if (!s.id.valid()) {
        throw invalid_value_error(error_id::invalid_value, where, "id", "invalid",
                                  "a node needs an id");
      }
      if (!ids.insert(s.id).second) {
        throw invalid_value_error(error_id::duplicate_id, where, "id", std::to_string(s.id.value()),
                                  "duplicate node id");
      }
      if (!s.name.empty() && !names.insert(s.name).second) {
        throw invalid_value_error(error_id::duplicate_id, where, "name", s.name,
                                  "duplicate node name");
      }
      if (s.cpu < cpu_millis{0}) {
        throw invalid_value_error(error_id::invalid_value, where, "cpu",
                                  std::to_string(s.cpu.value()), "must not be negative");
      }
      if (s.memory < memory_mib{0}) {
        throw invalid_value_error(error_id::invalid_value, where, "memory",
                                  std::to_string(s.memory.value()), "must not be negative");
      }
      // The cluster keeps 64-bit totals of CPU and memory: their sums must not overflow.
      if (__builtin_add_overflow(cpu_sum, s.cpu.value(), &cpu_sum)) {
        throw invalid_value_error(error_id::invalid_value, where, "cpu",
                                  std::to_string(s.cpu.value()),
                                  "the cluster's total CPU overflows 64 bits");
      }
      if (__builtin_add_overflow(memory_sum, s.memory.value(), &memory_sum)) {
        throw invalid_value_error(error_id::invalid_value, where, "memory",
                                  std::to_string(s.memory.value()),
                                  "the cluster's total memory overflows 64 bits");
      }
      if (s.gpus.value() < 0 || s.gpus.value() > max_gpus_per_node) {
        throw invalid_value_error(error_id::invalid_value, where, "gpus",
                                  std::to_string(s.gpus.value()),
                                  "must be 0.." + std::to_string(max_gpus_per_node));
      }
      if (s.gpus.value() > 0) {
        const auto model = catalog_.id(s.gpu_model, where, "gpu_model");
        if (s.mig_enabled && !catalog_[model].supports_mig()) {
          const bool in_mig_catalog =
              std::find_if(mig_model_names.begin(), mig_model_names.end(), [&](const char* n) {
                return s.gpu_model == n;
              }) != mig_model_names.end();
          throw invalid_value_error(
              error_id::inconsistent, where, "mig_enabled", "true",
              "GPU model '" + s.gpu_model + "' has no MIG table in this catalog" +
                  (in_mig_catalog ? std::string("; gpusched::mig_catalog() has its MIG table "
                                                "(basic_catalog() has MIG for A100-SXM4-40GB "
                                                "only)")
                                  : std::string("; gpusched::mig_catalog() has none for it "
                                                "either: give its gpu_model a mig table")));
        }
      }
      check_sharing(where, s.sharing, s.replicas, s.gpus.value() > 0, s.mig_enabled);
    }
    // All checks passed: build (no exception below but std::bad_alloc).
    const std::size_t n = nodes.size();
    ids_.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto& s = nodes[i];
      const node_index ni{static_cast<node_index::rep>(i)};
      ids_.push_back(s.id);
      names_.push_back(s.name);
      cpu_capacity_.push_back(s.cpu);
      cpu_free_.push_back(s.cpu);
      memory_capacity_.push_back(s.memory);
      memory_free_.push_back(s.memory);
      labels_.push_back(s.labels);
      topology_.push_back(s.topology);
      gpu_begin_.push_back(static_cast<std::uint32_t>(gpus_.size()));
      gpu_count_.push_back(static_cast<std::uint8_t>(s.gpus.value()));
      const gpu_model_id model = s.gpus.value() > 0 ? *catalog_.find(s.gpu_model) : gpu_model_id{};
      node_model_.push_back(model);
      for (int g = 0; g < s.gpus.value(); ++g) {
        gpu_state st;
        st.model = model;
        st.node = ni;
        st.mig_enabled = s.mig_enabled;
        set_mode(st, s.sharing, s.replicas);
        gpus_.push_back(st);
      }
      position_.emplace(s.id, ni);
    }
    max_node_gpus_.assign(catalog_.size(), 0);
    free_whole_.assign(n, 0);
    max_share_.assign(n, 0);
    free_replicas_.assign(n, 0);
    down_.assign(n, 0);
    whole_tree_ = detail::max_tree(n, 0);
    replica_tree_ = detail::max_tree(n, 0);
    share_tree_ = detail::max_tree(n, 0);
    cpu_tree_ = detail::max_tree(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const node_index ni{static_cast<node_index::rep>(i)};
      total_gpus_ += gpu_count_[i];
      for (const auto& g : gpus(ni)) total_replicas_ += g.replicas;
      total_free_cpu_ += cpu_free_[i];
      total_free_memory_ += memory_free_[i];
      max_node_cpu_ = std::max(max_node_cpu_, cpu_capacity_[i]);
      max_node_memory_ = std::max(max_node_memory_, memory_capacity_[i]);
      max_node_gpus_any_ = std::max<int>(max_node_gpus_any_, gpu_count_[i]);
      if (node_model_[i].valid()) {
        auto& m = max_node_gpus_[node_model_[i].value()];
        m = std::max<int>(m, gpu_count_[i]);
      }
      refresh(ni);
      cpu_tree_.set(i, cpu_free_[i].value());
      if (has_mig(ni)) mig_nodes_.push_back(ni);
    }
  }

  /// The GPU models the cluster was built with.
  [[nodiscard]] const gpu_catalog& catalog() const noexcept { return catalog_; }
  /// Number of nodes.
  [[nodiscard]] std::size_t node_count() const noexcept { return ids_.size(); }
  /// Number of GPUs over all nodes.
  [[nodiscard]] std::size_t gpu_count() const noexcept { return gpus_.size(); }
  /// All node positions, for range-for: `for (node_index n : c.nodes())`.
  [[nodiscard]] auto nodes() const noexcept { return index_range{node_count()}; }

  // ---- per node --------------------------------------------------------------------------
  /// The caller's id of node `n`.
  [[nodiscard]] node_id id(node_index n) const noexcept { return ids_[n.value()]; }
  /// The name of node `n`.
  [[nodiscard]] const std::string& name(node_index n) const noexcept { return names_[n.value()]; }
  /// The position of the node with id `id`, or `nullopt`. O(1) expected.
  [[nodiscard]] std::optional<node_index> find(node_id id) const {
    const auto it = position_.find(id);
    return it == position_.end() ? std::nullopt : std::optional{it->second};
  }
  /// CPU capacity of node `n`.
  [[nodiscard]] cpu_millis cpu_capacity(node_index n) const noexcept {
    return cpu_capacity_[n.value()];
  }
  /// Unallocated CPU on node `n`.
  [[nodiscard]] cpu_millis cpu_free(node_index n) const noexcept { return cpu_free_[n.value()]; }
  /// Memory capacity of node `n`.
  [[nodiscard]] memory_mib memory_capacity(node_index n) const noexcept {
    return memory_capacity_[n.value()];
  }
  /// Unallocated memory on node `n`.
  [[nodiscard]] memory_mib memory_free(node_index n) const noexcept {
    return memory_free_[n.value()];
  }
  /// The labels of node `n`, as given in its `node_spec`.
  [[nodiscard]] const std::vector<std::pair<std::string, std::string>>& labels(
      node_index n) const noexcept {
    return labels_[n.value()];
  }
  /// The topology handle of node `n` (`node_spec::topology`; 0 for none).
  [[nodiscard]] std::uint32_t topology(node_index n) const noexcept { return topology_[n.value()]; }
  /// The node's GPU model (invalid when the node has no GPUs).
  [[nodiscard]] gpu_model_id model(node_index n) const noexcept { return node_model_[n.value()]; }
  /// The node's GPUs, contiguous.
  [[nodiscard]] std::span<const gpu_state> gpus(node_index n) const noexcept {
    return {gpus_.data() + gpu_begin_[n.value()], gpu_count_[n.value()]};
  }
  /// The position of node `n`'s first GPU (its GPUs are contiguous from there).
  [[nodiscard]] gpu_index first_gpu(node_index n) const noexcept {
    return gpu_index{gpu_begin_[n.value()]};
  }
  /// GPUs on the node that are idle and not in MIG mode.
  [[nodiscard]] int free_whole_gpus(node_index n) const noexcept { return free_whole_[n.value()]; }
  /// The largest free share (milli) of any single non-MIG GPU on the node.
  [[nodiscard]] milli_gpu max_free_share(node_index n) const noexcept {
    return milli_gpu{max_share_[n.value()]};
  }
  /// Free replicas over the node's time-sliced and MPS GPUs (0 while out of service). O(1).
  [[nodiscard]] int free_replicas(node_index n) const noexcept { return free_replicas_[n.value()]; }
  /// True when node `n` has GPUs and they are in MIG mode.
  [[nodiscard]] bool has_mig(node_index n) const noexcept {
    const auto g = gpus(n);
    return !g.empty() && g.front().mig_enabled;
  }
  /// The state of GPU `g`.
  [[nodiscard]] const gpu_state& gpu(gpu_index g) const noexcept { return gpus_[g.value()]; }
  /// False while the node is out of service (failed, drained): it holds no allocations, offers
  /// no capacity to the indexes (`free_whole_gpus`, `max_free_share` read 0, CPU index 0) and
  /// `can_apply` refuses it. Its CPU and memory free amounts are unchanged. Changed only through
  /// `ledger::set_available`. O(1).
  [[nodiscard]] bool available(node_index n) const noexcept { return down_[n.value()] == 0; }
  /// Nodes out of service. O(1).
  [[nodiscard]] std::size_t unavailable_nodes() const noexcept { return down_count_; }
  /// GPUs out of service: every GPU of a node out of service plus failed GPUs on nodes in
  /// service (each GPU counted once). O(1).
  [[nodiscard]] std::int64_t unavailable_gpus() const noexcept { return down_gpus_ + failed_up_; }
  /// False while GPU `g` has failed (see `gpu_state::failed`); independent of its node's
  /// availability. Changed only through `ledger::set_gpu_available`. O(1).
  [[nodiscard]] bool gpu_available(gpu_index g) const noexcept { return !gpus_[g.value()].failed; }
  /// GPUs marked failed, on any node. O(1).
  [[nodiscard]] std::int64_t failed_gpus() const noexcept { return failed_gpus_; }

  // ---- totals ----------------------------------------------------------------------------
  /// GPUs in the cluster, in or out of service. O(1).
  [[nodiscard]] std::int64_t total_gpus() const noexcept { return total_gpus_; }
  /// Sum of `free_whole_gpus` over all nodes. O(1).
  [[nodiscard]] std::int64_t total_free_whole_gpus() const noexcept { return total_free_whole_; }
  /// Replicas advertised by all GPUs, and the sum of `free_replicas` over all nodes. O(1).
  ///@{
  [[nodiscard]] std::int64_t total_replicas() const noexcept { return total_replicas_; }
  [[nodiscard]] std::int64_t total_free_replicas() const noexcept { return total_free_replicas_; }
  ///@}
  /// Sum of free CPU and free memory over all nodes. O(1).
  ///@{
  [[nodiscard]] cpu_millis total_free_cpu() const noexcept { return total_free_cpu_; }
  [[nodiscard]] memory_mib total_free_memory() const noexcept { return total_free_memory_; }
  ///@}
  /// The most GPUs any node of `model` has (0 if none); for an invalid id, of any model. O(1).
  [[nodiscard]] int max_node_gpus(gpu_model_id model = gpu_model_id::invalid()) const noexcept {
    if (!model.valid()) return max_node_gpus_any_;
    return model.value() < max_node_gpus_.size() ? max_node_gpus_[model.value()] : 0;
  }
  /// The largest CPU and memory capacity of any node. O(1).
  ///@{
  [[nodiscard]] cpu_millis max_node_cpu() const noexcept { return max_node_cpu_; }
  [[nodiscard]] memory_mib max_node_memory() const noexcept { return max_node_memory_; }
  ///@}
  /// The most idle whole GPUs, the largest free single-GPU share, and the most free CPU on any
  /// one node. O(1) (read off the indexes).
  [[nodiscard]] int most_free_gpus_on_a_node() const noexcept {
    return node_count() == 0 ? 0 : static_cast<int>(whole_tree_.max());
  }
  /// The largest free share of a single non-MIG GPU on any one node. O(1).
  [[nodiscard]] milli_gpu most_free_share_on_a_node() const noexcept {
    return milli_gpu{node_count() == 0 ? 0 : static_cast<std::int32_t>(share_tree_.max())};
  }
  /// The most free replicas on any one node. O(1).
  [[nodiscard]] int most_free_replicas_on_a_node() const noexcept {
    return node_count() == 0 ? 0 : static_cast<int>(replica_tree_.max());
  }
  /// The most free CPU on any one node. O(1).
  [[nodiscard]] cpu_millis most_free_cpu_on_a_node() const noexcept {
    return cpu_millis{node_count() == 0 ? 0 : cpu_tree_.max()};
  }
  /// Nodes whose GPUs are in MIG mode, in position order.
  [[nodiscard]] std::span<const node_index> mig_nodes() const noexcept { return mig_nodes_; }

  // ---- indexes: O(log nodes) ------------------------------------------------------------
  /// The value of `node_index::invalid()`: "no node position".
  static constexpr node_index::rep npos = node_index::invalid().value();
  /// First node at or after `from` with at least `k` idle whole GPUs, or `nullopt`.
  [[nodiscard]] std::optional<node_index> first_with_free_gpus(node_index from, int k) const {
    return found(whole_tree_.find_first(from.value(), k));
  }
  /// First node at or after `from` with a non-MIG GPU having at least `m` milli free.
  [[nodiscard]] std::optional<node_index> first_with_free_share(node_index from,
                                                                milli_gpu m) const {
    return found(share_tree_.find_first(from.value(), m.value()));
  }
  /// First node at or after `from` with at least `k` free replicas (summed over its GPUs).
  [[nodiscard]] std::optional<node_index> first_with_free_replicas(node_index from,
                                                                   int k = 1) const {
    return found(replica_tree_.find_first(from.value(), k));
  }
  /// First node at or after `from` with at least `c` CPU free.
  [[nodiscard]] std::optional<node_index> first_with_free_cpu(node_index from, cpu_millis c) const {
    return found(cpu_tree_.find_first(from.value(), c.value()));
  }

  /// True when `a` can be applied: node exists, CPU and memory suffice, every grant is on a GPU
  /// of that node, shares fit, MIG slots are free, replicas are free on a replicated GPU (and
  /// only there), and no GPU appears twice. O(grants).
  [[nodiscard]] bool can_apply(const task_allocation& a) const noexcept {
    if (a.node.value() >= node_count()) return false;
    const auto n = a.node.value();
    if (down_[n] != 0) return false;
    if (a.cpu < cpu_millis{0} || a.memory < memory_mib{0}) return false;
    if (a.cpu > cpu_free_[n] || a.memory > memory_free_[n]) return false;
    const auto lo = gpu_begin_[n];
    const auto hi = lo + gpu_count_[n];
    for (std::size_t i = 0; i < a.gpus.size(); ++i) {
      const auto& gr = a.gpus[i];
      if (gr.gpu.value() < lo || gr.gpu.value() >= hi) return false;
      for (std::size_t j = 0; j < i; ++j) {
        if (a.gpus[j].gpu == gr.gpu) return false;
      }
      const auto& g = gpus_[gr.gpu.value()];
      if (g.failed) return false;
      if (gr.replica || g.replicated()) {
        if (!gr.replica || !g.replicated() || gr.milli != milli_gpu{0} || gr.mig_slots != 0 ||
            gr.media || g.free_replicas() <= 0)
          return false;
      } else if (g.mig_enabled) {
        if (gr.milli != milli_gpu{0} || gr.mig_slots == 0) return false;
        if ((g.mig_used & gr.mig_slots) != 0) return false;
        if (gr.media && g.mig_media_used) return false;
      } else {
        if (gr.mig_slots != 0 || gr.milli <= milli_gpu{0} || gr.milli > g.free) return false;
      }
    }
    return true;
  }

 private:
  friend class ledger;

  struct index_range {
    std::size_t n;
    /// A forward iterator over node positions (what `nodes()` yields).
    struct iterator {
      /// The current position.
      node_index::rep i;
      /// The current node.
      node_index operator*() const noexcept { return node_index{i}; }
      /// Moves to the next node.
      iterator& operator++() noexcept {
        ++i;
        return *this;
      }
      friend bool operator==(iterator, iterator) noexcept = default;
    };
    [[nodiscard]] iterator begin() const noexcept { return {0}; }
    [[nodiscard]] iterator end() const noexcept { return {static_cast<node_index::rep>(n)}; }
  };

  static std::optional<node_index> found(std::size_t pos) noexcept {
    if (pos == detail::max_tree::npos) return std::nullopt;
    return node_index{static_cast<node_index::rep>(pos)};
  }

  /// Applies (`sign = +1`) or returns (`sign = -1`) an allocation. @pre `can_apply(a)` when
  /// applying; when returning, `a` was applied before. O(grants + GPUs of the node + log n).
  void apply(const task_allocation& a, int sign) noexcept {
    const auto n = a.node.value();
    if (sign > 0) {
      GPUSCHED_EXPECTS(can_apply(a));
      cpu_free_[n] -= a.cpu;
      memory_free_[n] -= a.memory;
      total_free_cpu_ -= a.cpu;
      total_free_memory_ -= a.memory;
    } else {
      cpu_free_[n] += a.cpu;
      memory_free_[n] += a.memory;
      total_free_cpu_ += a.cpu;
      total_free_memory_ += a.memory;
      GPUSCHED_ASSERT(cpu_free_[n] <= cpu_capacity_[n] && memory_free_[n] <= memory_capacity_[n]);
    }
    for (const auto& gr : a.gpus) {
      auto& g = gpus_[gr.gpu.value()];
      if (gr.replica) {
        GPUSCHED_ASSERT(sign > 0 ? g.replicas_used < g.replicas : g.replicas_used > 0);
        g.replicas_used =
            static_cast<std::uint8_t>(sign > 0 ? g.replicas_used + 1 : g.replicas_used - 1);
      } else if (g.mig_enabled) {
        if (sign > 0) {
          g.mig_used = static_cast<mig_slot_mask>(g.mig_used | gr.mig_slots);
          ++g.mig_instances;
          if (gr.media) g.mig_media_used = true;
        } else {
          GPUSCHED_ASSERT((g.mig_used & gr.mig_slots) == gr.mig_slots && g.mig_instances > 0);
          g.mig_used = static_cast<mig_slot_mask>(g.mig_used & ~gr.mig_slots);
          --g.mig_instances;
          if (gr.media) g.mig_media_used = false;
        }
      } else {
        g.free = sign > 0 ? g.free - gr.milli : g.free + gr.milli;
        GPUSCHED_ASSERT(g.free >= milli_gpu{0} && g.free <= whole_gpu_milli);
      }
    }
    refresh(a.node);
    cpu_tree_.set(n, down_[n] == 0 ? cpu_free_[n].value() : 0);
  }

  /// Takes a node out of service or returns it. @pre when taking it out, nothing is allocated
  /// on it (the ledger checks). O(GPUs of node + log n).
  void set_available(node_index ni, bool up) noexcept {
    const auto n = ni.value();
    const std::uint8_t d = up ? 0 : 1;
    if (down_[n] == d) return;
    down_[n] = d;
    const auto g = static_cast<std::int64_t>(gpu_count_[n]);
    down_count_ = up ? down_count_ - 1 : down_count_ + 1;
    down_gpus_ = up ? down_gpus_ - g : down_gpus_ + g;
    std::int64_t failed = 0;  // failed GPUs count once: in down_gpus_ while the node is down
    for (const auto& x : gpus(ni)) failed += x.failed ? 1 : 0;
    failed_up_ = up ? failed_up_ + failed : failed_up_ - failed;
    refresh(ni);
    cpu_tree_.set(n, up ? cpu_free_[n].value() : 0);
  }

  /// Marks GPU `gi` failed (`up == false`) or repaired. @pre when failing it, nothing is granted
  /// on it (the ledger checks). A failed GPU reads as fully occupied; repair restores the idle
  /// state of its sharing mode. Idempotent. O(GPUs of node + log n).
  void set_gpu_available(gpu_index gi, bool up) noexcept {
    auto& g = gpus_[gi.value()];
    if (g.failed == !up) return;
    g.failed = !up;
    const int step = up ? -1 : 1;
    failed_gpus_ += step;
    if (down_[g.node.value()] == 0) failed_up_ += step;
    if (!up) {
      g.free = milli_gpu{0};
      g.replicas_used = g.replicas;
      if (g.mig_enabled) {
        const auto slices = g.model.valid() ? catalog_[g.model].mig.memory_slices : 0;
        g.mig_used = static_cast<mig_slot_mask>((1u << slices) - 1u);
        g.mig_media_used = true;
      }
    } else {
      g.free = g.replicated() ? milli_gpu{0} : whole_gpu_milli;
      g.replicas_used = 0;
      g.mig_used = 0;
      g.mig_media_used = false;
    }
    refresh(g.node);
  }

  /// Validates a sharing mode and replica count (`has_gpus`: the node or GPU exists; `mig`: it is
  /// in MIG mode). @throws invalid_value_error naming `where` and the field.
  static void check_sharing(const std::string& where, gpu_sharing mode, int replicas, bool has_gpus,
                            bool mig) {
    if (mode == gpu_sharing::exclusive) {
      if (replicas != 0) {
        throw invalid_value_error(error_id::inconsistent, where, "replicas",
                                  std::to_string(replicas),
                                  "an exclusive GPU advertises no replicas (must be 0)");
      }
      return;
    }
    const std::string m(to_string(mode));
    if (!has_gpus) {
      throw invalid_value_error(error_id::inconsistent, where, "sharing", m,
                                "a node without GPUs cannot share them");
    }
    if (mig) {
      throw invalid_value_error(error_id::inconsistent, where, "sharing", m,
                                "GPUs in MIG mode cannot be time-sliced or shared with MPS");
    }
    if (replicas < 1 || replicas > max_gpu_replicas) {
      throw invalid_value_error(error_id::invalid_value, where, "replicas",
                                std::to_string(replicas),
                                "must be 1.." + std::to_string(max_gpu_replicas) + " for " + m);
    }
  }

  /// Sets an idle GPU's mode fields. @pre `check_sharing` passed; the GPU holds nothing.
  void set_mode(gpu_state& g, gpu_sharing mode, int replicas) const noexcept {
    g.sharing = mode;
    g.replicas = static_cast<std::uint8_t>(mode == gpu_sharing::exclusive ? 0 : replicas);
    g.replicas_used = 0;
    g.free = mode == gpu_sharing::exclusive ? whole_gpu_milli : milli_gpu{0};
    g.replica_memory = mode == gpu_sharing::mps && g.model.valid()
                           ? memory_mib{catalog_[g.model].memory.value() / replicas}
                           : memory_mib{0};
  }

  /// Switches idle GPU `gi` to `mode`. @pre validated and idle (the ledger checks). O(GPUs of
  /// node + log n).
  void set_sharing(gpu_index gi, gpu_sharing mode, int replicas) noexcept {
    auto& g = gpus_[gi.value()];
    total_replicas_ -= g.replicas;
    set_mode(g, mode, replicas);
    total_replicas_ += g.replicas;
    refresh(g.node);
  }

  /// Recomputes the node's cached GPU aggregates and their index entries. O(GPUs of node).
  void refresh(node_index ni) noexcept {
    const auto n = ni.value();
    int whole = 0;
    int replicas = 0;
    std::int32_t share = 0;
    if (down_[n] == 0) {
      for (const auto& g : gpus(ni)) {
        if (g.replicated()) {
          replicas += g.free_replicas();
          continue;
        }
        if (g.mig_enabled) continue;
        if (g.whole_free()) ++whole;
        share = std::max(share, g.free.value());
      }
    }
    total_free_whole_ += whole - free_whole_[n];
    total_free_replicas_ += replicas - free_replicas_[n];
    free_whole_[n] = whole;
    free_replicas_[n] = replicas;
    max_share_[n] = share;
    whole_tree_.set(n, whole);
    share_tree_.set(n, share);
    replica_tree_.set(n, replicas);
  }

  gpu_catalog catalog_;
  // nodes, struct of arrays
  std::vector<node_id> ids_;
  std::vector<std::string> names_;
  std::vector<cpu_millis> cpu_capacity_, cpu_free_;
  std::vector<memory_mib> memory_capacity_, memory_free_;
  std::vector<std::vector<std::pair<std::string, std::string>>> labels_;
  std::vector<std::uint32_t> topology_;
  std::vector<std::uint32_t> gpu_begin_;
  std::vector<std::uint8_t> gpu_count_;
  std::vector<gpu_model_id> node_model_;
  std::vector<int> free_whole_;
  std::vector<std::int32_t> max_share_;
  std::vector<int> free_replicas_;
  std::vector<std::uint8_t> down_;  // 1: out of service
  std::size_t down_count_ = 0;
  std::int64_t down_gpus_ = 0;
  std::int64_t failed_gpus_ = 0;  // GPUs with `failed`
  std::int64_t failed_up_ = 0;    // of those, on nodes in service
  std::unordered_map<node_id, node_index> position_;
  std::vector<node_index> mig_nodes_;
  // GPUs
  std::vector<gpu_state> gpus_;
  // indexes and totals
  detail::max_tree whole_tree_, share_tree_, cpu_tree_, replica_tree_;
  std::int64_t total_gpus_ = 0;
  std::int64_t total_free_whole_ = 0;
  std::int64_t total_replicas_ = 0;
  std::int64_t total_free_replicas_ = 0;
  cpu_millis total_free_cpu_{};
  memory_mib total_free_memory_{};
  cpu_millis max_node_cpu_{};
  memory_mib max_node_memory_{};
  int max_node_gpus_any_ = 0;
  std::vector<int> max_node_gpus_;
};

/// @brief The milli-GPU a grant occupies: the one GPU measure that quotas (`add_usage`) and the
/// simulator's allocation figures share. A whole GPU or a share: its milli. A MIG instance:
/// `1000 x its memory slices / the model's memory slices` (a 3g.40gb on an 8-slice A100: 500).
/// One replica of a time-sliced or MPS GPU advertised as N replicas: `1000 / N`. Rounded down.
/// The GPU's mode cannot change while a grant is held, so a grant charges the same amount
/// when it is taken and when it is given back. O(1).
inline std::int64_t charged_milli(const cluster& c, const gpu_grant& g) {
  const auto& s = c.gpu(g.gpu);
  if (g.mig_slots != 0) {
    const auto slices = c.catalog()[s.model].mig.memory_slices;
    return slices == 0 ? 0 : std::popcount(static_cast<unsigned>(g.mig_slots)) * 1000 / slices;
  }
  if (g.replica) return s.replicas == 0 ? 0 : 1000 / std::int64_t{s.replicas};
  return g.milli.value();
}

GPUSCHED_END_NAMESPACE
