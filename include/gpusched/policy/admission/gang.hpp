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
/// - `conservative_backfill`: every gang that does not fit, or that fits now but would delay
///   a reservation (reason `reservation`), gets a reservation, each respecting the earlier
///   ones; a job may start now only if every reservation still holds at every reservation
///   time. `max_reservations` bounds how many are held at once.
///
/// Reservations are pinned and carried across cycles: once a gang has a reservation, its start
/// never moves later while the gang waits. Every job that starts (a backfilled one, or a
/// reserved one starting before its time, "running early") is checked against every other
/// reservation it could delay, and a new reservation is checked against the older ones, so
/// each held reservation stays feasible as long as running jobs end by their expected ends
/// (and the placement policy finds a placement for the reserved gang at its start, when its
/// pinned allocation, below, is free). A reservation is
/// dropped when its gang starts (then the room it held is free for others), when the gang was
/// not in the previous cycle's queue (it left the queue; kept when a blocked head hid it), or
/// when its start has come and the gang still does not fit (a running job outlived its
/// estimate): then it is reserved again, later. Reservations do not move earlier on their own;
/// a gang whose room frees up early starts early through the normal check.
///
/// A reservation pins an allocation: where the pipeline's own placement policy put the gang
/// in the what-if at its start (so it respects gangs, GPU models, MIG geometry and whatever
/// the placement policy respects), held from its start to its expected end. Every what-if
/// places the active reservations at their pinned allocations, so a check does not depend on
/// where the placement policy would put them another time; the gang starts on its pinned
/// allocation when that is free (always from its start on, when estimates hold), else (early)
/// where the placement policy puts it. (The pinned allocation is used only when it has the same
/// shape as the policy's placement: tasks per group, GPUs per model, size and MIG slots, so
/// quota checks made on the policy's placement stay exact; an elastic gang shrunk for quota
/// keeps the policy's placement.) The
/// earliest start of a gang is found by walking the *intervals* between boundaries: now, and
/// the starts and ends of held reservations. Within an interval the set of active reservations
/// is fixed and more running jobs end as time goes on, so whether the gang fits at time t is
/// monotone: bisection over the running jobs' expected ends in the interval (a job past its
/// expected end counts as ending now) finds the first t where it fits, evicting O(releases)
/// jobs per interval in all (the evictions are kept between probes). The gang must also not
/// break a reservation starting while it would run; that condition only gets harder later in
/// the interval, so it is checked once at that t and a failure moves on to the next interval.
/// `horizon` caps the number of intervals walked (not time points), so 10,000 distinct ends
/// cost O(log 10,000) probes per interval. A gang for which no start is found within `horizon`
/// intervals is listed in `unreserved()` and skipped (a later cycle tries again); one that
/// cannot fit even after every known end (what blocks it has no estimate) is listed too and
/// blocks the queue (see below).
///
/// Checking a candidate (`approve`): when a reservation is made, the state at its start is
/// recorded (running jobs that have not ended by then, the reservations active then at their
/// pinned allocations); jobs admitted later are added to the record (records are carried with
/// their reservations; jobs that end early leave them pessimistic, never optimistic). A candidate
/// whose placement fits beside the record cannot delay that reservation (its recorded
/// placement stays free), so it passes without a what-if; otherwise a full what-if (evict the
/// releases up to the start, place the active reservations at their pinned allocations)
/// decides.
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
/// Rejection: a gang whose whole-GPU total exceeds the cluster's GPUs, one of whose tasks
/// exceeds the largest node (GPUs of an allowed model, CPU or memory), or one of whose MIG
/// groups needs more instances of its profile (at its minimum size) than all the MIG GPUs it
/// may use could hold when empty (`mig(5, 4)`, which no GPU offers; five `mig(3, 4)` tasks on
/// one A100 node of two GPUs, which hold four), is rejected with `unschedulable`. These are
/// necessary conditions; a gang that passes may still never fit and is then deferred every cycle
/// with `no_fit`.
#pragma once

