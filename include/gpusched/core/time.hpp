// SPDX-License-Identifier: Apache-2.0
/// @file
/// Simulated (or scheduler) time: `sim_time` (a point) and `sim_duration` (a span), built on
/// `std::chrono` with millisecond ticks and a clock of our own, so that scheduler time never
/// mixes with wall-clock time or with resource quantities.
#pragma once

#include <chrono>   // std::chrono::duration, time_point
#include <cstdint>  // std::int64_t

#include "gpusched/config.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// The scheduler's clock. Its epoch is whatever the caller chooses (trace start, Unix epoch);
/// `now()` is deliberately absent: time is always passed in.
struct sim_clock {
  /// Milliseconds as a signed 64-bit count (about 292 million years either way).
  using rep = std::int64_t;
  /// One tick is a millisecond.
  using period = std::milli;
  /// A span of ticks.
  using duration = std::chrono::duration<rep, period>;
  /// A point on this clock.
  using time_point = std::chrono::time_point<sim_clock>;
  /// The clock never goes back (it is only ever given times by the caller).
  static constexpr bool is_steady = true;
};

/// A span of scheduler time, in milliseconds.
using sim_duration = sim_clock::duration;
/// A point of scheduler time, in milliseconds since the caller's epoch.
using sim_time = sim_clock::time_point;

/// A time point `d` after the epoch.
constexpr sim_time at(sim_duration d) noexcept { return sim_time{d}; }
/// Whole seconds as a duration.
constexpr sim_duration seconds(std::int64_t s) noexcept {
  return std::chrono::duration_cast<sim_duration>(std::chrono::seconds{s});
}
/// Seconds since the epoch, as a double (for printing and metrics).
constexpr double to_seconds(sim_time t) noexcept {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}
/// A duration in seconds, as a double (for printing and metrics).
constexpr double to_seconds(sim_duration d) noexcept {
  return std::chrono::duration<double>(d).count();
}

GPUSCHED_END_NAMESPACE
