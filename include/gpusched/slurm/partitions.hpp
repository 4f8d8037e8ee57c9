// SPDX-License-Identifier: Apache-2.0
/// @file
/// Slurm's partitions, read from `scontrol --all --oneliner show partition` (Slurm 22.05 has
/// no JSON for them): the nodes of each partition and the limits that decide where a job may
/// be placed.
///
/// The text is one line per partition of `Key=Value` words
/// (`PartitionName=gpu ... MaxNodes=UNLIMITED MaxTime=1-00:00:00 ... Nodes=n[1-4] ...
/// State=UP ...`). Read: `PartitionName`, `Nodes` (a host list; `(null)` for none), `MaxNodes`,
/// `MinNodes`, `MaxTime`, `DefaultTime`, `State`, `Default`, `PriorityTier`; the other keys are
/// ignored. What they mean for a held job (Slurm 22.05, `slurm.conf(5)`):
/// - a job is placed only on nodes of a partition it names (`-p a,b` names two);
/// - a job asking more nodes than `MaxNodes` (or fewer than `MinNodes`), or a longer time limit
///   than `MaxTime`, never starts in that partition (Slurm leaves it pending with reason
///   `PartitionNodeLimit` / `PartitionTimeLimit`);
/// - a job without a time limit gets `DefaultTime`, else `MaxTime` (the expected duration the
///   policies see);
/// - only partitions `UP` or `DRAIN` start queued jobs (`DOWN` and `INACTIVE` do not).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/slurm/hostlist.hpp"

GPUSCHED_BEGIN_NAMESPACE

namespace slurm {

/// @brief One partition of `scontrol show partition`.
struct partition_record {
  /// `PartitionName`.
  std::string name;
  /// `Nodes`, expanded (`n[1-2]` -> `n1`, `n2`).
  std::vector<std::string> nodes;
  /// `MaxNodes`; nullopt: `UNLIMITED`.
  std::optional<std::int64_t> max_nodes;
  /// `MinNodes` (0 when not given).
  std::int64_t min_nodes = 0;
  /// `MaxTime`, in minutes; nullopt: `UNLIMITED`.
  std::optional<std::int64_t> max_time_minutes;
  /// `DefaultTime`, in minutes; nullopt: `NONE`.
  std::optional<std::int64_t> default_time_minutes;
  /// `State`: `UP`, `DOWN`, `DRAIN` or `INACTIVE`.
  std::string state = "UP";
  /// `Default=YES`: the partition of jobs that name none.
  bool is_default = false;
  /// `PriorityTier`: higher tiers are scheduled first.
  std::int64_t priority_tier = 1;

