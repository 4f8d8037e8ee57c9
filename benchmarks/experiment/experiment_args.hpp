// SPDX-License-Identifier: Apache-2.0
// The command line of gpusched-experiment's `packing` and `mig` subcommands, parsed with CLI11
// (Debian libcli11-dev) and checked without reading any file: the program (gpusched_experiment.cpp)
// and the argument fuzzer (tests/fuzz, `experiment_args`) share it. Every number goes through
// the library's strict parser (gpusched/core/parse.hpp: no hex, no `+`, no inf/nan, no trailing
// text), and every error names the option and the value.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include <gpusched/core/parse.hpp>
#include <gpusched/policy/packing/fgd.hpp>

#include "mig_experiment.hpp"  // mig_policy_kind, mig_cover, mig_model_name

namespace gpusched_experiment {

namespace gs = gpusched;

/// Bad command line: printed with a pointer to --help, exit code 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The items of the list option `what` (`--seeds`, `--policy`), split at `sep`. An empty item
/// (`1,,2`, a leading or trailing comma) is refused, naming the option: a list option takes
/// each item once and nothing else. An empty list is left to the caller ("no seed given").
inline std::vector<std::string> split_list(const std::string& s, char sep, const char* what) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  for (std::size_t start = 0;;) {
    const auto k = s.find(sep, start);
    const std::string part = s.substr(start, k == std::string::npos ? k : k - start);
    if (part.empty()) {
      throw usage_error(std::string(what) + ": empty item in '" + s + "' (item " +
                        std::to_string(out.size() + 1) + "): give each item once, separated by '" +
                        std::string(1, sep) + "'");
    }
    out.push_back(part);
    if (k == std::string::npos) break;
    start = k + 1;
  }
  return out;
}

inline std::uint64_t to_u64(const std::string& s, const char* what) {
  const auto r = gs::parse_integer<std::uint64_t>(s);
  if (!r.ok()) throw usage_error(std::string(what) + ": " + gs::number_problem(s, r.status));
  return r.value;
}

inline double to_double(const std::string& s, const char* what) {
  const auto r = gs::parse_real(s);
  if (!r.ok()) throw usage_error(std::string(what) + ": " + gs::number_problem(s, r.status));
  return r.value;
}

/// "42-51", "42,43,50" or "7"; at most 10,001 seeds in a range, 100,000 in all; any seed in
/// 0..2^64-1 (a range may end there).
inline std::vector<std::uint64_t> parse_seeds(const std::string& s) {
  std::vector<std::uint64_t> out;
  for (const auto& part : split_list(s, ',', "--seeds")) {
    const auto dash = part.find('-');
    if (dash == std::string::npos) {
      out.push_back(to_u64(part, "--seeds"));
      continue;
    }
    const auto lo = to_u64(part.substr(0, dash), "--seeds");
    const auto hi = to_u64(part.substr(dash + 1), "--seeds");
    if (hi < lo) throw usage_error("--seeds: bad range '" + part + "' (the end is below the start)");
    if (hi - lo > 10000) {
      throw usage_error("--seeds: range '" + part + "' holds more than 10,001 seeds");
    }
    // Counted, not compared with `hi`: a range ending at 2^64-1 would never end otherwise.
    for (std::uint64_t k = 0; k <= hi - lo; ++k) out.push_back(lo + k);
    if (out.size() > 100000) throw usage_error("--seeds: more than 100,000 seeds");
  }
  if (out.empty()) throw usage_error("--seeds: no seed given");
  // A seed given twice (1,1 or overlapping ranges 1-3,2-4) would run its cells twice and
  // weigh it twice in every mean: refused, naming the seed.
  std::vector<std::uint64_t> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (const auto d = std::adjacent_find(sorted.begin(), sorted.end()); d != sorted.end()) {
    throw usage_error("--seeds: seed " + std::to_string(*d) + " is given twice in '" + s +
                      "' (its runs would count twice in the means): give each seed once");
  }
  return out;
}

