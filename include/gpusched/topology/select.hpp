// SPDX-License-Identifier: Apache-2.0
/// @file
/// Choosing k GPUs inside one node.
///
/// `select_gpus` is exact: it enumerates every k-subset of the free GPUs that contains the
/// required ones and keeps the best under this lexicographic objective (each key read from the
/// `node_distances` tables in O(1)):
///  1. the best ring bottleneck (`ring_mbps`, larger is better): an all-reduce ring over the set
///     runs at its slowest hop (NCCL, hardware-facts 3.5);
///  2. the total pairwise direct bandwidth (`pair_mbps`, larger is better): more links for
///     trees, all-to-all and a second ring;
///  3. the NUMA nodes spanned (fewer is better): CPU and host-memory locality;
///  4. the bandwidth left among the GPUs that stay free (larger is better): do not break up a
///     well-connected group a later job needs (the effect go-gpuallocator gets from partitions);
///  5. the smallest mask (lowest GPU indices), for determinism.
/// Cost: C(f - r, k - r) candidates for f free and r required GPUs; at most C(8,4) = 70 on an
/// 8-GPU node, C(16,8) = 12870 on 16. No allocation.
///
/// `besteffort_select` reproduces NVIDIA go-gpuallocator's `besteffort` policy decision for
/// decision (hardware-facts 3.1): pair score = 100 x NVLinks + PCIe weight, partitions of the
/// padded available list into groups of `size`, the first best partition wins, then its first
/// best group. Exponential; use it to compare, not in a hot path.
#pragma once

#include <bit>  // std::popcount, std::countr_zero
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/topology/distances.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief The objective value of a GPU set; compare with `better`.
struct gpu_set_score {
  std::int64_t ring_mbps = 0;      ///< best ring bottleneck
  std::int64_t pair_mbps = 0;      ///< total pairwise direct bandwidth
  int numa_nodes = 0;              ///< NUMA nodes spanned
  std::int64_t leftover_mbps = 0;  ///< pairwise bandwidth among the GPUs left free
  friend bool operator==(const gpu_set_score&, const gpu_set_score&) noexcept = default;
};

/// True when `a` is strictly better than `b` under keys 1-4 of the objective.
constexpr bool better(const gpu_set_score& a, const gpu_set_score& b) noexcept {
  if (a.ring_mbps != b.ring_mbps) return a.ring_mbps > b.ring_mbps;
  if (a.pair_mbps != b.pair_mbps) return a.pair_mbps > b.pair_mbps;
  if (a.numa_nodes != b.numa_nodes) return a.numa_nodes < b.numa_nodes;
  return a.leftover_mbps > b.leftover_mbps;
}

/// The score of taking `set` out of `free`. O(popcount).
[[nodiscard]] inline gpu_set_score score_gpu_set(const node_distances& d, gpu_mask set,
                                                 gpu_mask free) noexcept {
  return {d.ring_mbps(set), d.pair_mbps(set), d.numa_span(set), d.pair_mbps(free & ~set)};
}

/// Why a selection failed (or `ok`).
enum class selection_status : std::uint8_t {
  ok,
  bad_count,          ///< k < 1 or k larger than the node's GPU count
  unknown_gpu,        ///< a free or required bit names a GPU the node does not have
  required_busy,      ///< a required GPU is not free
  too_many_required,  ///< more required GPUs than k
  not_enough_free,    ///< fewer than k free GPUs
};

/// A sentence on the status (`not enough free GPUs`).
constexpr std::string_view to_string(selection_status s) noexcept {
  switch (s) {
    case selection_status::ok:
      return "ok";
    case selection_status::bad_count:
      return "k is out of range for the node";
    case selection_status::unknown_gpu:
      return "a GPU index is not on the node";
    case selection_status::required_busy:
      return "a required GPU is busy";
    case selection_status::too_many_required:
      return "more required GPUs than requested";
    case selection_status::not_enough_free:
      return "not enough free GPUs";
  }
  return "?";
}

