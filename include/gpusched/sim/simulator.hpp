// SPDX-License-Identifier: Apache-2.0
/// @file
/// A discrete-event simulator that drives any pipeline (static `pipeline<...>` or the run-time
/// `any_pipeline`) over a cluster and a stream of jobs.
///
/// Events: arrival, completion, periodic checkpoint (interval and cost from each job's
/// `checkpoint_info`), preemption (a victim loses the work done since its last checkpoint and
/// pays `restore_cost` when it restarts), node failure (exponential with mean time between
/// failures per node; the jobs on the node lose the work since their checkpoint and are
/// requeued; the node is out of service until a repair event after `repair_time`), GPU failure
/// (the same per GPU, with its own `gpu_mtbf` and `gpu_repair_time`: only the jobs holding a
/// grant on the failed GPU are interrupted, and the GPU, marked failed in the ledger, offers
/// nothing until its repair while the rest of its node stays in service), elastic
/// resize (a running elastic job shrunk by a preemption decision releases tasks, pauses its
/// workers and continues at its new size), repair, and scheduling ticks. The simulator owns
/// mutation: the pipeline commits admitted gangs and evictions into the ledger (so later jobs of a
/// cycle see them); the simulator turns each decision into job state (start, preempt), releases
/// completed jobs, and takes failed nodes and GPUs out of service through the ledger. Failures
/// can also be injected at given times (`inject_node_failure`, `inject_gpu_failure`).
///
/// Determinism: for one seed, one input and one pipeline, the output is identical. Simultaneous
/// events are handled in this order: completions, checkpoints, node failures, GPU failures,
/// node repairs, GPU repairs, arrivals, ticks; events of one kind at one time in the order they
/// were scheduled (a sequence number). All events at one time are applied before the one scheduling
/// cycle of that time.
///
/// Progress model: a job of full-size work `W` (ms at its requested size) started with `k` of its
/// `K` requested GPU-milli (elastic) progresses at rate `k/K`. Restoring (after any earlier
/// start) takes `restore_cost`, then the job alternates `interval` of progress and
/// `checkpoint_cost` of writing. Preemption or failure during a write loses that write.
///
/// Resize model (matching `preemption_cost_model::shrink`): a shrunk job keeps its progress
/// (elastic frameworks keep the model state on the surviving workers), every remaining worker
/// pauses for `shrink_pause` (default: the job's `restore_cost`, counted as overhead), and it
/// then progresses at `k'/K` for its new GPU-milli `k'`. With `shrink_loses_progress` the job
/// instead restarts from its last checkpoint (the work since is lost, counted as lost to
/// preemption) after the pause; when it is requeued, it restarts at whatever size the pipeline
/// grants.
///
/// Growth (the pipeline's growth step, `pipeline_options::grow`, on by default): a running
/// elastic job grown toward its maximum (`cycle_result::grown`) is resized the same way: the
/// allocation so far is accounted at the old size, it keeps its progress, pauses for
/// `grow_pause` (default: its `restore_cost`, counted as overhead at the new size) and then
/// progresses at `k'/K` (1 at full size). With `shrink_loses_progress` a grow also restarts
/// from the last checkpoint (the same framework restarts on any membership change). Grows are
/// counted in `job_record::grows` and `sim_totals::grows`, apart from `resizes` (shrinks). A
/// cycle also runs, on an event that triggers one, when no job is pending but a running job
/// could grow (a pipeline with `options().grow`).
#pragma once

#include <algorithm>  // std::min, std::max, std::sort
#include <cmath>      // std::log
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>  // std::shared_ptr
#include <optional>
#include <queue>
#include <span>
#include <stdexcept>  // std::logic_error
#include <string>
#include <unordered_map>
#include <utility>  // std::move
#include <vector>

#include "gpusched/check/invariants.hpp"
#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/random.hpp"
#include "gpusched/core/time.hpp"
#include "gpusched/pipeline/pipeline.hpp"
#include "gpusched/sim/records.hpp"
#include "gpusched/workload/history.hpp"
#include "gpusched/workload/job.hpp"
#include "gpusched/workload/ledger.hpp"

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

/// @brief The simulator over pipeline type `P` (any model of the pipeline interface:
/// `schedule(ledger&, span<const job_spec>, sim_time, random_engine&, cycle_result&)`).
template <class P = default_pipeline>
class simulator {
 public:
  /// Called after each event time's events and cycle: (time, ledger).
  using observer = std::function<void(sim_time, const ledger&)>;