#include <algorithm>  // std::sort, std::lower_bound, std::min
#include <bit>        // std::popcount
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
#include "gpusched/policy/detail/fit.hpp"  // detail::mig_instances_room
#include "gpusched/policy/hooks.hpp"
#include "gpusched/resource/mig_catalog.hpp"

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
  /// The unit of `base` and `cap`: scheduling cycles or milliseconds.
  enum class unit : std::uint8_t { cycles, milliseconds };
  /// The unit of `base` and `cap`.
  unit in = unit::cycles;
  std::int64_t base = 0;   ///< first wait (0: backoff off)
  std::int64_t cap = 64;   ///< longest wait
  std::int32_t limit = 0;  ///< reject after this many consecutive failures (0: never)
  friend constexpr bool operator==(const backoff_config&, const backoff_config&) = default;
};

/// @brief A backfill reservation: `job` may start at `start` (what-if placement succeeded).
struct reservation {
  /// The reserved gang.
  job_id job;
  /// When it may start.
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
  /// Opts into the admission family.
  using policy_category = admission_tag;
  /// The optional hooks it implements, called by the pipeline (`policy/hooks.hpp`).
  using hooks =
      hook_list<hook::begin_cycle, hook::approve, hook::on_committed, hook::approve_growth>;

  gang_admission() = default;
  /// Admission with queueing mode `m` and backoff `b`.
  explicit gang_admission(queueing m, backoff_config b = {}) : mode(m), backoff(b) {}

  /// What the queue does behind a gang that does not fit (see the file documentation).
  queueing mode = queueing::best_effort;
  /// Backoff for gangs that keep failing (off by default).
  backoff_config backoff{};
  std::int32_t max_reservations = 16;  ///< conservative backfill: reservations held at once
  std::int32_t horizon = 128;          ///< boundary intervals walked to find a reservation
  std::optional<sim_duration> default_duration;  ///< assumed for jobs without an estimate

  /// The policy's name: `gang`, `gang-strict`, `gang-easy` or `gang-conservative`, by `mode`.
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

  /// The reservations held (carried across cycles), in the order they were made.
  [[nodiscard]] const std::vector<reservation>& reservations() const noexcept { return reserved_; }
  /// The gangs that needed a reservation this cycle and got none: beyond `horizon` intervals,
  /// over `max_reservations`, or unable to fit after every known end.
  [[nodiscard]] const std::vector<job_id>& unreserved() const noexcept { return unreserved_; }
  /// Counts of this cycle's backfill checks (fast or full what-if).
  [[nodiscard]] const backfill_stats& last_stats() const noexcept { return stats_; }

  /// Drops the reservations of gangs that run now or left the queue (see the file
  /// documentation). O(reservations).
  void begin_cycle(const schedule_context& ctx) {
    ++cycle_;
    for (std::size_t i = reserved_.size(); i-- > 0;) {
      const bool left = seen_[i] + 1 < cycle_ && !blocked_;
      if (left || ctx.book().is_running(reserved_[i].job)) drop(i);
    }
    blocked_ = false;
    unreserved_.clear();
    stats_ = {};
    releases_valid_ = false;
  }

  /// The verdict on `j` before placement (admit, defer or reject, with the reason).
  [[nodiscard]] admission_verdict admit(const schedule_context& ctx, const job_spec& j) const {
    if (auto r = unschedulable(ctx.state(), j)) return {verdict::reject, *r};
    if (backoff.base > 0) {
      const auto it = failures_.find(j.id);
      if (it != failures_.end() && backoff.limit > 0 && it->second.count >= backoff.limit) {
        return {verdict::reject, reason::backoff(it->second.count)};
      }
      if (it != failures_.end() && waiting(ctx, it->second)) {
        return {verdict::defer,
                backoff.in == backoff_config::unit::milliseconds
                    ? reason::backoff(it->second.count, sim_time{sim_duration{it->second.until}})
                    : reason::backoff_cycles(it->second.count, it->second.until)};
      }
    }
    return {verdict::admit, {}};
  }

