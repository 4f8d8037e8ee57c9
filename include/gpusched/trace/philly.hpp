// SPDX-License-Identifier: Apache-2.0
/// @file
/// Loader for the job-level Philly trace shipped with Pollux (`philly.csv`: columns
/// `timestamp,duration,num_gpus,gpu_time,cluster`; timestamp = submission, `YYYY-MM-DD
/// HH:MM:SS`; duration in seconds; `gpu_time = duration x num_gpus`; cluster = virtual-cluster
/// hash, used as the tenant). Columns are found by header name, in any order.
///
/// `philly_reader` streams one record at a time (memory: one line); `load_philly` collects the
/// compact records, sorts them by submission and rebases time to the first submission.
#pragma once

#include <cmath>  // std::abs
#include <fstream>
#include <istream>
#include <string>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/parse.hpp"
#include "gpusched/trace/record.hpp"
#include "gpusched/trace/text.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Streams records from a Philly CSV. Ids are the 1-based data-row numbers; submit times
/// are milliseconds since the Unix epoch (not rebased). Tenants are interned VC names.
/// @throws parse_error (file, line, field) on a missing column, a malformed or out-of-range
/// value, or a `gpu_time` that is not `duration x num_gpus`.
class philly_reader {
 public:
  /// Reads the header from `in` (`file` names it in errors). @throws parse_error on a missing
  /// column (`timestamp`, `duration`, `num_gpus`, `gpu_time`, `cluster`).
  explicit philly_reader(std::istream& in, std::string file = "<philly>")
      : r_(in, std::move(file), ',') {
    if (!r_.next()) r_.fail("header", "empty input: expected a header line");
    col_ = r_.columns<5>({"timestamp", "duration", "num_gpus", "gpu_time", "cluster"});
  }
  /// Reads the next record into `out`; false at end of input. O(line length).
  bool next(trace_job& out) {
    if (!r_.next()) return false;
    const auto ts = detail::parse_datetime(r_.field(col_[0], "timestamp"));
    if (!ts) r_.fail("timestamp", "expected YYYY-MM-DD HH:MM:SS");
    const double dur = r_.number(col_[1], "duration", 0.0, 1e9);
    const auto gpus = r_.integer(col_[2], "num_gpus", 0, 1'000'000);
    const double gt = r_.number(col_[3], "gpu_time", 0.0, 1e15);
    if (std::abs(gt - dur * static_cast<double>(gpus)) > 1e-6 * gt + 0.5) {
      r_.fail("gpu_time", "is not duration x num_gpus");
    }
    const auto vc = r_.field(col_[4], "cluster");
    if (vc.empty()) r_.fail("cluster", "empty virtual-cluster name");
    if (!is_utf8(vc)) r_.fail("cluster", "the virtual-cluster name is not UTF-8");
    out = trace_job{};
    out.id = job_id{static_cast<job_id::rep>(++rows_)};
    out.submit = at(sim_duration{*ts * 1000});
    out.duration = sim_duration{detail::seconds_to_ms(dur)};
    out.gpus = static_cast<std::int32_t>(gpus);
    out.tenant = tenant_id{tenants_.intern(vc)};
    return true;
  }
  /// The virtual-cluster names seen so far, by tenant id.
  [[nodiscard]] const string_table& tenants() const noexcept { return tenants_; }
  /// The line last read (1-based).
  [[nodiscard]] std::size_t line() const noexcept { return r_.line(); }

 private:
  detail::text_reader r_;
  std::array<std::size_t, 5> col_{};
  string_table tenants_;
  std::uint32_t rows_ = 0;
};

/// Loads a whole Philly CSV from `in`: records sorted by submission (stable), time rebased to
/// the first submission. O(n log n); holds only the compact records. @throws parse_error.
[[nodiscard]] inline trace load_philly(std::istream& in, std::string file = "<philly>") {
  trace t;
  t.source = file;
  philly_reader rd(in, std::move(file));
  trace_job j;
  while (rd.next(j)) t.jobs.push_back(j);
  t.tenants = rd.tenants().names();
  t.gpu_specs = {""};
  t.sort_by_submit();
  t.rebase();
  return t;
}

/// Loads a Philly CSV file. @throws parse_error (line 0, field `file`) if it cannot be opened
/// or is a directory.
[[nodiscard]] inline trace load_philly_file(const std::string& path) {
  std::ifstream in = open_input(path);
  return load_philly(in, path);
}

GPUSCHED_END_NAMESPACE