  /// A simulator over `c`, scheduling with `pipeline`, configured by `cfg`. @throws
  /// invalid_value_error for a negative duration or interval in `cfg`.
  explicit simulator(cluster c, P pipeline = P{}, sim_config cfg = {})
      : book_(std::move(c)),
        pipe_(std::move(pipeline)),
        cfg_(cfg),
        rng_(cfg.seed),
        fail_rng_(cfg.seed ^ 0x9E3779B97F4A7C15ull),
        gpu_fail_rng_(cfg.seed ^ 0xD1B54A32D192ED03ull) {
    if (cfg_.cycle_interval <= sim_duration{0} && cfg_.trigger == cycle_trigger::interval) {
      throw invalid_value_error(error_id::invalid_value, "sim_config", "cycle_interval",
                                std::to_string(cfg_.cycle_interval.count()), "must be positive");
    }
    if (cfg_.node_mtbf < sim_duration{0} || cfg_.repair_time < sim_duration{0} ||
        cfg_.sample_interval < sim_duration{0}) {
      throw invalid_value_error(error_id::invalid_value, "sim_config", "node_mtbf/repair_time",
                                std::to_string(cfg_.node_mtbf.count()), "must not be negative");
    }
    if (cfg_.gpu_mtbf < sim_duration{0} || cfg_.gpu_repair_time < sim_duration{0}) {
      throw invalid_value_error(
          error_id::invalid_value, "sim_config", "gpu_mtbf/gpu_repair_time",
          std::to_string(std::min(cfg_.gpu_mtbf, cfg_.gpu_repair_time).count()) + "ms",
          "must not be negative");
    }
    if (cfg_.time_limit < sim_duration{0}) {
      throw invalid_value_error(error_id::invalid_value, "sim_config", "time_limit",
                                std::to_string(cfg_.time_limit.count()) + "ms",
                                "must not be negative");
    }
    if (cfg_.shrink_pause && *cfg_.shrink_pause < sim_duration{0}) {
      throw invalid_value_error(error_id::invalid_value, "sim_config", "shrink_pause",
                                std::to_string(cfg_.shrink_pause->count()) + "ms",
                                "must not be negative");
    }
    if (cfg_.grow_pause && *cfg_.grow_pause < sim_duration{0}) {
      throw invalid_value_error(error_id::invalid_value, "sim_config", "grow_pause",
                                std::to_string(cfg_.grow_pause->count()) + "ms",
                                "must not be negative");
    }
    totals_.capacity_gpus = book_.state().total_gpus();
  }

  /// Sets the function called after each event time's events and cycle.
  void set_observer(observer o) { observer_ = std::move(o); }
  /// Schedules a failure of node `n` at time `t`, in addition to random ones (call before
  /// `run`). It is handled like a random node failure (skipped if the node is already out of
  /// service) and repaired after `repair_time`. @throws invalid_value_error if `n` is not a
  /// node position. O(log events).
  void inject_node_failure(node_index n, sim_time t) {
    if (n.value() >= book_.state().node_count()) {
      throw invalid_value_error(error_id::unknown_id, "simulator", "node",
                                std::to_string(n.value()), "no such node position");
    }
    push(t, ev_failure, n.value(), injected);
  }
  /// Schedules a failure of GPU `g` at time `t` (call before `run`); handled like a random GPU
  /// failure and repaired after `gpu_repair_time`. @throws invalid_value_error if `g` is not a
  /// GPU index. O(log events).
  void inject_gpu_failure(gpu_index g, sim_time t) {
    if (g.value() >= book_.state().gpu_count()) {
      throw invalid_value_error(error_id::unknown_id, "simulator", "gpu", std::to_string(g.value()),
                                "no such GPU index");
    }
    push(t, ev_gpu_failure, g.value(), injected);
  }
  // The job history (`job_history`: attained service, last placements) lives in the pipeline
  // (`pipeline::history()`), where every policy reads it through the context; the simulator
  // keeps it up to date: when a job stops running (preempted, failed) it is credited `held GPUs
  // x seconds held` and the seconds held; its placement is recorded at start and resize; a
  // finished job is forgotten. A running job's current stint is not in the record (readers add
  // `milli_gpus() x (now - start)`, as `las_preemption` does).
  // Note on the service record: a run's service is added when the run ends (preemption,
  // failure); an elastic resize does not end it, so the record never counts a stint twice.
  // While a job runs, readers add `milli_gpus() x (now - start)` at its current size.

