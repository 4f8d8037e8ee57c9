// SPDX-License-Identifier: Apache-2.0
/// @file
/// `node_distances`: everything a GPU-set search needs about one node type, precomputed once
/// from its `node_topology` and then read in O(1):
/// - Eigen matrices over GPU pairs: `bottleneck()` (widest-path bandwidth over the whole graph,
///   relays through NVSwitches, PCIe switches and other GPUs allowed, as NCCL's PATH_NVB),
///   `direct()` (the pair's own route: its NVLink bandwidth, or without NVLink the slowest link
///   of its PCIe-tree path), `hops()` (fewest links), `nvlinks()` (NV# count), and
///   `besteffort_score()` (go-gpuallocator's pair score: 100 x NVLinks + PCIe weight);
/// - for nodes of up to 16 GPUs, tables over all 2^n GPU masks: the best ring bottleneck
///   (`ring_mbps`: the largest b such that the GPUs of the mask can be ordered in a ring whose
///   every hop has direct bandwidth >= b) and the total pairwise direct bandwidth (`pair_mbps`).
///
/// Bandwidth in the tables is integer MB/s (GB/s x 1000, rounded) so that scores compare
/// exactly. Construction is O(V^3 + 2^n x n x T) for V vertices, n GPUs and T distinct pair
/// bandwidths (about 10 ms for 16 GPUs); share one instance per node type.
#pragma once

#include <Eigen/Core>
#include <algorithm>  // std::sort, std::unique, std::min, std::max
#include <bit>        // std::popcount, std::countr_zero
#include <cmath>      // std::llround
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/topology/node_topology.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// A set of GPUs of one node as a bit mask (bit i = local GPU i).
using gpu_mask = std::uint32_t;

/// The most GPUs a node type may have for the mask tables (and so for exact selection).
inline constexpr int max_topology_gpus = 16;

/// go-gpuallocator's PCIe pair weights (hardware-facts 3.1): SYS 10, NODE 20, PHB 30, PXB 40,
/// PIX 50; plus 100 per NVLink.
constexpr int besteffort_pcie_weight(p2p_level l) noexcept {
  switch (l) {
    case p2p_level::sys:
      return 10;
    case p2p_level::node:
      return 20;
    case p2p_level::phb:
      return 30;
    case p2p_level::pxb:
      return 40;
    case p2p_level::pix:
      return 50;
    default:
      return 0;
  }
}

/// @brief Precomputed distances of one node type. Immutable after construction.
class node_distances {
 public:
  /// Validates `t` and precomputes. @throws invalid_value_error when `t` is invalid
  /// (disconnected, no GPU) or has more than `max_topology_gpus` GPUs.
  explicit node_distances(const node_topology& t) : name_(t.name()) {
    t.validate();
    n_ = t.gpu_count();
    if (n_ > max_topology_gpus) {
      throw invalid_value_error(
          error_id::invalid_value, "topology '" + t.name() + "'", "gpus", std::to_string(n_),
          "at most " + std::to_string(max_topology_gpus) + " GPUs per node type");
    }
    compute_pairs(t);
    compute_tables();
  }

  /// The node type's name.
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// Number of GPUs.
  [[nodiscard]] int gpu_count() const noexcept { return n_; }
  /// All GPUs of the node as a mask.
  [[nodiscard]] gpu_mask all() const noexcept {
    return n_ == 32 ? ~gpu_mask{0} : ((gpu_mask{1} << n_) - 1u);
  }

  /// Widest-path bandwidth (GB/s per direction) between GPUs; 0 on the diagonal.
  [[nodiscard]] const Eigen::MatrixXd& bottleneck() const noexcept { return bottleneck_; }
  /// The pair's own route bandwidth (NVLink, else the PCIe path); 0 on the diagonal.
  [[nodiscard]] const Eigen::MatrixXd& direct() const noexcept { return direct_; }
  /// Fewest links between GPUs (any link kind); 0 on the diagonal.
  [[nodiscard]] const Eigen::MatrixXi& hops() const noexcept { return hops_; }
  /// NVLink count (NV#) between GPUs.
  [[nodiscard]] const Eigen::MatrixXi& nvlinks() const noexcept { return nvlinks_; }
  /// go-gpuallocator's pair score.
  [[nodiscard]] const Eigen::MatrixXi& besteffort_score() const noexcept { return be_score_; }
  /// The `topo -m` relation of two GPUs.
  [[nodiscard]] p2p_level level(int i, int j) const noexcept {
    return levels_[static_cast<std::size_t>(i * n_ + j)];
  }
  /// NUMA node (CPU socket ordinal) of GPU `i`, or -1.
  [[nodiscard]] int numa(int i) const noexcept { return numa_[static_cast<std::size_t>(i)]; }
  /// Closest NIC ordinal of GPU `i` (its rail on a rail-optimised fabric), or -1.
  [[nodiscard]] int nic(int i) const noexcept { return nic_[static_cast<std::size_t>(i)]; }

