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
  using rep = std::int64_t;
  using period = std::milli;
  using duration = std::chrono::duration<rep, period>;
  using time_point = std::chrono::time_point<sim_clock>;
  static constexpr bool is_steady = true;
};

using sim_duration = sim_clock::duration;
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
constexpr double to_seconds(sim_duration d) noexcept {
  return std::chrono::duration<double>(d).count();
}

GPUSCHED_END_NAMESPACE