  /// Runs until no event remains, or until `sim_config::time_limit`. Jobs come from `source`
  /// in non-decreasing submit order (with a time limit, arrivals after it are never read).
  /// @throws invalid_value_error if the source goes back in time, repeats an id, or yields an
  /// invalid job (validated against the catalog); std::logic_error on an invariant violation
  /// when `check_invariants` is on. O(events x (log events + cycle cost)).
  void run(job_source source) {
    source_ = std::move(source);
    pull_arrival();
    if (cfg_.trigger == cycle_trigger::interval && !events_.empty()) {
      push(events_.top().t, ev_tick, 0, 0);
    }
    if (cfg_.node_mtbf > sim_duration{0} && book_.state().node_count() > 0 && !events_.empty()) {
      schedule_failure(events_.top().t);
    }
    if (cfg_.gpu_mtbf > sim_duration{0} && book_.state().gpu_count() > 0 && !events_.empty()) {
      schedule_gpu_failure(events_.top().t);
    }
    bool first = true;
    while (!events_.empty()) {
      // A random failure drawn before the last job finished, due after it: dropped, so that it
      // does not stretch the run (injected failures are kept).
      if (const event& top = events_.top();
          (top.kind == ev_failure || top.kind == ev_gpu_failure) && top.epoch != injected &&
          !work_remains()) {
        events_.pop();
        continue;
      }
      const sim_time t = events_.top().t;
      if (first) {
        totals_.start = t;
        now_ = t;
        next_sample_ = t;
        first = false;
      }
      if (cfg_.time_limit > sim_duration{0} && t > totals_.start + cfg_.time_limit) {
        advance(totals_.start + cfg_.time_limit);
        totals_.stopped_at_limit = true;
        // The job read ahead of its arrival (after the limit) never arrived: not counted.
        if (!records_.empty() && records_.back().submit > now_ && !state_.back().queued &&
            state_.back().st == status::pending) {
          index_.erase(records_.back().id);
          records_.pop_back();
          state_.pop_back();
        }
        break;
      }
      advance(t);
      bool trigger = false;
      while (!events_.empty() && events_.top().t == t) {
        const event e = events_.top();
        events_.pop();
        ++totals_.events;
        trigger |= handle(e);
      }
      if (trigger && (!pending_.empty() || may_grow())) cycle();
      if (cfg_.check_invariants) {
        const auto rep = check_invariants(book_);
        if (!rep.ok()) throw std::logic_error("gpusched simulator: " + rep.to_string());
      }
      if (observer_) observer_(now_, book_);
    }
    totals_.end = now_;
  }

  /// The ledger: the cluster and the running jobs.
  [[nodiscard]] const ledger& book() const noexcept { return book_; }
  /// The pipeline (its policies' state).
  [[nodiscard]] const P& pipeline() const noexcept { return pipe_; }
  /// Every job seen, in arrival order.
  [[nodiscard]] std::span<const job_record> records() const noexcept { return records_; }
  /// The time series, every `sim_config::sample_interval`.
  [[nodiscard]] std::span<const sim_sample> samples() const noexcept { return samples_; }
  /// Cluster-wide totals so far.
  [[nodiscard]] const sim_totals& totals() const noexcept { return totals_; }
  /// The configuration it was made with.
  [[nodiscard]] const sim_config& config() const noexcept { return cfg_; }
  /// The current simulated time.
  [[nodiscard]] sim_time now() const noexcept { return now_; }
  /// The nodes of a job's current or last placement (empty before its first start and after it
  /// finished): for a requeued job, where it ran before it was interrupted; the hook a
  /// topology-aware placement uses to prefer the previous domain.
  [[nodiscard]] std::span<const node_index> previous_placement(job_id id) const {
    const auto it = index_.find(id);
    return it == index_.end() ? std::span<const node_index>{}
                              : std::span<const node_index>(state_[it->second].previous);
  }

 private:
  enum event_kind : std::uint8_t {
    ev_completion = 0,
    ev_checkpoint = 1,
    ev_failure = 2,
    ev_gpu_failure = 3,
    ev_repair = 4,
    ev_gpu_repair = 5,
    ev_arrival = 6,
    ev_tick = 7,
  };
  /// `event::epoch` of an injected failure (it does not draw the next random one).
  static constexpr std::uint32_t injected = 1;
  struct event {
    sim_time t;
    std::uint8_t kind;
    std::uint64_t seq;
    std::uint32_t job;    // state index, node position or GPU index for failure/repair
    std::uint32_t epoch;  // job's epoch when scheduled (stale events are ignored)
  };
  struct later {
    bool operator()(const event& a, const event& b) const noexcept {
      if (a.t != b.t) return a.t > b.t;
      if (a.kind != b.kind) return a.kind > b.kind;
      return a.seq > b.seq;
    }
  };
  enum class status : std::uint8_t { pending, running, done };
  struct job_state {
    job_spec spec;  // kept while the job is not done (victims leave the ledger at once)
    status st = status::pending;
    std::uint32_t epoch = 0;
    std::int64_t held_milli = 0;  // GPU-milli held while running
    std::int64_t rate_num = 1, rate_den = 1;
    std::int64_t saved = 0;  // progress (ms of full-size work) safe in a checkpoint
    std::int64_t p0 = 0;     // progress at compute_start
    std::int64_t limit = 0;  // progress at which the next event (checkpoint/completion) is
    sim_time alloc_start{};  // when resources were taken
    sim_time compute_start{};
    sim_time stint_start{};            // start of the current run (a resize does not end it)
    double stint_gpu_s = 0;            // GPU-seconds of the current run before its last resize
    bool queued = false;               // has an entry in pending_
    std::uint32_t tenant_slot = 0;     // index into tenant_held_/tenant_demand_
    std::vector<node_index> previous;  // nodes of the current or last placement
  };

