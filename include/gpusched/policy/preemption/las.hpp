// SPDX-License-Identifier: Apache-2.0
/// @file
/// `las_preemption`: Tiresias' preemption (Gu et al., NSDI'19): a job in a higher-priority
/// attained-service queue preempts running jobs of lower-priority queues, so a job demoted past
/// a threshold (3,600 GPU-seconds by default) gives way to newcomers. Use it with
/// `las_ordering` or `gittins_ordering` over the same thresholds; all read attained service from
/// the context's job history (`schedule_context::history()`), which the pipeline owns and the
/// simulator feeds (or from an explicit `service_record` given at construction).
///
/// Attained service (GPU-seconds): a pending job's is the record's; a running job's adds its
/// current stint, `milli_gpus() / 1000 x (now - start)`. Queue = number of thresholds at or
/// below it (`las_ordering::queue_of`).
///
/// Victims: running, preemptible jobs whose queue is strictly above the preemptor's, taken
/// lowest priority first - highest queue, then latest submit (the last in the queue's FIFO
/// order), then highest id; the shortest prefix of that list after which `probe` says the
/// preemptor fits (galloping then bisection, as `priority_preemption`; every returned set has
/// probed true). Nobody is evicted if all candidates together do not make room. Jobs of one
/// queue never preempt each other, so a job cannot be preempted by one it would be ordered
/// after. Complexity O(R log R + log R x probe) for R running jobs; within a pipeline cycle
/// (`begin_cycle`) the running jobs are ranked once per change of the ledger, so a further call
/// costs O(log R + log R x probe), and no probe when no running job is in a lower queue than
/// the preemptor (`detail::ranked_victims`; same plans as ranking afresh).
///
/// `srtf_preemption`: the preemptive form of the SRTF/SRSF oracle (`srtf_ordering`), Tiresias'
/// SRSF baseline: a pending job preempts running jobs whose remaining time (SRSF: remaining
/// time x GPUs) is strictly larger than its own, largest remaining first (then latest submit,
/// highest id), with the same shortest-prefix search. Remaining = expected duration - executed
/// time (the record's, plus a running job's current stint); jobs without an estimate count as
/// infinitely long (they never preempt, and are preempted first by any job with an estimate).
/// Since victims always have strictly more remaining work than the preemptor, and remaining work
/// only falls while a job runs, no two jobs can preempt each other back and forth.
#pragma once

#include <algorithm>  // std::sort, std::min, std::upper_bound, std::max, std::partition_point
#include <cstddef>    // std::ptrdiff_t
#include <cstdint>
#include <limits>
#include <memory>  // std::shared_ptr
#include <span>
#include <string_view>
#include <utility>  // std::move
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/time.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/hooks.hpp"
#include "gpusched/policy/context.hpp"
#include "gpusched/policy/preemption/prefix_search.hpp"
#include "gpusched/workload/history.hpp"  // service_record
#include "gpusched/workload/ledger.hpp"

GPUSCHED_BEGIN_NAMESPACE

namespace detail {
/// The running, preemptible jobs ranked for eviction (higher rank first, then latest submit,
/// then highest id: a strict total order, ids being distinct), the scratch both policies of
/// this file share. A preemptor's candidates are the jobs ranked strictly above its own rank,
/// which in that order are a prefix; `plan_above` takes the shortest sub-prefix of it after
/// which the preemptor fits (`shortest_prefix_plan`).
///
/// Within a cycle (after `begin_cycle`) the ranked list is kept while the ledger (address and
/// `version()`), `now` and the service record's `version()` are unchanged - every input of a
/// rank - so a cycle with P jobs that do not fit ranks the R running jobs once per change of
/// the ledger instead of P times. The candidates of a preemptor, and so its probes and plan,
/// are exactly those of filtering then sorting afresh: the kept list is sorted by the same
/// total order, and the jobs ranked above a threshold are its prefix. Outside a cycle the list
/// is rebuilt on every call. Rebuild O(R log R); `plan_above` O(log R + log R probes).
class ranked_victims {
 public:
  /// Starts a cycle: the list may be kept across calls until the next `begin_cycle`. O(1).
  void begin_cycle() noexcept {
    in_cycle_ = true;
    built_ = false;
  }
  /// True when the list built for the same ledger, version, `now` and record version can be
  /// reused (only within a cycle). O(1).
  [[nodiscard]] bool current(const ledger& book, sim_time now,
                             std::uint64_t record_version) const noexcept {
    return in_cycle_ && built_ && book_ == &book && book_version_ == book.version() &&
           now_ == now && record_version_ == record_version;
  }
  /// Empties the list before a rebuild for (`book`, `now`, `record_version`). O(1).
  void reset(const ledger& book, sim_time now, std::uint64_t record_version) noexcept {
    cand_.clear();
    ids_.clear();
    book_ = &book;
    book_version_ = book.version();
    now_ = now;
    record_version_ = record_version;
    built_ = false;
  }
  void add(double rank, const running_job& r) { cand_.push_back({rank, r.spec.submit, r.spec.id}); }
  /// Sorts the added jobs into eviction order. O(R log R).
  void sort() {
    std::sort(cand_.begin(), cand_.end(), [](const candidate& a, const candidate& b) {
      if (a.rank != b.rank) return a.rank > b.rank;
      if (a.submit != b.submit) return a.submit > b.submit;
      return a.id > b.id;
    });
    ids_.clear();
    for (const auto& c : cand_) ids_.push_back(c.id);
    built_ = true;
  }
  /// Number of jobs ranked strictly above `rank`. O(log R).
  [[nodiscard]] std::size_t count_above(double rank) const noexcept {
    const auto it = std::partition_point(cand_.begin(), cand_.end(),
                                         [&](const candidate& c) { return c.rank > rank; });
    return static_cast<std::size_t>(it - cand_.begin());
  }
  /// The plan of a preemptor of rank `rank`: the shortest fitting prefix of the jobs ranked
  /// strictly above it, or `no_victims` with their number. O(log R + log R probes).
  [[nodiscard]] preemption_plan plan_above(double rank, fit_probe& probe) const {
    return shortest_prefix_plan(std::span<const job_id>(ids_).first(count_above(rank)), probe);
  }

