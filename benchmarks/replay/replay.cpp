// SPDX-License-Identifier: Apache-2.0
// Implementation of the replay command; options in kOptions below and in benchmarks/README.md.
#include "replay.hpp"

#include "cells.hpp"    // run_cells, grid_progress
#include "outputs.hpp"  // check_out_root, make_out_dirs, write_out_file, run_record

#include <algorithm>  // std::all_of
#include <atomic>
#include <cstdio>  // std::snprintf
#include <chrono>
#include <cmath>  // std::llround
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <new>  // std::bad_alloc
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include <gpusched/core/parse.hpp>
#include <gpusched/gpusched.hpp>

namespace gs = gpusched;

namespace gpusched_experiment {
namespace {


/// The greatest --max-cycles (about an hour of CPU at the cheapest cycle).
constexpr std::uint64_t kMaxCyclesLimit = 1'000'000'000;

struct options {
  std::string trace;
  std::string cluster = "250x8:V100-SXM2-32GB";
  double cpu_per_gpu = 4;
  std::vector<std::string> compositions;
  std::string tenant;
  std::optional<std::size_t> limit;
  std::uint64_t seed = 1;
  std::string trigger = "event";
  double mtbf_h = 0, repair_h = 1;
  double gpu_mtbf_h = 0, gpu_repair_h = 1;
  double time_limit_days = 0;
  /// --max-cycles: the run stops after this many scheduling cycles (1 to kMaxCyclesLimit).
  std::uint64_t max_cycles = 10'000'000;
  double arrival_scale = 1;
  double ck_interval_s = 0, ck_cost_s = 0, restore_s = 0;
  bool graceful = false;
  std::string gittins_prior;
  std::string quota_file;  ///< --quotas: the run's quota and tenant trees
  double urgent_fraction = 0;
  std::int32_t urgent_priority = 100;
  std::size_t leaf_nodes = 0;
  /// --oversubscription: the leaves' down:up bandwidth ratio (with --leaf-nodes).
  double oversubscription = 1;
  /// The communication model (sim/communication.hpp): --comm, --comm-share-links,
  /// --nic-gbps, --intra-node-gbps, --reference-gbps; --comm-profile gives every job the same
  /// iteration (none: the model's default mix).
  bool comm = false, comm_share = false;
  double nic_gbps = 12.5, intra_gbps = 25, reference_gbps = 25;
  std::optional<gs::comm_profile> comm_profile;
  double sample_s = 600;
  bool check = false;
  std::string out_dir;
  bool progress = false, quiet = false, help = false;
  unsigned jobs = 0;  ///< --jobs: threads for the compositions (0: the machine's cores)
  // For run.json: the command line, the options given (config file, then command line; the
  // later value of a key wins) and the config files read.
  std::string program = "gpusched-replay";
  std::vector<std::string> command;
  std::map<std::string, std::string> given;
  /// Where each given option was set: "FILE:LINE" or "the command line" (for the errors that
  /// name both of two options that exclude each other, or an option given twice).
  std::map<std::string, std::string> given_at;
  /// The config files read, with the digest of the bytes read from each (for run.json).
  std::vector<std::pair<std::string, file_digest>> config_files;
};

struct usage_error {
  std::string what;
};

std::vector<std::string> split(std::string_view s, char d) {
  std::vector<std::string> out;
  while (true) {
    const auto k = s.find(d);
    out.emplace_back(s.substr(0, k));
    if (k == std::string_view::npos) break;
    s.remove_prefix(k + 1);
  }
  return out;
}
std::string trim(std::string s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return {};
  const auto b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}
// Every number on the command line is finite and at most this: hours x 3.6e6 ms and seconds x
// 1000 stay far inside a 64-bit millisecond count, so no conversion below can overflow.
constexpr double max_option_value = 1e12;

// What the program is doing, for the message of an exception that ends it (out of memory
// included): "loading the trace", "replaying composition 'x'", ...
std::string g_stage = "reading the options";

/// A finite non-negative decimal number (std::from_chars: no hex, no inf/nan, no sign `+`).
double to_number(const std::string& key, const std::string& v) {
  const auto r = gs::parse_real(v);
  if (r.status == gs::number_status::subnormal) {
    throw usage_error{"--" + key + ": " + gs::number_problem(v, r.status)};
  }
  const double x = r.value;
  if (!r.ok() || !(x >= 0)) {
    throw usage_error{"--" + key + ": '" + v + "' is not a non-negative number"};
  }
  if (x > max_option_value) {
    throw usage_error{"--" + key + ": '" + v + "' is too large (at most 1e12)"};
  }
  return x;
}
/// A whole number in [0, max] written in decimal digits (no sign, point or exponent).
template <class T>
T to_whole(const std::string& key, const std::string& v,
           std::uint64_t max = static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
  const bool digits = !v.empty() && v.size() <= 20 &&
                      std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  const auto r = gs::parse_integer<std::uint64_t>(v);
  const std::uint64_t x = r.value;
  if (!digits || !r.ok())
    throw usage_error{"--" + key + ": '" + v + "' is not a whole non-negative number"};
  if (x > max) {
    throw usage_error{"--" + key + ": '" + v + "' is too large (at most " + std::to_string(max) +
                      ")"};
  }
  return static_cast<T>(x);
}

bool is_flag(const std::string& k) {
  return k == "graceful-preemption" || k == "check-invariants" || k == "progress" || k == "quiet" ||
         k == "help" || k == "comm" || k == "comm-share-links";
}
/// A flag's value: none (`--quiet`, a config line `quiet`), `true` or `false`; anything else is
/// refused, so that `--quiet=no` does not turn it on.
bool to_flag(const std::string& key, const std::string& v) {
  if (v.empty() || v == "true") return true;
  if (v == "false") return false;
  throw usage_error{"--" + key + ": '" + v + "' is not a flag value (none, true or false)"};
}
/// A duration option in `unit_ms` milliseconds per unit: a non-negative number whose non-zero
/// values are at least 1 ms (0 keeps its meaning, "off" or "none"; a smaller value would round to
/// 0 and silently turn the feature off).
double to_duration(const std::string& key, const std::string& v, double unit_ms) {
  const double x = to_number(key, v);
  if (x > 0 && x * unit_ms < 1.0) {
    throw usage_error{"--" + key + ": '" + v + "' is below 1 ms (0 turns it off)"};
  }
  return x;
}

void apply_one(options& o, const std::string& k, const std::string& v);
void apply(options& o, const std::string& k, const std::string& v,
           const std::string& where = "the command line") {
  // A NUL byte cannot be passed on to a file name or a child process (it would cut the value
  // there): refused in every value, from a config file as from the Python module.
  if (v.find('\0') != std::string::npos) {
    throw usage_error{"--" + k + ": the value holds a NUL byte (at character " +
                      std::to_string(v.find('\0') + 1) + ")"};
  }
  apply_one(o, k, v);
  if (k != "help" && k != "config") {
    o.given[k] = v.empty() && is_flag(k) ? "true" : v;
    o.given_at[k] = where;
  }
}
void apply_one(options& o, const std::string& k, const std::string& v) {
  if (k == "trace") {
    o.trace = v;
  } else if (k == "cluster") {
    o.cluster = v;
  } else if (k == "cpu-per-gpu") {
    o.cpu_per_gpu = to_number(k, v);
  } else if (k == "policy") {
    o.compositions = {v};
  } else if (k == "compare") {
    o.compositions.clear();
    const auto items = split(v, ';');
    for (std::size_t i = 0; i < items.size(); ++i) {
      // An empty item (`a;;b`, a trailing `;`) is refused: a list option takes each item once
      // and nothing else.
      if (trim(items[i]).empty()) {
        throw usage_error{"--compare: empty composition (item " + std::to_string(i + 1) +
                          ") in '" + v + "': give each SPEC once, separated by ';'"};
      }
      o.compositions.push_back(trim(items[i]));
    }
  } else if (k == "tenant") {
    o.tenant = v;
  } else if (k == "limit") {
    o.limit = to_whole<std::size_t>(k, v);
  } else if (k == "seed") {
    o.seed = to_whole<std::uint64_t>(k, v);
  } else if (k == "trigger") {
    o.trigger = v;
  } else if (k == "node-mtbf-hours") {
    o.mtbf_h = to_duration(k, v, 3.6e6);
  } else if (k == "repair-hours") {
    o.repair_h = to_duration(k, v, 3.6e6);
  } else if (k == "gpu-mtbf-hours") {
    o.gpu_mtbf_h = to_duration(k, v, 3.6e6);
  } else if (k == "gpu-repair-hours") {
    o.gpu_repair_h = to_duration(k, v, 3.6e6);
  } else if (k == "time-limit-days") {
    o.time_limit_days = to_duration(k, v, 8.64e7);
    if (o.time_limit_days > 1e9)
      throw usage_error{"--" + k + ": '" + v + "' is too large (at most 1e9)"};
  } else if (k == "max-cycles") {
    // Bounded on both sides: 0 ("no limit") or a limit past 1e9 would let a run's length follow
    // the trace's durations at --trigger 1 (a cycle a second behind a 1e8 s job), which is a run
    // without end in practice. 1e9 cycles is about an hour of CPU.
    o.max_cycles = to_whole<std::uint64_t>(k, v, kMaxCyclesLimit);
    if (o.max_cycles == 0) {
      throw usage_error{"--max-cycles: 0 is not a limit (give 1 to " +
                        std::to_string(kMaxCyclesLimit) +
                        "; a longer --trigger needs fewer cycles)"};
    }
  } else if (k == "arrival-scale") {
    o.arrival_scale = to_number(k, v);
    if (o.arrival_scale <= 0) throw usage_error{"--arrival-scale: '" + v + "' is not above 0"};
  } else if (k == "checkpoint-interval-s") {
    o.ck_interval_s = to_number(k, v);
    // A checkpoint is an event: more often than every second, a long job alone would cost
    // millions of events.
    if (o.ck_interval_s > 0 && o.ck_interval_s < 1) {
      throw usage_error{"--checkpoint-interval-s: '" + v + "' is below 1 s (0 turns it off)"};
    }
  } else if (k == "checkpoint-cost-s") {
    o.ck_cost_s = to_duration(k, v, 1e3);
  } else if (k == "restore-cost-s") {
    o.restore_s = to_duration(k, v, 1e3);
  } else if (k == "gittins-prior") {
    o.gittins_prior = v;
  } else if (k == "quotas") {
    o.quota_file = v;
  } else if (k == "urgent-fraction") {
    o.urgent_fraction = to_number(k, v);
    if (o.urgent_fraction > 1) throw usage_error{"--urgent-fraction: '" + v + "' is above 1"};
  } else if (k == "urgent-priority") {
    o.urgent_priority = to_whole<std::int32_t>(k, v);
  } else if (k == "leaf-nodes") {
    o.leaf_nodes = to_whole<std::size_t>(k, v, 1'000'000);
    if (o.leaf_nodes == 0) throw usage_error{"--leaf-nodes: must be at least 1"};
  } else if (k == "oversubscription") {
    o.oversubscription = to_number(k, v);
    if (!(o.oversubscription >= 1) || o.oversubscription > 1000) {
      throw usage_error{"--oversubscription: '" + v +
                        "' is not a down:up ratio from 1 to 1000 (1: non-blocking)"};
    }
  } else if (k == "comm") {
    o.comm = to_flag(k, v);
  } else if (k == "comm-share-links") {
    o.comm_share = to_flag(k, v);
  } else if (k == "nic-gbps" || k == "intra-node-gbps" || k == "reference-gbps") {
    const double g = to_number(k, v);
    if (!(g > 0) || g > 1e6) {
      throw usage_error{"--" + k + ": '" + v + "' is not a bandwidth above 0 and at most 1e6 GB/s"};
    }
    (k == "nic-gbps" ? o.nic_gbps : k == "intra-node-gbps" ? o.intra_gbps : o.reference_gbps) = g;
  } else if (k == "comm-profile") {
    const auto colon = v.find(':');
    if (colon == std::string::npos || v.find(':', colon + 1) != std::string::npos) {
      throw usage_error{"--comm-profile: '" + v +
                        "' is not COMPUTE_MS:GRADIENT_MB (e.g. 227.54:102.2)"};
    }
    const double ms = to_number(k, v.substr(0, colon));
    const double mb = to_number(k, v.substr(colon + 1));
    if (!(ms > 0) || ms > 1e9 || mb > 1e9) {
      throw usage_error{"--comm-profile: '" + v +
                        "': the computation must be above 0 and at most 1e9 ms, the gradients "
                        "at most 1e9 MB"};
    }
    o.comm_profile = gs::comm_profile{ms, mb * 1e6};
  } else if (k == "sample-s") {
    o.sample_s = to_number(k, v);
    if (o.sample_s > 0 && static_cast<std::int64_t>(o.sample_s * 1000) == 0) {
      throw usage_error{"--sample-s: '" + v +
                        "' rounds to 0 ms (at least 0.001; 0 turns sampling off)"};
    }
  } else if (k == "out") {
    o.out_dir = v;
  } else if (k == "jobs") {
    o.jobs = to_whole<unsigned>(k, v, 1024);
    if (o.jobs == 0) throw usage_error{"--jobs: must be at least 1"};
  } else if (k == "graceful-preemption") {
    o.graceful = to_flag(k, v);
  } else if (k == "check-invariants") {
    o.check = to_flag(k, v);
  } else if (k == "progress") {
    o.progress = to_flag(k, v);
  } else if (k == "quiet") {
    o.quiet = to_flag(k, v);
  } else if (k == "help") {
    o.help = to_flag(k, v);
  } else {
    throw usage_error{"unknown option --" + k};
  }
}

/// What a run does, known once its trace is read and its compositions parsed: what a
/// `needs_run` rule asks for.
struct run_facts {
  bool gittins = false;     ///< a composition orders by ordering=2d-gittins
  bool preempts = false;    ///< a composition's preemption slot is not `none`
  bool restarts = false;    ///< a job can restart: a composition preempts, or nodes or GPUs fail
  bool cpu_default = false; ///< the cluster's nodes or some job take --cpu-per-gpu CPU figures
  bool comm = false;        ///< the communication model is on (--comm)
  bool comm_fabric = false; ///< --comm with --leaf-nodes: the leaves' uplinks count
};

/// How two options relate, in one table for command lines and config files alike: `excludes`
/// (given together from one source, the run is refused, naming both and where each was given;
/// a command-line option overrides the other one of a config file), `needs` (without the
/// other one set to more than 0 the option does nothing, and the run says so) or `needs_run`
/// (without `fact` of the run, described by `other`, the option does nothing, and the run says
/// so).
struct option_rule {
  enum kind { excludes, needs, needs_run };
  const char* key;
  const char* other;
  kind what;
  const char* why;
  bool run_facts::*fact = nullptr;  ///< needs_run: what the option needs
};
constexpr option_rule kRules[] = {
    {"policy", "compare", option_rule::excludes, "both set the compositions"},
    {"repair-hours", "node-mtbf-hours", option_rule::needs, "no node fails"},
    {"gpu-repair-hours", "gpu-mtbf-hours", option_rule::needs, "no GPU fails"},
    {"urgent-priority", "urgent-fraction", option_rule::needs, "no job is promoted"},
    {"checkpoint-cost-s", "checkpoint-interval-s", option_rule::needs,
     "no periodic checkpoint is taken"},
    {"gittins-prior", "a composition with ordering=2d-gittins", option_rule::needs_run,
     "no composition has ordering=2d-gittins", &run_facts::gittins},
    {"graceful-preemption", "a composition whose preemption is not none", option_rule::needs_run,
     "no composition preempts (preemption=none)", &run_facts::preempts},
    {"restore-cost-s", "a composition that preempts, or --node-mtbf-hours/--gpu-mtbf-hours above 0",
     option_rule::needs_run, "no job restarts (no composition preempts and no node or GPU fails)",
     &run_facts::restarts},
    {"cpu-per-gpu", "a NODESxGPUS --cluster or a trace job without a CPU figure",
     option_rule::needs_run,
     "every node of the openb --cluster and every job of the trace has its own CPU figure",
     &run_facts::cpu_default},
    {"comm-share-links", "--comm", option_rule::needs_run,
     "the communication model is off", &run_facts::comm},
    {"nic-gbps", "--comm", option_rule::needs_run, "the communication model is off",
     &run_facts::comm},
    {"intra-node-gbps", "--comm", option_rule::needs_run, "the communication model is off",
     &run_facts::comm},
    {"reference-gbps", "--comm", option_rule::needs_run, "the communication model is off",
     &run_facts::comm},
    {"comm-profile", "--comm", option_rule::needs_run, "the communication model is off",
     &run_facts::comm},
    {"oversubscription", "--comm and --leaf-nodes", option_rule::needs_run,
     "no leaf uplink is modelled (placement=topology reads distances, not bandwidths)",
     &run_facts::comm_fabric},
};

/// The notes of a run: each option given that does nothing in it (`option_rule::needs`, and
/// `option_rule::needs_run` when `facts` is given).
std::vector<std::string> option_notes(const options& o, const run_facts* facts = nullptr) {
  std::vector<std::string> notes;
  for (const auto& r : kRules) {
    if (r.what == option_rule::excludes || !o.given.contains(r.key)) continue;
    if (r.what == option_rule::needs_run) {
      if (facts == nullptr || facts->*r.fact) continue;
      notes.push_back(std::string("--") + r.key + " (" + o.given_at.at(r.key) +
                      ") does nothing in this run: " + r.why + " (it needs " + r.other + ")");
      continue;
    }
    const auto it = o.given.find(r.other);
    if (it != o.given.end()) {
      const auto v = gs::parse_real(it->second);
      if (v.ok() && v.value > 0) continue;
    }
    notes.push_back(std::string("--") + r.key + " (" + o.given_at.at(r.key) +
                    ") does nothing in this run: " + r.why + " without --" + r.other +
                    " above 0");
  }
  return notes;
}

/// Refuses `key` (set at `where` in config file `path`) when the same file gave it before, or
/// gave an option it excludes.
void check_config_key(const options& o, const std::string& key, const std::string& path,
                      std::size_t line) {
  const auto same_file = [&](const std::string& k) -> std::optional<std::string> {
    const auto it = o.given_at.find(k);
    if (it == o.given_at.end() || !it->second.starts_with(path + ":")) return std::nullopt;
    return it->second.substr(path.size() + 1);
  };
  if (const auto first = same_file(key)) {
    throw gs::parse_error(path, line, key,
                          "given twice in this file (first at line " + *first +
                              "): give it once");
  }
  for (const auto& r : kRules) {
    if (r.what != option_rule::excludes) continue;
    const std::string other = key == r.key ? r.other : key == r.other ? r.key : "";
    if (other.empty()) continue;
    if (const auto at = same_file(other)) {
      throw gs::parse_error(path, line, key,
                            "--" + key + " and --" + other + " exclude each other (" + r.why +
                                "; --" + other + " is at line " + *at + ")");
    }
  }
}

void read_config(options& o, std::istream& in, const std::string& path) {
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (n == 1) line = std::string(gs::strip_bom(line));
    if (line.find('\r') != std::string::npos && line.find('\r') + 1 < line.size()) {
      throw gs::parse_error(path, n, "(line)",
                            "carriage return inside a line (CR-only line endings are not read; "
                            "convert the file to LF or CRLF)");
    }
    // A comment starts with '#' at the start of a line or after white space, so that a value
    // may contain '#' (a path `out = runs/#3`).
    for (std::size_t h = line.find('#'); h != std::string::npos; h = line.find('#', h + 1)) {
      if (h == 0 || line[h - 1] == ' ' || line[h - 1] == '\t') {
        line.resize(h);
        break;
      }
    }
    line = trim(line);
    if (line.empty()) continue;
    const auto eq = line.find('=');
    const std::string k = trim(line.substr(0, eq));
    const std::string v = eq == std::string::npos ? "" : trim(line.substr(eq + 1));
    // No option's name is longer than 40 bytes: a longer key is named by its start and size,
    // not quoted whole (a line of megabytes would make a message of megabytes).
    if (k.size() > 40) {
      throw gs::parse_error(path, n, "key",
                            "'" + k.substr(0, 24) + "...' (" + std::to_string(k.size()) +
                                " bytes) is not an option");
    }
    if (eq == std::string::npos && !is_flag(k)) {
      throw gs::parse_error(path, n, k, "expected `key = value`");
    }
    check_config_key(o, k, path, n);
    try {
      apply(o, k, v, path + ":" + std::to_string(n));
    } catch (const usage_error& e) {
      throw gs::parse_error(path, n, k, e.what);
    }
  }
}
void read_config(options& o, const std::string& path) {
  input_files f;  // read once: a config given as a pipe (`--config <(...)`) is hashed as read
  std::istringstream in(f.read(path, gs::kMaxConfigBytes));
  read_config(o, in, path);
  o.config_files.emplace_back(path, f.digest(path));
}

/// One option of the command: its name (without `--`), the name of its value (empty: a flag)
/// and its help text. The command line is parsed by CLI11 over this table; every value goes
/// through `apply` (the checks above), so a config file line and a command-line option obey the
/// same rules.
struct option_doc {
  const char* key;
  const char* value;
  const char* help;
};
constexpr option_doc kOptions[] = {
    {"config", "FILE", "options as `key = value` lines (a bare `key` for a flag, `#` starts a comment); later command-line options override them"},
    {"trace", "KIND:PATH", "philly:FILE | tiresias:FILE | openb:FILE | synthetic:JOBS:JOBS_PER_HOUR[:TENANTS] (required; JOBS at most 1e8, TENANTS at most 100,000)"},
    {"cluster", "NODESxGPUS[:MODEL]", "homogeneous cluster (default 250x8:V100-SXM2-32GB), or openb:NODE_CSV: the nodes of an openb node list (sn,cpu_milli,memory_mib,gpu,model)"},
    {"cpu-per-gpu", "CORES", "CPU per GPU for traces without CPU figures (default 4)"},
    {"policy", "SPEC", "one composition: [LABEL:]slot=name,... over the slots ordering, admission, packing, placement, preemption (defaults: the library's; names: listed at the end). Among them: ordering=2d-gittins (needs --gittins-prior), preemption=las (Tiresias), preemption=srtf|srsf (preemptive oracle)"},
    {"compare", "SPEC;SPEC;...", "several compositions on the same trace, side by side; a SPEC may start with LABEL: (default label: the names joined by /); labels name folders under --out and must differ"},
    {"tenant", "NAME", "keep only jobs of this tenant (Philly: virtual cluster)"},
    {"limit", "N", "keep only the first N jobs (by submission)"},
    {"arrival-scale", "F", "multiply every inter-arrival time by F > 0 (0.25 offers four times the load; durations unchanged)"},
    {"seed", "N", "simulator seed (default 1)"},
    {"trigger", "event|SECONDS", "cycle on every event (default) or every SECONDS (at least 1)"},
    {"node-mtbf-hours", "H", "mean time between failures per node (default 0: none)"},
    {"repair-hours", "H", "repair time of a failed node (default 1)"},
    {"gpu-mtbf-hours", "H", "mean time between failures per GPU (default 0: none); a failed GPU interrupts only the jobs holding it"},
    {"gpu-repair-hours", "H", "repair time of a failed GPU (default 1)"},
    {"time-limit-days", "D", "stop D simulated days after the first event (default 0: none); jobs not finished by then are reported as unfinished"},
    {"max-cycles", "N", "stop after N scheduling cycles (1 to 1,000,000,000; default 10,000,000); jobs not finished by then are reported as unfinished, and the run says it stopped there. Bounds --trigger SECONDS behind a very long job (a cycle at every tick while a job waits)"},
    {"checkpoint-interval-s", "S", "periodic checkpoint interval of every job (default 0: none; otherwise at least 1)"},
    {"checkpoint-cost-s", "S", "time to write a checkpoint (default 0)"},
    {"restore-cost-s", "S", "time to restore after a restart (default 0)"},
    {"graceful-preemption", "", "a preempted job saves its progress (Tiresias' assumption)"},
    {"gittins-prior", "FILE", "GPU-time prior (Tiresias yarn-gput*.csv: header, one GPU-seconds sample per line) enabling ordering=2d-gittins"},
    {"quotas", "FILE", "the run's quota tree and tenant tree, one file of cohort and queue lines (queues name the trace's tenants; README, Quotas and tenant trees) enabling admission=quota, ordering=kueue-drs, ordering=fair-tree, preemption=checkpoint-aware-reclaim"},
    {"urgent-fraction", "F", "promote each job with probability F (drawn from --seed) to priority --urgent-priority; reports the urgent jobs' wait"},
    {"urgent-priority", "P", "priority of promoted jobs (default 100; trace jobs have 0)"},
    {"leaf-nodes", "K", "a leaf/spine fabric of K nodes per leaf: placement=topology uses it, gang locality is reported per leaf"},
    {"oversubscription", "R", "the leaves' down:up bandwidth ratio, 1 to 1000 (default 1: non-blocking); a leaf's uplink is its nodes' NIC bandwidth / R (with --comm and --leaf-nodes)"},
    {"comm", "", "communication-aware job speed (sim/communication.hpp): a gang's ring all-reduce runs at the slowest link its placement crosses (GPUs of a node, NICs, leaf uplinks), so where it is placed changes how long it runs; off by default (every job at its trace speed)"},
    {"comm-share-links", "", "with --comm: jobs crossing one NIC or leaf uplink share it max-min fairly (default: each sees the full bandwidth)"},
    {"nic-gbps", "G", "with --comm: a node's network bandwidth, GB/s per direction (default 12.5: one EDR InfiniBand port)"},
    {"intra-node-gbps", "G", "with --comm: the ring bandwidth among a node's GPUs, GB/s per direction (default 25: one NVLink 2 link)"},
    {"reference-gbps", "G", "with --comm: the ring bandwidth at which the trace's durations hold (default 25)"},
    {"comm-profile", "MS:MB", "with --comm: every job's iteration, MS of computation and MB of gradients (default: the model's mix of four Gavel models, drawn per job)"},
    {"sample-s", "S", "time-series spacing (default 600; 0: no samples)"},
    {"check-invariants", "", "check the cluster invariants after every event (slow)"},
    {"out", "DIR", "write run.json, summary.csv and per composition LABEL/{summary.json,jobs.csv,samples.csv,tenants.csv,placement_urgent.csv}"},
    {"jobs", "N", "run the compositions on N threads (default: the machine's cores; from Python: 1); the outputs are the same bytes for every N"},
    {"progress", "", "print progress on standard error for the whole grid: jobs done of all compositions, simulated day, elapsed, ETA (one line rewritten on a terminal, plain lines every 10 s otherwise)"},
    {"quiet", "", "do not print the table"},
};

/// The command-line parser of the replay command (CLI11): every option of kOptions, each value
/// handed to `apply` after parsing. A flag takes no value or `=true`/`=false`.
std::unique_ptr<CLI::App> make_app(options& o, const std::string& name) {
  auto app = std::make_unique<CLI::App>(
      "Replays a job trace on a simulated cluster with one or several policy compositions and "
      "reports metrics (benchmarks/README.md).",
      name);
  app->set_help_flag("--help,-h", "this text, then every policy name of the registry");
  app->footer(
      "A config FILE holds the same options, one per line as `key = value` (or a bare `key` for "
      "a flag); `#` starts a comment at the start of a line or after white space; later "
      "command-line options override it.");
  for (const auto& d : kOptions) {
    const std::string key = d.key;
    auto* opt = app->add_option_function<std::string>(
        "--" + key,
        [&o, key](const std::string& v) {
          if (key == "config") return;
          // A command-line option overrides what it excludes from a config file.
          for (const auto& r : kRules) {
            if (r.what != option_rule::excludes) continue;
            const std::string other = key == r.key ? r.other : key == r.other ? r.key : "";
            if (!other.empty() && o.given_at.contains(other) &&
                o.given_at.at(other) != "the command line") {
              o.given.erase(other);
              o.given_at.erase(other);
            }
          }
          apply(o, key, v);
        },
        d.help);
    if (*d.value == '\0') {
      opt->expected(0, 1);  // `--quiet` or `--quiet=false`
      opt->type_name("");
    } else {
      opt->type_name(d.value);
    }
    opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  // Options that exclude each other (kRules): given together, one would silently win.
  for (const auto& r : kRules) {
    if (r.what == option_rule::excludes) {
      app->get_option(std::string("--") + r.key)->excludes(app->get_option(std::string("--") + r.other));
    }
  }
  return app;
}

options parse(const std::vector<std::string>& args, options o = {}, bool read_files = true,
              const std::string& name = "gpusched-replay") {
  // One config file: a second would silently override the first's values.
  std::size_t configs = 0;
  for (const auto& a : args) configs += a == "--config" || a.rfind("--config=", 0) == 0;
  if (configs > 1) {
    throw usage_error{"--config is given " + std::to_string(configs) +
                      " times: give one config file (command-line options override its values)"};
  }
  for (std::size_t i = 0; i < args.size(); ++i) {  // the config file first
    if (!read_files) break;
    if (args[i] == "--config" && i + 1 < args.size()) read_config(o, args[i + 1]);
    if (args[i].rfind("--config=", 0) == 0) read_config(o, args[i].substr(9));
  }
  auto app = make_app(o, name);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
  app->allow_extras();  // named below, one at a time, as before
  try {
    app->parse(reversed);
  } catch (const CLI::CallForHelp&) {
    o.help = true;
    return o;
  } catch (const CLI::ParseError& e) {
    throw usage_error{e.what()};
  }
  if (const auto extra = app->remaining(); !extra.empty()) {
    const std::string& a = extra.front();
    if (a.rfind("--", 0) == 0) throw usage_error{"unknown option " + a.substr(0, a.find('='))};
    throw usage_error{"unexpected argument '" + a + "'"};
  }
  // An option given twice on the command line: the last would silently win.
  for (const auto* opt : app->get_options()) {
    if (opt->count() > 1) {
      std::string values;
      for (const auto& v : opt->results()) values += (values.empty() ? "'" : ", '") + v + "'";
      throw usage_error{opt->get_name() + " is given " + std::to_string(opt->count()) +
                        " times on the command line (" + values + "): give it once"};
    }
  }
  return o;
}

/// The help text: CLI11's option list, then every policy name of the registry.
std::string help_text(const std::string& name) {
  options o;
  return make_app(o, name)->help();
}

struct cluster_spec {
  std::size_t nodes = 0;
  int gpus = 0;
  std::string model;
  std::string openb_nodes;  ///< path of an openb node list (then the fields above are unused)
};
cluster_spec parse_cluster(const std::string& s) {
  cluster_spec c;
  if (s.rfind("openb:", 0) == 0) {
    c.openb_nodes = s.substr(6);
    if (c.openb_nodes.empty()) throw usage_error{"--cluster: openb: needs a node list path"};
    return c;
  }
  const auto colon = s.find(':');
  c.model = colon == std::string::npos ? "V100-SXM2-32GB" : s.substr(colon + 1);
  const auto dims = split(s.substr(0, colon), 'x');
  if (dims.size() != 2)
    throw usage_error{"--cluster: expected NODESxGPUS[:MODEL], got '" + s + "'"};
  c.nodes = to_whole<std::size_t>("cluster", dims[0], 1'000'000);
  c.gpus = to_whole<int>("cluster", dims[1], static_cast<std::uint64_t>(gs::max_gpus_per_node));
  if (c.nodes == 0) throw usage_error{"--cluster: no nodes"};
  return c;
}

gs::trace load_trace(const std::string& spec, input_files& files) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos)
    throw usage_error{"--trace: expected KIND:PATH, got '" + spec + "'"};
  const std::string kind = spec.substr(0, colon), path = spec.substr(colon + 1);
  if (kind == "philly" || kind == "tiresias" || kind == "openb") {
    std::istringstream in(files.read(path));
    if (kind == "philly") return gs::load_philly(in, path);
    if (kind == "tiresias") return gs::load_tiresias(in, path);
    return gs::load_openb(in, path);
  }
  if (kind == "synthetic") {
    const auto p = split(path, ':');
    if (p.size() < 2 || p.size() > 3) {
      throw usage_error{"--trace synthetic:JOBS:JOBS_PER_HOUR[:TENANTS]"};
    }
    gs::synthetic_options o;
    o.jobs = to_whole<std::size_t>("trace", p[0], 100'000'000);
    o.jobs_per_hour = to_number("trace", p[1]);
    // per-tenant tables and series cost jobs + samples x tenants: a bound like the cluster's
    o.tenants = p.size() == 3 ? to_whole<std::uint32_t>("trace", p[2], 100'000) : 1;
    return gs::make_synthetic_trace(o);
  }
  throw usage_error{"--trace: unknown kind '" + kind + "' (philly, tiresias, openb, synthetic)"};
}

struct composition {
  std::string label;
  gs::pipeline_config config;
};
/// Every name resolves through the library's registry (`gs::policy_registry`); the Gittins
/// prior and the fabric reach the factories as `gs::policy_inputs`, and the job history
/// (attained service, last placements) through the pipeline, which the simulator feeds.
void check_names(const gs::pipeline_config& c, const gs::policy_inputs& in,
                 const gs::policy_registry& registry) {
  if (c.ordering == "2d-gittins" && !in.prior) {
    throw usage_error{"ordering=2d-gittins needs --gittins-prior FILE"};
  }
  (void)registry.make_pipeline(c, in);  // unknown names fail here, before any run
}
/// A composition label names the folder of its outputs under --out: it must stay inside it.
/// Refused: path separators, a leading dot (`.`, `..`, hidden names), control
/// characters, text that is not UTF-8, more than 100 bytes.
void check_label(const std::string& label) {
  const auto bad = [&](const std::string& why) {
    std::string shown;
    for (const char ch : label) {
      const auto u = static_cast<unsigned char>(ch);
      if (u < 0x20 || u == 0x7F) {
        shown += "\\x";
        shown += "0123456789abcdef"[u >> 4];
        shown += "0123456789abcdef"[u & 0xF];
      } else {
        shown += ch;
      }
    }
    throw usage_error{"--policy/--compare: label '" + shown +
                      "' cannot name an output folder: " + why};
  };
  if (label.size() > 100) bad("longer than 100 bytes");
  if (!label.empty() && label.front() == '.') bad("it starts with a dot");
  for (const char* file : {"summary.csv", "summary.csv.partial", "run.json", "run.json.partial"}) {
    if (label == file) bad("it is the name of a file the command writes in --out");
  }
  if (!gs::is_utf8(label)) bad("it is not UTF-8");
  for (const char ch : label) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '/' || ch == '\\') bad("it contains a path separator");
    if (u < 0x20 || u == 0x7F) bad("it contains a control character");
  }
}

