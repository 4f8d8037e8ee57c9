// SPDX-License-Identifier: Apache-2.0
/// @file
/// The cost of preempting a running job: how much training work it loses, in GPU-seconds.
///
/// ## The model
/// For a running job `r` at time `now`, with `w` its value weight (1 unless
/// `preemption_cost_model::value_weight` says otherwise) and `G` the GPU-equivalents it holds
/// (`held_gpus`: whole GPUs count 1, a share counts milli/1000, a MIG instance counts its
/// memory slices over the model's slices):
///
/// - **requeue** (the default action): the job stops now and later restarts from its last
///   checkpoint. It loses the work since that checkpoint and pays the restore:
///   `cost = G x w x (now - max(last checkpoint, start) + restore_cost)`. A checkpoint taken
///   before the current start (a restarted job) counts as the start: the work before the
///   restart is not lost again. **No checkpoint data** (`checkpoint.last` empty): all work since
///   the start is lost (documented default).
/// - **signal then wait** (checkpoint on signal, when `grace_period > 0`): a job with a known
///   `checkpoint_cost > 0` that fits in the grace period is told to checkpoint and stopped after
///   it; it loses only the checkpoint time: `cost = G x w x (checkpoint_cost + restore_cost)`.
///   Chosen only when cheaper than requeue; the preemptor waits `checkpoint_cost`.
/// - **suspend** (`mode == eviction_mode::suspend`): the runtime keeps the job's state (for
///   example a device checkpoint to host memory); it loses no work and pays the resume:
///   `cost = G x w x restore_cost`.
/// - **shrink** (elastic jobs): groups with `min_count < count` release tasks down towards the
///   minimum; the job keeps running and its progress (elastic frameworks keep the model state
///   on the surviving workers) but every worker pauses to re-form:
///   `cost = G x w x shrink_pause`, `shrink_pause` defaulting to the job's `restore_cost`;
///   with `shrink_loses_progress` (e.g. a framework that restarts all workers from the last
///   checkpoint on a membership change) the requeue cost of the whole job is used instead.
///
/// Laws: every cost is finite and >= 0; more time since the checkpoint never lowers the
/// requeue cost; a larger weight never lowers any cost.
/// Bad input throws `invalid_value_error` naming the job and field: a negative weight,
/// negative checkpoint or restore cost, a checkpoint or start time after `now`.
#pragma once

#include <algorithm>  // std::max
#include <bit>        // std::popcount
#include <cmath>      // std::isfinite
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/time.hpp"
#include "gpusched/policy/context.hpp"
#include "gpusched/policy/decision.hpp"
#include "gpusched/workload/ledger.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// How a victim that is stopped whole is stopped.
enum class eviction_mode : std::uint8_t {
  requeue,  ///< killed and requeued; restarts from its last checkpoint
  suspend,  ///< paused, state kept by the runtime (see the file documentation)
};

/// @brief GPU-equivalents of some task allocations: whole GPUs and shares count milli/1000,
/// a MIG instance its memory slices over the model's memory slices. O(grants).
[[nodiscard]] inline double held_gpus(const cluster& c, std::span<const task_allocation> tasks) {
  double g = 0;
  for (const auto& t : tasks) {
    for (const auto& gr : t.gpus) {
      if (gr.mig_slots != 0) {
        const auto slices = c.catalog()[c.gpu(gr.gpu).model].mig.memory_slices;
        g += slices == 0 ? 0.0
                         : static_cast<double>(std::popcount(static_cast<unsigned>(gr.mig_slots))) /
                               static_cast<double>(slices);
      } else {
        g += static_cast<double>(gr.milli.value()) / 1000.0;
      }
    }
  }
  return g;
}

/// @brief One option for preempting one job: what is done and what it costs.
struct preemption_option {
  /// What is done to the job (requeue, suspend, shrink, signal then wait).
  victim_action action = victim_action::requeue;
  double gpus = 0;              ///< GPU-equivalents released
  double lost_gpu_seconds = 0;  ///< the cost
  sim_duration wait{0};         ///< signal_then_wait: delay before the GPUs are free
};