  /// The growth step's check (see `pipeline`): a running job may grow only while no backfill
  /// reservation is held, since grown tasks run until the job ends and could delay the
  /// reserved gang; refused with reason `reservation` naming the first reserved job otherwise.
  /// O(1).
  [[nodiscard]] admission_verdict approve_growth(const schedule_context&, const running_job&,
                                                 std::span<const task_allocation>) const {
    if (reserved_.empty()) return {verdict::admit, {}};
    return {verdict::defer, reason::reservation(reserved_.front().job, reserved_.front().start)};
  }

  /// Checks, after `j` was placed tentatively in `tx`, that starting it now delays no
  /// reservation. Per reservation that `j` outlives: O(tasks x log nodes) when `j` fits beside
  /// the recorded state, else O(releases + placements).
  [[nodiscard]] admission_verdict approve(const schedule_context& ctx, const job_spec& j,
                                          ledger::transaction& tx, const admission_tools& tools) {
    if (reserved_.empty()) return {verdict::admit, {}};
    // A reserved gang starts where it was reserved when that room is free (it always is from
    // its reservation's start on); before that it keeps the placement policy's choice. Either
    // way it is checked against the others like any job, its own reservation left out.
    for (std::size_t i = 0; i < reserved_.size(); ++i) {
      if (reserved_[i].job != j.id) continue;
      const ledger::transaction::savepoint before{0, tx.shrunk().size(), tx.evicted().size(),
                                                  tx.grown().size()};
      chosen_.assign(tx.placed().begin(), tx.placed().end());
      if (!same_shape(ctx.state(), chosen_, pinned_[i])) break;  // e.g. an elastic gang shrunk
      tx.rollback_to(before);
      if (!place_exact(pinned_[i], tx)) {
        tx.rollback_to(before);
        for (const auto& a : chosen_) (void)tx.place(a);  // exactly what was placed before
      }
      break;
    }
    const sim_time end = end_of(ctx.now(), j);
    for (std::size_t i = 0; i < reserved_.size(); ++i) {
      const auto& r = reserved_[i];
      if (r.job == j.id || r.start >= end) continue;  // its own, or j is gone by then
      if (fits_beside(future_[i], tx.placed())) {
        ++stats_.fast_checks;
        continue;
      }
      ++stats_.what_ifs;
      if (!holds_at(ctx, r.start, tx, tools, j.id)) {
        return {verdict::defer, reason::reservation(r.job, r.start)};
      }
    }
    return {verdict::admit, {}};
  }

  /// Hook `on_committed`: called after an admitted job's commit, with its decision.
  void on_committed(const schedule_context& ctx, const decision& d) {
    failures_.erase(d.job);
    for (std::size_t i = 0; i < reserved_.size(); ++i) {
      if (reserved_[i].job == d.job) {
        drop(i);  // its gang runs: the room it held is free
        break;
      }
    }
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

  /// What the queue does after `j` could not be placed (skip to the next job, or block).
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
    for (std::size_t i = 0; i < reserved_.size(); ++i) {
      if (reserved_[i].job != j.id) continue;
      seen_[i] = cycle_;
      if (reserved_[i].start > ctx.now()) return queue_action::skip;  // pinned
      drop(i);  // its time came and it cannot start: reserved again below, later
      break;
    }
    const bool wants = capacity || (mode == queueing::conservative_backfill &&
                                    why.code == reason_code::reservation);
    if (!wants) return queue_action::skip;
    const auto limit = mode == queueing::easy_backfill ? 1 : max_reservations;
    if (std::cmp_greater_equal(reserved_.size(), limit)) {
      unreserved_.push_back(j.id);
      return queue_action::skip;
    }
    switch (reserve(ctx, j, tools)) {
      case search::found:
        return queue_action::skip;
      case search::beyond_horizon:
        unreserved_.push_back(j.id);
        return queue_action::skip;
      case search::never:
        break;
    }
    unreserved_.push_back(j.id);
    blocked_ = true;
    return queue_action::block;  // no reservation possible: do not let others starve it
  }

