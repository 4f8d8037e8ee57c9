// SPDX-License-Identifier: Apache-2.0
/// @file
/// `first_fit_placement`: places a gang task by task, in group order, each task where the
/// packing policy puts it; plus `diagnose_unplaced`, which turns a failure into a structured
/// reason (short in total, or fragmented) for every placement policy to reuse.
#pragma once

#include <cstdint>
#include <string_view>

#include "gpusched/config.hpp"
#include "gpusched/policy/concepts.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Why task group `g` of `j` could not be placed, judged on the state before `tx`'s
/// placements (it adds back what `tx` placed). Reports `insufficient` when the cluster lacks the
/// gang's total whole GPUs, GPU replicas, CPU or memory; otherwise `no_fit` naming the dimension no
/// node can offer a task of group `g` (its GPUs, else its CPU) with the most any single node
/// offers; when each dimension fits on some node but never together, `no_fit` on GPUs with
/// `available` >= `needed`, which `describe` words as "not together". O(tasks placed + groups):
/// totals and maxima come from the indexes.
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
  switch (r.gpu.kind) {
    case gpu_demand_kind::whole:
      return reason::no_fit(gi, resource_kind::gpu, r.gpu.count.value(),
                            c.most_free_gpus_on_a_node());
    case gpu_demand_kind::share:
      return reason::no_fit(gi, resource_kind::gpu_share, r.gpu.share.value(),
                            c.most_free_share_on_a_node().value());
    case gpu_demand_kind::mig:
      return reason::no_fit(gi, resource_kind::mig_slot, r.gpu.mig_memory, 0);
    case gpu_demand_kind::replica:
      return reason::no_fit(gi, resource_kind::gpu_replica, 1, c.most_free_replicas_on_a_node());
    case gpu_demand_kind::none:
      break;
  }
  return reason::no_fit(gi, resource_kind::cpu, r.cpu.value(), c.most_free_cpu_on_a_node().value());
}

/// @brief Places each task with the packing policy, in group order, at full size. All or
/// nothing: on the first task that does not fit it stops with `diagnose_unplaced`'s reason and
/// the pipeline rolls the transaction back. O(tasks x packing cost).
struct first_fit_placement {
  using policy_category = placement_tag;
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "first-fit"; }

  [[nodiscard]] placement_outcome place(const schedule_context& ctx, const job_spec& j,
                                        packing_ref pack, ledger::transaction& tx) const {
    for (std::size_t g = 0; g < j.groups.size(); ++g) {
      for (std::int32_t t = 0; t < j.groups[g].count; ++t) {
        auto a = pack.pack(ctx, j.groups[g].request);
        if (!a) return {false, diagnose_unplaced(tx, j, g)};
        a->group = static_cast<std::uint16_t>(g);
        if (!tx.place(*a)) return {false, diagnose_unplaced(tx, j, g)};
      }
    }
    return {true, reason::placed()};
  }

  friend constexpr bool operator==(first_fit_placement, first_fit_placement) noexcept {
    return true;
  }
};

static_assert(placement_policy<first_fit_placement>);

GPUSCHED_END_NAMESPACE
