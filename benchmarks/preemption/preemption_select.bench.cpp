// SPDX-License-Identifier: Apache-2.0
// Victim selection speed and quality.
//
//  BM_CheckpointAware/<nodes>   full clusters of 8-GPU nodes with 10 running jobs per node
//                               (6 x 1 GPU, 4 x half a GPU), priorities 0..3; an urgent job
//                               needs one whole node. 1000 nodes = 10,000 running jobs.
//                               Every node is helpful, so the screen (the `screen_nodes`
//                               option) decides which nodes are searched; counter
//                               lost_vs_unscreened: the plan's lost work over that of the
//                               same policy with screening off (1 = no loss of quality);
//                               screen_bounded: screened nodes whose plan the screen's lower
//                               bound skipped.
//  BM_CheckpointAwareUnscreened/<nodes>  the same with `screen_nodes = 0` (every helpful node
//                               searched), for comparison.
//  BM_CheckpointAwareGang/<n>   the same, the urgent job is a gang of 4 x 8 GPUs.
//  BM_KubeDefault/<nodes>       the kube-scheduler baseline on the same clusters.
//  BM_ExactSearch/<candidates>  the exact search with k candidates (4 nodes, 1-2 GPU jobs).
//  BM_OptimalityGap             not a speed figure: over 10 seeded random instances with 21..24
//                               candidates (1-GPU jobs on 4 full nodes, urgent job needs a
//                               node), the heuristic with pools of 4, 8 and 20 jobs against the
//                               exact optimum (instances where the exact search completes);
//                               counters: mean and max gap in percent, instances optimal.
// Every selection uses the real first-fit probe (a placement in a rolled-back transaction).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <gpusched/gpusched.hpp>

#include "generators.hpp"
#include "preemption_fixtures.hpp"

namespace gs = gpusched;

