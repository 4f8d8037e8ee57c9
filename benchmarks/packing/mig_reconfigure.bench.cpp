// SPDX-License-Identifier: Apache-2.0
/// Cost of planning a MIG reconfiguration (`plan_mig_reconfiguration`) over growing numbers of
/// A100-40GB GPUs, half of them partly busy, for a mixed demand of 1g, 2g and 3g instances
/// that grows with the fleet (one of each per 4 GPUs). Reports exact (dynamic program) and
/// greedy plans; the counters say whether the plan met the demand.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include <gpusched/core/random.hpp>
#include <gpusched/resource/mig_catalog.hpp>
#include <gpusched/resource/mig_reconfigure.hpp>

namespace gs = gpusched;

namespace {

struct fleet {
  gs::gpu_catalog catalog = gs::mig_catalog();
  const gs::mig_geometry* g = nullptr;
  std::vector<gs::mig_gpu_layout> gpus;
  std::vector<gs::mig_demand> demand;
};

fleet make_fleet(std::size_t n) {
  fleet f;
  f.g = &f.catalog[f.catalog.id("A100-SXM4-40GB")].mig;
  const auto* p1 = f.g->find("1g.5gb");
  const auto* p2 = f.g->find("2g.10gb");
  const auto* p3 = f.g->find("3g.20gb");
  const auto* p7 = f.g->find("7g.40gb");
  gs::random_engine rng(42);
  unsigned owner = 0;
  for (std::size_t i = 0; i < n; ++i) {
    gs::mig_gpu_layout l;
    switch (gs::uniform_index(rng, 4)) {
      case 0:  // idle full-GPU instance
        l.instances.push_back({{p7, 0}});
        break;
      case 1:  // busy 3g on the left half, an idle 1g on the right
        l.instances.push_back({{p3, 0}, true, gs::job_id{++owner}});
        l.instances.push_back({{p1, 4}});
        break;
      case 2:  // two busy 2g instances
        l.instances.push_back({{p2, 0}, true, gs::job_id{++owner}});
        l.instances.push_back({{p2, 2}, true, gs::job_id{++owner}});
        break;
      default:  // empty
        break;
    }
    f.gpus.push_back(std::move(l));
  }
  const int k = static_cast<int>(n / 4) + 1;
  f.demand = {{p1, k}, {p2, k}, {p3, k}};
  return f;
}

void run(benchmark::State& state, std::size_t cells) {
  const auto f = make_fleet(static_cast<std::size_t>(state.range(0)));
  bool met = false;
  bool exact = false;
  for (auto _ : state) {
    const auto plan =
        gs::plan_mig_reconfiguration(*f.g, f.gpus, f.demand, {.max_exact_cells = cells});
    met = plan.satisfied();
    exact = plan.exact;
    benchmark::DoNotOptimize(plan.actions.data());
  }
  state.counters["met"] = met ? 1 : 0;
  state.counters["exact"] = exact ? 1 : 0;
  state.SetComplexityN(state.range(0));
}

void BM_MigReconfigureExact(benchmark::State& state) { run(state, std::size_t{1} << 26); }
void BM_MigReconfigureGreedy(benchmark::State& state) { run(state, 1); }

}  // namespace

BENCHMARK(BM_MigReconfigureExact)->RangeMultiplier(2)->Range(8, 64)->Complexity();
BENCHMARK(BM_MigReconfigureGreedy)->RangeMultiplier(4)->Range(8, 512)->Complexity();

BENCHMARK_MAIN();
