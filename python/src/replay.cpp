// SPDX-License-Identifier: Apache-2.0
// Trace replay: the gpusched-replay command's own code (benchmarks/replay) run with the
// caller's options and a registry that may hold policies written in Python; the tables come
// back as the command's CSV text, which `_csv_columns` turns into NumPy columns.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include <gpusched/pipeline/registry.hpp>

#include "common.hpp"
#include "replay.hpp"

namespace gpusched_python {
namespace {

/// The whole of `cell` as an integer, or false.
bool parse_int(std::string_view cell, std::int64_t& v) {
  const char* end = cell.data() + cell.size();
  const auto r = std::from_chars(cell.data(), end, v);
  return !cell.empty() && r.ec == std::errc{} && r.ptr == end;
}

/// The whole of `cell` as a double (`nan`, `inf` and exponents included), or false.
bool parse_double(std::string_view cell, double& v) {
  const char* end = cell.data() + cell.size();
  const auto r = std::from_chars(cell.data(), end, v);
  return !cell.empty() && r.ec == std::errc{} && r.ptr == end;
}

/// An unquoted CSV text (header line, then rows; the command's writers never quote) as a dict
/// column -> NumPy array, typed per column: int64 when every cell is an integer, float64 when
/// every cell is a number or empty (NaN), else an object array of str. The same values as the
/// pure-Python `gpusched._tables.columns`, which the tests compare it with. O(cells).
py::dict csv_columns(std::string_view text) {
  std::vector<std::string_view> lines;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(at, nl - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    at = nl + 1;
  }
  const auto split = [](std::string_view line) {
    std::vector<std::string_view> cells;
    for (std::size_t at = 0;;) {
      const std::size_t comma = line.find(',', at);
      cells.push_back(line.substr(at, comma == std::string_view::npos ? std::string_view::npos
                                                                         : comma - at));
      if (comma == std::string_view::npos) break;
      at = comma + 1;
    }
    return cells;
  };
  py::dict out;
  if (lines.empty()) return out;
  const std::vector<std::string_view> header = split(lines[0]);
  const std::size_t rows = lines.size() - 1;
  std::vector<std::vector<std::string_view>> cols(header.size());
  for (auto& c : cols) c.reserve(rows);
  for (std::size_t r = 1; r < lines.size(); ++r) {
    const auto cells = split(lines[r]);
    if (cells.size() != header.size()) {
      throw gs::invalid_value_error(gs::error_id::invalid_value, "replay table",
                                    "row " + std::to_string(r), std::to_string(cells.size()),
                                    "has " + std::to_string(cells.size()) + " cells, the header " +
                                        std::to_string(header.size()));
    }
    for (std::size_t i = 0; i < cells.size(); ++i) cols[i].push_back(cells[i]);
  }
  const auto n = static_cast<py::ssize_t>(rows);
  for (std::size_t i = 0; i < header.size(); ++i) {
    const auto& col = cols[i];
    py::str name(std::string(header[i]));
    {
      py::array_t<std::int64_t> a(n);
      auto w = a.mutable_unchecked<1>();
      bool ok = true;
      for (std::size_t r = 0; ok && r < rows; ++r) {
        ok = parse_int(col[r], w(static_cast<py::ssize_t>(r)));
      }
      if (ok) {
        out[name] = std::move(a);
        continue;
      }
    }
    {
      py::array_t<double> a(n);
      auto w = a.mutable_unchecked<1>();
      bool ok = true;
      for (std::size_t r = 0; ok && r < rows; ++r) {
        double& v = w(static_cast<py::ssize_t>(r));
        if (col[r].empty()) {
          v = std::numeric_limits<double>::quiet_NaN();
        } else {
          ok = parse_double(col[r], v);
        }
      }
      if (ok) {
        out[name] = std::move(a);
        continue;
      }
    }
    py::list cells;
    for (const auto cell : col) cells.append(py::str(std::string(cell)));
    out[name] = py::module_::import("numpy").attr("array")(cells, py::arg("dtype") = "object");
  }
  return out;
}

}  // namespace

void init_replay(py::module_& m) {
  m.def(
      "_csv_columns", [](const std::string& text) { return csv_columns(text); }, py::arg("text"),
      "An unquoted CSV text as a dict column -> NumPy array (int64, float64 with NaN for empty "
      "cells, or object); what gpusched.replay returns as its tables.");

  m.def(
      "_replay_tables",
      [](const std::vector<std::string>& args,
         const std::vector<std::tuple<std::string, std::string, py::object>>& python_policies) {
        gs::policy_registry registry;
        for (const auto& [family, name, fn] : python_policies) {
          add_python_policy(registry, family, name, fn);
        }
        std::vector<gpusched_experiment::replay_tables> tables;
        {
          py::gil_scoped_release nogil;
          tables = gpusched_experiment::run_replay_tables(args, registry);
        }
        py::list out;
        for (auto& t : tables) {
          py::dict d;
          d["label"] = t.label;
          d["summary_csv"] = t.summary_csv;
          d["jobs_csv"] = t.jobs_csv;
          d["samples_csv"] = t.samples_csv;
          d["tenants_csv"] = t.tenants_csv;
          d["events"] = t.events;
          d["wall_s"] = t.wall_s;
          out.append(std::move(d));
        }
        return out;
      },
      py::arg("args"), py::arg("python_policies"),
      "Runs gpusched-replay's code with command-line `args` and the Python policies "
      "[(family, name, callable)] registered under their names; returns per composition a "
      "dict of the label, the CSV texts (summary row, jobs, samples, tenants), the simulator "
      "events and the wall time. Use gpusched.replay().");
}

}  // namespace gpusched_python
