// SPDX-License-Identifier: Apache-2.0
/// @file
/// Reads the text of `nvidia-smi topo -m` into a `node_topology`.
///
/// Accepted input: a header line of device columns (`GPU0 GPU1 ... [NIC columns such as mlx5_0
/// or NIC0]`) followed by any of the affinity columns `CPU Affinity`, `NUMA Affinity`, `GPU NUMA
/// ID`; one row per GPU (`GPU<i>`, in order) with a cell per device column (`X`, `NV<#>`, `PIX`,
/// `PSB` (as PIX), `PXB`, `PHB`, `NODE`, `SYS`; the pre-2018 spellings `SOC` (= SYS) and `CPU`
/// (= NODE) too) and then the affinity values; optional NIC rows; the matrix ends at a blank
/// line or at `Legend:`. Tabs, repeated spaces and ANSI colour escapes are ignored.
///
/// Model built: NV# cells become NVLink bundles (when every pair of four or more GPUs shows the
/// same NV#, one NVSwitch vertex with # links per GPU instead); the PCIe tree is rebuilt from
/// the PCIe cells as CPU socket -> host bridge -> PCIe switch -> PCIe switch -> GPU, grouping
/// GPUs that are PIX (same leaf switch), PXB (same upper switch), PHB (same host bridge) and,
/// for sockets, the NUMA affinity column when present (else equal CPU affinity, else
/// NODE-or-better cells). NICs hang at
/// the deepest level they share with their closest GPU. The tree is then checked against every
/// PCIe cell (pairs shown as NV# hide their PCIe relation and are not checked).
///
/// Errors: `topology_parse_error` (a `parse_error`) with the line and the 1-based column of the
/// offending token: unknown cell, missing or extra cells, GPU rows out of order, a non-`X`
/// diagonal, an asymmetric pair, a matrix that is not a hierarchy, more than
/// `topo_max_devices` device columns, a NUMA id above `topo_max_numa`. O(n^2) for n devices.
///
/// Limits: at most `topo_max_devices` (256) device columns (GPUs and NICs), so the matrix never
/// takes more than 64 Ki cells whatever the header claims; NUMA ids 0..`topo_max_numa` (4095).
#pragma once

#include <algorithm>  // std::min
#include <cctype>     // std::isdigit
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>  // std::move
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/parse.hpp"
#include "gpusched/topology/node_topology.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// Most device columns (GPUs plus NICs) `parse_topo_matrix` reads.
inline constexpr std::size_t topo_max_devices = 256;
/// Largest NUMA id `parse_topo_matrix` reads.
inline constexpr int topo_max_numa = 4095;

/// @brief A `parse_error` that also knows the 1-based column of the offending token.
class topology_parse_error : public parse_error {
 public:
  /// A malformed `field` at `line` and `column` (both 1-based) of `file`.
  topology_parse_error(std::string file, std::size_t line, std::size_t column, std::string field,
                       const std::string& problem)
      : parse_error(std::move(file), line, std::move(field),
                    "column " + std::to_string(column) + ": " + problem),
        column_(column) {}
  /// The 1-based column of the offending token.
  [[nodiscard]] std::size_t column() const noexcept { return column_; }

 private:
  std::size_t column_;
};

/// @brief What `parse_topo_matrix` read: the model plus the raw affinity columns.
struct topo_matrix {
  /// The GPUs, NICs and links read.
  node_topology topology;
  std::vector<std::string> nics;          ///< NIC column names, in order
  std::vector<std::string> cpu_affinity;  ///< per GPU ("" when the column is absent)
  std::vector<int> numa;                  ///< per GPU NUMA affinity (-1 when absent or N/A)
};

/// Options for `parse_topo_matrix`.
struct topo_parse_options {
  std::string name = "nvidia-smi topo -m";  ///< the node type's name
  std::string file = "<text>";              ///< used in error messages
  /// Bandwidth of one NVLink (`NV#` cells count links), GB/s per direction.
  double nvlink_gbps = link_bandwidth::nvlink2;
  /// Bandwidth of a PCIe path, GB/s per direction.
  double pcie_gbps = link_bandwidth::pcie3_x16;
  /// Bandwidth of the inter-socket link (`SYS` cells), GB/s per direction.
  double smp_gbps = link_bandwidth::upi;
};