 private:
  struct candidate {
    double rank;
    sim_time submit;
    job_id id;
  };
  std::vector<candidate> cand_;
  std::vector<job_id> ids_;  // cand_'s ids, in the same order
  const ledger* book_ = nullptr;
  std::uint64_t book_version_ = 0;
  sim_time now_{};
  std::uint64_t record_version_ = 0;
  bool in_cycle_ = false;
  bool built_ = false;
};
}  // namespace detail

/// @brief Attained-service-queue preemption (Tiresias); see the file documentation.
class las_preemption {
 public:
  /// Opts into the preemption family.
  using policy_category = preemption_tag;
  /// The optional hooks it implements, called by the pipeline (`policy/hooks.hpp`).
  using hooks = hook_list<hook::begin_cycle>;
  /// Tiresias' default thresholds (3,600 GPU-seconds); attained service from the context.
  las_preemption() = default;
  /// @throws invalid_value_error (field `thresholds`) unless positive and strictly increasing.
  explicit las_preemption(std::vector<double> thresholds)
      : thresholds_(detail::checked_thresholds(std::move(thresholds))) {}
  /// With an explicit record (null: the context's history).
  /// @throws invalid_value_error (field `thresholds`) unless positive and strictly increasing.
  explicit las_preemption(std::shared_ptr<const service_record> record,
                          std::vector<double> thresholds = {3600.0})
      : record_(std::move(record)),
        thresholds_(detail::checked_thresholds(std::move(thresholds))) {}
  /// The policy's name: `las`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "las"; }

  /// Attained GPU-seconds of a pending job by the explicit record (none: 0).
  [[nodiscard]] double attained(const job_spec& j) const { return own().gpu_seconds(j.id); }
  /// Attained GPU-seconds of a running job at `now`, its current stint included, by the
  /// explicit record (none: the stint only).
  [[nodiscard]] double attained(const running_job& r, sim_time now) const {
    return attained(own(), r, now);
  }
  /// As above, by `rec`.
  [[nodiscard]] static double attained(const service_record& rec, const running_job& r,
                                       sim_time now) {
    const double stint = now > r.start ? to_seconds(now - r.start) : 0.0;
    return rec.gpu_seconds(r.spec.id) + static_cast<double>(r.milli_gpus()) / 1000.0 * stint;
  }
  /// The queue of attained service `a`: the number of thresholds at or below it.
  [[nodiscard]] std::size_t queue_of(double a) const noexcept {
    return static_cast<std::size_t>(std::upper_bound(thresholds_.begin(), thresholds_.end(), a) -
                                    thresholds_.begin());
  }

  /// Starts a scheduling cycle (the pipeline calls it): the running jobs' queues are then
  /// computed once per change of the ledger, `now` or the record instead of once per call
  /// (`detail::ranked_victims`); the plans are the same. O(1).
  void begin_cycle(const schedule_context& /*ctx*/) noexcept { victims_.begin_cycle(); }

  /// The victims (and shrinks) that make room for `j`, verified with the probe; an empty plan
  /// with its reason when no admissible set exists.
  [[nodiscard]] preemption_plan select(const schedule_context& ctx, const job_spec& j,
                                       fit_probe probe) {
    const service_record& rec = record_ ? *record_ : ctx.history().service;
    const std::size_t mine = queue_of(rec.gpu_seconds(j.id));
    if (!victims_.current(ctx.book(), ctx.now(), rec.version())) {
      victims_.reset(ctx.book(), ctx.now(), rec.version());
      for (const auto& r : ctx.book().running()) {
        if (r.spec.preemptible)
          victims_.add(static_cast<double>(queue_of(attained(rec, r, ctx.now()))), r);
      }
      victims_.sort();
    }
    return victims_.plan_above(static_cast<double>(mine), probe);
  }

