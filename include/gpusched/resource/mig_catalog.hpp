// SPDX-License-Identifier: Apache-2.0
/// @file
/// The MIG catalog: every MIG-capable GPU model of the project's hardware notes
/// (`hardware-facts.md` section 1) with its profile table (names per model, compute and memory
/// slices, instance caps, placements, the one-`+me` limit), plus exact per-GPU MIG feasibility
/// for a multiset of profiles and an options-preserving slot choice.
///
/// Profiles are keyed by (model, compute slices, memory slices, `+me`), never by name alone
/// (`1g.35gb` is a 2-slice profile on H200 and a 1-slice profile on GB300).
///
/// `mig_profile::inferred` is true for rows whose placements (or whole row) the notes tag [S]
/// (secondary source) or [I] (inferred): A100-80GB (placements [S]), H100-96GB (placements
/// taken from H100-80GB), H200, GH200 (placements [I]), B200, GB200, B300, GB300 (placements
/// [I]; B300/GB300 names [S]), and the A100-40GB `1g.10gb` memory size.
#pragma once

#include <algorithm>  // std::sort
#include <array>
#include <bit>  // std::popcount
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>  // std::move
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/quantity.hpp"
#include "gpusched/resource/gpu_model.hpp"

GPUSCHED_BEGIN_NAMESPACE

