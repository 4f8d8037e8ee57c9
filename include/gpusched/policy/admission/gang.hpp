// SPDX-License-Identifier: Apache-2.0
/// @file
/// `gang_admission`: all-or-nothing admission of gangs, with the queueing policy that decides
/// what happens behind a gang that does not fit, and bounded exponential backoff.
///
/// Queueing (`mode`):
/// - `best_effort`: skip the gang and try the next job (Kueue BestEffortFIFO).
/// - `strict_fifo`: every later job waits this cycle (Kueue StrictFIFO).
/// - `easy_backfill`: the first gang that does not fit (the head) gets a reservation: the
///   earliest time at which it fits once running jobs end at their expected ends. A later job
///   may start now only if the head still fits at its reservation time with that job running
///   (checked by placing the head in a what-if transaction), or if it ends by then.
/// - `conservative_backfill`: every gang that does not fit gets a reservation (at most
///   `max_reservations` per cycle, in queue order), each respecting the earlier ones; a job
///   may start now only if every reservation still holds at every reservation time.
///   Known limitation: reservations are recomputed every cycle in queue order, so a gang's
///   reservation can move later when an earlier gang's moves earlier; the no-delay guarantee is
///   verified (property test) for EASY backfill's head only.
///
/// Reservations are what-if placements with the pipeline's own placement policy, so they
/// respect gangs, GPU models, MIG geometry and whatever the placement policy respects. Time
/// points considered: the expected ends of running jobs (start + expected duration; a job past
/// its expected end counts as ending now) and, for conservative backfill, the ends of earlier
/// reservations. The first reservation's time is found by bisection over the releases in end
/// order (the evictions kept between probes, so O(releases) evictions in all); a later one
/// finds the earliest time its gang would fit without reservations the same way, then scans
/// at most `horizon` time points from there (reservations only take room away).
///
/// Checking a candidate (`approve`): when a reservation is made, the state at its start is
/// recorded (running jobs that have not ended by then, the reservations active then at the
/// placements found); jobs admitted later in the cycle are added to the record. A candidate
/// whose placement fits beside the record cannot delay that reservation (its recorded
/// placement stays free), so it passes without a what-if; otherwise a full what-if (evict the
/// releases up to the start, place the active reservations again) decides.
///
/// Jobs without a duration estimate are handled conservatively: a running job without one is
/// never counted on to end (unless `default_duration` is set, like Slurm's DefaultTime), and a
/// candidate without one is assumed to run forever, so it may start only if it delays no
/// reservation at any time. A head that cannot get a reservation at all (what blocks it has no
/// duration) blocks the queue, as strict FIFO does: backfill never starves a big gang.
///
/// Backoff (`backoff`): a gang that failed `n` consecutive attempts is not tried again for
/// `min(base x 2^(n-1), cap)` cycles or milliseconds; after `limit` failures (if non-zero) it
/// is rejected. A gang that holds a reservation is never backed off.
///
/// Rejection: a gang whose whole-GPU total exceeds the cluster's GPUs, or one of whose tasks
/// exceeds the largest node (GPUs of an allowed model, CPU or memory), is rejected with
/// `unschedulable`. These are necessary conditions; a gang that passes may still never fit
/// and is then deferred every cycle with `no_fit`.
#pragma once

#include <algorithm>  // std::sort, std::lower_bound, std::min
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <utility>  // std::move, std::cmp_less
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/policy/concepts.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// What the queue does behind a gang that does not fit; see `gang_admission`.
enum class queueing : std::uint8_t {
  best_effort,
  strict_fifo,
  easy_backfill,
  conservative_backfill
};

/// @brief Bounded exponential backoff for gangs that keep failing. Disabled when `base == 0`.
struct backoff_config {
  enum class unit : std::uint8_t { cycles, milliseconds };
  unit in = unit::cycles;
  std::int64_t base = 0;   ///< first wait (0: backoff off)
  std::int64_t cap = 64;   ///< longest wait
  std::int32_t limit = 0;  ///< reject after this many consecutive failures (0: never)
  friend constexpr bool operator==(const backoff_config&, const backoff_config&) = default;
};

/// @brief A backfill reservation: `job` may start at `start` (what-if placement succeeded).
struct reservation {
  job_id job;
  sim_time start{};
  sim_time end{};  ///< start + expected duration (`sim_time::max()` when unknown)
};