  /// Best ring bottleneck of the GPUs in `m`, MB/s: for two GPUs their direct bandwidth, for
  /// one GPU or none 0. O(1).
  [[nodiscard]] std::int64_t ring_mbps(gpu_mask m) const noexcept { return ring_[m]; }
  /// Sum of direct bandwidth over all pairs in `m`, MB/s. O(1).
  [[nodiscard]] std::int64_t pair_mbps(gpu_mask m) const noexcept { return pair_[m]; }
  /// NUMA nodes the GPUs of `m` span. O(popcount).
  [[nodiscard]] int numa_span(gpu_mask m) const noexcept {
    std::uint32_t s = 0;
    for (; m != 0; m &= m - 1) {
      const int i = std::countr_zero(m);
      const int k = numa_[static_cast<std::size_t>(i)];
      if (k >= 0) s |= 1u << (k & 31);
    }
    return std::popcount(s);
  }
  /// Direct bandwidth of a pair in MB/s (as the tables use it).
  [[nodiscard]] std::int64_t direct_mbps(int i, int j) const noexcept {
    return direct_mbps_[static_cast<std::size_t>(i * n_ + j)];
  }

 private:
  void compute_pairs(const node_topology& t) {
    const auto nv = static_cast<Eigen::Index>(t.vertices().size());
    const Eigen::Index n = n_;
    // widest path (max-min) over all vertices, Floyd-Warshall
    Eigen::MatrixXd w = Eigen::MatrixXd::Zero(nv, nv);
    // hop counts, Floyd-Warshall with "infinity"
    constexpr int inf = std::numeric_limits<int>::max() / 4;
    Eigen::MatrixXi h = Eigen::MatrixXi::Constant(nv, nv, inf);
    for (Eigen::Index v = 0; v < nv; ++v) h(v, v) = 0;
    std::vector<double> up(t.vertices().size(), 0.0);  // bandwidth of the parent link
    for (const auto& l : t.links()) {
      w(l.a, l.b) += l.bandwidth();
      w(l.b, l.a) += l.bandwidth();
      h(l.a, l.b) = h(l.b, l.a) = 1;
      if (t.parent(l.a) == l.b) up[static_cast<std::size_t>(l.a)] = l.bandwidth();
      if (t.parent(l.b) == l.a) up[static_cast<std::size_t>(l.b)] = l.bandwidth();
    }
    for (Eigen::Index k = 0; k < nv; ++k) {
      for (Eigen::Index i = 0; i < nv; ++i) {
        for (Eigen::Index j = 0; j < nv; ++j) {
          const double via = std::min(w(i, k), w(k, j));
          if (i != j && via > w(i, j)) w(i, j) = via;
          if (h(i, k) + h(k, j) < h(i, j)) h(i, j) = h(i, k) + h(k, j);
        }
      }
    }
    bottleneck_.resize(n, n);
    direct_.resize(n, n);
    hops_.resize(n, n);
    nvlinks_.resize(n, n);
    be_score_.resize(n, n);
    levels_.assign(static_cast<std::size_t>(n_ * n_), p2p_level::self);
    direct_mbps_.assign(static_cast<std::size_t>(n_ * n_), 0);
    for (int i = 0; i < n_; ++i) {
      numa_.push_back(t.numa_of_gpu(i));
      nic_.push_back(t.nic_of_gpu(i));
      for (int j = 0; j < n_; ++j) {
        const int a = t.gpu_vertex(i);
        const int b = t.gpu_vertex(j);
        bottleneck_(i, j) = i == j ? 0.0 : w(a, b);
        hops_(i, j) = i == j ? 0 : h(a, b);
        nvlinks_(i, j) = t.nvlinks(i, j);
        const auto lvl = t.level(i, j);
        levels_[static_cast<std::size_t>(i * n_ + j)] = lvl;
        double d = 0.0;
        if (i != j) {
          d = t.nvlink_bandwidth(i, j);
          if (d == 0.0) d = tree_path_bandwidth(t, up, a, b);
        }
        direct_(i, j) = d;
        direct_mbps_[static_cast<std::size_t>(i * n_ + j)] = std::llround(d * 1000.0);
        be_score_(i, j) =
            i == j ? 0 : 100 * nvlinks_(i, j) + besteffort_pcie_weight(t.pcie_level(i, j));
      }
    }
  }

