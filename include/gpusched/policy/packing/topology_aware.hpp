// SPDX-License-Identifier: Apache-2.0
/// @file
/// `topology_packing`: a packing policy that keeps network domains whole and picks
/// well-connected GPUs inside the node.
///
/// - `fit(ctx, n, r)`: the first-fit answer on node `n`, with whole-GPU grants re-chosen by
///   `select_gpus` when `n` has a node type (best ring bottleneck, total bandwidth, NUMA).
/// - `pack(ctx, r)`: among the nodes where `fit` succeeds, the one with the lowest
///   `fabric_occupancy::break_cost` (the GPUs of still-empty nodes, leaves, NVLink domains the
///   task would break open), then the fewest free whole GPUs left (best fit), then the lowest
///   position. So a 1-GPU task goes to an already used node inside an already used leaf before
///   it opens an empty one.
/// Complexity: `fit` O(GPUs + C(free, k)); `pack` O(nodes x L) for the occupancy snapshot plus
/// O(candidates x (L + fit)). Nodes are visited through the cluster's free-GPU index, so a
/// request no node can take costs O(log nodes).
#pragma once

#include <bit>  // std::countr_zero
#include <cstdint>
#include <memory>  // std::shared_ptr
#include <optional>
#include <string_view>

#include "gpusched/config.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/detail/fit.hpp"
#include "gpusched/policy/packing/first_fit.hpp"
#include "gpusched/topology/fabric.hpp"
#include "gpusched/topology/occupancy.hpp"
#include "gpusched/topology/select.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Domain-preserving, NVLink-aware packing (see the file comment).
class topology_packing {
 public:
  /// Opts into the packing family.
  using policy_category = packing_tag;

  /// Packs by the GPU topology of `model`. @pre `model` is not null.
  explicit topology_packing(std::shared_ptr<const topology_model> model)
      : model_(std::move(model)) {
    GPUSCHED_EXPECTS(model_ != nullptr);
  }
  /// The policy's name: `topology`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "topology"; }

  /// The GPUs this policy picks for one task of `r` on node `n`, or `nullopt` when it does not
  /// fit there.
  [[nodiscard]] std::optional<task_allocation> fit(const schedule_context& ctx, node_index n,
                                                   const task_request& r) const {
    auto a = first_fit_packing{}.fit(ctx, n, r);
    if (!a || r.gpu.kind != gpu_demand_kind::whole) return a;
    const cluster& c = ctx.state();
    const node_distances* type = model_->node_type(c.topology(n));
    const auto gpus = c.gpus(n);
    if (type == nullptr || type->gpu_count() != static_cast<int>(gpus.size())) return a;
    gpu_mask free = 0;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      if (gpus[i].whole_free()) free |= gpu_mask{1} << i;
    }
    const auto s = select_gpus(*type, free, r.gpu.count.value());
    if (!s.ok()) return a;
    const auto first = c.first_gpu(n).value();
    a->gpus.clear();
    for (gpu_mask x = s.gpus; x != 0; x &= x - 1) {
      a->gpus.push_back({gpu_index{static_cast<gpu_index::rep>(
                             first + static_cast<unsigned>(std::countr_zero(x)))},
                         whole_gpu_milli, 0, false});
    }
    return a;
  }

  /// The node and GPUs this policy picks for one task of `r`, or `nullopt` when no node fits it.
  [[nodiscard]] std::optional<task_allocation> pack(const schedule_context& ctx,
                                                    const task_request& r) const {
    const cluster& c = ctx.state();
    const fabric& f = model_->network();
    if (f.level_count() > 0 && f.node_count() != c.node_count())
      return first_fit_packing{}.pack(ctx, r);
    const fabric_occupancy occ(c, f);
    std::optional<task_allocation> best;
    std::int64_t best_cost = 0;
    int best_left = 0;
    const auto consider = [&](node_index n) {
      auto a = fit(ctx, n, r);
      if (!a) return;
      const std::int64_t cost = occ.break_cost(n);
      const int left = c.free_whole_gpus(n) - r.gpu.whole_gpus().value();
      if (!best || cost < best_cost || (cost == best_cost && left < best_left)) {
        best = std::move(a);
        best_cost = cost;
        best_left = left;
      }
    };
    detail::for_each_candidate_node(c, r, [&](node_index n) {
      consider(n);
      return true;
    });
    return best;
  }

  friend bool operator==(const topology_packing& a, const topology_packing& b) noexcept {
    return a.model_ == b.model_;
  }

 private:
  std::shared_ptr<const topology_model> model_;
};

static_assert(packing_policy<topology_packing>);

GPUSCHED_END_NAMESPACE
