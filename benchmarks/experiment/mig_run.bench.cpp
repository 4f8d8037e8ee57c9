// SPDX-License-Identifier: Apache-2.0
// One MIG packing-experiment run (A100-40GB, compute cover, tune 1.3, seed 42) per packer on
// growing prefixes of the default openb trace; 1213 nodes is the full trace. The uncached
// MIG-aware run calls `mig_aware_packing::pack` for every pod (the same result; see
// mig_experiment.hpp) and shows what the per-node choice cache saves.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include <gpusched/experiment/mig_experiment.hpp>
#include <gpusched/trace/openb.hpp>

namespace gs = gpusched;

namespace {
const std::string dir = GPUSCHED_OPENB_DIR;

const std::vector<gs::openb_node>& all_nodes() {
  static const auto n = gs::load_openb_nodes(dir + "/openb_node_list_gpu_node.csv");
  return n;
}
const std::vector<gs::openb_pod>& all_pods() {
  static const auto p = gs::load_openb_pods(dir + "/openb_pod_list_default.csv");
  return p;
}

/// The first `n` nodes and the pods scaled to them (same share of the pod list).
void run(benchmark::State& state, gs::mig_policy_kind k, bool cache) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<gs::openb_node> nodes(all_nodes().begin(),
                                    all_nodes().begin() + static_cast<std::ptrdiff_t>(n));
  const auto pods_n = all_pods().size() * n / all_nodes().size();
  std::vector<gs::openb_pod> pods(all_pods().begin(),
                                  all_pods().begin() + static_cast<std::ptrdiff_t>(pods_n));
  const gs::mig_experiment e(nodes, pods, "A100-40GB", gs::mig_cover::compute);
  gs::mig_run_config cfg;
  cfg.policy = k;
  cfg.cache_choices = cache;
  std::size_t placed = 0;
  for (auto _ : state) {
    const auto r = e.run(cfg);
    placed = r.placed;
    benchmark::DoNotOptimize(placed);
  }
  state.counters["placed"] = static_cast<double>(placed);
  state.SetComplexityN(static_cast<benchmark::IterationCount>(n));
}

void BM_mig_first_fit_run(benchmark::State& s) { run(s, gs::mig_policy_kind::first_fit, true); }
void BM_mig_aware_run(benchmark::State& s) { run(s, gs::mig_policy_kind::mig_aware, true); }
void BM_mig_aware_run_uncached(benchmark::State& s) {
  run(s, gs::mig_policy_kind::mig_aware, false);
}
}  // namespace

BENCHMARK(BM_mig_first_fit_run)
    ->Arg(150)
    ->Arg(300)
    ->Arg(600)
    ->Arg(1213)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();
BENCHMARK(BM_mig_aware_run)
    ->Arg(150)
    ->Arg(300)
    ->Arg(600)
    ->Arg(1213)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();
BENCHMARK(BM_mig_aware_run_uncached)->Arg(150)->Arg(300)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