  /// Forgets a job's failure history and reservation (call when a job leaves the queue
  /// without running).
  void forget(job_id id) {
    failures_.erase(id);
    for (std::size_t i = 0; i < reserved_.size(); ++i) {
      if (reserved_[i].job == id) {
        drop(i);
        break;
      }
    }
  }

  friend bool operator==(const gang_admission& a, const gang_admission& b) noexcept {
    return a.mode == b.mode && a.backoff == b.backoff && a.max_reservations == b.max_reservations &&
           a.horizon == b.horizon && a.default_duration == b.default_duration;
  }

  /// The `unschedulable` reason for `j` on `c`, if any. O(groups x models), plus O(MIG GPUs x
  /// placements) per MIG group.
  [[nodiscard]] static std::optional<reason> unschedulable(const cluster& c, const job_spec& j) {
    std::int64_t min_gpus = 0;
    for (const auto& g : j.groups)
      min_gpus += std::int64_t{g.request.gpu.whole_gpus().value()} * g.minimum();
    if (min_gpus > c.total_gpus()) {
      return reason::unschedulable(resource_kind::gpu, min_gpus, c.total_gpus());
    }
    for (std::size_t g = 0; g < j.groups.size(); ++g) {
      const auto& r = j.groups[g].request;
      const auto gi = static_cast<std::int32_t>(g);
      if (r.gpu.kind == gpu_demand_kind::whole) {
        const int most = largest_node_gpus(c, r.allowed_models);
        if (r.gpu.count.value() > most) {
          return reason::unschedulable_task(gi, resource_kind::gpu, r.gpu.count.value(), most);
        }
      }
      if (r.gpu.kind == gpu_demand_kind::mig) {
        // every MIG GPU it may use, empty: the instances of its profile they could ever hold
        const auto room = detail::mig_instances_room(
            c, r, [](gpu_index, const gpu_state&) { return mig_occupancy{}; });
        if (room.total < j.groups[g].minimum()) {
          return reason::unschedulable_mig(gi, j.groups[g].minimum(), room.total);
        }
      }
      if (r.cpu > c.max_node_cpu()) {
        return reason::unschedulable_task(gi, resource_kind::cpu, r.cpu.value(),
                                          c.max_node_cpu().value());
      }
      if (r.memory > c.max_node_memory()) {
        return reason::unschedulable_task(gi, resource_kind::memory, r.memory.value(),
                                          c.max_node_memory().value());
      }
    }
    return std::nullopt;
  }

 private:
  enum class search : std::uint8_t { found, beyond_horizon, never };

  /// Removes reservation `i` and its record. O(reservations).
  void drop(std::size_t i) {
    const auto at = static_cast<std::ptrdiff_t>(i);
    reserved_.erase(reserved_.begin() + at);
    pinned_.erase(pinned_.begin() + at);
    seen_.erase(seen_.begin() + at);
    future_.erase(future_.begin() + at);
    reorder();
  }

  /// Rebuilds `by_start_`: reservations by start, then in the order made. O(r log r).
  void reorder() {
    by_start_.resize(reserved_.size());
    for (std::size_t i = 0; i < by_start_.size(); ++i) by_start_[i] = i;
    std::sort(by_start_.begin(), by_start_.end(), [&](std::size_t a, std::size_t b) {
      return reserved_[a].start != reserved_[b].start ? reserved_[a].start < reserved_[b].start
                                                      : a < b;
    });
  }

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

  /// Whether two allocations of one gang have the same tasks per group and the same GPUs per
  /// model, size and MIG slots (so quotas count them alike). O(grants log grants).
  bool same_shape(const cluster& c, std::span<const task_allocation> a,
                  std::span<const task_allocation> b) {
    if (a.size() != b.size()) return false;
    auto keys = [&](std::span<const task_allocation> tasks, std::vector<std::int64_t>& out) {
      out.clear();
      for (const auto& t : tasks) {
        out.push_back(std::int64_t{t.group} << 48);
        for (const auto& g : t.gpus) {
          out.push_back((std::int64_t{t.group} << 48) | (std::int64_t{1} << 47) |
                        (std::int64_t{c.gpu(g.gpu).model.value()} << 24) |
                        (std::int64_t{g.milli.value()} << 8) |
                        std::popcount(static_cast<unsigned>(g.mig_slots)));
        }
      }
      std::sort(out.begin(), out.end());
    };
    keys(a, keys_a_);
    keys(b, keys_b_);
    return keys_a_ == keys_b_;
  }

