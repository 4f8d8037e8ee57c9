// SPDX-License-Identifier: Apache-2.0
/// @file
/// Slurm's own JSON, read into plain values: `sinfo --json` (nodes) and `squeue --json` (jobs)
/// of Slurm 22.05 (data parser `openapi/v0.0.38`). Only the fields the bridge maps are kept;
/// nulls read as "not set". Needs nlohmann/json (the `gpusched::slurm` CMake target), never
/// needed by the core library.
///
/// Errors: text that is not JSON, JSON of another data version (`meta.plugin.type`), a missing
/// `nodes`/`jobs` array, or a field of the wrong type throw `invalid_value_error` (id `parse`)
/// naming the command, the object (node name, `job <id>`) and the field. A controller error
/// reported in `errors` is an error too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"

GPUSCHED_BEGIN_NAMESPACE

namespace slurm {

/// The data parser version this mapping reads (Slurm 22.05's `--json`).
inline constexpr std::string_view supported_data_version = "openapi/v0.0.38";

/// @brief One node of `sinfo --json`.
struct node_record {
  /// `name`: the node's name.
  std::string name;
  /// `cpus`: the node's CPUs.
  std::int32_t cpus = 0;
  /// `real_memory`: the node's memory, in MiB.
  std::int64_t real_memory_mib = 0;
  std::string gres;                      ///< configured, e.g. `gpu:a100:8` or `gpu:8(S:0-1)`
  std::string state;                     ///< `idle`, `mixed`, `allocated`, `down`, ...
  std::vector<std::string> state_flags;  ///< e.g. `DRAIN`, `NOT_RESPONDING`
  /// `partitions`: the partitions the node belongs to.
  std::vector<std::string> partitions;
  std::vector<std::string> features;  ///< active features
  /// `reason`: why the node is down or drained, if it is.
  std::string reason;
};

/// @brief One job of `squeue --json`.
struct job_record {
  /// `job_id`.
  std::int64_t id = 0;
  /// `name`: the job's name.
  std::string name;
  /// `account`: the job's account (the tenant in the model).
  std::string account;
  /// `qos`: the job's QOS (appended to the tenant when set).
  std::string qos;
  /// `partition`: the job's partition.
  std::string partition;
  std::string state;         ///< `PENDING`, `RUNNING`, `COMPLETING`, ...
  std::string state_reason;  ///< e.g. `JobHeldUser`, `JobHeldAdmin`
  std::string nodes;         ///< allocated nodes (host list) once started
  std::string required_nodes;  ///< `-w`, or the node list the bridge set
  std::string excluded_nodes;  ///< `-x`
  std::string features;        ///< `-C` constraint
  std::string tres_per_node;  ///< e.g. `gres:gpu:a100:4`
  /// `tres_per_task` (`--gpus-per-task`), as Slurm prints it.
  std::string tres_per_task;
  /// `tres_per_job` (`--gpus`), as Slurm prints it.
  std::string tres_per_job;
  /// `tres_per_socket` (`--gpus-per-socket`), as Slurm prints it.
  std::string tres_per_socket;
  std::optional<std::string> shared;  ///< `none` for `--exclusive`
  std::int64_t priority = 0;          ///< 0 while held
  /// `nice` (a negative nice read back from 22.05's unsigned print).
  std::int32_t nice = 0;
  /// `node_count`: nodes asked for (1 when absent).
  std::int32_t node_count = 0;
  /// `max_nodes`: the most nodes (0: not given).
  std::int32_t max_nodes = 0;
  /// `tasks`: tasks asked for.
  std::int32_t tasks = 0;
  std::int32_t tasks_per_node = 0;  ///< 0: not given
  std::int32_t cpus = 0;            ///< total
  /// `cpus_per_task`, when given.
  std::optional<std::int32_t> cpus_per_task;
  /// `memory_per_node`, in MiB, when given (`--mem`).
  std::optional<std::int64_t> memory_per_node_mib;
  /// `memory_per_cpu`, in MiB, when given (`--mem-per-cpu`).
  std::optional<std::int64_t> memory_per_cpu_mib;
  /// `time_limit`, in minutes, when set.
  std::optional<std::int64_t> time_limit_minutes;
  std::int64_t submit_time = 0;  ///< Unix seconds
  /// `start_time`, Unix seconds (a running job's start).
  std::int64_t start_time = 0;
  /// `requeue`: the job may be requeued.
  bool requeue = false;
  /// `restart_cnt`: times the job was requeued.
  std::int32_t restart_count = 0;
  /// `het_job_id`: non-zero for a component of a heterogeneous job.
  std::int64_t het_job_id = 0;
  /// `array_job_id`: non-zero for an array task (and for the record of an array's tasks not
  /// yet split off).
  std::int64_t array_job_id = 0;
  /// `array_task_id`: the task of an array task; nullopt for the record of the tasks not yet
  /// split off (and for a job that is no array).
  std::optional<std::int64_t> array_task_id;
  /// `array_task_string`: the tasks not yet split off (`1-2,4-6%2`), on their record only.
  std::string array_tasks;
  /// `array_max_tasks`: the most tasks of the array that run at once (`%N`; 0: no limit).
  std::int32_t array_max_tasks = 0;
  /// `dependency`: the job's dependencies, if any.
  std::string dependency;
  std::vector<std::string> gres_detail;     ///< per allocated node: `gpu:a100:2(IDX:0-1)`
  std::vector<std::string> allocated_nodes;  ///< node names in `gres_detail` order
};

/// @brief The version line of one command's output.
struct data_version {
  std::string plugin;         ///< e.g. `openapi/v0.0.38`
  std::string slurm_release;  ///< e.g. `22.05.8`
};

namespace detail {

using json = nlohmann::json;

[[noreturn]] inline void fail(std::string_view command, const std::string& where,
                              std::string_view field, const std::string& problem) {
  throw invalid_value_error(error_id::parse, std::string(command) + " " + where,
                            std::string(field), "(json)", problem);
}

inline const json* member(const json& o, std::string_view key) {
  const auto it = o.find(key);
  return it == o.end() || it->is_null() ? nullptr : &*it;
}

inline std::string get_string(const json& o, std::string_view key, std::string_view command,
                              const std::string& where) {
  const json* v = member(o, key);
  if (v == nullptr) return {};
  if (!v->is_string()) fail(command, where, key, "expected a string");
  return v->get<std::string>();
}

inline std::optional<std::int64_t> get_int(const json& o, std::string_view key,
                                           std::string_view command, const std::string& where) {
  const json* v = member(o, key);
  if (v == nullptr) return std::nullopt;
  if (v->is_number_integer()) return v->get<std::int64_t>();
  if (v->is_number_float()) return static_cast<std::int64_t>(v->get<double>());
  fail(command, where, key, "expected a number");
}

inline std::int64_t get_int_or(const json& o, std::string_view key, std::int64_t fallback,
                               std::string_view command, const std::string& where) {
  return get_int(o, key, command, where).value_or(fallback);
}

inline std::int32_t narrow32(std::int64_t v, std::string_view command, const std::string& where,
                             std::string_view field) {
  if (v < INT32_MIN || v > INT32_MAX) fail(command, where, field, "out of range");
  return static_cast<std::int32_t>(v);
}

inline std::vector<std::string> get_strings(const json& o, std::string_view key,
                                            std::string_view command, const std::string& where) {
  std::vector<std::string> out;
  const json* v = member(o, key);
  if (v == nullptr) return out;
  if (!v->is_array()) fail(command, where, key, "expected an array");
  for (const auto& e : *v) {
    if (!e.is_string()) fail(command, where, key, "expected an array of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

inline std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i <= s.size() && !s.empty()) {
    const std::size_t c = s.find(',', i);
    std::string part = s.substr(i, c == std::string::npos ? std::string::npos : c - i);
    if (!part.empty()) out.push_back(std::move(part));
    if (c == std::string::npos) break;
    i = c + 1;
  }
  return out;
}

/// Parses `text`, checks its version and controller errors; returns the document.
inline json document(std::string_view text, std::string_view command, data_version* version) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    fail(command, "output", "(document)", std::string("not JSON: ") + e.what());
  }
  if (!doc.is_object()) fail(command, "output", "(document)", "expected a JSON object");
  std::string plugin;
  std::string release;
  if (const json* meta = member(doc, "meta"); meta != nullptr && meta->is_object()) {
    if (const json* p = member(*meta, "plugin"); p != nullptr && p->is_object()) {
      plugin = get_string(*p, "type", command, "meta.plugin");
    }
    if (const json* s = member(*meta, "Slurm"); s != nullptr && s->is_object()) {
      release = get_string(*s, "release", command, "meta.Slurm");
    }
  }
  if (plugin != supported_data_version) {
    fail(command, "meta.plugin", "type",
         "unsupported JSON data version '" + plugin + "' (Slurm " +
             (release.empty() ? std::string("?") : release) + "); this bridge reads '" +
             std::string(supported_data_version) + "' (Slurm 22.05)");
  }
  if (const json* errs = member(doc, "errors"); errs != nullptr && errs->is_array()) {
    for (const auto& e : *errs) {
      std::string msg = e.is_object() ? get_string(e, "error", command, "errors") : e.dump();
      if (e.is_object()) {
        const auto more = get_string(e, "description", command, "errors");
        const auto source = get_string(e, "source", command, "errors");
        if (!more.empty() || !source.empty()) {
          msg += " (" + more + (more.empty() || source.empty() ? "" : ", ") + source + ")";
        }
      }
      fail(command, "errors", "error",
           "the controller reported: " + msg + "; is slurmctld running and reachable?");
    }
  }
  if (version != nullptr) *version = {plugin, release};
  return doc;
}

}  // namespace detail

