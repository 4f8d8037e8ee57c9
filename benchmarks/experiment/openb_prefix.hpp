// SPDX-License-Identifier: Apache-2.0
// The default openb trace (loaded once per process) and its prefixes, for the packing-experiment
// benchmarks: the first `n` nodes with the same share of the pod list.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <gpusched/trace/openb.hpp>

namespace gpusched::bench {

inline const std::vector<openb_node>& openb_all_nodes() {
  static const auto n =
      load_openb_nodes(std::string(GPUSCHED_OPENB_DIR) + "/openb_node_list_gpu_node.csv");
  return n;
}
inline const std::vector<openb_pod>& openb_all_pods() {
  static const auto p =
      load_openb_pods(std::string(GPUSCHED_OPENB_DIR) + "/openb_pod_list_default.csv");
  return p;
}

/// The first `n` nodes and the pods scaled to them (the same share of the pod list).
struct openb_prefix {
  std::vector<openb_node> nodes;
  std::vector<openb_pod> pods;
  explicit openb_prefix(std::size_t n) {
    const auto& all_n = openb_all_nodes();
    const auto& all_p = openb_all_pods();
    nodes.assign(all_n.begin(), all_n.begin() + static_cast<std::ptrdiff_t>(n));
    const auto pods_n = all_p.size() * n / all_n.size();
    pods.assign(all_p.begin(), all_p.begin() + static_cast<std::ptrdiff_t>(pods_n));
  }
};

}  // namespace gpusched::bench