/// @brief How backfill checks went in the last cycle (see `gang_admission::last_stats`).
struct backfill_stats {
  std::int64_t fast_checks = 0;  ///< candidate fitted beside a reservation's recorded state
  std::int64_t what_ifs = 0;     ///< candidate checked with a full what-if at a reservation
};

/// @brief All-or-nothing gang admission; see the file documentation.
class gang_admission {
 public:
  using policy_category = admission_tag;

  gang_admission() = default;
  explicit gang_admission(queueing m, backoff_config b = {}) : mode(m), backoff(b) {}

  queueing mode = queueing::best_effort;
  backoff_config backoff{};
  std::int32_t max_reservations = 16;            ///< conservative backfill: reservations per cycle
  std::int32_t horizon = 64;                     ///< time points scanned for a later reservation
  std::optional<sim_duration> default_duration;  ///< assumed for jobs without an estimate

  [[nodiscard]] constexpr std::string_view name() const noexcept {
    switch (mode) {
      case queueing::best_effort:
        return "gang";
      case queueing::strict_fifo:
        return "gang-strict";
      case queueing::easy_backfill:
        return "gang-easy";
      case queueing::conservative_backfill:
        return "gang-conservative";
    }
    return "gang";
  }

  /// The reservations made this cycle, in the order they were made.
  [[nodiscard]] const std::vector<reservation>& reservations() const noexcept { return reserved_; }
  /// Counts of this cycle's backfill checks (fast or full what-if).
  [[nodiscard]] const backfill_stats& last_stats() const noexcept { return stats_; }

  void begin_cycle(const schedule_context& /*ctx*/) {
    ++cycle_;
    reserved_.clear();
    specs_.clear();
    future_.clear();
    stats_ = {};
    releases_valid_ = false;
  }

  [[nodiscard]] admission_verdict admit(const schedule_context& ctx, const job_spec& j) const {
    if (auto r = unschedulable(ctx.state(), j)) return {verdict::reject, *r};
    if (backoff.base > 0) {
      const auto it = failures_.find(j.id);
      if (it != failures_.end() && backoff.limit > 0 && it->second.count >= backoff.limit) {
        return {verdict::reject,
                reason{reason_code::backoff, resource_kind::none, it->second.count, 0, -1, {}, {}}};
      }
      if (it != failures_.end() && waiting(ctx, it->second)) {
        reason why{reason_code::backoff, resource_kind::none, it->second.count, 0, -1, {}, {}};
        if (backoff.in == backoff_config::unit::milliseconds) {
          why.until = sim_time{sim_duration{it->second.until}};
        } else {
          why.available = it->second.until;  // the cycle it waits for
        }
        return {verdict::defer, why};
      }
    }
    return {verdict::admit, {}};
  }

  /// Checks, after `j` was placed tentatively in `tx`, that starting it now delays no
  /// reservation. Per reservation that `j` outlives: O(tasks x log nodes) when `j` fits beside
  /// the recorded state, else O(releases + placements).
  [[nodiscard]] admission_verdict approve(const schedule_context& ctx, const job_spec& j,
                                          ledger::transaction& tx, const admission_tools& tools) {
    if (reserved_.empty()) return {verdict::admit, {}};
    if (const auto* r = find_reservation(j.id)) {  // a reserved gang starting early is fine
      (void)r;
      return {verdict::admit, {}};
    }
    const sim_time end = end_of(ctx.now(), j);
    for (std::size_t i = 0; i < reserved_.size(); ++i) {
      const auto& r = reserved_[i];
      if (r.start >= end) continue;  // j is gone by then
      if (fits_beside(future_[i], tx.placed())) {
        ++stats_.fast_checks;
        continue;
      }
      ++stats_.what_ifs;
      if (!holds_at(ctx, r.start, tx, tools)) {
        return {verdict::defer,
                reason{reason_code::reservation, resource_kind::none, 0, 0, -1, r.job, r.start}};
      }
    }
    return {verdict::admit, {}};
  }

  void on_committed(const schedule_context& ctx, const decision& d) {
    failures_.erase(d.job);
    if (const auto* run = ctx.book().find(d.job)) {
      // keep the reservations' recorded states in step: the new job runs in those before its end
      const sim_time end = end_of(run->start, run->spec);
      for (auto& f : future_) {
        if (!f.valid || end <= f.at) continue;
        auto t = f.book.begin();
        bool ok = true;
        for (const auto& a : run->tasks) ok = ok && t.place(a);
        if (ok) {
          t.commit(run->spec, run->start);
        } else {
          f.valid = false;  // ~t rolls back; approve() uses full what-ifs for this reservation
        }
      }
    }
    if (!releases_valid_) return;
    // keep the release list in step: the new job may end at a known time; victims are gone
    for (job_id v : d.victims) {
      std::erase_if(releases_, [v](const release& r) { return r.job == v; });
    }
    if (const auto* run = ctx.book().find(d.job)) {
      const sim_time end = end_of(run->start, run->spec);
      if (end != sim_time::max()) insert_release({std::max(end, ctx.now()), d.job});
    }
  }