namespace detail {
struct topo_token {
  std::string text;
  std::size_t column;  // 1-based
};
inline std::vector<topo_token> topo_tokens(std::string_view line) {
  std::vector<topo_token> out;
  std::size_t i = 0;
  while (i < line.size()) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '\x1b') {  // ANSI escape: ESC [ ... letter
      ++i;
      if (i < line.size() && line[i] == '[') {
        ++i;
        while (i < line.size() && !std::isalpha(static_cast<unsigned char>(line[i]))) ++i;
        ++i;
      }
      continue;
    }
    const std::size_t start = i;
    std::string text;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' &&
           line[i] != '\x1b') {
      text += line[i];
      ++i;
    }
    out.push_back({std::move(text), start + 1});
  }
  return out;
}
/// A parsed cell: level and NVLink count.
struct topo_cell {
  p2p_level level = p2p_level::self;
  int nvlinks = 0;
};
inline bool parse_topo_cell(const std::string& s, topo_cell& out) {
  if (s == "X") return (out = {p2p_level::self, 0}), true;
  if (s == "PIX" || s == "PSB") return (out = {p2p_level::pix, 0}), true;
  if (s == "PXB") return (out = {p2p_level::pxb, 0}), true;
  if (s == "PHB") return (out = {p2p_level::phb, 0}), true;
  if (s == "NODE" || s == "CPU") return (out = {p2p_level::node, 0}), true;
  if (s == "SYS" || s == "SOC") return (out = {p2p_level::sys, 0}), true;
  if (s.size() > 2 && s.size() <= 4 && s[0] == 'N' && s[1] == 'V') {
    int n = 0;
    for (std::size_t i = 2; i < s.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
      n = n * 10 + (s[i] - '0');
    }
    if (n < 1) return false;
    out = {p2p_level::nvlink, n};
    return true;
  }
  return false;
}
/// Union-find over `n` items.
struct topo_groups {
  std::vector<int> p;
  explicit topo_groups(int n) : p(static_cast<std::size_t>(n)) {
    for (int i = 0; i < n; ++i) p[static_cast<std::size_t>(i)] = i;
  }
  int find(int x) {
    while (p[static_cast<std::size_t>(x)] != x) {
      p[static_cast<std::size_t>(x)] = p[static_cast<std::size_t>(p[static_cast<std::size_t>(x)])];
      x = p[static_cast<std::size_t>(x)];
    }
    return x;
  }
  void join(int a, int b) { p[static_cast<std::size_t>(find(a))] = find(b); }
};
}  // namespace detail