namespace {
const gs::sim_time t_now = gs::at(gs::seconds(100'000));

gs::job_spec small_job(unsigned id, gs::gpu_demand d, int priority) {
  gs::job_spec j;
  j.id = gs::job_id{id};
  j.priority = priority;
  j.groups.push_back(
      {.name = "w",
       .request = {.gpu = d, .cpu = gs::cpu_millis{1000}, .memory = gs::memory_mib{1024}},
       .count = 1});
  return j;
}

/// `nodes` full 8-GPU nodes, 10 jobs each, random priorities and checkpoint ages.
gs::ledger full_cluster(std::size_t nodes, std::uint64_t seed) {
  gs::random_engine g(seed);
  gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(nodes, 8)));
  unsigned id = 1;
  for (std::size_t n = 0; n < nodes; ++n) {
    for (int k = 0; k < 10; ++k) {
      auto j = small_job(id++,
                         k < 6 ? gs::gpu_demand::whole(gs::gpu_count{1})
                               : gs::gpu_demand::fraction(gs::milli_gpu{500}),
                         static_cast<int>(gs::uniform_index(g, 4)));
      const auto age = gs::seconds(static_cast<std::int64_t>(600 + gs::uniform_index(g, 36000)));
      j.checkpoint.last = t_now - gs::seconds(static_cast<std::int64_t>(gs::uniform_index(
                                      g, static_cast<std::uint64_t>(age.count() / 1000))));
      j.checkpoint.restore_cost = gs::seconds(static_cast<std::int64_t>(gs::uniform_index(g, 120)));
      const unsigned node = static_cast<unsigned>(n);
      gs::testing::run_on(book, j, {node}, t_now - age);
    }
  }
  return book;
}

template <class Policy>
void select_loop(benchmark::State& state, Policy& policy, gs::ledger& book,
                 const gs::job_spec& pre) {
  gs::random_engine g(1);
  const gs::schedule_context ctx(book, t_now, g);
  gs::testing::first_fit_probe probe{&book, &pre, t_now};
  std::size_t victims = 0;
  for (auto _ : state) {
    auto plan = policy.select(ctx, pre, gs::fit_probe(probe));
    victims = plan.victims.size() + plan.shrinks.size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["running"] = static_cast<double>(book.running().size());
  state.counters["victims"] = static_cast<double>(victims);
  state.counters["probes/select"] =
      static_cast<double>(probe.calls) / static_cast<double>(state.iterations());
  state.SetComplexityN(static_cast<std::int64_t>(book.running().size()));
}

/// Lost work of `policy`'s plan over that of the same policy without screening.
double lost_vs_unscreened(gs::checkpoint_aware_preemption& policy, gs::ledger& book,
                          const gs::job_spec& pre) {
  gs::random_engine g(1);
  const gs::schedule_context ctx(book, t_now, g);
  gs::testing::first_fit_probe probe{&book, &pre, t_now};
  auto o = policy.options();
  o.screen_nodes = 0;
  gs::checkpoint_aware_preemption full(o);
  const auto a = policy.select(ctx, pre, gs::fit_probe(probe));
  const auto b = full.select(ctx, pre, gs::fit_probe(probe));
  return a.lost_gpu_seconds / b.lost_gpu_seconds;
}

void BM_CheckpointAware(benchmark::State& state) {
  auto book = full_cluster(static_cast<std::size_t>(state.range(0)), 42);
  const auto pre = gs::testing::whole_gpu_job(1'000'000, 1, 8, 10);
  gs::checkpoint_aware_preemption policy;
  select_loop(state, policy, book, pre);
  state.counters["candidates"] = static_cast<double>(policy.last_stats().candidates);
  state.counters["screened_out"] = static_cast<double>(policy.last_stats().screened_out);
  state.counters["screen_bounded"] = static_cast<double>(policy.last_stats().screen_bounded);
  state.counters["lost_vs_unscreened"] = lost_vs_unscreened(policy, book, pre);
}
BENCHMARK(BM_CheckpointAware)
    ->Arg(30)
    ->Arg(100)
    ->Arg(300)
    ->Arg(1000)
    ->Arg(3000)
    ->Unit(benchmark::kMicrosecond)
    ->Complexity(benchmark::oN);

void BM_CheckpointAwareUnscreened(benchmark::State& state) {
  auto book = full_cluster(static_cast<std::size_t>(state.range(0)), 42);
  const auto pre = gs::testing::whole_gpu_job(1'000'000, 1, 8, 10);
  gs::checkpoint_aware_options o;
  o.screen_nodes = 0;
  gs::checkpoint_aware_preemption policy(o);
  select_loop(state, policy, book, pre);
  state.counters["candidates"] = static_cast<double>(policy.last_stats().candidates);
}
BENCHMARK(BM_CheckpointAwareUnscreened)
    ->Arg(30)
    ->Arg(100)
    ->Arg(300)
    ->Arg(1000)
    ->Unit(benchmark::kMicrosecond)
    ->Complexity(benchmark::oN);

void BM_CheckpointAwareGang(benchmark::State& state) {
  auto book = full_cluster(static_cast<std::size_t>(state.range(0)), 42);
  const auto pre = gs::testing::whole_gpu_job(1'000'000, 4, 8, 10);
  gs::checkpoint_aware_preemption policy;
  select_loop(state, policy, book, pre);
  state.counters["screened_out"] = static_cast<double>(policy.last_stats().screened_out);
  state.counters["screen_bounded"] = static_cast<double>(policy.last_stats().screen_bounded);
  state.counters["lost_vs_unscreened"] = lost_vs_unscreened(policy, book, pre);
}
BENCHMARK(BM_CheckpointAwareGang)
    ->Arg(30)
    ->Arg(100)
    ->Arg(300)
    ->Arg(1000)
    ->Arg(3000)
    ->Unit(benchmark::kMicrosecond)
    ->Complexity(benchmark::oN);

void BM_KubeDefault(benchmark::State& state) {
  auto book = full_cluster(static_cast<std::size_t>(state.range(0)), 42);
  const auto pre = gs::testing::whole_gpu_job(1'000'000, 1, 8, 10);
  gs::kube_default_preemption policy;
  select_loop(state, policy, book, pre);
}
BENCHMARK(BM_KubeDefault)
    ->Arg(100)
    ->Arg(300)
    ->Arg(1000)
    ->Unit(benchmark::kMicrosecond)
    ->Complexity(benchmark::oN);

/// 4 nodes x 8 GPUs filled with `k` jobs of 1 or 2 GPUs (priority 0); urgent: one whole node.
gs::ledger small_instance(std::size_t k, std::uint64_t seed) {
  gs::random_engine g(seed);
  gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(4, 8)));
  unsigned id = 1;
  while (book.running().size() < k) {
    auto j = small_job(id, gs::gpu_demand::whole(gs::gpu_count{k > 16 ? 1 : 2}), 0);
    const auto age = gs::seconds(static_cast<std::int64_t>(600 + gs::uniform_index(g, 36000)));
    j.checkpoint.last = t_now - gs::seconds(static_cast<std::int64_t>(gs::uniform_index(
                                    g, static_cast<std::uint64_t>(age.count() / 1000))));
    if (!gs::testing::run_anywhere(book, j, t_now - age)) break;
    ++id;
  }
  return book;
}

