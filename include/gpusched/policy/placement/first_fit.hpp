// SPDX-License-Identifier: Apache-2.0
/// @file
/// `first_fit_placement`: places a gang task by task, in group order, each task where the
/// packing policy puts it. A failure's reason (short in total, or fragmented) comes from
/// `detail::diagnose_unplaced` (`policy/detail/fit.hpp`), which every placement policy reuses.
#pragma once

#include <cstdint>
#include <string_view>

#include "gpusched/config.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/detail/fit.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Places each task with the packing policy, in group order, at full size. All or
/// nothing: on the first task that does not fit it stops with `detail::diagnose_unplaced`'s reason
/// and the pipeline rolls the transaction back. O(tasks x packing cost).
struct first_fit_placement {
  /// Opts into the placement family.
  using policy_category = placement_tag;
  /// The policy's name: `first-fit`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "first-fit"; }

  /// Places every task of `j` in `tx` (single tasks through `pk`), or says why it cannot.
  [[nodiscard]] placement_outcome place(const schedule_context& ctx, const job_spec& j,
                                        packing_ref pack, ledger::transaction& tx) const {
    for (std::size_t g = 0; g < j.groups.size(); ++g) {
      for (std::int32_t t = 0; t < j.groups[g].count; ++t) {
        auto a = pack.pack(ctx, j.groups[g].request);
        if (!a) return {false, detail::diagnose_unplaced(tx, j, g)};
        a->group = static_cast<std::uint16_t>(g);
        if (!tx.place(*a)) return {false, detail::diagnose_unplaced(tx, j, g)};
      }
    }
    return {true, reason::placed()};
  }

  friend constexpr bool operator==(first_fit_placement, first_fit_placement) noexcept {
    return true;
  }
};

static_assert(placement_policy<first_fit_placement>);

GPUSCHED_END_NAMESPACE