  void push(sim_time t, std::uint8_t kind, std::uint32_t job, std::uint32_t epoch) {
    events_.push(event{t, kind, seq_++, job, epoch});
  }

  void pull_arrival() {
    if (!source_) return;
    auto j = source_();
    if (!j) {
      source_ = nullptr;
      return;
    }
    if (j->spec.submit < last_submit_) {
      throw invalid_value_error(error_id::inconsistent, "job source",
                                "job " + std::to_string(j->spec.id.value()) + " submit",
                                std::to_string(j->spec.submit.time_since_epoch().count()) + "ms",
                                "earlier than the previous job's submit time");
    }
    if (j->work < sim_duration{0}) {
      throw invalid_value_error(error_id::invalid_value,
                                "job " + std::to_string(j->spec.id.value()), "work",
                                std::to_string(j->work.count()) + "ms", "must not be negative");
    }
    validate(j->spec, book_.state().catalog());
    if (index_.contains(j->spec.id)) {
      throw invalid_value_error(error_id::duplicate_id, "job source", "id",
                                std::to_string(j->spec.id.value()), "job id repeated");
    }
    last_submit_ = j->spec.submit;
    const auto i = static_cast<std::uint32_t>(state_.size());
    index_.emplace(j->spec.id, i);
    job_record r;
    r.id = j->spec.id;
    r.tenant = j->spec.tenant;
    r.priority = j->spec.priority;
    r.gpus_milli = j->spec.milli_gpus();
    r.submit = j->spec.submit;
    r.work = j->work;
    records_.push_back(r);
    job_state s;
    s.spec = std::move(j->spec);
    s.limit = r.work.count();
    const auto [slot, fresh] =
        tenant_slots_.try_emplace(r.tenant.value(), static_cast<std::uint32_t>(tenant_ids_.size()));
    if (fresh) {
      tenant_ids_.push_back(r.tenant);
      tenant_held_.push_back(0);
      tenant_demand_.push_back(0);
    }
    s.tenant_slot = slot->second;
    state_.push_back(std::move(s));
    push(records_.back().submit, ev_arrival, i, 0);
  }

  /// Integrates totals and emits samples over [now_, t).
  void advance(sim_time t) {
    if (t < now_) return;
    const double dt = static_cast<double>((t - now_).count());
    totals_.allocated_integral += static_cast<double>(held_milli_) * dt;
    totals_.down_integral += static_cast<double>(book_.state().unavailable_gpus()) * 1000.0 * dt;
    if (cfg_.sample_interval > sim_duration{0} && !totals_.samples_capped && next_sample_ <= t &&
        next_sample_ >= now_) {
      // The state is constant over [now_, t): every sample in it is the same but for its time,
      // so it is computed once (O(nodes + tenants) per advance, O(1) per further sample).
      const sim_sample here = sample(next_sample_);
      while (next_sample_ <= t && next_sample_ >= now_) {
        if (samples_.size() >= cfg_.max_samples) {
          totals_.samples_capped = true;
          break;
        }
        samples_.push_back(here);
        samples_.back().t = next_sample_;
        next_sample_ += cfg_.sample_interval;
      }
    }
    now_ = t;
  }

  sim_sample sample(sim_time t) const {
    const cluster& c = book_.state();
    sim_sample s;
    s.t = t;
    s.allocated_gpus = static_cast<double>(held_milli_) / 1000.0;
    s.available_gpus = c.total_gpus() - c.unavailable_gpus();
    s.pending = pending_.size();
    s.running = book_.running().size();
    std::int64_t free_all = 0, free_partial = 0;
    for (node_index n : c.nodes()) {
      const auto f = c.free_whole_gpus(n);
      free_all += f;
      if (f > 0 && f < static_cast<int>(c.gpus(n).size())) free_partial += f;
    }
    s.fragmentation =
        free_all == 0 ? 0.0 : static_cast<double>(free_partial) / static_cast<double>(free_all);
    if (cfg_.sample_tenants) {
      for (std::size_t k = 0; k < tenant_ids_.size(); ++k) {
        if (tenant_demand_[k] <= 0 && tenant_held_[k] <= 0) continue;
        s.tenants.push_back({tenant_ids_[k], static_cast<double>(tenant_held_[k]) / 1000.0,
                             static_cast<double>(tenant_demand_[k]) / 1000.0});
      }
      std::sort(s.tenants.begin(), s.tenants.end(),
                [](const tenant_sample& a, const tenant_sample& b) { return a.tenant < b.tenant; });
    }
    return s;
  }

