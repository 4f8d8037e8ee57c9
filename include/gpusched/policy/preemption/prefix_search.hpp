// SPDX-License-Identifier: Apache-2.0
/// @file
/// `detail::shortest_fitting_prefix`: the victim-prefix search the preemption policies share
/// (`priority_preemption`, `las_preemption`, `srtf_preemption`, `reclaim_victims`). A policy
/// orders its candidates by its own preference; this finds how many of them, taken in that
/// order, must go for the preemptor to fit.
#pragma once

#include <algorithm>  // std::min
#include <cstddef>
#include <cstdint>
#include <span>

#include "gpusched/config.hpp"
#include "gpusched/core/ids.hpp"
#include "gpusched/policy/concepts.hpp"

GPUSCHED_BEGIN_NAMESPACE

namespace detail {
/// The shortest prefix of `victims` (in eviction order) after which `probe` says the preemptor
/// fits: galloping (1, 2, 4, ...) then bisection, assuming more victims never hurt. 0 when even
/// all of them do not make room (or there are none). O(log n) probes; every returned prefix has
/// probed true, so the result is verified whatever the shape of the search.
inline std::size_t shortest_fitting_prefix(std::span<const job_id> victims, fit_probe& probe) {
  if (victims.empty()) return 0;
  const auto fits = [&](std::size_t k) { return probe(victims.first(k)); };
  std::size_t lo = 0;  // longest prefix known not to fit
  std::size_t hi = 0;  // shortest prefix known to fit (0: none yet)
  for (std::size_t k = 1;; k = std::min(2 * k, victims.size())) {
    if (fits(k)) {
      hi = k;
      break;
    }
    lo = k;
    if (k == victims.size()) return 0;
  }
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? hi : lo) = mid;
  }
  return hi;
}

/// The plan evicting the shortest fitting prefix of `victims` (see above), with reason
/// `placed_by_preemption`; or no victims, with reason `no_victims` and the number of
/// candidates in `available`, when even all of them do not make room.
[[nodiscard]] inline preemption_plan shortest_prefix_plan(std::span<const job_id> victims,
                                                          fit_probe& probe) {
  preemption_plan plan;
  const std::size_t k = shortest_fitting_prefix(victims, probe);
  if (k == 0) {
    plan.why = reason::no_victims(static_cast<std::int64_t>(victims.size()));
    return plan;
  }
  const auto taken = victims.first(k);
  plan.victims.assign(taken.begin(), taken.end());
  plan.why = reason::placed_by_preemption();
  return plan;
}
}  // namespace detail

GPUSCHED_END_NAMESPACE
