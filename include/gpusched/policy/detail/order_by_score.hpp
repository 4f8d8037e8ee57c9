// SPDX-License-Identifier: Apache-2.0
/// @file
/// `detail::order_by_score`: the final sort of every score-based ordering (`multifactor_ordering`,
/// `fair_tree_ordering`): higher score first, then FIFO. An implementation detail.
#pragma once

#include <algorithm>  // std::sort
#include <span>
#include <utility>  // std::pair
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/workload/job.hpp"

GPUSCHED_BEGIN_NAMESPACE

namespace detail {
/// Writes into `jobs` the jobs of `keyed` (score, job) by score, higher first, then FIFO
/// (submit, id): the order of every score-based ordering. Sorts `keyed` in place.
/// @pre `keyed.size() == jobs.size()`. O(n log n).
inline void order_by_score(std::vector<std::pair<double, const job_spec*>>& keyed,
                           std::span<const job_spec*> jobs) {
  std::sort(keyed.begin(), keyed.end(), [](const auto& x, const auto& y) {
    if (x.first != y.first) return x.first > y.first;
    if (x.second->submit != y.second->submit) return x.second->submit < y.second->submit;
    return x.second->id < y.second->id;
  });
  for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i] = keyed[i].second;
}
}  // namespace detail

GPUSCHED_END_NAMESPACE