  /// Applies one event; true when it should trigger a cycle (on_event mode) or is a tick.
  /// Releases a running job through the pipeline when it has `release` (so an incremental
  /// ordering policy follows), else from the ledger directly.
  void release(job_id id) {
    if constexpr (requires { pipe_.release(book_, id, now_, rng_); }) {
      pipe_.release(book_, id, now_, rng_);
    } else {
      book_.release(id);
    }
  }

  bool handle(const event& e) {
    switch (e.kind) {
      case ev_arrival: {
        tenant_demand_[state_[e.job].tenant_slot] += records_[e.job].gpus_milli;
        enqueue(e.job);
        pull_arrival();
        return cfg_.trigger == cycle_trigger::on_event;
      }
      case ev_completion: {
        auto& s = state_[e.job];
        if (s.st != status::running || s.epoch != e.epoch) return false;
        auto& r = records_[e.job];
        stop_allocation(e.job);
        tenant_demand_[s.tenant_slot] -= r.gpus_milli;
        if (job_history* h = history()) h->forget(s.spec.id);
        release(s.spec.id);
        s.st = status::done;
        r.outcome = job_outcome::finished;
        r.finish = now_;
        s.spec = job_spec{};  // free what is no longer needed
        s.previous = {};
        return cfg_.trigger == cycle_trigger::on_event;
      }
      case ev_checkpoint: {
        auto& s = state_[e.job];
        if (s.st != status::running || s.epoch != e.epoch) return false;
        auto& r = records_[e.job];
        s.saved = s.limit;
        s.p0 = s.limit;
        s.compute_start = now_;
        ++r.checkpoints;
        r.overhead_gpu_ms += static_cast<double>(s.held_milli) / 1000.0 *
                             static_cast<double>(s.spec.checkpoint.checkpoint_cost.count());
        schedule_next(e.job);
        return false;
      }
      case ev_failure: {
        const node_index n{e.job};
        // Failures go on while jobs arrive or run. When only pending jobs remain, the process
        // pauses (so that a run whose pending jobs can never start ends) and resumes, from the
        // next start, when one of them runs again (`start`): the failure process is memoryless,
        // so resuming from that instant is the same process.
        if (e.epoch != injected) {
          if (source_ != nullptr || !book_.running().empty()) {
            schedule_failure(now_);
          } else {
            node_failures_paused_ = true;
          }
        }
        if (!book_.state().available(n)) return false;
        ++totals_.failures;
        for (const job_id id : book_.jobs_on(n)) {
          const auto i = index_.at(id);
          interrupt(i, /*failure=*/true);
          release(id);
        }
        book_.set_available(n, false);
        push(now_ + cfg_.repair_time, ev_repair, n.value(), 0);
        return cfg_.trigger == cycle_trigger::on_event;
      }
      case ev_repair:
        book_.set_available(node_index{e.job}, true);
        return cfg_.trigger == cycle_trigger::on_event;
      case ev_gpu_failure: {
        const gpu_index g{e.job};
        if (e.epoch != injected) {  // as for node failures: paused while nothing can run
          if (source_ != nullptr || !book_.running().empty()) {
            schedule_gpu_failure(now_);
          } else {
            gpu_failures_paused_ = true;
          }
        }
        const cluster& c = book_.state();
        if (!c.gpu_available(g) || !c.available(c.gpu(g).node)) return false;
        ++totals_.gpu_failures;
        for (const job_id id : book_.jobs_on_gpu(g)) {
          interrupt(index_.at(id), /*failure=*/true);
          release(id);
        }
        book_.set_gpu_available(g, false);
        push(now_ + cfg_.gpu_repair_time, ev_gpu_repair, g.value(), 0);
        return cfg_.trigger == cycle_trigger::on_event;
      }
      case ev_gpu_repair:
        book_.set_gpu_available(gpu_index{e.job}, true);
        return cfg_.trigger == cycle_trigger::on_event;
      case ev_tick:
        if (work_remains() || !pending_.empty()) {
          // Stop ticking when only pending jobs remain and nothing can ever change.
          if (!(events_.empty() && book_.running().empty() && !source_ && last_cycle_idle_)) {
            push(next_tick(), ev_tick, 0, 0);
          }
        }
        return true;
    }
    return false;
  }

