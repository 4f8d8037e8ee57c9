// SPDX-License-Identifier: Apache-2.0
// Admission + placement of one 1,024-task gang: a full pipeline cycle (gang admission, gang
// placement with first-fit packing, approval, commit) with that gang as the only pending job,
// on clusters of 8-GPU nodes growing to 10,000 nodes. The target: under 5 ms on one
// core at 10,000 nodes.
//
//  BM_Gang1024x1GPU/<nodes>      1,024 tasks x 1 GPU; every node has 0..8 GPUs busy (uniform),
//                                so about half the GPUs are free, scattered.
//  BM_Gang1024x8GPU/<nodes>      1 CPU-only launcher + 1,023 workers x 8 GPUs; half the nodes
//                                are idle, the others hold 1..8 busy GPUs (from 2,500 nodes up,
//                                so that >= 1,023 idle nodes exist).
//  BM_Gang1024NoFit/<nodes>      the 8-GPU gang when only a quarter of the nodes are idle: it
//                                does not fit (both greedy passes run and are rolled back, the
//                                reason is diagnosed); what a waiting head costs every cycle.
//  BM_GangElastic1024/<nodes>    the 8-GPU gang made elastic (min 256 workers) on a quarter-idle
//                                cluster: the largest size that fits is found by bisection.
//
// Each iteration schedules the gang and then (outside the timing) releases it, so every
// iteration starts from the same state. Counters: tasks placed per iteration.
#include <benchmark/benchmark.h>

#include <algorithm>  // std::max
#include <cstdint>
#include <optional>
#include <vector>

#include <gpusched/gpusched.hpp>

#include "generators.hpp"

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

/// `nodes` 8-GPU nodes; a node is idle with probability `idle_percent`/100, otherwise it holds
/// one running job of `busy` GPUs, `busy` uniform in `min_busy..8`.
gs::ledger loaded_cluster(std::size_t nodes, unsigned idle_percent, int min_busy,
                          std::uint64_t seed) {
  gs::random_engine g(seed);
  gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(nodes, 8)));
  const gs::first_fit_packing pack;
  unsigned id = 1'000'000;
  for (std::size_t n = 0; n < nodes; ++n) {
    if (gs::uniform_index(g, 100) < idle_percent) continue;
    const int busy =
        min_busy + static_cast<int>(gs::uniform_index(g, static_cast<std::uint64_t>(9 - min_busy)));
    if (busy == 0) continue;
    gs::job_spec j;
    j.id = gs::job_id{id++};
    j.groups.push_back({.name = "w",
                        .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{busy}),
                                    .cpu = 1_cores,
                                    .memory = 1_gib},
                        .count = 1});
    const gs::schedule_context ctx(book, {}, g);
    auto a =
        pack.fit(ctx, gs::node_index{static_cast<gs::node_index::rep>(n)}, j.groups[0].request);
    a->group = 0;
    auto tx = book.begin();
    tx.place(*a);
    tx.commit(j, {});
  }
  return book;
}

gs::job_spec gang_1024(int worker_gpus, std::optional<std::int32_t> min_workers = std::nullopt) {
  gs::job_spec j;
  j.id = gs::job_id{1};
  j.name = "gang-1024";
  j.expected_duration = gs::seconds(3600);
  if (worker_gpus == 8) {
    j.groups.push_back(
        {.name = "launcher",
         .request = {.gpu = gs::gpu_demand::none(), .cpu = 4_cores, .memory = 16_gib},
         .count = 1});
    j.groups.push_back(
        {.name = "worker",
         .request = {.gpu = gs::gpu_demand::whole(8_gpus), .cpu = 16_cores, .memory = 64_gib},
         .count = 1023,
         .min_count = min_workers});
  } else {
    j.groups.push_back({.name = "rank",
                        .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{worker_gpus}),
                                    .cpu = 2_cores,
                                    .memory = 8_gib},
                        .count = 1024,
                        .min_count = min_workers});
  }
  return j;
}

void admit_loop(benchmark::State& state, gs::ledger book, const gs::job_spec& gang,
                bool expect_admit) {
  auto pipe = gs::make_pipeline(gs::gang_admission{}, gs::gang_placement{}, gs::no_preemption{});
  gs::random_engine g(1);
  const std::vector<gs::job_spec> pending{gang};
  gs::cycle_result res;
  std::size_t tasks = 0;
  for (auto _ : state) {
    pipe.schedule(book, pending, gs::at(gs::seconds(10)), g, res);
    benchmark::DoNotOptimize(res.decisions.data());
    state.PauseTiming();
    const bool admitted = res.decisions.front().kind == gs::verdict::admit;
    if (admitted != expect_admit) {
      state.SkipWithError(admitted ? "the gang was admitted" : "the gang was not admitted");
      break;
    }
    tasks = res.decisions.front().placement.size();
    if (admitted) book.release(gang.id);
    state.ResumeTiming();
  }
  state.counters["tasks placed"] = static_cast<double>(tasks);
  state.counters["free GPUs"] = static_cast<double>(book.state().total_free_whole_gpus());
  state.SetComplexityN(state.range(0));
}

void BM_Gang1024x1GPU(benchmark::State& state) {
  admit_loop(state, loaded_cluster(static_cast<std::size_t>(state.range(0)), 0, 0, 42),
             gang_1024(1), true);
}
BENCHMARK(BM_Gang1024x1GPU)
    ->Arg(1250)
    ->Arg(2500)
    ->Arg(5000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oLogN);

void BM_Gang1024x8GPU(benchmark::State& state) {
  admit_loop(state, loaded_cluster(static_cast<std::size_t>(state.range(0)), 50, 1, 42),
             gang_1024(8), true);
}
BENCHMARK(BM_Gang1024x8GPU)
    ->Arg(2500)
    ->Arg(5000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oLogN);

void BM_Gang1024NoFit(benchmark::State& state) {
  // 1250 nodes: ~312 idle; 10,000 nodes: ~2,500 idle would fit, so scale the idle share down
  // with the size to keep ~600 idle nodes (fewer than the 1,023 needed).
  const auto nodes = static_cast<std::size_t>(state.range(0));
  const auto idle = static_cast<unsigned>(std::max<std::size_t>(1, 600 * 100 / nodes));
  admit_loop(state, loaded_cluster(nodes, idle, 1, 42), gang_1024(8), false);
}
BENCHMARK(BM_Gang1024NoFit)
    ->Arg(1250)
    ->Arg(2500)
    ->Arg(5000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oLogN);

void BM_GangElastic1024(benchmark::State& state) {
  const auto nodes = static_cast<std::size_t>(state.range(0));
  const auto idle = static_cast<unsigned>(std::max<std::size_t>(1, 600 * 100 / nodes));
  admit_loop(state, loaded_cluster(nodes, idle, 1, 42), gang_1024(8, 256), true);
}
BENCHMARK(BM_GangElastic1024)
    ->Arg(1250)
    ->Arg(2500)
    ->Arg(5000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oLogN);

}  // namespace

BENCHMARK_MAIN();
