// SPDX-License-Identifier: Apache-2.0
/// @file
/// `job_queue`: pending jobs, validated on entry, with unique ids. The pipeline reads it as a
/// span; the caller removes what was admitted.
#pragma once

#include <algorithm>  // std::remove_if
#include <span>
#include <string>
#include <unordered_set>
#include <utility>  // std::move
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/ids.hpp"
#include "gpusched/resource/gpu_model.hpp"
#include "gpusched/workload/job.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Pending jobs in arrival order. `push` is O(groups) amortised, `erase_if` O(n).
class job_queue {
 public:
  /// Validates `j` against `catalog` and appends it. @throws invalid_value_error on a bad job
  /// (see `validate(job_spec)`) or an id already queued; the queue is unchanged then.
  void push(job_spec j, const gpu_catalog& catalog) {
    validate(j, catalog);
    if (ids_.contains(j.id)) {
      throw invalid_value_error(error_id::duplicate_id, "job queue", "id",
                                std::to_string(j.id.value()), "already queued");
    }
    ids_.insert(j.id);
    try {
      jobs_.push_back(std::move(j));
    } catch (...) {
      ids_.erase(j.id);
      throw;
    }
  }
  /// Removes the jobs for which `pred(job)` holds, keeping the others' order.
  template <class Pred>
  std::size_t erase_if(Pred pred) {
    const auto it = std::remove_if(jobs_.begin(), jobs_.end(), [&](const job_spec& j) {
      if (!pred(j)) return false;
      ids_.erase(j.id);
      return true;
    });
    const auto n = static_cast<std::size_t>(jobs_.end() - it);
    jobs_.erase(it, jobs_.end());
    return n;
  }
  /// True when a job of id `id` is queued. O(1) expected.
  [[nodiscard]] bool contains(job_id id) const noexcept { return ids_.contains(id); }
  /// The queued jobs in arrival order (what `pipeline::schedule` takes).
  [[nodiscard]] std::span<const job_spec> jobs() const noexcept { return jobs_; }
  /// Number of queued jobs.
  [[nodiscard]] std::size_t size() const noexcept { return jobs_.size(); }
  /// True when no job is queued.
  [[nodiscard]] bool empty() const noexcept { return jobs_.empty(); }

 private:
  std::vector<job_spec> jobs_;
  std::unordered_set<job_id> ids_;
};

GPUSCHED_END_NAMESPACE