  /// The time of the next tick. When nothing is pending or running, the ticks before the next
  /// event change nothing (no cycle runs), so it skips to the first tick at or after that event
  /// and counts the skipped ticks in `totals_.events` as if they had fired (up to the time
  /// limit): the same totals, in time proportional to the events rather than to the gap.
  sim_time next_tick() {
    const sim_time next = now_ + cfg_.cycle_interval;
    if (!pending_.empty() || !book_.running().empty() || events_.empty() ||
        events_.top().t <= next) {
      return next;
    }
    const std::int64_t step = cfg_.cycle_interval.count();
    const std::int64_t gap = (events_.top().t - now_).count();
    const std::int64_t k = gap / step + (gap % step != 0 ? 1 : 0);  // >= 2
    std::int64_t skipped = k - 1;
    if (cfg_.time_limit > sim_duration{0}) {
      const std::int64_t before_limit = (totals_.start + cfg_.time_limit - now_).count() / step;
      skipped = std::clamp<std::int64_t>(before_limit, 0, skipped);
    }
    totals_.events += static_cast<std::uint64_t>(skipped);
    return now_ + sim_duration{k * step};
  }

  [[nodiscard]] bool work_remains() const noexcept {
    return source_ != nullptr || !pending_.empty() || !book_.running().empty();
  }

  void schedule_failure(sim_time from) {
    const double nodes = static_cast<double>(book_.state().node_count());
    const double mean = static_cast<double>(cfg_.node_mtbf.count()) / nodes;
    const double u = static_cast<double>(fail_rng_() >> 11) * 0x1.0p-53;
    // Clamped to 2^62 ms (146 million years: never, in effect) so that a huge MTBF cannot
    // overflow the conversion or the clock.
    const auto dt = static_cast<std::int64_t>(std::min(-mean * std::log(1.0 - u), 0x1p62)) + 1;
    const auto n = static_cast<std::uint32_t>(uniform_index(fail_rng_, book_.state().node_count()));
    push(from + sim_duration{dt}, ev_failure, n, 0);
  }

  void schedule_gpu_failure(sim_time from) {
    const auto gpus = book_.state().gpu_count();
    const double mean = static_cast<double>(cfg_.gpu_mtbf.count()) / static_cast<double>(gpus);
    const double u = static_cast<double>(gpu_fail_rng_() >> 11) * 0x1.0p-53;
    const auto dt = static_cast<std::int64_t>(std::min(-mean * std::log(1.0 - u), 0x1p62)) + 1;
    const auto g = static_cast<std::uint32_t>(uniform_index(gpu_fail_rng_, gpus));
    push(from + sim_duration{dt}, ev_gpu_failure, g, 0);
  }

  /// Progress of running job `i` at `now_` (ms of full-size work).
  [[nodiscard]] std::int64_t progress(const job_state& s) const noexcept {
    if (now_ <= s.compute_start) return s.p0;
    const auto dt = (now_ - s.compute_start).count();
    const auto done = dt * s.rate_num / s.rate_den;
    return std::min(s.p0 + done, s.limit);
  }
  /// Wall time for `dp` ms of progress at the job's rate, rounded up.
  [[nodiscard]] static std::int64_t wall(const job_state& s, std::int64_t dp) noexcept {
    return (dp * s.rate_den + s.rate_num - 1) / s.rate_num;
  }

  void stop_allocation(std::uint32_t i) {
    auto& s = state_[i];
    auto& r = records_[i];
    r.allocated_gpu_ms += static_cast<double>(s.held_milli) / 1000.0 *
                          static_cast<double>((now_ - s.alloc_start).count());
    held_milli_ -= s.held_milli;
    tenant_held_[s.tenant_slot] -= s.held_milli;
  }

  /// A running job loses its resources (preemption or failure): account and requeue.
  void interrupt(std::uint32_t i, bool failure) {
    auto& s = state_[i];
    auto& r = records_[i];
    const auto p = progress(s);
    if (!failure && cfg_.preemption_saves_progress) s.saved = p;
    const double lost =
        static_cast<double>(wall(s, p - s.saved)) * static_cast<double>(s.held_milli) / 1000.0;
    if (failure) {
      r.lost_failure_gpu_ms += lost;
      ++r.failures;
    } else {
      r.lost_preemption_gpu_ms += lost;
      ++r.preemptions;
      ++totals_.preemptions;
    }
    if (job_history* h = history()) {
      // the whole run since its start, across resizes: GPU-seconds at each size, wall time once
      h->service.add(s.spec.id,
                     s.stint_gpu_s + static_cast<double>(s.held_milli) / 1000.0 *
                                         to_seconds(now_ - s.alloc_start),
                     now_ - s.stint_start);
    }
    stop_allocation(i);
    s.st = status::pending;
    ++s.epoch;
    s.p0 = s.saved;
    if (!s.queued) enqueue(i);  // admitted and evicted in one cycle: still has its entry
  }

