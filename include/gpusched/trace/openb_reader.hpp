// SPDX-License-Identifier: Apache-2.0
/// @file
/// Loader for Alibaba GPU trace v2023 ("openb") pod lists, for replay: columns `name`,
/// `cpu_milli`, `memory_mib`, `num_gpu`, `gpu_milli`, `gpu_spec`, `qos`, `pod_phase`,
/// `creation_time`, `deletion_time`, `scheduled_time` (times in seconds). Each pod becomes one
/// single-task job that arrives at `creation_time` and runs for `deletion_time - creation_time`.
/// `gpu_milli` below 1000 (only with `num_gpu == 1`) is a GPU share; `gpu_spec` lists allowed
/// models joined by `|` (interned into `trace::gpu_specs`; resolve with `resolve_gpu_spec`);
/// `qos` is the tenant.
/// The `multigpu*` variants have no time columns and are rejected (nothing to replay).
#pragma once

#include <fstream>
#include <istream>
#include <string>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/parse.hpp"
#include "gpusched/trace/openb.hpp"
#include "gpusched/trace/record.hpp"
#include "gpusched/trace/text.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Streams pods from an openb pod list. Ids are the 1-based data-row numbers.
/// @throws parse_error (file, line, field) on a missing column or a bad value (negative amount,
/// share above 1000, a share with several GPUs, deletion before creation).
class openb_reader {
 public:
  /// Reads the header from `in` (`file` names it in errors). @throws parse_error on a missing
  /// column.
  explicit openb_reader(std::istream& in, std::string file = "<openb>")
      : r_(in, std::move(file), ',') {
    if (!r_.next()) r_.fail("header", "empty input: expected a header line");
    col_ = r_.columns<8>({"cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos",
                          "creation_time", "deletion_time"});
    specs_.intern("");
  }
  /// Reads the next pod into `out`; false at end of input. O(line length).
  bool next(trace_job& out) {
    if (!r_.next()) return false;
    out = trace_job{};
    out.id = job_id{static_cast<job_id::rep>(++rows_)};
    // The same rules as the packing experiment's reader (`read_openb_pods`, trace/openb.hpp).
    out.cpu = cpu_millis{r_.integer(col_[0], "cpu_milli", 0, openb_max_amount)};
    out.memory = memory_mib{r_.integer(col_[1], "memory_mib", 0, openb_max_amount)};
    const auto n = r_.integer(col_[2], "num_gpu", 0, openb_max_gpus);
    const auto milli = r_.integer(col_[3], "gpu_milli", 0, 1000);
    if (n > 1 && milli != 1000) {
      r_.fail("gpu_milli", "a multi-GPU pod takes whole GPUs (1000 milli each)");
    }
    if (n >= 1 && milli == 0) r_.fail("gpu_milli", "a pod with GPUs needs a share");
    if (n == 0 && milli != 0) r_.fail("gpu_milli", "a pod without GPUs has no share");
    if (n == 1 && milli < 1000) {
      out.gpu_share = milli_gpu{static_cast<std::int32_t>(milli)};
    } else {
      out.gpus = static_cast<std::int32_t>(n);
    }
    const auto spec = r_.field(col_[4], "gpu_spec");
    if (const auto bad = openb_spec_problem(spec)) r_.fail("gpu_spec", *bad);
    out.gpu_spec = specs_.intern(spec);
    const auto qos = r_.field(col_[5], "qos");
    if (!is_utf8(qos)) r_.fail("qos", "the tenant name is not UTF-8");
    out.tenant = tenant_id{tenants_.intern(qos)};
    const auto created = r_.integer(col_[6], "creation_time", 0, std::int64_t{1} << 40);
    const auto deleted = r_.integer(col_[7], "deletion_time", 0, std::int64_t{1} << 40);
    if (deleted < created) r_.fail("deletion_time", "before creation_time");
    out.submit = at(seconds(created));
    out.duration = seconds(deleted - created);
    return true;
  }
  /// The tenant names (`qos`) seen so far, by tenant id.
  [[nodiscard]] const string_table& tenants() const noexcept { return tenants_; }
  /// The `gpu_spec` strings seen so far, by index (0 is the empty spec: any model).
  [[nodiscard]] const string_table& gpu_specs() const noexcept { return specs_; }

 private:
  detail::text_reader r_;
  std::array<std::size_t, 8> col_{};
  string_table tenants_, specs_;
  std::uint32_t rows_ = 0;
};

/// Loads a pod list: sorted by creation (stable), not rebased. @throws parse_error.
[[nodiscard]] inline trace load_openb(std::istream& in, std::string file = "<openb>") {
  trace t;
  t.source = file;
  openb_reader rd(in, std::move(file));
  trace_job j;
  while (rd.next(j)) t.jobs.push_back(j);
  t.tenants = rd.tenants().names();
  t.gpu_specs = rd.gpu_specs().names();
  t.sort_by_submit();
  return t;
}

/// Loads the pod list in the file at `path`. @throws parse_error (also when it cannot be opened).
[[nodiscard]] inline trace load_openb_file(const std::string& path) {
  std::ifstream in = open_input(path);
  return load_openb(in, path);
}

GPUSCHED_END_NAMESPACE
