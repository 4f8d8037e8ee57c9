// SPDX-License-Identifier: Apache-2.0
/// @file
/// Attained-service orderings (Tiresias, Gu et al. NSDI'19) and oracle baselines:
/// - `las_ordering`: 2D-LAS, a multi-level feedback queue over attained GPU-time (GPUs x
///   seconds run so far; 1D "time" variant too): a job is in queue k when k thresholds are at
///   or below its attained service; lower queues first, FIFO (submit, id) inside a queue.
///   Tiresias' default is two queues split at 3,600 GPU-seconds.
/// - `gittins_ordering`: 2D-Gittins: same queues; inside a queue the higher Gittins index goes
///   first, computed from a GPU-time prior (`gpu_time_prior`, e.g. Tiresias' `yarn-gput*.csv`):
///   `G(a) = P(S - a <= D | S > a) / E[min(S - a, D) | S > a]`, with `a` the attained service
///   and `D` the service left to the next queue threshold (unbounded in the last queue).
/// - `srtf_ordering`: shortest remaining time first (`expected_duration - executed`), or
///   shortest remaining service (x GPUs: SRSF) - oracles needing known durations.
///
/// Attained service comes from the context's job history (`schedule_context::history()`),
/// which the pipeline owns and the simulator feeds; a policy built with an explicit
/// `service_record` reads that one instead (for calling a policy outside a pipeline).
#pragma once

#include <algorithm>  // std::sort, std::upper_bound, std::is_sorted
#include <cmath>      // std::isfinite
#include <cstdint>
#include <fstream>
#include <istream>
#include <limits>
#include <memory>  // std::shared_ptr
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>  // std::move
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/parse.hpp"
#include "gpusched/core/time.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/workload/history.hpp"  // service_record

GPUSCHED_BEGIN_NAMESPACE

/// @brief An empirical distribution of job service (GPU-seconds), for Gittins indices.
/// Queries are O(log samples) (sorted samples and prefix sums).
class gpu_time_prior {
 public:
  gpu_time_prior() = default;
  /// @throws invalid_value_error (field `samples`) when empty, or a sample is negative or not
  /// finite (naming its index).
  explicit gpu_time_prior(std::vector<double> samples) : sorted_(std::move(samples)) {
    if (sorted_.empty()) {
      throw invalid_value_error(error_id::invalid_value, "GPU-time prior", "samples", "0",
                                "need at least one sample");
    }
    for (std::size_t i = 0; i < sorted_.size(); ++i) {
      if (!std::isfinite(sorted_[i]) || sorted_[i] < 0) {
        throw invalid_value_error(error_id::invalid_value,
                                  "GPU-time prior sample " + std::to_string(i), "samples",
                                  std::to_string(sorted_[i]), "must be finite and not negative");
      }
    }
    std::sort(sorted_.begin(), sorted_.end());
    prefix_.assign(sorted_.size() + 1, 0.0);
    for (std::size_t i = 0; i < sorted_.size(); ++i) prefix_[i + 1] = prefix_[i] + sorted_[i];
  }

