// SPDX-License-Identifier: Apache-2.0
/// @file
/// Tenants for fair share: a forest of tenants (org -> team -> user) with a weight at every
/// level (Slurm `Shares`, Kueue `fairSharing.weight`, Volcano HDRF weights) and an optional
/// association priority (Slurm's assoc factor). `tenant_tree` validates the forest once and then
/// answers parent, children, depth and dense-position queries in O(1).
#pragma once

#include <algorithm>  // std::max
#include <cmath>      // std::isfinite
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>  // std::move
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/ids.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief One tenant as given to `tenant_tree`: `parent` invalid means a top-level tenant.
struct tenant_spec {
  /// The tenant's id; unique in its tree, must be valid.
  tenant_id id{};
  /// The tenant's name (in decisions and errors).
  std::string name{};
  /// The parent tenant, or invalid for a top-level tenant.
  tenant_id parent = tenant_id::invalid();
  double weight = 1.0;        ///< share among its siblings; must be finite and > 0
  std::int32_t priority = 0;  ///< association priority (Slurm assoc factor); >= 0
};

/// @brief A validated forest of tenants. Positions are dense (`0..size()-1`) in the order given;
/// a virtual root (position `npos`) is the parent of every top-level tenant.
///
/// Construction @throws invalid_value_error naming the tenant (`tenant ID 'NAME'`) and the
/// field: invalid or duplicate id (`id`), weight zero, negative or not finite (`weight`),
/// negative priority (`priority`), a parent that is not in the tree (`parent`, orphan), a
/// tenant that is its own ancestor (`parent`, cycle). Complexity O(n).
class tenant_tree {
 public:
  /// The position of the virtual root (the parent of every top-level tenant).
  static constexpr std::uint32_t npos = 0xFFFFFFFFu;

  tenant_tree() = default;
  /// Validates `tenants` (see the class) and builds the tree. O(n).
  explicit tenant_tree(std::vector<tenant_spec> tenants) : specs_(std::move(tenants)) {
    const auto where = [](const tenant_spec& t) {
      return "tenant " + (t.id.valid() ? std::to_string(t.id.value()) : std::string("<invalid>")) +
             (t.name.empty() ? "" : " '" + t.name + "'");
    };
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      const auto& t = specs_[i];
      if (!t.id.valid()) {
        throw invalid_value_error(error_id::invalid_value, where(t), "id", "invalid",
                                  "a tenant needs an id");
      }
      if (!position_.emplace(t.id, static_cast<std::uint32_t>(i)).second) {
        throw invalid_value_error(error_id::duplicate_id, where(t), "id",
                                  std::to_string(t.id.value()), "duplicate tenant id");
      }
      if (!std::isfinite(t.weight) || t.weight <= 0.0) {
        throw invalid_value_error(error_id::invalid_value, where(t), "weight",
                                  std::to_string(t.weight), "must be finite and greater than 0");
      }
      if (t.priority < 0) {
        throw invalid_value_error(error_id::invalid_value, where(t), "priority",
                                  std::to_string(t.priority), "must not be negative");
      }
    }
    parent_.assign(specs_.size(), npos);
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      const auto& t = specs_[i];
      if (!t.parent.valid()) continue;
      const auto it = position_.find(t.parent);
      if (it == position_.end()) {
        throw invalid_value_error(error_id::unknown_id, where(t), "parent",
                                  std::to_string(t.parent.value()),
                                  "no such tenant (orphan: its parent is not in the tree)");
      }
      parent_[i] = it->second;
    }
    // Cycle check: walk up from each tenant at most n steps, with memo of known-good depth.
    depth_.assign(specs_.size(), npos);
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      std::uint32_t p = static_cast<std::uint32_t>(i);
      std::size_t steps = 0;
      while (p != npos && depth_[p] == npos) {
        p = parent_[p];
        if (++steps > specs_.size()) {
          throw invalid_value_error(error_id::inconsistent, where(specs_[i]), "parent",
                                    std::to_string(specs_[i].parent.value()),
                                    "the tenant is its own ancestor (cycle)");
        }
      }
      // fill depths along the path
      std::uint32_t base = p == npos ? 0 : depth_[p] + 1;
      std::vector<std::uint32_t> path;
      for (std::uint32_t q = static_cast<std::uint32_t>(i); q != p; q = parent_[q]) {
        path.push_back(q);
      }
      for (auto it = path.rbegin(); it != path.rend(); ++it) depth_[*it] = base++;
    }
    children_.assign(specs_.size() + 1, {});
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      const auto p = parent_[i];
      children_[p == npos ? specs_.size() : p].push_back(static_cast<std::uint32_t>(i));
    }
    for (const auto d : depth_) max_depth_ = std::max(max_depth_, d + 1);
  }

  /// Number of tenants.
  [[nodiscard]] std::size_t size() const noexcept { return specs_.size(); }
  /// True when the tree has no tenant.
  [[nodiscard]] bool empty() const noexcept { return specs_.empty(); }
  /// The dense position of `id`, or nothing. O(1) expected.
  [[nodiscard]] std::optional<std::uint32_t> find(tenant_id id) const {
    const auto it = position_.find(id);
    return it == position_.end() ? std::nullopt : std::optional{it->second};
  }
  /// True when `id` is a tenant of the tree. O(1) expected.
  [[nodiscard]] bool contains(tenant_id id) const { return position_.contains(id); }
  /// The tenant at position `pos`. @pre `pos < size()`.
  [[nodiscard]] const tenant_spec& operator[](std::uint32_t pos) const noexcept {
    return specs_[pos];
  }
  /// The parent's position, or `npos` for a top-level tenant.
  [[nodiscard]] std::uint32_t parent(std::uint32_t pos) const noexcept { return parent_[pos]; }
  /// 0 for top-level tenants.
  [[nodiscard]] std::uint32_t depth(std::uint32_t pos) const noexcept { return depth_[pos]; }
  /// Levels in the forest (0 when empty).
  [[nodiscard]] std::uint32_t height() const noexcept { return max_depth_; }
  /// Children of `pos`; `children(npos)` lists the top-level tenants.
  [[nodiscard]] std::span<const std::uint32_t> children(std::uint32_t pos) const noexcept {
    if (children_.empty()) return {};
    return children_[pos == npos ? specs_.size() : pos];
  }
  /// True when `pos` has no children.
  [[nodiscard]] bool is_leaf(std::uint32_t pos) const noexcept { return children(pos).empty(); }
  /// All tenants, in position order (the order given).
  [[nodiscard]] std::span<const tenant_spec> tenants() const noexcept { return specs_; }
  /// The weight normalised among siblings: `w / sum(w of siblings, itself included)` (Slurm's
  /// normalised shares at one level). O(siblings).
  [[nodiscard]] double normalized_weight(std::uint32_t pos) const noexcept {
    double sum = 0;
    for (const auto s : children(parent_[pos])) sum += specs_[s].weight;
    return specs_[pos].weight / sum;
  }
  /// The product of normalised weights from the top level down to `pos`: the tenant's share of
  /// the whole cluster when every tenant is busy. O(depth x siblings).
  [[nodiscard]] double global_share(std::uint32_t pos) const noexcept {
    double s = 1.0;
    for (std::uint32_t p = pos; p != npos; p = parent_[p]) s *= normalized_weight(p);
    return s;
  }

 private:
  std::vector<tenant_spec> specs_;
  std::unordered_map<tenant_id, std::uint32_t> position_;
  std::vector<std::uint32_t> parent_, depth_;
  std::vector<std::vector<std::uint32_t>> children_;
  std::uint32_t max_depth_ = 0;
};

GPUSCHED_END_NAMESPACE
