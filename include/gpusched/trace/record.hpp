// SPDX-License-Identifier: Apache-2.0
/// @file
/// Normalised trace records: `trace_job` (one job of a workload trace, compact: no strings, about
/// 48 bytes), `trace` (the records plus the interned tenant and GPU-spec names), and
/// `to_job_spec`, which turns a record into a `job_spec` gang for a given node size when the
/// simulator needs it (so a 100,000-job trace never holds 100,000 `job_spec`s).
///
/// Every loader (`trace/philly.hpp`, `trace/tiresias.hpp`, `trace/openb.hpp`,
/// `trace/gavel.hpp`) and the synthetic generator (`trace/synthetic.hpp`) produce `trace_job`s.
#pragma once

#include <algorithm>  // std::sort, std::is_sorted
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>  // std::move
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/ids.hpp"
#include "gpusched/core/quantity.hpp"
#include "gpusched/core/time.hpp"
#include "gpusched/resource/gpu_model.hpp"
#include "gpusched/workload/job.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief One job of a trace, normalised. Times are relative to the trace's epoch (see
/// `trace::rebase`).
struct trace_job {
  /// The job's id in the trace (a file's own id, or the 1-based row).
  job_id id{};
  /// When it arrived, after the trace's epoch.
  sim_time submit{};
  sim_duration duration{};  ///< service time at the requested size
  std::int32_t gpus = 0;    ///< whole GPUs of the job in all (0: CPU-only or a share)
  milli_gpu gpu_share{0};   ///< for a single fractional GPU (openb): the share; else 0
  cpu_millis cpu{};         ///< CPU of the whole job (0: unknown; see `job_conversion`)
  memory_mib memory{};      ///< memory of the whole job (0: unknown)
  tenant_id tenant{0};      ///< index into `trace::tenants`
  /// Its priority (0 where the trace has none).
  std::int32_t priority = 0;
  std::uint32_t gpu_spec = 0;  ///< index into `trace::gpu_specs`; 0: any model
};

/// @brief Interns strings to dense indices (tenant names, GPU-spec strings). O(1) average.
class string_table {
 public:
  /// The index of `s`, adding it if new.
  std::uint32_t intern(std::string_view s) {
    const auto it = index_.find(std::string(s));
    if (it != index_.end()) return it->second;
    const auto i = static_cast<std::uint32_t>(names_.size());
    names_.emplace_back(s);
    index_.emplace(names_.back(), i);
    return i;
  }
  /// The strings, by index.
  [[nodiscard]] const std::vector<std::string>& names() const noexcept { return names_; }
  /// Number of strings.
  [[nodiscard]] std::size_t size() const noexcept { return names_.size(); }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t> index_;
};

/// @brief A loaded trace: compact records in file order plus the names they refer to.
struct trace {
  std::string source;                  ///< file name or generator description
  std::vector<trace_job> jobs;         ///< in file order until `sort_by_submit`
  std::vector<std::string> tenants;    ///< tenant names (Philly VC, ...), by `tenant_id`
  std::vector<std::string> gpu_specs;  ///< [0] = "" (any); openb `gpu_spec` strings
  std::size_t skipped = 0;             ///< rows a loader skipped by option (documented there)

  /// Stable sort by submit time (ties keep file order). O(n log n); n indices of scratch.
  /// (Not `std::stable_sort`: libstdc++ 12's uses a helper clang 19 flags as deprecated.)
  void sort_by_submit() {
    if (std::is_sorted(jobs.begin(), jobs.end(), [](const trace_job& a, const trace_job& b) {
          return a.submit < b.submit;
        })) {
      return;
    }
    std::vector<std::uint32_t> order(jobs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return jobs[a].submit != jobs[b].submit ? jobs[a].submit < jobs[b].submit : a < b;
    });
    std::vector<trace_job> sorted;
    sorted.reserve(jobs.size());
    for (const auto i : order) sorted.push_back(jobs[i]);
    jobs = std::move(sorted);
  }
  /// Shifts every submit time so that the earliest is 0. O(n).
  void rebase() {
    if (jobs.empty()) return;
    sim_time lo = jobs.front().submit;
    for (const auto& j : jobs) lo = std::min(lo, j.submit);
    for (auto& j : jobs) j.submit = sim_time{j.submit - lo};
  }
  /// Sum of `gpus x duration` in GPU-hours (fractional shares counted by their share).
  [[nodiscard]] double gpu_hours() const noexcept {
    double h = 0;
    for (const auto& j : jobs) {
      const double g = j.gpus > 0 ? j.gpus : j.gpu_share.value() / 1000.0;
      h += g * to_seconds(j.duration) / 3600.0;
    }
    return h;
  }
};

