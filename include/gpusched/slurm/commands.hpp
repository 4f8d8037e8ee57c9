// SPDX-License-Identifier: Apache-2.0
/// @file
/// From one cycle's decisions to Slurm commands, and decisions as JSON lines.
///
/// The plan of a cycle, applied in this order by `gpusched-slurm`:
/// 1. every victim of every admitted decision gets its checkpoint signal
///    (`scancel --signal=<SIG> --full <id>`);
/// 2. when there were victims, the grace period is waited once;
/// 3. every victim is requeued held (`scontrol requeuehold <id>`: back to pending and held, so
///    that Slurm's own scheduler does not restart it; the next cycle schedules it again);
/// 4. for each admitted job, in decision order: `scontrol update JobId=<id> NodeList=<nodes>`
///    (with `StartTime=now` for a requeued job, which Slurm would otherwise hold back for a
///    while, reason `BeginTime`), then `scontrol release <id>`. A gang is released only after its whole node list was set;
///    if setting it fails, the job stays held (nothing half-released), and the next cycle
///    re-reads the truth from Slurm.
///
/// Slurm still chooses the GPU indices, CPUs and memory inside each node; the node list is the
/// part of the decision Slurm enforces.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpusched/config.hpp"
#include "gpusched/pipeline/pipeline.hpp"
#include "gpusched/policy/decision.hpp"
#include "gpusched/slurm/hostlist.hpp"
#include "gpusched/slurm/model.hpp"

GPUSCHED_BEGIN_NAMESPACE

namespace slurm {

/// @brief One Slurm command of a plan.
struct command {
  /// What a command does: `set_nodes` (`scontrol update ... NodeList=`), `release`
  /// (`scontrol release`), `signal` (`scancel --signal`) or `requeue` (`scontrol requeuehold`).
  enum class action : std::uint8_t { set_nodes, release, signal, requeue };
  /// What this command does.
  action what = action::release;
  /// The Slurm job it acts on.
  std::int64_t job = 0;
  /// The command and its arguments, ready to run (no shell).
  std::vector<std::string> argv;

  /// The command line as a shell would show it (arguments need no quoting).
  [[nodiscard]] std::string text() const {
    std::string out;
    for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
    return out;
  }
  friend bool operator==(const command&, const command&) = default;
};

/// @brief Checkpoint-signal settings of a plan.
struct plan_options {
  std::string signal = "USR1";  ///< sent to victims before they are requeued
  double grace_seconds = 10.0;  ///< time between the signal and the requeue
};

/// @brief The commands of one cycle (see the file comment for the order).
struct cycle_plan {
  /// Checkpoint signals to the victims, sent first.
  std::vector<command> signals;
  double grace_seconds = 0.0;  ///< wait after `signals` (0 without victims)
  /// Requeues of the victims (held), after the grace period.
  std::vector<command> requeues;
  std::vector<command> starts;  ///< set_nodes, release, set_nodes, release, ...

  /// True when the plan has no command.
  [[nodiscard]] bool empty() const noexcept {
    return signals.empty() && requeues.empty() && starts.empty();
  }
  /// Every command in application order.
  [[nodiscard]] std::vector<command> all() const {
    std::vector<command> out(signals);
    out.insert(out.end(), requeues.begin(), requeues.end());
    out.insert(out.end(), starts.begin(), starts.end());
    return out;
  }
};

/// The distinct node names of a placement, in task order.
[[nodiscard]] inline std::vector<std::string> distinct_nodes(const model& m,
                                                             const std::vector<task_allocation>& p) {
  std::vector<std::string> out;
  for (const auto& name : m.node_names(p)) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

/// @brief The plan of one cycle's decisions. O(decisions + tasks + victims).
[[nodiscard]] inline cycle_plan plan_commands(const model& m, const cycle_result& r,
                                              const plan_options& opt = {}) {
  cycle_plan plan;
  std::vector<std::int64_t> victims;
  for (const auto& d : r.decisions) {
    if (d.kind != verdict::admit) continue;
    for (job_id v : d.victims) {
      const auto id = static_cast<std::int64_t>(v.value());
      if (std::find(victims.begin(), victims.end(), id) == victims.end()) victims.push_back(id);
    }
  }
  for (const auto v : victims) {
    plan.signals.push_back({command::action::signal, v,
                            {"scancel", "--signal=" + opt.signal, "--full", std::to_string(v)}});
    plan.requeues.push_back({command::action::requeue, v,
                             {"scontrol", "requeuehold", std::to_string(v)}});
  }
  if (!victims.empty()) plan.grace_seconds = opt.grace_seconds;
  for (const auto& d : r.decisions) {
    if (d.kind != verdict::admit) continue;
    const auto id = std::to_string(d.job.value());
    command set{command::action::set_nodes, static_cast<std::int64_t>(d.job.value()),
                {"scontrol", "update", "JobId=" + id,
                 "NodeList=" + join_hostlist(distinct_nodes(m, d.placement))}};
    // Slurm delays a requeued job (reason BeginTime); the decision is to start it now
    if (const auto it = m.jobs.find(static_cast<std::int64_t>(d.job.value()));
        it != m.jobs.end() && it->second.restart_count > 0) {
      set.argv.push_back("StartTime=now");
    }
    plan.starts.push_back(std::move(set));
    plan.starts.push_back({command::action::release, static_cast<std::int64_t>(d.job.value()),
                           {"scontrol", "release", id}});
  }
  return plan;
}

/// The command that undoes a `set_nodes` (an empty node list), for a release that failed.
[[nodiscard]] inline command clear_nodes(std::int64_t job) {
  return {command::action::set_nodes, job,
          {"scontrol", "update", "JobId=" + std::to_string(job), "NodeList="}};
}

/// @brief One decision as a JSON object: job, verdict, reason code and `describe()` sentence,
/// nodes (distinct, in task order), victims, tenant. O(tasks + victims).
[[nodiscard]] inline nlohmann::json decision_json(const model& m, const decision& d) {
  nlohmann::json o;
  o["job"] = d.job.value();
  const job_spec* spec = nullptr;
  for (const auto& p : m.pending) {
    if (p.id == d.job) spec = &p;
  }
  o["verdict"] = d.kind == verdict::admit ? "admit" : d.kind == verdict::defer ? "defer" : "reject";
  o["reason"] = std::string(to_string(d.why.code));
  o["describe"] = describe(d, m.book.state(), spec);
  o["nodes"] = distinct_nodes(m, d.placement);
  auto v = nlohmann::json::array();
  for (job_id x : d.victims) v.push_back(x.value());
  o["victims"] = v;
  if (spec != nullptr) o["tenant"] = m.tenant_name(spec->tenant);
  return o;
}

}  // namespace slurm

GPUSCHED_END_NAMESPACE