  /// Whether queued jobs may start here (`UP` or `DRAIN`). O(1).
  [[nodiscard]] bool starts_jobs() const noexcept { return state == "UP" || state == "DRAIN"; }
};

namespace detail {

/// Minutes of a Slurm time string (`time_str2mins`: `M`, `M:S`, `H:M:S`, `D-H`, `D-H:M`,
/// `D-H:M:S`; seconds round up); nullopt for `UNLIMITED`, `INFINITE`, `NONE`, `N/A`.
/// @throws invalid_value_error (parse) naming `where` and `field` for anything else.
inline std::optional<std::int64_t> slurm_minutes(std::string_view v, const std::string& where,
                                                 std::string_view field) {
  if (v == "UNLIMITED" || v == "INFINITE" || v == "NONE" || v == "N/A") return std::nullopt;
  const auto bad = [&]() -> std::optional<std::int64_t> {
    throw invalid_value_error(error_id::parse, where, std::string(field), std::string(v),
                              "expected a Slurm time ([days-]hours:minutes:seconds, minutes, "
                              "UNLIMITED)");
  };
  std::int64_t days = 0;
  bool has_days = false;
  if (const auto dash = v.find('-'); dash != std::string_view::npos) {
    const auto d = v.substr(0, dash);
    if (d.empty() || d.size() > 6) return bad();
    for (char c : d) {
      if (c < '0' || c > '9') return bad();
      days = days * 10 + (c - '0');
    }
    v.remove_prefix(dash + 1);
    has_days = true;
  }
  std::vector<std::int64_t> parts;
  while (true) {
    const auto colon = v.find(':');
    const auto p = v.substr(0, colon);
    if (p.empty() || p.size() > 9) return bad();
    std::int64_t n = 0;
    for (char c : p) {
      if (c < '0' || c > '9') return bad();
      n = n * 10 + (c - '0');
    }
    parts.push_back(n);
    if (colon == std::string_view::npos) break;
    v.remove_prefix(colon + 1);
  }
  if (parts.size() > 3) return bad();
  std::int64_t h = 0, m = 0, s = 0;
  if (has_days) {  // D-H, D-H:M, D-H:M:S
    h = parts[0];
    if (parts.size() > 1) m = parts[1];
    if (parts.size() > 2) s = parts[2];
  } else if (parts.size() == 1) {  // M
    m = parts[0];
  } else if (parts.size() == 2) {  // M:S
    m = parts[0];
    s = parts[1];
  } else {  // H:M:S
    h = parts[0];
    m = parts[1];
    s = parts[2];
  }
  return ((days * 24 + h) * 60 + m) + (s + 59) / 60;
}

}  // namespace detail

/// @brief Reads `scontrol --all --oneliner show partition` output (see the file comment).
/// Blank lines are skipped. @throws invalid_value_error (parse) naming the line and the key
/// for a word that is not `Key=Value`, a line without `PartitionName`, two partitions of one
/// name, a malformed number, time or host list. O(size of the text + nodes).
[[nodiscard]] inline std::vector<partition_record> parse_partitions(std::string_view text) {
  std::vector<partition_record> out;
  std::size_t line_no = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t nl = text.find('\n', pos);
    const std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    const std::string where = "scontrol show partition line " + std::to_string(line_no);
    partition_record p;
    bool any = false;
    bool named = false;
    std::size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      if (i >= line.size()) break;
      std::size_t e = i;
      while (e < line.size() && line[e] != ' ' && line[e] != '\t' && line[e] != '\r') ++e;
      const std::string_view word = line.substr(i, e - i);
      i = e;
      any = true;
      const auto eq = word.find('=');
      if (eq == std::string_view::npos || eq == 0) {
        throw invalid_value_error(error_id::parse, where, "word", std::string(word),
                                  "expected Key=Value");
      }
      const std::string_view key = word.substr(0, eq);
      const std::string_view value = word.substr(eq + 1);
      const auto number = [&](std::string_view field) -> std::optional<std::int64_t> {
        if (value == "UNLIMITED" || value == "INFINITE") return std::nullopt;
        if (value.empty() || value.size() > 12) {
          throw invalid_value_error(error_id::parse, where, std::string(field),
                                    std::string(value), "expected a number or UNLIMITED");
        }
        std::int64_t n = 0;
        for (char c : value) {
          if (c < '0' || c > '9') {
            throw invalid_value_error(error_id::parse, where, std::string(field),
                                      std::string(value), "expected a number or UNLIMITED");
          }
          n = n * 10 + (c - '0');
        }
        return n;
      };
      if (key == "PartitionName") {
        p.name = std::string(value);
        named = !value.empty();
      } else if (key == "Nodes") {
        if (value != "(null)" && !value.empty()) p.nodes = expand_hostlist(value);
      } else if (key == "MaxNodes") {
        p.max_nodes = number(key);
      } else if (key == "MinNodes") {
        p.min_nodes = number(key).value_or(0);
      } else if (key == "MaxTime") {
        p.max_time_minutes = detail::slurm_minutes(value, where, key);
      } else if (key == "DefaultTime") {
        p.default_time_minutes = detail::slurm_minutes(value, where, key);
      } else if (key == "State") {
        p.state = std::string(value);
      } else if (key == "Default") {
        p.is_default = value == "YES";
      } else if (key == "PriorityTier") {
        p.priority_tier = number(key).value_or(1);
      }
    }
    if (!any) continue;
    if (!named) {
      throw invalid_value_error(error_id::parse, where, "PartitionName", "(missing)",
                                "every line names its partition");
    }
    for (const auto& q : out) {
      if (q.name == p.name) {
        throw invalid_value_error(error_id::parse, where, "PartitionName", p.name,
                                  "two partitions of this name");
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

/// @brief The partitions one cycle schedules, in Slurm's order (higher `PriorityTier` first,
/// then as listed): all of them for an empty `wanted`, else the ones `wanted` names
/// (comma-separated). @throws invalid_value_error (unknown_name) naming an unknown partition
/// and listing the known ones. O(partitions x names).
[[nodiscard]] inline std::vector<const partition_record*> select_partitions(
    const std::vector<partition_record>& all, std::string_view wanted) {
  std::vector<const partition_record*> out;
  if (wanted.empty()) {
    for (const auto& p : all) out.push_back(&p);
  } else {
    std::string_view rest = wanted;
    while (true) {
      const auto comma = rest.find(',');
      const std::string_view name = rest.substr(0, comma);
      if (!name.empty()) {
        const auto it = std::find_if(all.begin(), all.end(),
                                     [&](const partition_record& p) { return p.name == name; });
        if (it == all.end()) {
          std::string known;
          for (const auto& p : all) known += (known.empty() ? "" : ", ") + p.name;
          throw invalid_value_error(error_id::unknown_name, "--partition", "partition",
                                    std::string(name),
                                    "no such partition in Slurm (partitions: " +
                                        (known.empty() ? std::string("none") : known) + ")");
        }
        if (std::find(out.begin(), out.end(), &*it) == out.end()) out.push_back(&*it);
      }
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  // Highest PriorityTier first, ties in the order chosen above. An insertion sort (a cluster has
  // few partitions), not std::stable_sort: libstdc++ 12's uses a helper clang 19 flags deprecated.
  for (std::size_t i = 1; i < out.size(); ++i) {
    const partition_record* moving = out[i];
    std::size_t j = i;
    for (; j > 0 && out[j - 1]->priority_tier < moving->priority_tier; --j) out[j] = out[j - 1];
    out[j] = moving;
  }
  return out;
}

}  // namespace slurm

GPUSCHED_END_NAMESPACE
