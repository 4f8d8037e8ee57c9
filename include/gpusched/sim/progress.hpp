// SPDX-License-Identifier: Apache-2.0
/// @file
/// The progress arithmetic of one running job, apart from any cluster: how far a job has come
/// at a time, how long a given amount of work takes, when its next checkpoint or its
/// completion falls, and how a rate change (an elastic resize, a change of the communication
/// share) is applied mid-run.
///
/// Model. Progress is counted in milliseconds of full-size work (`sim_job::work`). A running
/// job progresses at a rational rate `num/den` (progress per wall millisecond, at most 1) from
/// `compute_start` on: before it (a restore or resize pause) it makes none. It alternates
/// `interval` of progress with `checkpoint_cost` of writing; `limit` is the progress at which
/// the next event (the end of a checkpoint's progress, or completion) falls, and progress never
/// passes it. All arithmetic is exact integer arithmetic (128-bit intermediates where a product
/// would overflow 64 bits), so that a run is reproducible to the millisecond.
#pragma once

#include <algorithm>  // std::min
#include <cstdint>

#include "gpusched/config.hpp"
#include "gpusched/core/time.hpp"

GPUSCHED_BEGIN_NAMESPACE

namespace detail {
#if defined(__SIZEOF_INT128__)
__extension__ using int128 = __int128;
#endif
/// floor(a x b / c) for a, b >= 0 and c > 0, exact where a x b overflows 64 bits. O(1).
[[nodiscard]] inline std::int64_t mul_div_floor(std::int64_t a, std::int64_t b,
                                                std::int64_t c) noexcept {
  std::int64_t p = 0;
  if (!__builtin_mul_overflow(a, b, &p)) return p / c;
#if defined(__SIZEOF_INT128__)
  return static_cast<std::int64_t>(static_cast<int128>(a) * b / c);
#else
  return static_cast<std::int64_t>(static_cast<long double>(a) * b / c);
#endif
}
/// ceil(a x b / c) for a, b >= 0 and c > 0, as above. O(1).
[[nodiscard]] inline std::int64_t mul_div_ceil(std::int64_t a, std::int64_t b,
                                               std::int64_t c) noexcept {
  std::int64_t p = 0;
  if (!__builtin_mul_overflow(a, b, &p) && p <= INT64_MAX - (c - 1)) return (p + c - 1) / c;
#if defined(__SIZEOF_INT128__)
  return static_cast<std::int64_t>((static_cast<int128>(a) * b + (c - 1)) / c);
#else
  return static_cast<std::int64_t>(static_cast<long double>(a) * b / c) + 1;
#endif
}
}  // namespace detail

/// @brief A progress rate: `num / den` ms of full-size work per wall ms (0 < num <= den).
struct progress_rate {
  std::int64_t num = 1;  ///< numerator
  std::int64_t den = 1;  ///< denominator (positive)
  friend constexpr bool operator==(progress_rate, progress_rate) noexcept = default;
};

/// The rate of an elastic job holding `held_milli` of its `full_milli` GPU-milli: `held/full`
/// when it holds less than its full request, else 1. O(1).
[[nodiscard]] constexpr progress_rate elastic_rate(std::int64_t held_milli,
                                                   std::int64_t full_milli) noexcept {
  if (full_milli > 0 && held_milli > 0 && held_milli < full_milli) return {held_milli, full_milli};
  return {1, 1};
}

/// The next progress event of a running job: a checkpoint (its progress done, then the write)
/// or its completion.
struct progress_event {
  sim_time t{};             ///< when it falls
  bool completion = false;  ///< the job completes (otherwise a checkpoint is written)
};

/// @brief Where a running job's progress stands (see the file comment).
struct progress_state {
  progress_rate rate{};      ///< current rate (elastic share, communication)
  std::int64_t saved = 0;    ///< progress safe in a checkpoint
  std::int64_t p0 = 0;       ///< progress at `compute_start`
  std::int64_t limit = 0;    ///< progress at which the next event falls
  sim_time compute_start{};  ///< when computing (re)started after a pause

  /// Progress at `now`: `p0` before `compute_start`, then `p0 + (now - compute_start) x rate`,
  /// never past `limit`. O(1).
  [[nodiscard]] std::int64_t at(sim_time now) const noexcept {
    if (now <= compute_start) return p0;
    const auto done = detail::mul_div_floor((now - compute_start).count(), rate.num, rate.den);
    return std::min(p0 + done, limit);
  }
  /// Wall milliseconds for `dp` ms of progress at the current rate, rounded up. O(1).
  [[nodiscard]] std::int64_t wall(std::int64_t dp) const noexcept {
    return detail::mul_div_ceil(dp, rate.den, rate.num);
  }
  /// GPU-milliseconds of the work done since the last checkpoint if the job stopped with
  /// progress `p` while holding `held_milli` GPU-milli (the work a failure or preemption
  /// loses). O(1).
  [[nodiscard]] double lost_gpu_ms(std::int64_t p, std::int64_t held_milli) const noexcept {
    return static_cast<double>(wall(p - saved)) * static_cast<double>(held_milli) / 1000.0;
  }
  /// Sets `limit` to the next checkpoint's progress (a multiple of `interval` below `work`)
  /// or to `work`, and returns when that event falls: after the progress and, for a
  /// checkpoint, its `checkpoint_cost`. `interval` 0: no checkpoints. O(1).
  progress_event plan_next(std::int64_t work, sim_duration interval,
                           sim_duration checkpoint_cost) noexcept {
    const auto iv = interval.count();
    if (iv > 0) {
      const auto next = (p0 / iv + 1) * iv;
      if (next < work) {
        limit = next;
        return {compute_start + sim_duration{wall(next - p0)} + checkpoint_cost, false};
      }
    }
    limit = work;
    return {compute_start + sim_duration{wall(work - p0)}, true};
  }
  /// The job finished writing the checkpoint at `limit`, at `now`: its progress is saved and
  /// it computes again from `now`. O(1).
  void checkpoint_written(sim_time now) noexcept {
    saved = limit;
    p0 = limit;
    compute_start = now;
  }
  /// Whether, at `now`, the job is writing a checkpoint: its progress reached `limit` and the
  /// next event (the end of the write) has not come. O(1).
  [[nodiscard]] bool writing(sim_time now, std::int64_t work) const noexcept {
    return limit < work && now > compute_start && at(now) >= limit;
  }
  /// Changes the rate at `now`, keeping the progress made: the progress so far is folded into
  /// `p0` (a job still in a pause keeps its `compute_start`). Returns false, changing nothing
  /// but the rate, when the job is writing a checkpoint at `now` (its next event stands; the
  /// new rate applies from the write's end), true when the caller must plan the next event
  /// again (`plan_next`). O(1).
  bool change_rate(sim_time now, progress_rate r, std::int64_t work) noexcept {
    if (writing(now, work)) {
      rate = r;
      return false;
    }
    if (now > compute_start) {
      p0 = at(now);
      compute_start = now;
    }
    rate = r;
    return true;
  }
};

GPUSCHED_END_NAMESPACE
