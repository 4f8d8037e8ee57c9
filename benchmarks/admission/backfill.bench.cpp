// SPDX-License-Identifier: Apache-2.0
// Backfill reservations (gang_admission's EASY and conservative modes) with growing numbers of
// running jobs, up to 10,000.
//
// The cluster: `running` / 8 full nodes, 8 half nodes, 4 idle nodes, all of 8 GPUs. `running`
// 1-GPU jobs fill the full nodes, each with an expected end uniform in the next 10 hours (so a
// node frees up only when its 8 jobs have all ended); on each half node a 4-GPU job without a
// duration estimate leaves 4 GPUs that an 8-GPU task can never use (the fragments backfill
// fills). Pending, in FIFO order:
//
//  BM_EasyReservation/<running>   one head gang of 16 x 8 GPUs (does not fit on the 4 idle
//                                 nodes): the cycle computes its reservation (bisection over
//                                 the expected ends, each probe a what-if placement).
//  BM_EasyBackfillCycle/<running> the head, then 32 single-GPU jobs, half ending before the
//                                 reservation (admitted without a check), half running 20 hours
//                                 (they land on the half nodes' fragments and pass the check
//                                 against the recorded state at the reservation's start), then
//                                 2 jobs of 8 GPUs x 20 hours (they would take idle nodes the
//                                 head needs: refused after a full what-if each).
//  BM_ConservativeCycle/<running> conservative backfill: 4 gangs of 16 x 8 GPUs, then the same
//                                 34 jobs.
//
// Every iteration schedules one cycle on a copy of the same state with a fresh pipeline (both
// made outside the timing: reservations are carried across cycles, so a reused pipeline would
// start with last iteration's). Counters: reservations held, gangs left without one
// (unreserved), jobs admitted, the head's reservation time and the last reservation's in hours
// from now, candidates checked against a recorded state (fast checks) or by a full what-if.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <optional>
#include <vector>

#include <gpusched/gpusched.hpp>

#include "generators.hpp"

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