/// The FGD experiment's policy names, with the library registry's packing names as aliases
/// (`fgd-best-fit` is `fgd`, `gpu-clustering` is `clustering`, ...).
inline std::vector<gs::fgd_policy_kind> parse_policies(const std::string& s) {
  static const std::pair<std::string_view, gs::fgd_policy_kind> names[] = {
      {"random", gs::fgd_policy_kind::random},
      {"dotprod", gs::fgd_policy_kind::dotprod},
      {"clustering", gs::fgd_policy_kind::clustering},
      {"packing", gs::fgd_policy_kind::packing},
      {"bestfit", gs::fgd_policy_kind::bestfit},
      {"fgd", gs::fgd_policy_kind::fgd},
      // the registry's names (pipeline/registry.hpp) for the same packers
      {"gpu-clustering", gs::fgd_policy_kind::clustering},
      {"gpu-packing", gs::fgd_policy_kind::packing},
      {"best-fit", gs::fgd_policy_kind::bestfit},
      {"fgd-best-fit", gs::fgd_policy_kind::fgd}};
  std::vector<gs::fgd_policy_kind> out;
  std::vector<std::string> from;  // the item that gave each policy
  const auto add = [&](gs::fgd_policy_kind k, const std::string& part) {
    if (const auto it = std::find(out.begin(), out.end(), k); it != out.end()) {
      const auto& first = from[static_cast<std::size_t>(it - out.begin())];
      throw usage_error("--policy: " + std::string(gs::fgd_policy_label(k)) +
                        " is given twice in '" + s + "' ('" + first + "'" +
                        (first == part ? " twice" : " and '" + part + "'") +
                        "; its runs would count twice): give each policy once");
    }
    out.push_back(k);
    from.push_back(part);
  };
  for (const auto& part : split_list(s, ',', "--policy")) {
    if (part == "all") {
      for (std::size_t i = 0; i < 6; ++i) add(names[i].second, part);
      continue;
    }
    const auto it = std::find_if(std::begin(names), std::end(names),
                                 [&](const auto& p) { return p.first == part; });
    if (it == std::end(names)) {
      throw usage_error("--policy: unknown policy '" + part +
                        "' (known: random, dotprod, clustering, packing, bestfit, fgd, all; "
                        "registry aliases: gpu-clustering, gpu-packing, best-fit, fgd-best-fit)");
    }
    add(it->second, part);
  }
  if (out.empty()) throw usage_error("--policy: no policy given");
  return out;
}

inline std::vector<gs::mig_policy_kind> parse_mig_policies(const std::string& s) {
  std::vector<gs::mig_policy_kind> out;
  std::vector<std::string> from;  // the item that gave each policy
  const auto add = [&](gs::mig_policy_kind k, const std::string& part) {
    if (const auto it = std::find(out.begin(), out.end(), k); it != out.end()) {
      const auto& first = from[static_cast<std::size_t>(it - out.begin())];
      throw usage_error("--policy: " + std::string(gs::mig_policy_label(k)) +
                        " is given twice in '" + s + "' ('" + first + "'" +
                        (first == part ? " twice" : " and '" + part + "'") +
                        "; its runs would count twice): give each policy once");
    }
    out.push_back(k);
    from.push_back(part);
  };
  for (const auto& part : split_list(s, ',', "--policy")) {
    if (part == "first-fit") {
      add(gs::mig_policy_kind::first_fit, part);
    } else if (part == "mig-aware") {
      add(gs::mig_policy_kind::mig_aware, part);
    } else if (part == "all") {
      add(gs::mig_policy_kind::first_fit, part);
      add(gs::mig_policy_kind::mig_aware, part);
    } else {
      throw usage_error("--policy: unknown policy '" + part +
                        "' (known: first-fit, mig-aware, all)");
    }
  }
  if (out.empty()) throw usage_error("--policy: no policy given");
  return out;
}

