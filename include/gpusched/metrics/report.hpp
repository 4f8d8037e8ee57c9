// SPDX-License-Identifier: Apache-2.0
/// @file
/// Output of simulation metrics: a printed table (several runs side by side), CSV (summary,
/// per job, time series, per tenant) and JSON (summary), written by hand (no dependency).
/// CSV and JSON numbers are the shortest decimals that read back as exactly the same double
/// (`std::to_chars`; times in the per-job and per-sample tables keep their three decimals,
/// which are exact: the clock counts milliseconds); the printed table shows fixed decimals. A
/// statistic that is undefined (a mean over no finished job) is an empty CSV cell, JSON `null`
/// and `-` in the table, never 0. Output is identical across runs, compilers and platforms for
/// identical inputs.
#pragma once

#include <algorithm>
#include <charconv>  // std::to_chars
#include <cmath>     // std::isfinite
#include <cstdio>    // std::snprintf
#include <limits>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/parse.hpp"  // is_utf8
#include "gpusched/metrics/summary.hpp"
#include "gpusched/sim/records.hpp"

GPUSCHED_BEGIN_NAMESPACE
namespace detail {
/// `v` printed with the printf format `fmt` (one double conversion).
inline std::string num(double v, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}
/// `v` as the shortest decimal that reads back (`std::from_chars`, `strtod`, Python's `float`)
/// as exactly `v`: fixed notation for 1e-7 <= |v| < 1e21 and for 0 (`8118736`, `0.25`),
/// scientific outside that range (`1e+21`, `1.5e-08`), as JavaScript prints numbers; `nan`,
/// `inf`, `-inf` when not finite. O(1).
inline std::string num(double v) {
  char buf[128];
  const double a = std::fabs(v);
  const bool fixed = v == 0 || (a >= 1e-7 && a < 1e21);
  const auto r = fixed ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed)
                       : std::to_chars(buf, buf + sizeof buf, v);
  if (r.ec != std::errc{}) return num(v, "%.17g");  // not reached: the buffer is large enough
  return std::string(buf, r.ptr);
}
/// `v` as a CSV cell: `num(v)`, or empty when it is NaN (an undefined statistic).
inline std::string csv_num(double v) { return std::isnan(v) ? std::string() : num(v); }
/// `s` as one CSV cell (RFC 4180): as it is, or, when it holds a comma, a quote, a line break
/// or another control character, in double quotes with each quote doubled, so that a name can
/// never add or shift a column or a row. O(|s|).
inline std::string csv_field(std::string_view s) {
  const bool plain = std::none_of(s.begin(), s.end(), [](char c) {
    return c == ',' || c == '"' || static_cast<unsigned char>(c) < 0x20 || c == 0x7F;
  });
  if (plain) return std::string(s);
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}
/// `v` as a JSON number; `null` when it is not finite (JSON has no NaN or infinity).
inline std::string json_num(double v) { return std::isfinite(v) ? num(v) : "null"; }
/// `s` as a JSON string. Text that is not UTF-8 (the library's loaders refuse such names, but a
/// caller may pass anything) is written with U+FFFD for each byte of an invalid sequence, so the
/// output is always valid UTF-8 JSON.
inline std::string json_string(std::string_view s) {
  if (!is_utf8(s)) {
    std::string fixed;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const auto u = static_cast<unsigned char>(s[i]);
      if (u < 0x80) {
        fixed += s[i];
        continue;
      }
      const std::size_t len = u >= 0xF0 ? 4 : u >= 0xE0 ? 3 : u >= 0xC0 ? 2 : 1;
      if (len > 1 && i + len <= s.size() && is_utf8(s.substr(i, len))) {
        fixed += s.substr(i, len);
        i += len - 1;
      } else {
        fixed += "\xEF\xBF\xBD";  // U+FFFD
      }
    }
    return json_string(fixed);
  }
  std::string o = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        o += "\\\"";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '\n':
        o += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          constexpr const char* hex = "0123456789abcdef";
          const auto u = static_cast<unsigned char>(c);
          o += "\\u00";
          o += hex[u >> 4];
          o += hex[u & 0xF];
        } else {
          o += c;
        }
    }
  }
  return o + "\"";
}
/// (name, value) rows of a summary, in a fixed order: the table, CSV and JSON share them. A
/// statistic of an empty set is NaN (written as undefined): the JCT, queueing and rho figures
/// when no job finished (rho: none with work), goodput when nothing was allocated, allocation
/// when no GPU-time was in service (a run of no jobs), the fragmentation mean without samples,
/// Jain's indices without any tenant (no job).
inline std::vector<std::pair<std::string, double>> summary_rows(const sim_summary& s) {
  constexpr double undefined = std::numeric_limits<double>::quiet_NaN();
  const auto of = [&](const distribution& d, double distribution::*field) {
    return d.count > 0 ? d.*field : undefined;
  };
  return {{"jobs", static_cast<double>(s.jobs)},
          {"finished", static_cast<double>(s.finished)},
          {"rejected", static_cast<double>(s.rejected)},
          {"unfinished", static_cast<double>(s.unfinished)},
          {"jct_mean_s", of(s.jct_s, &distribution::mean)},
          {"jct_median_s", of(s.jct_s, &distribution::median)},
          {"jct_p95_s", of(s.jct_s, &distribution::p95)},
          {"jct_p99_s", of(s.jct_s, &distribution::p99)},
          {"jct_max_s", of(s.jct_s, &distribution::max)},
          {"queue_mean_s", of(s.queueing_s, &distribution::mean)},
          {"queue_median_s", of(s.queueing_s, &distribution::median)},
          {"queue_p95_s", of(s.queueing_s, &distribution::p95)},
          {"queue_p99_s", of(s.queueing_s, &distribution::p99)},
          {"makespan_s", s.makespan_s},
          {"capacity_gpu_h", s.capacity_gpu_hours},
          {"allocated_gpu_h", s.allocated_gpu_hours},
          {"idle_gpu_h", s.idle_gpu_hours},
          {"down_gpu_h", s.down_gpu_hours},
          {"allocation", s.capacity_gpu_hours - s.down_gpu_hours > 0 ? s.allocation : undefined},
          {"goodput", s.allocated_gpu_hours > 0 ? s.goodput : undefined},
          {"fragmentation_mean", s.samples > 0 ? s.mean_fragmentation : undefined},
          {"jain", s.tenants.empty() ? undefined : s.jain},
          {"jain_over_time", s.tenants.empty() ? undefined : s.jain_over_time},
          {"rho_mean", of(s.rho, &distribution::mean)},
          {"rho_p95", of(s.rho, &distribution::p95)},
          {"rho_max", of(s.rho, &distribution::max)},
          {"preemptions", static_cast<double>(s.preemptions)},
          {"resizes", static_cast<double>(s.resizes)},
          {"grows", static_cast<double>(s.grows)},
          {"failures", static_cast<double>(s.failures)},
          {"gpu_failures", static_cast<double>(s.gpu_failures)},
          {"lost_preemption_gpu_h", s.lost_preemption_gpu_hours},
          {"lost_failure_gpu_h", s.lost_failure_gpu_hours},
          {"checkpoint_overhead_gpu_h", s.checkpoint_overhead_gpu_hours},
          {"events", static_cast<double>(s.events)},
          {"cycles", static_cast<double>(s.cycles)}};
}
}  // namespace detail