composition parse_composition(std::string spec, const gs::policy_inputs& x,
                              const gs::policy_registry& registry) {
  composition c;
  if (const auto colon = spec.find(':'); colon != std::string::npos) {
    c.label = trim(spec.substr(0, colon));
    if (!c.label.empty()) check_label(c.label);  // empty: the default label below
    spec = spec.substr(colon + 1);
  }
  std::string auto_label;
  std::vector<std::string> slots_given;
  const auto items = split(spec, ',');
  for (const auto& kv : items) {
    // "" (or "LABEL:") is the library's default composition; an empty item among others
    // (`ordering=fifo,,packing=x`) is refused.
    if (trim(kv).empty() && items.size() == 1) continue;
    if (trim(kv).empty()) {
      throw usage_error{"policy '" + spec + "': empty item: give each slot=name once, separated by ','"};
    }
    const auto eq = kv.find('=');
    if (eq == std::string::npos) throw usage_error{"policy '" + kv + "': expected slot=name"};
    const auto slot = trim(kv.substr(0, eq));
    const auto name = trim(kv.substr(eq + 1));
    if (std::find(slots_given.begin(), slots_given.end(), slot) != slots_given.end()) {
      throw usage_error{"policy slot '" + slot + "' is given twice in '" + spec + "'"};
    }
    slots_given.push_back(slot);
    if (slot == "ordering") {
      c.config.ordering = name;
    } else if (slot == "admission") {
      c.config.admission = name;
    } else if (slot == "packing") {
      c.config.packing = name;
    } else if (slot == "placement") {
      c.config.placement = name;
    } else if (slot == "preemption") {
      c.config.preemption = name;
    } else {
      throw usage_error{"policy slot '" + slot +
                        "' (known: ordering, admission, packing, placement, preemption)"};
    }
    auto_label += (auto_label.empty() ? "" : "/") + name;
  }
  if (c.label.empty()) c.label = auto_label.empty() ? "default" : auto_label;
  check_names(c.config, x, registry);
  return c;
}

