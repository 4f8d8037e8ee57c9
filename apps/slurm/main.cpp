// SPDX-License-Identifier: Apache-2.0
// gpusched-slurm: schedules a live Slurm cluster with gpusched's policies (the external-scheduler
// pattern: jobs are held at submission; this program sets each admitted job's node list and
// releases it, and preempts by signal-then-requeue). See README.md, "Driving a live Slurm".
//
//   gpusched-slurm [--once | --interval SECONDS] [--dry-run] [--json]
//                  [--policy ordering=drf,admission=gang-easy,placement=topology,preemption=...]
//                  [--partition NAME[,NAME...]] [--topology FILE] [--signal SIG] [--grace SECONDS]
//                  [--timeout SECONDS]
//   gpusched-slurm gres-links --nodes HOSTLIST [--type T] (--topo FILE | --model NAME)
//                  [--file-prefix /dev/nvidia]
//
// Options are checked before Slurm is asked (include/gpusched/slurm/options.hpp): each at most
// once; --interval 0.1 to 86400 s, --grace 0 to 3600 s, --timeout 1 to 3600 s (decimal, whole
// text); --once and --interval, --topo and --model exclude each other; a policy slot at most
// once; a file option naming a directory is refused; gres-links values hold no control character.
//
// Exit status: 0 after a clean run; 1 when Slurm did not answer, answered something unreadable,
// or a command failed; 2 for a usage error (an unknown --partition included).
//
// --json: stdout carries only JSON objects, one a line, each with an "event": "issue" (a job
// left held, a node left out), "decision", "command" (with "dry_run", and once it ran
// "status" ok / failed / timed-out and "error"), "wait" (the grace period), "error", "stopped".
// Jobs are named as Slurm names them, as strings ("12", "7_3"). The human text goes to stderr.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <gpusched/core/random.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/topology/node_topology.hpp>
#include <gpusched/topology/topo_text.hpp>
#include <gpusched/slurm/commands.hpp>
#include <gpusched/slurm/cycle.hpp>
#include <gpusched/slurm/gres_links.hpp>
#include <gpusched/slurm/model.hpp>
#include <gpusched/slurm/options.hpp>
#include <gpusched/slurm/snapshot.hpp>

namespace gs = gpusched;
namespace sl = gpusched::slurm;

namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_term(int) { g_stop = 1; }

// The options, their ranges and the checks: include/gpusched/slurm/options.hpp.
using options = sl::bridge_options;

struct run_result {
  int status = -1;  ///< exit status; -1 when killed or not started
  bool timed_out = false;
  std::string out, err;
};

