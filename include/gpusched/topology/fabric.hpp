// SPDX-License-Identifier: Apache-2.0
/// @file
/// The scale-out network as a tree of domains over the cluster's nodes, and the binding of
/// nodes to node types.
///
/// `fabric`: level 0 is the node itself; levels 1..L are switch domains, lowest (fastest)
/// first, e.g. {leaf, spine, core} for a three-tier fat tree, {scalable unit, spine} for a
/// rail-optimised fabric, {nvl72, leaf, spine} for GB200 racks; above level L an implicit root
/// joins everything. A domain at level l is a set of level l-1 domains. Node `i` of the fabric
/// is the cluster's node position `node_index{i}` (the fabric is built for one cluster).
/// Queries are O(1) (`domain`) or O(L) (`common_level`); domain members are CSR lists.
///
/// Rail-optimised fabrics (hardware-facts 2.6): "Rail N connects GPUs in position N in all the
/// servers across leaf switch N"; the level-1 domain is the group of nodes whose rails share
/// leaf switches (a scalable unit), and same-rail traffic inside it takes one switch hop.
///
/// `topology_model`: node types (`node_distances`) plus the fabric. A node's
/// `node_spec::topology` handle is `1 + ` the index of its node type (0: no intra-node model).
#pragma once

#include <algorithm>  // std::max
#include <cstdint>
#include <memory>  // std::shared_ptr
#include <span>
#include <string>
#include <utility>  // std::move
#include <vector>

#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/ids.hpp"
#include "gpusched/topology/distances.hpp"
#include "gpusched/topology/node_topology.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief One level of a fabric tree.
struct fabric_level {
  std::string name{};             ///< e.g. "leaf", "spine", "nvl72"
  int fanout = 1;                 ///< children per domain (nodes, for level 1); builders only
  double uplink_gbps = 0.0;       ///< a domain's bandwidth to its parent (0: unknown)
  double oversubscription = 1.0;  ///< down:up bandwidth ratio at this level's switches
  bool nvlink_domain = false;     ///< GPUs in one domain share an NVLink fabric (NVL72)
};

/// @brief A tree of network domains over `node_count()` nodes.
class fabric {
 public:
  fabric() = default;

  /// Builds a tree from explicit memberships: `domain_of[l][i]` is the level-(l+1) domain of
  /// node `i` (dense ids from 0). Every level must nest in the next.
  /// @throws invalid_value_error for a wrong row length, or two nodes that share a domain at
  /// one level but not at the next (not a tree).
  fabric(std::vector<fabric_level> levels, const std::vector<std::vector<std::uint32_t>>& domain_of,
         bool rail_optimized = false, int rails = 0)
      : levels_(std::move(levels)), rail_(rail_optimized), rails_(rails) {
    if (domain_of.size() != levels_.size()) {
      throw invalid_value_error(error_id::inconsistent, "fabric", "domain_of",
                                std::to_string(domain_of.size()),
                                "needs one row per level (" + std::to_string(levels_.size()) + ")");
    }
    nodes_ = domain_of.empty() ? 0 : domain_of.front().size();
    node_domain_.resize(levels_.size());
    counts_.assign(levels_.size(), 0);
    for (std::size_t l = 0; l < levels_.size(); ++l) {
      if (domain_of[l].size() != nodes_) {
        throw invalid_value_error(error_id::inconsistent, "fabric level '" + levels_[l].name + "'",
                                  "domain_of", std::to_string(domain_of[l].size()),
                                  "expected one entry per node (" + std::to_string(nodes_) + ")");
      }
      node_domain_[l] = domain_of[l];
      for (auto d : domain_of[l])
        counts_[l] = std::max<std::size_t>(counts_[l], d + std::size_t{1});
    }
    // nesting: the parent of each domain is unique
    parent_.resize(levels_.size());
    for (std::size_t l = 0; l + 1 < levels_.size(); ++l) {
      parent_[l].assign(counts_[l], npos);
      for (std::size_t i = 0; i < nodes_; ++i) {
        auto& p = parent_[l][node_domain_[l][i]];
        const auto up = node_domain_[l + 1][i];
        if (p != npos && p != up) {
          throw invalid_value_error(
              error_id::inconsistent, "fabric level '" + levels_[l].name + "'", "domain",
              std::to_string(node_domain_[l][i]),
              "belongs to two " + levels_[l + 1].name + " domains (not a tree)");
        }
        p = up;
      }
    }
    // CSR member lists: children of each domain, nodes for level 1
    children_begin_.resize(levels_.size());
    children_.resize(levels_.size());
    for (std::size_t l = 0; l < levels_.size(); ++l) {
      auto& begin = children_begin_[l];
      begin.assign(counts_[l] + 1, 0);
      const std::size_t members = l == 0 ? nodes_ : counts_[l - 1];
      const auto owner = [&](std::size_t m) {
        return l == 0 ? node_domain_[0][m] : parent_[l - 1][m];
      };
      for (std::size_t m = 0; m < members; ++m) {
        if (owner(m) != npos) ++begin[owner(m) + 1];
      }
      for (std::size_t d = 0; d < counts_[l]; ++d) begin[d + 1] += begin[d];
      children_[l].assign(begin.back(), 0);
      std::vector<std::uint32_t> fill(begin.begin(), begin.end() - 1);
      for (std::size_t m = 0; m < members; ++m) {
        if (owner(m) != npos) children_[l][fill[owner(m)]++] = static_cast<std::uint32_t>(m);
      }
    }
  }

