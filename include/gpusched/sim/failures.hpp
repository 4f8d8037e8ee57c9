// SPDX-License-Identifier: Apache-2.0
/// @file
/// A random failure process over `units` identical units (the nodes, or the GPUs, of a
/// cluster): memoryless, with a mean time between failures `mtbf` per unit, so the next
/// failure of any unit comes after an exponential time of mean `mtbf / units` and hits a
/// uniformly drawn unit. Each process has its own random stream, so that enabling one leaves
/// the draws of the others unchanged.
///
/// The simulator pauses a process while nothing runs and no job can arrive (so that a run
/// whose pending jobs can never start ends) and resumes it at the next start; the process is
/// memoryless, so resuming from that instant is the same process.
#pragma once

#include <algorithm>  // std::min
#include <cmath>      // std::log
#include <cstdint>

#include "gpusched/config.hpp"
#include "gpusched/core/random.hpp"
#include "gpusched/core/time.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief One failure process (see the file comment).
class failure_process {
 public:
  /// A process with stream `seed` and mean time between failures `mtbf` per unit (0: none).
  failure_process(std::uint64_t seed, sim_duration mtbf) : rng_(seed), mtbf_(mtbf) {}

  /// One failure: when, and which unit.
  struct draw {
    sim_time t{};            ///< when the unit fails
    std::uint32_t unit = 0;  ///< which unit (a node position or GPU index)
  };

  /// Whether the process draws failures at all (a positive `mtbf` and some units).
  [[nodiscard]] bool enabled(std::uint64_t units) const noexcept {
    return mtbf_ > sim_duration{0} && units > 0;
  }
  /// The next failure after `from` over `units` > 0 units: an exponential gap of mean
  /// `mtbf / units`, at least 1 ms, clamped to 2^62 ms (146 million years: never, in effect,
  /// so that a huge MTBF cannot overflow the clock), then a uniform unit. O(1).
  draw next(sim_time from, std::uint64_t units) {
    const double mean = static_cast<double>(mtbf_.count()) / static_cast<double>(units);
    const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
    const auto dt = static_cast<std::int64_t>(std::min(-mean * std::log(1.0 - u), 0x1p62)) + 1;
    const auto unit = static_cast<std::uint32_t>(uniform_index(rng_, units));
    return {from + sim_duration{dt}, unit};
  }

  /// The process fired while nothing could run: the next start resumes it.
  bool paused = false;

 private:
  random_engine rng_;
  sim_duration mtbf_{0};
};

GPUSCHED_END_NAMESPACE
