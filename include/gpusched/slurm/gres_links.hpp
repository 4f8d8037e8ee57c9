// SPDX-License-Identifier: Apache-2.0
/// @file
/// `gres.conf` lines with `Links=` from a node type's interconnect graph, so that Slurm's own
/// choice of GPU indices inside a node follows NVLink (cons_tres prefers GPUs with more links
/// between them). The bridge writes only node lists; this is how the in-node choice can follow
/// the same topology model. Pure text, no JSON.
///
/// One line per GPU: `NodeName=<nodes> Name=gpu [Type=<type>] File=<prefix><i> Links=<l0>,...`
/// where `l_j` is the number of NVLinks between GPU i and GPU j (`node_topology::nvlinks`: direct
/// links, or through NVSwitches), and -1 for the GPU itself (Slurm's convention).
#pragma once

#include <string>
#include <string_view>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/topology/node_topology.hpp"

GPUSCHED_BEGIN_NAMESPACE

namespace slurm {

/// @brief The `gres.conf` lines of `t` for the nodes `nodes` (a Slurm host list). O(GPUs^2 x
/// links).
/// @throws invalid_value_error (invalid_value) when `nodes`, `type`, `file_prefix` or the
/// topology's name holds a control character (below 0x20, or 0x7f): a newline there would add a
/// line of its own to gres.conf.
[[nodiscard]] inline std::string gres_links(const node_topology& t, std::string_view nodes,
                                            std::string_view type = {},
                                            std::string_view file_prefix = "/dev/nvidia") {
  const auto check = [](const char* field, std::string_view v) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      const auto u = static_cast<unsigned char>(v[i]);
      if (u < 0x20 || u == 0x7f) {
        std::string shown;
        for (const char c : v) {
          const auto w = static_cast<unsigned char>(c);
          shown += (w < 0x20 || w == 0x7f) ? std::string("?") : std::string(1, c);
        }
        throw invalid_value_error(error_id::invalid_value, "gres.conf", field, shown,
                                  "holds a control character (at character " +
                                      std::to_string(i + 1) +
                                      "); each gres.conf line must stay one line");
      }
    }
  };
  check("nodes", nodes);
  check("type", type);
  check("file_prefix", file_prefix);
  check("topology name", t.name());
  std::string out = "# generated from the topology '" + t.name() + "' (" +
                    std::to_string(t.gpu_count()) + " GPUs): Links= counts NVLinks, -1 is the GPU itself\n";
  for (int i = 0; i < t.gpu_count(); ++i) {
    out += "NodeName=" + std::string(nodes) + " Name=gpu";
    if (!type.empty()) out += " Type=" + std::string(type);
    out += " File=" + std::string(file_prefix) + std::to_string(i) + " Links=";
    for (int j = 0; j < t.gpu_count(); ++j) {
      if (j > 0) out += ',';
      out += i == j ? std::string("-1") : std::to_string(t.nvlinks(i, j));
    }
    out += '\n';
  }
  return out;
}

}  // namespace slurm

GPUSCHED_END_NAMESPACE