/// Prints runs side by side: one row per metric, one column per run (headed by its label).
/// Whole values print without decimals, others with three, undefined ones as `-`. Every run's
/// column has the width of the widest cell of all columns (label or value) plus two spaces, so
/// neighbouring values never touch. O(runs x metrics).
inline void print_table(std::ostream& os, std::span<const sim_summary> runs) {
  std::vector<std::vector<std::pair<std::string, std::string>>> cells;  // per run: name, text
  std::size_t name_w = 26, w = 6;
  for (const auto& r : runs) {
    w = std::max(w, r.label.size());
    auto& col = cells.emplace_back();
    for (const auto& [name, v] : detail::summary_rows(r)) {
      const bool integral =
          std::isfinite(v) && std::fabs(v) < 9.2e18 && v == static_cast<double>(static_cast<long long>(v));
      col.emplace_back(name, std::isnan(v) ? std::string("-")
                             : integral    ? detail::num(v, "%.0f")
                                           : detail::num(v, "%.3f"));
      w = std::max(w, col.back().second.size());
      name_w = std::max(name_w, name.size() + 1);
    }
  }
  w += 2;
  const auto pad = [](std::string s, std::size_t n, bool left) {
    if (s.size() < n)
      s = left ? s + std::string(n - s.size(), ' ') : std::string(n - s.size(), ' ') + s;
    return s;
  };
  os << pad("metric", name_w, true);
  for (const auto& r : runs) os << pad(r.label, w, false);
  os << "\n";
  if (cells.empty()) return;
  for (std::size_t k = 0; k < cells.front().size(); ++k) {
    os << pad(cells.front()[k].first, name_w, true);
    for (const auto& col : cells) os << pad(col[k].second, w, false);
    os << "\n";
  }
}

/// Writes a CSV with one header row of metric names and one row per run (`label` first).
inline void write_summary_csv(std::ostream& os, std::span<const sim_summary> runs) {
  os << "label";
  if (runs.empty()) {
    os << "\n";
    return;
  }
  for (const auto& [k, v] : detail::summary_rows(runs.front())) os << "," << k;
  os << "\n";
  for (const auto& r : runs) {
    os << detail::csv_field(r.label);
    for (const auto& [k, v] : detail::summary_rows(r)) os << "," << detail::csv_num(v);
    os << "\n";
  }
}