 private:
  [[nodiscard]] const service_record& own() const noexcept {
    return record_ ? *record_ : empty_job_history().service;
  }
  std::shared_ptr<const service_record> record_;
  std::vector<double> thresholds_{3600.0};
  detail::ranked_victims victims_;  // scratch, reused across calls
};

static_assert(preemption_policy<las_preemption>);

/// @brief Preemptive shortest-remaining-time (SRTF) or -service (SRSF) oracle; see the file
/// documentation. Complexity O(R log R + log R x probe) for R running jobs; within a cycle, as
/// `las_preemption`, O(log R + log R x probe) while the ledger is unchanged.
class srtf_preemption {
 public:
  /// Opts into the preemption family.
  using policy_category = preemption_tag;
  /// The optional hooks it implements, called by the pipeline (`policy/hooks.hpp`).
  using hooks = hook_list<hook::begin_cycle>;
  /// `by_gpus`: remaining service (time x GPUs, SRSF) instead of remaining time (SRTF).
  /// Executed time from the context's history.
  ///@{
  srtf_preemption() = default;
  explicit srtf_preemption(bool by_gpus) : by_gpus_(by_gpus) {}
  ///@}
  /// With an explicit record (null: the context's history).
  explicit srtf_preemption(std::shared_ptr<const service_record> record, bool by_gpus = false)
      : record_(std::move(record)), by_gpus_(by_gpus) {}
  /// The policy's name: `srsf` (by GPUs) or `srtf`.
  [[nodiscard]] std::string_view name() const noexcept { return by_gpus_ ? "srsf" : "srtf"; }

  /// Remaining seconds (x GPUs for SRSF) of a pending job; infinity without an estimate.
  /// (By the explicit record; none: nothing executed.)
  [[nodiscard]] double remaining(const job_spec& j) const { return remaining(own(), j); }
  /// Remaining of a running job at `now`, its current stint counted as executed.
  [[nodiscard]] double remaining(const running_job& r, sim_time now) const {
    return remaining(own(), r, now);
  }
  /// As above, by `rec`.
  [[nodiscard]] double remaining(const service_record& rec, const job_spec& j) const {
    return scaled(j, left(j, rec.executed(j.id)));
  }
  /// As above, by `rec`.
  [[nodiscard]] double remaining(const service_record& rec, const running_job& r,
                                 sim_time now) const {
    const sim_duration stint = now > r.start ? now - r.start : sim_duration{0};
    return scaled(r.spec, left(r.spec, rec.executed(r.spec.id) + stint));
  }

  /// Starts a scheduling cycle (the pipeline calls it); as `las_preemption::begin_cycle`.
  void begin_cycle(const schedule_context& /*ctx*/) noexcept { victims_.begin_cycle(); }

  /// The victims (and shrinks) that make room for `j`, verified with the probe; an empty plan
  /// with its reason when no admissible set exists.
  [[nodiscard]] preemption_plan select(const schedule_context& ctx, const job_spec& j,
                                       fit_probe probe) {
    const service_record& rec = record_ ? *record_ : ctx.history().service;
    if (!victims_.current(ctx.book(), ctx.now(), rec.version())) {
      victims_.reset(ctx.book(), ctx.now(), rec.version());
      for (const auto& r : ctx.book().running()) {
        if (r.spec.preemptible) victims_.add(remaining(rec, r, ctx.now()), r);
      }
      victims_.sort();
    }
    return victims_.plan_above(remaining(rec, j), probe);
  }

 private:
  [[nodiscard]] static double left(const job_spec& j, sim_duration executed) {
    if (!j.expected_duration) return std::numeric_limits<double>::infinity();
    return std::max(0.0, to_seconds(*j.expected_duration - executed));
  }
  [[nodiscard]] double scaled(const job_spec& j, double secs) const {
    // no estimate stays infinite (never inf x 0 = NaN for a job without GPUs)
    if (!by_gpus_ || secs == std::numeric_limits<double>::infinity()) return secs;
    return secs * static_cast<double>(j.milli_gpus()) / 1000.0;
  }
  [[nodiscard]] const service_record& own() const noexcept {
    return record_ ? *record_ : empty_job_history().service;
  }
  std::shared_ptr<const service_record> record_;
  bool by_gpus_ = false;
  detail::ranked_victims victims_;  // scratch, reused across calls
};

static_assert(preemption_policy<srtf_preemption>);

GPUSCHED_END_NAMESPACE