/// @brief Reads `sinfo --json` output. @throws invalid_value_error (parse): see the file
/// comment. O(size of the text).
[[nodiscard]] inline std::vector<node_record> parse_sinfo(std::string_view text,
                                                          data_version* version = nullptr) {
  constexpr std::string_view cmd = "sinfo --json";
  const auto doc = detail::document(text, cmd, version);
  const auto* nodes = detail::member(doc, "nodes");
  if (nodes == nullptr || !nodes->is_array()) {
    detail::fail(cmd, "output", "nodes", "missing or not an array");
  }
  std::vector<node_record> out;
  out.reserve(nodes->size());
  for (const auto& n : *nodes) {
    if (!n.is_object()) detail::fail(cmd, "output", "nodes", "expected objects");
    node_record r;
    r.name = detail::get_string(n, "name", cmd, "node");
    const std::string where = "node '" + r.name + "'";
    if (r.name.empty()) detail::fail(cmd, where, "name", "missing");
    r.cpus = detail::narrow32(detail::get_int_or(n, "cpus", 0, cmd, where), cmd, where, "cpus");
    r.real_memory_mib = detail::get_int_or(n, "real_memory", 0, cmd, where);
    r.gres = detail::get_string(n, "gres", cmd, where);
    r.state = detail::get_string(n, "state", cmd, where);
    r.state_flags = detail::get_strings(n, "state_flags", cmd, where);
    r.partitions = detail::get_strings(n, "partitions", cmd, where);
    r.features = detail::split_commas(detail::get_string(n, "active_features", cmd, where));
    r.reason = detail::get_string(n, "reason", cmd, where);
    out.push_back(std::move(r));
  }
  return out;
}

