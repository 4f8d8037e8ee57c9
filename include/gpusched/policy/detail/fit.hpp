// SPDX-License-Identifier: Apache-2.0
/// @file
/// Fit helpers shared by the packing, placement and admission families (implementation
/// details, in `gpusched::detail`; not part of the public API):
/// - per node and GPU: `host_fits`, `first_free_mig_slot`, `replica_fits`, `replica_grant`;
/// - over the cluster: `for_each_candidate_node` (the nodes the free-capacity indexes offer a
///   request);
/// - MIG room: `mig_instances_room` (instances of a profile that fit, now or when empty);
/// - per gang: `diagnose_unplaced` (why a task group could not be placed, as a `reason`) and
///   `reduced_sizes` (the task counts of an elastic gang reduced by `x` tasks).
#pragma once

#include <algorithm>  // std::sort, std::min, std::max
#include <cstdint>
#include <optional>
#include <type_traits>  // std::is_invocable_r_v
#include <utility>      // std::pair
#include <vector>

#include "gpusched/cluster/allocation.hpp"
#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/policy/decision.hpp"
#include "gpusched/resource/mig_catalog.hpp"
#include "gpusched/resource/request.hpp"
#include "gpusched/workload/job.hpp"
#include "gpusched/workload/ledger.hpp"

GPUSCHED_BEGIN_NAMESPACE

namespace detail {

/// True when node `n` has the CPU and memory `r` needs and, if `r` needs a GPU, GPUs of a model
/// `r` allows, and is in service. O(1).
[[nodiscard]] inline bool host_fits(const cluster& c, node_index n,
                                    const task_request& r) noexcept {
  if (!c.available(n)) return false;
  if (r.cpu > c.cpu_free(n) || r.memory > c.memory_free(n)) return false;
  if (r.gpu.kind == gpu_demand_kind::none) return true;
  const auto m = c.model(n);
  return m.valid() && r.allowed_models.admits(m);
}

/// @brief Calls `f(n)` for each node `n` that the cluster's free-capacity indexes say may
/// host request `r`, in a fixed order, until `f` returns false. The candidates by demand kind:
/// whole GPUs: nodes with at least `count` free whole GPUs; share: nodes with a GPU offering the
/// share; replica: nodes with a free replica; none: nodes with `r.cpu` free CPU; MIG: every
/// MIG-enabled node (`cluster::mig_nodes()`, in its order). Index-walked kinds are visited in
/// ascending node position. A candidate need not fit (CPU, memory, model, MIG slot, replica
/// memory are the caller's to check); every node that fits is a candidate. The shared node
/// scan of first-fit packing, topology packing and gang placement.
/// @returns false when `f` stopped the walk, true when every candidate was visited.
/// Complexity: O(log nodes) per candidate visited (MIG: O(1)), plus `f`. Always inlined: it is
/// the inner loop of every packer (as a call, it cost 2.5% of a 1,024-task gang cycle).
template <class F>
  requires std::is_invocable_r_v<bool, F&, node_index>
[[gnu::always_inline]] inline bool for_each_candidate_node(const cluster& c, const task_request& r,
                                                           F f) {
  if (r.gpu.kind == gpu_demand_kind::mig) {
    for (node_index n : c.mig_nodes()) {
      if (!f(n)) return false;
    }
    return true;
  }
  node_index from{0};
  while (true) {
    std::optional<node_index> n;
    switch (r.gpu.kind) {
      case gpu_demand_kind::whole:
        n = c.first_with_free_gpus(from, r.gpu.count.value());
        break;
      case gpu_demand_kind::share:
        n = c.first_with_free_share(from, r.gpu.share);
        break;
      case gpu_demand_kind::replica:
        n = c.first_with_free_replicas(from);
        break;
      default:
        n = c.first_with_free_cpu(from, r.cpu);
        break;
    }
    if (!n) return true;
    if (!f(*n)) return false;
    from = node_index{n->value() + 1};
  }
}

/// The MIG placement a first-fit packer takes on GPU `g`: the profile of `g`'s model with the
/// requested slices, at the lowest free start slot. Empty if none. O(placements).
[[nodiscard]] inline std::optional<gpu_grant> first_free_mig_slot(const cluster& c, gpu_index g,
                                                                  const gpu_demand& d) noexcept {
  const gpu_state& s = c.gpu(g);
  if (!s.mig_enabled) return std::nullopt;
  const mig_profile* p = c.catalog()[s.model].mig.find(d.mig_compute, d.mig_memory);
  if (p == nullptr) return std::nullopt;
  for (unsigned start = 0; start < 8; ++start) {
    if (((p->placement_starts >> start) & 1u) == 0) continue;
    const mig_slot_mask slots = p->slots_at(start);
    if ((s.mig_used & slots) == 0) {
      return gpu_grant{g, milli_gpu{0}, slots, p->media_extension, false, p->compute_slices};
    }
  }
  return std::nullopt;
}

/// True when replicated GPU `g` can take one more replica of demand `d`: a replica is free and
/// `d.gpu_memory` fits the per-replica limit (MPS: memory / N; time-slicing: device memory). O(1).
[[nodiscard]] inline bool replica_fits(const cluster& c, const gpu_state& g,
                                       const gpu_demand& d) noexcept {
  if (!g.replicated() || g.free_replicas() <= 0) return false;
  const memory_mib limit =
      g.sharing == gpu_sharing::mps ? g.replica_memory : c.catalog()[g.model].memory;
  return d.gpu_memory <= limit;
}

/// A replica grant on GPU `g`.
[[nodiscard]] constexpr gpu_grant replica_grant(gpu_index g) noexcept {
  return gpu_grant{g, milli_gpu{0}, 0, false, true};
}

/// @brief Room for MIG instances of one task's profile: over the cluster and on the best node.
struct mig_room {
  std::int64_t total = 0;           ///< instances that fit over every GPU the request may use
  std::int64_t most_on_a_node = 0;  ///< the most that fit on one node
};

/// How many more MIG instances of `r`'s profile (`r.gpu` is a MIG demand) fit, per GPU in MIG
/// mode of a model `r.allowed_models` admits that has the profile, with GPU `gi`'s occupancy
/// `occ(gi, state)` (a `mig_occupancy`; all zero: the capacity of the empty cluster). Greedy
/// per GPU (exact for one profile: equal-size intervals), at most one per GPU for a `+me`
/// profile. O(MIG GPUs x placements).
template <class Occupancy>
[[nodiscard]] mig_room mig_instances_room(const cluster& c, const task_request& r,
                                          Occupancy&& occ) {
  mig_room room;
  for (const node_index n : c.mig_nodes()) {
    const auto first = c.first_gpu(n).value();
    const auto gpus = c.gpus(n);
    std::int64_t on_node = 0;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const gpu_state& s = gpus[i];
      if (!s.mig_enabled || !s.model.valid() || !r.allowed_models.admits(s.model)) continue;
      const mig_profile* p = c.catalog()[s.model].mig.find(r.gpu.mig_compute, r.gpu.mig_memory);
      if (p == nullptr) continue;
      const mig_occupancy o = occ(gpu_index{static_cast<gpu_index::rep>(first + i)}, s);
      if (p->media_extension && o.media_used) continue;
      const int k = mig_max_additional(*p, o.used);
      on_node += p->media_extension ? std::min(k, 1) : k;
    }
    room.total += on_node;
    room.most_on_a_node = std::max(room.most_on_a_node, on_node);
  }
  return room;
}

