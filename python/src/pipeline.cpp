// SPDX-License-Identifier: Apache-2.0
// The ledger, the pipeline by registry names (or Python callables in the ordering, packing and
// preemption slots), one cycle at a time, and its decisions with their structured reasons.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <gpusched/check/invariants.hpp>
#include <gpusched/cluster/cluster.hpp>
#include <gpusched/core/random.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/policy/decision.hpp>
#include <gpusched/policy/ordering/las.hpp>
#include <gpusched/workload/ledger.hpp>
#include <gpusched/workload/quota_file.hpp>

#include "common.hpp"

namespace gpusched_python {
namespace {

/// A decision with its text (rendered when the cycle ends, against the cluster and the job).
struct py_decision {
  gs::decision d;
  std::string text;
};
/// A growth with its text.
struct py_growth {
  gs::growth g;
  std::string text;
};
/// One cycle's outcome.
struct py_cycle {
  std::vector<py_decision> decisions;
  std::vector<py_growth> grown;
};

/// A run-time pipeline with its random engine and the names of its slots.
struct py_pipeline {
  gs::any_pipeline pipe;
  gs::random_engine rng;
  std::array<std::string, 5> names;
};

std::string slot_name(const py::object& slot, const char* family) {
  if (py::isinstance<py::str>(slot)) return slot.cast<std::string>();
  if (py::hasattr(slot, "__name__")) return py::str(slot.attr("__name__")).cast<std::string>();
  return std::string("python-") + family;
}

py::dict reason_dict(const gs::reason& r) {
  py::dict d;
  d["code"] = std::string(gs::to_string(r.code));
  return d;
}

py::list grants(const gs::task_allocation& a) {
  py::list out;
  for (const auto& g : a.gpus) {
    py::dict d;
    d["gpu"] = g.gpu.value();
    d["milli"] = g.milli.value();
    d["mig_slots"] = int{g.mig_slots};
    d["media"] = g.media;
    d["replica"] = g.replica;
    d["mig_compute"] = int{g.mig_compute};
    out.append(std::move(d));
  }
  return out;
}

}  // namespace

void init_pipeline(py::module_& m) {
  // ---- allocations, running jobs, ledger --------------------------------------------------
  py::class_<gs::task_allocation>(m, "Allocation", "What one task holds on one node.")
      .def_property_readonly(
          "node", [](const gs::task_allocation& a) { return a.node.value(); }, "Node index.")
      .def_readonly("group", &gs::task_allocation::group, "The task's group index in its job.")
      .def_property_readonly(
          "cpu_millis", [](const gs::task_allocation& a) { return a.cpu.value(); },
          "CPU millicores the task holds.")
      .def_property_readonly(
          "memory_mib", [](const gs::task_allocation& a) { return a.memory.value(); },
          "Memory the task holds (MiB).")
      .def_property_readonly(
          "gpus", &grants,
          "The GPU grants: dicts of gpu (cluster GPU index), milli, mig_slots "
          "(bit mask), media, replica, mig_compute (the MIG profile's compute slices, 0 when "
          "not MIG).")
      .def("__repr__", [](const gs::task_allocation& a) {
        return "Allocation(node=" + std::to_string(a.node.value()) +
               ", gpus=" + std::to_string(a.gpus.size()) + ")";
      });
  py::class_<gs::running_job>(m, "RunningJob", "A job the ledger holds, with its allocations.")
      .def_readonly("job", &gs::running_job::spec, "The job (a copy of its Job).")
      .def_property_readonly(
          "id", [](const gs::running_job& r) { return r.spec.id.value(); }, "The job's id.")
      .def_property_readonly(
          "start_s", [](const gs::running_job& r) { return gs::to_seconds(r.start); },
          "When it started (s).")
      .def_readonly("tasks", &gs::running_job::tasks, "One Allocation per running task.")
      .def_property_readonly(
          "gpus",
          [](const gs::running_job& r) { return static_cast<double>(r.milli_gpus()) / 1000; },
          "GPU-equivalents held (shares count their fraction, MIG instances 0).")
      .def("__repr__", [](const gs::running_job& r) {
        return "RunningJob(" + std::to_string(r.spec.id.value()) +
               ", tasks=" + std::to_string(r.tasks.size()) + ")";
      });
  py::class_<gs::invariant_report>(m, "InvariantReport", "What check_invariants found.")
      .def_property_readonly("ok", &gs::invariant_report::ok, "True when every invariant holds.")
      .def_readonly("violations", &gs::invariant_report::violations,
                    "One message per violated invariant.")
      .def("__bool__", &gs::invariant_report::ok)
      .def("__str__", &gs::invariant_report::to_string);
  py::class_<gs::ledger>(m, "Ledger", "Who holds what: the cluster's state and the running jobs.")
      .def(py::init<gs::cluster>(), py::arg("cluster"))
      .def_property_readonly(
          "cluster", [](const gs::ledger& b) { return b.state(); },
          "A copy of the cluster's current state.")
      .def_property_readonly(
          "running",
          [](const gs::ledger& b) {
            return std::vector<gs::running_job>(b.running().begin(), b.running().end());
          },
          "The running jobs (copies).")
      .def_property_readonly(
          "running_ids",
          [](const gs::ledger& b) {
            std::vector<std::uint32_t> ids;
            for (const auto& r : b.running()) ids.push_back(r.spec.id.value());
            return ids;
          },
          "The ids of the running jobs, in ledger order.")
      .def(
          "is_running",
          [](const gs::ledger& b, std::uint32_t id) { return b.is_running(gs::job_id{id}); },
          py::arg("job"), "True when job id `job` holds resources in this ledger.")
      .def(
          "release", [](gs::ledger& b, std::uint32_t id) { b.release(gs::job_id{id}); },
          py::arg("job"),
          "Releases a finished job (without telling a pipeline; see Pipeline.release). Raises "
          "InvalidValueError for a job that is not running.")
      .def_property_readonly(
          "free_gpus", [](const gs::ledger& b) { return b.state().total_free_whole_gpus(); },
          "Whole GPUs free in the cluster.")
      .def(
          "describe_placement",
          [](const gs::ledger& b, const std::vector<gs::task_allocation>& p) {
            return gs::describe_placement(p, b.state());
          },
          py::arg("placement"), "Renders allocations as 'node[gpu0-3], ...'.")
      .def("check_invariants", &gs::check_invariants,
           "Recomputes every amount from the ledger; see check_invariants().");
  m.def("check_invariants", &gs::check_invariants, py::arg("ledger"),
        "Recomputes every GPU, MIG slot, replica, CPU and memory amount from the ledger and "
        "returns an InvariantReport (truthy when every invariant holds).");

  // ---- reasons, decisions, growths, cycles ------------------------------------------------
  py::class_<gs::reason>(m, "Reason",
                         "Why a decision went the way it did (structured; describe() renders it).")
      .def_property_readonly(
          "code", [](const gs::reason& r) { return std::string(gs::to_string(r.code)); },
          "The reason code: 'placed', 'insufficient', 'no_fit', 'over_quota', ...")
      .def_property_readonly(
          "resource", [](const gs::reason& r) { return std::string(gs::to_string(r.resource)); },
          "The resource concerned: 'GPUs', 'milli-GPU', 'MIG slots', 'MIG instances', 'CPU "
          "millicores', "
          "'MiB memory', 'GPU replicas' or 'none'.")
      .def_readonly("needed", &gs::reason::needed, "Amount needed, in `resource` units.")
      .def_readonly("available", &gs::reason::available, "Amount available, in `resource` units.")
      .def_readonly("group", &gs::reason::group, "Task group index concerned, or None.")
      .def_property_readonly(
          "related",
          [](const gs::reason& r) -> std::optional<std::uint32_t> {
            if (r.related == gs::job_id{}) return std::nullopt;
            return r.related.value();
          },
          "The blocking job or reservation holder, or None.")
      .def_property_readonly(
          "until_s",
          [](const gs::reason& r) -> std::optional<double> {
            if (!r.until) return std::nullopt;
            return gs::to_seconds(*r.until);
          },
          "Reservation start or end of a backoff (s), or None.")
      .def_readonly("scope", &gs::reason::scope,
                    "The quota node (queue or cohort) that limits, or None.")
      .def_readonly("tasks_placed", &gs::reason::tasks_placed,
                    "no_fit: tasks of the gang the best attempt placed, or None.")
      .def(
          "describe", [](const gs::reason& r) { return gs::describe(r); },
          "The reason as a sentence.")
      .def(
          "as_dict",
          [](const gs::reason& r) {
            py::dict d = reason_dict(r);
            d["resource"] = std::string(gs::to_string(r.resource));
            d["needed"] = r.needed;
            d["available"] = r.available;
            d["group"] = r.group;
            d["scope"] = r.scope;
            d["tasks_placed"] = r.tasks_placed;
            return d;
          },
          "The reason as a dict: code, resource, needed, available, group, scope, tasks_placed.")
      .def("__repr__", [](const gs::reason& r) {
        return "Reason('" + std::string(gs::to_string(r.code)) + "')";
      });
  py::class_<py_decision>(m, "Decision", "The outcome for one pending job in one cycle.")
      .def_property_readonly(
          "job", [](const py_decision& x) { return x.d.job.value(); }, "The job's id.")
      .def_property_readonly(
          "kind", [](const py_decision& x) { return std::string(gs::to_string(x.d.kind)); },
          "'admit', 'defer' or 'reject'.")
      .def_property_readonly(
          "why", [](const py_decision& x) { return x.d.why; },
          "The Reason of the verdict (admit: placed or placed_by_preemption).")
      .def_property_readonly(
          "placement", [](const py_decision& x) { return x.d.placement; },
          "Admit: one Allocation per task.")
      .def_property_readonly(
          "victims",
          [](const py_decision& x) {
            std::vector<std::uint32_t> v;
            for (auto id : x.d.victims) v.push_back(id.value());
            return v;
          },
          "Admit by preemption: the jobs evicted.")
      .def_property_readonly(
          "preemption", [](const py_decision& x) { return x.d.preemption; },
          "Defer after a failed preemption attempt: why it failed.")
      .def_property_readonly(
          "lost_gpu_seconds", [](const py_decision& x) { return x.d.lost_gpu_seconds; },
          "Admit by preemption: expected work lost by the victims (GPU-s).")
      .def(
          "describe", [](const py_decision& x) { return x.text; },
          "The decision as a sentence ('admit job 1 'a' on node-1[gpu0-7]').")
      .def("__repr__", [](const py_decision& x) { return "<Decision: " + x.text + ">"; });
  py::class_<py_growth>(m, "Growth", "A running elastic job grown back by the growth step.")
      .def_property_readonly(
          "job", [](const py_growth& x) { return x.g.job.value(); }, "The grown job's id.")
      .def_property_readonly(
          "group", [](const py_growth& x) { return int{x.g.group}; },
          "The index of the grown group.")
      .def_property_readonly(
          "from_tasks", [](const py_growth& x) { return x.g.from; },
          "Tasks of the group before the growth.")
      .def_property_readonly(
          "to_tasks", [](const py_growth& x) { return x.g.to; },
          "Tasks of the group after the growth.")
      .def(
          "describe", [](const py_growth& x) { return x.text; },
          "The growth as a sentence (which job, group and tasks, and where).");
  py::class_<py_cycle>(m, "Cycle", "The decisions of one cycle, in the order jobs were considered.")
      .def_readonly("decisions", &py_cycle::decisions,
                    "One Decision per pending job, in the order the jobs were considered.")
      .def_readonly("grown", &py_cycle::grown,
                    "The Growths of running elastic jobs, in the order they were made.")
      .def(
          "count",
          [](const py_cycle& c, const std::string& kind) {
            std::size_t n = 0;
            for (const auto& d : c.decisions) {
              if (gs::to_string(d.d.kind) == kind) ++n;
            }
            return n;
          },
          py::arg("kind"), "Decisions of kind 'admit', 'defer' or 'reject'.")
      .def(
          "describe",
          [](const py_cycle& c) {
            std::string s;
            for (const auto& d : c.decisions) s += d.text + "\n";
            for (const auto& g : c.grown) s += g.text + "\n";
            return s;
          },
          "Every decision (and growth) as a sentence, one per line.");

  // ---- the pipeline -----------------------------------------------------------------------
  py::class_<py_pipeline>(m, "Pipeline",
                          "A scheduling pipeline: one policy per family (see pipeline()).")
      .def_property_readonly(
          "names",
          [](const py_pipeline& p) {
            py::dict d;
            d["ordering"] = p.names[0];
            d["admission"] = p.names[1];
            d["packing"] = p.names[2];
            d["placement"] = p.names[3];
            d["preemption"] = p.names[4];
            return d;
          },
          "The policy in each slot.")
      .def(
          "schedule",
          [](py_pipeline& p, gs::ledger& book, const std::vector<gs::job_spec>& pending,
             double now_s) {
            for (const auto& j : pending) gs::validate(j, book.state().catalog());
            const auto now = time_from_seconds(now_s);
            gs::cycle_result res;
            {
              py::gil_scoped_release nogil;
              res = p.pipe.schedule(book, pending, now, p.rng);
            }
            std::unordered_map<std::uint32_t, const gs::job_spec*> by_id;
            for (const auto& j : pending) by_id.emplace(j.id.value(), &j);
            const auto find = [&](gs::job_id id) -> const gs::job_spec* {
              const auto it = by_id.find(id.value());
              if (it != by_id.end()) return it->second;
              for (const auto& r : book.running()) {
                if (r.spec.id == id) return &r.spec;
              }
              return nullptr;
            };
            py_cycle out;
            out.decisions.reserve(res.decisions.size());
            for (auto& d : res.decisions) {
              std::string text = gs::describe(d, book.state(), find(d.job));
              out.decisions.push_back({std::move(d), std::move(text)});
            }
            for (auto& g : res.grown) {
              std::string text = gs::describe(g, book.state(), find(g.job));
              out.grown.push_back({std::move(g), std::move(text)});
            }
            return out;
          },
          py::arg("ledger"), py::arg("pending"), py::arg("now_s") = 0.0,
          "Runs one cycle on `ledger` for the `pending` jobs at time `now_s` (s) and returns a "
          "Cycle. The jobs are checked first (InvalidValueError before any change). A policy "
          "written in Python that raises makes this raise PolicyError naming the policy and "
          "the job, from the original exception. The GIL is released while C++ policies run.")
      .def(
          "release",
          [](py_pipeline& p, gs::ledger& book, std::uint32_t id, double now_s) {
            p.pipe.release(book, gs::job_id{id}, time_from_seconds(now_s), p.rng);
          },
          py::arg("ledger"), py::arg("job"), py::arg("now_s") = 0.0,
          "Reports a finished job to the policies (incremental orderings) and releases it.")
      .def("__repr__", [](const py_pipeline& p) {
        return "Pipeline(ordering='" + p.names[0] + "', admission='" + p.names[1] + "', packing='" +
               p.names[2] + "', placement='" + p.names[3] + "', preemption='" + p.names[4] + "')";
      });

  m.def(
      "pipeline",
      [](py::object ordering, py::object admission, py::object packing, py::object placement,
         py::object preemption, std::uint64_t seed,
         std::optional<std::shared_ptr<gs::topology_model>> topology,
         std::optional<std::string> gittins_prior, std::optional<std::string> quotas) {
        gs::policy_inputs in;
        if (quotas) {
          // the run's quota and tenant trees (workload/quota_file.hpp; tenants by number)
          std::ifstream file = gs::open_input(*quotas);
          auto trees = gs::read_quota_file(file, *quotas, gs::basic_catalog());
          in.quotas = std::make_shared<const gs::quota_tree>(std::move(trees.quotas));
          in.tenants = std::make_shared<const gs::tenant_tree>(std::move(trees.tenants));
        }
        if (topology && *topology) in.topology = *topology;
        if (gittins_prior) {
          in.prior = std::make_shared<const gs::gpu_time_prior>(
              gs::gpu_time_prior::load_csv(*gittins_prior));
        }
        const gs::policy_registry reg;
        auto cur = std::make_shared<current_job>();
        const auto str = [](const py::object& o) { return py::isinstance<py::str>(o); };
        const auto need_name = [&](const py::object& o, const char* family) {
          if (!str(o)) {
            throw gs::invalid_value_error(gs::error_id::invalid_value, "pipeline", family,
                                          py::repr(o).cast<std::string>(),
                                          "must be a policy name (Python policies: ordering, "
                                          "packing, preemption)");
          }
          return o.cast<std::string>();
        };
        const auto need_callable = [&](const py::object& o, const char* family) {
          if (!PyCallable_Check(o.ptr())) {
            throw gs::invalid_value_error(gs::error_id::invalid_value, "pipeline", family,
                                          py::repr(o).cast<std::string>(),
                                          "must be a policy name or a callable");
          }
        };
        // Check every name before building anything.
        if (str(ordering)) reg.check<gs::ordering_tag>(ordering.cast<std::string>());
        reg.check<gs::admission_tag>(need_name(admission, "admission"));
        if (str(packing)) reg.check<gs::packing_tag>(packing.cast<std::string>());
        reg.check<gs::placement_tag>(need_name(placement, "placement"));
        if (str(preemption)) reg.check<gs::preemption_tag>(preemption.cast<std::string>());
        if (!str(ordering)) need_callable(ordering, "ordering");
        if (!str(packing)) need_callable(packing, "packing");
        if (!str(preemption)) need_callable(preemption, "preemption");

        auto o = str(ordering) ? reg.make_ordering(ordering.cast<std::string>(), in)
                               : make_python_ordering(ordering, slot_name(ordering, "ordering"));
        auto a = reg.make_admission(admission.cast<std::string>(), in);
        auto pk = str(packing) ? reg.make_packing(packing.cast<std::string>(), in)
                               : make_python_packing(packing, slot_name(packing, "packing"), cur);
        auto pl = track_placement(reg.make_placement(placement.cast<std::string>(), in), cur);
        auto pr = str(preemption)
                      ? reg.make_preemption(preemption.cast<std::string>(), in)
                      : make_python_preemption(preemption, slot_name(preemption, "preemption"));
        gs::any_pipeline pipe(std::move(o), std::move(a), std::move(pk), std::move(pl),
                              std::move(pr));
        pipe.environment().quotas = in.quotas;
        pipe.environment().tenants = in.tenants;
        return py_pipeline{std::move(pipe),
                           gs::random_engine(seed),
                           {slot_name(ordering, "ordering"), slot_name(admission, "admission"),
                            slot_name(packing, "packing"), slot_name(placement, "placement"),
                            slot_name(preemption, "preemption")}};
      },
      py::kw_only(), py::arg("ordering") = "fifo", py::arg("admission") = "gang",
      py::arg("packing") = "first-fit", py::arg("placement") = "first-fit",
      py::arg("preemption") = "priority", py::arg("seed") = 1, py::arg("topology") = py::none(),
      py::arg("gittins_prior") = py::none(), py::arg("quotas") = py::none(),
      "A pipeline by registry names (see policy_names()); the ordering, packing and "
      "preemption slots also take a Python callable (see the 'Policies written in Python' "
      "section of the package docstring). `seed` seeds the pipeline's random engine; "
      "`topology` (a TopologyModel) is what placement='topology' uses; `gittins_prior` (the path "
      "of a GPU-time prior CSV, e.g. Tiresias' yarn-gput1000.csv) enables "
      "ordering='2d-gittins'; `quotas` (the path of a quota file: cohort and queue lines, "
      "tenants by number, see include/gpusched/workload/quota_file.hpp) gives the run's quota "
      "and tenant trees to admission='quota', ordering='kueue-drs' or 'fair-tree' and "
      "preemption='checkpoint-aware-reclaim'. Raises "
      "InvalidValueError for an unknown name (listing the known ones) before building.");

  m.def(
      "policy_names",
      []() {
        const gs::policy_names n;
        const auto list = [](const std::vector<std::string_view>& v) {
          std::vector<std::string> out(v.begin(), v.end());
          return out;
        };
        py::dict d;
        d["ordering"] = list(n.ordering);
        d["admission"] = list(n.admission);
        d["packing"] = list(n.packing);
        d["placement"] = list(n.placement);
        d["preemption"] = list(n.preemption);
        return d;
      },
      "The built-in policy names of each family, in registry order.");
}

}  // namespace gpusched_python
