// SPDX-License-Identifier: Apache-2.0
/// @file
/// The plain records of a simulation: its input job (`sim_job`) and its results, per job
/// (`job_record`), per sample (`sim_sample`, `tenant_sample`) and in total (`sim_totals`).
/// `simulator` (`sim/simulator.hpp`) fills them; `metrics/` reads them without needing the
/// simulator.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/ids.hpp"
#include "gpusched/core/time.hpp"
#include "gpusched/workload/job.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief One data-parallel job's iteration: computation and gradient volume (read by the
/// communication model, sim/communication.hpp).
struct comm_profile {
  double compute_ms = 0;  ///< computation per iteration, ms (at one GPU's speed)
  double sync_bytes = 0;  ///< bytes all-reduced per iteration (the gradients)
  friend bool operator==(const comm_profile&, const comm_profile&) noexcept = default;
};

/// @brief A job to simulate: its spec and its work (service time at full size).
struct sim_job {
  /// The job as submitted.
  job_spec spec{};
  /// Its work: service time at full size.
  sim_duration work{};
  /// Its iteration's computation and gradient volume, for the communication model; none: the
  /// model's default mix (`default_comm_mix`). Ignored with the model off.
  std::optional<comm_profile> comm{};
};

/// What became of a job.
enum class job_outcome : std::uint8_t { finished, rejected, unfinished };

/// @brief Per-job result. GPU-time figures are in GPU-milliseconds.
struct job_record {
  /// The job.
  job_id id;
  /// Its tenant.
  tenant_id tenant;
  /// Its priority.
  std::int32_t priority = 0;
  std::int64_t gpus_milli = 0;  ///< GPU-milli requested at full size
  /// When it arrived.
  sim_time submit{};
  /// When it first started, if it did.
  std::optional<sim_time> first_start;
  /// When it finished, if it did.
  std::optional<sim_time> finish;
  /// Its work (service time at full size).
  sim_duration work{};
  /// Finished, rejected or unfinished when the run ended.
  job_outcome outcome = job_outcome::unfinished;
  /// Times it started (the first start and every restart).
  std::int32_t starts = 0;
  /// Times it was preempted.
  std::int32_t preemptions = 0;
  /// Times it was stopped by a failure.
  std::int32_t failures = 0;
  std::int32_t resizes = 0;  ///< times shrunk while running (elastic resize events)
  std::int32_t grows = 0;    ///< times grown while running (the pipeline's growth step)
  /// Checkpoints it wrote.
  std::int32_t checkpoints = 0;
  double lost_preemption_gpu_ms = 0;  ///< GPU-time of progress lost to preemption
  double lost_failure_gpu_ms = 0;     ///< GPU-time of progress lost to failures
  double overhead_gpu_ms = 0;         ///< GPU-time spent writing checkpoints and restoring
  double allocated_gpu_ms = 0;        ///< GPU-time held
  /// Why a rejected job was rejected: the admission's reason as one line of English
  /// (`describe(reason)`, e.g. "needs 64 GPUs in all, more than the whole cluster has (16)");
  /// empty for every other outcome.
  std::string reason{};
};

/// @brief One tenant's state in a sample: GPUs held and GPUs wanted (the full requests of its
/// pending and running jobs).
struct tenant_sample {
  /// The tenant.
  tenant_id tenant;
  /// GPUs its running jobs hold.
  double held_gpus = 0;
  /// GPUs its pending and running jobs ask for (full requests).
  double demand_gpus = 0;
  friend bool operator==(const tenant_sample&, const tenant_sample&) noexcept = default;
};

/// @brief One time-series sample (state just before the sample time).
struct sim_sample {
  /// The sample time.
  sim_time t{};
  double allocated_gpus = 0;  ///< GPU-milli held / 1000
  /// GPUs in service.
  std::int64_t available_gpus = 0;
  /// Jobs waiting.
  std::size_t pending = 0;
  /// Jobs running.
  std::size_t running = 0;
  /// Free whole GPUs on nodes that are partly used, over all free whole GPUs in service (0 when
  /// none is free): the share of idle GPUs a node-sized gang cannot use.
  double fragmentation = 0;
  /// Tenants with pending or running work, by tenant id (with `sim_config::sample_tenants`).
  std::vector<tenant_sample> tenants{};
};

/// @brief Cluster-wide totals. Integrals in GPU-milli x ms.
struct sim_totals {
  /// The first event's time.
  sim_time start{};
  /// The last event's time.
  sim_time end{};
  /// GPUs in the cluster.
  std::int64_t capacity_gpus = 0;
  double allocated_integral = 0;  ///< held GPU-milli integrated over time
  double down_integral = 0;       ///< GPU-milli out of service integrated over time
  /// Events processed.
  std::uint64_t events = 0;
  /// Scheduling cycles run.
  std::uint64_t cycles = 0;
  std::uint64_t failures = 0;      ///< node failures
  std::uint64_t gpu_failures = 0;  ///< GPU failures
  /// Preemptions (evictions by a preemption policy).
  std::uint64_t preemptions = 0;
  std::uint64_t resizes = 0;      ///< elastic resize events (a running job shrunk)
  std::uint64_t grows = 0;        ///< a running elastic job grown (counted apart from `resizes`)
  /// Communication model with link sharing: running jobs whose rate changed because another
  /// job started or stopped on a link they share.
  std::uint64_t comm_rate_changes = 0;
  bool stopped_at_limit = false;  ///< the run ended at `sim_config::time_limit`
  bool stopped_at_cycle_limit = false;  ///< the run ended at `sim_config::max_cycles`
  bool samples_capped = false;    ///< sampling stopped at `sim_config::max_samples`
};

GPUSCHED_END_NAMESPACE
