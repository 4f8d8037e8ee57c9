// SPDX-License-Identifier: Apache-2.0
// Trace replay: the gpusched-replay command's own code (benchmarks/replay) run with the
// caller's options and a registry that may hold policies written in Python; the tables come
// back as the command's CSV text (the pure-Python layer turns them into NumPy columns).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gpusched/pipeline/registry.hpp>

#include "common.hpp"
#include "replay.hpp"

namespace gpusched_python {

void init_replay(py::module_& m) {
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
