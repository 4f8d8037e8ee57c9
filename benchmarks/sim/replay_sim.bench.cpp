// SPDX-License-Identifier: Apache-2.0
// Simulator throughput: events per second replaying a synthetic Philly-like workload with the
// default pipeline, over growing job counts (cluster sized to keep the load similar), and the
// full Philly trace (82,247 jobs) on 250 x 8 = 2,000 GPUs when GPUSCHED_PHILLY_CSV names the file.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <gpusched/gpusched.hpp>

#include "generators.hpp"

namespace gs = gpusched;

namespace {

std::uint64_t replay(const gs::trace& tr, std::size_t nodes, int gpus) {
  gs::sim_config cfg;
  cfg.check_invariants = false;
  gs::simulator sim(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(nodes, gpus)),
                    gs::default_pipeline{}, cfg);
  gs::job_conversion conv;
  conv.gpus_per_node = gpus;
  std::size_t k = 0;
  sim.run([&]() -> std::optional<gs::sim_job> {
    if (k >= tr.jobs.size()) return std::nullopt;
    const auto& r = tr.jobs[k++];
    return gs::sim_job{gs::to_job_spec(r, conv), r.duration};
  });
  return sim.totals().events;
}

void BM_replay_synthetic(benchmark::State& state) {
  const auto jobs = static_cast<std::size_t>(state.range(0));
  gs::synthetic_options o;
  o.jobs = jobs;
  o.jobs_per_hour = 40;
  o.seed = 7;
  const auto tr = gs::make_synthetic_trace(o);
  std::uint64_t events = 0;
  for (auto _ : state) {
    events = replay(tr, 64, 8);
    benchmark::DoNotOptimize(events);
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  state.SetComplexityN(static_cast<benchmark::IterationCount>(jobs));
}
BENCHMARK(BM_replay_synthetic)
    ->RangeMultiplier(4)
    ->Range(1 << 10, 1 << 16)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

void BM_replay_philly_2000_gpus(benchmark::State& state) {
  const char* path = std::getenv("GPUSCHED_PHILLY_CSV");  // NOLINT(concurrency-mt-unsafe)
  if (path == nullptr) {
    state.SkipWithError("set GPUSCHED_PHILLY_CSV to philly.csv to run this benchmark");
    return;
  }
  const auto tr = gs::load_philly_file(path);
  std::uint64_t events = 0;
  for (auto _ : state) {
    events = replay(tr, 250, 8);
    benchmark::DoNotOptimize(events);
  }
  state.counters["jobs"] = static_cast<double>(tr.jobs.size());
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_replay_philly_2000_gpus)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_load_philly(benchmark::State& state) {
  const char* path = std::getenv("GPUSCHED_PHILLY_CSV");  // NOLINT(concurrency-mt-unsafe)
  if (path == nullptr) {
    state.SkipWithError("set GPUSCHED_PHILLY_CSV to philly.csv to run this benchmark");
    return;
  }
  std::size_t n = 0;
  for (auto _ : state) {
    n = gs::load_philly_file(path).jobs.size();
    benchmark::DoNotOptimize(n);
  }
  state.counters["jobs_per_s"] =
      benchmark::Counter(static_cast<double>(n) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_load_philly)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
