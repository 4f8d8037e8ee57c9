// SPDX-License-Identifier: Apache-2.0
/// @file
/// Loader for Gavel's per-VC Philly traces (`msr/seed=N/<vc>.trace`, the 7-field TSV of Gavel
/// commit ace90a3: `job_type, command, num_steps_arg, needs_data_dir, total_steps,
/// arrival_time_s, scale_factor`; no header). A job's duration is `total_steps /
/// steps_per_second(job_type, scale_factor)`; Gavel takes the rate from its measured
/// throughput table, so the caller supplies it. Rows whose rate is unknown are skipped and
/// counted in `trace::skipped` (about 10% of the published traces have no rate).
#pragma once

#include <fstream>
#include <functional>
#include <istream>
#include <optional>
#include <string>
#include <string_view>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/parse.hpp"
#include "gpusched/trace/record.hpp"
#include "gpusched/trace/text.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// Steps per second of `job_type` on `scale` GPUs, or nothing when unknown.
using gavel_rate_fn = std::function<std::optional<double>(std::string_view job_type, int scale)>;

/// @brief Streams jobs from a Gavel trace. Ids are 1-based data-row numbers; all jobs get
/// tenant 0. @throws parse_error on a row without 7 fields or with a bad number;
/// invalid_value_error if `rate` is empty.
class gavel_reader {
 public:
  /// Reads Gavel's tab-separated rows from `in`, with steps per second from `rate` (`file` names
  /// the input in errors).
  gavel_reader(std::istream& in, gavel_rate_fn rate, std::string file = "<gavel>")
      : r_(in, std::move(file), '\t'), rate_(std::move(rate)) {
    if (!rate_) {
      throw invalid_value_error(error_id::invalid_value, "gavel_reader", "rate", "empty",
                                "a steps-per-second function is required");
    }
  }
  /// The next job with a known rate (skipping and counting the others); false at the end.
  bool next(trace_job& out) {
    while (r_.next()) {
      if (r_.fields().size() != 7) {
        r_.fail("row",
                "expected 7 tab-separated fields, found " + std::to_string(r_.fields().size()));
      }
      const auto type = r_.field(0, "job_type");
      if (type.empty()) r_.fail("job_type", "empty");
      const auto steps = r_.number(4, "total_steps", 0, 1e15);
      const auto arrival = r_.number(5, "arrival_time", 0, 1e10);
      const auto scale = r_.integer(6, "scale_factor", 1, 1'000'000);
      ++rows_;
      const auto rate = rate_(type, static_cast<int>(scale));
      if (!rate || !(*rate > 0)) {
        ++skipped_;
        continue;
      }
      out = trace_job{};
      out.id = job_id{rows_};
      out.submit = at(sim_duration{detail::seconds_to_ms(arrival)});
      // A tiny rate makes a duration beyond the clock (or infinite): an error, not overflow.
      const auto ms = to_millis(steps / *rate);
      if (!ms) {
        r_.fail("total_steps", "total_steps / steps-per-second (" + std::to_string(*rate) +
                                   ") is a duration beyond the simulated clock");
      }
      out.duration = sim_duration{*ms};
      out.gpus = static_cast<std::int32_t>(scale);
      return true;
    }
    return false;
  }
  /// Rows skipped so far because `rate` knows no rate for their job type and scale.
  [[nodiscard]] std::size_t skipped() const noexcept { return skipped_; }

 private:
  detail::text_reader r_;
  gavel_rate_fn rate_;
  std::uint32_t rows_ = 0;
  std::size_t skipped_ = 0;
};

/// Loads a Gavel trace, sorted by arrival (stable). @throws as `gavel_reader`.
[[nodiscard]] inline trace load_gavel(std::istream& in, gavel_rate_fn rate,
                                      std::string file = "<gavel>") {
  trace t;
  t.source = file;
  gavel_reader rd(in, std::move(rate), std::move(file));
  trace_job j;
  while (rd.next(j)) t.jobs.push_back(j);
  t.skipped = rd.skipped();
  t.tenants = {"default"};
  t.gpu_specs = {""};
  t.sort_by_submit();
  return t;
}

GPUSCHED_END_NAMESPACE
