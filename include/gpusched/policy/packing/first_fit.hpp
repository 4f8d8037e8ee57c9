// SPDX-License-Identifier: Apache-2.0
/// @file
/// `first_fit_packing`: the lowest-positioned node that fits, and on it the lowest-indexed GPUs
/// (whole), the first GPU with enough free share (fraction), the lowest free MIG placement, or
/// the lowest replicated GPU with a free replica whose memory limit covers the ask (replica).
/// Also the shared per-node fit helpers other packers build on.
#pragma once

#include <optional>
#include <string_view>

#include "gpusched/cluster/allocation.hpp"
#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/resource/request.hpp"

GPUSCHED_BEGIN_NAMESPACE

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
    if ((s.mig_used & slots) == 0) return gpu_grant{g, milli_gpu{0}, slots, p->media_extension};
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

/// @brief First-fit packing. Stateless; `pack` walks the cluster's indexes so a query costs
/// O(log nodes) per candidate node rather than a scan (MIG requests scan the MIG nodes).
struct first_fit_packing {
  using policy_category = packing_tag;
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "first-fit"; }

  [[nodiscard]] std::optional<task_allocation> fit(const schedule_context& ctx, node_index n,
                                                   const task_request& r) const noexcept {
    const cluster& c = ctx.state();
    if (!host_fits(c, n, r)) return std::nullopt;
    task_allocation a;
    a.node = n;
    a.cpu = r.cpu;
    a.memory = r.memory;
    const auto first = c.first_gpu(n).value();
    const auto gpus = c.gpus(n);
    switch (r.gpu.kind) {
      case gpu_demand_kind::none:
        return a;
      case gpu_demand_kind::whole: {
        if (c.free_whole_gpus(n) < r.gpu.count.value()) return std::nullopt;
        for (std::size_t i = 0;
             i < gpus.size() && a.gpus.size() < static_cast<std::size_t>(r.gpu.count.value());
             ++i) {
          if (gpus[i].whole_free()) {
            a.gpus.push_back(
                {gpu_index{static_cast<gpu_index::rep>(first + i)}, whole_gpu_milli, 0, false});
          }
        }
        return a;
      }
      case gpu_demand_kind::share: {
        for (std::size_t i = 0; i < gpus.size(); ++i) {
          if (!gpus[i].mig_enabled && gpus[i].free >= r.gpu.share) {
            a.gpus.push_back(
                {gpu_index{static_cast<gpu_index::rep>(first + i)}, r.gpu.share, 0, false});
            return a;
          }
        }
        return std::nullopt;
      }
      case gpu_demand_kind::mig: {
        for (std::size_t i = 0; i < gpus.size(); ++i) {
          if (auto g = first_free_mig_slot(c, gpu_index{static_cast<gpu_index::rep>(first + i)},
                                           r.gpu)) {
            a.gpus.push_back(*g);
            return a;
          }
        }
        return std::nullopt;
      }
      case gpu_demand_kind::replica: {
        if (c.free_replicas(n) <= 0) return std::nullopt;
        for (std::size_t i = 0; i < gpus.size(); ++i) {
          if (replica_fits(c, gpus[i], r.gpu)) {
            a.gpus.push_back(replica_grant(gpu_index{static_cast<gpu_index::rep>(first + i)}));
            return a;
          }
        }
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  [[nodiscard]] std::optional<task_allocation> pack(const schedule_context& ctx,
                                                    const task_request& r) const noexcept {
    const cluster& c = ctx.state();
    if (r.gpu.kind == gpu_demand_kind::mig) {
      for (node_index n : c.mig_nodes()) {
        if (auto a = fit(ctx, n, r)) return a;
      }
      return std::nullopt;
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
      if (!n) return std::nullopt;
      if (auto a = fit(ctx, *n, r)) return a;
      from = node_index{n->value() + 1};
    }
  }

  friend constexpr bool operator==(first_fit_packing, first_fit_packing) noexcept { return true; }
};

static_assert(packing_policy<first_fit_packing>);

GPUSCHED_END_NAMESPACE
