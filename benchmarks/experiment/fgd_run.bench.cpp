// SPDX-License-Identifier: Apache-2.0
// One FGD packing-experiment run (tune 1.3) on growing prefixes of the default openb trace, and
// the per-node fragmentation measure. The full default trace is the target: under 1 s.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include <gpusched/trace/openb.hpp>

#include "fgd_experiment.hpp"
#include "openb_prefix.hpp"

namespace gs = gpusched;

namespace {
/// One run on the first `n` nodes and the pods scaled to them (`bench::openb_prefix`).
void run(benchmark::State& state, gs::fgd_policy_kind k) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const gs::bench::openb_prefix fx(n);
  const gs::fgd_experiment e(fx.nodes, fx.pods);
  gs::fgd_run_config cfg;
  cfg.policy = k;
  std::size_t placed = 0;
  for (auto _ : state) {
    const auto r = e.run(cfg);
    placed = r.placed;
    benchmark::DoNotOptimize(placed);
  }
  state.counters["placed"] = static_cast<double>(placed);
  state.SetComplexityN(static_cast<benchmark::IterationCount>(n));
}

void BM_fgd_run(benchmark::State& s) { run(s, gs::fgd_policy_kind::fgd); }
void BM_bestfit_run(benchmark::State& s) { run(s, gs::fgd_policy_kind::bestfit); }

void BM_fragmentation(benchmark::State& state) {
  std::vector<gs::fgd_pod_shape> shapes;
  for (const auto& p : gs::bench::openb_all_pods())
    shapes.push_back({p.cpu_milli, p.num_gpu ? p.gpu_milli : 0, p.num_gpu, {}});
  const gs::target_workload m(shapes, static_cast<double>(state.range(0)));
  gs::fgd_node v;
  v.cpu_left = 64000;
  v.gpus = 8;
  for (int i = 0; i < 8; ++i) v.left[static_cast<std::size_t>(i)] = 1000 - 110 * i;
  for (auto _ : state) benchmark::DoNotOptimize(gs::fgd_fragmentation(v, m));
  state.counters["M"] = static_cast<double>(m.entries().size());
}
}  // namespace

BENCHMARK(BM_fgd_run)
    ->Arg(150)
    ->Arg(300)
    ->Arg(600)
    ->Arg(1213)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();
BENCHMARK(BM_bestfit_run)
    ->Arg(150)
    ->Arg(300)
    ->Arg(600)
    ->Arg(1213)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();
BENCHMARK(BM_fragmentation)->Arg(95)->Arg(100);

BENCHMARK_MAIN();
