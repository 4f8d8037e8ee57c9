// SPDX-License-Identifier: Apache-2.0
/// @file
/// One scheduling cycle over a Slurm cluster's partitions: what `gpusched-slurm` runs each
/// cycle, from the snapshot (`sinfo --json`, `squeue --json`, `scontrol show partition`) to the
/// decisions and the commands.
///
/// Each selected partition (all of them, or the ones `--partition` names; Slurm's order:
/// higher `PriorityTier` first, then as listed) is scheduled in turn on a model of its own
/// nodes (`build_model` with the partition's limits), so a job is placed only on nodes of a
/// partition it names. The partitions see each other's choices: a job admitted in one is in
/// flight on its nodes in the models built after it (nodes may belong to several partitions),
/// a victim preempted in one is gone from the later ones, and a job naming several
/// partitions (`-p a,b`) that one of them admits is not offered to the next. A job is
/// reported once: its admission, else its decision in the last partition that tried it; a
/// job that can start in none of its partitions (limits, state, GPU type or count) is an
/// issue naming each partition's reason. Fair share and reservations are per partition (each
/// partition's policies see the jobs on its nodes).
///
/// A job naming several partitions is moved to the one that admitted it with the node list
/// (`scontrol update JobId=<id> Partition=<p> NodeList=<nodes>`: Slurm 22.05 tries such a job's
/// node list in its first partition only, where nodes of another never satisfy it); undoing a
/// failed release restores its partition list.
///
/// Arrays and dependencies (arrays.hpp) are decided once per cycle, before any partition:
/// the held record of each array's unsplit tasks becomes one job per task (`expand_arrays`),
/// and the held jobs whose dependency is not satisfied, or beyond their array's `%N` limit,
/// are left held and reported (`hold_back`), on the snapshot as Slurm gave it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/pipeline/pipeline.hpp"
#include "gpusched/slurm/commands.hpp"
#include "gpusched/slurm/model.hpp"
#include "gpusched/slurm/partitions.hpp"
#include "gpusched/slurm/snapshot.hpp"

GPUSCHED_BEGIN_NAMESPACE

namespace slurm {

/// @brief What `schedule_cycle` needs besides the snapshot.
struct cycle_options {
  /// The partitions to schedule, comma-separated (empty: every partition).
  std::string partitions;
  /// The snapshot's time (Unix seconds).
  std::int64_t now_unix = 0;
  /// Checkpoint signal and grace of the plan.
  plan_options plan{};
};

/// @brief One partition's part of a cycle: its model and its pipeline's result.
struct partition_cycle {
  /// The partition scheduled.
  const partition_record* partition = nullptr;
  /// The model of its nodes and jobs (as the earlier partitions of the cycle left them).
  model m;
  /// Its pipeline's decisions.
  cycle_result result;
};

/// @brief A cycle over the partitions.
struct cycle_outcome {
  /// One run per partition scheduled, in order.
  std::vector<partition_cycle> runs;
  /// Jobs left held (and nodes left out), each once.
  std::vector<job_issue> issues;
  /// The decision reported for each job, as (run, position in that run's decisions), in
  /// cycle order: its admission, else its last decision.
  std::vector<std::pair<std::size_t, std::size_t>> reported;
  /// Every command of the cycle (signals, one grace, requeues, starts).
  cycle_plan plan;

