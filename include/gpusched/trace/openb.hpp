// SPDX-License-Identifier: Apache-2.0
/// @file
/// Loader for Alibaba's `openb` GPU cluster trace (clusterdata `cluster-trace-gpu-v2023`), the
/// input of the FGD experiments: node lists (`sn,cpu_milli,memory_mib,gpu,model`) and pod lists
/// (`name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,...]`). Columns are found by header
/// name, so extra columns (qos, times) are ignored. Malformed input throws `parse_error` naming
/// the file, the line, the field and its column.
#pragma once

#include <charconv>  // std::from_chars
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/parse.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// Largest `cpu_milli` and `memory_mib` of a node or a pod in every openb reader (2^40: a
/// billion cores, an exbibyte); keeps every sum over a cluster far from 64-bit overflow.
inline constexpr std::int64_t openb_max_amount = std::int64_t{1} << 40;
/// Largest `gpu` of a node and `num_gpu` of a pod (a pod runs on one node).
inline constexpr std::int64_t openb_max_gpus = 16;

/// What is wrong with an openb `gpu_spec` (`A|B|...`, empty: any model), or nothing: an empty
/// model name (`|`, `A|`, `|B`, `A||B`) is refused by every reader.
[[nodiscard]] inline std::optional<std::string> openb_spec_problem(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::size_t start = 0;
  while (true) {
    const auto bar = s.find('|', start);
    if ((bar == s.npos ? s.size() : bar) == start) {
      return "empty model name in '" + std::string(s) + "'";
    }
    if (bar == s.npos) return std::nullopt;
    start = bar + 1;
  }
}

/// @brief One node of an openb node list.
struct openb_node {
  std::string name;  ///< `sn`
  /// `cpu_milli`: CPU in millicores.
  std::int64_t cpu_milli = 0;
  /// `memory_mib`: memory in MiB.
  std::int64_t memory_mib = 0;
  /// `gpu`: number of GPUs.
  int gpus = 0;
  std::string model;  ///< GPU model name as in the trace (`T4`, `V100M16`, `G2`, ...)
};

/// @brief One pod of an openb pod list.
struct openb_pod {
  /// `name`: the pod's name.
  std::string name;
  /// `cpu_milli`: CPU in millicores.
  std::int64_t cpu_milli = 0;
  /// `memory_mib`: memory in MiB.
  std::int64_t memory_mib = 0;
  /// `num_gpu`: GPUs asked for.
  int num_gpu = 0;
  int gpu_milli = 0;                  ///< per-GPU share; 1000 when `num_gpu > 1`
  std::vector<std::string> gpu_spec;  ///< allowed models (`a|b` in the file); empty: any
  /// Total GPU request in milli.
  [[nodiscard]] std::int64_t gpu_request() const noexcept {
    return static_cast<std::int64_t>(num_gpu) * gpu_milli;
  }
};

namespace detail {
struct csv_table {
  std::string file;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::size_t> lines;  ///< 1-based line number of each row
};

inline std::vector<std::string> split_csv_line(std::string_view line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto comma = line.find(',', start);
    out.emplace_back(
        line.substr(start, comma == std::string_view::npos ? line.npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

inline csv_table read_csv(std::istream& in, const std::string& file) {
  csv_table t;
  t.file = file;
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (n == 1 && strip_bom(line).size() != line.size()) line.erase(0, 3);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find('\r') != std::string::npos) {
      throw parse_error(file, n, "(line)",
                        "carriage return inside a line (CR-only line endings are not read; "
                        "convert the file to LF or CRLF line endings)");
    }
    if (line.empty()) continue;
    if (line.find('"') != std::string::npos) {
      throw parse_error(file, n, "(line)", "quoted fields are not supported in openb CSV");
    }
    auto cells = split_csv_line(line);
    if (t.header.empty()) {
      t.header = std::move(cells);
      continue;
    }
    if (cells.size() != t.header.size()) {
      throw parse_error(file, n, "(line)",
                        "expected " + std::to_string(t.header.size()) +
                            " columns as in the header, "
                            "found " +
                            std::to_string(cells.size()));
    }
    t.rows.push_back(std::move(cells));
    t.lines.push_back(n);
  }
  if (t.header.empty()) throw parse_error(file, 1, "(header)", "empty file, no header line");
  return t;
}

/// Column index of `name` in the header, or nullopt.
inline std::optional<std::size_t> column(const csv_table& t, std::string_view name) {
  for (std::size_t i = 0; i < t.header.size(); ++i) {
    if (t.header[i] == name) return i;
  }
  return std::nullopt;
}
inline std::size_t require_column(const csv_table& t, std::string_view name) {
  if (auto c = column(t, name)) return *c;
  std::string have;
  for (const auto& h : t.header) have += (have.empty() ? "" : ",") + h;
  throw parse_error(t.file, 1, std::string(name), "missing column (header is: " + have + ")");
}

inline std::int64_t parse_int(const csv_table& t, std::size_t row, std::size_t col, std::int64_t lo,
                              std::int64_t hi) {
  const std::string& s = t.rows[row][col];
  std::int64_t v = 0;
  const auto r = parse_integer(s);
  v = r.value;
  if (r.status == number_status::out_of_range) v = s.front() == '-' ? lo - 1 : hi + 1;
  if (!r.ok() && r.status != number_status::out_of_range) {
    throw parse_error(t.file, t.lines[row], t.header[col],
                      "column " + std::to_string(col + 1) + ": '" + s + "' is not an integer");
  }
  if (v < lo || v > hi) {
    throw parse_error(t.file, t.lines[row], t.header[col],
                      "column " + std::to_string(col + 1) + ": " + s + " is outside " +
                          std::to_string(lo) + ".." + std::to_string(hi));
  }
  return v;
}

}  // namespace detail

/// Reads an openb node list from `in`; `file` names it in errors. O(size).
/// @throws parse_error on a missing column, a wrong column count, a non-integer CPU/memory
/// outside 0..2^40, a GPU count outside 0..16, a GPU node without a model, or a node name given
/// twice (naming the line of the first).
inline std::vector<openb_node> read_openb_nodes(std::istream& in, const std::string& file) {
  const auto t = detail::read_csv(in, file);
  const auto sn = detail::require_column(t, "sn");
  const auto cpu = detail::require_column(t, "cpu_milli");
  const auto mem = detail::require_column(t, "memory_mib");
  const auto gpu = detail::require_column(t, "gpu");
  const auto model = detail::require_column(t, "model");
  std::vector<openb_node> out;
  out.reserve(t.rows.size());
  std::unordered_map<std::string_view, std::size_t> seen;  // name -> line
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    openb_node n;
    n.name = t.rows[r][sn];
    if (n.name.empty()) {
      throw parse_error(file, t.lines[r], "sn",
                        "column " + std::to_string(sn + 1) + ": empty node name");
    }
    if (const auto [it, fresh] = seen.emplace(t.rows[r][sn], t.lines[r]); !fresh) {
      throw parse_error(file, t.lines[r], "sn",
                        "column " + std::to_string(sn + 1) + ": node name '" + n.name +
                            "' given twice (first on line " + std::to_string(it->second) + ")");
    }
    n.cpu_milli = detail::parse_int(t, r, cpu, 0, openb_max_amount);
    n.memory_mib = detail::parse_int(t, r, mem, 0, openb_max_amount);
    n.gpus = static_cast<int>(detail::parse_int(t, r, gpu, 0, openb_max_gpus));
    n.model = t.rows[r][model];
    if (n.gpus > 0 && n.model.empty()) {
      throw parse_error(file, t.lines[r], "model",
                        "column " + std::to_string(model + 1) + ": a node with GPUs needs a model");
    }
    out.push_back(std::move(n));
  }
  return out;
}

