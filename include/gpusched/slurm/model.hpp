// SPDX-License-Identifier: Apache-2.0
/// @file
/// From Slurm's JSON (`slurm::node_record`, `slurm::job_record`) to the library's model: a
/// `ledger` over the partition's nodes holding every job that runs (or was released and is
/// about to), the held jobs as pending `job_spec`s, and one `job_issue` per job whose request
/// the model cannot express (that job is left alone; the others are still scheduled).
///
/// Mapping (Slurm 22.05):
/// - Node: GRES `gpu:<type>:<n>` (or untyped `gpu:<n>`, model name `gpu`) -> `gpus` of GPU
///   model `<type>` (one catalog model per type seen; 80 GiB, no MIG); `cpus` -> cores; real
///   memory; active features and partitions as labels (`feature`, `partition`). A node that is
///   down, drained, draining, failing, future or not responding offers nothing (jobs already on
///   it keep their resources). Two GPU types on one node are reported in `node_issues` and the
///   node is left out.
/// - Job (held = `PENDING` with priority 0, reason `JobHeldUser` or `JobHeldAdmin`): one task
///   group of `node_count` tasks, one per node, each asking the per-node GPUs (`--gres` /
///   `--gpus-per-node`; `--gpus-per-task` x tasks per node; `--gpus` on one node), CPUs
///   (tasks per node x CPUs per task, else the job's CPUs over its nodes) and memory
///   (`--mem`, or `--mem-per-cpu` x CPUs); a typed request allows only that model. Tenant: the
///   account (with `/qos` when a QOS is set); priority: minus the nice value (held jobs have
///   Slurm priority 0); expected duration: the time limit; submit time; preemptible: `--requeue`.
/// - Running (and completing, and released-but-not-yet-started) jobs: placed in the ledger on
///   their nodes, on the GPU indices Slurm reports (`gres_detail` IDX), else the first free ones.
/// - Array tasks (arrays.hpp): each task is a job of its own, named `<array>_<task>` (see
///   `model::address`); `expand_arrays` first splits, in the model, the held record of an
///   array's unsplit tasks into one record per task.
/// - Dependencies (arrays.hpp): a held job whose `afterok`/`afterany`/`afternotok`/`after`
///   dependency is satisfied is scheduled; one that waits, or can never be satisfied, is left
///   held and reported (Slurm does not test a held job's dependency itself).
/// - Not expressible, reported as a `job_issue` naming job and field: heterogeneous jobs,
///   the record of an array's unsplit tasks (when `expand_arrays` did not split it), other
///   dependency kinds (`?`, `+minutes`, `aftercorr`, `singleton`), `--exclusive`, flexible
///   node counts (`-N 2-4`), required
///   (`-w`, on a job that never ran) or excluded (`-x`) nodes, constraints (`-C`), GPUs per
///   socket, `--gpus-per-task` with tasks not spread evenly, `--gpus` over several nodes, other
///   GRES than `gpu`, a GPU type no node of the partition has, more GPUs per node than any node.
/// - One task per node: Slurm's `-N k` means k distinct nodes, which the model's requests do not
///   say; each node gets `node_slot_memory` extra memory and each task of a multi-node job asks
///   three quarters of it (`node_slot_task`), so no node holds two tasks of multi-node jobs.
///   Known limits: two multi-node jobs never share a node (single-node jobs share freely), and
///   the memory of a multi-node job's tasks is not checked against the node's real memory
///   (Slurm checks it when it starts the job).
///
/// Time: the model's clock is Unix time (ms since the epoch).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpusched/cluster/allocation.hpp"
#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/ids.hpp"
#include "gpusched/core/quantity.hpp"
#include "gpusched/core/time.hpp"
#include "gpusched/resource/gpu_model.hpp"
#include "gpusched/resource/request.hpp"
#include "gpusched/slurm/arrays.hpp"
#include "gpusched/slurm/hostlist.hpp"
#include "gpusched/slurm/partitions.hpp"
#include "gpusched/slurm/snapshot.hpp"
#include "gpusched/topology/fabric.hpp"
#include "gpusched/workload/job.hpp"
#include "gpusched/workload/ledger.hpp"

GPUSCHED_BEGIN_NAMESPACE