/// `--jobs N`: 1..1024 worker threads.
inline unsigned parse_jobs(const std::string& s) {
  const auto n = to_u64(s, "--jobs");
  if (n < 1 || n > 1024) throw usage_error("--jobs: '" + s + "' is not in 1..1024");
  return static_cast<unsigned>(n);
}

/// What `packing` and `mig` were given, as text, before the checks.
struct raw_args {
  std::string nodes, pods, policy = "all", seeds = "42-51", tune = "1.3", out, published,
                                   workload, popularity = "95", model = "A100-40GB",
                                   cover = "compute", jobs, cell, merge;
  bool slurm_array = false, submit = false;
  bool random_ties = false, name_order = false, no_timing = false, with_fractional = false,
       check_invariants = false, progress = false;
};

/// The checked options of `packing` (FGD) or `mig`.
struct experiment_args {
  std::string subcommand;  ///< "packing" or "mig"
  std::string nodes, pods, out, published, workload;
  std::vector<gs::fgd_policy_kind> policies;  ///< packing
  std::vector<gs::mig_policy_kind> mig_policies;
  std::vector<std::uint64_t> seeds;
  double tune = 1.3, popularity = 95;
  std::string model;  ///< mig: the catalog's model name
  std::string cover = "compute";
  unsigned jobs = 0;  ///< 0: the machine's cores
  /// --cell I: run only cell I (0-based, in the order of the printed rows) into --out/cell.txt
  std::optional<std::size_t> cell;
  std::string merge;  ///< --merge DIR: the outputs of a local run from DIR/<i>/cell.txt
  bool slurm_array = false, submit = false;  ///< write (and submit) the Slurm job array
  bool random_ties = false, name_order = false, timing = true, fractional = false,
       check_invariants = false, progress = false;
};

