// SPDX-License-Identifier: Apache-2.0
/// @file
/// `fifo_ordering`: first come, first served, by submit time, ties by job id.
#pragma once

#include <algorithm>  // std::sort
#include <span>
#include <string_view>

#include "gpusched/config.hpp"
#include "gpusched/policy/concepts.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Orders by (submit time, job id), both ascending. A strict total order on distinct ids.
/// Complexity O(n log n).
struct fifo_ordering {
  /// Opts into the ordering family.
  using policy_category = ordering_tag;
  /// The policy's name: `fifo`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "fifo"; }
  /// True when `a` goes before `b`: the strict weak order `order` sorts by.
  [[nodiscard]] bool before(const schedule_context& /*ctx*/, const job_spec& a,
                            const job_spec& b) const noexcept {
    if (a.submit != b.submit) return a.submit < b.submit;
    return a.id < b.id;
  }
  /// Sorts `jobs` by this policy's rule (see the class), the first to be considered first.
  void order(const schedule_context& ctx, std::span<const job_spec*> jobs) const {
    std::sort(jobs.begin(), jobs.end(),
              [&](const job_spec* a, const job_spec* b) { return before(ctx, *a, *b); });
  }
  friend constexpr bool operator==(fifo_ordering, fifo_ordering) noexcept { return true; }
};

/// @brief Orders by priority (higher first), then FIFO. Complexity O(n log n).
struct priority_ordering {
  /// Opts into the ordering family.
  using policy_category = ordering_tag;
  /// The policy's name: `priority`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "priority"; }
  /// True when `a` goes before `b`: the strict weak order `order` sorts by.
  [[nodiscard]] bool before(const schedule_context& ctx, const job_spec& a,
                            const job_spec& b) const noexcept {
    if (a.priority != b.priority) return a.priority > b.priority;
    return fifo_ordering{}.before(ctx, a, b);
  }
  /// Sorts `jobs` by this policy's rule (see the class), the first to be considered first.
  void order(const schedule_context& ctx, std::span<const job_spec*> jobs) const {
    std::sort(jobs.begin(), jobs.end(),
              [&](const job_spec* a, const job_spec* b) { return before(ctx, *a, *b); });
  }
  friend constexpr bool operator==(priority_ordering, priority_ordering) noexcept { return true; }
};

static_assert(comparison_ordering_policy<fifo_ordering>);
static_assert(comparison_ordering_policy<priority_ordering>);

GPUSCHED_END_NAMESPACE
