// SPDX-License-Identifier: Apache-2.0
// gpusched-experiment: reproducible experiments over real traces.
//
//   gpusched-experiment packing --nodes NODE_CSV --pods POD_CSV
//       [--policy random|dotprod|clustering|packing|bestfit|fgd|all[,...]] [--seeds 42-51]
//       [--tune 1.3] [--out DIR] [--published ALLO_CSV] [--workload NAME] [--popularity 95]
//       [--random-ties] [--no-timing]
//
// Subcommands are rows of the `commands` table below: adding one is a function and a line.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gpusched/core/error.hpp>
#include <gpusched/experiment/fgd_experiment.hpp>
#include <gpusched/trace/openb.hpp>

#include "replay.hpp"  // the replay subcommand (benchmarks/replay/)

namespace gs = gpusched;

namespace {

/// Bad command line: printed with the usage, exit code 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// `--flag value` options plus boolean `--flag`s.
class options {
 public:
  options(std::span<const std::string_view> args, std::vector<std::string_view> flags_with_value,
          std::vector<std::string_view> bool_flags) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const auto a = args[i];
      if (std::find(bool_flags.begin(), bool_flags.end(), a) != bool_flags.end()) {
        values_[std::string(a)] = "1";
      } else if (std::find(flags_with_value.begin(), flags_with_value.end(), a) !=
                 flags_with_value.end()) {
        if (i + 1 >= args.size()) throw usage_error("option " + std::string(a) + " needs a value");
        values_[std::string(a)] = std::string(args[++i]);
      } else {
        throw usage_error("unknown option '" + std::string(a) + "'");
      }
    }
  }
  [[nodiscard]] bool has(const std::string& k) const { return values_.contains(k); }
  [[nodiscard]] std::string get(const std::string& k, std::string fallback = {}) const {
    const auto it = values_.find(k);
    return it == values_.end() ? fallback : it->second;
  }
  [[nodiscard]] std::string require(const std::string& k) const {
    if (!has(k)) throw usage_error("missing required option " + k);
    return get(k);
  }

 private:
  std::map<std::string, std::string> values_;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, sep)) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

