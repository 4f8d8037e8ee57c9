// SPDX-License-Identifier: Apache-2.0
/// @file
/// Job arrays and dependencies, as an external scheduler of Slurm 22.05 meets them.
///
/// Arrays. Slurm keeps one job record for the tasks of an array that are still pending and
/// makes a record of its own for a task only when that task changes: "When a job array is
/// submitted to Slurm, only one job record is created. Additional job records will only be
/// created when the state of a task in the job array changes, typically when a task is
/// allocated resources or its state is modified using the scontrol command"
/// (doc/html/job_array.shtml, 22.05). Slurm's own scheduler splits a task off when it starts
/// it, which never happens to a held array. An outside scheduler splits a task by naming it
/// in an update: `scontrol update JobId=<array>_<task> ...` on the pending array's record
/// copies that task into a record of its own (job id new, `array_task_id` the task), applies
/// the update to it and leaves the other tasks pending together (`update_job_str()` in
/// src/slurmctld/job_mgr.c, "Need to split out tasks to separate job records", through
/// `job_array_split()`). So the bridge schedules each task as a job of its own (an unsplit
/// task under a model id of its own, `expand_arrays`) and names it `<array>_<task>` in every
/// command (`scontrol update JobId=7_3 NodeList=n1` splits task 3 off and sets its nodes,
/// `scontrol release 7_3` starts it). Naming the array's record by its job id instead would
/// address every task of the array: after the last split the record left is the last task
/// (its job id equals the array's), and an update of `7` reaches the running tasks too, which
/// Slurm refuses ("Job resizing not supported for job arrays"). An array's `%N` limit (the
/// most tasks running at once) is honoured: only as many tasks as the limit leaves are
/// offered in a cycle.
///
/// Dependencies. Slurm does not test the dependencies of a held job (`job_independent()` in
/// job_mgr.c returns early for reasons `JobHeldAdmin` and `JobHeldUser`), so a held job's
/// `dependency` stays `afterok:7_*(unfulfilled)` even once it is fulfilled, and the bridge
/// decides it itself with Slurm's rules (`_test_job_dependency_common()` in
/// src/slurmctld/job_scheduler.c): `after` (every job started or finished), `afterany` (every
/// job finished), `afterok` (every job finished `COMPLETED`; one that finished otherwise: never
/// satisfied), `afternotok` (every job finished other than `COMPLETED`); a job no longer in
/// the queue lifts its dependency, as in Slurm ("job is gone, dependency lifted"); `<id>_*`
/// and an array's id name every task of the array. Once released, Slurm tests the dependency
/// again before it starts the job. Not modelled (the job is left held, named): `?` (any of),
/// `after:<id>+<minutes>`, `aftercorr`, `singleton`, `afterburstbuffer`, `expand`.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/slurm/snapshot.hpp"

GPUSCHED_BEGIN_NAMESPACE

