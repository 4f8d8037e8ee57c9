// SPDX-License-Identifier: Apache-2.0
/// @file
/// A synthetic Philly-like workload after Gavel's generator (`scheduler/utils.py`): GPUs per
/// job 1 / 2 / 4 / 8 with probability 0.7 / 0.1 / 0.15 / 0.05; duration `60 x 10^U(1.5, 3)` s
/// with probability 0.8, else `60 x 10^U(3, 4)` s; Poisson arrivals with mean inter-arrival
/// `3600 / jobs_per_hour` s; tenants drawn uniformly. Deterministic for a seed (draws use the
/// raw `random_engine` output, not `std::` distributions, so they match across standard
/// libraries; `std::pow`/`std::log` are the only floating-point library calls).
#pragma once

#include <cmath>  // std::pow, std::log
#include <cstdint>
#include <string>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/parse.hpp"
#include "gpusched/core/random.hpp"
#include "gpusched/trace/record.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Parameters of the synthetic generator.
struct synthetic_options {
  /// Number of jobs to generate.
  std::size_t jobs = 1000;
  double jobs_per_hour = 60;  ///< Poisson arrival rate; 0: every job arrives at t = 0
  /// Number of tenants, drawn uniformly per job (at least 1).
  std::uint32_t tenants = 1;
  /// Seed of the generator's engine: the same seed gives the same jobs.
  std::uint64_t seed = 1;
};

namespace detail {
/// Uniform in [0, 1) with 53 random bits.
inline double unit(random_engine& g) noexcept { return static_cast<double>(g() >> 11) * 0x1.0p-53; }
}  // namespace detail

/// @brief Streams synthetic jobs one at a time (O(1) memory).
class synthetic_generator {
 public:
  /// @throws invalid_value_error on a negative rate, NaN, or zero tenants; `next` throws it when
  /// a rate so small that arrivals pass the clock's range (2^62 ms).
  explicit synthetic_generator(synthetic_options o) : o_(o), g_(o.seed) {
    if (!(o.jobs_per_hour >= 0) || o.tenants == 0) {
      throw invalid_value_error(error_id::invalid_value, "synthetic_options",
                                o.tenants == 0 ? "tenants" : "jobs_per_hour",
                                o.tenants == 0 ? "0" : std::to_string(o.jobs_per_hour),
                                "rate must be >= 0 and tenants > 0");
    }
  }
  /// Makes the next job into `out`; false after `jobs` jobs. O(1).
  bool next(trace_job& out) {
    if (made_ >= o_.jobs) return false;
    out = trace_job{};
    out.id = job_id{static_cast<job_id::rep>(++made_)};
    if (o_.jobs_per_hour > 0 && made_ > 1) {
      const double mean = 3600.0 / o_.jobs_per_hour;
      // A tiny rate makes gaps beyond the millisecond clock: an error, never an overflow.
      // (Milliseconds truncated, as always: the same traces as before for every valid rate.)
      const double gap_ms = -mean * std::log(1.0 - detail::unit(g_)) * 1000.0;
      const auto next = gap_ms < 0x1p62 ? checked_add(clock_ms_, static_cast<std::int64_t>(gap_ms))
                                        : std::nullopt;
      if (!next || *next > (std::int64_t{1} << 62)) {
        throw invalid_value_error(
            error_id::invalid_value, "synthetic_options", "jobs_per_hour",
            std::to_string(o_.jobs_per_hour),
            "job " + std::to_string(made_) + " would arrive beyond the simulated clock's range");
      }
      clock_ms_ = *next;
    }
    out.submit = at(sim_duration{clock_ms_});
    const double s = detail::unit(g_);
    out.gpus = s < 0.7 ? 1 : s < 0.8 ? 2 : s < 0.95 ? 4 : 8;
    const bool short_job = detail::unit(g_) < 0.8;
    const double e = short_job ? 1.5 + 1.5 * detail::unit(g_) : 3.0 + detail::unit(g_);
    out.duration = sim_duration{static_cast<std::int64_t>(60.0 * std::pow(10.0, e) * 1000.0)};
    out.tenant = tenant_id{static_cast<tenant_id::rep>(uniform_index(g_, o_.tenants))};
    return true;
  }

 private:
  synthetic_options o_;
  random_engine g_;
  std::size_t made_ = 0;
  std::int64_t clock_ms_ = 0;
};

/// All jobs of the generator in a `trace` (tenants named "t0", "t1", ...).
[[nodiscard]] inline trace make_synthetic_trace(const synthetic_options& o) {
  trace t;
  t.source = "synthetic-philly(jobs=" + std::to_string(o.jobs) +
             ", rate=" + std::to_string(o.jobs_per_hour) + "/h, seed=" + std::to_string(o.seed) +
             ")";
  synthetic_generator gen(o);
  trace_job j;
  t.jobs.reserve(o.jobs);
  while (gen.next(j)) t.jobs.push_back(j);
  for (std::uint32_t k = 0; k < o.tenants; ++k) {
    std::string name = "t";
    name += std::to_string(k);
    t.tenants.push_back(std::move(name));
  }
  t.gpu_specs = {""};
  return t;
}

GPUSCHED_END_NAMESPACE
