// SPDX-License-Identifier: Apache-2.0
// Policies written in Python: ordering, packing and preemption callables as library policies
// (models of the family concepts, held by the any_* wrappers or registered in a
// policy_registry). Each call takes the GIL; a Python exception becomes `policy_failure`
// naming the policy and the job, raised to the caller as gpusched.PolicyError.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <gpusched/core/random.hpp>
#include <gpusched/pipeline/any_policy.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/policy/packing/first_fit.hpp>

#include "common.hpp"

namespace gpusched_python {
namespace {

/// A Python object shared by copies of a policy: copying never touches reference counts (so a
/// copy needs no GIL), and the last owner drops the reference under the GIL.
using shared_object = std::shared_ptr<py::object>;
shared_object share(py::object o) {
  return shared_object(new py::object(std::move(o)), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
}

/// The context a Python policy sees, valid during the call only (later use raises).
struct py_context {
  const gs::schedule_context* c = nullptr;
  [[nodiscard]] const gs::schedule_context& get() const {
    if (c == nullptr) {
      throw py::value_error("gpusched.Context is valid only during the policy call");
    }
    return *c;
  }
};
/// The fit probe a Python preemption policy sees, valid during the call only.
struct py_probe {
  const gs::fit_probe* p = nullptr;
};

/// Invalidates a context (and probe) when the call returns or raises.
template <class T>
struct invalidate_on_exit {
  T* x;
  ~invalidate_on_exit() { x->c = nullptr; }
};

[[noreturn]] void raise_value_error(const std::string& what) {
  PyErr_SetString(PyExc_ValueError, what.c_str());
  throw py::error_already_set();
}

std::string jobs_text(std::span<const gs::job_spec*> jobs) {
  std::string s = std::to_string(jobs.size()) + " pending job" + (jobs.size() == 1 ? "" : "s");
  if (jobs.empty()) return s;
  s += " (";
  for (std::size_t i = 0; i < jobs.size() && i < 5; ++i) s += (i ? ", " : "") + job_text(*jobs[i]);
  if (jobs.size() > 5) s += ", ...";
  return s + ")";
}

/// Runs `body` (which calls Python) and turns a Python error into `policy_failure` with
/// `what()` describing the call.
template <class Body, class What>
auto guarded(Body&& body, What&& what) {
  try {
    return body();
  } catch (py::error_already_set& e) {
    std::string message = what() + ": " + e.what();  // before `e` is moved from
    throw policy_failure(std::move(message), std::move(e));
  } catch (const py::builtin_exception& e) {  // e.g. a return value pybind11 could not cast
    e.set_error();
    py::error_already_set err;
    std::string message = what() + ": " + err.what();
    throw policy_failure(std::move(message), std::move(err));
  }
}

struct python_ordering {
  using policy_category = gs::ordering_tag;
  shared_object fn;
  std::string label;
  [[nodiscard]] std::string_view name() const { return label; }
  void order(const gs::schedule_context& c, std::span<const gs::job_spec*> jobs) {
    py::gil_scoped_acquire gil;
    guarded(
        [&] {
          py::list pending(jobs.size());
          for (std::size_t i = 0; i < jobs.size(); ++i) {
            pending[i] = py::cast(*jobs[i], py::return_value_policy::copy);
          }
          py::object ctx = py::cast(py_context{&c});
          invalidate_on_exit<py_context> guard{&ctx.cast<py_context&>()};
          py::object result = (*fn)(ctx, pending);
          std::unordered_map<std::uint32_t, const gs::job_spec*> left;
          left.reserve(jobs.size());
          for (const auto* j : jobs) left.emplace(j->id.value(), j);
          std::vector<const gs::job_spec*> out;
          out.reserve(jobs.size());
          for (py::handle item : result) {
            const std::uint32_t id = py::isinstance<gs::job_spec>(item)
                                         ? item.cast<const gs::job_spec&>().id.value()
                                         : item.cast<std::uint32_t>();
            const auto it = left.find(id);
            if (it == left.end()) {
              raise_value_error("the order names job " + std::to_string(id) +
                                ", which is not pending or is named twice");
            }
            out.push_back(it->second);
            left.erase(it);
          }
          if (!left.empty()) {
            raise_value_error("the order leaves out job " + std::to_string(left.begin()->first) +
                              " (it must be a permutation of the pending jobs or their ids)");
          }
          std::copy(out.begin(), out.end(), jobs.begin());
        },
        [&] { return "ordering policy '" + label + "' raised while ordering " + jobs_text(jobs); });
  }
};

struct python_packing {
  using policy_category = gs::packing_tag;
  shared_object fn;
  std::string label;
  std::shared_ptr<current_job> cur;
  gs::first_fit_packing gpus{};
  [[nodiscard]] std::string_view name() const { return label; }
  /// The GPUs on a given node: first fit.
  [[nodiscard]] std::optional<gs::task_allocation> fit(const gs::schedule_context& c,
                                                       gs::node_index n,
                                                       const gs::task_request& r) const {
    return gpus.fit(c, n, r);
  }
  /// The node, and optionally the GPUs: the Python callable chooses among the nodes where the
  /// task fits. It returns a node index (the GPUs on it are then chosen first fit), a tuple
  /// `(node, [gpu, ...])` of local GPU indices on that node (whole-GPU and share demands: as
  /// many GPUs as the demand asks, each free enough), or None (the task does not fit).
  [[nodiscard]] std::optional<gs::task_allocation> pack(const gs::schedule_context& c,
                                                        const gs::task_request& r) const {
    std::vector<std::uint32_t> candidates;
    for (std::uint32_t n = 0; n < c.state().node_count(); ++n) {
      if (gpus.fit(c, gs::node_index{n}, r)) candidates.push_back(n);
    }
    if (candidates.empty()) return std::nullopt;
    py::gil_scoped_acquire gil;
    return guarded(
        [&]() -> std::optional<gs::task_allocation> {
          py::object ctx = py::cast(py_context{&c});
          invalidate_on_exit<py_context> guard{&ctx.cast<py_context&>()};
          py::object result = (*fn)(ctx, r, candidates);
          if (result.is_none()) return std::nullopt;
          std::optional<std::vector<std::uint32_t>> chosen_gpus;
          py::object node = result;
          if (py::isinstance<py::tuple>(result)) {
            const auto t = result.cast<py::tuple>();
            if (t.size() != 2) {
              raise_value_error("returned a tuple of " + std::to_string(t.size()) +
                                " items (expected a node or (node, [gpu, ...]))");
            }
            node = t[0];
            chosen_gpus = t[1].cast<std::vector<std::uint32_t>>();
          }
          const auto n = node.cast<std::uint32_t>();
          if (std::find(candidates.begin(), candidates.end(), n) == candidates.end()) {
            raise_value_error("returned node " + std::to_string(n) +
                              ", which is not one of the candidates");
          }
          auto a = gpus.fit(c, gs::node_index{n}, r);
          if (a && chosen_gpus) choose_gpus(c, r, *a, *chosen_gpus);
          return a;
        },
        [&] {
          return "packing policy '" + label + "' raised while packing a task of " +
                 (cur && cur->job ? job_text(*cur->job) : std::string("a job"));
        });
  }

 private:
  /// Replaces first fit's GPUs on `a.node` by the caller's `local` indices, after checking
  /// that they are distinct, on the node, as many as the demand asks and each free enough.
  static void choose_gpus(const gs::schedule_context& c, const gs::task_request& r,
                          gs::task_allocation& a, const std::vector<std::uint32_t>& local) {
    const auto& s = c.state();
    const auto node_gpus = s.gpus(a.node);
    const auto first = s.first_gpu(a.node).value();
    std::size_t want = 0;
    if (r.gpu.kind == gs::gpu_demand_kind::whole) {
      want = static_cast<std::size_t>(r.gpu.count.value());
    } else if (r.gpu.kind == gs::gpu_demand_kind::share) {
      want = 1;
    } else {
      raise_value_error(
          "returned GPUs for a demand that is not whole GPUs or a share (return the node only "
          "for MIG, replica and CPU-only tasks)");
    }
    if (local.size() != want) {
      raise_value_error("returned " + std::to_string(local.size()) + " GPU(s); the task needs " +
                        std::to_string(want));
    }
    decltype(a.gpus) grants;
    for (std::size_t k = 0; k < local.size(); ++k) {
      const auto g = local[k];
      if (g >= node_gpus.size()) {
        raise_value_error("returned GPU " + std::to_string(g) + ", but the node has " +
                          std::to_string(node_gpus.size()) + " GPUs");
      }
      if (std::find(local.begin(), local.begin() + static_cast<std::ptrdiff_t>(k), g) !=
          local.begin() + static_cast<std::ptrdiff_t>(k)) {
        raise_value_error("returned GPU " + std::to_string(g) + " twice");
      }
      const auto& st = node_gpus[g];
      const bool whole = r.gpu.kind == gs::gpu_demand_kind::whole;
      const bool ok = whole ? st.whole_free() : (!st.mig_enabled && st.free >= r.gpu.share);
      if (!ok) {
        raise_value_error("returned GPU " + std::to_string(g) + ", which is not free enough (" +
                          std::to_string(st.free.value()) + " milli free)");
      }
      grants.push_back({gs::gpu_index{static_cast<gs::gpu_index::rep>(first + g)},
                        whole ? gs::whole_gpu_milli : r.gpu.share, 0, false});
    }
    a.gpus = grants;
  }
};

struct python_preemption {
  using policy_category = gs::preemption_tag;
  shared_object fn;
  std::string label;
  [[nodiscard]] std::string_view name() const { return label; }
  gs::preemption_plan select(const gs::schedule_context& c, const gs::job_spec& j,
                             gs::fit_probe probe) {
    py::gil_scoped_acquire gil;
    return guarded(
        [&] {
          py::object ctx = py::cast(py_context{&c});
          invalidate_on_exit<py_context> guard{&ctx.cast<py_context&>()};
          py::object pr = py::cast(py_probe{&probe});
          struct reset {
            py_probe* p;
            ~reset() { p->p = nullptr; }
          } reset_probe{&pr.cast<py_probe&>()};
          py::object result = (*fn)(ctx, py::cast(j, py::return_value_policy::copy), pr);
          gs::preemption_plan plan;
          if (!result.is_none()) {
            for (py::handle item : result)
              plan.victims.push_back(gs::job_id{item.cast<std::uint32_t>()});
          }
          for (const auto v : plan.victims) {
            if (!c.book().is_running(v)) {
              raise_value_error("victim " + std::to_string(v.value()) + " is not running");
            }
          }
          if (plan.victims.empty()) plan.why = gs::reason::no_victims();
          return plan;
        },
        [&] {
          return "preemption policy '" + label + "' raised while choosing victims for " +
                 job_text(j);
        });
  }
};

struct tracking_placement {
  using policy_category = gs::placement_tag;
  gs::any_placement_policy inner;
  std::shared_ptr<current_job> cur;
  [[nodiscard]] std::string_view name() const { return inner.name(); }
  gs::placement_outcome place(const gs::schedule_context& c, const gs::job_spec& j,
                              gs::packing_ref pk, gs::ledger::transaction& tx) {
    cur->job = &j;
    struct reset {
      current_job* x;
      ~reset() { x->job = nullptr; }
    } r{cur.get()};
    return inner.place(c, j, pk, tx);
  }
};

static_assert(gs::ordering_policy<python_ordering>);
static_assert(gs::packing_policy<python_packing>);
static_assert(gs::preemption_policy<python_preemption>);
static_assert(gs::placement_policy<tracking_placement>);

}  // namespace

gs::any_ordering_policy make_python_ordering(py::object fn, std::string name) {
  return python_ordering{share(std::move(fn)), std::move(name)};
}
gs::any_packing_policy make_python_packing(py::object fn, std::string name,
                                           std::shared_ptr<current_job> cur) {
  return python_packing{share(std::move(fn)), std::move(name), std::move(cur)};
}
gs::any_preemption_policy make_python_preemption(py::object fn, std::string name) {
  return python_preemption{share(std::move(fn)), std::move(name)};
}
gs::any_placement_policy track_placement(gs::any_placement_policy inner,
                                         std::shared_ptr<current_job> cur) {
  return tracking_placement{std::move(inner), std::move(cur)};
}

void add_python_policy(gs::policy_registry& registry, const std::string& family,
                       const std::string& name, py::object fn) {
  auto f = share(std::move(fn));
  if (family == "ordering") {
    registry.add(name, "written in Python",
                 [f, name](const gs::policy_inputs&) { return python_ordering{f, name}; });
  } else if (family == "packing") {
    registry.add(name, "written in Python", [f, name](const gs::policy_inputs&) {
      return python_packing{f, name, std::make_shared<current_job>()};
    });
  } else if (family == "preemption") {
    registry.add(name, "written in Python",
                 [f, name](const gs::policy_inputs&) { return python_preemption{f, name}; });
  } else {
    throw gs::invalid_value_error(gs::error_id::invalid_value, "python policy '" + name + "'",
                                  "family", "'" + family + "'",
                                  "Python policies are ordering, packing or preemption");
  }
}

void init_policies(py::module_& m) {
  py::class_<py_context>(
      m, "Context",
      "What a policy written in Python sees of the cycle (valid during the call only).")
      .def_property_readonly(
          "now_s", [](const py_context& x) { return gs::to_seconds(x.get().now()); },
          "The cycle's time (s).")
      .def_property_readonly(
          "node_count", [](const py_context& x) { return x.get().state().node_count(); },
          "Nodes in the cluster (node indices are 0..node_count-1).")
      .def(
          "node_name",
          [](const py_context& x, std::uint32_t n) {
            if (n >= x.get().state().node_count()) throw py::index_error("no such node");
            return x.get().state().name(gs::node_index{n});
          },
          py::arg("node"), "The name of node index `node`.")
      .def(
          "free_gpus",
          [](const py_context& x, std::optional<std::uint32_t> n) -> std::int64_t {
            const auto& s = x.get().state();
            if (!n) return s.total_free_whole_gpus();
            if (*n >= s.node_count()) throw py::index_error("no such node");
            return s.free_whole_gpus(gs::node_index{*n});
          },
          py::arg("node") = py::none(),
          "Whole GPUs free on node index `node` (in the cluster when None).")
      .def(
          "free_cpu_millis",
          [](const py_context& x, std::uint32_t n) {
            const auto& s = x.get().state();
            if (n >= s.node_count()) throw py::index_error("no such node");
            return s.cpu_free(gs::node_index{n}).value();
          },
          py::arg("node"), "Unallocated CPU (millicores) on node index `node`.")
      .def(
          "gpu_free_milli",
          [](const py_context& x, std::uint32_t n) {
            const auto& s = x.get().state();
            if (n >= s.node_count()) throw py::index_error("no such node");
            std::vector<std::int64_t> out;
            for (const auto& g : s.gpus(gs::node_index{n})) {
              out.push_back(g.mig_enabled ? 0 : static_cast<std::int64_t>(g.free.value()));
            }
            return out;
          },
          py::arg("node"),
          "Free milli-GPU of each GPU of node index `node`, by local GPU index (1000 = wholly "
          "free; a MIG-enabled GPU counts 0 here).")
      .def(
          "node_gpus",
          [](const py_context& x, std::uint32_t n) {
            const auto& s = x.get().state();
            if (n >= s.node_count()) throw py::index_error("no such node");
            return s.gpus(gs::node_index{n}).size();
          },
          py::arg("node"), "GPUs of node index `node`.")
      .def_property_readonly(
          "total_gpus", [](const py_context& x) { return x.get().state().total_gpus(); },
          "GPUs in service in the cluster.")
      .def(
          "running",
          [](const py_context& x) {
            const auto r = x.get().book().running();
            return std::vector<gs::running_job>(r.begin(), r.end());
          },
          "The running jobs (copies), with their allocations.")
      .def(
          "uniform_index",
          [](const py_context& x, std::uint64_t n) {
            if (n == 0) throw py::value_error("uniform_index(0)");
            return gs::uniform_index(x.get().rng(), n);
          },
          py::arg("n"),
          "A uniform draw in [0, n) from the cycle's seeded engine (keeps runs deterministic).");
  py::class_<py_probe>(m, "FitProbe",
                       "Tests a victim set for a preemption policy written in Python (valid "
                       "during the call only).")
      .def(
          "__call__",
          [](const py_probe& p, const std::vector<std::uint32_t>& victims) {
            if (p.p == nullptr)
              throw py::value_error("the fit probe is valid only during the call");
            std::vector<gs::job_id> v;
            v.reserve(victims.size());
            for (auto id : victims) v.push_back(gs::job_id{id});
            return (*p.p)(std::span<const gs::job_id>(v));
          },
          py::arg("victims"),
          "True when evicting exactly these running jobs (ids) lets the preemptor be placed.");
}

}  // namespace gpusched_python
