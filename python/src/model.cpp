// SPDX-License-Identifier: Apache-2.0
// Cluster and job values built with keyword arguments, the GPU catalogs, the topology
// builders and the `nvidia-smi topo -m` parser.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <gpusched/cluster/cluster.hpp>
#include <gpusched/resource/gpu_model.hpp>
#include <gpusched/resource/mig_catalog.hpp>
#include <gpusched/topology/fabric.hpp>
#include <gpusched/topology/node_topology.hpp>
#include <gpusched/topology/topo_text.hpp>
#include <gpusched/workload/job.hpp>

#include "common.hpp"

namespace gpusched_python {
namespace {

gs::gpu_catalog catalog_named(const std::string& name) {
  if (name == "basic") return gs::basic_catalog();
  if (name == "mig") return gs::mig_catalog();
  throw gs::invalid_value_error(gs::error_id::unknown_name, "catalog", "catalog", "'" + name + "'",
                                "unknown catalog (known: basic, mig)");
}

std::int64_t milli_of(double x, const char* what, const char* field) {
  if (!std::isfinite(x) || x < 0) {
    throw gs::invalid_value_error(gs::error_id::invalid_value, what, field, std::to_string(x),
                                  "must be a finite non-negative number");
  }
  return static_cast<std::int64_t>(std::llround(x * 1000.0));
}
std::int64_t mib_of(double gib, const char* what, const char* field) {
  if (!std::isfinite(gib) || gib < 0) {
    throw gs::invalid_value_error(gs::error_id::invalid_value, what, field, std::to_string(gib),
                                  "must be a finite non-negative number");
  }
  return static_cast<std::int64_t>(std::llround(gib * 1024.0));
}

gs::gpu_sharing sharing_named(const std::string& s) {
  if (s == "exclusive") return gs::gpu_sharing::exclusive;
  if (s == "time-slicing") return gs::gpu_sharing::time_slicing;
  if (s == "mps") return gs::gpu_sharing::mps;
  throw gs::invalid_value_error(gs::error_id::unknown_name, "node", "sharing", "'" + s + "'",
                                "unknown sharing mode (known: exclusive, time-slicing, mps)");
}

/// A count as an int, whether the field is a plain integer or a strong count type.
template <class T>
int count_value(const T& x) {
  if constexpr (std::is_arithmetic_v<T>) {
    return static_cast<int>(x);
  } else {
    return static_cast<int>(x.value());
  }
}

std::string demand_kind(const gs::gpu_demand& d) {
  return d.visit([](gs::demand_none) { return std::string("none"); },
                 [](gs::demand_whole) { return std::string("whole"); },
                 [](gs::demand_share) { return std::string("share"); },
                 [](gs::demand_mig) { return std::string("mig"); },
                 [](gs::demand_replica) { return std::string("replica"); });
}

std::string request_repr(const gs::task_request& r) {
  std::string s = "Request(";
  s += r.gpu.visit(
      [](gs::demand_none) { return std::string("gpus=0"); },
      [](gs::demand_whole w) { return "gpus=" + std::to_string(w.count.value()); },
      [](gs::demand_share x) { return "share=" + std::to_string(x.share.value()) + "m"; },
      [](gs::demand_mig x) {
        return "mig=(" + std::to_string(x.compute) + ", " + std::to_string(x.memory) + ")";
      },
      [](gs::demand_replica) { return std::string("replica=True"); });
  s += ", cpu_millis=" + std::to_string(r.cpu.value()) +
       ", memory_mib=" + std::to_string(r.memory.value()) + ")";
  return s;
}

}  // namespace

void init_model(py::module_& m) {
  // ---- catalogs --------------------------------------------------------------------------
  py::class_<gs::mig_profile>(m, "MigProfile", "One MIG GPU-instance profile of a GPU model.")
      .def_readonly("name", &gs::mig_profile::name, "Per-model name, e.g. '3g.20gb'.")
      .def_property_readonly(
          "compute_slices", [](const gs::mig_profile& p) { return int{p.compute_slices}; },
          "Compute slices (the Ng prefix).")
      .def_property_readonly(
          "memory_slices", [](const gs::mig_profile& p) { return int{p.memory_slices}; },
          "Memory slices one instance occupies.")
      .def_property_readonly(
          "max_instances", [](const gs::mig_profile& p) { return int{p.max_instances}; },
          "Most instances of this profile on one GPU.")
      .def_readonly("media_extension", &gs::mig_profile::media_extension, "A '+me' profile.")
      .def_property_readonly(
          "memory_mib", [](const gs::mig_profile& p) { return p.memory.value(); },
          "Device memory of one instance (MiB).")
      .def_readonly("inferred", &gs::mig_profile::inferred,
                    "True when the row is inferred, not read from hardware.")
      .def("__repr__", [](const gs::mig_profile& p) {
        return "MigProfile('" + p.name + "', compute_slices=" + std::to_string(p.compute_slices) +
               ", memory_slices=" + std::to_string(p.memory_slices) + ")";
      });
  py::class_<gs::gpu_model>(m, "GpuModel", "A GPU model of a catalog.")
      .def_readonly("name", &gs::gpu_model::name, "Catalog name, e.g. 'A100-SXM4-40GB'.")
      .def_property_readonly(
          "memory_mib", [](const gs::gpu_model& g) { return g.memory.value(); },
          "Device memory (MiB).")
      .def_readonly("sm_count", &gs::gpu_model::sm_count, "Streaming multiprocessors.")
      .def_property_readonly("supports_mig", &gs::gpu_model::supports_mig, "Has a MIG table.")
      .def_property_readonly(
          "mig_profiles", [](const gs::gpu_model& g) { return g.mig.profiles; },
          "The MIG profiles (empty without MIG).")
      .def("__repr__", [](const gs::gpu_model& g) { return "GpuModel('" + g.name + "')"; });
  m.def(
      "gpu_models",
      [](const std::string& catalog) {
        const auto c = catalog_named(catalog);
        return std::vector<gs::gpu_model>(c.models().begin(), c.models().end());
      },
      py::kw_only(), py::arg("catalog") = "basic",
      "The GPU models of a catalog: 'basic' (common models; the A100-SXM4-40GB has its MIG "
      "table) or 'mig' (every MIG-capable model with its full MIG table).");
  m.def(
      "mig_profiles",
      [](const std::string& model) {
        for (const auto& c : {gs::mig_catalog(), gs::basic_catalog()}) {
          if (const auto id = c.find(model)) return c[*id].mig.profiles;
        }
        (void)gs::mig_catalog().id(model, "mig_profiles", "model");  // throws, listing names
        return std::vector<gs::mig_profile>{};
      },
      py::arg("model"),
      "The MIG profiles of GPU model `model` (from the 'mig' catalog, else the 'basic' one; "
      "empty for a model without MIG). Raises InvalidValueError for an unknown model.");

  // ---- requests, groups, jobs -------------------------------------------------------------
  py::class_<gs::task_request>(m, "Request",
                               "What one task needs from one node (build it with request()).")
      .def_property_readonly(
          "kind", [](const gs::task_request& r) { return demand_kind(r.gpu); },
          "GPU demand kind: 'none', 'whole', 'share', 'mig' or 'replica'.")
      .def_property_readonly(
          "gpus", [](const gs::task_request& r) { return r.gpu.whole_gpus().value(); },
          "Whole GPUs (0 unless kind is 'whole').")
      .def_property_readonly(
          "share_milli", [](const gs::task_request& r) { return r.gpu.share.value(); },
          "Thousandths of one GPU (kind 'share').")
      .def_property_readonly(
          "mig",
          [](const gs::task_request& r) -> std::optional<std::pair<int, int>> {
            if (r.gpu.kind != gs::gpu_demand_kind::mig) return std::nullopt;
            return std::pair<int, int>{r.gpu.mig_compute, r.gpu.mig_memory};
          },
          "(compute slices, memory slices) of a MIG demand, else None.")
      .def_property_readonly(
          "cpu_millis", [](const gs::task_request& r) { return r.cpu.value(); }, "CPU millicores.")
      .def_property_readonly(
          "memory_mib", [](const gs::task_request& r) { return r.memory.value(); },
          "Host memory (MiB).")
      .def("__eq__", [](const gs::task_request& a, const gs::task_request& b) { return a == b; })
      .def("__repr__", &request_repr);
  m.def(
      "request",
      [](std::int32_t gpus, std::optional<double> share, std::optional<py::object> mig,
         bool replica, double gpu_memory_gib, double cores, double memory_gib) {
        gs::task_request r;
        int kinds = (gpus != 0 ? 1 : 0) + (share ? 1 : 0) + (mig ? 1 : 0) + (replica ? 1 : 0);
        if (kinds > 1) {
          throw gs::invalid_value_error(gs::error_id::inconsistent, "request", "gpu", "",
                                        "give at most one of gpus, share, mig, replica");
        }
        if (gpus != 0) {
          r.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus});
        } else if (share) {
          if (!std::isfinite(*share) || *share <= 0 || *share > 1) {
            throw gs::invalid_value_error(gs::error_id::invalid_value, "request", "share",
                                          std::to_string(*share),
                                          "a fraction of one GPU in (0, 1]");
          }
          r.gpu = gs::gpu_demand::fraction(
              gs::milli_gpu{static_cast<std::int32_t>(std::llround(*share * 1000))});
        } else if (mig) {
          int c = 0, mem = 0;
          if (py::isinstance<gs::mig_profile>(*mig)) {
            const auto& p = mig->cast<const gs::mig_profile&>();
            c = p.compute_slices;
            mem = p.memory_slices;
          } else {
            const auto t = mig->cast<std::pair<int, int>>();
            c = t.first;
            mem = t.second;
          }
          if (c < 1 || c > 8 || mem < 1 || mem > 8) {
            throw gs::invalid_value_error(
                gs::error_id::invalid_value, "request", "mig",
                "(" + std::to_string(c) + ", " + std::to_string(mem) + ")",
                "compute and memory slices in 1..8");
          }
          r.gpu = gs::gpu_demand::mig(static_cast<std::uint8_t>(c), static_cast<std::uint8_t>(mem));
        } else if (replica) {
          r.gpu = gs::gpu_demand::replica(
              gs::memory_mib{mib_of(gpu_memory_gib, "request", "gpu_memory_gib")});
        }
        r.cpu = gs::cpu_millis{milli_of(cores, "request", "cores")};
        r.memory = gs::memory_mib{mib_of(memory_gib, "request", "memory_gib")};
        return r;
      },
      py::kw_only(), py::arg("gpus") = 0, py::arg("share") = py::none(),
      py::arg("mig") = py::none(), py::arg("replica") = false, py::arg("gpu_memory_gib") = 0.0,
      py::arg("cores") = 0.0, py::arg("memory_gib") = 0.0,
      "A task request: at most one GPU demand (gpus=N whole GPUs, share=F of one GPU in (0, 1], "
      "mig=(compute, memory) slices or a MigProfile, replica=True one replica of a shared GPU "
      "with gpu_memory_gib), plus cores and memory_gib of the node. The values are checked when "
      "a job holding the request is built.");

  py::class_<gs::task_group>(m, "Group", "count tasks with the same request (see group()).")
      .def_readonly("name", &gs::task_group::name, "The group's name, unique in its job.")
      .def_readonly("request", &gs::task_group::request,
                    "What each task of the group needs (a Request).")
      .def_readonly("count", &gs::task_group::count, "Tasks wanted (the maximum if elastic).")
      .def_property_readonly(
          "minimum", [](const gs::task_group& g) { return g.minimum(); },
          "Fewest tasks it runs with.")
      .def_property_readonly(
          "elastic", [](const gs::task_group& g) { return g.elastic(); },
          "True when the group can run with fewer than count tasks.")
      .def("__repr__", [](const gs::task_group& g) {
        return "Group('" + g.name + "', " + request_repr(g.request) +
               ", count=" + std::to_string(g.count) + ", minimum=" + std::to_string(g.minimum()) +
               ")";
      });
  m.def(
      "group",
      [](std::string name, std::optional<gs::task_request> request, std::int32_t count,
         std::optional<std::int32_t> min_count, std::int32_t gpus, double cores,
         double memory_gib) {
        gs::task_group g;
        g.name = std::move(name);
        if (request) {
          g.request = *request;
        } else {
          if (gpus != 0) g.request.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus});
          g.request.cpu = gs::cpu_millis{milli_of(cores, "group", "cores")};
          g.request.memory = gs::memory_mib{mib_of(memory_gib, "group", "memory_gib")};
        }
        g.count = count;
        g.min_count = min_count_value(min_count);
        return g;
      },
      py::kw_only(), py::arg("name") = "worker", py::arg("request") = py::none(),
      py::arg("count") = 1, py::arg("min_count") = py::none(), py::arg("gpus") = 0,
      py::arg("cores") = 0.0, py::arg("memory_gib") = 0.0,
      "A task group: `count` tasks of `request` (or, without a request, of gpus/cores/"
      "memory_gib); elastic between `min_count` and `count` when min_count is given.");

  py::class_<gs::job_spec>(m, "Job", "A job: an all-or-nothing gang of task groups (see job()).")
      .def_property_readonly(
          "id", [](const gs::job_spec& j) { return j.id.value(); },
          "The job's id (unique among pending and running jobs).")
      .def_readonly("name", &gs::job_spec::name, "The job's name (for messages).")
      .def_property_readonly(
          "tenant", [](const gs::job_spec& j) { return j.tenant.value(); },
          "The tenant (team, user, virtual cluster) id.")
      .def_readonly("priority", &gs::job_spec::priority, "Larger is more important.")
      .def_property_readonly(
          "submit_s", [](const gs::job_spec& j) { return gs::to_seconds(j.submit); },
          "Submit time (s).")
      .def_property_readonly(
          "estimate_s",
          [](const gs::job_spec& j) -> std::optional<double> {
            if (!j.expected_duration) return std::nullopt;
            return gs::to_seconds(*j.expected_duration);
          },
          "Expected duration (s), or None.")
      .def_readonly("preemptible", &gs::job_spec::preemptible, "Whether preemption may evict it.")
      .def_readonly("groups", &gs::job_spec::groups, "The task groups (Group).")
      .def_property_readonly(
          "gpus", [](const gs::job_spec& j) { return j.whole_gpus().value(); },
          "Whole GPUs at full size.")
      .def_property_readonly("milli_gpus", &gs::job_spec::milli_gpus,
                             "Milli-GPU at full size (whole GPUs count 1000).")
      .def_property_readonly("task_count", &gs::job_spec::task_count, "Tasks at full size.")
      .def("__repr__", [](const gs::job_spec& j) {
        return "Job(" + std::to_string(j.id.value()) + ", '" + j.name +
               "', tenant=" + std::to_string(j.tenant.value()) +
               ", gpus=" + std::to_string(j.whole_gpus().value()) + ")";
      });
  m.def(
      "job",
      [](std::uint32_t id, std::vector<gs::task_group> groups, std::string name,
         std::uint32_t tenant, std::int32_t priority, double submit_s,
         std::optional<double> estimate_s, double checkpoint_interval_s,
         std::optional<double> last_checkpoint_s, double checkpoint_cost_s, double restore_cost_s,
         bool preemptible, const std::string& catalog) {
        gs::job_spec j;
        j.id = gs::job_id{id};
        j.name = std::move(name);
        j.tenant = gs::tenant_id{tenant};
        j.priority = priority;
        j.submit = time_from_seconds(submit_s);
        if (estimate_s) j.expected_duration = duration_from_seconds(*estimate_s);
        j.checkpoint.interval = duration_from_seconds(checkpoint_interval_s);
        if (last_checkpoint_s) j.checkpoint.last = time_from_seconds(*last_checkpoint_s);
        j.checkpoint.checkpoint_cost = duration_from_seconds(checkpoint_cost_s);
        j.checkpoint.restore_cost = duration_from_seconds(restore_cost_s);
        j.preemptible = preemptible;
        j.groups = std::move(groups);
        gs::validate(j, catalog_named(catalog));
        return j;
      },
      py::kw_only(), py::arg("id"), py::arg("groups"), py::arg("name") = "", py::arg("tenant") = 0,
      py::arg("priority") = 0, py::arg("submit_s") = 0.0, py::arg("estimate_s") = py::none(),
      py::arg("checkpoint_interval_s") = 0.0, py::arg("last_checkpoint_s") = py::none(),
      py::arg("checkpoint_cost_s") = 0.0, py::arg("restore_cost_s") = 0.0,
      py::arg("preemptible") = true, py::arg("catalog") = "basic",
      "A job (times in seconds). Checked against the catalog ('basic' or 'mig'): a bad value "
      "raises InvalidValueError naming the job, the group and the field.");

  // ---- nodes and clusters -----------------------------------------------------------------
  py::class_<gs::node_spec>(m, "Node", "A node description (see node()).")
      .def_property_readonly(
          "id", [](const gs::node_spec& n) { return n.id.value(); },
          "The node's id (0: assigned by cluster()).")
      .def_readonly("name", &gs::node_spec::name, "The node's name.")
      .def_readonly("model", &gs::node_spec::gpu_model,
                    "The GPU model's catalog name ('' without GPUs).")
      .def_property_readonly(
          "gpus", [](const gs::node_spec& n) { return count_value(n.gpus); }, "GPUs of the node.")
      .def_readonly("mig", &gs::node_spec::mig_enabled, "Whether its GPUs are in MIG mode.")
      .def_property_readonly(
          "cpu_millis", [](const gs::node_spec& n) { return n.cpu.value(); },
          "CPU capacity (millicores).")
      .def_property_readonly(
          "memory_mib", [](const gs::node_spec& n) { return n.memory.value(); },
          "Memory capacity (MiB).")
      .def_readonly("topology", &gs::node_spec::topology,
                    "Handle of its node type in a TopologyModel (0: none).")
      .def("__repr__", [](const gs::node_spec& n) {
        return "Node('" + n.name + "', model='" + n.gpu_model +
               "', gpus=" + std::to_string(count_value(n.gpus)) + ")";
      });
  m.def(
      "node",
      [](std::string name, std::string model, int gpus, double cores, double memory_gib,
         std::uint32_t id, bool mig, const std::string& sharing, int replicas,
         std::vector<std::pair<std::string, std::string>> labels, std::uint32_t topology) {
        gs::node_spec n;
        n.id = gs::node_id{id};
        n.name = std::move(name);
        n.gpu_model = std::move(model);
        n.gpus = decltype(gs::node_spec::gpus){gpus};
        n.mig_enabled = mig;
        n.cpu = gs::cpu_millis{milli_of(cores, "node", "cores")};
        n.memory = gs::memory_mib{mib_of(memory_gib, "node", "memory_gib")};
        n.labels = std::move(labels);
        n.topology = topology;
        n.sharing = sharing_named(sharing);
        n.replicas = replicas;
        return n;
      },
      py::kw_only(), py::arg("name"), py::arg("model") = "", py::arg("gpus") = 0,
      py::arg("cores") = 0.0, py::arg("memory_gib") = 0.0, py::arg("id") = 0,
      py::arg("mig") = false, py::arg("sharing") = "exclusive", py::arg("replicas") = 0,
      py::arg("labels") = std::vector<std::pair<std::string, std::string>>{},
      py::arg("topology") = 0,
      "A node: `gpus` GPUs of catalog model `model`, `cores` CPU cores, `memory_gib` memory; "
      "mig=True puts its GPUs in MIG mode; sharing 'time-slicing' or 'mps' advertises each GPU "
      "as `replicas` replicas; `topology` is a handle from TopologyModel.add_node_type. id 0 "
      "means 'position in the cluster + 1'. The values are checked by cluster().");

  py::class_<gs::cluster>(m, "Cluster", "The cluster's nodes and GPUs (see cluster()).")
      .def_property_readonly("node_count", &gs::cluster::node_count, "Nodes in the cluster.")
      .def_property_readonly("gpu_count", &gs::cluster::gpu_count, "GPUs in the cluster.")
      .def_property_readonly("total_gpus", &gs::cluster::total_gpus, "GPUs in service.")
      .def_property_readonly("free_gpus", &gs::cluster::total_free_whole_gpus,
                             "Whole GPUs free in the cluster.")
      .def(
          "node_name",
          [](const gs::cluster& c, std::uint32_t i) {
            if (i >= c.node_count()) throw py::index_error("no node " + std::to_string(i));
            return c.name(gs::node_index{i});
          },
          py::arg("node"), "The name of node index `node`.")
      .def(
          "node_free_gpus",
          [](const gs::cluster& c, std::uint32_t i) {
            if (i >= c.node_count()) throw py::index_error("no node " + std::to_string(i));
            return c.free_whole_gpus(gs::node_index{i});
          },
          py::arg("node"), "Whole GPUs free on node index `node`.")
      .def(
          "node_free_cpu_millis",
          [](const gs::cluster& c, std::uint32_t i) {
            if (i >= c.node_count()) throw py::index_error("no node " + std::to_string(i));
            return c.cpu_free(gs::node_index{i}).value();
          },
          py::arg("node"), "Unallocated CPU (millicores) on node index `node`.")
      .def(
          "node_free_memory_mib",
          [](const gs::cluster& c, std::uint32_t i) {
            if (i >= c.node_count()) throw py::index_error("no node " + std::to_string(i));
            return c.memory_free(gs::node_index{i}).value();
          },
          py::arg("node"), "Unallocated memory (MiB) on node index `node`.")
      .def("__repr__", [](const gs::cluster& c) {
        return "Cluster(" + std::to_string(c.node_count()) + " nodes, " +
               std::to_string(c.gpu_count()) + " GPUs)";
      });
  m.def(
      "cluster",
      [](std::vector<gs::node_spec> nodes, const std::string& catalog) {
        for (std::size_t i = 0; i < nodes.size(); ++i) {
          if (nodes[i].id.value() == 0)
            nodes[i].id = gs::node_id{static_cast<std::uint32_t>(i + 1)};
        }
        return gs::cluster(catalog_named(catalog), nodes);
      },
      py::arg("nodes"), py::kw_only(), py::arg("catalog") = "basic",
      "A cluster of `nodes` over a GPU catalog ('basic' or 'mig'). Raises InvalidValueError "
      "naming the node and field for a bad value (unknown model, too many GPUs, ...).");

  // ---- topology ---------------------------------------------------------------------------
  py::class_<gs::node_topology>(m, "NodeTopology",
                                "The GPU interconnect of one node type (NVLink, NVSwitch, PCIe).")
      .def_property_readonly("name", &gs::node_topology::name, "The node type's name.")
      .def_property_readonly("gpu_count", &gs::node_topology::gpu_count, "GPUs of the node type.")
      .def("nvlinks", &gs::node_topology::nvlinks, py::arg("i"), py::arg("j"),
           "NVLinks between GPUs i and j (direct plus through NVSwitches).")
      .def("nvlink_bandwidth", &gs::node_topology::nvlink_bandwidth, py::arg("i"), py::arg("j"),
           "NVLink bandwidth between GPUs i and j (GB/s per direction; 0 without NVLink).")
      .def("__repr__", [](const gs::node_topology& t) {
        return "NodeTopology('" + t.name() + "', gpus=" + std::to_string(t.gpu_count()) + ")";
      });
  m.def("dgx1_v100", &gs::dgx1_v100, "DGX-1 with 8 V100 (hybrid cube-mesh NVLink).");
  m.def("dgx_a100", &gs::dgx_a100, "DGX A100 (8 A100, NVSwitch).");
  m.def("dgx_h100", &gs::dgx_h100, py::arg("name") = "DGX H100", "DGX H100 (8 H100, NVSwitch).");
  m.def("hgx", &gs::hgx, py::kw_only(), py::arg("gpus"), py::arg("switches"),
        py::arg("links_per_switch"), py::arg("nvlink_gbps"),
        py::arg("pcie_gbps") = gs::link_bandwidth::pcie5_x16,
        "An HGX board: `gpus` GPUs on `switches` NVSwitches.");
  m.def("pcie_dual_socket_8gpu", &gs::pcie_dual_socket_8gpu,
        "8 PCIe GPUs on two sockets, no NVLink.");
  m.def("gb200_tray", &gs::gb200_tray, "A GB200 compute tray (4 GPUs).");

  py::class_<gs::topo_matrix>(m, "TopoMatrix", "What parse_nvidia_smi_topo read.")
      .def_readonly("topology", &gs::topo_matrix::topology, "The parsed NodeTopology.")
      .def_readonly("nics", &gs::topo_matrix::nics, "NIC column names, in order.")
      .def_readonly("cpu_affinity", &gs::topo_matrix::cpu_affinity,
                    "CPU affinity per GPU ('' when absent).")
      .def_readonly("numa", &gs::topo_matrix::numa, "NUMA affinity per GPU (-1 when absent).");
  m.def(
      "parse_nvidia_smi_topo",
      [](const std::string& text, std::string name, std::string file, double nvlink_gbps,
         double pcie_gbps) {
        gs::topo_parse_options o;
        o.name = std::move(name);
        o.file = std::move(file);
        o.nvlink_gbps = nvlink_gbps;
        o.pcie_gbps = pcie_gbps;
        return gs::parse_topo_matrix(text, o);
      },
      py::arg("text"), py::kw_only(), py::arg("name") = "nvidia-smi topo -m",
      py::arg("file") = "<text>", py::arg("nvlink_gbps") = gs::link_bandwidth::nvlink2,
      py::arg("pcie_gbps") = gs::link_bandwidth::pcie3_x16,
      "Parses `nvidia-smi topo -m` output into a TopoMatrix. Raises ParseError naming the file, "
      "line and column of a malformed matrix.");

  py::class_<gs::fabric>(m, "Fabric", "The network between nodes (leaf/spine, rails, NVL72).")
      .def_property_readonly("node_count", &gs::fabric::node_count, "Nodes the fabric connects.")
      .def_property_readonly("level_count", &gs::fabric::level_count,
                             "Switch levels above the nodes.");
  m.def("fat_tree", &gs::fabric::fat_tree, py::arg("nodes"), py::arg("nodes_per_leaf"),
        py::kw_only(), py::arg("leaves_per_pod") = 0, py::arg("oversubscription") = 1.0,
        "A leaf/spine fat tree of `nodes` nodes, `nodes_per_leaf` per leaf.");
  m.def(
      "rail_optimized",
      [](std::size_t nodes, int nodes_per_su, int rails, int sus_per_spine_group) {
        return gs::fabric::rail_optimized(nodes, nodes_per_su, rails, sus_per_spine_group);
      },
      py::arg("nodes"), py::arg("nodes_per_su"), py::arg("rails"), py::kw_only(),
      py::arg("sus_per_spine_group") = 0, "A rail-optimised fabric.");
  m.def("nvl72_racks", &gs::fabric::nvl72_racks, py::arg("racks"), py::arg("racks_per_leaf"),
        "GB200 NVL72 racks (18 trays of 4 GPUs per NVLink domain).");

  py::class_<gs::topology_model, std::shared_ptr<gs::topology_model>>(
      m, "TopologyModel",
      "Node types and the fabric, for placement='topology' (pass it to pipeline(topology=)).")
      .def(py::init([](std::optional<gs::fabric> f) {
             return f ? std::make_shared<gs::topology_model>(std::move(*f))
                      : std::make_shared<gs::topology_model>();
           }),
           py::arg("fabric") = py::none())
      .def("add_node_type", &gs::topology_model::add_node_type, py::arg("topology"),
           "Adds a node type; returns its handle for node(topology=...).")
      .def("check", &gs::topology_model::check, py::arg("cluster"),
           "Raises InvalidValueError unless the model fits the cluster.");
}

}  // namespace gpusched_python