namespace slurm {

/// Extra memory per node (MiB) used to keep multi-node tasks on distinct nodes (see the file
/// comment). 2^30 MiB: far above any node's memory (below 2^29 MiB).
inline constexpr std::int64_t node_slot_memory = std::int64_t{1} << 30;
/// What each task of a multi-node job asks of it: three quarters, so one fits and two never
/// do (for nodes below 2^29 MiB of memory).
inline constexpr std::int64_t node_slot_task = node_slot_memory / 4 * 3;

/// @brief A job the model cannot express (or a node it leaves out): the job is left as it is.
struct job_issue {
  std::int64_t job = 0;  ///< Slurm job id (0 for a node issue)
  std::string field;     ///< the Slurm field, e.g. `tres_per_node`
  std::string message;   ///< a sentence naming job and field
  /// The job as Slurm names it when that is not `job` (`7_3` for an array task).
  std::string slurm_job;
};

/// Held jobs not offered this cycle (beyond their array's `%N` limit, or their dependency not
/// satisfied), by Slurm job id (model id for an unsplit array task), each with the issue that
/// reports it; see `hold_back`.
using held_back_jobs = std::map<std::int64_t, job_issue>;

/// @brief What `build_model` needs besides the JSON.
struct model_options {
  std::string partition;      ///< only nodes and jobs of this partition (empty: all)
  std::int64_t now_unix = 0;  ///< the snapshot's time (Unix seconds)
  /// The limits of `partition` (`MaxNodes`, `MinNodes`, `MaxTime`, `DefaultTime`, `State`;
  /// see partitions.hpp); nullptr: none. A held job outside them is not pending here but in
  /// `model::not_here`.
  const partition_record* limits = nullptr;
  /// Held jobs to leave out, decided once for the whole cycle (`hold_back`); they are not in
  /// `model::pending` and their issues are the caller's to report. nullptr: `build_model`
  /// decides the dependencies on the jobs it is given and reports them in `model::issues`.
  const held_back_jobs* held_back = nullptr;
};

/// @brief The model of one snapshot.
struct model {
  ledger book;                        ///< nodes of the partition, running jobs placed
  std::vector<job_spec> pending;      ///< held jobs the model expresses, by Slurm job id
  std::vector<job_issue> issues;      ///< held jobs left alone (and nodes left out)
  /// Held jobs of the partition that cannot start in it (its limits, its state, a GPU type or
  /// count none of its nodes has), with the reason; a job naming several partitions may still
  /// start in another.
  std::vector<job_issue> not_here;
  /// The partition of this model (`model_options::partition`).
  std::string partition;
  std::vector<std::int64_t> running;  ///< Slurm ids of the jobs in `book` (no fillers)
  std::map<std::string, std::uint32_t, std::less<>> tenants;  ///< tenant name -> id
  std::unordered_map<std::int64_t, job_record> jobs;         ///< every job read, by id
  /// The snapshot's time (`model_options::now_unix`) as scheduler time.
  sim_time now{};
  /// Slurm's name of a model job where it is not the job id itself (`7_3`: task 3 of array
  /// 7); see `address`.
  std::unordered_map<std::uint32_t, std::string> addresses;

  /// The name Slurm knows job `j` by, as every command and JSON line gives it: the job id
  /// (`12`), or `ARRAY_TASK` (`7_3`) for an array task. O(1).
  [[nodiscard]] std::string address(job_id j) const {
    const auto it = addresses.find(j.value());
    return it == addresses.end() ? std::to_string(j.value()) : it->second;
  }