/// Runs argv (PATH lookup) with stdin closed, capturing stdout and stderr; kills it after
/// `timeout` seconds. Never hangs.
run_result run(const std::vector<std::string>& argv, double timeout) {
  run_result r;
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) {
    r.err = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    r.err = std::string("fork: ") + std::strerror(errno);
    return r;
  }
  if (pid == 0) {
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  // timeout is within --timeout's range (options.hpp); to_millis guards the conversion anyway
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(gs::to_millis(timeout).value_or(0));
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      r.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    const int n = poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000)));
    if (n < 0 && errno != EINTR) break;
    for (auto& f : fds) {
      if (f.fd < 0 || (f.revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t got = read(f.fd, buf, sizeof buf);
      if (got <= 0) {
        close(f.fd);
        f.fd = -1;
        --open_fds;
        continue;
      }
      (f.fd == out_pipe[0] ? r.out : r.err).append(buf, static_cast<std::size_t>(got));
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (!r.timed_out && WIFEXITED(st)) r.status = WEXITSTATUS(st);
  return r;
}

std::string first_line(const std::string& s) {
  const auto e = s.find('\n');
  return s.substr(0, e);
}

/// Runs a read-only Slurm command and returns its stdout; throws with a clear message when
/// it fails or does not answer in time.
std::string query(const std::vector<std::string>& argv, double timeout) {
  const auto r = run(argv, timeout);
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  if (r.timed_out) {
    throw std::runtime_error("'" + cmd + "' did not answer within " + std::to_string(timeout) +
                             " s (is slurmctld running?); nothing was changed");
  }
  if (r.status != 0) {
    throw std::runtime_error("'" + cmd + "' failed (exit " + std::to_string(r.status) +
                             "): " + first_line(r.err.empty() ? r.out : r.err) +
                             "; nothing was changed");
  }
  return r.out;
}

void usage(std::ostream& o) {
  o << "usage: gpusched-slurm [--once | --interval SECONDS] [--dry-run] [--json]\n"
       "                      [--policy ordering=NAME,admission=NAME,packing=NAME,placement=NAME,"
       "preemption=NAME]\n"
       "                      [--partition NAME[,NAME...]] [--topology topology.conf] [--signal SIG]\n"
       "                      [--grace SECONDS] [--timeout SECONDS]\n"
       "       gpusched-slurm gres-links --nodes HOSTLIST [--type T] (--topo FILE | --model "
       "NAME) [--file-prefix /dev/nvidia]\n"
       "Schedules the held jobs of a live Slurm with gpusched's policies (SLURM_CONF is "
       "honoured).\n"
       "Options (each at most once; numbers are decimal seconds within the range shown):\n"
    << sl::options_help(sl::kBridgeOptions)
    << "Options of gres-links (values written into gres.conf hold no control character):\n"
    << sl::options_help(sl::kGresLinksOptions);
}

/// `gres-links`: gres.conf lines with Links= from `nvidia-smi topo -m` output or a known model.
int gres_links_command(const std::vector<std::string>& args) {
  const auto o = sl::parse_gres_links_options(std::span(args).subspan(1));
  if (o.help) {
    usage(std::cout);
    return 0;
  }
  const std::string &nodes = o.nodes, &type = o.type, &topo = o.topo, &model = o.model,
                    &prefix = o.file_prefix;
  std::optional<gs::node_topology> t;
  if (!topo.empty()) {
    auto in = gs::open_input(topo);  // a directory is called one
    std::stringstream ss;
    ss << in.rdbuf();
    t = gs::parse_topo_matrix(ss.str(), {.name = topo, .file = topo}).topology;
  } else if (model == "dgx1-v100") {
    t = gs::dgx1_v100();
  } else if (model == "dgx-a100") {
    t = gs::dgx_a100();
  } else if (model == "dgx-h100") {
    t = gs::dgx_h100();
  } else if (model == "pcie-8gpu") {
    t = gs::pcie_dual_socket_8gpu();
  } else {
    throw std::invalid_argument("gres-links: unknown model '" + model +
                                "' (dgx1-v100, dgx-a100, dgx-h100, pcie-8gpu)");
  }
  std::cout << sl::gres_links(*t, nodes, type, prefix);
  return 0;
}

/// Where the program writes: with --json, JSON objects (one a line) on stdout and the human
/// text on stderr; without, the human text on stdout. Errors go to stderr either way.
struct output {
  bool json = false;
  /// One JSON line (with --json only).
  void object(const nlohmann::json& j) const {
    if (!json) return;
    std::cout << j.dump() << "\n";
    std::cout.flush();
  }
  /// One line of human text.
  void text(const std::string& line) const {
    (json ? std::cerr : std::cout) << line << "\n";
    (json ? std::cerr : std::cout).flush();
  }
  /// An error: on stderr, and as `{"event":"error"}` with --json.
  void error(const std::string& message) const {
    std::cerr << "gpusched-slurm: " << message << "\n";
    std::cerr.flush();
    object({{"event", "error"}, {"describe", message}});
  }
};

/// One cycle; returns the exit status.
int cycle(const options& o, const output& out) {
  // each answer is read as soon as it comes: the first failure is the one reported
  auto jobs = sl::parse_squeue(query({"squeue", "--json"}, o.timeout));
  const auto nodes = sl::parse_sinfo(query({"sinfo", "--json"}, o.timeout));
  const auto partitions =
      sl::parse_partitions(query({"scontrol", "--all", "--oneliner", "show", "partition"}, o.timeout));
  std::string topology_text;
  if (!o.topology.empty()) {
    std::error_code ec;
    if (std::filesystem::is_directory(o.topology, ec)) {
      throw std::runtime_error("topology file '" + o.topology + "' is a directory, not a file");
    }
    std::ifstream in(o.topology);
    if (!in) throw std::runtime_error("cannot read topology file '" + o.topology + "'");
    std::stringstream ss;
    ss << in.rdbuf();
    topology_text = ss.str();
  }
  gs::policy_registry reg;
  const auto outcome = sl::schedule_cycle(
      nodes, std::move(jobs), partitions,
      {.partitions = o.partition,
       .now_unix = static_cast<std::int64_t>(std::time(nullptr)),
       .plan = {.signal = o.signal, .grace_seconds = o.grace}},
      [&](sl::model& m) {
        gs::policy_inputs inputs;
        if (!o.topology.empty()) {
          auto topo = std::make_shared<gs::topology_model>(
              sl::parse_topology_conf(topology_text, m.book.state()));
          topo->check(m.book.state());
          inputs.topology = topo;
        }
        auto pipe = reg.make_pipeline(o.policy, inputs);  // one per partition: no shared state
        gs::random_engine rng(1);
        return pipe.schedule(m.book, m.pending, m.now, rng);
      });
  for (const auto& i : outcome.issues) {
    out.object(sl::issue_json(i));
    out.text("issue: " + i.message);
  }
  for (std::size_t k = 0; k < outcome.reported.size(); ++k) {
    const auto [m, d] = outcome.decision_at(k);
    out.object(sl::decision_json(*m, *d));
    out.text(sl::decision_text(*m, *d));
  }
  const auto& plan = outcome.plan;
  if (o.dry_run) {
    const auto show = [&](const sl::command& c) {
      out.object(sl::command_json(c, true));
      out.text("would run: " + c.text());
    };
    for (const auto& c : plan.signals) show(c);
    if (plan.grace_seconds > 0) {
      out.object({{"event", "wait"}, {"seconds", plan.grace_seconds}, {"dry_run", true}});
      out.text("would wait: " + std::to_string(plan.grace_seconds) + " s");
    }
    for (const auto& c : plan.requeues) show(c);
    for (const auto& c : plan.starts) show(c);
    return 0;
  }
  int status = 0;
  const auto exec = [&](const sl::command& c) {
    out.text("run: " + c.text());
    const auto r = run(c.argv, o.timeout);
    auto j = sl::command_json(c, false);
    if (r.status == 0) {
      j["status"] = "ok";
      out.object(j);
      return true;
    }
    const std::string why = r.timed_out ? std::string("did not answer in time")
                                        : "failed: " + first_line(r.err.empty() ? r.out : r.err);
    j["status"] = r.timed_out ? "timed-out" : "failed";
    if (!r.timed_out) j["exit"] = r.status;
    j["error"] = why;
    out.object(j);
    std::cerr << "gpusched-slurm: '" << c.text() << "' " << why << "\n";
    status = 1;
    return false;
  };
  for (const auto& c : plan.signals) exec(c);
  if (plan.grace_seconds > 0) {
    out.object({{"event", "wait"}, {"seconds", plan.grace_seconds}, {"dry_run", false}});
    std::this_thread::sleep_for(
        std::chrono::milliseconds(gs::to_millis(plan.grace_seconds).value_or(0)));
  }
  std::vector<std::int64_t> not_requeued;  // victims still running: their nodes are not free
  for (const auto& c : plan.requeues) {
    if (!exec(c)) not_requeued.push_back(c.job);
  }
  for (std::size_t k = 0; k + 1 < plan.starts.size(); k += 2) {
    const auto& set = plan.starts[k];
    const auto& release = plan.starts[k + 1];
    // a job admitted on the nodes of a victim that was not requeued stays held
    std::string blocked;
    for (std::size_t r = 0; r < outcome.reported.size(); ++r) {
      const auto [m, d] = outcome.decision_at(r);
      if (static_cast<std::int64_t>(d->job.value()) != set.job) continue;
      for (gs::job_id v : d->victims) {
        if (std::find(not_requeued.begin(), not_requeued.end(),
                      static_cast<std::int64_t>(v.value())) != not_requeued.end()) {
          blocked = m->address(v);
        }
      }
    }
    if (!blocked.empty()) {
      out.error("job " + set.target + " stays held: its victim " + blocked +
                " was not requeued");
      status = 1;
      continue;
    }
    // the release only after the whole node list was set: nothing is half-released
    if (!exec(set)) {
      out.error("job " + set.target + " stays held");
      continue;
    }
    if (!exec(release)) {
      // not released: take the node list back, so the job is held as it was
      if (exec(sl::clear_nodes(set))) {
        out.error("job " + set.target + " stays held (its node list was cleared)");
      } else {
        out.error("job " + set.target + " stays held, but its node list could not be cleared: "
                  "scontrol update JobId=" + set.target + " NodeList=");
      }
    }
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "gres-links") {
    try {
      return gres_links_command(args);
    } catch (const std::exception& e) {
      std::cerr << "gpusched-slurm: " << e.what() << "\n";
      return 2;
    }
  }
  try {
    o = sl::parse_bridge_options(args);
    if (o.help) {
      usage(std::cout);
      return 0;
    }
    gs::policy_registry reg;  // unknown policy names: a usage error before Slurm is asked
    reg.check<gs::ordering_tag>(o.policy.ordering);
    reg.check<gs::admission_tag>(o.policy.admission);
    reg.check<gs::packing_tag>(o.policy.packing);
    reg.check<gs::placement_tag>(o.policy.placement);
    reg.check<gs::preemption_tag>(o.policy.preemption);
  } catch (const std::exception& e) {
    std::cerr << "gpusched-slurm: " << e.what() << "\n";
    usage(std::cerr);
    return 2;
  }

  struct sigaction sa {};
  sa.sa_handler = on_term;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  const output out{.json = o.json};
  int status = 0;
  for (long cycles = 0;; ++cycles) {
    try {
      status = cycle(o, out);
    } catch (const gs::invalid_value_error& e) {  // unreadable or failed answer: nothing ran
      if (e.id() == gs::error_id::unknown_name && e.where() == "--partition") {
        out.error(e.what());  // a usage error found once Slurm answered
        return 2;
      }
      out.error(std::string(e.what()) + "; nothing was changed");
      status = 1;
      if (o.once) return status;
    } catch (const std::exception& e) {
      out.error(e.what());
      status = 1;
      if (o.once) return status;
    }
    if (o.once) return status;
    // sleep until the next cycle, ending cleanly between cycles on SIGTERM
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(gs::to_millis(o.interval).value_or(0));
    while (!g_stop && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (g_stop) {
      out.object({{"event", "stopped"}, {"cycles", cycles + 1}});
      std::cerr << "gpusched-slurm: stopped after " << cycles + 1 << " cycles\n";
      return 0;
    }
  }
}
