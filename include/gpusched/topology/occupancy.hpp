// SPDX-License-Identifier: Apache-2.0
/// @file
/// How a cluster's allocations sit on its network fabric:
/// - `fabric_occupancy`: free and total whole GPUs per fabric domain, the fragmentation they
///   imply and the cost of breaking an empty domain open (`topology_packing` minimises it);
/// - `domains_spanned`: how many domains of a level a placement touches.
#pragma once

#include <algorithm>  // std::sort, std::unique
#include <cstdint>
#include <span>
#include <vector>

#include "gpusched/cluster/allocation.hpp"
#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/topology/fabric.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// Distinct level-`l` domains among the nodes of `placement`. O(tasks log tasks).
[[nodiscard]] inline int domains_spanned(const fabric& f, std::span<const task_allocation> p,
                                         int l) {
  std::vector<std::uint32_t> d;
  for (const auto& a : p) d.push_back(f.domain(a.node, l));
  std::sort(d.begin(), d.end());
  return static_cast<int>(std::unique(d.begin(), d.end()) - d.begin());
}

/// @brief Free and total whole GPUs per fabric domain, and the fragmentation they imply.
/// A snapshot: O(nodes x L) to build; queries O(1) or O(L).
class fabric_occupancy {
 public:
  /// A snapshot of `c`'s free whole GPUs per domain of `f` (MIG nodes count 0). O(nodes x L).
  fabric_occupancy(const cluster& c, const fabric& f) : f_(&f) {
    const auto levels = static_cast<std::size_t>(f.level_count()) + 1;
    free_.resize(levels);
    total_.resize(levels);
    for (std::size_t l = 0; l < levels; ++l) {
      const auto count = l == 0 ? c.node_count() : f.domain_count(static_cast<int>(l));
      free_[l].assign(count, 0);
      total_[l].assign(count, 0);
    }
    for (node_index n : c.nodes()) {
      const auto fr = c.has_mig(n) ? 0 : c.free_whole_gpus(n);
      const auto to = c.has_mig(n) ? 0 : static_cast<int>(c.gpus(n).size());
      for (std::size_t l = 0; l < levels; ++l) {
        const auto d = f.domain(n, static_cast<int>(l));
        free_[l][d] += fr;
        total_[l][d] += to;
      }
    }
  }
  /// Free whole GPUs in domain `d` of level `l`. O(1).
  [[nodiscard]] int free_gpus(int l, std::uint32_t d) const noexcept {
    return free_[static_cast<std::size_t>(l)][d];
  }
  /// Whole GPUs in domain `d` of level `l`. O(1).
  [[nodiscard]] int total_gpus(int l, std::uint32_t d) const noexcept {
    return total_[static_cast<std::size_t>(l)][d];
  }
  /// A domain with GPUs, all of them free.
  [[nodiscard]] bool empty(int l, std::uint32_t d) const noexcept {
    return total_gpus(l, d) > 0 && free_gpus(l, d) == total_gpus(l, d);
  }
  /// Level-`l` fragmentation in [0, 1]: the share of free GPUs that sit in partly used domains
  /// (0: every free GPU is in a wholly empty domain; 0 too when nothing is free).
  [[nodiscard]] double fragmentation(int l) const noexcept {
    std::int64_t free = 0;
    std::int64_t in_empty = 0;
    for (std::uint32_t d = 0; d < free_[static_cast<std::size_t>(l)].size(); ++d) {
      free += free_gpus(l, d);
      in_empty += empty(l, d) ? free_gpus(l, d) : 0;
    }
    return free == 0 ? 0.0 : 1.0 - static_cast<double>(in_empty) / static_cast<double>(free);
  }
  /// The cost of taking GPUs on node `n`: the GPUs of every still-empty domain (node, leaf,
  /// NVLink domain, ...) that this would break open, summed over levels. 0 when all of `n`'s
  /// domains are already in use. Lower is better; a packing policy can minimise it. O(L).
  [[nodiscard]] std::int64_t break_cost(node_index n) const noexcept {
    std::int64_t cost = 0;
    for (int l = 0; l <= f_->level_count(); ++l) {
      const auto d = f_->domain(n, l);
      if (empty(l, d)) cost += total_gpus(l, d);
    }
    return cost;
  }

 private:
  const fabric* f_;
  std::vector<std::vector<int>> free_, total_;
};

GPUSCHED_END_NAMESPACE