/// @brief The chosen GPUs (when `status == ok`) and their score.
struct gpu_selection {
  /// Why the selection failed, or `ok`.
  selection_status status = selection_status::ok;
  /// The chosen GPUs, as a mask (when `ok()`).
  gpu_mask gpus = 0;
  /// Their score: ring bottleneck, pairwise bandwidth, NUMA nodes spanned, bandwidth left free.
  gpu_set_score score;
  /// True when GPUs were chosen.
  [[nodiscard]] bool ok() const noexcept { return status == selection_status::ok; }
};

namespace detail {
/// Checks the arguments common to both selectors.
constexpr selection_status check_selection(int n, gpu_mask free, int k, gpu_mask required) {
  const gpu_mask all = n >= 32 ? ~gpu_mask{0} : ((gpu_mask{1} << n) - 1u);
  if (((free | required) & ~all) != 0) return selection_status::unknown_gpu;
  if (k < 1 || k > n) return selection_status::bad_count;
  if (std::popcount(required) > k) return selection_status::too_many_required;
  if ((required & ~free) != 0) return selection_status::required_busy;
  if (std::popcount(free) < k) return selection_status::not_enough_free;
  return selection_status::ok;
}
}  // namespace detail

/// @brief The best `k` GPUs among `free` that include `required`, under the objective above.
/// Exact. O(C(f - r, k - r)) table reads; no allocation; never throws. Failures come back as a
/// status (see `selection_status`), checked in the order listed there.
[[nodiscard]] inline gpu_selection select_gpus(const node_distances& d, gpu_mask free, int k,
                                               gpu_mask required = 0) noexcept {
  gpu_selection out;
  out.status = detail::check_selection(d.gpu_count(), free, k, required);
  if (!out.ok()) return out;
  // positions of the optional GPUs
  int pos[32];
  int m = 0;
  for (gpu_mask o = free & ~required; o != 0; o &= o - 1) pos[m++] = std::countr_zero(o);
  const int r = k - std::popcount(required);
  bool have = false;
  const auto consider = [&](gpu_mask set) {
    const gpu_set_score s = score_gpu_set(d, set, free);
    if (!have || better(s, out.score) || (!better(out.score, s) && set < out.gpus)) {
      out.gpus = set;
      out.score = s;
      have = true;
    }
  };
  if (r == 0) {
    consider(required);
    return out;
  }
  // Gosper's hack over r-of-m combinations, mapped to GPU positions
  std::uint32_t c = (std::uint32_t{1} << r) - 1u;
  const std::uint32_t limit = std::uint32_t{1} << m;
  while (c < limit) {
    gpu_mask set = required;
    for (std::uint32_t x = c; x != 0; x &= x - 1) set |= gpu_mask{1} << pos[std::countr_zero(x)];
    consider(set);
    const std::uint32_t low = c & (~c + 1u);
    const std::uint32_t ripple = c + low;
    c = (((ripple ^ c) >> 2) / low) | ripple;
  }
  return out;
}