namespace detail {
/// One row of the 8-slice family table: the per-model name suffix and memory of each shape.
struct mig8_names {
  const char* g1;                   ///< 1 compute / 1 memory slice (7 per GPU)
  const char* g1_me;                ///< the same with media extensions (1 per GPU)
  const char* g1_2;                 ///< 1 compute / 2 memory slices (4 per GPU)
  const char* g2;                   ///< 2 / 2 (3 per GPU)
  const char* g3;                   ///< 3 / 4 (2 per GPU)
  const char* g4;                   ///< 4 / 4 (1 per GPU)
  const char* g7;                   ///< 7 / 8 (1 per GPU)
  std::array<std::int32_t, 5> mib;  ///< memory of 1/8, 2/8, 2/8 (2g), 4/8, 8/8 instances
};

/// The A100/H100/H200/Blackwell geometry: 8 memory slices, 7 compute slices, placements
/// {0..6}:1, {0,2,4,6}:2 (1g double memory), {0,2,4}:2 (2g), {0,4}:4 (3g), {0}:4 (4g), {0}:8.
inline mig_geometry make_mig8(const mig8_names& n, bool inferred) {
  mig_geometry g{8, 7, {}};
  const auto m = [&](int i) { return memory_mib{n.mib[static_cast<std::size_t>(i)]}; };
  g.profiles = {
      {n.g1, 1, 1, 7, 0b0111'1111, false, m(0), inferred},
      {n.g1_me, 1, 1, 1, 0b0111'1111, true, m(0), inferred},
      {n.g1_2, 1, 2, 4, 0b0101'0101, false, m(1), inferred},
      {n.g2, 2, 2, 3, 0b0001'0101, false, m(2), inferred},
      {n.g3, 3, 4, 2, 0b0001'0001, false, m(3), inferred},
      {n.g4, 4, 4, 1, 0b0000'0001, false, m(3), inferred},
      {n.g7, 7, 8, 1, 0b0000'0001, false, m(4), inferred},
  };
  return g;
}
constexpr std::int32_t gib_x100(int hundredths) noexcept {
  return static_cast<std::int32_t>(static_cast<std::int64_t>(hundredths) * 1024 / 100);
}
}  // namespace detail

/// Names of the MIG-capable models in `mig_catalog()`, in catalog order.
inline constexpr std::array<const char*, 12> mig_model_names{
    "A100-SXM4-40GB", "A100-SXM4-80GB", "A30-24GB",   "H100-SXM5-80GB",
    "H100-94GB",      "H100-96GB",      "H200-141GB", "GH200-144GB",
    "B200-180GB",     "GB200-186GB",    "B300-288GB", "GB300-288GB"};

/// @brief Every MIG-capable model of the hardware notes with its full MIG table. Whole-GPU
/// memory and SM counts are datasheet values (0 SMs where the notes give none). The
/// A100-SXM4-40GB table equals `basic_catalog()`'s.
inline gpu_catalog mig_catalog() {
  using detail::gib_x100;
  using detail::make_mig8;
  gpu_catalog c;
  {  // A100-40GB: the foundation's verified table (1g.10gb memory inferred).
    mig_geometry a{8, 7, {}};
    a.profiles = {
        {"1g.5gb", 1, 1, 7, 0b0111'1111, false, memory_mib{4864}, false},
        {"1g.5gb+me", 1, 1, 1, 0b0111'1111, true, memory_mib{4864}, false},
        {"1g.10gb", 1, 2, 4, 0b0101'0101, false, memory_mib{9856}, true},
        {"2g.10gb", 2, 2, 3, 0b0001'0101, false, memory_mib{9984}, false},
        {"3g.20gb", 3, 4, 2, 0b0001'0001, false, memory_mib{20096}, false},
        {"4g.20gb", 4, 4, 1, 0b0000'0001, false, memory_mib{20096}, false},
        {"7g.40gb", 7, 8, 1, 0b0000'0001, false, memory_mib{40448}, false},
    };
    c.add({"A100-SXM4-40GB", 40_gib, 108, std::move(a)});
  }
  c.add(
      {"A100-SXM4-80GB", 80_gib, 108,
       make_mig8({"1g.10gb",
                  "1g.10gb+me",
                  "1g.20gb",
                  "2g.20gb",
                  "3g.40gb",
                  "4g.40gb",
                  "7g.80gb",
                  {gib_x100(950), gib_x100(1950), gib_x100(1950), gib_x100(3925), gib_x100(7900)}},
                 true)});
  {  // A30: 4 memory slices, 4 compute slices [V].
    mig_geometry a{4, 4, {}};
    const memory_mib q{gib_x100(581)}, h{gib_x100(1169)}, f{gib_x100(2344)};
    a.profiles = {
        {"1g.6gb", 1, 1, 4, 0b1111, false, q, false},
        {"1g.6gb+me", 1, 1, 1, 0b1111, true, q, false},
        {"2g.12gb", 2, 2, 2, 0b0101, false, h, false},
        {"2g.12gb+me", 2, 2, 1, 0b0101, true, h, false},
        {"4g.24gb", 4, 4, 1, 0b0001, false, f, false},
    };
    c.add({"A30-24GB", 24_gib, 56, std::move(a)});
  }
  c.add(
      {"H100-SXM5-80GB", 80_gib, 132,
       make_mig8({"1g.10gb",
                  "1g.10gb+me",
                  "1g.20gb",
                  "2g.20gb",
                  "3g.40gb",
                  "4g.40gb",
                  "7g.80gb",
                  {gib_x100(975), gib_x100(1962), gib_x100(1962), gib_x100(3950), gib_x100(7925)}},
                 false)});
  c.add({"H100-94GB", 94_gib, 132,
         make_mig8({"1g.12gb",
                    "1g.12gb+me",
                    "1g.24gb",
                    "2g.24gb",
                    "3g.47gb",
                    "4g.47gb",
                    "7g.94gb",
                    {12 * 1024, 24 * 1024, 24 * 1024, 47 * 1024, 94 * 1024}},
                   false)});
  c.add({"H100-96GB", 96_gib, 132,
         make_mig8({"1g.12gb",
                    "1g.12gb+me",
                    "1g.24gb",
                    "2g.24gb",
                    "3g.48gb",
                    "4g.48gb",
                    "7g.96gb",
                    {12 * 1024, 24 * 1024, 24 * 1024, 48 * 1024, 96 * 1024}},
                   true)});
  c.add({"H200-141GB", 141_gib, 132,
         make_mig8({"1g.18gb",
                    "1g.18gb+me",
                    "1g.35gb",
                    "2g.35gb",
                    "3g.71gb",
                    "4g.71gb",
                    "7g.141gb",
                    {16 * 1024, gib_x100(3225), gib_x100(3225), gib_x100(6950), gib_x100(13975)}},
                   true)});
  c.add({"GH200-144GB", 144_gib, 132,
         make_mig8({"1g.18gb",
                    "1g.18gb+me",
                    "1g.36gb",
                    "2g.36gb",
                    "3g.72gb",
                    "4g.72gb",
                    "7g.144gb",
                    {gib_x100(1750), gib_x100(3525), gib_x100(3525), 72 * 1024, 144 * 1024}},
                   true)});
  c.add({"B200-180GB", 180_gib, 148,
         make_mig8({"1g.23gb",
                    "1g.23gb+me",
                    "1g.45gb",
                    "2g.45gb",
                    "3g.90gb",
                    "4g.90gb",
                    "7g.180gb",
                    {22 * 1024, gib_x100(4425), gib_x100(4425), 90 * 1024, 180 * 1024}},
                   true)});
  c.add({"GB200-186GB", 186_gib, 0,
         make_mig8({"1g.23gb",
                    "1g.23gb+me",
                    "1g.47gb",
                    "2g.47gb",
                    "3g.93gb",
                    "4g.93gb",
                    "7g.186gb",
                    {22 * 1024, gib_x100(4550), gib_x100(4550), 93 * 1024, 186 * 1024}},
                   true)});
  c.add({"B300-288GB", 288_gib, 0,
         make_mig8({"1g.34gb",
                    "1g.34gb+me",
                    "1g.67gb",
                    "2g.67gb",
                    "3g.135gb",
                    "4g.135gb",
                    "7g.269gb",
                    {34 * 1024, 67 * 1024, 67 * 1024, 135 * 1024, 269 * 1024}},
                   true)});
  c.add({"GB300-288GB", 288_gib, 0,
         make_mig8({"1g.35gb",
                    "1g.35gb+me",
                    "1g.70gb",
                    "2g.70gb",
                    "3g.139gb",
                    "4g.139gb",
                    "7g.278gb",
                    {35 * 1024, 70 * 1024, 70 * 1024, 139 * 1024, 278 * 1024}},
                   true)});
  return c;
}

// ---- exact feasibility ---------------------------------------------------------------------

/// @brief Where one MIG instance goes on a GPU.
struct mig_placement {
  /// The instance's profile (points into a catalog's `mig_geometry`).
  const mig_profile* profile = nullptr;
  std::uint8_t start = 0;  ///< first memory slice
  /// The memory slices the instance occupies. @pre `profile` is not null.
  [[nodiscard]] mig_slot_mask slots() const noexcept { return profile->slots_at(start); }
  friend bool operator==(const mig_placement&, const mig_placement&) noexcept = default;
};

/// @brief Occupancy of one MIG GPU: used memory slices and whether a `+me` instance exists.
struct mig_occupancy {
  /// The memory slices occupied (bit i is slice i).
  mig_slot_mask used = 0;
  /// A `+me` instance exists (the GPU has one media engine).
  bool media_used = false;
};

namespace detail {
inline bool mig_fit_rec(std::span<const mig_profile* const> todo, std::size_t i, mig_slot_mask used,
                        bool media, std::vector<mig_placement>& out) {
  if (i == todo.size()) return true;
  const mig_profile* p = todo[i];
  if (p->media_extension && media) return false;
  for (unsigned s = 0; s < 8; ++s) {
    if (((p->placement_starts >> s) & 1u) == 0) continue;
    const mig_slot_mask slots = p->slots_at(s);
    if ((used & slots) != 0) continue;
    out.push_back({p, static_cast<std::uint8_t>(s)});
    if (mig_fit_rec(todo, i + 1, static_cast<mig_slot_mask>(used | slots),
                    media || p->media_extension, out)) {
      return true;
    }
    out.pop_back();
  }
  return false;
}
}  // namespace detail

/// @brief Exact MIG feasibility: can all of `requests` (a multiset of profiles of one model) be
/// created on a GPU with occupancy `occ`, and where?
///
/// Decides by backtracking over every placement of every request (profiles with fewer
/// placements first), so placement order never causes a false "no": the answer equals that of
/// brute-force enumeration (tested). Per-profile instance caps need no separate check for the
/// tables of `mig_catalog()`: the placements and the one-`+me` rule already imply them (tested
/// over every layout). Complexity: O(prod of placements) worst case; at most 7 instances fit,
/// so at most 7^7 leaves, in practice a few dozen steps.
/// @returns the placements in the order of `requests`, or `nullopt` when they do not fit.
[[nodiscard]] inline std::optional<std::vector<mig_placement>> mig_fit(
    mig_occupancy occ, std::span<const mig_profile* const> requests) {
  std::vector<const mig_profile*> todo(requests.begin(), requests.end());
  std::vector<std::size_t> order(todo.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const int pa = std::popcount(todo[a]->placement_starts);
    const int pb = std::popcount(todo[b]->placement_starts);
    if (pa != pb) return pa < pb;
    if (todo[a]->memory_slices != todo[b]->memory_slices) {
      return todo[a]->memory_slices > todo[b]->memory_slices;
    }
    return a < b;
  });

  std::vector<const mig_profile*> sorted;
  sorted.reserve(order.size());
  for (auto i : order) sorted.push_back(todo[i]);
  std::vector<mig_placement> found;
  found.reserve(sorted.size());
  if (!detail::mig_fit_rec(sorted, 0, occ.used, occ.media_used, found)) return std::nullopt;
  std::vector<mig_placement> result(found.size());
  for (std::size_t k = 0; k < order.size(); ++k) result[order[k]] = found[k];
  return result;
}

// ---- options-preserving slot choice ----------------------------------------------------------

/// The most further instances of `p` that fit in the free slices of `used` (greedy by lowest
/// start, optimal for equal-size intervals). O(placements).
[[nodiscard]] inline int mig_max_additional(const mig_profile& p, mig_slot_mask used) noexcept {
  int n = 0;
  for (unsigned s = 0; s < 8; ++s) {
    if (((p.placement_starts >> s) & 1u) == 0) continue;
    const mig_slot_mask slots = p.slots_at(s);
    if ((used & slots) == 0) {
      used = static_cast<mig_slot_mask>(used | slots);
      ++n;
    }
  }
  return n;
}

/// @brief The option value of a GPU's free space: for every non-`+me` profile of `g`, the most
/// further instances of it that still fit, weighted by its memory slices, summed.
///
/// This is the measure the MIG packers maximise: a placement that leaves, say, room for a
/// 4-slice 3g instance is worth more than one that leaves the same number of free slices
/// scattered. On an empty A100-40GB it is 7x1 + 4x2 + 3x2 + 2x4 + 1x4 + 1x8 = 41.
/// O(profiles x placements).
[[nodiscard]] inline int mig_option_value(const mig_geometry& g, mig_slot_mask used) noexcept {
  int v = 0;
  for (const auto& p : g.profiles) {
    if (p.media_extension) continue;
    v += mig_max_additional(p, used) * p.memory_slices;
  }
  return v;
}

/// The start for one instance of `p` on a GPU with occupancy `occ` that keeps the most option
/// value (ties: the lowest start), or `nullopt` when `p` does not fit. O(placements x value).
[[nodiscard]] inline std::optional<mig_placement> mig_best_slot(const mig_geometry& g,
                                                                const mig_profile& p,
                                                                mig_occupancy occ) noexcept {
  if (p.media_extension && occ.media_used) return std::nullopt;
  std::optional<mig_placement> best;
  int best_value = -1;
  for (unsigned s = 0; s < 8; ++s) {
    if (((p.placement_starts >> s) & 1u) == 0) continue;
    const mig_slot_mask slots = p.slots_at(s);
    if ((occ.used & slots) != 0) continue;
    const int v = mig_option_value(g, static_cast<mig_slot_mask>(occ.used | slots));
    if (v > best_value) {
      best_value = v;
      best = mig_placement{&p, static_cast<std::uint8_t>(s)};
    }
  }
  return best;
}

GPUSCHED_END_NAMESPACE
