// SPDX-License-Identifier: Apache-2.0
/// @file
/// `las_preemption`: Tiresias' preemption (Gu et al., NSDI'19): a job in a higher-priority
/// attained-service queue preempts running jobs of lower-priority queues, so a job demoted past
/// a threshold (3,600 GPU-seconds by default) gives way to newcomers. Use it with
/// `las_ordering` or `gittins_ordering` over the same thresholds and the same `service_record`,
/// which the simulator keeps (`simulator::set_service_record`).
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
/// after. Complexity O(R log R + log R x probe) for R running jobs; O(R) when no running job
/// is in a lower queue than the preemptor.
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

#include <algorithm>  // std::sort, std::min, std::upper_bound, std::max
#include <cstddef>    // std::ptrdiff_t
#include <limits>
#include <memory>  // std::shared_ptr
#include <span>
#include <string_view>
#include <utility>  // std::move
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/time.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/context.hpp"
#include "gpusched/policy/ordering/las.hpp"
#include "gpusched/policy/preemption/prefix_search.hpp"

GPUSCHED_BEGIN_NAMESPACE

namespace detail {
/// Candidate victims with a rank (higher: evicted first), the scratch both policies of this
/// file reuse across calls. `plan` orders them by rank, then latest submit, then highest id,
/// and takes the shortest prefix after which the preemptor fits. O(n log n + log n probes).
class ranked_victims {
 public:
  void clear() noexcept { cand_.clear(); }
  void add(double rank, const running_job& r) { cand_.push_back({rank, &r}); }
  [[nodiscard]] preemption_plan plan(fit_probe& probe) {
    std::sort(cand_.begin(), cand_.end(), [](const candidate& a, const candidate& b) {
      if (a.rank != b.rank) return a.rank > b.rank;
      if (a.job->spec.submit != b.job->spec.submit) return a.job->spec.submit > b.job->spec.submit;
      return a.job->spec.id > b.job->spec.id;
    });
    prefix_.clear();
    for (const auto& c : cand_) prefix_.push_back(c.job->spec.id);
    return shortest_prefix_plan(prefix_, probe);
  }

 private:
  struct candidate {
    double rank;
    const running_job* job;
  };
  std::vector<candidate> cand_;
  std::vector<job_id> prefix_;
};
}  // namespace detail

/// @brief Attained-service-queue preemption (Tiresias); see the file documentation.
class las_preemption {
 public:
  using policy_category = preemption_tag;
  /// @throws invalid_value_error (field `thresholds`) unless positive and strictly increasing.
  explicit las_preemption(std::shared_ptr<const service_record> record,
                          std::vector<double> thresholds = {3600.0})
      : record_(std::move(record)), thresholds_(detail::checked_thresholds(std::move(thresholds))) {
    GPUSCHED_EXPECTS(record_ != nullptr);
  }
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "las"; }

  /// Attained GPU-seconds of a pending job.
  [[nodiscard]] double attained(const job_spec& j) const { return record_->gpu_seconds(j.id); }
  /// Attained GPU-seconds of a running job at `now`, its current stint included.
  [[nodiscard]] double attained(const running_job& r, sim_time now) const {
    const double stint = now > r.start ? to_seconds(now - r.start) : 0.0;
    return record_->gpu_seconds(r.spec.id) + static_cast<double>(r.milli_gpus()) / 1000.0 * stint;
  }
  /// The queue of attained service `a`: the number of thresholds at or below it.
  [[nodiscard]] std::size_t queue_of(double a) const noexcept {
    return static_cast<std::size_t>(std::upper_bound(thresholds_.begin(), thresholds_.end(), a) -
                                    thresholds_.begin());
  }

  [[nodiscard]] preemption_plan select(const schedule_context& ctx, const job_spec& j,
                                       fit_probe probe) {
    const std::size_t mine = queue_of(attained(j));
    victims_.clear();
    for (const auto& r : ctx.book().running()) {
      if (!r.spec.preemptible) continue;
      const std::size_t q = queue_of(attained(r, ctx.now()));
      if (q > mine) victims_.add(static_cast<double>(q), r);
    }
    return victims_.plan(probe);
  }

 private:
  std::shared_ptr<const service_record> record_;
  std::vector<double> thresholds_;
  detail::ranked_victims victims_;  // scratch, reused across calls
};

static_assert(preemption_policy<las_preemption>);

/// @brief Preemptive shortest-remaining-time (SRTF) or -service (SRSF) oracle; see the file
/// documentation. Complexity O(R log R + log R x probe) for R running jobs.
class srtf_preemption {
 public:
  using policy_category = preemption_tag;
  /// `by_gpus`: remaining service (time x GPUs, SRSF) instead of remaining time (SRTF).
  explicit srtf_preemption(std::shared_ptr<const service_record> record, bool by_gpus = false)
      : record_(std::move(record)), by_gpus_(by_gpus) {
    GPUSCHED_EXPECTS(record_ != nullptr);
  }
  [[nodiscard]] std::string_view name() const noexcept { return by_gpus_ ? "srsf" : "srtf"; }

  /// Remaining seconds (x GPUs for SRSF) of a pending job; infinity without an estimate.
  [[nodiscard]] double remaining(const job_spec& j) const {
    return scaled(j, left(j, record_->executed(j.id)));
  }
  /// Remaining of a running job at `now`, its current stint counted as executed.
  [[nodiscard]] double remaining(const running_job& r, sim_time now) const {
    const sim_duration stint = now > r.start ? now - r.start : sim_duration{0};
    return scaled(r.spec, left(r.spec, record_->executed(r.spec.id) + stint));
  }

  [[nodiscard]] preemption_plan select(const schedule_context& ctx, const job_spec& j,
                                       fit_probe probe) {
    const double mine = remaining(j);
    victims_.clear();
    for (const auto& r : ctx.book().running()) {
      if (!r.spec.preemptible) continue;
      const double rem = remaining(r, ctx.now());
      if (rem > mine) victims_.add(rem, r);
    }
    return victims_.plan(probe);
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
  std::shared_ptr<const service_record> record_;
  bool by_gpus_;
  detail::ranked_victims victims_;  // scratch, reused across calls
};

static_assert(preemption_policy<srtf_preemption>);

GPUSCHED_END_NAMESPACE