/// Runs the replays of `o` with the policies of `registry`; writes the files of --out, the
/// table to `out` (unless --quiet) and the progress line to `err`; appends each composition's
/// tables to `tables` when it is not null.
int run(const options& o, std::ostream& out, std::ostream& err, const gs::policy_registry& registry,
        std::vector<replay_tables>* tables) {
  if (o.trace.empty()) throw usage_error{"--trace is required"};
  const auto cs = parse_cluster(o.cluster);
  // Every input file is read once, through `files`: run.json records the digest of the bytes
  // the run parsed (a piped trace included).
  input_files files;
  g_stage = "loading the trace " + o.trace;
  gs::trace tr = load_trace(o.trace, files);
  g_stage = "preparing the jobs";
  if (!o.tenant.empty()) {
    std::uint32_t id = 0;
    while (id < tr.tenants.size() && tr.tenants[id] != o.tenant) ++id;
    if (id == tr.tenants.size())
      throw usage_error{"--tenant: no tenant '" + o.tenant + "' in the trace"};
    std::erase_if(tr.jobs, [&](const gs::trace_job& j) { return j.tenant.value() != id; });
  }
  if (o.limit && tr.jobs.size() > *o.limit) tr.jobs.resize(*o.limit);
  // Arrival compression: submit times scaled about the first one (order is kept: the map is
  // monotone), so every inter-arrival time is multiplied by F.
  if (o.arrival_scale != 1 && !tr.jobs.empty()) {
    const gs::sim_time t0 = tr.jobs.front().submit;
    for (auto& j : tr.jobs) {
      const auto dt = static_cast<double>((j.submit - t0).count()) * o.arrival_scale;
      // 2^62 ms: the simulated clock must not overflow (146 million years).
      if (!(dt < 4.6e18 - static_cast<double>(t0.time_since_epoch().count()))) {
        throw usage_error{"--arrival-scale: " + std::to_string(o.arrival_scale) + " moves job " +
                          std::to_string(j.id.value()) +
                          " beyond the simulated clock's range (2^62 ms)"};
      }
      j.submit = t0 + gs::sim_duration{std::llround(dt)};
    }
  }
  // Urgent jobs: each job is promoted with probability F, from its own stream of the seed (so
  // the same jobs are urgent for every composition and for every other option).
  std::size_t urgent = 0;
  if (o.urgent_fraction > 0) {
    gs::random_engine pick(o.seed ^ 0x75726765'6E742121ull);
    for (auto& j : tr.jobs) {
      if (static_cast<double>(pick() >> 11) * 0x1.0p-53 < o.urgent_fraction) {
        j.priority = o.urgent_priority;
        ++urgent;
      }
    }
  }

  // The cluster: homogeneous, or an openb node list. openb model names the catalog lacks
  // (P100, V100M16, V100M32 and the anonymised G2, G3) are added; the trace gives no GPU
  // memory and no request asks for it, so their memory is a 16 GiB placeholder.
  gs::gpu_catalog catalog = gs::basic_catalog();
  const auto ensure_model = [&](const std::string& name) {
    if (!name.empty() && !catalog.find(name)) {
      catalog.add({name, gs::memory_mib{16 * 1024}, 0, {}});
    }
  };
  g_stage = "building the cluster";
  std::vector<gs::node_spec> nodes;
  int gpus_per_node = std::max(cs.gpus, 1);
  if (!cs.openb_nodes.empty()) {
    std::istringstream in(files.read(cs.openb_nodes));
    const auto list = gs::read_openb_nodes(in, cs.openb_nodes);
    gpus_per_node = 1;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto& n = list[i];
      if (n.gpus > 0) ensure_model(n.model);
      gpus_per_node = std::max(gpus_per_node, n.gpus);
      nodes.push_back({.id = gs::node_id{static_cast<gs::node_id::rep>(i + 1)},
                       .name = n.name,
                       .gpu_model = n.gpus > 0 ? n.model : std::string(),
                       .gpus = gs::gpu_count{n.gpus},
                       .cpu = gs::cpu_millis{n.cpu_milli},
                       .memory = gs::memory_mib{n.memory_mib}});
    }
    if (nodes.empty()) throw usage_error{"--cluster: " + cs.openb_nodes + " lists no nodes"};
  } else {
    nodes.reserve(cs.nodes);
    for (std::size_t i = 0; i < cs.nodes; ++i) {
      nodes.push_back({.id = gs::node_id{static_cast<gs::node_id::rep>(i + 1)},
                       .name = "n" + std::to_string(i),
                       .gpu_model = cs.model,
                       .gpus = gs::gpu_count{cs.gpus},
                       .cpu = gs::cpu_millis{static_cast<std::int64_t>(o.cpu_per_gpu * 1000) *
                                             std::max(cs.gpus, 1)},
                       .memory = gs::memory_mib{std::int64_t{64} * 1024 * std::max(cs.gpus, 1)}});
    }
  }
  // openb gpu_spec constraints: model names no node has are added too, so that such jobs stay
  // unplaceable rather than unconstrained.
  std::vector<gs::gpu_model_set> allowed(tr.gpu_specs.size());
  for (std::size_t k = 0; k < tr.gpu_specs.size(); ++k) {
    std::string_view spec = tr.gpu_specs[k];
    for (std::size_t bar; !spec.empty(); spec.remove_prefix(bar + 1)) {
      bar = spec.find('|');
      ensure_model(std::string(spec.substr(0, bar)));
      if (bar == std::string_view::npos) break;
    }
    allowed[k] = gs::resolve_gpu_spec(tr.gpu_specs[k], catalog);
  }
  const gs::cluster base(catalog, nodes);

  gs::job_conversion conv;
  conv.gpus_per_node = gpus_per_node;
  conv.cpu_per_gpu = gs::cpu_millis{static_cast<std::int64_t>(o.cpu_per_gpu * 1000)};
  conv.memory_per_gpu = gs::memory_mib{1024};
  conv.checkpoint.interval = gs::sim_duration{static_cast<std::int64_t>(o.ck_interval_s * 1000)};
  conv.checkpoint.checkpoint_cost = gs::sim_duration{static_cast<std::int64_t>(o.ck_cost_s * 1000)};
  conv.checkpoint.restore_cost = gs::sim_duration{static_cast<std::int64_t>(o.restore_s * 1000)};

  gs::sim_config cfg;
  cfg.seed = o.seed;
  cfg.check_invariants = o.check;
  cfg.node_mtbf = gs::sim_duration{static_cast<std::int64_t>(o.mtbf_h * 3.6e6)};
  cfg.repair_time = gs::sim_duration{static_cast<std::int64_t>(o.repair_h * 3.6e6)};
  cfg.gpu_mtbf = gs::sim_duration{static_cast<std::int64_t>(o.gpu_mtbf_h * 3.6e6)};
  cfg.gpu_repair_time = gs::sim_duration{static_cast<std::int64_t>(o.gpu_repair_h * 3.6e6)};
  cfg.time_limit = gs::sim_duration{static_cast<std::int64_t>(o.time_limit_days * 8.64e7)};
  cfg.preemption_saves_progress = o.graceful;
  cfg.max_cycles = o.max_cycles;
  cfg.sample_interval = gs::sim_duration{static_cast<std::int64_t>(o.sample_s * 1000)};
  if (o.trigger != "event") {
    cfg.trigger = gs::cycle_trigger::interval;
    cfg.cycle_interval =
        gs::sim_duration{static_cast<std::int64_t>(to_number("trigger", o.trigger) * 1000)};
    // The cost of a run is its simulated span divided by the interval (a cycle at every tick
    // while jobs wait or run): below a second, a long job alone would cost millions of cycles.
    if (cfg.cycle_interval < gs::sim_duration{1000}) {
      throw usage_error{"--trigger: '" + o.trigger +
                        "' is not 'event' or a number of seconds of at least 1"};
    }
  }

  gs::policy_inputs x;
  if (!o.gittins_prior.empty()) {
    std::istringstream in(files.read(o.gittins_prior));
    x.prior = std::make_shared<const gs::gpu_time_prior>(
        gs::gpu_time_prior::read_csv(in, o.gittins_prior));
  }
  if (!o.quota_file.empty()) {
    // queues name the trace's tenants (tenant_id = position in the trace's tenant list)
    std::istringstream in(files.read(o.quota_file));
    auto trees = gs::read_quota_file(
        in, o.quota_file, catalog, [&](std::string_view name) -> std::optional<gs::tenant_id> {
          for (std::size_t t = 0; t < tr.tenants.size(); ++t) {
            if (tr.tenants[t] == name) return gs::tenant_id{static_cast<gs::tenant_id::rep>(t)};
          }
          return std::nullopt;
        });
    x.quotas = std::make_shared<const gs::quota_tree>(std::move(trees.quotas));
    x.tenants = std::make_shared<const gs::tenant_tree>(std::move(trees.tenants));
  }
  std::optional<gs::fabric> leaves;
  if (o.leaf_nodes > 0) {
    leaves = gs::fabric::fat_tree(base.node_count(), static_cast<int>(o.leaf_nodes), 0,
                                  o.oversubscription);
    x.topology = std::make_shared<const gs::topology_model>(*leaves);
  }
  // The communication model: off unless --comm; the leaves' fabric (--leaf-nodes) is its
  // network above the NICs.
  cfg.comm.enabled = o.comm;
  cfg.comm.topology = x.topology;
  cfg.comm.share_links = o.comm_share;
  cfg.comm.nic_gbps = o.nic_gbps;
  cfg.comm.intra_node_gbps = o.intra_gbps;
  cfg.comm.reference_gbps = o.reference_gbps;
  std::vector<composition> comps;
  for (const auto& s : o.compositions.empty() ? std::vector<std::string>{""} : o.compositions) {
    comps.push_back(parse_composition(s, x, registry));
    for (std::size_t i = 0; i + 1 < comps.size(); ++i) {
      if (comps[i].label == comps.back().label) {
        throw usage_error{"--compare: label '" + comps.back().label +
                          "' is given twice (each composition writes its own folder)"};
      }
    }
  }
  // A setting that does nothing in this run says so (on standard error and in run.json).
  run_facts facts;
  for (const auto& c : comps) {
    facts.gittins = facts.gittins || c.config.ordering == "2d-gittins";
    facts.preempts = facts.preempts || c.config.preemption != "none";
  }
  facts.restarts = facts.preempts || o.mtbf_h > 0 || o.gpu_mtbf_h > 0;
  facts.comm = o.comm;
  facts.comm_fabric = o.comm && o.leaf_nodes > 0;
  facts.cpu_default = cs.openb_nodes.empty() ||
                      std::any_of(tr.jobs.begin(), tr.jobs.end(),
                                  [](const gs::trace_job& j) { return j.cpu <= gs::cpu_millis{0}; });
  const auto notes = option_notes(o, &facts);
  for (const auto& n : notes) err << "replay: note: " << n << "\n";
  // --out is made and checked before any run: its folder and every composition's, none a
  // symbolic link; run.json, written first, records how the folder is made.
  if (!o.out_dir.empty()) {
    g_stage = "preparing --out " + o.out_dir;
    const std::filesystem::path root(o.out_dir);
    check_out_root(root);
    // Each composition's folder, component by component, never through a link (a default
    // label can name nested folders).
    for (const auto& c : comps) make_out_dirs(root, c.label);
    run_record rec(o.program, o.command);
    const auto colon = o.trace.find(':');
    const std::string kind = o.trace.substr(0, colon);
    if (kind != "synthetic") rec.add_input("trace", o.trace.substr(colon + 1), files);
    if (!cs.openb_nodes.empty()) rec.add_input("cluster", cs.openb_nodes, files);
    if (!o.gittins_prior.empty()) rec.add_input("gittins-prior", o.gittins_prior, files);
    if (!o.quota_file.empty()) rec.add_input("quotas", o.quota_file, files);
    for (const auto& [f, d] : o.config_files) rec.add_input("config", f, d);
    std::vector<std::pair<std::string, std::string>> given;
    for (const auto& [k, v] : o.given) given.emplace_back(k, gs::detail::json_string(v));
    rec.add_raw("options", json_object(given));
    std::string notes_json = "[";
    for (const auto& n : notes) {
      notes_json += (notes_json.size() > 1 ? ", " : "") + gs::detail::json_string(n);
    }
    rec.add_raw("notes", notes_json + "]");
    rec.add("trace", o.trace);
    rec.add("trace_jobs", static_cast<std::uint64_t>(tr.jobs.size()));
    rec.add("cluster", o.cluster);
    rec.add("cluster_nodes", static_cast<std::uint64_t>(base.node_count()));
    rec.add("cluster_gpus", static_cast<std::uint64_t>(base.total_gpus()));
    rec.add("seed", o.seed);
    std::string list = "[";
    for (std::size_t i = 0; i < comps.size(); ++i) {
      const auto& p = comps[i].config;
      list += std::string(i ? ",\n    " : "\n    ") +
              json_object({{"label", gs::detail::json_string(comps[i].label)},
                           {"ordering", gs::detail::json_string(p.ordering)},
                           {"admission", gs::detail::json_string(p.admission)},
                           {"packing", gs::detail::json_string(p.packing)},
                           {"placement", gs::detail::json_string(p.placement)},
                           {"preemption", gs::detail::json_string(p.preemption)}});
    }
    rec.add_raw("compositions", list + "\n  ]");
    // Every setting of the communication model, given or not (its effective values).
    const auto num = [](double v) { return gs::detail::num(v, "%.10g"); };
    std::vector<std::pair<std::string, std::string>> comm{
        {"enabled", o.comm ? "true" : "false"},
        {"share_links", o.comm_share ? "true" : "false"},
        {"nic_gbps", num(o.nic_gbps)},
        {"intra_node_gbps", num(o.intra_gbps)},
        {"reference_gbps", num(o.reference_gbps)},
        {"leaf_nodes", std::to_string(o.leaf_nodes)},
        {"leaf_oversubscription", num(o.oversubscription)}};
    if (o.comm_profile) {
      comm.emplace_back("profile", json_object({{"compute_ms", num(o.comm_profile->compute_ms)},
                                                {"gradient_mb",
                                                 num(o.comm_profile->sync_bytes / 1e6)}}));
    } else {
      comm.emplace_back("profile", gs::detail::json_string("default mix (sim/communication.hpp)"));
    }
    rec.add_raw("communication", json_object(comm));
    write_out_file(root, "run.json", rec.text());
  }
  struct extra_figures {
    gs::locality_tally locality;
    gs::distribution urgent_wait_s;
    std::size_t urgent_started = 0;
    bool stopped_at_limit = false;
    bool stopped_at_cycle_limit = false;
    double end_s = 0;  ///< simulated seconds from the first event to the end of the run
  };
  std::vector<extra_figures> extra(comps.size());
  std::vector<gs::sim_summary> results;
  // Each composition is a cell: they run on --jobs threads and are handed back in order (files,
  // warnings and tables are written there), so the outputs are the same bytes for every --jobs.
  struct cell_out {
    gs::sim_summary summary;
    std::vector<gs::job_record> records;
    std::vector<gs::sim_sample> samples;
    gs::sim_totals totals;
    double secs = 0;
  };
  std::vector<cell_out> cells(comps.size());
  const std::size_t jobs_per_cell = tr.jobs.size();
  const std::size_t grid_jobs = jobs_per_cell * comps.size();
  // jobs done (finished or rejected) per cell, as last counted, for the progress line
  std::unique_ptr<std::atomic<std::size_t>[]> done_jobs(new std::atomic<std::size_t>[comps.size()]);
  for (std::size_t i = 0; i < comps.size(); ++i) done_jobs[i] = 0;
  std::atomic<std::size_t> cells_done{0};
  grid_progress progress(err, o.progress,
                         &err == &std::cerr && grid_progress::stderr_is_terminal());
  const auto grid_line = [&](const std::string& head) {
    std::size_t done = 0;
    for (std::size_t i = 0; i < comps.size(); ++i) done += done_jobs[i];
    const double f = grid_jobs == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(grid_jobs);
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.1f%%", 100 * f);
    return head + "; grid: " + std::to_string(cells_done.load()) + "/" +
           std::to_string(comps.size()) + " compositions, " + std::to_string(done) + "/" +
           std::to_string(grid_jobs) + " jobs done (" + pct + "), " + progress.timing(f);
  };
  const auto run_cell = [&](std::size_t ci) {
    const auto& c = comps[ci];
    const auto wall0 = std::chrono::steady_clock::now();
    std::size_t k = 0;  // jobs read (arrived) so far
    gs::simulator<gs::any_pipeline> sim(base, registry.make_pipeline(c.config, x), cfg);
    std::uint64_t calls = 0;
    // The observer runs inside sim.run below: what it captures by reference outlives it.
    sim.set_observer([&](gs::sim_time t, const gs::ledger& book) {
      // Every start of this event time (one cycle per event time): gang locality.
      for (const auto& r : book.running()) {
        if (r.start == t) {
          extra[ci].locality.record(r.tasks, gpus_per_node, leaves ? &*leaves : nullptr);
        }
      }
      if (!o.progress || (++calls & 1023u) != 0) return;
      std::size_t done = 0;
      for (const auto& r : sim.records()) done += r.outcome != gs::job_outcome::unfinished;
      done_jobs[ci] = done;
      char day[32];
      std::snprintf(day, sizeof day, "%.1f", gs::to_seconds(t) / 86400);
      progress.report(grid_line("[" + c.label + "] sim day " + day + ", " + std::to_string(done) +
                                "/" + std::to_string(jobs_per_cell) + " jobs done, " +
                                std::to_string(book.running().size()) + " running"));
    });
    sim.run([&]() -> std::optional<gs::sim_job> {
      if (k >= tr.jobs.size()) return std::nullopt;
      const auto& r = tr.jobs[k++];
      const auto spec = r.gpu_spec < allowed.size() ? allowed[r.gpu_spec] : gs::gpu_model_set{};
      gs::sim_job job{gs::to_job_spec(r, conv, spec), r.duration};
      job.comm = o.comm_profile;  // none: the model's default mix (with --comm)
      return job;
    });
    auto& res = cells[ci];
    res.summary =
        gs::summarize(sim.records(), sim.samples(), sim.totals(), tr.tenants, {}, c.label);
    res.records.assign(sim.records().begin(), sim.records().end());
    res.samples.assign(sim.samples().begin(), sim.samples().end());
    res.totals = sim.totals();
    res.secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    done_jobs[ci] = jobs_per_cell;
    ++cells_done;
    progress.report(grid_line("[" + c.label + "] done: " + std::to_string(res.totals.events) +
                              " events in " + gs::detail::num(res.secs, "%.2f") + " s"),
                    /*force=*/true);
  };
  const auto hand_back = [&](std::size_t ci) {
    const auto& c = comps[ci];
    cell_out run = std::move(cells[ci]);
    cells[ci] = {};
    const double secs = run.secs;
    results.push_back(run.summary);
    extra[ci].stopped_at_limit = run.totals.stopped_at_limit;
    extra[ci].stopped_at_cycle_limit = run.totals.stopped_at_cycle_limit;
    extra[ci].end_s = static_cast<double>((run.totals.end - run.totals.start).count()) / 1000.0;
    if (run.totals.stopped_at_cycle_limit) {
      err << "replay: " << c.label << ": stopped after " << o.max_cycles
          << " scheduling cycles (--max-cycles), " << gs::detail::num(extra[ci].end_s, "%.0f")
          << " simulated seconds in; the jobs not finished by then are reported as unfinished "
             "(raise --max-cycles, or use a longer --trigger)\n";
    }
    if (run.totals.samples_capped) {
      err << "replay: " << c.label << ": the time series stops after " << cfg.max_samples
          << " samples (every " << o.sample_s
          << " s); the run itself is complete. A larger --sample-s covers the whole run\n";
    }
    if (urgent > 0) {
      std::vector<double> waits;
      for (const auto& r : run.records) {
        if (r.priority == o.urgent_priority && r.first_start) {
          waits.push_back(gs::to_seconds(*r.first_start - r.submit));
        }
      }
      extra[ci].urgent_started = waits.size();
      extra[ci].urgent_wait_s = gs::summarize_values(waits);
    }
    if (tables != nullptr) {
      replay_tables t;
      t.label = c.label;
      std::ostringstream a, b, d, e;
      gs::write_summary_csv(a, std::span<const gs::sim_summary>(&results.back(), 1));
      gs::write_jobs_csv(b, run.records, tr.tenants);
      gs::write_samples_csv(d, run.samples);
      gs::write_tenants_csv(e, results.back());
      t.summary_csv = a.str();
      t.jobs_csv = b.str();
      t.samples_csv = d.str();
      t.tenants_csv = e.str();
      t.events = run.totals.events;
      t.wall_s = secs;
      tables->push_back(std::move(t));
    }
    if (!o.out_dir.empty()) {
      g_stage = "writing the results of '" + c.label + "' under " + o.out_dir;
      const std::filesystem::path root(o.out_dir);
      const std::filesystem::path dir(c.label);
      std::ostringstream a, b, d, e;
      gs::write_summary_json(a, results.back());
      gs::write_jobs_csv(b, run.records, tr.tenants);
      gs::write_samples_csv(d, run.samples);
      gs::write_tenants_csv(e, results.back());
      write_out_file(root, dir / "summary.json", a.str());
      write_out_file(root, dir / "jobs.csv", b.str());
      write_out_file(root, dir / "samples.csv", d.str());
      write_out_file(root, dir / "tenants.csv", e.str());
      const auto& lt = extra[ci].locality;
      const auto& w = extra[ci].urgent_wait_s;
      const auto wait = [&](double v) {
        return extra[ci].urgent_started > 0 ? gs::detail::num(v) : std::string();
      };
      std::ostringstream g;
      g << "multi_gpu_gangs,one_node,one_leaf,node_sized,node_sized_one_node,urgent_jobs,"
           "urgent_started,urgent_wait_mean_s,urgent_wait_p95_s,urgent_wait_max_s\n"
        << lt.gangs << "," << lt.one_node << "," << (leaves ? std::to_string(lt.one_domain) : "")
        << "," << lt.node_sized << "," << lt.node_sized_one << "," << urgent << ","
        << extra[ci].urgent_started << "," << wait(w.mean) << "," << wait(w.p95) << ","
        << wait(w.max) << "\n";
      write_out_file(root, dir / "placement_urgent.csv", g.str());
    }
  };
  g_stage = comps.size() == 1 ? "replaying composition '" + comps.front().label + "'"
                              : "replaying " + std::to_string(comps.size()) + " compositions";
  const unsigned threads = o.jobs > 0 ? o.jobs : default_jobs();
  run_cells(comps.size(), threads, run_cell, hand_back);
  if (!o.out_dir.empty()) {
    g_stage = "writing " + o.out_dir + "/summary.csv";
    std::ostringstream s;
    gs::write_summary_csv(s, results);
    write_out_file(o.out_dir, "summary.csv", s.str());
  }
  if (!o.quiet) {
    out << "trace " << tr.source << ": " << tr.jobs.size() << " jobs; cluster ";
    if (cs.openb_nodes.empty()) {
      out << cs.nodes << " x " << cs.gpus << " " << cs.model << "\n";
    } else {
      out << nodes.size() << " nodes, " << base.total_gpus() << " GPUs from " << cs.openb_nodes
          << "\n";
    }
    gs::print_table(out, results);
    for (std::size_t ci = 0; ci < comps.size(); ++ci) {
      if (extra[ci].stopped_at_cycle_limit) {
        out << comps[ci].label << ": stopped at the cycle limit (--max-cycles " << o.max_cycles
            << ") after " << gs::detail::num(extra[ci].end_s, "%.0f") << " simulated seconds; "
            << results[ci].unfinished << " of the " << results[ci].jobs
            << " jobs that arrived by then did not finish\n";
      }
      if (!extra[ci].stopped_at_limit) continue;
      out << comps[ci].label << ": stopped at the time limit (" << o.time_limit_days << " days); "
          << results[ci].unfinished << " of the " << results[ci].jobs
          << " jobs that arrived by then did not finish\n";
    }
    // Gang locality (placements of more than one GPU, counted at every start) and urgent jobs.
    out << "\nmulti-GPU placements (every start): one node = one NVLink domain"
        << (leaves ? "; one leaf of " + std::to_string(o.leaf_nodes) + " nodes" : std::string())
        << "\n";
    for (std::size_t ci = 0; ci < comps.size(); ++ci) {
      const auto& lt = extra[ci].locality;
      out << "  " << comps[ci].label << ": " << lt.gangs << " placements, one node " << lt.one_node
          << " (" << lt.one_node_fraction() << ")";
      if (leaves) out << ", one leaf " << lt.one_domain << " (" << lt.one_domain_fraction() << ")";
      out << ", node-sized on one node " << lt.node_sized_one << "/" << lt.node_sized << "\n";
    }
    if (urgent > 0) {
      out << "\nurgent jobs " << urgent << " (priority " << o.urgent_priority
          << "): wait = first start - submit, seconds\n";
      for (std::size_t ci = 0; ci < comps.size(); ++ci) {
        const auto& w = extra[ci].urgent_wait_s;
        out << "  " << comps[ci].label << ": started " << extra[ci].urgent_started << ", mean wait "
            << w.mean << ", p95 " << w.p95 << ", max " << w.max << "\n";
      }
    }
  }
  return 0;
}