  [[nodiscard]] queue_action on_unplaced(const schedule_context& ctx, const job_spec& j,
                                         const reason& why, const admission_tools& tools) {
    const bool capacity = why.code == reason_code::no_fit || why.code == reason_code::insufficient;
    if (capacity || why.code == reason_code::reservation) record_failure(ctx, j);
    switch (mode) {
      case queueing::best_effort:
        return queue_action::skip;
      case queueing::strict_fifo:
        return queue_action::block;
      case queueing::easy_backfill:
      case queueing::conservative_backfill:
        break;
    }
    if (!capacity || find_reservation(j.id) != nullptr) return queue_action::skip;
    const auto limit = mode == queueing::easy_backfill ? 1 : max_reservations;
    if (std::cmp_greater_equal(reserved_.size(), limit)) return queue_action::skip;
    if (reserve(ctx, j, tools)) return queue_action::skip;
    return queue_action::block;  // no reservation possible: do not let others starve it
  }

  /// Forgets a job's failure history (call when a job leaves the queue without running).
  void forget(job_id id) { failures_.erase(id); }

  friend bool operator==(const gang_admission& a, const gang_admission& b) noexcept {
    return a.mode == b.mode && a.backoff == b.backoff && a.max_reservations == b.max_reservations &&
           a.horizon == b.horizon && a.default_duration == b.default_duration;
  }

  /// The `unschedulable` reason for `j` on `c`, if any. O(groups x models).
  [[nodiscard]] static std::optional<reason> unschedulable(const cluster& c, const job_spec& j) {
    std::int64_t min_gpus = 0;
    for (const auto& g : j.groups)
      min_gpus += std::int64_t{g.request.gpu.whole_gpus().value()} * g.minimum();
    if (min_gpus > c.total_gpus()) {
      return reason{
          reason_code::unschedulable, resource_kind::gpu, min_gpus, c.total_gpus(), -1, {}, {}};
    }
    for (std::size_t g = 0; g < j.groups.size(); ++g) {
      const auto& r = j.groups[g].request;
      const auto gi = static_cast<std::int32_t>(g);
      if (r.gpu.kind == gpu_demand_kind::whole) {
        const int most = largest_node_gpus(c, r.allowed_models);
        if (r.gpu.count.value() > most) {
          return reason{reason_code::unschedulable,
                        resource_kind::gpu,
                        r.gpu.count.value(),
                        most,
                        gi,
                        {},
                        {}};
        }
      }
      if (r.cpu > c.max_node_cpu()) {
        return reason{reason_code::unschedulable,
                      resource_kind::cpu,
                      r.cpu.value(),
                      c.max_node_cpu().value(),
                      gi,
                      {},
                      {}};
      }
      if (r.memory > c.max_node_memory()) {
        return reason{reason_code::unschedulable,
                      resource_kind::memory,
                      r.memory.value(),
                      c.max_node_memory().value(),
                      gi,
                      {},
                      {}};
      }
    }
    return std::nullopt;
  }

 private:
  struct failure {
    std::int64_t count = 0;
    std::int64_t until = 0;  ///< cycle number or milliseconds since the epoch
  };
  struct release {
    sim_time at;
    job_id job;
    friend bool operator<(const release& a, const release& b) noexcept {
      return a.at != b.at ? a.at < b.at : a.job < b.job;
    }
  };

  static int largest_node_gpus(const cluster& c, gpu_model_set allowed) noexcept {
    if (allowed.empty()) return c.max_node_gpus();
    int most = 0;
    for (std::size_t m = 0; m < c.catalog().size(); ++m) {
      const gpu_model_id id{static_cast<gpu_model_id::rep>(m)};
      if (allowed.contains(id)) most = std::max(most, c.max_node_gpus(id));
    }
    return most;
  }

  [[nodiscard]] bool waiting(const schedule_context& ctx, const failure& f) const noexcept {
    if (backoff.in == backoff_config::unit::cycles) return cycle_ < f.until;
    return ctx.now().time_since_epoch().count() < f.until;
  }