/// @brief What `besteffort_select` chose.
struct besteffort_result {
  /// The chosen GPU indices, in set order; empty when go-gpuallocator chooses nothing.
  std::vector<int> gpus;
  /// The Go code would have returned padding, which was dropped.
  bool padded = false;
};
/// @brief go-gpuallocator `besteffort` (commit-era semantics of hardware-facts 3.1), decision
/// for decision. `available` and `required` are GPU indices in the caller's order (the order
/// matters for ties, as in Go). Returns the chosen GPU indices in set order; empty when
/// go-gpuallocator returns nothing (size <= 0, fewer available than size, more required than
/// size, or no partition holds a padding-free set with all required GPUs). Padding that the Go
/// code can return (a known quirk) is dropped; `padded` tells whether it happened.
/// @throws invalid_value_error for a GPU index the node does not have.
/// Complexity: exponential (every partition of the padded list into groups of `size`).
[[nodiscard]] inline besteffort_result besteffort_select(const node_distances& d,
                                                         std::span<const int> available,
                                                         std::span<const int> required, int size) {
  for (auto span : {available, required}) {
    for (int g : span) {
      if (g < 0 || g >= d.gpu_count()) {
        throw invalid_value_error(error_id::unknown_id, "besteffort_select", "gpu",
                                  std::to_string(g), "no such GPU on node type '" + d.name() + "'");
      }
    }
  }
  besteffort_result res;
  if (size <= 0 || static_cast<int>(available.size()) < size ||
      static_cast<int>(required.size()) > size) {
    return res;
  }
  const auto pair = [&](int a, int b) { return a < 0 || b < 0 ? 0 : d.besteffort_score()(a, b); };
  const auto set_score = [&](const std::vector<int>& s) {
    int sc = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      for (std::size_t j = i + 1; j < s.size(); ++j) sc += pair(s[i], s[j]);
    }
    return sc;
  };
  const auto contains_all = [&](const std::vector<int>& s) {
    for (int q : required) {
      bool f = false;
      for (int x : s) f = f || x == q;
      if (!f) return false;
    }
    return true;
  };
  const auto padding_of = [](const std::vector<int>& s) {
    int p = 0;
    for (int x : s) p += x < 0 ? 1 : 0;
    return p;
  };
  using partition = std::vector<std::vector<int>>;
  partition best;
  bool have = false;
  int best_score = 0;
  const auto on_partition = [&](const partition& cand) {
    bool ok = false;
    for (const auto& s : cand) ok = ok || (contains_all(s) && padding_of(s) == 0);
    if (!ok) return;
    int sc = 0;
    for (const auto& s : cand) sc += set_score(s);
    if (sc > best_score || !have) {
      best = cand;
      best_score = sc;
      have = true;
    }
  };
  std::vector<int> devices(available.begin(), available.end());
  if (size == 1) {
    for (int g : devices) on_partition({{g}});
  } else {
    while (devices.size() % static_cast<std::size_t>(size) != 0) devices.push_back(-1);
    const int padding = padding_of(devices);
    partition accum;
    // recursive partition walk: the first device joins every (size-1)-subset of the rest,
    // subsets in lexicographic index order, as iterateGPUSets does
    const auto iterate = [&](const auto& self, const std::vector<int>& devs) -> void {
      if (static_cast<int>(devs.size()) == size) {
        accum.push_back(devs);
        on_partition(accum);
        accum.pop_back();
        return;
      }
      const int n = static_cast<int>(devs.size()) - 1;
      const int want = size - 1;
      std::vector<int> idx(static_cast<std::size_t>(want));
      for (int i = 0; i < want; ++i) idx[static_cast<std::size_t>(i)] = i;
      while (true) {
        std::vector<int> set{devs[0]};
        for (int i : idx) set.push_back(devs[static_cast<std::size_t>(i + 1)]);
        const int p = padding_of(set);
        if (p == 0 || p == padding) {
          std::vector<int> remaining;
          for (std::size_t i = 1; i < devs.size(); ++i) {
            bool in = false;
            for (int j : idx) in = in || static_cast<std::size_t>(j + 1) == i;
            if (!in) remaining.push_back(devs[i]);
          }
          accum.push_back(set);
          self(self, remaining);
          accum.pop_back();
        }
        // next combination of `want` out of `n`
        int i = want - 1;
        while (i >= 0 && idx[static_cast<std::size_t>(i)] == n - want + i) --i;
        if (i < 0) break;
        ++idx[static_cast<std::size_t>(i)];
        for (int j = i + 1; j < want; ++j) {
          idx[static_cast<std::size_t>(j)] = idx[static_cast<std::size_t>(j - 1)] + 1;
        }
      }
    };
    iterate(iterate, devices);
  }
  std::vector<std::vector<int>> filtered;
  for (const auto& s : best) {
    if (contains_all(s)) filtered.push_back(s);
  }
  if (filtered.empty()) return res;
  std::size_t pick = 0;
  int top = set_score(filtered[0]);
  for (std::size_t i = 1; i < filtered.size(); ++i) {
    const int sc = set_score(filtered[i]);
    if (sc > top) {
      pick = i;
      top = sc;
    }
  }
  for (int g : filtered[pick]) {
    if (g < 0) {
      res.padded = true;
    } else {
      res.gpus.push_back(g);
    }
  }
  return res;
}

GPUSCHED_END_NAMESPACE