  /// Whether a cycle could grow a running job: the pipeline grows (`options().grow`) and a
  /// running job has an elastic group below its maximum. O(running tasks) at worst.
  [[nodiscard]] bool may_grow() const noexcept {
    if constexpr (requires { pipe_.options().grow; }) {
      if (!pipe_.options().grow) return false;
      for (const running_job& r : book_.running()) {
        for (std::size_t g = 0; g < r.spec.groups.size(); ++g) {
          const task_group& grp = r.spec.groups[g];
          if (grp.elastic() && r.tasks_in_group(g) < grp.count) return true;
        }
      }
    }
    return false;
  }

  /// A running elastic job was shrunk, or grown (`grew`; the ledger already holds its new
  /// size): account the allocation so far, apply the resize model and reschedule its next
  /// event.
  void resize(std::uint32_t i, bool grew = false) {
    auto& s = state_[i];
    auto& r = records_[i];
    const running_job* rj = book_.find(s.spec.id);
    if (s.st != status::running || rj == nullptr) {
      throw std::logic_error("gpusched simulator: " + std::string(grew ? "grow" : "shrink") +
                             " of job " + std::to_string(s.spec.id.value()) +
                             ", which is not running");
    }
    const auto p = progress(s);
    // attained service so far in this run, at the old size (recorded when the run ends)
    s.stint_gpu_s += static_cast<double>(s.held_milli) / 1000.0 * to_seconds(now_ - s.alloc_start);
    if (cfg_.shrink_loses_progress) {
      r.lost_preemption_gpu_ms +=
          static_cast<double>(wall(s, p - s.saved)) * static_cast<double>(s.held_milli) / 1000.0;
      s.p0 = s.saved;
    } else {
      s.p0 = p;
    }
    stop_allocation(i);
    std::int64_t held = 0;
    for (const auto& t : rj->tasks) {
      for (const auto& g : t.gpus) held += charged_milli(book_.state(), g);
    }
    s.held_milli = held;
    held_milli_ += held;
    tenant_held_[s.tenant_slot] += held;
    s.alloc_start = now_;
    s.previous.clear();
    for (const auto& t : rj->tasks) s.previous.push_back(t.node);
    if (job_history* h = history()) h->placement.remember(s.spec.id, s.previous);
    s.rate_num = 1;
    s.rate_den = 1;
    if (r.gpus_milli > 0 && held > 0 && held < r.gpus_milli) {
      s.rate_num = held;
      s.rate_den = r.gpus_milli;
    }
    const sim_duration pause =
        (grew ? cfg_.grow_pause : cfg_.shrink_pause).value_or(s.spec.checkpoint.restore_cost);
    r.overhead_gpu_ms += static_cast<double>(held) / 1000.0 * static_cast<double>(pause.count());
    ++s.epoch;
    if (grew) {
      ++r.grows;
      ++totals_.grows;
    } else {
      ++r.resizes;
      ++totals_.resizes;
    }
    s.compute_start = now_ + pause;
    schedule_next(i);
  }

  void enqueue(std::uint32_t i) {
    state_[i].queued = true;
    pending_.push_back(state_[i].spec);
    pending_index_.push_back(i);
  }

  void start(std::uint32_t i, const decision& d) {
    if (node_failures_paused_) {
      node_failures_paused_ = false;
      schedule_failure(now_);
    }
    if (gpu_failures_paused_) {
      gpu_failures_paused_ = false;
      schedule_gpu_failure(now_);
    }
    auto& s = state_[i];
    auto& r = records_[i];
    s.st = status::running;
    ++s.epoch;
    std::int64_t held = 0;
    for (const auto& t : d.placement) {
      for (const auto& g : t.gpus) held += charged_milli(book_.state(), g);
    }
    s.held_milli = held;
    held_milli_ += held;
    tenant_held_[s.tenant_slot] += held;
    s.previous.clear();
    for (const auto& t : d.placement) s.previous.push_back(t.node);
    if (job_history* h = history()) h->placement.remember(s.spec.id, s.previous);
    s.alloc_start = now_;
    s.stint_start = now_;
    s.stint_gpu_s = 0;
    // Elastic: progress at the held share of the full request (whole-GPU and share demands).
    s.rate_num = 1;
    s.rate_den = 1;
    if (r.gpus_milli > 0 && held > 0 && held < r.gpus_milli) {
      s.rate_num = held;
      s.rate_den = r.gpus_milli;
    }
    const auto restore = r.starts > 0 ? s.spec.checkpoint.restore_cost : sim_duration{0};
    if (restore > sim_duration{0}) {
      r.overhead_gpu_ms +=
          static_cast<double>(held) / 1000.0 * static_cast<double>(restore.count());
    }
    ++r.starts;
    if (!r.first_start) r.first_start = now_;
    s.p0 = s.saved;
    s.compute_start = now_ + restore;
    schedule_next(i);
  }