/// @brief Reads `squeue --json` output. @throws invalid_value_error (parse): see the file
/// comment. O(size of the text).
[[nodiscard]] inline std::vector<job_record> parse_squeue(std::string_view text,
                                                          data_version* version = nullptr) {
  constexpr std::string_view cmd = "squeue --json";
  const auto doc = detail::document(text, cmd, version);
  const auto* jobs = detail::member(doc, "jobs");
  if (jobs == nullptr || !jobs->is_array()) {
    detail::fail(cmd, "output", "jobs", "missing or not an array");
  }
  std::vector<job_record> out;
  out.reserve(jobs->size());
  for (const auto& j : *jobs) {
    if (!j.is_object()) detail::fail(cmd, "output", "jobs", "expected objects");
    job_record r;
    const auto id = detail::get_int(j, "job_id", cmd, "job");
    if (!id || *id <= 0) detail::fail(cmd, "job", "job_id", "missing or not positive");
    r.id = *id;
    const std::string w = "job " + std::to_string(r.id);
    const auto i32 = [&](std::string_view k, std::int64_t fallback) {
      return detail::narrow32(detail::get_int_or(j, k, fallback, cmd, w), cmd, w, k);
    };
    r.name = detail::get_string(j, "name", cmd, w);
    r.account = detail::get_string(j, "account", cmd, w);
    r.qos = detail::get_string(j, "qos", cmd, w);
    r.partition = detail::get_string(j, "partition", cmd, w);
    r.state = detail::get_string(j, "job_state", cmd, w);
    r.state_reason = detail::get_string(j, "state_reason", cmd, w);
    r.nodes = detail::get_string(j, "nodes", cmd, w);
    r.required_nodes = detail::get_string(j, "required_nodes", cmd, w);
    r.excluded_nodes = detail::get_string(j, "excluded_nodes", cmd, w);
    r.features = detail::get_string(j, "features", cmd, w);
    r.tres_per_node = detail::get_string(j, "tres_per_node", cmd, w);
    r.tres_per_task = detail::get_string(j, "tres_per_task", cmd, w);
    r.tres_per_job = detail::get_string(j, "tres_per_job", cmd, w);
    r.tres_per_socket = detail::get_string(j, "tres_per_socket", cmd, w);
    if (const auto* s = detail::member(j, "shared"); s != nullptr && s->is_string()) {
      r.shared = s->get<std::string>();
    }
    r.priority = detail::get_int_or(j, "priority", 0, cmd, w);
    // 22.05 prints a negative nice as its unsigned 32-bit pattern (-100 as 4294967196)
    if (auto nice = detail::get_int(j, "nice", cmd, w)) {
      if (*nice > INT32_MAX && *nice <= std::int64_t{UINT32_MAX}) *nice -= std::int64_t{1} << 32;
      r.nice = detail::narrow32(*nice, cmd, w, "nice");
    }
    r.node_count = i32("node_count", 1);
    r.max_nodes = i32("max_nodes", 0);
    r.tasks = i32("tasks", 1);
    r.tasks_per_node = i32("tasks_per_node", 0);
    r.cpus = i32("cpus", 1);
    if (auto v = detail::get_int(j, "cpus_per_task", cmd, w)) {
      r.cpus_per_task = detail::narrow32(*v, cmd, w, "cpus_per_task");
    }
    r.memory_per_node_mib = detail::get_int(j, "memory_per_node", cmd, w);
    r.memory_per_cpu_mib = detail::get_int(j, "memory_per_cpu", cmd, w);
    r.time_limit_minutes = detail::get_int(j, "time_limit", cmd, w);
    r.submit_time = detail::get_int_or(j, "submit_time", 0, cmd, w);
    r.start_time = detail::get_int_or(j, "start_time", 0, cmd, w);
    if (const auto* q = detail::member(j, "requeue"); q != nullptr && q->is_boolean()) {
      r.requeue = q->get<bool>();
    }
    r.restart_count = i32("restart_cnt", 0);
    r.het_job_id = detail::get_int_or(j, "het_job_id", 0, cmd, w);
    r.array_job_id = detail::get_int_or(j, "array_job_id", 0, cmd, w);
    r.array_task_id = detail::get_int(j, "array_task_id", cmd, w);
    r.array_tasks = detail::get_string(j, "array_task_string", cmd, w);
    r.array_max_tasks = i32("array_max_tasks", 0);
    r.dependency = detail::get_string(j, "dependency", cmd, w);
    r.gres_detail = detail::get_strings(j, "gres_detail", cmd, w);
    if (const auto* res = detail::member(j, "job_resources"); res != nullptr && res->is_object()) {
      if (const auto* an = detail::member(*res, "allocated_nodes");
          an != nullptr && an->is_array()) {
        for (const auto& a : *an) {
          if (a.is_object()) r.allocated_nodes.push_back(detail::get_string(a, "nodename", cmd, w));
        }
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace slurm

GPUSCHED_END_NAMESPACE
