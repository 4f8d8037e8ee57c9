// SPDX-License-Identifier: Apache-2.0
/// @file
/// `placement_memory`: where each job last ran, so that a placement policy can send a job that
/// lost its resources (a node failure, a preemption) back to the same topology domain, where
/// its data, caches and network neighbours are. The simulator keeps one up to date
/// (`simulator::set_placement_memory`); `topology_aware_placement::prefer_previous` reads it.
/// No global state: share one object between the two through a `std::shared_ptr`.
#pragma once

#include <span>
#include <unordered_map>
#include <vector>

#include "gpusched/cluster/allocation.hpp"  // node_index
#include "gpusched/config.hpp"
#include "gpusched/core/ids.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Last placement (its nodes, one entry per task) of each job. O(1) expected per call.
class placement_memory {
 public:
  /// Records `nodes` as `j`'s placement (replacing any earlier one).
  void remember(job_id j, std::span<const node_index> nodes) {
    auto& v = nodes_[j];
    v.assign(nodes.begin(), nodes.end());
  }
  /// Forgets `j` (a finished job). Nothing happens for an unknown job.
  void forget(job_id j) { nodes_.erase(j); }
  /// The nodes of `j`'s last placement; empty when it never ran or was forgotten.
  [[nodiscard]] std::span<const node_index> nodes(job_id j) const {
    const auto it = nodes_.find(j);
    return it == nodes_.end() ? std::span<const node_index>{}
                              : std::span<const node_index>(it->second);
  }
  [[nodiscard]] std::size_t size() const noexcept { return nodes_.size(); }

 private:
  std::unordered_map<job_id, std::vector<node_index>> nodes_;
};

GPUSCHED_END_NAMESPACE