  /// Reads a CSV with a header line and one sample per line in the first column (the Tiresias
  /// `yarn-gput*.csv` format: header `duration`, GPU-seconds). Blank lines are skipped.
  /// @throws parse_error naming the file, line and field `duration` for a malformed or
  /// negative value, or when the file cannot be read or holds no sample; field `header` when
  /// the first line is a number (a file without its header line).
  static gpu_time_prior load_csv(const std::string& path) {
    std::ifstream in = open_input(path);
    return read_csv(in, path);
  }
  /// As `load_csv`, from a stream; `path` names it in errors. O(samples log samples).
  static gpu_time_prior read_csv(std::istream& in, const std::string& path) {
    std::string line;
    std::vector<double> v;
    std::size_t no = 0;
    while (std::getline(in, line)) {
      ++no;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find('\r') != std::string::npos) {
        throw parse_error(path, no, "(line)",
                          "carriage return inside a line (CR-only line endings are not read; "
                          "convert the file to LF or CRLF line endings)");
      }
      const std::string cell = line.substr(0, line.find(','));
      if (no == 1) {  // the header; a number there means the file has none
        if (parse_real(strip_bom(cell)).ok()) {
          throw parse_error(path, no, "header",
                            "'" + cell + "' is a number: the first line must be a header "
                            "(such as `duration`), or its sample would be dropped");
        }
        continue;
      }
      if (line.empty()) continue;
      const auto r = parse_real(cell);  // std::from_chars: no hex, inf or nan
      if (r.status == number_status::subnormal) {
        throw parse_error(path, no, "duration", number_problem(cell, r.status));
      }
      const double x = r.value;
      if (!r.ok() || x < 0) {
        throw parse_error(path, no, "duration",
                          "'" + cell + "' is not a non-negative number of GPU-seconds");
      }
      v.push_back(x);
    }
    if (v.empty()) throw parse_error(path, no, "duration", "no samples");
    return gpu_time_prior(std::move(v));
  }

  /// Number of samples.
  [[nodiscard]] std::size_t size() const noexcept { return sorted_.size(); }
  /// The samples in GPU-seconds, ascending.
  [[nodiscard]] std::span<const double> samples() const noexcept { return sorted_; }
  /// The empirical quantile (nearest rank), `q` in [0, 1].
  [[nodiscard]] double quantile(double q) const noexcept {
    GPUSCHED_EXPECTS(!sorted_.empty());
    const auto n = static_cast<double>(sorted_.size());
    auto k = static_cast<std::size_t>(std::ceil(q * n));
    k = k == 0 ? 0 : k - 1;
    return sorted_[std::min(k, sorted_.size() - 1)];
  }

  /// Gittins index of a job with attained service `a` and quantum `delta` (> 0, may be
  /// infinite): `P(S - a <= delta | S > a) / E[min(S - a, delta) | S > a]`. A job that has
  /// outlived every sample gets index 0 (lowest precedence). O(log samples).
  [[nodiscard]] double gittins_index(double a, double delta) const noexcept {
    const auto lo = static_cast<std::size_t>(std::upper_bound(sorted_.begin(), sorted_.end(), a) -
                                             sorted_.begin());
    const std::size_t alive = sorted_.size() - lo;
    if (alive == 0) return 0.0;
    const double cut = a + delta;
    const auto hi = std::isfinite(cut)
                        ? static_cast<std::size_t>(
                              std::upper_bound(sorted_.begin() + static_cast<std::ptrdiff_t>(lo),
                                               sorted_.end(), cut) -
                              sorted_.begin())
                        : sorted_.size();
    const double done = static_cast<double>(hi - lo);  // finish within the quantum
    const double spent =
        (prefix_[hi] - prefix_[lo]) - a * done +
        (std::isfinite(delta) ? delta * static_cast<double>(sorted_.size() - hi) : 0.0);
    if (spent <= 0) return std::numeric_limits<double>::infinity();  // all finish at once
    return done / spent;
  }

 private:
  std::vector<double> sorted_;
  std::vector<double> prefix_;
};

namespace detail {
inline bool fifo_before(const job_spec& a, const job_spec& b) noexcept {
  if (a.submit != b.submit) return a.submit < b.submit;
  return a.id < b.id;
}
/// Sorts `jobs` by `key(job)` computed once per job (not once per comparison).
template <class Key, class F>
void sort_by_key(std::span<const job_spec*> jobs, std::vector<std::pair<Key, const job_spec*>>& buf,
                 F key) {
  buf.clear();
  for (const job_spec* j : jobs) buf.emplace_back(key(*j), j);
  std::sort(buf.begin(), buf.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i] = buf[i].second;
}
}  // namespace detail

/// What attained service is measured in.
enum class service_measure : std::uint8_t {
  gpu_time,  ///< GPUs x seconds (Tiresias 2D-LAS, "dlas-gpu")
  time,      ///< executed seconds (1D LAS, Tiresias "dlas")
};