/// Reads an openb pod list from `in`; `file` names it in errors. `gpu_spec` is optional (the
/// multigpu lists have no such column). O(size).
/// @throws parse_error on a missing column, a wrong column count, a non-integer or negative
/// CPU/memory, `num_gpu` outside 0..16, `gpu_milli` outside 0..1000, a GPU pod with zero
/// milli, a CPU pod with non-zero milli, or a multi-GPU pod with a partial share.
inline std::vector<openb_pod> read_openb_pods(std::istream& in, const std::string& file) {
  const auto t = detail::read_csv(in, file);
  const auto name = detail::require_column(t, "name");
  const auto cpu = detail::require_column(t, "cpu_milli");
  const auto mem = detail::require_column(t, "memory_mib");
  const auto num = detail::require_column(t, "num_gpu");
  const auto milli = detail::require_column(t, "gpu_milli");
  const auto spec = detail::column(t, "gpu_spec");
  std::vector<openb_pod> out;
  out.reserve(t.rows.size());
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    openb_pod p;
    p.name = t.rows[r][name];
    p.cpu_milli = detail::parse_int(t, r, cpu, 0, openb_max_amount);
    p.memory_mib = detail::parse_int(t, r, mem, 0, openb_max_amount);
    p.num_gpu = static_cast<int>(detail::parse_int(t, r, num, 0, openb_max_gpus));
    p.gpu_milli = static_cast<int>(detail::parse_int(t, r, milli, 0, 1000));
    const std::string col = "column " + std::to_string(milli + 1) + ": ";
    if (p.num_gpu > 0 && p.gpu_milli == 0) {
      throw parse_error(file, t.lines[r], "gpu_milli", col + "a pod with GPUs needs a share");
    }
    if (p.num_gpu == 0 && p.gpu_milli != 0) {
      throw parse_error(file, t.lines[r], "gpu_milli", col + "a pod without GPUs has no share");
    }
    if (p.num_gpu > 1 && p.gpu_milli != 1000) {
      throw parse_error(file, t.lines[r], "gpu_milli",
                        col + "a multi-GPU pod takes whole GPUs (1000 milli each)");
    }
    if (spec && !t.rows[r][*spec].empty()) {
      std::string_view s = t.rows[r][*spec];
      std::size_t start = 0;
      while (true) {
        const auto bar = s.find('|', start);
        auto part = s.substr(start, bar == s.npos ? s.npos : bar - start);
        if (part.empty()) {
          throw parse_error(file, t.lines[r], "gpu_spec",
                            "column " + std::to_string(*spec + 1) + ": empty model name in '" +
                                std::string(s) + "'");
        }
        p.gpu_spec.emplace_back(part);
        if (bar == s.npos) break;
        start = bar + 1;
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

/// Reads a node list file. @throws parse_error (also when the file cannot be opened).
inline std::vector<openb_node> load_openb_nodes(const std::string& path) {
  auto in = open_input(path);
  return read_openb_nodes(in, path);
}
/// Reads a pod list file. @throws parse_error (also when the file cannot be opened).
inline std::vector<openb_pod> load_openb_pods(const std::string& path) {
  auto in = open_input(path);
  return read_openb_pods(in, path);
}

GPUSCHED_END_NAMESPACE
