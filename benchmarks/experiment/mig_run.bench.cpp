// SPDX-License-Identifier: Apache-2.0
// One MIG packing-experiment run (A100-40GB, compute cover, tune 1.3, seed 42) per packer on
// growing prefixes of the default openb trace; 1213 nodes is the full trace. The uncached
// MIG-aware run calls `mig_aware_packing::pack` for every pod (the same result; see
// mig_experiment.hpp) and shows what the per-node choice cache saves.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include <gpusched/trace/openb.hpp>

#include "mig_experiment.hpp"
#include "openb_prefix.hpp"

namespace gs = gpusched;

namespace {
/// One run on the first `n` nodes and the pods scaled to them (`bench::openb_prefix`).
void run(benchmark::State& state, gs::mig_policy_kind k, bool cache) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const gs::bench::openb_prefix fx(n);
  const gs::mig_experiment e(fx.nodes, fx.pods, "A100-40GB", gs::mig_cover::compute);
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