const gs::sim_time t_now = gs::at(gs::seconds(100'000));

gs::job_spec job(unsigned id, int tasks, int gpus, gs::sim_duration duration) {
  gs::job_spec j;
  j.id = gs::job_id{id};
  j.submit = gs::at(gs::seconds(id));
  j.expected_duration = duration;
  j.groups.push_back({.name = "w",
                      .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                  .cpu = 1_cores,
                                  .memory = 1_gib},
                      .count = tasks});
  return j;
}

gs::ledger busy_cluster(std::size_t running, std::uint64_t seed) {
  gs::random_engine g(seed);
  const std::size_t full = (running + 7) / 8;
  gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(full + 8 + 4, 8)));
  const gs::first_fit_packing pack;
  for (std::size_t k = 0; k < 8; ++k) {  // half nodes: 4 GPUs held with no estimate
    auto j = job(static_cast<unsigned>(900'000 + k), 1, 4, gs::seconds(0));
    j.expected_duration.reset();
    const gs::schedule_context ctx(book, t_now, g);
    auto a = pack.fit(ctx, gs::node_index{static_cast<gs::node_index::rep>(full + k)},
                      j.groups[0].request);
    a->group = 0;
    auto tx = book.begin();
    tx.place(*a);
    tx.commit(j, t_now - gs::seconds(3600));
  }
  for (std::size_t k = 0; k < running; ++k) {
    // started an hour ago; ends uniformly within the next 10 hours
    const auto left = gs::seconds(60 + static_cast<std::int64_t>(gs::uniform_index(g, 36'000)));
    auto j = job(static_cast<unsigned>(1'000'000 + k), 1, 1, gs::seconds(3600) + left);
    const gs::schedule_context ctx(book, t_now, g);
    auto a =
        pack.fit(ctx, gs::node_index{static_cast<gs::node_index::rep>(k / 8)}, j.groups[0].request);
    a->group = 0;
    auto tx = book.begin();
    tx.place(*a);
    tx.commit(j, t_now - gs::seconds(3600));
  }
  return book;
}

std::vector<gs::job_spec> queue(int heads, int small_jobs) {
  std::vector<gs::job_spec> out;
  unsigned id = 1;
  for (int h = 0; h < heads; ++h) out.push_back(job(id++, 16, 8, gs::seconds(7200)));
  for (int k = 0; k < small_jobs; ++k) {
    out.push_back(job(id++, 1, 1, k % 2 == 0 ? gs::seconds(600) : gs::seconds(20 * 3600)));
  }
  if (small_jobs > 0) {
    for (int k = 0; k < 2; ++k) out.push_back(job(id++, 1, 8, gs::seconds(20 * 3600)));
  }
  return out;
}

void cycle_loop(benchmark::State& state, gs::queueing mode, int heads, int small_jobs) {
  const auto base = busy_cluster(static_cast<std::size_t>(state.range(0)), 42);
  const auto pending = queue(heads, small_jobs);
  const gs::gang_admission adm{mode};
  using pipe_type = decltype(gs::make_pipeline(adm, gs::gang_placement{}, gs::no_preemption{}));
  std::optional<pipe_type> pipe;
  gs::random_engine g(1);
  gs::cycle_result res;
  std::size_t admitted = 0, reservations = 0, unreserved = 0;
  double head_at_hours = -1, last_at_hours = -1;
  gs::backfill_stats stats;
  for (auto _ : state) {
    state.PauseTiming();
    gs::ledger book = base;
    pipe.emplace(gs::make_pipeline(adm, gs::gang_placement{}, gs::no_preemption{}));
    state.ResumeTiming();
    pipe->schedule(book, pending, t_now, g, res);
    benchmark::DoNotOptimize(res.decisions.data());
    state.PauseTiming();
    admitted = res.count(gs::verdict::admit);
    const auto& rs = pipe->admission().reservations();
    reservations = rs.size();
    unreserved = pipe->admission().unreserved().size();
    stats = pipe->admission().last_stats();
    head_at_hours = rs.empty() ? -1 : gs::to_seconds(rs.front().start - t_now) / 3600;
    last_at_hours = rs.empty() ? -1 : gs::to_seconds(rs.back().start - t_now) / 3600;
    book = gs::ledger{};
    state.ResumeTiming();
  }
  if (reservations == 0) state.SkipWithError("no reservation was made");
  state.counters["reservations"] = static_cast<double>(reservations);
  state.counters["admitted"] = static_cast<double>(admitted);
  state.counters["fast checks"] = static_cast<double>(stats.fast_checks);
  state.counters["what-ifs"] = static_cast<double>(stats.what_ifs);
  state.counters["head at (h)"] = head_at_hours;
  state.counters["last at (h)"] = last_at_hours;
  state.counters["unreserved"] = static_cast<double>(unreserved);
  state.counters["running"] = static_cast<double>(base.running().size());
  state.SetComplexityN(state.range(0));
}

void BM_EasyReservation(benchmark::State& state) {
  cycle_loop(state, gs::queueing::easy_backfill, 1, 0);
}
BENCHMARK(BM_EasyReservation)
    ->Arg(1000)
    ->Arg(3000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oNLogN);

void BM_EasyBackfillCycle(benchmark::State& state) {
  cycle_loop(state, gs::queueing::easy_backfill, 1, 32);
}
BENCHMARK(BM_EasyBackfillCycle)
    ->Arg(1000)
    ->Arg(3000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

void BM_ConservativeCycle(benchmark::State& state) {
  cycle_loop(state, gs::queueing::conservative_backfill, 4, 32);
}
BENCHMARK(BM_ConservativeCycle)
    ->Arg(1000)
    ->Arg(3000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

}  // namespace

BENCHMARK_MAIN();