/// @brief 2D-LAS (Tiresias): multi-level queues over attained service; FIFO inside a queue.
/// A strict weak order (a total order on distinct job ids) for a fixed record.
class las_ordering {
 public:
  /// Opts into the ordering family.
  using policy_category = ordering_tag;
  /// Tiresias' default: two queues split at 3,600 GPU-seconds; attained service from the
  /// context's history (`schedule_context::history()`, fed by the simulator).
  las_ordering() = default;
  /// @throws invalid_value_error (field `thresholds`) unless positive and strictly increasing.
  explicit las_ordering(std::vector<double> thresholds,
                        service_measure m = service_measure::gpu_time)
      : thresholds_(detail::checked_thresholds(std::move(thresholds))), measure_(m) {}
  /// With an explicit record, read instead of the context's history (null: the context's).
  /// @throws invalid_value_error (field `thresholds`) unless positive and strictly increasing.
  explicit las_ordering(std::shared_ptr<const service_record> record,
                        std::vector<double> thresholds = {3600.0},
                        service_measure m = service_measure::gpu_time)
      : record_(std::move(record)),
        thresholds_(detail::checked_thresholds(std::move(thresholds))),
        measure_(m) {}
  /// The policy's name: `las`, or `las-time` when service is measured in executed time.
  [[nodiscard]] std::string_view name() const noexcept {
    return measure_ == service_measure::gpu_time ? "las" : "las-time";
  }
  /// The queue thresholds, in seconds (GPU-seconds for `las`), ascending.
  [[nodiscard]] std::span<const double> thresholds() const noexcept { return thresholds_; }
  /// The record read in `ctx`: the explicit one, else the context's history.
  [[nodiscard]] const service_record& record(const schedule_context& ctx) const noexcept {
    return record_ ? *record_ : ctx.history().service;
  }
  /// Attained service of `j` in this ordering's measure, in `rec`.
  [[nodiscard]] double attained(const service_record& rec, const job_spec& j) const {
    return measure_ == service_measure::gpu_time ? rec.gpu_seconds(j.id)
                                                 : to_seconds(rec.executed(j.id));
  }
  /// Attained service of `j` in the explicit record (none: 0).
  [[nodiscard]] double attained(const job_spec& j) const {
    return attained(record_ ? *record_ : empty_job_history().service, j);
  }
  /// The queue of a job with attained service `a`: the number of thresholds <= a.
  [[nodiscard]] std::size_t queue_of(double a) const noexcept {
    return static_cast<std::size_t>(std::upper_bound(thresholds_.begin(), thresholds_.end(), a) -
                                    thresholds_.begin());
  }
  /// True when `a` goes before `b`: the strict weak order `order` sorts by.
  [[nodiscard]] bool before(const schedule_context& ctx, const job_spec& a,
                            const job_spec& b) const {
    const service_record& rec = record(ctx);
    return key(rec, a) < key(rec, b);
  }
  /// Sorts by `before`, computing each job's key once. O(n log n).
  void order(const schedule_context& ctx, std::span<const job_spec*> jobs) {
    const service_record& rec = record(ctx);
    detail::sort_by_key(jobs, buf_, [&](const job_spec& j) { return key(rec, j); });
  }

 private:
  using key_type = std::tuple<std::size_t, sim_duration::rep, job_id::rep>;
  [[nodiscard]] key_type key(const service_record& rec, const job_spec& j) const {
    return {queue_of(attained(rec, j)), j.submit.time_since_epoch().count(), j.id.value()};
  }
  std::shared_ptr<const service_record> record_;
  std::vector<double> thresholds_{3600.0};
  service_measure measure_ = service_measure::gpu_time;
  std::vector<std::pair<key_type, const job_spec*>> buf_;
};

/// @brief 2D-Gittins (Tiresias): LAS queues; inside a queue the higher Gittins index first,
/// then FIFO. A strict weak order for a fixed record and prior.
class gittins_ordering {
 public:
  /// Opts into the ordering family.
  using policy_category = ordering_tag;
  /// Attained service from the context's history. @throws invalid_value_error (field
  /// `thresholds`) as `las_ordering`.
  explicit gittins_ordering(std::shared_ptr<const gpu_time_prior> prior,
                            std::vector<double> thresholds = {3600.0})
      : gittins_ordering(std::move(prior), nullptr, std::move(thresholds)) {}
  /// With an explicit record (null: the context's history).
  /// @throws invalid_value_error (field `thresholds`) as `las_ordering`.
  gittins_ordering(std::shared_ptr<const gpu_time_prior> prior,
                   std::shared_ptr<const service_record> record,
                   std::vector<double> thresholds = {3600.0})
      : prior_(std::move(prior)),
        las_(std::move(record), std::move(thresholds), service_measure::gpu_time) {
    GPUSCHED_EXPECTS(prior_ != nullptr && prior_->size() > 0);
  }
  /// The policy's name: `gittins`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "gittins"; }
  /// The index of `j` at its attained service in the explicit record, with the quantum up to
  /// the next threshold.
  [[nodiscard]] double index(const job_spec& j) const { return index(las_.attained(j)); }
  /// The index of `j` at its attained service in `ctx`.
  [[nodiscard]] double index(const schedule_context& ctx, const job_spec& j) const {
    return index(las_.attained(las_.record(ctx), j));
  }
  /// The index at attained service `a`.
  [[nodiscard]] double index(double a) const {
    const auto q = las_.queue_of(a);
    const auto t = las_.thresholds();
    const double delta = q < t.size() ? t[q] - a : std::numeric_limits<double>::infinity();
    return prior_->gittins_index(a, delta);
  }
  /// True when `a` goes before `b`: the strict weak order `order` sorts by.
  [[nodiscard]] bool before(const schedule_context& ctx, const job_spec& a,
                            const job_spec& b) const {
    const service_record& rec = las_.record(ctx);
    return key(rec, a) < key(rec, b);
  }
  /// Sorts by `before`, computing each job's index once. O(n (log n + log samples)).
  void order(const schedule_context& ctx, std::span<const job_spec*> jobs) {
    const service_record& rec = las_.record(ctx);
    detail::sort_by_key(jobs, buf_, [&](const job_spec& j) { return key(rec, j); });
  }