/// @brief Parameters of the cost model; see the file documentation.
struct preemption_cost_model {
  /// Per-job value weight (>= 0, finite); empty: 1 for every job.
  std::function<double(const job_spec&)> value_weight;
  /// Time a victim is given after a signal; > 0 enables checkpoint on signal.
  sim_duration grace_period{0};
  /// What an eviction does: requeue (restart from the last checkpoint) or suspend.
  eviction_mode mode = eviction_mode::requeue;
  /// Pause of an elastic job's workers when it shrinks; empty: the job's `restore_cost`.
  std::optional<sim_duration> shrink_pause{};
  /// Shrinking restarts the whole job from its last checkpoint (cost as requeue).
  bool shrink_loses_progress = false;

  /// @throws invalid_value_error for a negative grace period or shrink pause.
  void validate() const {
    if (grace_period < sim_duration{0}) {
      throw invalid_value_error(error_id::invalid_value, "preemption cost model", "grace_period",
                                std::to_string(grace_period.count()) + "ms",
                                "must not be negative");
    }
    if (shrink_pause && *shrink_pause < sim_duration{0}) {
      throw invalid_value_error(error_id::invalid_value, "preemption cost model", "shrink_pause",
                                std::to_string(shrink_pause->count()) + "ms",
                                "must not be negative");
    }
  }

  /// The job's weight. @throws invalid_value_error if negative or not finite.
  [[nodiscard]] double weight(const job_spec& j) const {
    if (!value_weight) return 1.0;
    return weight_of(j);
  }

 private:
  [[nodiscard]] double weight_of(const job_spec& j) const {
    const double w = value_weight(j);
    if (!(w >= 0) || !std::isfinite(w)) {
      throw invalid_value_error(error_id::invalid_value, where(j), "value_weight",
                                std::to_string(w), "must be finite and not negative");
    }
    return w;
  }

 public:
  /// Seconds of work `r` loses if stopped at `now` without a fresh checkpoint.
  /// @throws invalid_value_error for bad checkpoint data (see the file documentation).
  [[nodiscard]] static double seconds_since_checkpoint(const running_job& r, sim_time now) {
    check(r, now);
    sim_time from = r.start;
    if (r.spec.checkpoint.last) from = std::max(from, *r.spec.checkpoint.last);
    return to_seconds(now - from);
  }

  /// The cheapest way to stop `r` whole (requeue, signal then wait, or suspend) and its cost.
  /// O(tasks of `r`). @throws invalid_value_error for bad input.
  [[nodiscard]] preemption_option evict(const cluster& c, const running_job& r,
                                        sim_time now) const {
    return evict_holding(held_gpus(c, r.tasks), r, now);
  }

  /// `evict` for a job that holds `gpus` GPU-equivalents (`held_gpus(c, r.tasks)`, for callers
  /// that summed them already). O(1). @throws invalid_value_error for bad input.
  [[nodiscard]] preemption_option evict_holding(double gpus, const running_job& r,
                                                sim_time now) const {
    const double since = seconds_since_checkpoint(r, now);
    const double w = weight(r.spec);
    const auto& ck = r.spec.checkpoint;
    preemption_option o;
    o.gpus = gpus;
    const double restore = to_seconds(ck.restore_cost);
    if (mode == eviction_mode::suspend) {
      o.action = victim_action::suspend;
      o.lost_gpu_seconds = o.gpus * w * restore;
      return o;
    }
    o.action = victim_action::requeue;
    o.lost_gpu_seconds = o.gpus * w * (since + restore);
    if (grace_period > sim_duration{0} && ck.checkpoint_cost > sim_duration{0} &&
        ck.checkpoint_cost <= grace_period) {
      const double signalled = o.gpus * w * (to_seconds(ck.checkpoint_cost) + restore);
      if (signalled < o.lost_gpu_seconds) {
        o.action = victim_action::signal_then_wait;
        o.lost_gpu_seconds = signalled;
        o.wait = ck.checkpoint_cost;
      }
    }
    return o;
  }

