// SPDX-License-Identifier: Apache-2.0
/// @file
/// The simulator's settings (`sim_config`, `cycle_trigger`) and its job input (`job_source`,
/// `source_from`). Every model the simulator adds to the plain event loop is a member of
/// `sim_config` and is off by default, so that a default `sim_config` reproduces the runs of
/// earlier versions exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>  // std::move
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/time.hpp"
#include "gpusched/sim/communication.hpp"
#include "gpusched/sim/records.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// When the simulator runs a scheduling cycle.
enum class cycle_trigger : std::uint8_t {
  on_event,  ///< after every event time with an arrival, completion, preemption, failure or repair
  interval,  ///< every `cycle_interval`, while work remains
};

/// @brief Simulator settings.
struct sim_config {
  /// When cycles run: after every event time, or at a fixed interval.
  cycle_trigger trigger = cycle_trigger::on_event;
  /// The interval between cycles with `cycle_trigger::interval`.
  sim_duration cycle_interval = seconds(60);
  /// Run `check_invariants` after every event time (O(cluster) each; throws
  /// `std::logic_error` with the report on a violation). Defaults to on in debug builds.
#ifdef NDEBUG
  bool check_invariants = false;
#else
  bool check_invariants = true;
#endif
  /// Mean time between failures of one node (0: no failures). Failures hit a uniformly drawn
  /// node; the cluster-wide failure rate is `nodes / node_mtbf`.
  sim_duration node_mtbf{0};
  /// Time until a failed node is back in service.
  sim_duration repair_time = seconds(3600);
  /// Mean time between failures of one GPU (0: no GPU failures). Failures hit a uniformly
  /// drawn GPU (a GPU on a node out of service, or already failed, is not hit again); the
  /// cluster-wide rate is `gpus / gpu_mtbf`. Drawn from their own random stream, so enabling
  /// them leaves the node failure times of a seed unchanged.
  sim_duration gpu_mtbf{0};
  /// Time until a failed GPU is back in service.
  sim_duration gpu_repair_time = seconds(3600);
  /// A preempted job saves its progress at once (graceful preemption, as Tiresias assumes);
  /// otherwise it keeps only its last periodic checkpoint.
  bool preemption_saves_progress = false;
  /// Pause of a shrunk elastic job's workers; empty: the job's `restore_cost`.
  std::optional<sim_duration> shrink_pause{};
  /// Pause of a grown elastic job's workers (the growth step); empty: the job's `restore_cost`.
  std::optional<sim_duration> grow_pause{};
  /// A shrunk (or grown) job restarts from its last checkpoint (a framework that restarts every
  /// worker on a membership change) instead of keeping its progress.
  bool shrink_loses_progress = false;
  /// Record each tenant's held and wanted GPUs in every sample (for fairness over time).
  /// O(tenants) per sample; the per-tenant sums are kept incrementally.
  bool sample_tenants = true;
  /// Time-series sample spacing (0: no samples).
  sim_duration sample_interval = seconds(600);
  /// At most this many samples are kept (memory is O(max_samples x tenants)); when a run spans
  /// more, sampling stops there and `sim_totals::samples_capped` is set. Bounds the memory of a
  /// trace with a far-future job (a job dated years after the others).
  std::size_t max_samples = 1'000'000;
  /// Seed of the simulator's engine (the pipeline's and the failures' draws): the same seed
  /// gives the same run.
  std::uint64_t seed = 1;
  /// Simulated time, counted from the first event, at which the run stops (0: none). Jobs
  /// still pending or running then are `unfinished`; allocation, down time and samples are
  /// accounted up to the limit, and `sim_totals::stopped_at_limit` is set. Without a limit a
  /// job that cannot finish (for example one longer than the mean time between failures of
  /// its GPUs, with no checkpoints) restarts for ever and the run never ends.
  sim_duration time_limit{0};
  /// At most this many scheduling cycles (0: no limit). When the run reaches it, it stops there,
  /// as at `time_limit`: jobs still pending or running are `unfinished` and
  /// `sim_totals::stopped_at_cycle_limit` is set. Bounds the cost of an interval trigger behind
  /// a job that waits for a very long one (a cycle at every tick while it waits).
  std::uint64_t max_cycles = 0;
  /// Communication-aware job speed (sim/communication.hpp): a job spread over slow links
  /// progresses more slowly. Off by default.
  comm_config comm{};
};

/// A source of jobs in non-decreasing submit order; returns nothing at the end.
using job_source = std::function<std::optional<sim_job>()>;

/// A source over a vector (moved from as jobs are pulled).
inline job_source source_from(std::vector<sim_job>& jobs) {
  return [&jobs, i = std::size_t{0}]() mutable -> std::optional<sim_job> {
    if (i >= jobs.size()) return std::nullopt;
    return std::move(jobs[i++]);
  };
}

GPUSCHED_END_NAMESPACE