 private:
  using key_type = std::tuple<std::size_t, double, sim_duration::rep, job_id::rep>;
  [[nodiscard]] key_type key(const service_record& rec, const job_spec& j) const {
    const double a = las_.attained(rec, j);
    return {las_.queue_of(a), -index(a), j.submit.time_since_epoch().count(), j.id.value()};
  }
  std::shared_ptr<const gpu_time_prior> prior_;
  las_ordering las_;
  std::vector<std::pair<key_type, const job_spec*>> buf_;
};

/// @brief Shortest remaining time (or, `by_gpus`, service = time x GPUs) first: an oracle
/// baseline. Remaining = `expected_duration - executed` (at least 0); jobs without an expected
/// duration go after all others; ties FIFO. A strict weak order for a fixed record.
class srtf_ordering {
 public:
  /// Opts into the ordering family.
  using policy_category = ordering_tag;
  /// Executed time from the context's history.
  srtf_ordering() = default;
  /// SRSF (`by_gpus`) or SRTF, executed time from the context's history.
  explicit srtf_ordering(bool by_gpus) : by_gpus_(by_gpus) {}
  /// With an explicit record (null: the context's history).
  explicit srtf_ordering(std::shared_ptr<const service_record> record, bool by_gpus = false)
      : record_(std::move(record)), by_gpus_(by_gpus) {}
  /// The policy's name: `srsf` (by GPUs) or `srtf`.
  [[nodiscard]] std::string_view name() const noexcept { return by_gpus_ ? "srsf" : "srtf"; }
  /// Remaining seconds (x GPUs for SRSF) by `rec`; infinity when the duration is unknown.
  [[nodiscard]] double remaining(const service_record& rec, const job_spec& j) const {
    if (!j.expected_duration) return std::numeric_limits<double>::infinity();
    const double left = std::max(0.0, to_seconds(*j.expected_duration - rec.executed(j.id)));
    return by_gpus_ ? left * static_cast<double>(j.milli_gpus()) / 1000.0 : left;
  }
  /// As above, by the explicit record (none: nothing executed).
  [[nodiscard]] double remaining(const job_spec& j) const {
    return remaining(record_ ? *record_ : empty_job_history().service, j);
  }
  /// True when `a` goes before `b`: the strict weak order `order` sorts by.
  [[nodiscard]] bool before(const schedule_context& ctx, const job_spec& a,
                            const job_spec& b) const {
    const service_record& rec = record(ctx);
    return key(rec, a) < key(rec, b);
  }
  /// Sorts by `before`, computing each job's remaining time once. O(n log n).
  void order(const schedule_context& ctx, std::span<const job_spec*> jobs) {
    const service_record& rec = record(ctx);
    detail::sort_by_key(jobs, buf_, [&](const job_spec& j) { return key(rec, j); });
  }

 private:
  [[nodiscard]] const service_record& record(const schedule_context& ctx) const noexcept {
    return record_ ? *record_ : ctx.history().service;
  }
  using key_type = std::tuple<double, sim_duration::rep, job_id::rep>;
  [[nodiscard]] key_type key(const service_record& rec, const job_spec& j) const {
    return {remaining(rec, j), j.submit.time_since_epoch().count(), j.id.value()};
  }
  std::shared_ptr<const service_record> record_;
  bool by_gpus_ = false;
  std::vector<std::pair<key_type, const job_spec*>> buf_;
};

static_assert(comparison_ordering_policy<las_ordering>);
static_assert(comparison_ordering_policy<gittins_ordering>);
static_assert(comparison_ordering_policy<srtf_ordering>);

GPUSCHED_END_NAMESPACE