/// The registry's policy names with their one-line summaries, per family (the end of --help).
template <class Tag>
void print_family(std::ostream& out, const gs::policy_registry& reg) {
  out << "  " << gs::family_name<Tag>() << ":\n";
  for (const auto name : reg.names<Tag>()) {
    out << "    " << name << std::string(name.size() < 22 ? 22 - name.size() : 1, ' ')
        << reg.summary<Tag>(name) << "\n";
  }
}

void print_policy_names(std::ostream& out) {
  const gs::policy_registry reg;
  out << "\npolicy names (--policy/--compare slot=name):\n";
  print_family<gs::ordering_tag>(out, reg);
  print_family<gs::admission_tag>(out, reg);
  print_family<gs::packing_tag>(out, reg);
  print_family<gs::placement_tag>(out, reg);
  print_family<gs::preemption_tag>(out, reg);
}

}  // namespace

int run_replay(int argc, char** argv, std::ostream& out, std::ostream& err) {
  g_stage = "reading the options";
  try {
    // the replay subcommand of gpusched-experiment is called with argv[0] = "replay"
    const bool sub = argc > 0 && std::string_view(argv[0]) == "replay";
    const std::string name = sub ? "gpusched-experiment replay" : "gpusched-replay";
    options o = parse(std::vector<std::string>(argv + 1, argv + argc), {}, true, name);
    o.command.assign(argv, argv + argc);
    o.program = name;
    if (o.help) {
      out << help_text(name);
      print_policy_names(out);
      return 0;
    }
    return run(o, out, err, gs::policy_registry{}, nullptr);
  } catch (const usage_error& e) {
    err << "replay: " << gs::detail::printable_message(e.what) << "\n(--help for usage)\n";
  } catch (const gs::error& e) {
    err << "replay: " << e.what() << "\n";
  } catch (const std::filesystem::filesystem_error& e) {
    err << "replay: " << e.what() << "\n";
  } catch (const std::bad_alloc&) {
    err << "replay: out of memory while " << g_stage << "\n";
    return 3;
  } catch (const std::exception& e) {
    err << "replay: error while " << g_stage << ": " << e.what() << "\n";
    return 3;
  } catch (...) {
    err << "replay: unknown exception while " << g_stage << "\n";
    return 3;
  }
  return 2;
}