  /// Schedules the running job's next checkpoint or its completion.
  void schedule_next(std::uint32_t i) {
    auto& s = state_[i];
    const auto work = records_[i].work.count();
    const auto iv = s.spec.checkpoint.interval.count();
    if (iv > 0) {
      const auto next = (s.p0 / iv + 1) * iv;
      if (next < work) {
        s.limit = next;
        const auto t = s.compute_start + sim_duration{wall(s, next - s.p0)} +
                       s.spec.checkpoint.checkpoint_cost;
        push(t, ev_checkpoint, i, s.epoch);
        return;
      }
    }
    s.limit = work;
    push(s.compute_start + sim_duration{wall(s, work - s.p0)}, ev_completion, i, s.epoch);
  }

  void cycle() {
    ++totals_.cycles;
    pipe_.schedule(book_, std::span<const job_spec>(pending_), now_, rng_, result_);
    bool changed = false;
    for (const auto& d : result_.decisions) {
      if (d.kind == verdict::defer) continue;
      changed = true;
      // Victims first: they left the ledger in the same commit.
      for (const job_id v : d.victims) interrupt(index_.at(v), /*failure=*/false);
      // Shrunk jobs resize once each (a job may have several groups shrunk).
      for (std::size_t k = 0; k < d.shrinks.size(); ++k) {
        const job_id v = d.shrinks[k].job;
        bool seen = false;
        for (std::size_t m = 0; m < k; ++m) seen = seen || d.shrinks[m].job == v;
        if (!seen) resize(index_.at(v));
      }
      const auto i = index_.at(d.job);
      if (d.kind == verdict::admit) {
        start(i, d);
      } else {
        state_[i].st = status::done;
        records_[i].outcome = job_outcome::rejected;
        tenant_demand_[state_[i].tenant_slot] -= records_[i].gpus_milli;
        if (job_history* h = history()) h->placement.forget(state_[i].spec.id);
        state_[i].previous = {};
        state_[i].spec = job_spec{};
      }
    }
    // Grown jobs resize once each (a job may have several groups grown).
    for (std::size_t k = 0; k < result_.grown.size(); ++k) {
      const job_id v = result_.grown[k].job;
      bool seen = false;
      for (std::size_t m = 0; m < k; ++m) seen = seen || result_.grown[m].job == v;
      if (!seen) resize(index_.at(v), /*grew=*/true);
      changed = true;
    }
    last_cycle_idle_ = !changed;
    if (!changed) return;
    // Keep pending jobs (and requeued victims appended above) in queue order.
    std::size_t w = 0;
    for (std::size_t k = 0; k < pending_.size(); ++k) {
      if (state_[pending_index_[k]].st != status::pending) {
        state_[pending_index_[k]].queued = false;
        continue;
      }
      if (w != k) {
        pending_[w] = std::move(pending_[k]);
        pending_index_[w] = pending_index_[k];
      }
      ++w;
    }
    pending_.resize(w);
    pending_index_.resize(w);
  }

  ledger book_;
  P pipe_;
  sim_config cfg_;
  random_engine rng_, fail_rng_, gpu_fail_rng_;
  /// The pipeline's job history, or null for a scheduler without one.
  job_history* history() noexcept {
    if constexpr (requires { pipe_.history(); }) {
      return &pipe_.history();
    } else {
      return nullptr;
    }
  }
  observer observer_;
  job_source source_;
  std::priority_queue<event, std::vector<event>, later> events_;
  std::uint64_t seq_ = 0;
  sim_time now_{};
  sim_time last_submit_{sim_duration{std::numeric_limits<std::int64_t>::min()}};
  sim_time next_sample_{};
  std::vector<job_state> state_;
  std::vector<job_record> records_;
  std::unordered_map<job_id, std::uint32_t> index_;
  std::vector<job_spec> pending_;
  std::vector<std::uint32_t> pending_index_;
  std::vector<sim_sample> samples_;
  cycle_result result_;
  sim_totals totals_;
  std::int64_t held_milli_ = 0;
  // Per tenant (dense slots in order of first arrival): GPU-milli held and wanted.
  std::unordered_map<std::uint32_t, std::uint32_t> tenant_slots_;
  std::vector<tenant_id> tenant_ids_;
  std::vector<std::int64_t> tenant_held_, tenant_demand_;
  bool last_cycle_idle_ = false;
  // a random failure fired when nothing ran and no job could arrive: the next start resumes it
  bool node_failures_paused_ = false;
  bool gpu_failures_paused_ = false;
};

GPUSCHED_END_NAMESPACE