/// @brief Parses `nvidia-smi topo -m` output. @throws topology_parse_error (see the file
/// comment); the returned model is validated.
[[nodiscard]] inline topo_matrix parse_topo_matrix(std::string_view text,
                                                   const topo_parse_options& opt = {}) {
  text = strip_bom(text);  // a UTF-8 byte-order mark before the header is skipped
  std::vector<std::string_view> lines;
  for (std::size_t pos = 0; pos <= text.size();) {
    const auto nl = text.find('\n', pos);
    const auto end = nl == std::string_view::npos ? text.size() : nl;
    lines.push_back(text.substr(pos, end - pos));
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  const auto fail = [&](std::size_t line, std::size_t col, const std::string& field,
                        const std::string& problem) -> topology_parse_error {
    return {opt.file, line, col, field, problem};
  };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    // CR-only line endings would read as one line: refused, naming the cause.
    const auto cr = lines[i].find('\r');
    if (cr != std::string_view::npos &&
        lines[i].find_first_not_of('\r', cr) != std::string_view::npos) {
      throw fail(i + 1, cr + 1, "(line)",
                 "carriage return inside a line (CR-only line endings are not read; convert "
                 "the text to LF or CRLF line endings)");
    }
  }
  std::size_t li = 0;
  while (li < lines.size() && detail::topo_tokens(lines[li]).empty()) ++li;
  if (li == lines.size()) throw fail(1, 1, "header", "no topology matrix in the input");
  const auto header = detail::topo_tokens(lines[li]);
  const std::size_t header_line = li + 1;
  if (header.front().text != "GPU0") {
    throw fail(
        header_line, header.front().column, "header",
        "expected the column header to start with GPU0, found '" + header.front().text + "'");
  }
  // device columns up to the affinity columns
  std::vector<std::string> columns;
  std::size_t h = 0;
  int gpus = 0;
  for (; h < header.size(); ++h) {
    const auto& t = header[h].text;
    if (t == "CPU" || t == "NUMA" ||
        (t == "GPU" && h + 1 < header.size() && header[h + 1].text == "NUMA")) {
      break;
    }
    if (t.rfind("GPU", 0) == 0) {
      if (t != "GPU" + std::to_string(gpus) || columns.size() != static_cast<std::size_t>(gpus)) {
        throw fail(header_line, header[h].column, "header",
                   "expected GPU" + std::to_string(gpus) + ", found '" + t + "'");
      }
      ++gpus;
    }
    if (columns.size() >= topo_max_devices) {
      throw fail(header_line, header[h].column, "header",
                 "more than " + std::to_string(topo_max_devices) + " device columns");
    }
    columns.push_back(t);
  }
  bool has_cpu = false;
  bool has_numa = false;
  bool has_gpu_numa = false;
  for (std::size_t k = h; k < header.size(); ++k) {
    const auto& t = header[k].text;
    if (t == "CPU") has_cpu = true;
    if (t == "NUMA" && (k == 0 || header[k - 1].text != "GPU")) has_numa = true;
    if (t == "GPU") has_gpu_numa = true;
  }
  const auto devices = columns.size();
  const auto n = static_cast<std::size_t>(gpus);
  std::vector<detail::topo_cell> cell(devices * devices);
  std::vector<std::size_t> cell_line(devices * devices, 0), cell_col(devices * devices, 0);
  topo_matrix out;
  out.cpu_affinity.assign(n, "");
  out.numa.assign(n, -1);
  for (std::size_t d = n; d < devices; ++d) out.nics.push_back(columns[d]);
  std::size_t row = 0;
  for (++li; li < lines.size(); ++li) {
    const auto tok = detail::topo_tokens(lines[li]);
    if (tok.empty() || tok.front().text == "Legend:" || tok.front().text == "NIC") break;
    const std::size_t line_no = li + 1;
    if (row >= devices) {
      throw fail(line_no, tok.front().column, "row", "more rows than device columns");
    }
    if (tok.front().text != columns[row]) {
      throw fail(line_no, tok.front().column, "row",
                 "expected row '" + columns[row] + "', found '" + tok.front().text + "'");
    }
    if (tok.size() < devices + 1) {
      throw fail(line_no, tok.back().column, columns[row],
                 "expected " + std::to_string(devices) + " cells, found " +
                     std::to_string(tok.size() - 1));
    }
    for (std::size_t c = 0; c < devices; ++c) {
      const auto& t = tok[c + 1];
      detail::topo_cell v;
      if (!detail::parse_topo_cell(t.text, v)) {
        throw fail(line_no, t.column, columns[row] + "/" + columns[c],
                   "unknown cell '" + t.text + "' (expected X, NV#, PIX, PXB, PHB, NODE or SYS)");
      }
      if ((v.level == p2p_level::self) != (c == row)) {
        throw fail(line_no, t.column, columns[row] + "/" + columns[c],
                   c == row ? "the diagonal must be X" : "X off the diagonal");
      }
      cell[row * devices + c] = v;
      cell_line[row * devices + c] = line_no;
      cell_col[row * devices + c] = t.column;
    }
    // affinity values of GPU rows
    if (row < n) {
      std::size_t k = devices + 1;
      const std::size_t want =
          (has_cpu ? 1u : 0u) + (has_numa ? 1u : 0u) + (has_gpu_numa ? 1u : 0u);
      if (tok.size() != devices + 1 + want) {
        throw fail(line_no, tok.back().column, columns[row],
                   "expected " + std::to_string(devices + want) +
                       " values after the row name, found " + std::to_string(tok.size() - 1));
      }
      if (has_cpu) out.cpu_affinity[row] = tok[k++].text;
      if (has_numa) {
        const auto& t = tok[k++];
        if (t.text != "N/A") {
          int v = 0;
          for (char ch : t.text) {
            if (!std::isdigit(static_cast<unsigned char>(ch))) {
              throw fail(line_no, t.column, "NUMA Affinity",
                         "expected a NUMA node number or N/A, found '" + t.text + "'");
            }
            v = v * 10 + (ch - '0');
            if (v > topo_max_numa) {
              throw fail(line_no, t.column, "NUMA Affinity",
                         "NUMA id '" + t.text + "' is above " + std::to_string(topo_max_numa));
            }
          }
          out.numa[row] = v;
        }
      }
    } else if (tok.size() != devices + 1) {
      throw fail(line_no, tok.back().column, columns[row],
                 "expected " + std::to_string(devices) + " cells, found " +
                     std::to_string(tok.size() - 1));
    }
    ++row;
  }
  if (row < n) {
    throw fail(li + 1, 1, "row", "missing row GPU" + std::to_string(row));
  }
  const std::size_t rows = row;  // NIC rows are optional
  // symmetry
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < rows; ++j) {
      const auto& a = cell[i * devices + j];
      const auto& b = cell[j * devices + i];
      if (a.level != b.level || a.nvlinks != b.nvlinks) {
        throw fail(cell_line[i * devices + j], cell_col[i * devices + j],
                   columns[i] + "/" + columns[j], "differs from " + columns[j] + "/" + columns[i]);
      }
    }
  }
  const auto at = [&](std::size_t i, std::size_t j) -> const detail::topo_cell& {
    return cell[i * devices + j];
  };
  // groups, coarse to fine: socket, host bridge, upper switch, leaf switch
  const int gn = gpus;
  detail::topo_groups socket(gn), bridge(gn), upper(gn), leaf(gn);
  const bool numa_known =
      has_numa && std::find(out.numa.begin(), out.numa.end(), -1) == out.numa.end();
  for (int i = 0; i < gn; ++i) {
    for (int j = i + 1; j < gn; ++j) {
      const auto l = at(static_cast<std::size_t>(i), static_cast<std::size_t>(j)).level;
      if (numa_known) {
        if (out.numa[static_cast<std::size_t>(i)] == out.numa[static_cast<std::size_t>(j)]) {
          socket.join(i, j);
        }
      } else if (has_cpu) {
        if (out.cpu_affinity[static_cast<std::size_t>(i)] ==
            out.cpu_affinity[static_cast<std::size_t>(j)]) {
          socket.join(i, j);
        }
      } else if (l != p2p_level::nvlink && l != p2p_level::sys) {
        socket.join(i, j);
      }
      if (l == p2p_level::nvlink) continue;
      if (l <= p2p_level::phb) bridge.join(i, j);
      if (l <= p2p_level::pxb) upper.join(i, j);
      if (l <= p2p_level::pix) leaf.join(i, j);
    }
  }
  // nest: a finer group must sit inside the coarser one
  for (int i = 0; i < gn; ++i) {
    for (int j = 0; j < gn; ++j) {
      if (bridge.find(i) == bridge.find(j)) socket.join(i, j);
      if (upper.find(i) == upper.find(j)) bridge.join(i, j);
      if (leaf.find(i) == leaf.find(j)) upper.join(i, j);
    }
  }
  node_topology t(opt.name);
  std::vector<int> cpu_v(n, -1), hb_v(n, -1), up_v(n, -1), leaf_v(n, -1);
  for (int i = 0; i < gn; ++i) {
    const auto s = static_cast<std::size_t>(socket.find(i));
    if (cpu_v[s] < 0) cpu_v[s] = t.add_cpu("CPU" + std::to_string(s), opt.smp_gbps);
    const auto b = static_cast<std::size_t>(bridge.find(i));
    if (hb_v[b] < 0) {
      hb_v[b] = t.add_vertex(vertex_kind::host_bridge, "HB" + std::to_string(b), cpu_v[s],
                             link_kind::pcie, opt.pcie_gbps);
    }
    const auto u = static_cast<std::size_t>(upper.find(i));
    if (up_v[u] < 0) {
      up_v[u] = t.add_vertex(vertex_kind::pcie_switch, "PLX-up" + std::to_string(u), hb_v[b],
                             link_kind::pcie, opt.pcie_gbps);
    }
    const auto f = static_cast<std::size_t>(leaf.find(i));
    if (leaf_v[f] < 0) {
      leaf_v[f] = t.add_vertex(vertex_kind::pcie_switch, "PLX" + std::to_string(f), up_v[u],
                               link_kind::pcie, opt.pcie_gbps);
    }
  }
  for (int i = 0; i < gn; ++i) {
    t.add_vertex(vertex_kind::gpu, "GPU" + std::to_string(i),
                 leaf_v[static_cast<std::size_t>(leaf.find(i))], link_kind::pcie, opt.pcie_gbps);
  }
  // NVLink: a uniform all-to-all NV# on 4+ GPUs is an NVSwitch plane
  bool uniform = gn >= 4;
  const int nv01 = gn >= 2 ? at(0, 1).nvlinks : 0;
  for (int i = 0; i < gn && uniform; ++i) {
    for (int j = 0; j < gn && uniform; ++j) {
      if (i != j && at(static_cast<std::size_t>(i), static_cast<std::size_t>(j)).nvlinks != nv01) {
        uniform = false;
      }
    }
  }
  if (uniform && nv01 > 0) {
    const int sw = t.add_nvswitch("NVSwitch");
    for (int i = 0; i < gn; ++i) {
      t.add_link(t.gpu_vertex(i), sw, link_kind::nvlink, nv01, opt.nvlink_gbps);
    }
  } else {
    for (int i = 0; i < gn; ++i) {
      for (int j = i + 1; j < gn; ++j) {
        const auto& c = at(static_cast<std::size_t>(i), static_cast<std::size_t>(j));
        if (c.nvlinks > 0) t.add_gpu_nvlink(i, j, c.nvlinks, opt.nvlink_gbps);
      }
    }
  }
  // NICs: under the deepest group shared with their closest GPU
  for (std::size_t d = n; d < devices; ++d) {
    int best = -1;
    auto lvl = p2p_level::sys;
    for (int i = 0; i < gn; ++i) {
      const auto l = at(static_cast<std::size_t>(i), d).level;
      if (best < 0 || l < lvl) {
        best = i;
        lvl = l;
      }
    }
    int parent = cpu_v[static_cast<std::size_t>(socket.find(best))];
    if (lvl <= p2p_level::pix) {
      parent = leaf_v[static_cast<std::size_t>(leaf.find(best))];
    } else if (lvl <= p2p_level::pxb) {
      parent = up_v[static_cast<std::size_t>(upper.find(best))];
    } else if (lvl <= p2p_level::phb) {
      parent = hb_v[static_cast<std::size_t>(bridge.find(best))];
    }
    t.add_vertex(vertex_kind::nic, columns[d], parent, link_kind::pcie, opt.pcie_gbps);
  }
  // the rebuilt tree must reproduce every PCIe cell among GPUs
  for (int i = 0; i < gn; ++i) {
    for (int j = 0; j < gn; ++j) {
      const auto ui = static_cast<std::size_t>(i);
      const auto uj = static_cast<std::size_t>(j);
      const auto& c = at(ui, uj);
      if (i == j || c.level == p2p_level::nvlink) continue;
      if (t.pcie_level(i, j) != c.level) {
        throw fail(cell_line[ui * devices + uj], cell_col[ui * devices + uj],
                   columns[ui] + "/" + columns[uj],
                   "the PCIe cells are not a hierarchy: " + std::string(to_string(c.level)) +
                       " here contradicts " + std::string(to_string(t.pcie_level(i, j))) +
                       " implied by the other cells");
      }
    }
  }
  t.validate();
  out.topology = std::move(t);
  return out;
}

GPUSCHED_END_NAMESPACE