  void record_failure(const schedule_context& ctx, const job_spec& j) {
    if (backoff.base <= 0 || find_reservation(j.id) != nullptr) return;
    failure& f = failures_[j.id];
    ++f.count;
    std::int64_t wait = backoff.base;
    for (std::int64_t k = 1; k < f.count && wait < backoff.cap; ++k) wait *= 2;
    wait = std::min(wait, backoff.cap);
    // cycles: skip the next `wait` cycles; milliseconds: wait that long
    f.until = backoff.in == backoff_config::unit::cycles
                  ? cycle_ + wait + 1
                  : ctx.now().time_since_epoch().count() + wait;
  }

  /// The state at a reservation's start as recorded when it was made: running jobs that have
  /// not ended by then (their expected ends), the reservations active then at the placements
  /// found, and the jobs admitted since. Invalid when a later change could not be recorded.
  struct future_state {
    sim_time at{};
    ledger book;
    bool valid = false;
  };

  /// Fast path of `approve`: whether `placed` fits beside everything `f` records (then every
  /// reservation active at `f.at` keeps its recorded placement). Victims and shrinks only free
  /// resources, so ignoring them errs on the safe side. O(tasks x log nodes).
  static bool fits_beside(future_state& f, std::span<const task_allocation> placed) {
    if (!f.valid) return false;
    auto t = f.book.begin();
    for (const auto& a : placed) {
      if (!t.place(a)) return false;
    }
    return true;  // ~t rolls back
  }

  [[nodiscard]] const reservation* find_reservation(job_id id) const noexcept {
    for (const auto& r : reserved_) {
      if (r.job == id) return &r;
    }
    return nullptr;
  }

  [[nodiscard]] sim_time end_of(sim_time start, const job_spec& j) const noexcept {
    const auto d = j.expected_duration ? j.expected_duration : default_duration;
    return d ? start + *d : sim_time::max();
  }

  void insert_release(release r) {
    releases_.insert(std::upper_bound(releases_.begin(), releases_.end(), r), r);
  }

  /// Running jobs with a known end, in end order; built once per cycle, then kept in step.
  void refresh_releases(const schedule_context& ctx) {
    if (releases_valid_) return;
    releases_.clear();
    for (const auto& r : ctx.book().running()) {
      const sim_time end = end_of(r.start, r.spec);
      if (end != sim_time::max()) releases_.push_back({std::max(end, ctx.now()), r.spec.id});
    }
    std::sort(releases_.begin(), releases_.end());
    releases_valid_ = true;
  }

  /// Builds, in `tx`, the state at time `t`: running jobs that end by `t` are evicted and the
  /// reservations active at `t` are placed in order. True when every one of them fits.
  bool state_at(const schedule_context& ctx, sim_time t, ledger::transaction& tx,
                const admission_tools& tools, const job_spec* extra = nullptr) {
    refresh_releases(ctx);
    for (const auto& r : releases_) {
      if (r.at > t) break;
      if (ctx.book().is_running(r.job) && !tx.is_evicted(r.job)) tx.evict(r.job);
    }
    for (std::size_t i = 0; i < reserved_.size(); ++i) {
      const auto& r = reserved_[i];
      if (r.start <= t && t < r.end && !tools.place(*specs_[i], tx).placed) return false;
    }
    return extra == nullptr || tools.place(*extra, tx).placed;
  }

  /// Whether every reservation active at `t` still fits at `t`, given what `tx` holds now.
  bool holds_at(const schedule_context& ctx, sim_time t, ledger::transaction& tx,
                const admission_tools& tools) {
    const auto sp = tx.mark();
    const bool ok = state_at(ctx, t, tx, tools);
    tx.rollback_to(sp);
    return ok;
  }