  /// The reported decision `k` and the model that made it.
  [[nodiscard]] std::pair<const model*, const decision*> decision_at(std::size_t k) const {
    const auto [r, i] = reported[k];
    return {&runs[r].m, &runs[r].result.decisions[i]};
  }
};

/// @brief Runs one cycle over the selected partitions (see the file comment); `schedule` is
/// called once per partition as `schedule(model&) -> cycle_result` (a pipeline's `schedule`
/// on `m.book`, `m.pending`, `m.now`).
/// @throws invalid_value_error (unknown_name) for an unknown partition in
/// `cycle_options::partitions`, before anything is scheduled; (parse) for an unreadable
/// `array_task_string`; whatever `build_model` throws.
/// O(partitions x (nodes + jobs) + the pipelines).
template <class Schedule>
[[nodiscard]] cycle_outcome schedule_cycle(std::span<const node_record> nodes,
                                           std::vector<job_record> jobs,
                                           const std::vector<partition_record>& partitions,
                                           const cycle_options& opt, Schedule&& schedule) {
  cycle_outcome out;
  const auto selected = select_partitions(partitions, opt.partitions);
  const auto arrays = expand_arrays(jobs);
  const held_back_jobs held = hold_back(jobs, arrays);
  std::unordered_map<std::int64_t, std::size_t> by_id;
  for (std::size_t k = 0; k < jobs.size(); ++k) by_id.emplace(jobs[k].id, k);
  out.runs.reserve(selected.size());
  std::set<std::int64_t> offered;  // held jobs some partition could consider
  for (const partition_record* p : selected) {
    partition_cycle run;
    run.partition = p;
    run.m = build_model(
        nodes, jobs,
        {.partition = p->name, .now_unix = opt.now_unix, .limits = p, .held_back = &held});
    for (const auto& j : run.m.pending) offered.insert(static_cast<std::int64_t>(j.id.value()));
    run.result = schedule(run.m);
    // what the later partitions see: admitted jobs in flight on their nodes, victims gone
    for (const auto& d : run.result.decisions) {
      if (d.kind != verdict::admit) continue;
      if (const auto it = by_id.find(static_cast<std::int64_t>(d.job.value())); it != by_id.end()) {
        job_record& j = jobs[it->second];
        j.priority = 1;
        j.state_reason = "None";
        j.required_nodes = join_hostlist(distinct_nodes(run.m, d.placement));
      }
      for (job_id v : d.victims) {
        if (const auto it = by_id.find(static_cast<std::int64_t>(v.value())); it != by_id.end()) {
          jobs[it->second].state = "PREEMPTED";  // neither running nor held from here on
        }
      }
    }
    out.runs.push_back(std::move(run));
  }

  // --- issues, each once; jobs that can start nowhere ---------------------------------------
  std::set<std::pair<std::int64_t, std::string>> seen;
  std::set<std::int64_t> issued;
  for (const auto& [id, i] : held) {  // the jobs of the partitions scheduled
    const job_record& j = jobs[by_id.at(id)];
    if (std::none_of(selected.begin(), selected.end(), [&](const partition_record* p) {
          return detail::in_partition(j.partition, p->name);
        })) {
      continue;
    }
    out.issues.push_back(i);
    issued.insert(id);
  }
  for (const auto& run : out.runs) {
    for (const auto& i : run.m.issues) {
      if (!seen.insert({i.job, i.job == 0 ? i.message : i.field}).second) continue;
      out.issues.push_back(i);
      if (i.job != 0) issued.insert(i.job);
    }
  }
  std::map<std::int64_t, std::vector<const job_issue*>> nowhere;
  for (const auto& run : out.runs) {
    for (const auto& i : run.m.not_here) {
      if (!offered.contains(i.job) && !issued.contains(i.job)) nowhere[i.job].push_back(&i);
    }
  }
  for (const auto& [id, reasons] : nowhere) {
    const job_record& j = jobs[by_id.at(id)];
    std::string msg = "job " + slurm_name(j) + (j.name.empty() ? "" : " '" + j.name + "'") +
                      ": field '" + reasons.front()->field + "': ";
    for (std::size_t k = 0; k < reasons.size(); ++k) {
      msg += (k == 0 ? "" : "; ") + reasons[k]->message;
    }
    out.issues.push_back(
        {id, reasons.front()->field, msg + "; the job is left held", slurm_name(j)});
  }

  // --- one decision per job -----------------------------------------------------------------
  std::unordered_map<std::uint32_t, std::pair<std::size_t, std::size_t>> chosen;
  for (std::size_t r = 0; r < out.runs.size(); ++r) {
    const auto& ds = out.runs[r].result.decisions;
    for (std::size_t i = 0; i < ds.size(); ++i) {
      const auto it = chosen.find(ds[i].job.value());
      if (it == chosen.end()) {
        chosen.emplace(ds[i].job.value(), std::pair{r, i});
      } else if (out.runs[it->second.first].result.decisions[it->second.second].kind !=
                 verdict::admit) {
        it->second = {r, i};
      }
    }
  }
  for (const auto& [id, at] : chosen) out.reported.push_back(at);
  std::sort(out.reported.begin(), out.reported.end());

  // --- the commands: every partition's, signals first, one grace ----------------------------
  for (const auto& run : out.runs) {
    const auto plan = plan_commands(run.m, run.result, opt.plan);
    out.plan.signals.insert(out.plan.signals.end(), plan.signals.begin(), plan.signals.end());
    out.plan.requeues.insert(out.plan.requeues.end(), plan.requeues.begin(), plan.requeues.end());
    out.plan.starts.insert(out.plan.starts.end(), plan.starts.begin(), plan.starts.end());
    out.plan.grace_seconds = std::max(out.plan.grace_seconds, plan.grace_seconds);
  }
  return out;
}

}  // namespace slurm

GPUSCHED_END_NAMESPACE