/// The CLI11 application: subcommands packing, mig and replay (replay's own parser reads its
/// options: benchmarks/replay/replay.hpp), each with --help.
inline std::unique_ptr<CLI::App> make_experiment_app(raw_args& r) {
  auto app = std::make_unique<CLI::App>(
      "Reproducible experiments over real traces (benchmarks/README.md).", "gpusched-experiment");
  app->require_subcommand(1);
  const auto common = [&](CLI::App* c) {
    c->add_option("--nodes", r.nodes, "openb node list (sn,cpu_milli,memory_mib,gpu,model)")
        ->type_name("NODE_CSV")
        ->required();
    c->add_option("--pods", r.pods, "openb pod list")->type_name("POD_CSV")->required();
    c->add_option("--seeds", r.seeds, "seeds: 42-51, 42,43,50 or 7 (default 42-51)")
        ->type_name("SEEDS");
    c->add_option("--tune", r.tune,
                  "inflate the workload until this multiple of the cluster's GPUs has arrived, "
                  "in (0, 10] (default 1.3)")
        ->type_name("X");
    c->add_option("--out", r.out,
                  "write run.json and the analysis_*_discrete.csv tables (the published layout)")
        ->type_name("DIR");
    c->add_option("--workload", r.workload, "workload name in the tables (default: the pod file's stem)")
        ->type_name("NAME");
    c->add_option("--jobs", r.jobs,
                  "run independent (policy, seed) cells on N threads (default: the machine's "
                  "cores); the outputs are the same bytes for every N")
        ->type_name("N");
    c->add_flag("--progress", r.progress,
                "print progress on standard error: cells done of all, elapsed, ETA");
    c->add_flag("--no-timing", r.no_timing, "leave out the wall-time column (output then repeatable byte for byte)");
  };
  const auto grid = [&](CLI::App* c) {
    auto* array = c->add_flag("--slurm-array", r.slurm_array,
                              "write OUT/slurm/array.sh (an sbatch --array script: each task runs "
                              "one cell into OUT/cells/<i>) and OUT/slurm/merge.sh (builds the "
                              "outputs of a local run in OUT); needs --out");
    c->add_flag("--submit", r.submit,
                "with --slurm-array: submit both, the merge after the array (afterok)")
        ->needs(array);
    auto* cell = c->add_option("--cell", r.cell, "run only cell I (0-based, in row order) into --out")
                     ->type_name("I");
    c->add_option("--merge", r.merge,
                  "build the outputs from the cells under DIR (DIR/<i>/cell.txt) instead of "
                  "running them")
        ->type_name("DIR")
        ->excludes(cell)
        ->excludes(array);
    cell->excludes(array);
  };
  auto* packing = app->add_subcommand(
      "packing", "the FGD packing experiment (Weng et al., ATC'23) on an openb trace");
  common(packing);
  grid(packing);
  packing
      ->add_option("--policy", r.policy,
                   "random|dotprod|clustering|packing|bestfit|fgd|all[,...] (registry aliases "
                   "gpu-clustering, gpu-packing, best-fit, fgd-best-fit; default all)")
      ->type_name("POLICIES");
  packing->add_option("--published", r.published,
                      "the FGD artifact's analysis_allo_discrete.csv: the published means beside ours")
      ->type_name("ALLO_CSV");
  packing->add_option("--popularity", r.popularity,
                      "GPU-spec popularity percentile of the target workload, in (0, 100] (default 95)")
      ->type_name("P");
  packing->add_flag("--random-ties", r.random_ties, "break score ties at random (the artifact's choice)");
  packing->add_flag("--name-order", r.name_order, "visit nodes in name order (default: a seeded permutation)");
  auto* mig = app->add_subcommand(
      "mig", "the packing experiment's pods on a MIG-partitioned copy of the cluster");
  common(mig);
  mig->add_option("--policy", r.policy, "first-fit|mig-aware|all[,...] (default all)")
      ->type_name("POLICIES");
  mig->add_option("--model", r.model, "MIG GPU model: A100-40GB, H100-80GB or a catalog name")
      ->type_name("MODEL");
  mig->add_option("--cover", r.cover, "compute|memory: what an instance's share counts (default compute)")
      ->type_name("COVER");
  mig->add_flag("--with-fractional", r.with_fractional, "also run fractional FGD on the same pods");
  mig->add_flag("--check-invariants", r.check_invariants, "audit the ledger after every pod (slow)");
  app->add_subcommand("replay",
                      "replay a trace with policy compositions (`replay --help` for its options)");
  for (auto* c : {packing, mig}) {
    c->allow_extras();  // named one at a time by parse_experiment_command
    for (auto* o : c->get_options()) {
      // Kept all: parse_experiment_command refuses an option given twice, naming it and its
      // values (CLI11's own Throw says only "At Most 1 required but received 2").
      if (o->get_name() != "--help") o->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    }
  }
  return app;
}