  /// Finds and records `j`'s reservation; false when none exists within the releases known.
  bool reserve(const schedule_context& ctx, const job_spec& j, const admission_tools& tools) {
    refresh_releases(ctx);
    auto tx = tools.begin();
    const sim_time dur_end_unknown = sim_time::max();
    auto feasible = [&](sim_time t) {
      const auto sp = tx.mark();
      bool ok = state_at(ctx, t, tx, tools, &j);
      if (ok) {
        // j running from t must not break a later reservation
        const sim_time end = end_of(t, j) == dur_end_unknown ? dur_end_unknown : end_of(t, j);
        for (const auto& r : reserved_) {
          if (!ok) break;
          if (r.start > t && r.start < end) {
            tx.rollback_to(sp);
            ok = state_at(ctx, r.start, tx, tools) && tools.place(j, tx).placed;
          }
        }
      }
      tx.rollback_to(sp);
      return ok;
    };
    // The earliest time `j` fits once running jobs end, ignoring reservations: bisection over
    // how many releases happen (more releases never make it fit less). The evictions stay in
    // `tx` between probes and are undone to savepoints, so the whole search evicts
    // O(releases) jobs rather than O(releases x log releases).
    std::optional<sim_time> earliest;
    prefix_.clear();
    prefix_.push_back(tx.mark());              // prefix_[i]: after evicting releases_[0..i)
    auto evict_through = [&](std::size_t k) {  // releases_[0..k) and ties of releases_[k-1]
      if (k == 0) {
        tx.rollback_to(prefix_.front());
        prefix_.resize(1);
        return;
      }
      std::size_t end = k;
      while (end < releases_.size() && releases_[end].at == releases_[k - 1].at) ++end;
      if (end + 1 < prefix_.size()) {
        tx.rollback_to(prefix_[end]);
        prefix_.resize(end + 1);
      }
      for (std::size_t i = prefix_.size() - 1; i < end; ++i) {
        const job_id id = releases_[i].job;
        if (ctx.book().is_running(id) && !tx.is_evicted(id)) tx.evict(id);
        prefix_.push_back(tx.mark());
      }
    };
    auto fits_after = [&](std::size_t k) {
      evict_through(k);
      const auto sp = tx.mark();
      const bool ok = tools.place(j, tx).placed;
      tx.rollback_to(sp);
      return ok;
    };
    std::size_t lo = 0, hi = releases_.size() + 1;  // lo: releases known too few
    // find the smallest k in 1..n with fits_after(k)
    if (!releases_.empty() && fits_after(releases_.size())) {
      hi = releases_.size();
      while (hi - lo > 1) {
        const auto mid = lo + (hi - lo) / 2;
        (fits_after(mid) ? hi : lo) = mid;
      }
      earliest = releases_[hi - 1].at;
    }
    std::optional<sim_time> when;
    if (earliest && reserved_.empty()) {
      when = earliest;
    } else if (earliest) {
      // Reservations only take room away, so scan from `earliest`: the releases and the
      // reservations' ends, at most `horizon` points, for one where `j` fits beside them.
      std::vector<sim_time> points;
      for (const auto& r : releases_) points.push_back(r.at);
      for (const auto& r : reserved_) {
        if (r.end != sim_time::max()) points.push_back(r.end);
      }
      std::sort(points.begin(), points.end());
      points.erase(std::unique(points.begin(), points.end()), points.end());
      const auto from = std::lower_bound(points.begin(), points.end(), *earliest);
      for (auto it = from; it != points.end() && std::cmp_less(it - from, horizon); ++it) {
        // keep the releases up to this point evicted (points ascend): state_at adds none
        const release upto{*it, job_id{std::numeric_limits<job_id::rep>::max()}};
        evict_through(static_cast<std::size_t>(
            std::upper_bound(releases_.begin(), releases_.end(), upto) - releases_.begin()));
        if (feasible(*it)) {
          when = *it;
          break;
        }
      }
    }
    if (!when) return false;
    const reservation made{j.id, *when, end_of(*when, j)};
    // Record the state at its start (for approve's fast path); earlier records that the new
    // reservation overlaps no longer show it, so they are dropped.
    tx.rollback();
    future_state f{*when, ledger{}, false};
    {
      auto at_start = tools.begin();
      if (state_at(ctx, *when, at_start, tools, &j)) {
        f.book = ledger(at_start.state());
        f.valid = true;
      }
    }  // ~at_start rolls back
    for (auto& other : future_) {
      if (made.start <= other.at && other.at < made.end) other.valid = false;
    }
    reserved_.push_back(made);
    specs_.push_back(&j);
    future_.push_back(std::move(f));
    return true;
  }

  std::int64_t cycle_ = 0;
  std::unordered_map<job_id, failure> failures_;
  std::vector<reservation> reserved_;
  std::vector<const job_spec*> specs_;  // the reserved jobs (pending, valid during a cycle)
  std::vector<release> releases_;
  bool releases_valid_ = false;
  std::vector<ledger::transaction::savepoint> prefix_;  // reserve(): evicted release prefixes
  std::vector<future_state> future_;                    // per reservation, same order
  backfill_stats stats_;
};

static_assert(admission_policy<gang_admission>);

GPUSCHED_END_NAMESPACE
