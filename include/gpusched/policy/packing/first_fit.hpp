// SPDX-License-Identifier: Apache-2.0
/// @file
/// `first_fit_packing`: the lowest-positioned node that fits, and on it the lowest-indexed GPUs
/// (whole), the first GPU with enough free share (fraction), the lowest free MIG placement, or
/// the lowest replicated GPU with a free replica whose memory limit covers the ask (replica).
/// The per-node fit helpers it builds on are in `policy/detail/fit.hpp`.
#pragma once

#include <optional>
#include <string_view>

#include "gpusched/cluster/allocation.hpp"
#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/detail/fit.hpp"
#include "gpusched/resource/request.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief First-fit packing. Stateless; `pack` walks the cluster's indexes so a query costs
/// O(log nodes) per candidate node rather than a scan (MIG requests scan the MIG nodes).
struct first_fit_packing {
  /// Opts into the packing family.
  using policy_category = packing_tag;
  /// The policy's name: `first-fit`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "first-fit"; }

  /// The GPUs this policy picks for one task of `r` on node `n`, or `nullopt` when it does not
  /// fit there.
  [[nodiscard]] std::optional<task_allocation> fit(const schedule_context& ctx, node_index n,
                                                   const task_request& r) const noexcept {
    const cluster& c = ctx.state();
    if (!detail::host_fits(c, n, r)) return std::nullopt;
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
          if (auto g = detail::first_free_mig_slot(
                  c, gpu_index{static_cast<gpu_index::rep>(first + i)}, r.gpu)) {
            a.gpus.push_back(*g);
            return a;
          }
        }
        return std::nullopt;
      }
      case gpu_demand_kind::replica: {
        if (c.free_replicas(n) <= 0) return std::nullopt;
        for (std::size_t i = 0; i < gpus.size(); ++i) {
          if (detail::replica_fits(c, gpus[i], r.gpu)) {
            a.gpus.push_back(
                detail::replica_grant(gpu_index{static_cast<gpu_index::rep>(first + i)}));
            return a;
          }
        }
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  /// The node and GPUs this policy picks for one task of `r`, or `nullopt` when no node fits it.
  [[nodiscard]] std::optional<task_allocation> pack(const schedule_context& ctx,
                                                    const task_request& r) const noexcept {
    const cluster& c = ctx.state();
    std::optional<task_allocation> a;
    detail::for_each_candidate_node(c, r, [&](node_index n) {
      a = fit(ctx, n, r);
      return !a;  // stop at the first node that fits
    });
    return a;
  }

  friend constexpr bool operator==(first_fit_packing, first_fit_packing) noexcept { return true; }
};

static_assert(packing_policy<first_fit_packing>);

GPUSCHED_END_NAMESPACE