/// @brief How a record becomes a gang on a cluster whose nodes have `gpus_per_node` GPUs.
struct job_conversion {
  std::int32_t gpus_per_node = 8;  ///< a job larger than this is split into node-sized tasks
  cpu_millis cpu_per_gpu{0};       ///< used when the record has no CPU figure
  memory_mib memory_per_gpu{0};    ///< used when the record has no memory figure
  checkpoint_info checkpoint{};    ///< copied into every job
  bool oracle_duration = true;     ///< set `expected_duration` (for SRSF-style oracles)
  /// Copied into every job's `preemptible`.
  bool preemptible = true;
};

/// Makes the gang for `r`: `g <= gpus_per_node` GPUs -> one task of `g` GPUs; more -> `g /
/// gpus_per_node` tasks of `gpus_per_node` GPUs plus one task with the remainder (a second
/// group). A share -> one task with that share; no GPU -> one CPU-only task. CPU and memory are
/// the record's (split evenly over tasks) or `per_gpu` figures times the task's GPUs.
/// `allowed` restricts the GPU models (resolve `trace::gpu_specs` with `resolve_gpu_spec`).
/// @pre `c.gpus_per_node > 0`. O(1) plus the job's two allocations.
[[nodiscard]] inline job_spec to_job_spec(const trace_job& r, const job_conversion& c,
                                          gpu_model_set allowed = {}) {
  GPUSCHED_EXPECTS(c.gpus_per_node > 0);
  job_spec j;
  j.id = r.id;
  j.tenant = r.tenant;
  j.priority = r.priority;
  j.submit = r.submit;
  if (c.oracle_duration) j.expected_duration = r.duration;
  j.checkpoint = c.checkpoint;
  j.preemptible = c.preemptible;
  const auto make = [&](std::int32_t gpus_per_task, std::int32_t all_tasks) -> task_request {
    task_request q;
    if (r.gpus > 0) {
      q.gpu = gpu_demand::whole(gpu_count{gpus_per_task});
    } else if (r.gpu_share > milli_gpu{0}) {
      q.gpu = gpu_demand::fraction(r.gpu_share);
    }
    q.allowed_models = allowed;
    const std::int64_t weight = std::max<std::int32_t>(gpus_per_task, 1);
    q.cpu = r.cpu > cpu_millis{0} ? cpu_millis{r.cpu.value() / all_tasks} : c.cpu_per_gpu * weight;
    q.memory = r.memory > memory_mib{0} ? memory_mib{r.memory.value() / all_tasks}
                                        : c.memory_per_gpu * weight;
    return q;
  };
  if (r.gpus <= c.gpus_per_node) {
    j.groups.push_back({.name = "task", .request = make(r.gpus, 1), .count = 1});
    return j;
  }
  const std::int32_t full = r.gpus / c.gpus_per_node;
  const std::int32_t rest = r.gpus % c.gpus_per_node;
  const std::int32_t all = full + (rest > 0 ? 1 : 0);
  j.groups.push_back({.name = "worker", .request = make(c.gpus_per_node, all), .count = full});
  if (rest > 0) j.groups.push_back({.name = "rest", .request = make(rest, all), .count = 1});
  return j;
}

/// The models named by an openb-style spec `"A|B"` (empty: any). @throws invalid_value_error
/// (unknown_name) for a name not in `catalog`.
[[nodiscard]] inline gpu_model_set resolve_gpu_spec(std::string_view spec,
                                                    const gpu_catalog& catalog) {
  gpu_model_set s;
  while (!spec.empty()) {
    const auto bar = spec.find('|');
    const auto name = spec.substr(0, bar);
    if (!name.empty()) s.insert(catalog.id(std::string(name), "gpu_spec", "model"));
    if (bar == std::string_view::npos) break;
    spec.remove_prefix(bar + 1);
  }
  return s;
}

GPUSCHED_END_NAMESPACE