/// @brief Why task group `g` of `j` could not be placed, judged on the state before `tx`'s
/// placements (it adds back what `tx` placed). Reports `insufficient` when the cluster lacks the
/// gang's total whole GPUs, GPU replicas, CPU or memory; otherwise `no_fit` naming the dimension no
/// node can offer a task of group `g` (its GPUs, else its CPU) with the most any single node
/// offers; when each dimension fits on some node but never together, `no_fit` on GPUs with
/// `available` >= `needed`, which `describe` words as "not together". For a MIG group:
/// `insufficient` (with the group) when fewer instances of its profile fit over the cluster
/// than its minimum size, else `no_fit` with the most that fit on one node (`mig_instance`).
/// O(tasks placed + groups): totals and maxima come from the indexes; a MIG group adds
/// O(MIG GPUs x (placements + grants placed)).
[[nodiscard]] inline reason diagnose_unplaced(const ledger::transaction& tx, const job_spec& j,
                                              std::size_t g) {
  const cluster& c = tx.state();
  std::int64_t placed_gpus = 0;
  std::int64_t placed_replicas = 0;
  cpu_millis placed_cpu{};
  memory_mib placed_mem{};
  for (const auto& a : tx.placed()) {
    for (const auto& gr : a.gpus) {
      placed_gpus += gr.milli == whole_gpu_milli ? 1 : 0;
      placed_replicas += gr.replica ? 1 : 0;
    }
    placed_cpu += a.cpu;
    placed_mem += a.memory;
  }
  cpu_millis need_cpu{};
  memory_mib need_mem{};
  std::int64_t need_replicas = 0;
  for (const auto& grp : j.groups) {
    need_cpu += grp.request.cpu * grp.count;
    need_mem += grp.request.memory * grp.count;
    if (grp.request.gpu.kind == gpu_demand_kind::replica) need_replicas += grp.count;
  }
  const auto free_gpus = c.total_free_whole_gpus() + placed_gpus;
  if (j.whole_gpus().value() > free_gpus) {
    return reason::insufficient(resource_kind::gpu, j.whole_gpus().value(), free_gpus);
  }
  const auto free_replicas = c.total_free_replicas() + placed_replicas;
  if (need_replicas > free_replicas) {
    return reason::insufficient(resource_kind::gpu_replica, need_replicas, free_replicas);
  }
  if (need_cpu > c.total_free_cpu() + placed_cpu) {
    return reason::insufficient(resource_kind::cpu, need_cpu.value(),
                                (c.total_free_cpu() + placed_cpu).value());
  }
  if (need_mem > c.total_free_memory() + placed_mem) {
    return reason::insufficient(resource_kind::memory, need_mem.value(),
                                (c.total_free_memory() + placed_mem).value());
  }
  const auto& r = j.groups[g].request;
  const auto gi = static_cast<std::int32_t>(g);
  // The GPU dimension is the per-node bottleneck only if no node has the task's GPUs; when
  // some node has them but no node has the task's CPU, CPU is what is short on every node.
  const bool gpus_fit_somewhere =
      (r.gpu.kind == gpu_demand_kind::whole &&
       c.most_free_gpus_on_a_node() >= r.gpu.count.value()) ||
      (r.gpu.kind == gpu_demand_kind::share && c.most_free_share_on_a_node() >= r.gpu.share) ||
      (r.gpu.kind == gpu_demand_kind::replica && c.most_free_replicas_on_a_node() >= 1);
  if (gpus_fit_somewhere && r.cpu > c.most_free_cpu_on_a_node()) {
    return reason::no_fit(gi, resource_kind::cpu, r.cpu.value(),
                          c.most_free_cpu_on_a_node().value());
  }
  return r.gpu.visit(
      [&](demand_none) -> reason {
        return reason::no_fit(gi, resource_kind::cpu, r.cpu.value(),
                              c.most_free_cpu_on_a_node().value());
      },
      [&](demand_whole w) -> reason {
        return reason::no_fit(gi, resource_kind::gpu, w.count.value(),
                              c.most_free_gpus_on_a_node());
      },
      [&](demand_share s) -> reason {
        return reason::no_fit(gi, resource_kind::gpu_share, s.share.value(),
                              c.most_free_share_on_a_node().value());
      },
      [&](demand_mig) -> reason {
        // the state before tx: the MIG slices tx placed are free again
        const mig_room room = mig_instances_room(c, r, [&](gpu_index gpu, const gpu_state& s) {
          if (!c.available(s.node)) return mig_occupancy{0xFF, true};  // out of service
          mig_occupancy o{s.mig_used, s.mig_media_used};
          for (const auto& a : tx.placed()) {
            for (const auto& gr : a.gpus) {
              if (gr.gpu != gpu || gr.mig_slots == 0) continue;
              o.used = static_cast<mig_slot_mask>(o.used & ~gr.mig_slots);
              if (gr.media) o.media_used = false;
            }
          }
          return o;
        });
        const std::int32_t tasks = j.groups[g].minimum();
        if (room.total < tasks) {
          reason why = reason::insufficient(resource_kind::mig_instance, tasks, room.total);
          why.group = gi;
          return why;
        }
        return reason::no_fit(gi, resource_kind::mig_instance, 1, room.most_on_a_node);
      },
      [&](demand_replica) -> reason {
        return reason::no_fit(gi, resource_kind::gpu_replica, 1, c.most_free_replicas_on_a_node());
      });
}