  /// The cost of shrinking `r` so that it releases `released` (its own tasks). O(tasks).
  /// @throws invalid_value_error for bad input.
  [[nodiscard]] preemption_option shrink(const cluster& c, const running_job& r,
                                         std::span<const task_allocation> released,
                                         sim_time now) const {
    preemption_option o;
    o.action = victim_action::shrink;
    o.gpus = held_gpus(c, released);
    if (shrink_loses_progress) {
      const double since = seconds_since_checkpoint(r, now);
      o.lost_gpu_seconds = held_gpus(c, r.tasks) * weight(r.spec) *
                           (since + to_seconds(r.spec.checkpoint.restore_cost));
      return o;
    }
    check(r, now);
    const sim_duration pause = shrink_pause.value_or(r.spec.checkpoint.restore_cost);
    o.lost_gpu_seconds = held_gpus(c, r.tasks) * weight(r.spec) * to_seconds(pause);
    return o;
  }

 private:
  static std::string where(const job_spec& j) {
    return "running job " + std::to_string(j.id.value()) +
           (j.name.empty() ? "" : " '" + j.name + "'");
  }
  /// Validates the checkpoint data of `r` at `now`: an inline test, the throw out of line.
  static void check(const running_job& r, sim_time now) {
    const auto& ck = r.spec.checkpoint;
    if (ck.checkpoint_cost >= sim_duration{0} && ck.restore_cost >= sim_duration{0} &&
        ck.interval >= sim_duration{0} && (!ck.last || *ck.last <= now) && r.start <= now) {
      return;
    }
    report(r, now);
  }
  [[noreturn]] static void report(const running_job& r, sim_time now) {
    const auto& ck = r.spec.checkpoint;
    if (ck.checkpoint_cost < sim_duration{0} || ck.restore_cost < sim_duration{0} ||
        ck.interval < sim_duration{0}) {
      throw invalid_value_error(error_id::invalid_value, where(r.spec), "checkpoint",
                                std::to_string(ck.interval.count()) + "/" +
                                    std::to_string(ck.checkpoint_cost.count()) + "/" +
                                    std::to_string(ck.restore_cost.count()) + "ms",
                                "interval and costs must not be negative");
    }
    if (ck.last && *ck.last > now) {
      throw invalid_value_error(
          error_id::invalid_value, where(r.spec), "checkpoint.last",
          std::to_string(ck.last->time_since_epoch().count()) + "ms",
          "is in the future (now is " + std::to_string(now.time_since_epoch().count()) + "ms)");
    }
    if (r.start > now) {
      throw invalid_value_error(
          error_id::invalid_value, where(r.spec), "start",
          std::to_string(r.start.time_since_epoch().count()) + "ms",
          "is in the future (now is " + std::to_string(now.time_since_epoch().count()) + "ms)");
    }
    throw invalid_value_error(error_id::invalid_value, where(r.spec), "checkpoint", "?",
                              "invalid");  // not reached: `check` calls this only on bad data
  }
};

/// @brief The work lost if `victims` are stopped whole at `ctx.now()`, under `model`
/// (each victim at its cheapest whole-job action). For comparing plans of any policy.
/// O(tasks of the victims). @throws invalid_value_error (unknown_id) naming a victim that is
/// not running; bad checkpoint data as `preemption_cost_model::evict`.
[[nodiscard]] inline double lost_gpu_seconds(const schedule_context& ctx,
                                             const preemption_cost_model& model,
                                             std::span<const job_id> victims) {
  double sum = 0;
  for (const job_id v : victims) {
    const running_job* r = ctx.book().find(v);
    if (r == nullptr) {
      throw invalid_value_error(error_id::unknown_id, "lost work estimate", "victim",
                                std::to_string(v.value()), "not a running job");
    }
    sum += model.evict(ctx.state(), *r, ctx.now()).lost_gpu_seconds;
  }
  return sum;
}

GPUSCHED_END_NAMESPACE
