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
  /// The Slurm job it acts on (the model's id; for an array task, see `target`).
  std::int64_t job = 0;
  /// The command and its arguments, ready to run (no shell).
  std::vector<std::string> argv;
  /// The job as the command names it (`12`, or `7_3` for task 3 of array 7).
  std::string target;
  /// For a `set_nodes` that also moves a job naming several partitions into one: the job's
  /// partition list before (`a,b`), which `clear_nodes` puts back. Empty otherwise.
  std::string partition_before;

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

/// The name of an action in JSON lines (`set-nodes`, `release`, `signal`, `requeue-hold`).
[[nodiscard]] constexpr std::string_view to_string(command::action a) noexcept {
  switch (a) {
    case command::action::set_nodes: return "set-nodes";
    case command::action::release: return "release";
    case command::action::signal: return "signal";
    case command::action::requeue: return "requeue-hold";
  }
  return "?";
}

/// @brief The plan of one cycle's decisions; every command names its job by
/// `model::address` (`7_3` for an array task). O(decisions + tasks + victims).
[[nodiscard]] inline cycle_plan plan_commands(const model& m, const cycle_result& r,
                                              const plan_options& opt = {}) {
  cycle_plan plan;
  std::vector<job_id> victims;
  for (const auto& d : r.decisions) {
    if (d.kind != verdict::admit) continue;
    for (job_id v : d.victims) {
      if (std::find(victims.begin(), victims.end(), v) == victims.end()) victims.push_back(v);
    }
  }
  for (const auto v : victims) {
    const auto id = static_cast<std::int64_t>(v.value());
    const std::string name = m.address(v);
    plan.signals.push_back({command::action::signal, id,
                            {"scancel", "--signal=" + opt.signal, "--full", name}, name, {}});
    plan.requeues.push_back(
        {command::action::requeue, id, {"scontrol", "requeuehold", name}, name, {}});
  }
  if (!victims.empty()) plan.grace_seconds = opt.grace_seconds;
  for (const auto& d : r.decisions) {
    if (d.kind != verdict::admit) continue;
    const auto id = static_cast<std::int64_t>(d.job.value());
    const std::string name = m.address(d.job);
    command set{command::action::set_nodes, id, {"scontrol", "update", "JobId=" + name}, name, {}};
    const auto it = m.jobs.find(id);
    // a job naming several partitions goes to the one that chose its nodes (Slurm tries the
    // node list in the job's first partition only)
    if (it != m.jobs.end() && !m.partition.empty() &&
        it->second.partition.find(',') != std::string::npos) {
      set.argv.push_back("Partition=" + m.partition);
      set.partition_before = it->second.partition;
    }
    set.argv.push_back("NodeList=" + join_hostlist(distinct_nodes(m, d.placement)));
    // Slurm delays a requeued job (reason BeginTime); the decision is to start it now
    if (it != m.jobs.end() && it->second.restart_count > 0) set.argv.push_back("StartTime=now");
    plan.starts.push_back(std::move(set));
    plan.starts.push_back({command::action::release, id, {"scontrol", "release", name}, name, {}});
  }
  return plan;
}

/// The command that undoes a `set_nodes` (an empty node list, and the partition list back),
/// for a release that failed.
[[nodiscard]] inline command clear_nodes(const command& set) {
  command c{command::action::set_nodes, set.job, {"scontrol", "update", "JobId=" + set.target},
            set.target, {}};
  if (!set.partition_before.empty()) c.argv.push_back("Partition=" + set.partition_before);
  c.argv.push_back("NodeList=");
  return c;
}

/// @brief A command as a JSON object: `{"event":"command", "action", "job", "argv", "text",
/// "dry_run"}`; the caller adds the outcome (`status`, `error`) once it ran. O(arguments).
[[nodiscard]] inline nlohmann::json command_json(const command& c, bool dry_run) {
  return {{"event", "command"}, {"action", std::string(to_string(c.what))},
          {"job", c.target},    {"argv", c.argv},
          {"text", c.text()},   {"dry_run", dry_run}};
}

/// @brief A job left alone (or a node left out) as a JSON object: `{"event":"issue", "job"
/// (null for a node), "verdict":"left-held", "field", "describe"}`. O(message).
[[nodiscard]] inline nlohmann::json issue_json(const job_issue& i) {
  nlohmann::json o{{"event", "issue"}, {"verdict", "left-held"}, {"field", i.field},
                   {"describe", i.message}};
  o["job"] = i.job == 0 ? nlohmann::json(nullptr) : nlohmann::json(i.slurm_job.empty() ? std::to_string(i.job) : i.slurm_job);
  if (i.job == 0) o["verdict"] = "left-out";
  return o;
}

/// @brief `text` with every `job <id>` of a model id that Slurm names otherwise rewritten to
/// that name (`job 4026531841` -> `job 7_3`). O(length).
[[nodiscard]] inline std::string with_slurm_names(const model& m, const std::string& text) {
  if (m.addresses.empty()) return text;
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto at = text.find("job ", i);
    if (at == std::string::npos) break;
    std::size_t e = at + 4;
    while (e < text.size() && text[e] >= '0' && text[e] <= '9') ++e;
    out.append(text, i, at + 4 - i);
    const std::string digits = text.substr(at + 4, e - at - 4);
    if (!digits.empty() && digits.size() <= 10) {
      const auto v = std::stoull(digits);
      const auto it = v <= 0xFFFFFFFFull ? m.addresses.find(static_cast<std::uint32_t>(v))
                                         : m.addresses.end();
      out += it == m.addresses.end() ? digits : it->second;
    } else {
      out += digits;
    }
    i = e;
  }
  out.append(text, i, std::string::npos);
  return out;
}

/// @brief One decision as a line of text: `describe()` with jobs by their Slurm names.
[[nodiscard]] inline std::string decision_text(const model& m, const decision& d) {
  const job_spec* spec = nullptr;
  for (const auto& p : m.pending) {
    if (p.id == d.job) spec = &p;
  }
  return with_slurm_names(m, describe(d, m.book.state(), spec));
}

/// @brief One decision as a JSON object: `{"event":"decision"}` with the job (its Slurm name,
/// a string: `12`, `7_3`), verdict, reason code and `describe()` sentence, nodes (distinct, in
/// task order), victims (Slurm names), tenant. O(tasks + victims).
[[nodiscard]] inline nlohmann::json decision_json(const model& m, const decision& d) {
  nlohmann::json o;
  o["event"] = "decision";
  o["job"] = m.address(d.job);
  const job_spec* spec = nullptr;
  for (const auto& p : m.pending) {
    if (p.id == d.job) spec = &p;
  }
  o["verdict"] = d.kind == verdict::admit ? "admit" : d.kind == verdict::defer ? "defer" : "reject";
  o["reason"] = std::string(to_string(d.why.code));
  o["describe"] = decision_text(m, d);
  o["nodes"] = distinct_nodes(m, d.placement);
  auto v = nlohmann::json::array();
  for (job_id x : d.victims) v.push_back(m.address(x));
  o["victims"] = v;
  if (spec != nullptr) o["tenant"] = m.tenant_name(spec->tenant);
  if (!m.partition.empty()) o["partition"] = m.partition;
  return o;
}

}  // namespace slurm

GPUSCHED_END_NAMESPACE
