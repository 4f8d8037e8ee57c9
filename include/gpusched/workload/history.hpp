// SPDX-License-Identifier: Apache-2.0
/// @file
/// Job history: what the jobs of a run have done so far, kept by whoever drives the cycles
/// (the simulator) and read by the policies that depend on the past.
/// - `service_record`: the service each job has received (GPU-seconds and executed time), read
///   by the attained-service orderings and preemptions (`las_ordering`, `gittins_ordering`,
///   `srtf_ordering`, `finish_time_fairness_ordering`, `las_preemption`, `srtf_preemption`);
///   the simulator feeds it (through `job_history`).
/// - `placement_memory`: where each job last ran, so that a placement policy can send a job that
///   lost its resources (a node failure, a preemption) back to the same topology domain, where
///   its data, caches and network neighbours are. The simulator keeps it up to date (through
///   `job_history`); `topology_aware_placement::prefer_previous` reads it.
/// - `job_history`: both, as one value. A pipeline owns one (`pipeline::history()`), the
///   simulator (or a host scheduler) feeds it, and every policy reads it through
///   `schedule_context::history()`: no wiring between the writer and the readers.
#pragma once

#include <cmath>  // std::isfinite
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpusched/cluster/allocation.hpp"  // node_index
#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/ids.hpp"
#include "gpusched/core/time.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Service each job has received so far: GPU-seconds and executed wall time.
/// O(1) expected per call. The simulator calls `add` when a job stops (preempted or done).
class service_record {
 public:
  /// @throws invalid_value_error naming the job and field when a value is negative or not
  /// finite; nothing changes then.
  void add(job_id j, double gpu_seconds, sim_duration executed) {
    const std::string where = "job " + std::to_string(j.value());
    if (!std::isfinite(gpu_seconds) || gpu_seconds < 0) {
      throw invalid_value_error(error_id::invalid_value, where, "gpu_seconds",
                                std::to_string(gpu_seconds), "must be finite and not negative");
    }
    if (executed < sim_duration{0}) {
      throw invalid_value_error(error_id::invalid_value, where, "executed",
                                std::to_string(executed.count()) + "ms", "must not be negative");
    }
    auto& e = entries_[j];
    e.gpu_seconds += gpu_seconds;
    e.executed += executed;
    ++version_;
  }
  /// GPU-seconds `j` has received in all its stints (0 for an unknown job).
  [[nodiscard]] double gpu_seconds(job_id j) const {
    const auto it = entries_.find(j);
    return it == entries_.end() ? 0.0 : it->second.gpu_seconds;
  }
  /// Wall time `j` has run in all its stints (0 for an unknown job).
  [[nodiscard]] sim_duration executed(job_id j) const {
    const auto it = entries_.find(j);
    return it == entries_.end() ? sim_duration{0} : it->second.executed;
  }
  /// Forgets `j` (a finished job); bumps `version()`.
  void erase(job_id j) {
    entries_.erase(j);
    ++version_;
  }
  /// A generation counter, bumped by every `add` and `erase` (also one that changed nothing):
  /// a holder that caches values derived from the record (`las_preemption`) tells from it
  /// whether the record may have changed since. O(1).
  [[nodiscard]] std::uint64_t version() const noexcept { return version_; }

 private:
  struct entry {
    double gpu_seconds = 0;
    sim_duration executed{0};
  };
  std::unordered_map<job_id, entry> entries_;
  std::uint64_t version_ = 0;  // see version()
};

/// @brief Last placement (its nodes, one entry per task) of each job. O(1) expected per call.
class placement_memory {
 public:
  /// Records `nodes` as `j`'s placement (replacing any earlier one).
  void remember(job_id j, std::span<const node_index> nodes) {
    auto& v = nodes_[j];
    v.assign(nodes.begin(), nodes.end());
  }
  /// Forgets `j` (a finished job). Nothing happens for an unknown job.
  void forget(job_id j) { nodes_.erase(j); }
  /// The nodes of `j`'s last placement; empty when it never ran or was forgotten.
  [[nodiscard]] std::span<const node_index> nodes(job_id j) const {
    const auto it = nodes_.find(j);
    return it == nodes_.end() ? std::span<const node_index>{}
                              : std::span<const node_index>(it->second);
  }
  /// Number of jobs with a remembered placement.
  [[nodiscard]] std::size_t size() const noexcept { return nodes_.size(); }

 private:
  std::unordered_map<job_id, std::vector<node_index>> nodes_;
};

namespace detail {
/// `t` if it is a valid list of attained-service queue thresholds (finite, positive, strictly
/// increasing), as `las_ordering` and `las_preemption` take them. O(thresholds).
/// @throws invalid_value_error naming the first bad threshold (field `thresholds`).
inline std::vector<double> checked_thresholds(std::vector<double> t) {
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!std::isfinite(t[i]) || t[i] <= 0 || (i > 0 && t[i] <= t[i - 1])) {
      throw invalid_value_error(error_id::invalid_value, "queue threshold " + std::to_string(i),
                                "thresholds", std::to_string(t[i]),
                                "thresholds must be finite, positive and strictly increasing");
    }
  }
  return t;
}
}  // namespace detail

/// @brief What the driver of the cycles records about jobs across cycles: attained service and
/// last placements. A pipeline owns one (`pipeline::history()`); the simulator feeds it; policies
/// read it through `schedule_context::history()`. A value: copy it to fork a run.
struct job_history {
  /// Attained service of each job (LAS, Themis, Tiresias, fair share by usage).
  service_record service;
  /// Last placement of each job (placement affinity, locality metrics).
  placement_memory placement;
  /// Forgets `j` everywhere (a finished job). O(1) expected.
  void forget(job_id j) {
    service.erase(j);
    placement.forget(j);
  }
};

/// An empty history, for readers given none. Immutable: no state is shared through it.
[[nodiscard]] inline const job_history& empty_job_history() noexcept {
  static const job_history none{};
  return none;
}

GPUSCHED_END_NAMESPACE