/// Checks what CLI11 read: numbers, ranges, names. Reads no file.
inline experiment_args check_experiment_args(const std::string& subcommand, const raw_args& r) {
  experiment_args a;
  a.subcommand = subcommand;
  a.nodes = r.nodes;
  a.pods = r.pods;
  a.out = r.out;
  a.published = r.published;
  a.workload = r.workload;
  a.seeds = parse_seeds(r.seeds);
  a.tune = to_double(r.tune, "--tune");
  if (!(a.tune > 0) || a.tune > 10) throw usage_error("--tune: '" + r.tune + "' is not in (0, 10]");
  a.jobs = r.jobs.empty() ? 0 : parse_jobs(r.jobs);
  a.timing = !r.no_timing;
  a.progress = r.progress;
  if (!r.cell.empty()) a.cell = to_u64(r.cell, "--cell");
  a.merge = r.merge;
  a.slurm_array = r.slurm_array;
  a.submit = r.submit;
  if ((a.slurm_array || a.cell) && a.out.empty()) {
    throw usage_error(std::string(a.slurm_array ? "--slurm-array" : "--cell") + " needs --out DIR");
  }
  if (subcommand == "packing") {
    a.policies = parse_policies(r.policy);
    a.popularity = to_double(r.popularity, "--popularity");
    if (!(a.popularity > 0) || a.popularity > 100) {
      throw usage_error("--popularity: '" + r.popularity + "' is not in (0, 100]");
    }
    a.random_ties = r.random_ties;
    a.name_order = r.name_order;
  } else {
    a.mig_policies = parse_mig_policies(r.policy);
    try {
      a.model = gs::mig_model_name(r.model, "--model");
    } catch (const gs::invalid_value_error&) {
      std::string known = "A100-40GB, H100-80GB";
      for (const char* n : gs::mig_model_names) known += std::string(", ") + n;
      throw usage_error("--model: unknown MIG model '" + r.model + "' (known: " + known + ")");
    }
    if (r.cover != "compute" && r.cover != "memory") {
      throw usage_error("--cover: unknown cover '" + r.cover + "' (known: compute, memory)");
    }
    a.cover = r.cover;
    a.fractional = r.with_fractional;
    a.check_invariants = r.check_invariants;
  }
  return a;
}

/// The outcome of reading a command line.
struct parsed_command {
  enum class kind { run, help, replay } what = kind::run;
  experiment_args args;  ///< kind::run
  std::string help;      ///< kind::help: the text to print
};

/// Reads `args` (after the program name). `replay` is left to the replay command's parser.
/// @throws usage_error naming the option and the value.
inline parsed_command parse_experiment_command(const std::vector<std::string>& args) {
  parsed_command out;
  if (!args.empty() && args.front() == "replay") {
    out.what = parsed_command::kind::replay;
    return out;
  }
  if (!args.empty() && !args.front().starts_with("-") && args.front() != "packing" &&
      args.front() != "mig") {
    throw usage_error("unknown subcommand '" + args.front() + "' (known: packing, mig, replay)");
  }
  raw_args r;
  auto app = make_experiment_app(r);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
  try {
    app->parse(reversed);
  } catch (const CLI::CallForHelp&) {
    out.what = parsed_command::kind::help;
    const auto subs = app->get_subcommands();
    out.help = subs.empty() ? app->help() : subs.front()->help();
    return out;
  } catch (const CLI::ParseError& e) {
    const auto subs = app->get_subcommands();
    throw usage_error((subs.empty() ? std::string() : subs.front()->get_name() + ": ") + e.what());
  }
  const std::string sub = app->get_subcommands().front()->get_name();
  // An option given twice: the last would silently win.
  for (const auto* opt : app->get_subcommands().front()->get_options()) {
    if (opt->count() > 1) {
      std::string values;
      for (const auto& v : opt->results()) values += (values.empty() ? "'" : ", '") + v + "'";
      throw usage_error(sub + ": " + opt->get_name() + " is given " + std::to_string(opt->count()) +
                        " times (" + values + "): give it once");
    }
  }
  if (const auto extra = app->get_subcommands().front()->remaining(); !extra.empty()) {
    const std::string& a = extra.front();
    throw usage_error(sub + ": " +
                      (a.rfind("-", 0) == 0 ? "unknown option '" + a.substr(0, a.find('=')) + "'"
                                            : "unexpected argument '" + a + "'"));
  }
  try {
    out.args = check_experiment_args(sub, r);
  } catch (const usage_error& e) {
    throw usage_error(sub + ": " + e.what());
  }
  return out;
}

/// For the argument fuzzer: 0 when `args` are valid, 2 with the message on `err`; reads no file.
inline int check_experiment_arguments(const std::vector<std::string>& args, std::ostream& err) {
  try {
    (void)parse_experiment_command(args);
    return 0;
  } catch (const usage_error& e) {
    err << "gpusched-experiment: " << e.what() << "\n";
  }
  return 2;
}

}  // namespace gpusched_experiment
