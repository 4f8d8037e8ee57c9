// SPDX-License-Identifier: Apache-2.0
// The FGD packing experiment (benchmarks/experiment/fgd_experiment.hpp, the code behind
// `gpusched-experiment packing`): openb nodes and pods, the six FGD-paper policies, per-seed
// runs; the pure-Python layer turns the runs into NumPy columns.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gpusched/trace/openb.hpp>

#include "common.hpp"
#include "fgd_experiment.hpp"

namespace gpusched_python {
namespace {

/// The command's --policy names.
std::vector<gs::fgd_policy_kind> policies_named(const std::vector<std::string>& names) {
  static const std::pair<std::string_view, gs::fgd_policy_kind> known[] = {
      {"random", gs::fgd_policy_kind::random},         {"dotprod", gs::fgd_policy_kind::dotprod},
      {"clustering", gs::fgd_policy_kind::clustering}, {"packing", gs::fgd_policy_kind::packing},
      {"bestfit", gs::fgd_policy_kind::bestfit},       {"fgd", gs::fgd_policy_kind::fgd}};
  std::vector<gs::fgd_policy_kind> out;
  for (const auto& n : names) {
    if (n == "all") {
      for (const auto& [name, k] : known) out.push_back(k);
      continue;
    }
    const auto it = std::find_if(std::begin(known), std::end(known),
                                 [&](const auto& p) { return p.first == n; });
    if (it == std::end(known)) {
      throw gs::invalid_value_error(
          gs::error_id::unknown_name, "fgd_experiment", "policies", "'" + n + "'",
          "unknown policy (known: random, dotprod, clustering, packing, bestfit, fgd, all)");
    }
    out.push_back(it->second);
  }
  if (out.empty()) {
    throw gs::invalid_value_error(gs::error_id::invalid_value, "fgd_experiment", "policies", "[]",
                                  "no policy given");
  }
  return out;
}

}  // namespace

void init_fgd(py::module_& m) {
  m.def(
      "_fgd_runs",
      [](const std::string& nodes, const std::string& pods,
         const std::vector<std::string>& policies, const std::vector<std::uint64_t>& seeds,
         double tune, double popularity, bool random_ties, bool name_order) {
        const auto kinds = policies_named(policies);
        if (seeds.empty()) {
          throw gs::invalid_value_error(gs::error_id::invalid_value, "fgd_experiment", "seeds",
                                        "[]", "no seed given");
        }
        if (!(tune > 0) || tune > 10) {
          throw gs::invalid_value_error(gs::error_id::invalid_value, "fgd_experiment", "tune",
                                        std::to_string(tune), "must be in (0, 10]");
        }
        if (!(popularity > 0) || popularity > 100) {
          throw gs::invalid_value_error(gs::error_id::invalid_value, "fgd_experiment", "popularity",
                                        std::to_string(popularity), "must be in (0, 100]");
        }
        std::vector<gs::fgd_run_result> runs;
        std::size_t node_count = 0, pod_count = 0;
        std::int64_t gpus = 0;
        {
          py::gil_scoped_release nogil;
          const gs::fgd_experiment exp(gs::load_openb_nodes(nodes), gs::load_openb_pods(pods));
          node_count = exp.node_count();
          pod_count = exp.pod_count();
          gpus = exp.total_gpus();
          for (const auto k : kinds) {
            for (const auto seed : seeds) {
              gs::fgd_run_config cfg;
              cfg.policy = k;
              cfg.seed = seed;
              cfg.tune = tune;
              cfg.popularity = popularity;
              cfg.random_ties = random_ties;
              cfg.permute_nodes = !name_order;
              runs.push_back(exp.run(cfg));
            }
          }
        }
        const auto last = static_cast<std::size_t>(std::lround(tune * 100));
        py::list out;
        for (const auto& r : runs) {
          py::dict d;
          d["policy"] = std::string(gs::fgd_policy_label(r.policy));
          d["seed"] = r.seed;
          d["pods"] = r.pods;
          d["placed"] = r.placed;
          d["failed"] = r.failed;
          d["alloc100"] = r.alloc[std::min<std::size_t>(100, r.bins() - 1)];
          d["unallocated100"] = r.unallocated_at(100);
          d["unallocated_last"] = r.unallocated_at(last);
          d["frag100"] = r.frag[std::min<std::size_t>(100, r.bins() - 1)];
          d["wall_s"] = r.seconds;
          d["alloc"] = r.alloc;
          d["frag"] = r.frag;
          d["frag_ratio"] = r.frag_ratio;
          out.append(std::move(d));
        }
        py::dict info;
        info["nodes"] = node_count;
        info["gpus"] = gpus;
        info["pods"] = pod_count;
        info["last_bin"] = last;
        return py::make_tuple(info, out);
      },
      py::arg("nodes"), py::arg("pods"), py::arg("policies"), py::arg("seeds"), py::arg("tune"),
      py::arg("popularity"), py::arg("random_ties"), py::arg("name_order"),
      "Runs the FGD packing experiment (the code of `gpusched-experiment packing`); use "
      "gpusched.fgd_experiment().");
}

}  // namespace gpusched_python
