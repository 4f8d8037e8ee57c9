// SPDX-License-Identifier: Apache-2.0
/// @file
/// Loader for Tiresias simulator job files (`60_job.csv`: columns
/// `job_id,num_gpu,submit_time,iterations,model_name,duration,interval`; times in seconds).
/// Columns are found by header name. The trace has no tenants (all tenant 0, "default").
#pragma once

#include <fstream>
#include <istream>
#include <string>
#include <unordered_map>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/parse.hpp"
#include "gpusched/trace/record.hpp"
#include "gpusched/trace/text.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Streams records from a Tiresias job CSV. Ids are the file's `job_id`.
/// @throws parse_error (file, line, field) on a missing column or a bad value.
class tiresias_reader {
 public:
  /// Reads the header from `in` (`file` names it in errors). @throws parse_error on a missing
  /// column (`job_id`, `num_gpu`, `submit_time`, `duration`).
  explicit tiresias_reader(std::istream& in, std::string file = "<tiresias>")
      : r_(in, std::move(file), ',') {
    if (!r_.next()) r_.fail("header", "empty input: expected a header line");
    col_ = r_.columns<3>({"job_id", "num_gpu", "submit_time"});
    // duration is optional in some Tiresias files (then derived from iterations elsewhere);
    // this loader needs it.
    col_dur_ = r_.columns<1>({"duration"})[0];
  }
  /// Reads the next record into `out`; false at end of input. O(line length).
  bool next(trace_job& out) {
    if (!r_.next()) return false;
    out = trace_job{};
    out.id = job_id{static_cast<job_id::rep>(r_.integer(col_[0], "job_id", 0, 0xFFFF'FFFE))};
    out.gpus = static_cast<std::int32_t>(r_.integer(col_[1], "num_gpu", 0, 1'000'000));
    out.submit =
        at(sim_duration{detail::seconds_to_ms(r_.number(col_[2], "submit_time", 0, 1e10))});
    out.duration = sim_duration{detail::seconds_to_ms(r_.number(col_dur_, "duration", 0, 1e10))};
    return true;
  }
  /// The line last read (1-based).
  [[nodiscard]] std::size_t line() const noexcept { return r_.line(); }

 private:
  detail::text_reader r_;
  std::array<std::size_t, 3> col_{};
  std::size_t col_dur_ = 0;
};

/// Loads a Tiresias job CSV: sorted by submission (stable), not rebased (the file's times are
/// already offsets). @throws parse_error (file, line, field), also for a `job_id` that repeats
/// an earlier line's. O(jobs log jobs).
[[nodiscard]] inline trace load_tiresias(std::istream& in, std::string file = "<tiresias>") {
  trace t;
  t.source = file;
  tiresias_reader rd(in, file);
  trace_job j;
  std::unordered_map<job_id::rep, std::size_t> first_line;  // id -> the line that gave it
  while (rd.next(j)) {
    if (const auto [it, fresh] = first_line.try_emplace(j.id.value(), rd.line()); !fresh) {
      throw parse_error(file, rd.line(), "job_id",
                        std::to_string(j.id.value()) + " repeats the id of line " +
                            std::to_string(it->second));
    }
    t.jobs.push_back(j);
  }
  t.tenants = {"default"};
  t.gpu_specs = {""};
  t.sort_by_submit();
  return t;
}

/// Loads the Tiresias CSV at `path`. @throws parse_error (also when it cannot be opened).
[[nodiscard]] inline trace load_tiresias_file(const std::string& path) {
  std::ifstream in = open_input(path);
  return load_tiresias(in, path);
}

GPUSCHED_END_NAMESPACE
