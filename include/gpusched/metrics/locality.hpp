// SPDX-License-Identifier: Apache-2.0
/// @file
/// Placement locality of multi-GPU gangs: how many placements stayed inside one node (on
/// NVLink-connected nodes such as DGX/HGX servers, one NVLink domain), inside one level-`l`
/// fabric domain (level 1: one leaf switch, or an NVL72 rack on a `fabric::nvl72_racks`
/// fabric), or spread further. A `locality_tally` counts placements as a simulation starts
/// them (e.g. from a simulator observer, `record` on each job whose `start` is the current
/// time); `locality_of` classifies one placement.
///
/// Definitions: a placement is *multi-GPU* when its grants add up to more than 1,000 GPU-milli
/// (more than one whole GPU). Its *node span* is the number of distinct nodes among its tasks;
/// its *level-l span* the number of distinct level-`l` domains (`fabric::domain`). Only
/// multi-GPU placements are counted: a single GPU is trivially local.
#pragma once

#include <algorithm>  // std::sort, std::unique
#include <cstdint>
#include <span>
#include <vector>

#include "gpusched/cluster/allocation.hpp"
#include "gpusched/config.hpp"
#include "gpusched/topology/fabric.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Where one placement landed.
struct placement_locality {
  std::int64_t milli_gpus = 0;  ///< GPU-milli granted over all tasks
  int nodes = 0;                ///< distinct nodes
  int domains = 0;              ///< distinct level-`level` fabric domains (0 without a fabric)
};

/// Classifies a placement: GPU-milli, distinct nodes and distinct fabric domains at `level`
/// (1..`f->level_count()`; ignored and reported as 0 when `f` is null or has no such level).
/// O(tasks log tasks).
[[nodiscard]] inline placement_locality locality_of(std::span<const task_allocation> tasks,
                                                    const fabric* f = nullptr, int level = 1) {
  placement_locality p;
  std::vector<std::uint32_t> nodes;
  nodes.reserve(tasks.size());
  for (const auto& t : tasks) {
    for (const auto& g : t.gpus) p.milli_gpus += g.milli.value();
    nodes.push_back(t.node.value());
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  p.nodes = static_cast<int>(nodes.size());
  if (f != nullptr && level >= 1 && level <= f->level_count()) {
    for (auto& n : nodes) n = f->domain(node_index{n}, level);
    std::sort(nodes.begin(), nodes.end());
    p.domains = static_cast<int>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
  }
  return p;
}

/// @brief Counts of multi-GPU placements by locality. `record` is O(tasks log tasks).
struct locality_tally {
  std::uint64_t gangs = 0;           ///< multi-GPU placements seen
  std::uint64_t one_node = 0;        ///< ... on a single node (one NVLink domain)
  std::uint64_t one_domain = 0;      ///< ... inside one fabric domain at the tallied level
  std::uint64_t node_sized = 0;      ///< ... that could have fit one node (GPUs <= node size)
  std::uint64_t node_sized_one = 0;  ///< ... of those, placed on a single node

  /// Counts `tasks` if multi-GPU. `gpus_per_node`: the largest node's whole GPUs (for the
  /// node-sized figures); `f`/`level` as in `locality_of`.
  void record(std::span<const task_allocation> tasks, int gpus_per_node, const fabric* f = nullptr,
              int level = 1) {
    const auto p = locality_of(tasks, f, level);
    if (p.milli_gpus <= 1000) return;
    ++gangs;
    one_node += p.nodes == 1 ? 1 : 0;
    one_domain += p.domains == 1 ? 1 : 0;
    if (p.milli_gpus <= std::int64_t{1000} * gpus_per_node) {
      ++node_sized;
      node_sized_one += p.nodes == 1 ? 1 : 0;
    }
  }
  /// Share of multi-GPU placements on one node (1 when there were none).
  [[nodiscard]] double one_node_fraction() const noexcept { return ratio(one_node, gangs); }
  /// Share of multi-GPU placements inside one fabric domain (1 when there were none).
  [[nodiscard]] double one_domain_fraction() const noexcept { return ratio(one_domain, gangs); }
  /// Share of node-sized multi-GPU placements on one node (1 when there were none).
  [[nodiscard]] double node_sized_one_node_fraction() const noexcept {
    return ratio(node_sized_one, node_sized);
  }

 private:
  static double ratio(std::uint64_t a, std::uint64_t b) noexcept {
    return b == 0 ? 1.0 : static_cast<double>(a) / static_cast<double>(b);
  }
};

GPUSCHED_END_NAMESPACE
