// SPDX-License-Identifier: Apache-2.0
/// @file
/// Metrics of a simulation run: job completion time (JCT) and queueing delay distributions
/// (mean, median, p95, p99, max), makespan, GPU allocation, idle and out-of-service GPU-hours,
/// goodput, fragmentation over time, fairness (Jain's index over tenants' share / entitlement,
/// per-tenant share, finish-time fairness rho), preemptions, failures, GPU-hours of work lost to
/// each, and checkpoint overhead. `summarize` reads a simulator's records, samples and totals.
///
/// Definitions (all documented per field below):
/// - JCT = finish - submit; queueing delay = first start - submit (finished jobs only).
/// - Percentiles are nearest-rank: p-th percentile = the ceil(p/100 x n)-th smallest value.
/// - Tenant share = tenant's allocated GPU-time / all allocated GPU-time; entitlement = the
///   tenant's weight / sum of weights of the tenants present (equal weights by default).
///   Jain's index over x_t = share_t / entitlement_t: (sum x)^2 / (n sum x^2), 1 = perfectly
///   proportional, 1/n = one tenant gets everything.
/// - Finish-time fairness rho (Themis) per finished job = JCT / T_id, where T_id = work x
///   max(1, job GPUs / (capacity / tenants present)): the time the job needs alone on its
///   tenant's 1/N of the cluster. rho <= 1: the job did at least as well as on its own share.
#pragma once

#include <algorithm>  // std::sort
#include <cmath>      // std::ceil
#include <limits>     // std::numeric_limits
#include <concepts>   // std::convertible_to
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/time.hpp"
#include "gpusched/sim/records.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Summary of a sample of values.
struct distribution {
  /// Number of values.
  std::size_t count = 0;
  /// Mean, median, 95th and 99th percentile (nearest rank) and maximum.
  ///@{
  double mean = 0, median = 0, p95 = 0, p99 = 0, max = 0;
  ///@}
};

/// Nearest-rank summary of `v` (sorted in place). O(n log n). All zeros when empty.
inline distribution summarize_values(std::vector<double>& v) {
  distribution d;
  d.count = v.size();
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  const auto rank = [&](double p) {
    auto k = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
    k = std::max<std::size_t>(k, 1);
    return v[std::min(k, v.size()) - 1];
  };
  d.mean = sum / static_cast<double>(v.size());
  d.median = rank(50);
  d.p95 = rank(95);
  d.p99 = rank(99);
  d.max = v.back();
  return d;
}

/// Jain's fairness index of `x`: (sum x)^2 / (n sum x^2); 1 for an empty or all-zero input.
inline double jain_index(std::span<const double> x) noexcept {
  double s = 0, s2 = 0;
  for (double v : x) {
    s += v;
    s2 += v * v;
  }
  if (x.empty() || s2 == 0) return 1.0;
  return s * s / (static_cast<double>(x.size()) * s2);
}

/// Weighted max-min fair shares ("water filling") of `capacity` among claimants wanting
/// `demand[i]` with weights `weight[i]` (> 0): nobody gets more than it wants, and what is left
/// is split in proportion to weight among those who want more. Writes `out[i]`.
/// O(n log n). Laws: sum(out) = min(capacity, sum(demand)); out[i] <= demand[i]; a claimant
/// that gets less than it wants gets at least weight[i] x (the level of every such claimant).
inline void max_min_fair(double capacity, std::span<const double> demand,
                         std::span<const double> weight, std::span<double> out) {
  const std::size_t n = demand.size();
  GPUSCHED_EXPECTS(weight.size() == n && out.size() == n);
  GPUSCHED_EXPECTS(std::all_of(weight.begin(), weight.end(), [](double w) { return w > 0; }));
  std::vector<std::size_t> by(n);
  for (std::size_t i = 0; i < n; ++i) by[i] = i;
  std::sort(by.begin(), by.end(), [&](std::size_t a, std::size_t b) {
    const double ka = demand[a] / weight[a], kb = demand[b] / weight[b];
    return ka != kb ? ka < kb : a < b;
  });
  double left = std::max(capacity, 0.0), wsum = 0;
  for (std::size_t i = 0; i < n; ++i) wsum += weight[i];
  for (const std::size_t i : by) {
    const double level = wsum > 0 ? left / wsum : 0;
    const double give = std::min(demand[i], weight[i] * level);
    out[i] = give;
    left -= give;
    wsum -= weight[i];
  }
}

/// @brief Per-tenant figures.
struct tenant_summary {
  /// The tenant.
  tenant_id tenant;
  /// Its name (from `tenant_names`; else `t` and its id).
  std::string name;
  /// Its jobs, and how many of them finished.
  ///@{
  std::size_t jobs = 0, finished = 0;
  ///@}
  /// GPU-hours its jobs held.
  double allocated_gpu_hours = 0;
  double share = 0;        ///< of all allocated GPU-time
  double entitlement = 0;  ///< weight / sum of weights present
  double mean_jct_s = 0;   ///< over the tenant's finished jobs; NaN when none finished
  /// Mean, over the samples in which the tenant had work, of GPUs held / its weighted max-min
  /// fair share of the GPUs in service given every active tenant's demand (1: fair; below 1:
  /// starved; above 1: more than fair, possible when others cannot use their share).
  double fair_ratio = 0;
  std::size_t active_samples = 0;  ///< samples in which the tenant had pending or running work
};