  /// Places exactly `tasks` in `tx`; false (leaving what did fit) when one does not fit.
  static bool place_exact(std::span<const task_allocation> tasks, ledger::transaction& tx) {
    for (const auto& a : tasks) {
      if (!tx.place(a)) return false;
    }
    return true;
  }

  /// Places, in `tx`, the reservations active at `t` (but `skip`'s) at their pinned
  /// allocations, in the order they start, then `extra` with the placement policy if given.
  /// True when every one fits.
  bool place_active(sim_time t, ledger::transaction& tx, const admission_tools& tools,
                    const job_spec* extra = nullptr, job_id skip = {}) {
    for (const std::size_t i : by_start_) {
      const auto& r = reserved_[i];
      if (r.job == skip || t < r.start || t >= r.end) continue;
      if (!place_exact(pinned_[i], tx)) return false;
    }
    return extra == nullptr || tools.place(*extra, tx).placed;
  }

  /// Builds, in `tx`, the state at time `t`: running jobs that end by `t` are evicted and the
  /// reservations active at `t` are placed in order. True when every one of them fits.
  bool state_at(const schedule_context& ctx, sim_time t, ledger::transaction& tx,
                const admission_tools& tools, const job_spec* extra = nullptr, job_id skip = {}) {
    refresh_releases(ctx);
    for (const auto& r : releases_) {
      if (r.at > t) break;
      if (ctx.book().is_running(r.job) && !tx.is_evicted(r.job)) tx.evict(r.job);
    }
    return place_active(t, tx, tools, extra, skip);
  }

  /// Whether every reservation active at `t` (but `skip`'s) still fits at `t`, given what `tx`
  /// holds now.
  bool holds_at(const schedule_context& ctx, sim_time t, ledger::transaction& tx,
                const admission_tools& tools, job_id skip = {}) {
    const auto sp = tx.mark();
    const bool ok = state_at(ctx, t, tx, tools, nullptr, skip);
    tx.rollback_to(sp);
    return ok;
  }

  /// Finds and records `j`'s reservation by walking the boundary intervals (see the file
  /// documentation). O(horizon x (log releases placements + releases evictions)).
  search reserve(const schedule_context& ctx, const job_spec& j, const admission_tools& tools) {
    refresh_releases(ctx);
    const sim_time now = ctx.now();
    bounds_.clear();
    for (const auto& r : reserved_) {
      if (r.start > now) bounds_.push_back(r.start);
      if (r.end > now && r.end != sim_time::max()) bounds_.push_back(r.end);
    }
    std::sort(bounds_.begin(), bounds_.end());
    bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());

    auto tx = tools.begin();
    // The evictions of a prefix of `releases_` stay in `tx` between probes and are undone to
    // savepoints, so an interval evicts O(releases) jobs rather than O(releases x probes).
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
    auto ended_by = [&](sim_time t) {  // how many releases happen by `t`
      const release upto{t, job_id{std::numeric_limits<job_id::rep>::max()}};
      return static_cast<std::size_t>(std::upper_bound(releases_.begin(), releases_.end(), upto) -
                                      releases_.begin());
    };
    // `j` fits once `k` releases happened, beside the reservations active at `at`
    auto fits = [&](std::size_t k, sim_time at) {
      evict_through(k);
      const auto sp = tx.mark();
      const bool ok = place_active(at, tx, tools, &j);
      tx.rollback_to(sp);
      return ok;
    };
    // `j` at `placed_` from `t` breaks no reservation that starts while it runs
    auto keeps_later = [&](sim_time t) {
      const sim_time end = end_of(t, j);
      for (const auto& r : reserved_) {
        if (r.start <= t || r.start >= end) continue;
        evict_through(ended_by(r.start));
        const auto sp = tx.mark();
        const bool ok = place_active(r.start, tx, tools) && place_exact(placed_, tx);
        tx.rollback_to(sp);
        if (!ok) return false;
      }
      return true;
    };

