// SPDX-License-Identifier: Apache-2.0
/// @file
/// A discrete-event simulator that drives any pipeline (static `pipeline<...>` or the run-time
/// `any_pipeline`; any model of `scheduler`, sim/scheduler.hpp) over a cluster and a stream of
/// jobs. This header is the loop; its parts live beside it: the settings (sim/config.hpp), the
/// typed events and their order (sim/event_queue.hpp), the progress, checkpoint and resize
/// arithmetic (sim/progress.hpp), the random failure processes (sim/failures.hpp) and the
/// output records (sim/records.hpp).
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
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
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
#include "gpusched/detail/overloaded.hpp"
#include "gpusched/pipeline/pipeline.hpp"
#include "gpusched/sim/config.hpp"
#include "gpusched/sim/event_queue.hpp"
#include "gpusched/sim/failures.hpp"
#include "gpusched/sim/progress.hpp"
#include "gpusched/sim/records.hpp"
#include "gpusched/sim/scheduler.hpp"
#include "gpusched/workload/history.hpp"
#include "gpusched/workload/job.hpp"
#include "gpusched/workload/ledger.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief The simulator over scheduler type `P` (a model of `scheduler`: the static
/// `pipeline<...>`, `any_pipeline`, or a host's own).
template <scheduler P = default_pipeline>
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
        node_failures_(cfg.seed ^ 0x9E3779B97F4A7C15ull, cfg.node_mtbf),
        gpu_failures_(cfg.seed ^ 0xD1B54A32D192ED03ull, cfg.gpu_mtbf) {
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
    if (cfg_.comm.enabled) comm_.emplace(book_.state(), cfg_.comm);
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
    events_.push(t, sim_events::node_failure{n.value(), true});
  }
  /// Schedules a failure of GPU `g` at time `t` (call before `run`); handled like a random GPU
  /// failure and repaired after `gpu_repair_time`. @throws invalid_value_error if `g` is not a
  /// GPU index. O(log events).
  void inject_gpu_failure(gpu_index g, sim_time t) {
    if (g.value() >= book_.state().gpu_count()) {
      throw invalid_value_error(error_id::unknown_id, "simulator", "gpu", std::to_string(g.value()),
                                "no such GPU index");
    }
    events_.push(t, sim_events::gpu_failure{g.value(), true});
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
      events_.push(events_.top().t, sim_events::tick{});
    }
    if (node_failures_.enabled(book_.state().node_count()) && !events_.empty()) {
      schedule_failure(events_.top().t);
    }
    if (gpu_failures_.enabled(book_.state().gpu_count()) && !events_.empty()) {
      schedule_gpu_failure(events_.top().t);
    }
    bool first = true;
    while (!events_.empty()) {
      // A random failure drawn before the last job finished, due after it: dropped, so that it
      // does not stretch the run (injected failures are kept).
      if (random_failure(events_.top().what) && !work_remains()) {
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
        const sim_event e = events_.top();
        events_.pop();
        ++totals_.events;
        trigger |= handle(e.what);
      }
      if (trigger && (!pending_.empty() || may_grow())) cycle();
      if (cfg_.max_cycles > 0 && totals_.cycles >= cfg_.max_cycles) {
        totals_.stopped_at_cycle_limit = true;
        if (cfg_.check_invariants) {
          const auto rep = check_invariants(book_);
          if (!rep.ok()) throw std::logic_error("gpusched simulator: " + rep.to_string());
        }
        if (observer_) observer_(now_, book_);
        break;
      }
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
  /// Whether an event is a randomly drawn failure (not an injected one).
  [[nodiscard]] static bool random_failure(const sim_event_payload& e) noexcept {
    if (const auto* f = std::get_if<sim_events::node_failure>(&e)) return !f->injected;
    if (const auto* f = std::get_if<sim_events::gpu_failure>(&e)) return !f->injected;
    return false;
  }
  enum class status : std::uint8_t { pending, running, done };
  struct job_state {
    job_spec spec;  // kept while the job is not done (victims leave the ledger at once)
    status st = status::pending;
    std::uint32_t epoch = 0;
    std::int64_t held_milli = 0;  // GPU-milli held while running
    progress_state prog{};   // progress (ms of full-size work), rate, next event's progress
    sim_time alloc_start{};  // when resources were taken
    sim_time stint_start{};            // start of the current run (a resize does not end it)
    double stint_gpu_s = 0;            // GPU-seconds of the current run before its last resize
    bool queued = false;               // has an entry in pending_
    std::uint32_t tenant_slot = 0;     // index into tenant_held_/tenant_demand_
    std::vector<node_index> previous;  // nodes of the current or last placement
    // communication model (with `cfg_.comm.enabled`)
    comm_profile comm{};                 // the job's iteration
    comm_path path{};                    // where its ring runs now
    std::int64_t comm_ppm = 1'000'000;   // its speed factor, parts per million
    bool networked = false;              // in `networked_` (spans nodes, shares links)
  };

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
    if (comm_) {
      if (j->comm && (!(j->comm->compute_ms >= 0) || !(j->comm->sync_bytes >= 0) ||
                      j->comm->compute_ms > 1e15 || j->comm->sync_bytes > 1e18)) {
        throw invalid_value_error(error_id::invalid_value,
                                  "job " + std::to_string(j->spec.id.value()), "comm",
                                  std::to_string(j->comm->compute_ms) + " ms, " +
                                      std::to_string(j->comm->sync_bytes) + " bytes",
                                  "compute_ms and sync_bytes must be finite and not negative");
      }
    }
    records_.push_back(r);
    job_state s;
    if (comm_) s.comm = j->comm.value_or(default_comm_profile(j->spec.id));
    s.spec = std::move(j->spec);
    s.prog.limit = r.work.count();
    const auto [slot, fresh] =
        tenant_slots_.try_emplace(r.tenant.value(), static_cast<std::uint32_t>(tenant_ids_.size()));
    if (fresh) {
      tenant_ids_.push_back(r.tenant);
      tenant_held_.push_back(0);
      tenant_demand_.push_back(0);
    }
    s.tenant_slot = slot->second;
    state_.push_back(std::move(s));
    events_.push(records_.back().submit, sim_events::arrival{i});
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

  bool handle(const sim_event_payload& e) {
    const bool on_event = cfg_.trigger == cycle_trigger::on_event;
    return std::visit(
        detail::overloaded{
            [&](const sim_events::arrival& a) {
              tenant_demand_[state_[a.job].tenant_slot] += records_[a.job].gpus_milli;
              enqueue(a.job);
              pull_arrival();
              return on_event;
            },
            [&](const sim_events::completion& c) {
              auto& s = state_[c.job];
              if (s.st != status::running || s.epoch != c.epoch) return false;
              auto& r = records_[c.job];
              stop_allocation(c.job);
              place_on_network(c.job, {});
              tenant_demand_[s.tenant_slot] -= r.gpus_milli;
              if (job_history* h = history()) h->forget(s.spec.id);
              release(s.spec.id);
              s.st = status::done;
              r.outcome = job_outcome::finished;
              r.finish = now_;
              s.spec = job_spec{};  // free what is no longer needed
              s.previous = {};
              return on_event;
            },
            [&](const sim_events::checkpoint& c) {
              auto& s = state_[c.job];
              if (s.st != status::running || s.epoch != c.epoch) return false;
              auto& r = records_[c.job];
              s.prog.checkpoint_written(now_);
              ++r.checkpoints;
              r.overhead_gpu_ms += static_cast<double>(s.held_milli) / 1000.0 *
                                   static_cast<double>(s.spec.checkpoint.checkpoint_cost.count());
              schedule_next(c.job);
              return false;
            },
            [&](const sim_events::node_failure& f) {
              const node_index n{f.node};
              // Failures go on while jobs arrive or run. When only pending jobs remain, the
              // process pauses (so that a run whose pending jobs can never start ends) and
              // resumes, from the next start, when one of them runs again (`start`): the
              // failure process is memoryless, so resuming from that instant is the same
              // process.
              if (!f.injected) {
                if (source_ != nullptr || !book_.running().empty()) {
                  schedule_failure(now_);
                } else {
                  node_failures_.paused = true;
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
              events_.push(now_ + cfg_.repair_time, sim_events::node_repair{n.value()});
              return on_event;
            },
            [&](const sim_events::node_repair& r) {
              book_.set_available(node_index{r.node}, true);
              return on_event;
            },
            [&](const sim_events::gpu_failure& f) {
              const gpu_index g{f.gpu};
              if (!f.injected) {  // as for node failures: paused while nothing can run
                if (source_ != nullptr || !book_.running().empty()) {
                  schedule_gpu_failure(now_);
                } else {
                  gpu_failures_.paused = true;
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
              events_.push(now_ + cfg_.gpu_repair_time, sim_events::gpu_repair{g.value()});
              return on_event;
            },
            [&](const sim_events::gpu_repair& r) {
              book_.set_gpu_available(gpu_index{r.gpu}, true);
              return on_event;
            },
            [&](const sim_events::tick&) {
              if (work_remains() || !pending_.empty()) {
                // Stop ticking when only pending jobs remain and nothing can ever change.
                if (!(events_.empty() && book_.running().empty() && !source_ &&
                      last_cycle_idle_)) {
                  events_.push(next_tick(), sim_events::tick{});
                }
              }
              return true;
            },
        },
        e);
  }

  /// The time of the next tick. When no cycle can run at a tick (nothing pending, and no
  /// running elastic job that could grow), the ticks before the next event change nothing: only
  /// an event can queue a job or change a running one. So it skips to the first tick at or after
  /// that event and counts the skipped ticks in `totals_.events` as if they had fired (up to the
  /// time limit): the same totals, in time proportional to the events rather than to the gap
  /// (a very long job alone costs its events, not its length divided by the interval).
  sim_time next_tick() {
    const sim_time next = now_ + cfg_.cycle_interval;
    if (!pending_.empty() || may_grow() || events_.empty() || events_.top().t <= next) {
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
    const auto d = node_failures_.next(from, book_.state().node_count());
    events_.push(d.t, sim_events::node_failure{d.unit, false});
  }

  void schedule_gpu_failure(sim_time from) {
    const auto d = gpu_failures_.next(from, book_.state().gpu_count());
    events_.push(d.t, sim_events::gpu_failure{d.unit, false});
  }

  void stop_allocation(std::uint32_t i) {
    auto& s = state_[i];
    auto& r = records_[i];
    r.allocated_gpu_ms += static_cast<double>(s.held_milli) / 1000.0 *
                          static_cast<double>((now_ - s.alloc_start).count());
    held_milli_ -= s.held_milli;
    tenant_held_[s.tenant_slot] -= s.held_milli;
  }

  /// The job's rate: its elastic share times its communication factor. O(1).
  [[nodiscard]] progress_rate rate_of(std::uint32_t i) const noexcept {
    const auto& s = state_[i];
    progress_rate r = elastic_rate(s.held_milli, records_[i].gpus_milli);
    if (s.comm_ppm < 1'000'000) r = {r.num * s.comm_ppm, r.den * 1'000'000};
    return r;
  }

  /// Communication model: job `i` now runs on `tasks` (a start or a resize; with `tasks`
  /// empty, it stopped). Sets its path and speed factor, and with link sharing recomputes
  /// every job's share, changing the rates of the others whose share moved (their next event
  /// is planned again). The caller sets job `i`'s own rate. O(networked jobs x links) with
  /// sharing, O(placement) without.
  void place_on_network(std::uint32_t i, std::span<const task_allocation> tasks) {
    if (!comm_) return;
    auto& s = state_[i];
    if (tasks.empty()) {
      s.path = {};
    } else {
      s.path = comm_->path(book_.state(), tasks);
    }
    const bool spans = !s.path.links.empty();
    if (!cfg_.comm.share_links || (!spans && !s.networked)) {
      s.comm_ppm = tasks.empty() ? 1'000'000 : factor(i, comm_->bandwidth(s.path));
      return;
    }
    if (spans && !s.networked) {
      networked_.push_back(i);
      s.networked = true;
    } else if (!spans && s.networked) {
      std::erase(networked_, i);
      s.networked = false;
    }
    if (!spans) s.comm_ppm = tasks.empty() ? 1'000'000 : factor(i, comm_->bandwidth(s.path));
    share_paths_.clear();
    for (const auto j : networked_) share_paths_.push_back(&state_[j].path);
    comm_->max_min(share_paths_, share_bw_);
    for (std::size_t k = 0; k < networked_.size(); ++k) {
      const auto j = networked_[k];
      auto& o = state_[j];
      const auto ppm = factor(j, share_bw_[k]);
      if (ppm == o.comm_ppm && j != i) continue;
      o.comm_ppm = ppm;
      if (j == i) continue;
      ++totals_.comm_rate_changes;
      if (o.prog.change_rate(now_, rate_of(j), records_[j].work.count())) {
        ++o.epoch;
        schedule_next(j);
      }
    }
  }
  /// Job `i`'s speed factor at ring bandwidth `gbps`. O(1).
  [[nodiscard]] std::int64_t factor(std::uint32_t i, double gbps) const noexcept {
    const auto& s = state_[i];
    return comm_factor_ppm(s.comm, s.path.ranks, gbps, cfg_.comm.reference_gbps);
  }

  /// A running job loses its resources (preemption or failure): account and requeue.
  void interrupt(std::uint32_t i, bool failure) {
    auto& s = state_[i];
    auto& r = records_[i];
    const auto p = s.prog.at(now_);
    if (!failure && cfg_.preemption_saves_progress) s.prog.saved = p;
    const double lost = s.prog.lost_gpu_ms(p, s.held_milli);
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
    place_on_network(i, {});
    s.st = status::pending;
    ++s.epoch;
    s.prog.p0 = s.prog.saved;
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
    const auto p = s.prog.at(now_);
    // attained service so far in this run, at the old size (recorded when the run ends)
    s.stint_gpu_s += static_cast<double>(s.held_milli) / 1000.0 * to_seconds(now_ - s.alloc_start);
    if (cfg_.shrink_loses_progress) {
      r.lost_preemption_gpu_ms += s.prog.lost_gpu_ms(p, s.held_milli);
      s.prog.p0 = s.prog.saved;
    } else {
      s.prog.p0 = p;
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
    place_on_network(i, rj->tasks);
    s.prog.rate = rate_of(i);
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
    s.prog.compute_start = now_ + pause;
    schedule_next(i);
  }

  void enqueue(std::uint32_t i) {
    state_[i].queued = true;
    pending_.push_back(state_[i].spec);
    pending_index_.push_back(i);
  }

  void start(std::uint32_t i, const decision& d) {
    if (node_failures_.paused) {
      node_failures_.paused = false;
      schedule_failure(now_);
    }
    if (gpu_failures_.paused) {
      gpu_failures_.paused = false;
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
    // Elastic: progress at the held share of the full request (whole-GPU and share demands),
    // times the communication factor of the placement (with the model on).
    place_on_network(i, d.placement);
    s.prog.rate = rate_of(i);
    const auto restore = r.starts > 0 ? s.spec.checkpoint.restore_cost : sim_duration{0};
    if (restore > sim_duration{0}) {
      r.overhead_gpu_ms +=
          static_cast<double>(held) / 1000.0 * static_cast<double>(restore.count());
    }
    ++r.starts;
    if (!r.first_start) r.first_start = now_;
    s.prog.p0 = s.prog.saved;
    s.prog.compute_start = now_ + restore;
    schedule_next(i);
  }

  /// Schedules the running job's next checkpoint or its completion.
  void schedule_next(std::uint32_t i) {
    auto& s = state_[i];
    const auto next = s.prog.plan_next(records_[i].work.count(), s.spec.checkpoint.interval,
                                       s.spec.checkpoint.checkpoint_cost);
    if (next.completion) {
      events_.push(next.t, sim_events::completion{i, s.epoch});
    } else {
      events_.push(next.t, sim_events::checkpoint{i, s.epoch});
    }
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
        records_[i].reason = describe(d.why, &state_[i].spec);
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
  random_engine rng_;
  failure_process node_failures_, gpu_failures_;
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
  event_queue events_;
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
  // communication model: the network, the jobs spanning nodes (with link sharing), scratch
  std::optional<comm_network> comm_;
  std::vector<std::uint32_t> networked_;
  std::vector<const comm_path*> share_paths_;
  std::vector<double> share_bw_;
};

GPUSCHED_END_NAMESPACE