void BM_ExactSearch(benchmark::State& state) {
  auto book = small_instance(static_cast<std::size_t>(state.range(0)), 5);
  const auto pre = gs::testing::whole_gpu_job(1'000'000, 1, 8, 10);
  gs::checkpoint_aware_preemption policy;
  select_loop(state, policy, book, pre);
  state.counters["subsets"] = static_cast<double>(policy.last_stats().subsets);
  state.counters["exact"] = policy.last_stats().exact ? 1 : 0;
}
BENCHMARK(BM_ExactSearch)->Arg(8)->Arg(12)->Arg(16)->Arg(20)->Unit(benchmark::kMicrosecond);

void BM_OptimalityGap(benchmark::State& state) {
  // one exact optimum per instance, then the heuristic with pools of 4, 8 and 20 jobs
  constexpr std::size_t pools[] = {4, 8, 20};
  double sum_gap[3] = {}, max_gap[3] = {};
  std::size_t optimal[3] = {}, instances = 0, tried = 0;
  for (auto _ : state) {
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      gs::random_engine g(seed);
      const std::size_t k = 21 + gs::uniform_index(g, 4);
      auto book = small_instance(k, seed * 7919);
      const auto pre = gs::testing::whole_gpu_job(1'000'000, 1, 8, 10);
      gs::random_engine g2(1);
      const gs::schedule_context ctx(book, t_now, g2);
      gs::testing::first_fit_probe probe{&book, &pre, t_now};
      gs::checkpoint_aware_options eo;
      eo.exact_limit = 31;
      eo.max_probes = 1u << 20;
      eo.enumeration_budget = std::size_t{1} << 22;
      gs::checkpoint_aware_preemption exact(eo);
      const auto ep = exact.select(ctx, pre, gs::fit_probe(probe));
      ++tried;
      if (ep.empty() || !exact.last_stats().exact) continue;
      ++instances;
      for (std::size_t p = 0; p < 3; ++p) {
        gs::checkpoint_aware_options ho;
        ho.exact_limit = pools[p];
        gs::checkpoint_aware_preemption heuristic(ho);
        const auto hp = heuristic.select(ctx, pre, gs::fit_probe(probe));
        const double gap = hp.empty() ? 1.0 : hp.lost_gpu_seconds / ep.lost_gpu_seconds - 1.0;
        sum_gap[p] += gap;
        max_gap[p] = std::max(max_gap[p], gap);
        optimal[p] += gap < 1e-9 ? 1 : 0;
      }
    }
  }
  const auto n = static_cast<double>(std::max<std::size_t>(instances, 1));
  state.counters["instances"] = static_cast<double>(instances);
  state.counters["tried"] = static_cast<double>(tried);
  for (std::size_t p = 0; p < 3; ++p) {
    static constexpr const char* mean[] = {"pool4_mean_gap_pct", "pool8_mean_gap_pct",
                                           "pool20_mean_gap_pct"};
    static constexpr const char* worst[] = {"pool4_max_gap_pct", "pool8_max_gap_pct",
                                            "pool20_max_gap_pct"};
    static constexpr const char* opt[] = {"pool4_optimal", "pool8_optimal", "pool20_optimal"};
    state.counters[mean[p]] = 100.0 * sum_gap[p] / n;
    state.counters[worst[p]] = 100.0 * max_gap[p];
    state.counters[opt[p]] = static_cast<double>(optimal[p]);
  }
}
BENCHMARK(BM_OptimalityGap)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