  /// "No domain": the parent of a top-level domain.
  static constexpr std::uint32_t npos = ~std::uint32_t{0};

  /// A tree with the given levels over `nodes` nodes numbered in order: level 1 groups
  /// `levels[0].fanout` consecutive nodes, level 2 groups `levels[1].fanout` level-1 domains,
  /// and so on. @throws invalid_value_error for a fanout below 1.
  static fabric tree(std::size_t nodes, std::vector<fabric_level> levels,
                     bool rail_optimized = false, int rails = 0) {
    std::vector<std::vector<std::uint32_t>> dom(levels.size(), std::vector<std::uint32_t>(nodes));
    std::size_t span = 1;
    for (std::size_t l = 0; l < levels.size(); ++l) {
      if (levels[l].fanout < 1) {
        throw invalid_value_error(error_id::invalid_value, "fabric level '" + levels[l].name + "'",
                                  "fanout", std::to_string(levels[l].fanout), "must be positive");
      }
      span *= static_cast<std::size_t>(levels[l].fanout);
      for (std::size_t i = 0; i < nodes; ++i) dom[l][i] = static_cast<std::uint32_t>(i / span);
    }
    return {std::move(levels), dom, rail_optimized, rails};
  }
  /// Two-tier leaf/spine fat tree: `nodes_per_leaf` nodes per leaf, all leaves under one spine
  /// layer. Three-tier: give `leaves_per_pod` > 0 for a pod (spine) level under a core.
  static fabric fat_tree(std::size_t nodes, int nodes_per_leaf, int leaves_per_pod = 0,
                         double oversubscription = 1.0) {
    std::vector<fabric_level> lv{{"leaf", nodes_per_leaf, 0.0, oversubscription, false}};
    if (leaves_per_pod > 0) lv.push_back({"spine", leaves_per_pod, 0.0, oversubscription, false});
    return tree(nodes, std::move(lv));
  }
  /// Rail-optimised fabric: scalable units of `nodes_per_su` nodes whose GPU i all reach rail
  /// leaf i (`rails` rails), SUs joined by a spine layer (`sus_per_spine_group` per group; 0:
  /// one group).
  static fabric rail_optimized(std::size_t nodes, int nodes_per_su, int rails,
                               int sus_per_spine_group = 0) {
    std::vector<fabric_level> lv{{"rail-group", nodes_per_su, 0.0, 1.0, false}};
    if (sus_per_spine_group > 0) lv.push_back({"spine", sus_per_spine_group, 0.0, 1.0, false});
    return tree(nodes, std::move(lv), true, rails);
  }
  /// GB200 NVL72 racks: 18 compute trays (nodes of 4 GPUs) per NVLink domain, `racks_per_leaf`
  /// racks per leaf, leaves under a spine.
  static fabric nvl72_racks(std::size_t racks, int racks_per_leaf) {
    return tree(racks * 18,
                {{"nvl72", 18, 0.0, 1.0, true}, {"leaf", racks_per_leaf, 0.0, 1.0, false}});
  }

