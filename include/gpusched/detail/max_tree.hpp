// SPDX-License-Identifier: Apache-2.0
/// @file
/// `max_tree`: a segment tree over node positions holding one integer key per node, answering
/// "the first position at or after `from` whose key is at least `k`" in O(log n). The cluster
/// keeps one per indexed resource so first-fit queries do not scan every node.
#pragma once

#include <algorithm>  // std::max
#include <cstddef>    // std::size_t
#include <cstdint>    // std::int64_t
#include <limits>
#include <vector>

#include "gpusched/config.hpp"

GPUSCHED_BEGIN_NAMESPACE
namespace detail {

class max_tree {
 public:
  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();

  max_tree() = default;
  /// Builds over `n` positions, every key `init`. O(n).
  max_tree(std::size_t n, std::int64_t init) : n_(n) {
    while (leaves_ < n) leaves_ *= 2;
    tree_.assign(2 * leaves_, std::numeric_limits<std::int64_t>::min());
    for (std::size_t i = 0; i < n; ++i) tree_[leaves_ + i] = init;
    for (std::size_t i = leaves_ - 1; i >= 1; --i)
      tree_[i] = std::max(tree_[2 * i], tree_[2 * i + 1]);
  }
  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  [[nodiscard]] std::int64_t get(std::size_t i) const noexcept { return tree_[leaves_ + i]; }
  /// The maximum key over all positions; O(1).
  [[nodiscard]] std::int64_t max() const noexcept {
    return n_ == 0 ? std::numeric_limits<std::int64_t>::min() : tree_[1];
  }
  /// Sets the key at `i`. O(log n).
  void set(std::size_t i, std::int64_t v) noexcept {
    GPUSCHED_EXPECTS(i < n_);
    std::size_t p = leaves_ + i;
    tree_[p] = v;
    for (p /= 2; p >= 1; p /= 2) {
      const auto m = std::max(tree_[2 * p], tree_[2 * p + 1]);
      if (tree_[p] == m) break;
      tree_[p] = m;
    }
  }
  /// First position `>= from` with key `>= k`, or `npos`. O(log n).
  [[nodiscard]] std::size_t find_first(std::size_t from, std::int64_t k) const noexcept {
    if (from >= n_) return npos;
    return descend(1, 0, leaves_, from, k);
  }

 private:
  [[nodiscard]] std::size_t descend(std::size_t node, std::size_t lo, std::size_t hi,
                                    std::size_t from, std::int64_t k) const noexcept {
    if (hi <= from || tree_[node] < k) return npos;
    if (hi - lo == 1) return lo;
    const std::size_t mid = lo + (hi - lo) / 2;
    const std::size_t left = descend(2 * node, lo, mid, from, k);
    if (left != npos) return left;
    return descend(2 * node + 1, mid, hi, from, k);
  }

  std::size_t n_ = 0;
  std::size_t leaves_ = 1;
  std::vector<std::int64_t> tree_ =
      std::vector<std::int64_t>(2, std::numeric_limits<std::int64_t>::min());
};

}  // namespace detail
GPUSCHED_END_NAMESPACE