namespace slurm {

/// The most tasks `parse_array_tasks` reads from one array (Slurm's `MaxArraySize` is at most
/// 4000001).
inline constexpr std::size_t max_array_tasks = 4000001;

/// The first model id given to an array task not yet split off (above Slurm's job ids of a
/// single cluster, below the model's fillers).
inline constexpr std::int64_t first_task_model_id = 0xF0000000;

/// @brief The name Slurm gives job `j` in commands: `<array>_<task>` for an array task, else
/// its job id. O(1).
[[nodiscard]] inline std::string slurm_name(const job_record& j) {
  if (j.array_job_id != 0 && j.array_task_id) {
    return std::to_string(j.array_job_id) + "_" + std::to_string(*j.array_task_id);
  }
  return std::to_string(j.id);
}

/// @brief The tasks of an `array_task_string` (`1-2,4-6%2`, `7`, or a hex mask `0x3E`) and
/// its `%N` limit (0: none). @throws invalid_value_error (parse) naming `where` for anything
/// else or more than `max_array_tasks` tasks. O(tasks).
[[nodiscard]] inline std::pair<std::vector<std::int64_t>, std::int32_t> parse_array_tasks(
    std::string_view text, const std::string& where) {
  const auto bad = [&](const std::string& why) {
    throw invalid_value_error(error_id::parse, where, "array_task_string", std::string(text), why);
  };
  std::int32_t limit = 0;
  if (const auto pct = text.find('%'); pct != std::string_view::npos) {
    const auto l = text.substr(pct + 1);
    if (l.empty() || l.size() > 9) bad("expected a number after %");
    for (char c : l) {
      if (c < '0' || c > '9') bad("expected a number after %");
      limit = limit * 10 + (c - '0');
    }
    text = text.substr(0, pct);
  }
  std::vector<std::int64_t> out;
  if (text.substr(0, 2) == "0x" || text.substr(0, 2) == "0X") {  // bit i set: task i
    const auto hex = text.substr(2);
    if (hex.empty()) bad("an empty hex mask");
    if (hex.size() * 4 > max_array_tasks) bad("too many tasks");
    for (std::size_t k = 0; k < hex.size(); ++k) {
      const char c = hex[hex.size() - 1 - k];
      int v = 0;
      if (c >= '0' && c <= '9')
        v = c - '0';
      else if (c >= 'a' && c <= 'f')
        v = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        v = c - 'A' + 10;
      else
        bad("not a hex digit: '" + std::string(1, c) + "'");
      for (int b = 0; b < 4; ++b) {
        if ((v >> b) & 1) out.push_back(static_cast<std::int64_t>(k * 4) + b);
      }
    }
    return {out, limit};
  }
  const auto number = [&](std::string_view v) {
    if (v.empty() || v.size() > 9) bad("expected task ids");
    std::int64_t n = 0;
    for (char c : v) {
      if (c < '0' || c > '9') bad("expected task ids");
      n = n * 10 + (c - '0');
    }
    return n;
  };
  while (!text.empty()) {
    const auto comma = text.find(',');
    const auto item = text.substr(0, comma);
    const auto dash = item.find('-');
    const std::int64_t lo = number(item.substr(0, dash));
    const std::int64_t hi = dash == std::string_view::npos ? lo : number(item.substr(dash + 1));
    if (hi < lo) bad("a range that ends before it starts");
    if (out.size() + static_cast<std::size_t>(hi - lo + 1) > max_array_tasks) bad("too many tasks");
    for (std::int64_t t = lo; t <= hi; ++t) out.push_back(t);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (out.empty()) bad("no task");
  return {out, limit};
}

/// @brief What a held job's dependency allows now.
struct dependency_verdict {
  /// What the dependency allows.
  enum class kind : std::uint8_t {
    satisfied,   ///< it may start (no dependency, or every item holds)
    waiting,     ///< not yet: a job it names has not started or finished as needed
    never,       ///< it can never be satisfied (a job it names finished the wrong way)
    unsupported  ///< a kind the bridge does not decide (`?`, `+minutes`, `singleton`, ...)
  };
  /// The verdict.
  kind what = kind::satisfied;
  /// Why (empty when satisfied): the dependency and the job that decides it.
  std::string why;
};

namespace detail {

inline bool job_finished(std::string_view state) {
  static constexpr std::string_view finished[] = {
      "COMPLETED", "CANCELLED", "FAILED",        "TIMEOUT", "NODE_FAIL",   "PREEMPTED",
      "BOOT_FAIL", "DEADLINE",  "OUT_OF_MEMORY", "REVOKED", "SPECIAL_EXIT"};
  return std::find(std::begin(finished), std::end(finished), state) != std::end(finished);
}

}  // namespace detail

/// @brief Decides the dependency of `j` on the snapshot `jobs` (every record read, with
/// finished jobs still listed until Slurm's `MinJobAge`); see the file comment.
/// O(items x records of the jobs they name).
[[nodiscard]] inline dependency_verdict evaluate_dependency(const job_record& j,
                                                            std::span<const job_record> jobs) {
  using kind = dependency_verdict::kind;
  if (j.dependency.empty()) return {};
  if (j.dependency.find('?') != std::string::npos) {
    return {kind::unsupported, "'" + j.dependency + "': '?' (any of) is not modelled"};
  }
  // the records a job spec names: "12", "7_3", "7_*" (and "7" for the whole array 7)
  const auto records_of = [&](std::string_view spec) {
    std::vector<const job_record*> out;
    const auto us = spec.find('_');
    const std::string id_text(spec.substr(0, us));
    std::int64_t id = 0;
    try {
      id = std::stoll(id_text);
    } catch (const std::exception&) {
      return out;
    }
    const std::string task = us == std::string_view::npos ? "*" : std::string(spec.substr(us + 1));
    for (const auto& r : jobs) {
      const bool whole = task == "*";
      if (r.array_job_id == id) {
        if (whole) {
          out.push_back(&r);
        } else if (r.array_task_id && std::to_string(*r.array_task_id) == task) {
          out.push_back(&r);
        } else if (!r.array_task_id && !r.array_tasks.empty()) {  // an unsplit task
          try {
            const auto tasks =
                parse_array_tasks(r.array_tasks, "job " + std::to_string(r.id)).first;
            if (std::find(tasks.begin(), tasks.end(), std::stoll(task)) != tasks.end()) {
              out.push_back(&r);
            }
          } catch (const std::exception&) {
          }
        }
      } else if (r.id == id && whole) {  // a job, or an array task by its own job id
        out.push_back(&r);
      }
    }
    return out;
  };
  std::string_view rest = j.dependency;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (item.empty()) continue;
    if (const auto paren = item.find('('); paren != std::string_view::npos) {
      item = item.substr(0, paren);  // Slurm's "(unfulfilled)": never tested while held
    }
    const auto colon = item.find(':');
    const std::string type(item.substr(0, colon));
    if (type != "after" && type != "afterany" && type != "afterok" && type != "afternotok") {
      return {kind::unsupported, "'" + std::string(item) + "': '" + type + "' is not modelled"};
    }
    if (colon == std::string_view::npos) {
      return {kind::unsupported, "'" + std::string(item) + "': no job named"};
    }
    std::string_view specs = item.substr(colon + 1);
    while (!specs.empty()) {
      const auto c2 = specs.find(':');
      const std::string_view spec = specs.substr(0, c2);
      specs = c2 == std::string_view::npos ? std::string_view{} : specs.substr(c2 + 1);
      if (spec.find('+') != std::string_view::npos) {
        return {kind::unsupported,
                "'" + std::string(item) + "': a delay (+minutes) is not modelled"};
      }
      for (const job_record* d : records_of(spec)) {
        const bool finished = detail::job_finished(d->state);
        const bool pending = d->state == "PENDING" || d->state == "REQUEUED" ||
                             d->state == "REQUEUE_HOLD" || d->state == "REQUEUE_FED";
        const std::string who =
            type + ":" + std::string(spec) + " (job " + slurm_name(*d) + " is " + d->state + ")";
        if (type == "after") {
          if (pending) return {kind::waiting, who};
        } else if (!finished) {
          return {kind::waiting, who};
        } else if (type == "afterok" && d->state != "COMPLETED") {
          return {kind::never, who};
        } else if (type == "afternotok" && d->state == "COMPLETED") {
          return {kind::never, who};
        }
      }
    }
  }
  return {};
}

/// @brief The sentence reporting a dependency that is not satisfied: what the verdict means
/// for the job, then `dependency_verdict::why`; empty when satisfied. O(length).
[[nodiscard]] inline std::string dependency_problem(const dependency_verdict& v) {
  switch (v.what) {
    case dependency_verdict::kind::waiting:
      return "waits for its dependency, " + v.why;
    case dependency_verdict::kind::never:
      return "its dependency can never be satisfied, " + v.why +
             " (Slurm's DependencyNeverSatisfied: cancel the job or change its dependency)";
    case dependency_verdict::kind::unsupported:
      return "a dependency the bridge does not decide, " + v.why;
    case dependency_verdict::kind::satisfied:
      break;
  }
  return {};
}

/// @brief What `expand_arrays` leaves out of a cycle: the held tasks beyond their array's
/// `%N` limit, by model id, each with why.
struct array_expansion {
  /// Model id of each held task not offered this cycle -> why: its array's limit and how many
  /// of its tasks run now.
  std::map<std::int64_t, std::string> waiting;
};

/// @brief Splits, in the model, the held record of each array's unsplit tasks into one record
/// per task (model ids from `first_task_model_id` up, skipping ids in use; `array_task_id`
/// set, `array_tasks` cleared), and marks the held tasks beyond an array's `%N` limit (see the
/// file comment): the tasks that hold or are about to hold resources count against the limit,
/// the held ones are offered in task order. The records of other jobs are kept as they are.
/// @throws invalid_value_error (parse) naming the job for an unreadable `array_task_string`.
/// O(records + tasks x log records).
[[nodiscard]] inline array_expansion expand_arrays(std::vector<job_record>& jobs) {
  array_expansion out;
  std::set<std::int64_t> used;
  for (const auto& j : jobs) used.insert(j.id);
  std::int64_t next = first_task_model_id;
  const auto is_held = [](const job_record& j) {
    return j.state == "PENDING" && j.priority == 0 &&
           (j.state_reason == "JobHeldUser" || j.state_reason == "JobHeldAdmin");
  };
  std::vector<job_record> result;
  result.reserve(jobs.size());
  for (auto& j : jobs) {
    if (j.array_job_id == 0 || j.array_task_id || j.array_tasks.empty() || !is_held(j)) {
      result.push_back(std::move(j));
      continue;
    }
    const auto tasks = parse_array_tasks(j.array_tasks, "job " + std::to_string(j.id)).first;
    for (const auto t : tasks) {
      while (used.contains(next)) ++next;
      job_record task = j;
      task.id = next++;
      task.array_task_id = t;
      task.array_tasks.clear();
      result.push_back(std::move(task));
    }
  }
  jobs = std::move(result);
  // the %N limit: Slurm reports it on every record of the array while its pending record
  // lives; the tasks running (or released, not yet started) count, the held ones wait in order
  struct array_state {
    std::int32_t limit = 0;
    std::int64_t active = 0;
    std::vector<const job_record*> held;
  };
  std::map<std::int64_t, array_state> arrays;
  for (const auto& j : jobs) {
    if (j.array_job_id == 0) continue;
    auto& a = arrays[j.array_job_id];
    a.limit = std::max(a.limit, j.array_max_tasks);
    if (is_held(j)) {
      a.held.push_back(&j);
    } else if (!detail::job_finished(j.state) && j.state != "PREEMPTED") {
      ++a.active;
    }
  }
  for (auto& [array, a] : arrays) {
    if (a.limit <= 0) continue;
    std::sort(a.held.begin(), a.held.end(), [](const job_record* x, const job_record* y) {
      return x->array_task_id.value_or(0) < y->array_task_id.value_or(0);
    });
    const auto room = static_cast<std::size_t>(std::max<std::int64_t>(0, a.limit - a.active));
    for (std::size_t k = room; k < a.held.size(); ++k) {
      out.waiting.emplace(a.held[k]->id, "array " + std::to_string(array) + " runs at most " +
                                             std::to_string(a.limit) + " of its tasks at once (%" +
                                             std::to_string(a.limit) + "), " +
                                             std::to_string(a.active) + " run now");
    }
  }
  return out;
}

}  // namespace slurm

GPUSCHED_END_NAMESPACE