  /// Number of nodes.
  [[nodiscard]] std::size_t node_count() const noexcept { return nodes_; }
  /// Number of switch levels L (level 0, the node, is not counted).
  [[nodiscard]] int level_count() const noexcept { return static_cast<int>(levels_.size()); }
  /// Level `l` in 1..L.
  [[nodiscard]] const fabric_level& level(int l) const noexcept {
    return levels_[static_cast<std::size_t>(l - 1)];
  }
  /// Number of domains at level `l` (nodes for 0).
  [[nodiscard]] std::size_t domain_count(int l) const noexcept {
    return l == 0 ? nodes_ : counts_[static_cast<std::size_t>(l - 1)];
  }
  /// The level-`l` domain of node `n` (l = 0: the node's own position). O(1).
  [[nodiscard]] std::uint32_t domain(node_index n, int l) const noexcept {
    return l == 0 ? n.value() : node_domain_[static_cast<std::size_t>(l - 1)][n.value()];
  }
  /// The members of domain `d` at level `l` >= 1: level l-1 domains (node positions for l=1).
  [[nodiscard]] std::span<const std::uint32_t> children(int l, std::uint32_t d) const noexcept {
    const auto& b = children_begin_[static_cast<std::size_t>(l - 1)];
    return {children_[static_cast<std::size_t>(l - 1)].data() + b[d], b[d + 1] - b[d]};
  }
  /// The level-(l+1) domain that holds domain `d` of level `l` (l = 0: node position), or
  /// `npos` for the top level. O(1).
  [[nodiscard]] std::uint32_t parent(int l, std::uint32_t d) const noexcept {
    if (l >= level_count()) return npos;
    if (l == 0) return node_domain_[0][d];
    return parent_[static_cast<std::size_t>(l - 1)][d];
  }
  /// The lowest level at which `a` and `b` share a domain: 0 same node, 1..L, or L+1 (only
  /// through the root). O(L).
  [[nodiscard]] int common_level(node_index a, node_index b) const noexcept {
    if (a == b) return 0;
    for (int l = 1; l <= level_count(); ++l) {
      if (domain(a, l) == domain(b, l)) return l;
    }
    return level_count() + 1;
  }
  /// The fabric is rail-optimised: GPU position N of every node reaches rail (leaf switch) N.
  [[nodiscard]] bool rail_optimized() const noexcept { return rail_; }
  /// Number of rails (0 when not rail-optimised).
  [[nodiscard]] int rails() const noexcept { return rails_; }
  /// The level name; "node" for 0 and "fabric" for L+1.
  [[nodiscard]] std::string level_name(int l) const {
    if (l <= 0) return "node";
    if (l > level_count()) return "fabric";
    return level(l).name;
  }

 private:
  std::vector<fabric_level> levels_;
  std::size_t nodes_ = 0;
  std::vector<std::vector<std::uint32_t>> node_domain_;  // [level-1][node]
  std::vector<std::size_t> counts_;                      // [level-1]
  std::vector<std::vector<std::uint32_t>> parent_;       // [level-1][domain] -> next level
  std::vector<std::vector<std::uint32_t>> children_begin_, children_;
  bool rail_ = false;
  int rails_ = 0;
};

/// @brief Node types and the fabric of one cluster. Immutable once shared with policies.
class topology_model {
 public:
  topology_model() = default;
  /// A model of the fabric `f`, with no node type yet.
  explicit topology_model(fabric f) : fabric_(std::move(f)) {}

  /// Adds a node type; returns its handle for `node_spec::topology` (1, 2, ...).
  /// @throws invalid_value_error if `t` is invalid (see `node_distances`).
  std::uint32_t add_node_type(const node_topology& t) {
    types_.push_back(std::make_shared<const node_distances>(t));
    return static_cast<std::uint32_t>(types_.size());
  }
  /// The node type of a handle, or nullptr for 0 or an unknown handle. O(1).
  [[nodiscard]] const node_distances* node_type(std::uint32_t handle) const noexcept {
    return handle == 0 || handle > types_.size() ? nullptr : types_[handle - 1].get();
  }
  /// The fabric.
  [[nodiscard]] const fabric& network() const noexcept { return fabric_; }
  /// Replaces the fabric (before the model is shared with policies).
  void set_network(fabric f) { fabric_ = std::move(f); }

  /// Checks the binding to `c`: the fabric covers exactly `c`'s nodes (or has no levels), every
  /// non-zero handle names a node type with the node's GPU count.
  /// @throws invalid_value_error naming the node and field.
  void check(const cluster& c) const {
    if (fabric_.level_count() > 0 && fabric_.node_count() != c.node_count()) {
      throw invalid_value_error(error_id::inconsistent, "topology model", "fabric nodes",
                                std::to_string(fabric_.node_count()),
                                "the cluster has " + std::to_string(c.node_count()) + " nodes");
    }
    for (node_index n : c.nodes()) {
      const auto h = c.topology(n);
      if (h == 0) continue;
      const std::string where = "node " + std::to_string(c.id(n).value()) + " '" + c.name(n) + "'";
      const auto* t = node_type(h);
      if (t == nullptr) {
        throw invalid_value_error(
            error_id::unknown_id, where, "topology", std::to_string(h),
            "no such node type (" + std::to_string(types_.size()) + " known)");
      }
      if (t->gpu_count() != static_cast<int>(c.gpus(n).size())) {
        throw invalid_value_error(error_id::inconsistent, where, "topology", t->name(),
                                  "node type has " + std::to_string(t->gpu_count()) +
                                      " GPUs, the node " + std::to_string(c.gpus(n).size()));
      }
    }
  }

 private:
  std::vector<std::shared_ptr<const node_distances>> types_;
  fabric fabric_;
};

GPUSCHED_END_NAMESPACE