int run_replay(int argc, char** argv) { return run_replay(argc, argv, std::cout, std::cerr); }

int check_replay_arguments(const std::vector<std::string>& args, const std::string& config_text,
                           std::ostream& err) {
  try {
    options o;
    if (!config_text.empty()) {
      std::istringstream in(config_text);
      read_config(o, in, "<config>");
    }
    o = parse(args, o, /*read_files=*/false);
    const auto cs = parse_cluster(o.cluster);
    (void)cs;
    for (const auto& c : o.compositions) (void)parse_composition(c, {}, gs::policy_registry{});
    return 0;
  } catch (const usage_error& e) {
    err << "replay: " << gs::detail::printable_message(e.what) << "\n";
  } catch (const gs::error& e) {
    err << "replay: " << e.what() << "\n";
  }
  return 2;
}

std::vector<replay_tables> run_replay_tables(const std::vector<std::string>& args,
                                             const gs::policy_registry& registry) {
  std::vector<replay_tables> tables;
  try {
    options o = parse(args);
    o.program = "gpusched.replay (Python)";
    o.command = args;
    // Python policies call back into the interpreter: one thread unless jobs= is given.
    if (!o.given.contains("jobs")) o.jobs = 1;
    if (o.help) {
      throw gs::invalid_value_error(gs::error_id::invalid_value, "replay", "help", "true",
                                    help_text("gpusched.replay"));
    }
    std::ostringstream quiet_out, quiet_err;
    (void)run(o, quiet_out, quiet_err, registry, &tables);
  } catch (const usage_error& e) {
    throw gs::error(gs::error_id::invalid_value, "replay: " + e.what);
  }
  return tables;
}

}  // namespace gpusched_experiment
