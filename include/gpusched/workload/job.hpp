// SPDX-License-Identifier: Apache-2.0
/// @file
/// Jobs: a job is a gang of task groups (e.g. 1 launcher + N workers), each task with the same
/// request; elastic groups run between `min_count` and `count` tasks. A job carries its tenant,
/// priority, submit time, optional expected duration, checkpoint state and preemptibility.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>  // std::move
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/ids.hpp"
#include "gpusched/core/quantity.hpp"
#include "gpusched/core/time.hpp"
#include "gpusched/resource/gpu_model.hpp"
#include "gpusched/resource/request.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief `count` tasks with the same request. Elastic when `min_count < count`.
///
/// Written with designated initializers, `{.name = "worker", .request = r, .count = 4}`, or,
/// for an elastic group, with `task_group::elastic("worker", r, 2, 8)`.
struct task_group {
  /// The group's name (in decisions and errors); unique within its job.
  std::string name{};
  /// What each task of the group needs from its node.
  task_request request{};
  std::int32_t count = 1;  ///< tasks wanted (the maximum for an elastic group)
  /// Fewest tasks the group can run with; absent means `count` (a rigid group).
  std::optional<std::int32_t> min_count{};

  /// An elastic group of `name`: runs with `min` to `max` tasks of `request` (`count = max`,
  /// `min_count = min`). Checked by `validate` like any group (1 <= min <= max).
  [[nodiscard]] static task_group elastic(std::string name, task_request request, std::int32_t min,
                                          std::int32_t max) {
    return {.name = std::move(name), .request = std::move(request), .count = max, .min_count = min};
  }

  /// The fewest tasks: `min_count`, or `count` when absent.
  [[nodiscard]] constexpr std::int32_t minimum() const noexcept {
    return min_count.value_or(count);
  }
  /// True when the group can run with fewer than `count` tasks.
  [[nodiscard]] constexpr bool elastic() const noexcept { return minimum() < count; }
};

/// @brief Checkpoint state of a job, for preemption cost.
struct checkpoint_info {
  sim_duration interval{0};         ///< 0: the job does not checkpoint periodically
  std::optional<sim_time> last{};   ///< time of the last checkpoint; none: never
  sim_duration checkpoint_cost{0};  ///< time to write one checkpoint
  sim_duration restore_cost{0};     ///< time to restore from one
};

/// @brief A job: an all-or-nothing gang of task groups.
///
/// Every field has a default; write it with designated initializers naming what matters,
/// e.g. `{.id = job_id{1}, .name = "train", .tenant = tenant_id{1}, .groups = {...}}`.
struct job_spec {
  /// The caller's id of the job; unique within a queue and a ledger.
  job_id id{};
  /// The job's name (in decisions and errors).
  std::string name{};
  /// The tenant that pays for the job (quotas, fair share).
  tenant_id tenant{0};
  std::int32_t priority = 0;  ///< larger is more important
  /// When the job was submitted (ordering by age, wait times).
  sim_time submit{};
  /// The expected run time, when known (backfill reservations, SRTF, preemption cost).
  std::optional<sim_duration> expected_duration{};
  /// Checkpoint state, for the cost of preempting the job.
  checkpoint_info checkpoint{};
  /// May be preempted; false makes it no policy's victim.
  bool preemptible = true;
  /// The task groups; the job runs when every group has its tasks (all or nothing).
  std::vector<task_group> groups{};

  /// Tasks at full size (sum of `count`).
  [[nodiscard]] std::int64_t task_count() const noexcept {
    std::int64_t n = 0;
    for (const auto& g : groups) n += g.count;
    return n;
  }
  /// Whole GPUs at full size (whole demands only).
  [[nodiscard]] gpu_count whole_gpus() const noexcept {
    gpu_count n{0};
    for (const auto& g : groups) n += g.request.gpu.whole_gpus() * g.count;
    return n;
  }
  /// Milli-GPU at full size (whole GPUs count 1000 each; MIG counts 0).
  [[nodiscard]] std::int64_t milli_gpus() const noexcept {
    std::int64_t n = 0;
    for (const auto& g : groups) n += std::int64_t{g.request.gpu.milli().value()} * g.count;
    return n;
  }
};

/// Checks a job's values against `catalog`. @throws invalid_value_error naming the job, the
/// group and the field: invalid id, no groups or zero tasks, a count or minimum out of range,
/// min > max, negative expected duration or checkpoint values, or a bad request (see
/// `validate(task_request)`). Strong guarantee: the job is not modified.
inline void validate(const job_spec& j, const gpu_catalog& catalog) {
  const std::string where =
      "job " + std::to_string(j.id.value()) + (j.name.empty() ? "" : " '" + j.name + "'");
  if (!j.id.valid()) {
    throw invalid_value_error(error_id::invalid_value, where, "id", "invalid", "a job needs an id");
  }
  if (j.groups.empty() || j.task_count() == 0) {
    throw invalid_value_error(error_id::invalid_value, where, "groups",
                              std::to_string(j.task_count()) + " tasks",
                              "a job needs at least one task");
  }
  if (j.expected_duration && *j.expected_duration < sim_duration{0}) {
    throw invalid_value_error(error_id::invalid_value, where, "expected_duration",
                              std::to_string(j.expected_duration->count()) + "ms",
                              "must not be negative");
  }
  const auto& c = j.checkpoint;
  if (c.interval < sim_duration{0} || c.checkpoint_cost < sim_duration{0} ||
      c.restore_cost < sim_duration{0}) {
    throw invalid_value_error(error_id::invalid_value, where, "checkpoint",
                              std::to_string(c.interval.count()) + "/" +
                                  std::to_string(c.checkpoint_cost.count()) + "/" +
                                  std::to_string(c.restore_cost.count()) + "ms",
                              "interval and costs must not be negative");
  }
  if (j.groups.size() > 0xFFFF) {
    throw invalid_value_error(error_id::invalid_value, where, "groups",
                              std::to_string(j.groups.size()), "at most 65535 groups");
  }
  for (const auto& g : j.groups) {
    const std::string gw = where + " group '" + g.name + "'";
    if (g.count <= 0) {
      throw invalid_value_error(error_id::invalid_value, gw, "count", std::to_string(g.count),
                                "must be positive");
    }
    if (g.min_count && *g.min_count <= 0) {
      throw invalid_value_error(error_id::invalid_value, gw, "min_count",
                                std::to_string(*g.min_count),
                                "must be positive (or absent for count)");
    }
    if (g.minimum() > g.count) {
      throw invalid_value_error(error_id::inconsistent, gw, "min_count",
                                std::to_string(g.minimum()),
                                "greater than count " + std::to_string(g.count));
    }
    validate(g.request, catalog, gw);
  }
}

GPUSCHED_END_NAMESPACE
