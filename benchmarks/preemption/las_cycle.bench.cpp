// SPDX-License-Identifier: Apache-2.0
// One scheduling cycle of 2D-LAS as Tiresias runs it (LAS ordering, gang admission, first-fit,
// `las_preemption`) over a long queue, as in the Philly VC 6214e9 replay: 32 x 4 GPUs all held
// by 128 one-GPU jobs of the first queue, and `pending` waiting jobs (half new, half demoted
// past 3,600 GPU-seconds) that do not fit. Every waiting job asks the preemption policy, which
// finds no victim (no running job is in a lower queue than it), so nothing changes and every
// iteration is the same cycle.
//
//  BM_LasCycle/<pending>       the pipeline calls `las_preemption::begin_cycle`, so the running
//                              jobs are ranked once per cycle (once per ledger change).
//  BM_LasCycleFresh/<pending>  the same policy behind a wrapper without `begin_cycle`: it ranks
//                              the running jobs afresh for every waiting job (the behaviour
//                              before the kept ranking, O(pending x running) per cycle).
// Counter `decisions`: waiting jobs considered (all deferred). Complexity is over `pending`.
#include <benchmark/benchmark.h>

#include <memory>
#include <string_view>
#include <vector>

#include <gpusched/gpusched.hpp>

#include "generators.hpp"
#include "preemption_fixtures.hpp"

namespace gs = gpusched;

namespace {
const gs::sim_time t_now = gs::at(gs::seconds(1'000'000));

/// `las_preemption` without its `begin_cycle` hook: ranks afresh on every call.
struct fresh_las {
  using policy_category = gs::preemption_tag;
  gs::las_preemption inner;
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "las-fresh"; }
  gs::preemption_plan select(const gs::schedule_context& ctx, const gs::job_spec& j,
                             gs::fit_probe probe) {
    return inner.select(ctx, j, probe);
  }
};

struct fixture {
  std::shared_ptr<gs::service_record> rec = std::make_shared<gs::service_record>();
  gs::ledger book{gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(32, 4))};
  std::vector<gs::job_spec> pending;
};

fixture make_fixture(std::size_t pending) {
  fixture f;
  unsigned id = 1;
  for (unsigned n = 0; n < 32; ++n) {
    for (int k = 0; k < 4; ++k, ++id) {
      // started 100..227 s ago on one GPU: under 3,600 GPU-s, first queue
      const auto j = gs::testing::whole_gpu_job(id, 1, 1);
      gs::testing::run_on(f.book, j, {n}, t_now - gs::seconds(100 + id));
    }
  }
  for (std::size_t k = 0; k < pending; ++k, ++id) {
    auto j = gs::testing::whole_gpu_job(id, 1, 1 + static_cast<int>(k % 4));
    j.submit = gs::at(gs::seconds(static_cast<std::int64_t>(k)));
    if (k % 2 == 1) f.rec->add(j.id, 5000.0, gs::seconds(5000));  // demoted, preempted before
    f.pending.push_back(std::move(j));
  }
  return f;
}

template <class Preempt>
void run_cycles(benchmark::State& state, Preempt (*make)(std::shared_ptr<gs::service_record>)) {
  auto f = make_fixture(static_cast<std::size_t>(state.range(0)));
  auto pipe = gs::make_pipeline(gs::las_ordering(f.rec), make(f.rec));
  gs::random_engine g(1);
  gs::cycle_result res;
  for (auto _ : state) {
    pipe.schedule(f.book, f.pending, t_now, g, res);
    benchmark::DoNotOptimize(res.decisions.data());
  }
  if (res.count(gs::verdict::admit) != 0) state.SkipWithError("a waiting job was admitted");
  state.counters["decisions"] = static_cast<double>(res.decisions.size());
  state.counters["running"] = static_cast<double>(f.book.running().size());
  state.SetComplexityN(state.range(0));
}

gs::las_preemption make_kept(std::shared_ptr<gs::service_record> rec) {
  return gs::las_preemption(std::move(rec));
}
fresh_las make_fresh(std::shared_ptr<gs::service_record> rec) {
  return fresh_las{gs::las_preemption(std::move(rec))};
}

void BM_LasCycle(benchmark::State& state) { run_cycles(state, &make_kept); }
BENCHMARK(BM_LasCycle)
    ->RangeMultiplier(4)
    ->Range(64, 16384)
    ->Unit(benchmark::kMicrosecond)
    ->Complexity(benchmark::oNLogN);

void BM_LasCycleFresh(benchmark::State& state) { run_cycles(state, &make_fresh); }
BENCHMARK(BM_LasCycleFresh)
    ->RangeMultiplier(4)
    ->Range(64, 16384)
    ->Unit(benchmark::kMicrosecond)
    ->Complexity(benchmark::oNLogN);
}  // namespace

BENCHMARK_MAIN();