std::uint64_t to_u64(const std::string& s, const char* what) {
  char* end = nullptr;
  const auto v = std::strtoull(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0')
    throw usage_error(std::string(what) + ": '" + s + "' is not a number");
  return v;
}

/// "42-51", "42,43,50" or "7".
std::vector<std::uint64_t> parse_seeds(const std::string& s) {
  std::vector<std::uint64_t> out;
  for (const auto& part : split(s, ',')) {
    const auto dash = part.find('-');
    if (dash == std::string::npos) {
      out.push_back(to_u64(part, "--seeds"));
      continue;
    }
    const auto lo = to_u64(part.substr(0, dash), "--seeds");
    const auto hi = to_u64(part.substr(dash + 1), "--seeds");
    if (hi < lo || hi - lo > 10000) throw usage_error("--seeds: bad range '" + part + "'");
    for (auto v = lo; v <= hi; ++v) out.push_back(v);
  }
  if (out.empty()) throw usage_error("--seeds: no seed given");
  return out;
}

std::vector<gs::fgd_policy_kind> parse_policies(const std::string& s) {
  static const std::pair<std::string_view, gs::fgd_policy_kind> names[] = {
      {"random", gs::fgd_policy_kind::random},         {"dotprod", gs::fgd_policy_kind::dotprod},
      {"clustering", gs::fgd_policy_kind::clustering}, {"packing", gs::fgd_policy_kind::packing},
      {"bestfit", gs::fgd_policy_kind::bestfit},       {"fgd", gs::fgd_policy_kind::fgd}};
  std::vector<gs::fgd_policy_kind> out;
  for (const auto& part : split(s, ',')) {
    if (part == "all") {
      for (const auto& [n, k] : names) out.push_back(k);
      continue;
    }
    const auto it = std::find_if(std::begin(names), std::end(names),
                                 [&](const auto& p) { return p.first == part; });
    if (it == std::end(names)) {
      throw usage_error("--policy: unknown policy '" + part +
                        "' (known: random, dotprod, clustering, packing, bestfit, fgd, all)");
    }
    out.push_back(it->second);
  }
  if (out.empty()) throw usage_error("--policy: no policy given");
  return out;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// Published means of unallocated GPU % at arrived 100 and the last bin, per policy label, for
/// one workload, read from an `analysis_allo_discrete.csv` of the FGD artifact.
struct published_means {
  std::map<std::string, std::pair<double, double>> by_label;  // label -> (at 100, at last)
  std::map<std::string, int> runs;
};
published_means read_published(const std::string& path, const std::string& workload,
                               const std::string& last_bin) {
  std::ifstream in(path);
  if (!in) throw gs::parse_error(path, 0, "(file)", "cannot open file");
  std::string line;
  std::getline(in, line);
  const auto header = split(line, ',');
  const auto col = [&](const std::string& name) -> std::size_t {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw gs::parse_error(path, 1, name, "missing column");
    return static_cast<std::size_t>(it - header.begin());
  };
  const auto c_work = col("workload"), c_pol = col("sc_policy"), c100 = col("100"),
             clast = col(last_bin);
  published_means out;
  std::size_t n = 1;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    const auto cells = split(line, ',');
    if (cells.size() <= std::max(c100, clast)) {
      throw gs::parse_error(path, n, "(line)", "too few columns");
    }
    if (cells[c_work] != workload) continue;
    auto& m = out.by_label[cells[c_pol]];
    m.first += 100.0 - std::stod(cells[c100]);
    m.second += 100.0 - std::stod(cells[clast]);
    ++out.runs[cells[c_pol]];
  }
  for (auto& [k, v] : out.by_label) {
    v.first /= out.runs[k];
    v.second /= out.runs[k];
  }
  return out;
}

void write_csvs(const std::filesystem::path& dir, const std::string& workload,
                const std::vector<gs::fgd_run_result>& runs) {
  std::filesystem::create_directories(dir);
  std::ofstream allo(dir / "analysis_allo_discrete.csv");
  std::ofstream frag(dir / "analysis_frag_discrete.csv");
  std::ofstream ratio(dir / "analysis_frag_ratio_discrete.csv");
  if (!allo || !frag || !ratio) throw gs::parse_error(dir.string(), 0, "(out)", "cannot write");
  const std::size_t bins = runs.empty() ? 0 : runs.front().bins();
  std::string cols;
  for (std::size_t k = 0; k < bins; ++k) cols += "," + std::to_string(k);
  allo << "workload,sc_policy,tune,seed,total_gpus" << cols << "\n";
  frag << "workload,sc_policy,tune,seed" << cols << "\n";
  ratio << "workload,sc_policy,tune,seed" << cols << "\n";
  for (const auto& r : runs) {
    const std::string key = workload + "," + std::string(gs::fgd_policy_label(r.policy)) + "," +
                            fmt("%g", r.tune) + "," + std::to_string(r.seed);
    allo << key << "," << r.total_gpus;
    frag << key;
    ratio << key;
    for (std::size_t k = 0; k < r.bins(); ++k) {
      allo << "," << fmt("%.2f", r.alloc[k]);
      frag << "," << fmt("%.2f", r.frag[k]);
      ratio << "," << fmt("%.15g", r.frag_ratio[k]);
    }
    allo << "\n";
    frag << "\n";
    ratio << "\n";
  }
}

int run_packing(std::span<const std::string_view> args) {
  const options o(args,
                  {"--nodes", "--pods", "--policy", "--seeds", "--tune", "--out", "--published",
                   "--workload", "--popularity"},
                  {"--random-ties", "--no-timing"});
  const auto nodes_path = o.require("--nodes");
  const auto pods_path = o.require("--pods");
  const auto policies = parse_policies(o.get("--policy", "all"));
  const auto seeds = parse_seeds(o.get("--seeds", "42-51"));
  const double tune = std::stod(o.get("--tune", "1.3"));
  const double popularity = std::stod(o.get("--popularity", "95"));
  if (!(tune > 0) || tune > 10) throw usage_error("--tune: must be in (0, 10]");
  if (!(popularity > 0) || popularity > 100) throw usage_error("--popularity: must be in (0, 100]");
  const bool timing = !o.has("--no-timing");
  const std::string workload =
      o.get("--workload", std::filesystem::path(pods_path).stem().string());

  const gs::fgd_experiment exp(gs::load_openb_nodes(nodes_path), gs::load_openb_pods(pods_path));
  std::printf("FGD packing experiment: %zu nodes, %lld GPUs, %zu pods (%s), tune %g, %zu seed(s)\n",
              exp.node_count(), static_cast<long long>(exp.total_gpus()), exp.pod_count(),
              workload.c_str(), tune, seeds.size());
  const auto last = static_cast<std::size_t>(std::lround(tune * 100));
  const std::string last_s = std::to_string(last);
  std::printf("%-17s %5s %8s %8s %8s %8s %8s %7s%s\n", "policy", "seed", "pods", "failed",
              "alloc100", "unalc100", ("unalc" + last_s).c_str(), "frag100",
              timing ? "   wall_s" : "");
  std::vector<gs::fgd_run_result> runs;
  std::map<gs::fgd_policy_kind, std::pair<double, double>> mean;
  for (const auto k : policies) {
    for (const auto seed : seeds) {
      gs::fgd_run_config cfg;
      cfg.policy = k;
      cfg.seed = seed;
      cfg.tune = tune;
      cfg.popularity = popularity;
      cfg.random_ties = o.has("--random-ties");
      auto r = exp.run(cfg);
      std::printf("%-17s %5llu %8zu %8zu %8.2f %8.2f %8.2f %7.2f",
                  std::string(gs::fgd_policy_label(k)).c_str(),
                  static_cast<unsigned long long>(seed), r.pods, r.failed,
                  r.alloc[std::min<std::size_t>(100, r.bins() - 1)], r.unallocated_at(100),
                  r.unallocated_at(last), r.frag[std::min<std::size_t>(100, r.bins() - 1)]);
      if (timing) std::printf(" %8.3f", r.seconds);
      std::printf("\n");
      mean[k].first += r.unallocated_at(100) / static_cast<double>(seeds.size());
      mean[k].second += r.unallocated_at(last) / static_cast<double>(seeds.size());
      runs.push_back(std::move(r));
    }
  }
  published_means pub;
  const bool have_pub = o.has("--published");
  if (have_pub) pub = read_published(o.get("--published"), workload, last_s);
  std::printf("\nUnallocated GPU %% (mean over %zu seed(s))%s\n", seeds.size(),
              have_pub ? ", ours vs published (FGD artifact, same workload)" : "");
  std::printf("%-17s %9s %9s", "policy", "ours@100", ("ours@" + last_s).c_str());
  if (have_pub)
    std::printf(" %9s %9s %7s %7s", "pub@100", ("pub@" + last_s).c_str(), "d@100",
                ("d@" + last_s).c_str());
  std::printf("\n");
  for (const auto& [k, v] : mean) {
    const std::string label(gs::fgd_policy_label(k));
    std::printf("%-17s %9.2f %9.2f", label.c_str(), v.first, v.second);
    if (have_pub) {
      const auto it = pub.by_label.find(label);
      if (it != pub.by_label.end()) {
        std::printf(" %9.2f %9.2f %+7.2f %+7.2f", it->second.first, it->second.second,
                    v.first - it->second.first, v.second - it->second.second);
      } else {
        std::printf(" %9s %9s", "-", "-");
      }
    }
    std::printf("\n");
  }
  if (o.has("--out")) {
    write_csvs(o.get("--out"), workload, runs);
    std::printf(
        "\nwrote analysis_allo_discrete.csv, analysis_frag_discrete.csv, "
        "analysis_frag_ratio_discrete.csv to %s\n",
        o.get("--out").c_str());
  }
  return 0;
}

struct subcommand {
  std::string_view name;
  std::string_view usage;
  int (*run)(std::span<const std::string_view>);
};

constexpr subcommand commands[] = {
    {"packing",
     "packing --nodes NODE_CSV --pods POD_CSV [--policy random|dotprod|clustering|packing|"
     "bestfit|fgd|all[,...]] [--seeds 42-51] [--tune 1.3] [--out DIR] [--published ALLO_CSV] "
     "[--workload NAME] [--popularity 95] [--random-ties] [--no-timing]",
     run_packing},
};

void usage(std::FILE* to) {
  std::fprintf(to, "usage: gpusched-experiment <subcommand> [options]\nsubcommands:\n");
  for (const auto& c : commands)
    std::fprintf(to, "  %.*s\n", static_cast<int>(c.usage.size()), c.usage.data());
  std::fprintf(to,
               "  replay [--config FILE] [options]   (replay a trace; 'replay --help' for the "
               "options)\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    usage(args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  // `replay` parses its own options (benchmarks/replay/replay.hpp); argv[0] is its name.
  if (args[0] == "replay") return gpusched_experiment::run_replay(argc - 1, argv + 1);
  const auto it = std::find_if(std::begin(commands), std::end(commands),
                               [&](const subcommand& c) { return c.name == args[0]; });
  if (it == std::end(commands)) {
    std::fprintf(stderr, "gpusched-experiment: unknown subcommand '%.*s'\n",
                 static_cast<int>(args[0].size()), args[0].data());
    usage(stderr);
    return 2;
  }
  try {
    return it->run(std::span(args).subspan(1));
  } catch (const usage_error& e) {
    std::fprintf(stderr, "gpusched-experiment %.*s: %s\n", static_cast<int>(it->name.size()),
                 it->name.data(), e.what());
    usage(stderr);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpusched-experiment %.*s: %s\n", static_cast<int>(it->name.size()),
                 it->name.data(), e.what());
    return 1;
  }
}
