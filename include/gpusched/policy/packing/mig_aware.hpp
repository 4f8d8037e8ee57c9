// SPDX-License-Identifier: Apache-2.0
/// @file
/// `mig_aware_packing`: MIG requests go to the GPU and slot that lose the least option value
/// (`mig_option_value`), preferring fuller GPUs on ties so that empty GPUs stay empty; non-MIG
/// requests fall back to first-fit.
#pragma once

#include <optional>
#include <string_view>

#include "gpusched/cluster/allocation.hpp"
#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/packing/first_fit.hpp"
#include "gpusched/resource/mig_catalog.hpp"
#include "gpusched/resource/request.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief How good one MIG choice is: lower `loss` is better, then lower `free_after`
/// (fuller GPU), then lower GPU position.
struct mig_choice {
  /// The MIG instance the choice grants.
  gpu_grant grant;
  int loss = 0;        ///< option value lost by this placement
  int free_after = 0;  ///< free memory slices left on the GPU
  /// True when this choice is better than `o`: lower loss, then fewer free slices left, then the
  /// lower GPU.
  [[nodiscard]] bool better_than(const mig_choice& o) const noexcept {
    if (loss != o.loss) return loss < o.loss;
    if (free_after != o.free_after) return free_after < o.free_after;
    return grant.gpu < o.grant.gpu;
  }
};

/// @brief Fragmentation-aware MIG packing. Stateless and deterministic.
///
/// `fit` examines every MIG GPU of the node: O(GPUs x placements x profiles x placements).
/// `pack` examines every MIG node: O(MIG GPUs x the same).
struct mig_aware_packing {
  /// Opts into the packing family.
  using policy_category = packing_tag;
  /// The policy's name: `mig-aware`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "mig-aware"; }

  /// The best MIG choice on node `n` for demand `d`, ignoring CPU and memory.
  [[nodiscard]] static std::optional<mig_choice> best_on_node(const cluster& c, node_index n,
                                                              const gpu_demand& d) noexcept {
    std::optional<mig_choice> best;
    const auto first = c.first_gpu(n).value();
    const auto gpus = c.gpus(n);
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const gpu_state& s = gpus[i];
      if (!s.mig_enabled) continue;
      const mig_geometry& geo = c.catalog()[s.model].mig;
      const mig_profile* p = geo.find(d.mig_compute, d.mig_memory);
      if (p == nullptr) continue;
      const auto pl = mig_best_slot(geo, *p, {s.mig_used, s.mig_media_used});
      if (!pl) continue;
      const auto after = static_cast<mig_slot_mask>(s.mig_used | pl->slots());
      mig_choice ch;
      ch.grant = {gpu_index{static_cast<gpu_index::rep>(first + i)},
                  milli_gpu{0},
                  pl->slots(),
                  p->media_extension,
                  false,
                  p->compute_slices};
      ch.loss = mig_option_value(geo, s.mig_used) - mig_option_value(geo, after);
      ch.free_after = geo.memory_slices - std::popcount(static_cast<unsigned>(after));
      if (!best || ch.better_than(*best)) best = ch;
    }
    return best;
  }

  /// The GPUs this policy picks for one task of `r` on node `n`, or `nullopt` when it does not
  /// fit there.
  [[nodiscard]] std::optional<task_allocation> fit(const schedule_context& ctx, node_index n,
                                                   const task_request& r) const noexcept {
    if (r.gpu.kind != gpu_demand_kind::mig) return first_fit_packing{}.fit(ctx, n, r);
    const cluster& c = ctx.state();
    if (!detail::host_fits(c, n, r)) return std::nullopt;
    const auto ch = best_on_node(c, n, r.gpu);
    if (!ch) return std::nullopt;
    task_allocation a;
    a.node = n;
    a.cpu = r.cpu;
    a.memory = r.memory;
    a.gpus.push_back(ch->grant);
    return a;
  }

  /// The node and GPUs this policy picks for one task of `r`, or `nullopt` when no node fits it.
  [[nodiscard]] std::optional<task_allocation> pack(const schedule_context& ctx,
                                                    const task_request& r) const noexcept {
    if (r.gpu.kind != gpu_demand_kind::mig) return first_fit_packing{}.pack(ctx, r);
    const cluster& c = ctx.state();
    std::optional<mig_choice> best;
    node_index best_node{};
    for (node_index n : c.mig_nodes()) {
      if (!detail::host_fits(c, n, r)) continue;
      const auto ch = best_on_node(c, n, r.gpu);
      if (ch && (!best || ch->better_than(*best))) {
        best = ch;
        best_node = n;
      }
    }
    if (!best) return std::nullopt;
    task_allocation a;
    a.node = best_node;
    a.cpu = r.cpu;
    a.memory = r.memory;
    a.gpus.push_back(best->grant);
    return a;
  }

  friend constexpr bool operator==(mig_aware_packing, mig_aware_packing) noexcept { return true; }
};

static_assert(packing_policy<mig_aware_packing>);

GPUSCHED_END_NAMESPACE