  /// The tenant name of `t` ("" when unknown). O(tenants).
  [[nodiscard]] std::string tenant_name(tenant_id t) const {
    for (const auto& [name, id] : tenants) {
      if (id == t.value()) return name;
    }
    return {};
  }
  /// The Slurm node names of a placement, in task order, one per task.
  [[nodiscard]] std::vector<std::string> node_names(
      std::span<const task_allocation> placement) const {
    std::vector<std::string> out;
    for (const auto& a : placement) out.push_back(book.state().name(a.node));
    return out;
  }
};

/// Id of the filler job that holds the free capacity of an unavailable node that still runs
/// jobs (above Slurm's largest job id).
[[nodiscard]] constexpr job_id filler_id(std::size_t node) noexcept {
  return job_id{0xFFFF0000u + static_cast<std::uint32_t>(node)};
}

namespace detail {

/// A parsed GRES item `gpu[:type]:count[(...)]` (`gres:` prefix allowed).
struct gres_item {
  std::string name;
  std::string type;
  std::int64_t count = 0;
  std::string indices;  ///< `IDX:` list when present (`0-1,4`)
};

inline std::optional<gres_item> parse_gres_item(std::string_view s) {
  gres_item g;
  if (s.substr(0, 5) == "gres:") s.remove_prefix(5);
  if (const auto p = s.find('('); p != std::string_view::npos) {
    const std::string_view extra = s.substr(p + 1);
    if (const auto idx = extra.find("IDX:"); idx != std::string_view::npos) {
      std::string_view rest = extra.substr(idx + 4);
      rest = rest.substr(0, rest.find_first_of(")"));
      g.indices = std::string(rest);
    }
    s = s.substr(0, p);
  }
  std::vector<std::string_view> parts;
  while (true) {
    const auto c = s.find(':');
    parts.push_back(s.substr(0, c));
    if (c == std::string_view::npos) break;
    s.remove_prefix(c + 1);
  }
  if (parts.empty() || parts[0].empty()) return std::nullopt;
  g.name = std::string(parts[0]);
  const auto number = [](std::string_view v) -> std::optional<std::int64_t> {
    if (v.empty() || v.size() > 12) return std::nullopt;
    std::int64_t n = 0;
    for (char ch : v) {
      if (ch < '0' || ch > '9') return std::nullopt;
      n = n * 10 + (ch - '0');
    }
    return n;
  };
  if (parts.size() == 1) {
    g.count = 1;
  } else if (parts.size() == 2) {
    if (auto n = number(parts[1])) {
      g.count = *n;
    } else {
      g.type = std::string(parts[1]);
      g.count = 1;
    }
  } else if (parts.size() == 3) {
    g.type = std::string(parts[1]);
    auto n = number(parts[2]);
    if (!n) return std::nullopt;
    g.count = *n;
  } else {
    return std::nullopt;
  }
  return g;
}

/// Splits a GRES list at top-level commas (commas inside parentheses stay).
inline std::vector<std::string> split_gres(std::string_view s) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

/// Node-local GPU indices of an `IDX:` list (`0-1,4`); empty for `N/A` or bad text.
inline std::vector<int> parse_indices(std::string_view s) {
  std::vector<int> out;
  if (s.empty() || s == "N/A") return out;
  try {
    for (const auto& name : expand_hostlist("x[" + std::string(s) + "]")) {
      out.push_back(std::stoi(name.substr(1)));
    }
  } catch (const std::exception&) {
    out.clear();
  }
  return out;
}

inline bool node_usable(const node_record& n) {
  static constexpr std::string_view bad_states[] = {"down", "drained", "draining", "fail",
                                                    "failing", "future", "unknown", "error",
                                                    "maint", "reboot"};
  for (auto s : bad_states) {
    if (n.state == s) return false;
  }
  static constexpr std::string_view bad_flags[] = {"DRAIN", "DRAINING", "DRAINED", "FAIL",
                                                   "NOT_RESPONDING", "POWERED_DOWN", "MAINT",
                                                   "REBOOT_REQUESTED", "REBOOT_ISSUED"};
  for (const auto& f : n.state_flags) {
    for (auto b : bad_flags) {
      if (f == b) return false;
    }
  }
  return true;
}

inline bool in_partition(const std::string& list, const std::string& partition) {
  if (partition.empty()) return true;
  for (const auto& p : split_commas(list)) {
    if (p == partition) return true;
  }
  return false;
}

inline bool held(const job_record& j) {
  return j.state == "PENDING" && j.priority == 0 &&
         (j.state_reason == "JobHeldUser" || j.state_reason == "JobHeldAdmin");
}

inline bool holds_resources(const job_record& j) {
  return j.state == "RUNNING" || j.state == "COMPLETING" || j.state == "CONFIGURING" ||
         j.state == "SUSPENDED" || j.state == "STOPPED";
}

/// A released job Slurm has not started yet: pending, not held, with the node list we set.
inline bool released_not_started(const job_record& j) {
  return j.state == "PENDING" && !held(j) && !j.required_nodes.empty();
}

/// The per-node request of a job: GPUs, type, CPU, memory. Sets `issue` when inexpressible.
struct per_node {
  std::int64_t gpus = 0;
  std::string type;
  std::int64_t cpus = 1;
  std::int64_t memory = 0;
};

inline std::optional<per_node> per_node_request(const job_record& j, job_issue& issue) {
  const auto bad = [&](std::string field, std::string msg) {
    issue = {j.id, field,
             "job " + slurm_name(j) + (j.name.empty() ? "" : " '" + j.name + "'") + ": field '" +
                 field + "': " + msg + "; the job is left held",
             slurm_name(j)};
    return std::nullopt;
  };
  per_node r;
  const std::int64_t nodes = std::max<std::int64_t>(1, j.node_count);
  const auto gpu_of = [&](const std::string& tres, std::string_view field,
                          gres_item& out) -> bool {
    bool found = false;
    for (const auto& s : split_gres(tres)) {
      auto g = parse_gres_item(s);
      if (!g) {
        bad(std::string(field), "cannot read '" + s + "'");
        return false;
      }
      if (g->name != "gpu") {
        bad(std::string(field), "GRES '" + g->name + "' is not modelled (only gpu)");
        return false;
      }
      if (found) {
        bad(std::string(field), "two GPU requests ('" + tres + "')");
        return false;
      }
      out = *g;
      found = true;
    }
    return true;
  };
  if (!j.tres_per_socket.empty()) {
    return bad("tres_per_socket", "GPUs per socket are not modelled");
  }
  gres_item g;
  int given = 0;
  if (!j.tres_per_node.empty()) {
    if (!gpu_of(j.tres_per_node, "tres_per_node", g)) return std::nullopt;
    r.gpus = g.count;
    ++given;
  }
  if (!j.tres_per_task.empty()) {
    gres_item t;
    if (!gpu_of(j.tres_per_task, "tres_per_task", t)) return std::nullopt;
    std::int64_t tasks_per_node = j.tasks_per_node;
    if (tasks_per_node <= 0) {
      if (nodes == 1) {
        tasks_per_node = std::max<std::int64_t>(1, j.tasks);
      } else if (j.tasks % nodes == 0) {
        return bad("tres_per_task",
                   "GPUs per task over several nodes need --ntasks-per-node (Slurm may spread "
                   "the tasks unevenly)");
      } else {
        return bad("tres_per_task", "tasks do not divide evenly over the nodes");
      }
    }
    r.gpus = t.count * tasks_per_node;
    g = t;
    ++given;
  }
  if (!j.tres_per_job.empty()) {
    gres_item t;
    if (!gpu_of(j.tres_per_job, "tres_per_job", t)) return std::nullopt;
    if (nodes != 1) {
      return bad("tres_per_job", "--gpus over several nodes (Slurm splits it unevenly); use "
                                 "--gpus-per-node");
    }
    r.gpus = t.count;
    g = t;
    ++given;
  }
  if (given > 1) return bad("tres_per_node", "GPUs given in more than one way");
  if (r.gpus > max_gpus_per_node) {
    return bad("tres_per_node", std::to_string(r.gpus) + " GPUs per node (at most " +
                                    std::to_string(max_gpus_per_node) + ")");
  }
  r.type = g.type;
  const std::int64_t cpt = j.cpus_per_task.value_or(1);
  if (j.tasks_per_node > 0) {
    r.cpus = j.tasks_per_node * cpt;
  } else {
    r.cpus = (std::max<std::int64_t>(1, j.cpus) + nodes - 1) / nodes;
  }
  if (j.memory_per_node_mib) {
    r.memory = *j.memory_per_node_mib;
  } else if (j.memory_per_cpu_mib) {
    r.memory = *j.memory_per_cpu_mib * r.cpus;
  }
  return r;
}

}  // namespace detail

/// @brief Reads the GPU count and type of a node's configured GRES (`gpu:a100:8`,
/// `gpu:8(S:0-1)`). nullopt when the node has two GPU types (not modelled); {0, ""} without
/// GPUs. O(length).
[[nodiscard]] inline std::optional<std::pair<std::int64_t, std::string>> node_gpus(
    std::string_view gres) {
  std::int64_t count = 0;
  std::string type;
  bool seen = false;
  for (const auto& s : detail::split_gres(gres)) {
    auto g = detail::parse_gres_item(s);
    if (!g || g->name != "gpu") continue;
    if (seen && g->type != type) return std::nullopt;
    seen = true;
    type = g->type;
    count += g->count;
  }
  return std::pair{count, type};
}

/// @brief The held jobs of one cycle's snapshot `jobs` (arrays expanded by `expand_arrays`,
/// which returned `arrays`) not to offer this cycle, each with its issue: a job whose
/// dependency is not satisfied (field `dependency`, decided by `evaluate_dependency` on `jobs`,
/// before any command of the cycle) and a task beyond its array's `%N` limit (field
/// `array_max_tasks`). O(held jobs x dependency items x records).
[[nodiscard]] inline held_back_jobs hold_back(std::span<const job_record> jobs,
                                              const array_expansion& arrays) {
  held_back_jobs out;
  for (const auto& j : jobs) {
    if (!detail::held(j)) continue;
    const std::string who = "job " + slurm_name(j) + (j.name.empty() ? "" : " '" + j.name + "'");
    if (!j.dependency.empty()) {
      const auto v = evaluate_dependency(j, jobs);
      if (v.what != dependency_verdict::kind::satisfied) {
        out.emplace(j.id, job_issue{j.id, "dependency",
                                    who + ": field 'dependency': " + dependency_problem(v) +
                                        "; the job is left held",
                                    slurm_name(j)});
        continue;
      }
    }
    if (const auto it = arrays.waiting.find(j.id); it != arrays.waiting.end()) {
      out.emplace(j.id, job_issue{j.id, "array_max_tasks",
                                  who + ": field 'array_max_tasks': " + it->second +
                                      "; the task is left held",
                                  slurm_name(j)});
    }
  }
  return out;
}

/// @brief Builds the model of one snapshot. Never throws for a job the model cannot express
/// (see `model::issues`); @throws invalid_value_error only for inconsistent input (e.g. two
/// nodes of one name). O(nodes + jobs + running tasks x log nodes).
[[nodiscard]] inline model build_model(std::span<const node_record> nodes,
                                       std::span<const job_record> jobs,
                                       const model_options& opt = {}) {
  model m;
  m.now = sim_time{seconds(opt.now_unix)};
  m.partition = opt.partition;
  // --- nodes ------------------------------------------------------------------------------
  gpu_catalog catalog;
  std::vector<node_spec> specs;
  std::vector<bool> usable;
  std::set<std::string> types;
  for (const auto& n : nodes) {
    if (!opt.partition.empty() &&
        std::find(n.partitions.begin(), n.partitions.end(), opt.partition) == n.partitions.end()) {
      continue;
    }
    const auto g = node_gpus(n.gres);
    if (!g) {
      m.issues.push_back({0, "gres",
                          "node '" + n.name + "': field 'gres' = '" + n.gres +
                              "': two GPU types on one node are not modelled; the node is left "
                              "out",
                          {}});
      continue;
    }
    node_spec s;
    s.id = node_id{static_cast<std::uint32_t>(specs.size() + 1)};
    s.name = n.name;
    s.gpus = gpu_count{static_cast<std::int32_t>(std::min<std::int64_t>(g->first, max_gpus_per_node))};
    if (s.gpus > gpu_count{0}) {
      s.gpu_model = g->second.empty() ? "gpu" : g->second;
      if (!catalog.find(s.gpu_model)) catalog.add({.name = s.gpu_model, .memory = 80_gib});
      types.insert(g->second);
    }
    s.cpu = cpu_millis{std::int64_t{n.cpus} * 1000};
    s.memory = memory_mib{std::max<std::int64_t>(0, n.real_memory_mib) + node_slot_memory};
    for (const auto& f : n.features) s.labels.emplace_back("feature", f);
    for (const auto& p : n.partitions) s.labels.emplace_back("partition", p);
    specs.push_back(std::move(s));
    usable.push_back(detail::node_usable(n));
  }
  m.book = ledger(cluster(catalog, specs));
  const cluster& c = m.book.state();
  std::unordered_map<std::string, node_index> by_name;
  for (node_index i : c.nodes()) by_name.emplace(c.name(i), i);

  const auto tenant_of = [&](const job_record& j) {
    std::string key = j.account.empty() ? "(none)" : j.account;
    if (!j.qos.empty() && j.qos != "normal") key += "/" + j.qos;
    auto it = m.tenants.find(key);
    if (it == m.tenants.end()) {
      it = m.tenants.emplace(key, static_cast<std::uint32_t>(m.tenants.size() + 1)).first;
    }
    return tenant_id{it->second};
  };
  const auto spec_of = [&](const job_record& j) {
    job_spec s;
    s.id = job_id{static_cast<std::uint32_t>(j.id)};
    s.name = j.name;
    s.tenant = tenant_of(j);
    s.priority = -j.nice;
    s.submit = sim_time{seconds(j.submit_time)};
    if (j.time_limit_minutes && *j.time_limit_minutes > 0) {
      s.expected_duration = seconds(*j.time_limit_minutes * 60);
    } else if (opt.limits != nullptr && opt.limits->default_time_minutes) {
      s.expected_duration = seconds(*opt.limits->default_time_minutes * 60);
    } else if (opt.limits != nullptr && opt.limits->max_time_minutes) {
      s.expected_duration = seconds(*opt.limits->max_time_minutes * 60);
    }
    s.preemptible = j.requeue;
    return s;
  };

  // --- jobs that hold resources -----------------------------------------------------------
  for (const auto& j : jobs) {
    m.jobs.emplace(j.id, j);
    if (j.array_job_id != 0 && j.array_task_id && j.id > 0 && j.id < 0xFFFF0000) {
      m.addresses.emplace(static_cast<std::uint32_t>(j.id), slurm_name(j));
    }
  }
  for (const auto& j : jobs) {
    const bool runs = detail::holds_resources(j);
    const bool in_flight = detail::released_not_started(j);
    if (!runs && !in_flight) continue;
    if (j.id <= 0 || j.id >= 0xFFFF0000) continue;
    const auto names = expand_hostlist(runs ? j.nodes : j.required_nodes);
    job_issue ignored;
    const auto req = detail::per_node_request(j, ignored);
    const std::int64_t gpus_each = req ? req->gpus : 0;
    const std::int64_t cpus_each =
        req ? req->cpus : (std::max<std::int64_t>(1, j.cpus) + std::max<std::int64_t>(1, j.node_count) - 1) /
                              std::max<std::int64_t>(1, j.node_count);
    const std::int64_t mem_each = req ? req->memory : 0;
    const bool multi = names.size() > 1;
    job_spec s = spec_of(j);
    if (j.state != "RUNNING") s.preemptible = false;  // completing or not started yet
    auto tx = m.book.begin();
    std::uint16_t group = 0;
    for (std::size_t k = 0; k < names.size(); ++k) {
      const auto it = by_name.find(names[k]);
      if (it == by_name.end()) continue;  // a node outside the partition
      const node_index n = it->second;
      // the GPUs Slurm chose on this node
      std::vector<int> idx;
      for (std::size_t a = 0; a < j.allocated_nodes.size() && a < j.gres_detail.size(); ++a) {
        if (j.allocated_nodes[a] != names[k]) continue;
        for (const auto& item : detail::split_gres(j.gres_detail[a])) {
          if (auto g = detail::parse_gres_item(item); g && g->name == "gpu") {
            for (int i : detail::parse_indices(g->indices)) idx.push_back(i);
          }
        }
      }
      const auto node_gpus_here = c.gpus(n);
      if (idx.empty() && gpus_each > 0) {
        for (std::size_t i = 0; i < node_gpus_here.size() &&
                                static_cast<std::int64_t>(idx.size()) < gpus_each;
             ++i) {
          if (node_gpus_here[i].whole_free()) idx.push_back(static_cast<int>(i));
        }
      }
      task_allocation a;
      a.node = n;
      a.group = group;
      a.cpu = cpu_millis{std::min(cpus_each * 1000, c.cpu_free(n).value())};
      a.memory = memory_mib{std::min(mem_each + (multi ? node_slot_task : 0),
                                     c.memory_free(n).value())};
      for (int i : idx) {
        if (i < 0 || static_cast<std::size_t>(i) >= node_gpus_here.size()) continue;
        if (!node_gpus_here[static_cast<std::size_t>(i)].whole_free()) continue;
        a.gpus.push_back({gpu_index{c.first_gpu(n).value() + static_cast<std::uint32_t>(i)},
                          whole_gpu_milli});
      }
      task_request r;
      if (!a.gpus.empty()) r.gpu = gpu_demand::whole(gpu_count{static_cast<std::int32_t>(a.gpus.size())});
      r.cpu = a.cpu;
      r.memory = a.memory;
      if (!tx.place(a)) continue;  // the model has no room (inconsistent snapshot): skip
      s.groups.push_back({.name = names[k], .request = r, .count = 1});
      ++group;
    }
    if (s.groups.empty()) {
      tx.rollback();
      continue;
    }
    tx.commit(std::move(s), runs && j.start_time > 0 ? sim_time{seconds(j.start_time)} : m.now);
    m.running.push_back(j.id);
  }
  // nodes out of service: empty ones go down; busy ones keep their jobs, a filler holds the rest
  for (node_index n : c.nodes()) {
    if (usable[n.value()]) continue;
    if (m.book.jobs_on(n).empty()) {
      m.book.set_available(n, false);
      continue;
    }
    task_allocation a;
    a.node = n;
    a.cpu = c.cpu_free(n);
    a.memory = c.memory_free(n);
    const auto gs = c.gpus(n);
    for (std::size_t i = 0; i < gs.size(); ++i) {
      if (gs[i].whole_free()) {
        a.gpus.push_back({gpu_index{c.first_gpu(n).value() + static_cast<std::uint32_t>(i)},
                          whole_gpu_milli});
      }
    }
    job_spec s;
    s.id = filler_id(n.value());
    s.name = "out of service: " + c.name(n);
    s.preemptible = false;
    task_request r;
    if (!a.gpus.empty()) r.gpu = gpu_demand::whole(gpu_count{static_cast<std::int32_t>(a.gpus.size())});
    r.cpu = a.cpu;
    r.memory = a.memory;
    s.groups.push_back({.name = "node", .request = r, .count = 1});
    auto tx = m.book.begin();
    if (tx.place(a)) {
      tx.commit(std::move(s), m.now);
    } else {
      tx.rollback();
    }
  }

  // --- held jobs ----------------------------------------------------------------------------
  int max_node_gpus = 0;
  for (node_index n : c.nodes()) max_node_gpus = std::max(max_node_gpus, static_cast<int>(c.gpus(n).size()));
  for (const auto& j : jobs) {
    if (!detail::held(j) || !detail::in_partition(j.partition, opt.partition)) continue;
    const std::string who = "job " + slurm_name(j) + (j.name.empty() ? "" : " '" + j.name + "'");
    const auto issue = [&](std::string field, std::string msg) {
      m.issues.push_back({j.id, field,
                          who + ": field '" + field + "': " + msg + "; the job is left held",
                          slurm_name(j)});
    };
    const std::string here =
        opt.partition.empty() ? std::string() : " in partition '" + opt.partition + "'";
    const auto not_here = [&](std::string field, std::string msg) {
      m.not_here.push_back({j.id, field, msg + here, slurm_name(j)});
    };
    if (j.id <= 0 || j.id >= 0xFFFF0000) {
      issue("job_id", "out of the model's range");
      continue;
    }
    if (j.het_job_id != 0) {
      issue("het_job_id", "heterogeneous jobs are not modelled (component of " +
                              std::to_string(j.het_job_id) + ")");
      continue;
    }
    if (opt.held_back != nullptr && opt.held_back->contains(j.id)) continue;
    if (!j.array_tasks.empty() && !j.array_task_id) {
      issue("array_task_string", "the record of an array's unsplit tasks ('" + j.array_tasks +
                                     "'), not split into one job per task (expand_arrays)");
      continue;
    }
    if (j.shared && *j.shared == "none") {
      issue("shared", "--exclusive (whole nodes) is not modelled");
      continue;
    }
    if (j.max_nodes > j.node_count && j.max_nodes > 0) {
      issue("max_nodes", "a node range (-N " + std::to_string(j.node_count) + "-" +
                             std::to_string(j.max_nodes) + ") is not modelled; give one count");
      continue;
    }
    if (!j.required_nodes.empty() && j.restart_count == 0) {
      // a node list on a job that never ran is the user's -w (the bridge clears its own list
      // when a release fails; a requeued job keeps the list it ran on, which is ignored)
      issue("required_nodes", "'" + j.required_nodes +
                                  "': a required node list (-w) is not modelled (if the bridge "
                                  "left it, clear it: scontrol update JobId=" +
                                  slurm_name(j) + " NodeList=)");
      continue;
    }
    if (!j.excluded_nodes.empty()) {
      issue("excluded_nodes", "'" + j.excluded_nodes + "': excluded nodes (-x) are not modelled");
      continue;
    }
    if (!j.features.empty()) {
      issue("features", "'" + j.features + "': node constraints (-C) are not modelled");
      continue;
    }
    if (!j.dependency.empty() && opt.held_back == nullptr) {
      const auto v = evaluate_dependency(j, jobs);
      if (v.what != dependency_verdict::kind::satisfied) {
        issue("dependency", dependency_problem(v));
        continue;
      }
    }
    job_issue bad;
    const auto req = detail::per_node_request(j, bad);
    if (!req) {
      m.issues.push_back(std::move(bad));
      continue;
    }
    task_request r;
    if (req->gpus > 0) {
      if (req->gpus > max_node_gpus) {
        not_here("tres_per_node", std::to_string(req->gpus) +
                                      " GPUs per node; the largest node has " +
                                      std::to_string(max_node_gpus));
        continue;
      }
      r.gpu = gpu_demand::whole(gpu_count{static_cast<std::int32_t>(req->gpus)});
      if (!req->type.empty()) {
        const auto model_id = c.catalog().find(req->type);
        if (!model_id) {
          std::string have;
          for (const auto& t : types) have += (have.empty() ? "" : ", ") + (t.empty() ? std::string("(untyped)") : t);
          not_here(!j.tres_per_node.empty() ? "tres_per_node"
                   : !j.tres_per_task.empty() ? "tres_per_task"
                                              : "tres_per_job",
                   "GPU type '" + req->type + "' is on no node (types: " +
                       (have.empty() ? "none" : have) + ")");
          continue;
        }
        r.allowed_models.insert(*model_id);
      }
    }
    r.cpu = cpu_millis{req->cpus * 1000};
    const std::int32_t count = std::max<std::int32_t>(1, j.node_count);
    if (const partition_record* p = opt.limits; p != nullptr) {
      if (!p->starts_jobs()) {
        not_here("partition", "the partition is " + p->state + " (it starts no jobs)");
        continue;
      }
      if (p->max_nodes && count > *p->max_nodes) {
        not_here("node_count", std::to_string(count) + " nodes, above MaxNodes=" +
                                   std::to_string(*p->max_nodes));
        continue;
      }
      if (count < p->min_nodes) {
        not_here("node_count", std::to_string(count) + " nodes, below MinNodes=" +
                                   std::to_string(p->min_nodes));
        continue;
      }
      if (j.time_limit_minutes && *j.time_limit_minutes > 0 && p->max_time_minutes &&
          *j.time_limit_minutes > *p->max_time_minutes) {
        not_here("time_limit", "a time limit of " + std::to_string(*j.time_limit_minutes) +
                                   " min, above MaxTime=" + std::to_string(*p->max_time_minutes) +
                                   " min");
        continue;
      }
    }
    r.memory = memory_mib{req->memory + (count > 1 ? node_slot_task : 0)};
    job_spec s = spec_of(j);
    s.groups.push_back({.name = "node", .request = r, .count = count});
    m.pending.push_back(std::move(s));
  }
  std::sort(m.pending.begin(), m.pending.end(),
            [](const job_spec& a, const job_spec& b) { return a.id < b.id; });
  return m;
}

/// @brief A fabric from the text of a Slurm `topology.conf` (topology/tree): `SwitchName=x
/// Nodes=<hosts>` for leaf switches, `SwitchName=y Switches=<switches>` above them. Levels are
/// the switches' heights (1 = leaf, 2 = spine, ...); a node under no switch is alone in its
/// domains. Nodes of `c` are matched by name; switch lines over unknown nodes are ignored.
/// @throws invalid_value_error (parse) naming the line for a malformed line or a cycle.
/// O(lines x hosts + nodes x levels).
[[nodiscard]] inline fabric parse_topology_conf(std::string_view text, const cluster& c) {
  struct sw {
    std::string name;
    std::vector<std::string> nodes, children;
    int height = 0;
    std::size_t parent = static_cast<std::size_t>(-1);
  };
  std::vector<sw> sws;
  std::size_t line_no = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t nl = text.find('\n', pos);
    std::string line(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    if (const auto h = line.find('#'); h != std::string::npos) line.erase(h);
    sw s;
    std::size_t i = 0;
    bool any = false;
    while (i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      if (i >= line.size()) break;
      std::size_t e = i;
      while (e < line.size() && line[e] != ' ' && line[e] != '\t' && line[e] != '\r') ++e;
      const std::string tok = line.substr(i, e - i);
      i = e;
      any = true;
      const auto eq = tok.find('=');
      if (eq == std::string::npos) {
        throw invalid_value_error(error_id::parse, "topology.conf line " + std::to_string(line_no),
                                  "token", tok, "expected Key=Value");
      }
      std::string key = tok.substr(0, eq);
      std::transform(key.begin(), key.end(), key.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      const std::string val = tok.substr(eq + 1);
      if (key == "switchname") {
        s.name = val;
      } else if (key == "nodes") {
        s.nodes = expand_hostlist(val);
      } else if (key == "switches") {
        s.children = expand_hostlist(val);
      }  // LinkSpeed and others: ignored
    }
    if (!any) continue;
    if (s.name.empty()) {
      throw invalid_value_error(error_id::parse, "topology.conf line " + std::to_string(line_no),
                                "SwitchName", "(missing)", "every line names its switch");
    }
    sws.push_back(std::move(s));
  }
  std::unordered_map<std::string, std::size_t> idx;
  for (std::size_t k = 0; k < sws.size(); ++k) idx.emplace(sws[k].name, k);
  for (std::size_t k = 0; k < sws.size(); ++k) {
    for (const auto& ch : sws[k].children) {
      const auto it = idx.find(ch);
      if (it != idx.end()) sws[it->second].parent = k;
    }
  }
  // heights: leaves 1, parents 1 + their highest child (iterate to a fixed point; a cycle
  // never settles)
  for (auto& s : sws) s.height = s.children.empty() ? 1 : 0;
  for (std::size_t round = 0;; ++round) {
    bool changed = false;
    for (auto& s : sws) {
      if (s.children.empty()) continue;
      int h = 1;
      for (const auto& ch : s.children) {
        const auto it = idx.find(ch);
        if (it != idx.end()) h = std::max(h, sws[it->second].height + 1);
      }
      if (h != s.height) {
        s.height = h;
        changed = true;
      }
    }
    if (!changed) break;
    if (round > sws.size() + 1) {
      throw invalid_value_error(error_id::parse, "topology.conf", "Switches", "(cycle)",
                                "the switches do not form a tree");
    }
  }
  int levels = 0;
  for (const auto& s : sws) levels = std::max(levels, s.height);
  std::vector<std::size_t> leaf_of(c.node_count(), static_cast<std::size_t>(-1));
  std::unordered_map<std::string, node_index> by_name;
  for (node_index n : c.nodes()) by_name.emplace(c.name(n), n);
  for (std::size_t k = 0; k < sws.size(); ++k) {
    for (const auto& name : sws[k].nodes) {
      const auto it = by_name.find(name);
      if (it != by_name.end()) leaf_of[it->second.value()] = k;
    }
  }
  std::vector<fabric_level> lv;
  static constexpr std::string_view level_names[] = {"leaf", "spine", "core"};
  for (int l = 1; l <= levels; ++l) {
    lv.push_back({.name = l <= 3 ? std::string(level_names[l - 1]) : "level" + std::to_string(l)});
  }
  std::vector<std::vector<std::uint32_t>> dom(static_cast<std::size_t>(levels),
                                              std::vector<std::uint32_t>(c.node_count()));
  for (int l = 1; l <= levels; ++l) {
    std::unordered_map<std::size_t, std::uint32_t> dense;
    std::uint32_t next = 0;
    for (std::size_t n = 0; n < c.node_count(); ++n) {
      // the lowest ancestor switch of height >= l
      std::size_t s = leaf_of[n];
      while (s != static_cast<std::size_t>(-1) && sws[s].height < l) s = sws[s].parent;
      std::uint32_t d = 0;
      if (s == static_cast<std::size_t>(-1)) {
        d = next++;  // alone at this level
      } else if (auto it = dense.find(s); it != dense.end()) {
        d = it->second;
      } else {
        d = next++;
        dense.emplace(s, d);
      }
      dom[static_cast<std::size_t>(l - 1)][n] = d;
    }
  }
  return {std::move(lv), dom};
}

}  // namespace slurm

GPUSCHED_END_NAMESPACE
