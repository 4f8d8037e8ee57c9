// SPDX-License-Identifier: Apache-2.0
// One full scheduling cycle of the default pipeline (FIFO, gang admission, first-fit packing and
// placement, priority preemption) with 1,000 pending gangs, on clusters of 100, 1,000 and 10,000
// eight-GPU nodes that are about 70% busy. Every iteration starts from a copy of the same state;
// the copy is made outside the timing (PauseTiming costs far less than one cycle here).
#include <benchmark/benchmark.h>

#include <vector>

#include <gpusched/gpusched.hpp>

#include "generators.hpp"

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

struct fixture {
  gs::ledger book;
  std::vector<gs::job_spec> pending;
};

// A cluster of `nodes` 8-GPU nodes, ~70% of GPUs held by running 1..8-GPU jobs, plus 1,000
// pending gangs of 1..8 tasks of 1, 2, 4 or 8 GPUs, a quarter with priority 1 (may preempt).
fixture make_fixture(std::size_t nodes, std::uint64_t seed) {
  gs::random_engine g(seed);
  const auto cat = gs::basic_catalog();
  fixture f{gs::ledger(gs::cluster(cat, gs::testing::uniform_nodes(nodes, 8))), {}};
  auto pipe = gs::make_pipeline(gs::no_preemption{});
  std::vector<gs::job_spec> load;
  unsigned id = 1;
  const auto target = static_cast<std::int64_t>(nodes) * 8 * 7 / 10;
  std::int64_t held = 0;
  while (held < target) {
    const int gpus = 1 << gs::uniform_index(g, 4);
    gs::job_spec j;
    j.id = gs::job_id{id++};
    j.groups.push_back({.name = "w",
                        .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                    .cpu = 4_cores,
                                    .memory = 32_gib},
                        .count = 1});
    load.push_back(j);
    held += gpus;
  }
  pipe.schedule(f.book, load, {}, g);
  for (int k = 0; k < 1000; ++k) {
    const int gpus = 1 << gs::uniform_index(g, 4);
    const int tasks = 1 + static_cast<int>(gs::uniform_index(g, 8));
    gs::job_spec j;
    j.id = gs::job_id{id++};
    j.priority = gs::uniform_index(g, 4) == 0 ? 1 : 0;
    j.submit = gs::at(gs::seconds(k));
    j.groups.push_back({.name = "w",
                        .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                    .cpu = 4_cores,
                                    .memory = 32_gib},
                        .count = tasks});
    f.pending.push_back(std::move(j));
  }
  return f;
}

template <class Pipeline>
void run_cycles(benchmark::State& state, Pipeline pipe) {
  const auto nodes = static_cast<std::size_t>(state.range(0));
  const auto f = make_fixture(nodes, 42);
  gs::random_engine g(1);
  gs::cycle_result res;
  std::size_t admitted = 0, preempting = 0;
  for (auto _ : state) {
    state.PauseTiming();  // the copy is O(nodes) and not part of a cycle; cycles take ms
    gs::ledger book = f.book;
    state.ResumeTiming();
    pipe.schedule(book, f.pending, gs::at(gs::seconds(2000)), g, res);
    benchmark::DoNotOptimize(res.decisions.data());
    state.PauseTiming();
    for (const auto& d : res.decisions) {
      admitted += d.kind == gs::verdict::admit ? 1U : 0U;
      preempting += d.victims.empty() ? 0U : 1U;
    }
    book = gs::ledger{};  // destroy outside the timing too
    state.ResumeTiming();
  }
  state.SetComplexityN(state.range(0));
  state.counters["decisions/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * static_cast<double>(f.pending.size()),
      benchmark::Counter::kIsRate);
  const auto iters = static_cast<double>(state.iterations());
  state.counters["admitted/cycle"] = static_cast<double>(admitted) / iters;
  state.counters["preempting/cycle"] = static_cast<double>(preempting) / iters;
}

void BM_pipeline_cycle_no_preemption(benchmark::State& state) {
  run_cycles(state, gs::make_pipeline(gs::no_preemption{}));
}
void BM_pipeline_cycle_default(benchmark::State& state) { run_cycles(state, gs::make_pipeline()); }

}  // namespace

BENCHMARK(BM_pipeline_cycle_no_preemption)
    ->RangeMultiplier(10)
    ->Range(100, 10'000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();
BENCHMARK(BM_pipeline_cycle_default)
    ->RangeMultiplier(10)
    ->Range(100, 10'000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

BENCHMARK_MAIN();