    std::optional<sim_time> when;
    search result = search::never;
    sim_time lo = now;
    for (std::size_t k = 0; k <= bounds_.size(); ++k) {
      if (std::cmp_greater_equal(k, horizon)) {
        result = search::beyond_horizon;
        break;
      }
      const sim_time hi = k < bounds_.size() ? bounds_[k] : sim_time::max();
      if (hi <= lo) continue;
      // candidates: `lo` (the releases by then done), then each release in (lo, hi)
      const std::size_t first = ended_by(lo);
      std::size_t last = first;
      while (last < releases_.size() && releases_[last].at < hi) ++last;
      if (fits(last, lo)) {
        std::size_t a = first, b = last;  // fits(b): find the least such count
        if (b != first && fits(first, lo)) b = first;
        while (b - a > 1) {
          const auto mid = a + (b - a) / 2;
          (fits(mid, lo) ? b : a) = mid;
        }
        const sim_time t = b == first ? lo : releases_[b - 1].at;
        // where `j` lands at `t`: pinned for its whole run
        evict_through(b);
        const auto sp = tx.mark();
        (void)place_active(lo, tx, tools);
        const auto mine = tx.mark();
        const bool placed = tools.place(j, tx).placed;
        placed_.assign(tx.placed().begin() + static_cast<std::ptrdiff_t>(mine.placed),
                       tx.placed().end());
        tx.rollback_to(sp);
        if (placed && keeps_later(t)) {
          when = t;
          result = search::found;
          break;
        }
      }
      lo = hi;
    }
    if (!when) return result;
    const reservation made{j.id, *when, end_of(*when, j)};
    // Record the state at its start (for approve's fast path); earlier records that the new
    // reservation overlaps no longer show it, so they are dropped.
    tx.rollback();
    future_state f{*when, ledger{}, false};
    {
      auto at_start = tools.begin();
      if (state_at(ctx, *when, at_start, tools) && place_exact(placed_, at_start)) {
        f.book = ledger(at_start.state());
        f.valid = true;
      }
    }  // ~at_start rolls back
    for (auto& other : future_) {
      if (made.start <= other.at && other.at < made.end) other.valid = false;
    }
    reserved_.push_back(made);
    pinned_.push_back(placed_);
    seen_.push_back(cycle_);
    future_.push_back(std::move(f));
    reorder();
    return search::found;
  }

  std::int64_t cycle_ = 0;
  std::unordered_map<job_id, failure> failures_;
  std::vector<reservation> reserved_;  // held, carried across cycles, in the order made
  std::vector<std::vector<task_allocation>> pinned_;  // per reservation: where it starts
  std::vector<task_allocation> placed_, chosen_;      // reserve() / approve() scratch
  std::vector<std::int64_t> keys_a_, keys_b_;         // same_shape() scratch
  std::vector<std::int64_t> seen_;     // per reservation: last cycle its gang was considered
  std::vector<job_id> unreserved_;     // this cycle: gangs that got no reservation
  std::vector<sim_time> bounds_;       // reserve(): reservation starts and ends after now
  std::vector<std::size_t> by_start_;  // reservation indices by start, then order made
  bool blocked_ = false;               // a head without a reservation blocked the queue
  std::vector<release> releases_;
  bool releases_valid_ = false;
  std::vector<ledger::transaction::savepoint> prefix_;  // reserve(): evicted release prefixes
  std::vector<future_state> future_;                    // per reservation, same order
  backfill_stats stats_;
};

static_assert(admission_policy<gang_admission>);

GPUSCHED_END_NAMESPACE
