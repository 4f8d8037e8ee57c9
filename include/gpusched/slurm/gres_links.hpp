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
#include "gpusched/topology/node_topology.hpp"

GPUSCHED_BEGIN_NAMESPACE

namespace slurm {

/// @brief The `gres.conf` lines of `t` for the nodes `nodes` (a Slurm host list). O(GPUs^2 x
/// links).
[[nodiscard]] inline std::string gres_links(const node_topology& t, std::string_view nodes,
                                            std::string_view type = {},
                                            std::string_view file_prefix = "/dev/nvidia") {
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