/// @brief Everything `summarize` computes for one run.
struct sim_summary {
  /// The run's label (the composition).
  std::string label;
  /// Jobs in the trace, and how many finished, were rejected or were still unfinished at the end.
  ///@{
  std::size_t jobs = 0, finished = 0, rejected = 0, unfinished = 0;
  ///@}
  distribution jct_s;       ///< seconds
  distribution queueing_s;  ///< first start - submit, seconds
  distribution rho;         ///< finish-time fairness per finished job
  double makespan_s = 0;    ///< first event to last event
  /// GPU-hours the cluster offered over the makespan.
  double capacity_gpu_hours = 0;
  /// GPU-hours held by jobs.
  double allocated_gpu_hours = 0;
  double down_gpu_hours = 0;      ///< out of service (failures)
  double idle_gpu_hours = 0;      ///< capacity - allocated - down
  double allocation = 0;          ///< allocated / (capacity - down)
  double goodput = 0;             ///< useful GPU-time (finished jobs' work x GPUs) / allocated
  double mean_fragmentation = 0;  ///< mean of the samples' fragmentation (0 without samples)
  /// The samples the figures over time (fragmentation, jain_over_time) come from; 0: they are
  /// undefined (the report prints them so, never as 0).
  std::size_t samples = 0;
  double jain = 1;                ///< Jain's index over tenants of whole-run share / entitlement
  /// Mean over samples with two or more active tenants of Jain's index of each active tenant's
  /// held GPUs / its weighted max-min fair share (1 when no sample has two active tenants).
  /// Unlike `jain`, this measures fairness while tenants compete (needs tenant samples).
  double jain_over_time = 1;
  /// Per-tenant figures, by tenant id.
  std::vector<tenant_summary> tenants;
  /// Preemptions, and node failures, over the run.
  ///@{
  std::uint64_t preemptions = 0, failures = 0;  ///< failures: node failures
  ///@}
  std::uint64_t gpu_failures = 0;               ///< single-GPU failures
  std::uint64_t resizes = 0;                    ///< elastic resize events (running jobs shrunk)
  std::uint64_t grows = 0;                      ///< running elastic jobs grown (growth step)
  /// GPU-hours of progress lost to preemptions and to failures.
  ///@{
  double lost_preemption_gpu_hours = 0, lost_failure_gpu_hours = 0;
  ///@}
  /// GPU-hours spent writing checkpoints and restoring.
  double checkpoint_overhead_gpu_hours = 0;
  /// Events processed and scheduling cycles run.
  ///@{
  std::uint64_t events = 0, cycles = 0;
  ///@}
};