/// Writes the summary as a JSON object (metrics, then a `tenants` array).
inline void write_summary_json(std::ostream& os, const sim_summary& s) {
  os << "{\n  \"label\": " << detail::json_string(s.label);
  for (const auto& [k, v] : detail::summary_rows(s)) {
    os << ",\n  " << detail::json_string(k) << ": " << detail::json_num(v);
  }
  os << ",\n  \"tenants\": [";
  for (std::size_t i = 0; i < s.tenants.size(); ++i) {
    const auto& t = s.tenants[i];
    os << (i ? ",\n" : "\n") << "    {\"name\": " << detail::json_string(t.name)
       << ", \"jobs\": " << t.jobs << ", \"finished\": " << t.finished
       << ", \"allocated_gpu_h\": " << detail::json_num(t.allocated_gpu_hours)
       << ", \"share\": " << detail::json_num(t.share)
       << ", \"entitlement\": " << detail::json_num(t.entitlement)
       << ", \"mean_jct_s\": "
       << (t.finished > 0 ? detail::json_num(t.mean_jct_s) : std::string("null")) << "}";
  }
  os << (s.tenants.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

/// Per-tenant CSV: name, jobs, finished, allocated GPU-hours, share, entitlement, mean JCT
/// (empty when the tenant finished no job), fair ratio (empty when it was never active), active
/// samples.
inline void write_tenants_csv(std::ostream& os, const sim_summary& s) {
  os << "tenant,jobs,finished,allocated_gpu_h,share,entitlement,mean_jct_s,fair_ratio,"
        "active_samples\n";
  for (const auto& t : s.tenants) {
    os << detail::csv_field(t.name) << "," << t.jobs << "," << t.finished << ","
       << detail::num(t.allocated_gpu_hours) << "," << detail::num(t.share) << ","
       << detail::num(t.entitlement) << ","
       << (t.finished > 0 ? detail::num(t.mean_jct_s) : std::string()) << ","
       << (t.active_samples > 0 ? detail::num(t.fair_ratio) : std::string()) << ","
       << t.active_samples << "\n";
  }
}

/// Per-job CSV: one row per job in arrival order; times in seconds with three decimals (exact:
/// the clock counts milliseconds; empty when absent). `tenant` is the tenant's name,
/// `tenant_names[id]`, or `t<id>` past the end of the names (the rule of `summarize`, so the
/// names match `write_tenants_csv`'s). `reason` says why a rejected job was rejected (empty
/// otherwise). O(records).
inline void write_jobs_csv(std::ostream& os, std::span<const job_record> records,
                           std::span<const std::string> tenant_names = {}) {
  os << "job,tenant,gpus,submit_s,start_s,finish_s,jct_s,work_s,outcome,preemptions,failures,"
        "checkpoints,lost_preemption_gpu_s,lost_failure_gpu_s,overhead_gpu_s,reason\n";
  for (const auto& r : records) {
    const auto opt = [](const std::optional<sim_time>& t) {
      return t ? detail::num(to_seconds(*t), "%.3f") : std::string();
    };
    const auto id = r.tenant.value();
    os << r.id.value() << ","
       << (id < tenant_names.size() ? detail::csv_field(tenant_names[id])
                                    : "t" + std::to_string(id))
       << "," << detail::num(static_cast<double>(r.gpus_milli) / 1000.0) << ","
       << detail::num(to_seconds(r.submit), "%.3f") << "," << opt(r.first_start) << ","
       << opt(r.finish) << ","
       << (r.finish ? detail::num(to_seconds(*r.finish - r.submit), "%.3f") : std::string()) << ","
       << detail::num(to_seconds(r.work), "%.3f") << ","
       << (r.outcome == job_outcome::finished   ? "finished"
           : r.outcome == job_outcome::rejected ? "rejected"
                                                : "unfinished")
       << "," << r.preemptions << "," << r.failures << "," << r.checkpoints << ","
       << detail::num(r.lost_preemption_gpu_ms / 1000.0) << ","
       << detail::num(r.lost_failure_gpu_ms / 1000.0) << ","
       << detail::num(r.overhead_gpu_ms / 1000.0) << "," << detail::csv_field(r.reason) << "\n";
  }
}

/// Time-series CSV: t (s), allocated and in-service GPUs, allocation, pending, running,
/// fragmentation.
inline void write_samples_csv(std::ostream& os, std::span<const sim_sample> samples) {
  os << "t_s,allocated_gpus,available_gpus,allocation,pending,running,fragmentation\n";
  for (const auto& x : samples) {
    os << detail::num(to_seconds(x.t), "%.3f") << "," << detail::num(x.allocated_gpus) << ","
       << x.available_gpus << ","
       << detail::num(
              x.available_gpus > 0 ? x.allocated_gpus / static_cast<double>(x.available_gpus) : 0)
       << "," << x.pending << "," << x.running << "," << detail::num(x.fragmentation) << "\n";
  }
}

GPUSCHED_END_NAMESPACE
