// SPDX-License-Identifier: Apache-2.0
/// @file
/// Classic `best_fit_packing` and `worst_fit_packing`: the node that leaves the least (most)
/// free GPU milli after the placement (CPU-only requests: free CPU), ties to the lowest node;
/// on it, a share goes to the GPU with the least (most) free share that fits, whole GPUs to the
/// lowest idle ones, MIG instances to the lowest free slot (as first-fit). Replica requests:
/// the node with the fewest (most) free replicas after the placement, and on it the replicated
/// GPU with the fewest (most) free replicas that fits (best fit packs replicas, like the NVIDIA
/// device plugin's `packed` policy; worst fit spreads them, like its default `distributed`).
#pragma once

#include <bit>  // std::popcount
#include <cstdint>
#include <optional>
#include <string_view>

#include "gpusched/cluster/allocation.hpp"
#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/packing/first_fit.hpp"
#include "gpusched/resource/request.hpp"

GPUSCHED_BEGIN_NAMESPACE

namespace detail {
/// Best (`Worst = false`) or worst fit. Stateless, deterministic.
template <bool Worst>
struct extreme_fit_packing {
  using policy_category = packing_tag;
  [[nodiscard]] static constexpr std::string_view name() noexcept {
    return Worst ? "worst-fit" : "best-fit";
  }

  /// Free GPU milli on the node (non-MIG GPUs), or free CPU for CPU-only requests, after `a`.
  [[nodiscard]] static std::int64_t leftover(const cluster& c, const task_allocation& a,
                                             const task_request& r) noexcept {
    if (r.gpu.kind == gpu_demand_kind::none) return (c.cpu_free(a.node) - r.cpu).value();
    if (r.gpu.kind == gpu_demand_kind::replica) return c.free_replicas(a.node) - 1;
    std::int64_t left = 0;
    for (const auto& g : c.gpus(a.node)) left += g.mig_enabled ? 0 : g.free.value();
    for (const auto& gr : a.gpus) left -= gr.milli.value();
    if (r.gpu.kind == gpu_demand_kind::mig) {
      // MIG: free memory slices instead.
      left = 0;
      for (const auto& g : c.gpus(a.node)) {
        if (g.mig_enabled) left += 8 - std::popcount(static_cast<unsigned>(g.mig_used));
      }
      for (const auto& gr : a.gpus) left -= std::popcount(static_cast<unsigned>(gr.mig_slots));
    }
    return left;
  }

  [[nodiscard]] std::optional<task_allocation> fit(const schedule_context& ctx, node_index n,
                                                   const task_request& r) const noexcept {
    auto a = first_fit_packing{}.fit(ctx, n, r);
    if (!a) return a;
    const cluster& c = ctx.state();
    const auto gpus = c.gpus(n);
    const auto first = c.first_gpu(n).value();
    int pick = -1;
    if (r.gpu.kind == gpu_demand_kind::replica) {
      for (std::size_t i = 0; i < gpus.size(); ++i) {
        if (!detail::replica_fits(c, gpus[i], r.gpu)) continue;
        const int f = gpus[i].free_replicas();
        if (pick < 0 || (Worst ? f > gpus[static_cast<std::size_t>(pick)].free_replicas()
                               : f < gpus[static_cast<std::size_t>(pick)].free_replicas()))
          pick = static_cast<int>(i);
      }
      a->gpus[0].gpu = gpu_index{static_cast<gpu_index::rep>(first + static_cast<unsigned>(pick))};
      return a;
    }
    if (r.gpu.kind != gpu_demand_kind::share) return a;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      if (gpus[i].mig_enabled || gpus[i].free < r.gpu.share) continue;
      if (pick < 0) {
        pick = static_cast<int>(i);
        continue;
      }
      const auto cur = gpus[static_cast<std::size_t>(pick)].free;
      if (Worst ? gpus[i].free > cur : gpus[i].free < cur) pick = static_cast<int>(i);
    }
    a->gpus[0].gpu = gpu_index{static_cast<gpu_index::rep>(first + static_cast<unsigned>(pick))};
    return a;
  }

  /// O(nodes x GPUs).
  [[nodiscard]] std::optional<task_allocation> pack(const schedule_context& ctx,
                                                    const task_request& r) const noexcept {
    const cluster& c = ctx.state();
    std::optional<task_allocation> best;
    std::int64_t best_left = 0;
    for (node_index n : c.nodes()) {
      auto a = fit(ctx, n, r);
      if (!a) continue;
      const auto left = leftover(c, *a, r);
      if (!best || (Worst ? left > best_left : left < best_left)) {
        best = a;
        best_left = left;
      }
    }
    return best;
  }
  friend constexpr bool operator==(extreme_fit_packing, extreme_fit_packing) noexcept {
    return true;
  }
};
}  // namespace detail

/// @brief Classic best fit: the tightest node, the tightest GPU.
using best_fit_packing = detail::extreme_fit_packing<false>;
/// @brief Classic worst fit: the emptiest node, the emptiest GPU (spreads load).
using worst_fit_packing = detail::extreme_fit_packing<true>;

static_assert(packing_policy<best_fit_packing>);
static_assert(packing_policy<worst_fit_packing>);

GPUSCHED_END_NAMESPACE
