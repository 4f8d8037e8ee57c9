// SPDX-License-Identifier: Apache-2.0
/// @file
/// `finish_time_fairness_ordering` (Themis, Mahajan et al. NSDI'20): order by the estimated
/// finish-time fairness `rho = T_shared / T_isolated`, largest first (the job treated worst so
/// far goes next). For a pending job started now:
/// - `T_shared = (now - submit) + remaining`, remaining = `expected_duration - executed`;
/// - `T_isolated = expected_duration x max(1, G / (C / N))`: the run time on a 1/N share of the
///   cluster's C GPUs, where N is the number of tenants contending (with pending or running
///   jobs) and G the job's GPUs; a job wider than its share is assumed to slow down linearly.
/// Jobs without an expected duration (or without GPUs) go last, FIFO. `rho <= 1` means the job
/// is doing at least as well as on its own share (Themis' sharing incentive).
#pragma once

#include <algorithm>
#include <limits>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/ordering/las.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Finish-time fairness ordering. Not a comparison ordering: N depends on the queue.
/// Complexity O(R + n log n) for R running and n pending jobs.
class finish_time_fairness_ordering {
 public:
  /// Opts into the ordering family.
  using policy_category = ordering_tag;
  /// Executed time from the context's history (`schedule_context::history()`).
  finish_time_fairness_ordering() = default;
  /// With an explicit record (null: the context's history).
  explicit finish_time_fairness_ordering(std::shared_ptr<const service_record> record)
      : record_(std::move(record)) {}
  /// The policy's name: `themis`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "themis"; }

  /// rho of `j` with `contenders` tenants sharing the cluster; -infinity when unknown.
  [[nodiscard]] double rho(const schedule_context& ctx, const job_spec& j,
                           std::size_t contenders) const {
    const double gpus = static_cast<double>(j.milli_gpus()) / 1000.0;
    const double total = static_cast<double>(ctx.state().total_gpus());
    if (!j.expected_duration || gpus <= 0 || total <= 0 || contenders == 0) {
      return -std::numeric_limits<double>::infinity();
    }
    const double dur = std::max(to_seconds(*j.expected_duration), 1e-3);
    const double remaining = std::max(0.0, dur - to_seconds((record_ ? *record_ : ctx.history().service).executed(j.id)));
    const double waited = std::max(0.0, to_seconds(ctx.now() - j.submit));
    const double fair = total / static_cast<double>(contenders);
    const double isolated = dur * std::max(1.0, gpus / fair);
    return (waited + remaining) / isolated;
  }

  /// Sorts `jobs` by this policy's rule (see the class), the first to be considered first.
  void order(const schedule_context& ctx, std::span<const job_spec*> jobs) {
    tenants_.clear();
    for (const auto& r : ctx.book().running()) tenants_.insert(r.spec.tenant);
    for (const job_spec* j : jobs) tenants_.insert(j->tenant);
    keyed_.clear();
    for (const job_spec* j : jobs) keyed_.emplace_back(rho(ctx, *j, tenants_.size()), j);
    std::sort(keyed_.begin(), keyed_.end(), [](const auto& x, const auto& y) {
      if (x.first != y.first) return x.first > y.first;
      if (x.second->submit != y.second->submit) return x.second->submit < y.second->submit;
      return x.second->id < y.second->id;
    });
    for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i] = keyed_[i].second;
  }
  /// The contenders N of the last `order` call.
  [[nodiscard]] std::size_t contenders() const noexcept { return tenants_.size(); }

 private:
  std::shared_ptr<const service_record> record_;
  std::unordered_set<tenant_id> tenants_;
  std::vector<std::pair<double, const job_spec*>> keyed_;
};

static_assert(ordering_policy<finish_time_fairness_ordering>);

GPUSCHED_END_NAMESPACE