/// Summarises a run. `tenant_names[t]` names tenant `t` (missing: "t<id>"); `weights[t]` is its
/// entitlement weight (missing: 1). O(jobs log jobs + samples).
inline sim_summary summarize(std::span<const job_record> records,
                             std::span<const sim_sample> samples, const sim_totals& totals,
                             std::span<const std::string> tenant_names = {},
                             std::span<const double> weights = {}, std::string label = {}) {
  constexpr double ms_per_h = 3600.0 * 1000.0;
  sim_summary s;
  s.label = std::move(label);
  s.events = totals.events;
  s.cycles = totals.cycles;
  s.failures = totals.failures;
  s.gpu_failures = totals.gpu_failures;
  s.preemptions = totals.preemptions;
  s.resizes = totals.resizes;
  s.grows = totals.grows;
  s.makespan_s = to_seconds(totals.end - totals.start);
  s.capacity_gpu_hours = static_cast<double>(totals.capacity_gpus) *
                         static_cast<double>((totals.end - totals.start).count()) / ms_per_h;
  s.allocated_gpu_hours = totals.allocated_integral / 1000.0 / ms_per_h;
  s.down_gpu_hours = totals.down_integral / 1000.0 / ms_per_h;
  s.idle_gpu_hours = s.capacity_gpu_hours - s.allocated_gpu_hours - s.down_gpu_hours;
  const double in_service = s.capacity_gpu_hours - s.down_gpu_hours;
  s.allocation = in_service > 0 ? s.allocated_gpu_hours / in_service : 0;

  std::map<std::uint32_t, tenant_summary> per;
  std::map<std::uint32_t, double> jct_sum;
  for (const auto& r : records) {
    auto& t = per[r.tenant.value()];
    t.tenant = r.tenant;
    ++t.jobs;
    t.allocated_gpu_hours += r.allocated_gpu_ms / ms_per_h;
  }
  const double n_tenants = static_cast<double>(per.size());
  const double fair_gpus =
      n_tenants > 0 ? static_cast<double>(totals.capacity_gpus) / n_tenants : 1.0;
  std::vector<double> jct, queue, rho;
  double useful = 0;
  for (const auto& r : records) {
    s.lost_preemption_gpu_hours += r.lost_preemption_gpu_ms / ms_per_h;
    s.lost_failure_gpu_hours += r.lost_failure_gpu_ms / ms_per_h;
    s.checkpoint_overhead_gpu_hours += r.overhead_gpu_ms / ms_per_h;
    ++s.jobs;
    switch (r.outcome) {
      case job_outcome::finished: {
        ++s.finished;
        const double j = to_seconds(*r.finish - r.submit);
        jct.push_back(j);
        queue.push_back(to_seconds(*r.first_start - r.submit));
        const double gpus = static_cast<double>(r.gpus_milli) / 1000.0;
        useful += gpus * static_cast<double>(r.work.count());
        const double tid = to_seconds(r.work) * std::max(1.0, gpus / fair_gpus);
        if (tid > 0) rho.push_back(j / tid);
        auto& t = per[r.tenant.value()];
        ++t.finished;
        jct_sum[r.tenant.value()] += j;
        break;
      }
      case job_outcome::rejected:
        ++s.rejected;
        break;
      case job_outcome::unfinished:
        ++s.unfinished;
        break;
    }
  }
  s.jct_s = summarize_values(jct);
  s.queueing_s = summarize_values(queue);
  s.rho = summarize_values(rho);
  s.goodput = totals.allocated_integral > 0 ? useful * 1000.0 / totals.allocated_integral : 0;
  s.samples = samples.size();
  if (!samples.empty()) {
    double f = 0;
    for (const auto& x : samples) f += x.fragmentation;
    s.mean_fragmentation = f / static_cast<double>(samples.size());
  }
  double all_alloc = 0, all_w = 0;
  for (const auto& [id, t] : per) {
    all_alloc += t.allocated_gpu_hours;
    all_w += id < weights.size() ? weights[id] : 1.0;
  }
  std::vector<double> x;
  for (auto& [id, t] : per) {
    t.name = id < tenant_names.size() ? tenant_names[id] : "t" + std::to_string(id);
    t.share = all_alloc > 0 ? t.allocated_gpu_hours / all_alloc : 0;
    t.entitlement = (id < weights.size() ? weights[id] : 1.0) / all_w;
    // Undefined (NaN: `null` in JSON, `-` in tables, empty in CSV) when no job finished, never 0.
    t.mean_jct_s = t.finished > 0 ? jct_sum[id] / static_cast<double>(t.finished)
                                  : std::numeric_limits<double>::quiet_NaN();
    x.push_back(t.entitlement > 0 ? t.share / t.entitlement : 0);
    s.tenants.push_back(t);
  }
  s.jain = jain_index(x);

  // Fairness while tenants compete: every sample's allocation against max-min fair shares.
  std::map<std::uint32_t, std::pair<double, std::size_t>> ratio;  // sum of ratios, samples
  std::vector<double> dem, wt, fair, xs;
  double jain_sum = 0;
  std::size_t jain_n = 0;
  for (const auto& smp : samples) {
    const std::size_t n = smp.tenants.size();
    if (n == 0) continue;
    dem.resize(n);
    wt.resize(n);
    fair.resize(n);
    xs.clear();
    for (std::size_t k = 0; k < n; ++k) {
      const auto id = smp.tenants[k].tenant.value();
      dem[k] = smp.tenants[k].demand_gpus;
      wt[k] = id < weights.size() && weights[id] > 0 ? weights[id] : 1.0;
    }
    max_min_fair(static_cast<double>(smp.available_gpus), dem, wt, fair);
    for (std::size_t k = 0; k < n; ++k) {
      if (fair[k] <= 0) continue;
      const double r = smp.tenants[k].held_gpus / fair[k];
      xs.push_back(r);
      auto& acc = ratio[smp.tenants[k].tenant.value()];
      acc.first += r;
      ++acc.second;
    }
    if (xs.size() >= 2) {
      jain_sum += jain_index(xs);
      ++jain_n;
    }
  }
  if (jain_n > 0) s.jain_over_time = jain_sum / static_cast<double>(jain_n);
  for (auto& t : s.tenants) {
    if (const auto it = ratio.find(t.tenant.value()); it != ratio.end()) {
      t.fair_ratio = it->second.first / static_cast<double>(it->second.second);
      t.active_samples = it->second.second;
    }
  }
  return s;
}

/// Summarises a finished simulator run: `sim` is a `simulator<P>` (`sim/simulator.hpp`), or
/// anything with its `records()`, `samples()` and `totals()`.
template <class Sim>
  requires requires(const Sim& sim) {
    { sim.records() } -> std::convertible_to<std::span<const job_record>>;
    { sim.samples() } -> std::convertible_to<std::span<const sim_sample>>;
    { sim.totals() } -> std::convertible_to<const sim_totals&>;
  }
sim_summary summarize(const Sim& sim, std::span<const std::string> tenant_names = {},
                      std::span<const double> weights = {}, std::string label = {}) {
  return summarize(sim.records(), sim.samples(), sim.totals(), tenant_names, weights,
                   std::move(label));
}

GPUSCHED_END_NAMESPACE