  static double tree_path_bandwidth(const node_topology& t, const std::vector<double>& up, int a,
                                    int b) {
    // climb both to their common ancestor, taking the slowest parent link
    std::vector<int> pa;
    for (int x = a; x >= 0; x = t.parent(x)) pa.push_back(x);
    double bw = std::numeric_limits<double>::infinity();
    int x = b;
    while (std::find(pa.begin(), pa.end(), x) == pa.end()) {
      bw = std::min(bw, up[static_cast<std::size_t>(x)]);
      x = t.parent(x);
    }
    for (int y = a; y != x; y = t.parent(y)) bw = std::min(bw, up[static_cast<std::size_t>(y)]);
    return bw == std::numeric_limits<double>::infinity() ? 0.0 : bw;
  }

  void compute_tables() {
    const std::size_t size = std::size_t{1} << n_;
    ring_.assign(size, 0);
    pair_.assign(size, 0);
    for (std::size_t m = 1; m < size; ++m) {
      const auto mm = static_cast<gpu_mask>(m);
      const int lo = std::countr_zero(mm);
      const gpu_mask rest = mm & (mm - 1);
      std::int64_t s = pair_[rest];
      for (gpu_mask r = rest; r != 0; r &= r - 1) s += direct_mbps(lo, std::countr_zero(r));
      pair_[m] = s;
      if (std::popcount(mm) == 2) ring_[m] = direct_mbps(lo, std::countr_zero(rest));
    }
    // distinct thresholds, descending
    std::vector<std::int64_t> th;
    for (int i = 0; i < n_; ++i) {
      for (int j = i + 1; j < n_; ++j) th.push_back(direct_mbps(i, j));
    }
    std::sort(th.begin(), th.end());
    th.erase(std::unique(th.begin(), th.end()), th.end());
    std::vector<gpu_mask> path(size);  // path[m]: ends v of a path from lowest(m) covering m
    std::vector<gpu_mask> adj(static_cast<std::size_t>(n_));
    for (auto it = th.rbegin(); it != th.rend(); ++it) {
      const std::int64_t t = *it;
      if (t <= 0) continue;
      for (int i = 0; i < n_; ++i) {
        gpu_mask a = 0;
        for (int j = 0; j < n_; ++j) {
          if (i != j && direct_mbps(i, j) >= t) a |= gpu_mask{1} << j;
        }
        adj[static_cast<std::size_t>(i)] = a;
      }
      std::fill(path.begin(), path.end(), gpu_mask{0});
      for (int i = 0; i < n_; ++i) path[std::size_t{1} << i] = gpu_mask{1} << i;
      for (std::size_t m = 1; m < size; ++m) {
        const gpu_mask ends = path[m];
        if (ends == 0) continue;
        const auto mm = static_cast<gpu_mask>(m);
        const int lo = std::countr_zero(mm);
        const gpu_mask above = ~((gpu_mask{2} << lo) - 1u);  // vertices > lowest
        bool cycle = false;
        for (gpu_mask e = ends; e != 0; e &= e - 1) {
          const int v = std::countr_zero(e);
          const gpu_mask next = adj[static_cast<std::size_t>(v)] & ~mm & above & all();
          for (gpu_mask x = next; x != 0; x &= x - 1) {
            const int u = std::countr_zero(x);
            path[m | (std::size_t{1} << u)] |= gpu_mask{1} << u;
          }
          if ((adj[static_cast<std::size_t>(v)] >> lo) & 1u) cycle = true;
        }
        if (cycle && std::popcount(mm) >= 3 && ring_[m] == 0) ring_[m] = t;
      }
    }
  }

  std::string name_;
  int n_ = 0;
  Eigen::MatrixXd bottleneck_, direct_;
  Eigen::MatrixXi hops_, nvlinks_, be_score_;
  std::vector<p2p_level> levels_;
  std::vector<std::int64_t> direct_mbps_;
  std::vector<int> numa_, nic_;
  std::vector<std::int64_t> ring_, pair_;
};

GPUSCHED_END_NAMESPACE