/// Task counts per group for an elastic gang reduced by `x` tasks, spread over the elastic
/// groups in proportion to their slack (largest remainder, ties to the earlier group), as
/// `gang_placement` and `quota_admission` size elastic gangs.
/// @pre `0 <= x <= sum(count - minimum)`. O(groups).
[[nodiscard]] inline std::vector<std::int32_t> reduced_sizes(const job_spec& j, std::int64_t x) {
  std::vector<std::int32_t> sizes;
  std::int64_t slack_total = 0;
  for (const auto& g : j.groups) {
    sizes.push_back(g.count);
    slack_total += g.count - g.minimum();
  }
  GPUSCHED_EXPECTS(x >= 0 && x <= slack_total);
  if (x == 0 || slack_total == 0) return sizes;
  std::int64_t removed = 0;
  std::vector<std::pair<std::int64_t, std::size_t>> remainders;  // (remainder, group)
  for (std::size_t g = 0; g < j.groups.size(); ++g) {
    const std::int64_t slack = j.groups[g].count - j.groups[g].minimum();
    const std::int64_t share = x * slack / slack_total;
    sizes[g] -= static_cast<std::int32_t>(share);
    removed += share;
    remainders.emplace_back(x * slack % slack_total, g);
  }
  // Largest remainder first, lower group first on ties. (A total order with std::sort rather
  // than std::stable_sort: libstdc++ 12's stable_sort uses a helper clang 19 flags deprecated.)
  std::sort(remainders.begin(), remainders.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (const auto& [rem, g] : remainders) {
    if (removed == x) break;
    if (sizes[g] > j.groups[g].minimum()) {
      --sizes[g];
      ++removed;
    }
  }
  return sizes;
}

}  // namespace detail

GPUSCHED_END_NAMESPACE
