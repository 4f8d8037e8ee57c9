// SPDX-License-Identifier: Apache-2.0
// What a cycle's strong exception guarantee costs (pipeline::schedule: policies copied at the
// start of a cycle, the ledger's changes journaled for undo), on the replay's hot path: many
// short cycles (a few pending jobs, a 100-node cluster about 70% busy, jobs finishing between
// cycles). BM_short_cycles/<composition> times whole cycles; build the same file against an
// older tree to compare before/after. The alternatives' own costs beside it: copying the ledger
// (what staging a cycle on a copy would cost at least) and copying the policies.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include <gpusched/gpusched.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/policy/admission/quota.hpp>

#include "generators.hpp"

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

gs::quota_tree teams(const gs::gpu_catalog& cat) {
  gs::quota_tree::builder b(cat);
  b.cohort("all");
  for (unsigned t = 0; t < 8; ++t) {
    b.queue("team-" + std::to_string(t), gs::tenant_id{t}, "all")
        .nominal(gs::quota_resource::gpu_milli(), 80000);
  }
  return b.build();
}

gs::job_spec job(gs::random_engine& g, unsigned id, gs::sim_time now) {
  gs::job_spec j;
  j.id = gs::job_id{id};
  j.tenant = gs::tenant_id{static_cast<gs::tenant_id::rep>(gs::uniform_index(g, 8))};
  j.priority = gs::uniform_index(g, 4) == 0 ? 1 : 0;
  j.submit = now;
  const int gpus = 1 << gs::uniform_index(g, 4);
  const int tasks = 1 + static_cast<int>(gs::uniform_index(g, 2));
  gs::task_group grp;
  grp.name = "w";
  grp.request.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus});
  grp.request.cpu = 4_cores;
  grp.request.memory = 32_gib;
  grp.count = tasks;
  j.groups.push_back(grp);
  return j;
}

/// A steady state: a 100-node cluster of 8-GPU nodes, ~70% busy; each cycle 2 arrivals, and
/// each running job finishes with probability 1/40. Times `cycles` cycles per iteration.
template <class Pipeline>
void short_cycles(benchmark::State& state, Pipeline pipe) {
  const auto cat = gs::basic_catalog();
  gs::random_engine g(42), rng(1);
  gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(100, 8)));
  std::vector<gs::job_spec> pending;
  unsigned id = 1;
  gs::cycle_result res;
  long cycle = 0;
  const auto step = [&] {
    const auto now = gs::at(gs::seconds(10 * cycle++));
    for (int k = 0; k < 2; ++k) pending.push_back(job(g, id++, now));
    std::vector<gs::job_id> done;
    for (const auto& r : book.running()) {
      if (gs::uniform_index(g, 40) == 0) done.push_back(r.spec.id);
    }
    for (const auto d : done) pipe.release(book, d, now, rng);
    pipe.schedule(book, pending, now, rng, res);
    std::erase_if(pending, [&](const gs::job_spec& j) { return book.is_running(j.id); });
    if (pending.size() > 30) pending.erase(pending.begin(), pending.begin() + 10);
  };
  for (int k = 0; k < 2000; ++k) step();  // warm up to the steady state
  for (auto _ : state) step();
  state.counters["running"] = static_cast<double>(book.running().size());
  state.counters["pending"] = static_cast<double>(pending.size());
}

gs::any_pipeline stateful_erased(const gs::gpu_catalog& cat) {
  return gs::any_pipeline(gs::make_ordering_policy("drf"),
                          gs::any_admission_policy(gs::quota_admission<>(teams(cat))),
                          gs::make_packing_policy("best-fit"), gs::make_placement_policy("gang"),
                          gs::make_preemption_policy("checkpoint-aware"));
}

void BM_short_cycles_default(benchmark::State& state) { short_cycles(state, gs::make_pipeline()); }
void BM_short_cycles_drf_quota_static(benchmark::State& state) {
  const auto cat = gs::basic_catalog();
  short_cycles(state, gs::make_pipeline(gs::drf_ordering{gs::drf_options{.incremental = true}},
                                        gs::quota_admission<>(teams(cat)),
                                        gs::checkpoint_aware_preemption{}));
}
void BM_short_cycles_stateful_erased(benchmark::State& state) {
  short_cycles(state, stateful_erased(gs::basic_catalog()));
}
void BM_short_cycles_las_erased(benchmark::State& state) {
  short_cycles(state, gs::make_pipeline(gs::pipeline_config{.ordering = "las",
                                                            .admission = "gang-easy",
                                                            .packing = "first-fit",
                                                            .placement = "first-fit",
                                                            .preemption = "las"}));
}

/// The ledger of the steady state above, copied (what staging a cycle on a copy costs at least).
void BM_copy_ledger(benchmark::State& state) {
  const auto cat = gs::basic_catalog();
  gs::random_engine g(42), rng(1);
  gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(100, 8)));
  auto pipe = gs::make_pipeline();
  std::vector<gs::job_spec> pending;
  for (unsigned id = 1; id < 600; ++id) pending.push_back(job(g, id, {}));
  pipe.schedule(book, pending, {}, rng);
  for (auto _ : state) {
    gs::ledger copy = book;
    benchmark::DoNotOptimize(copy);
  }
  state.counters["running"] = static_cast<double>(book.running().size());
}

}  // namespace

BENCHMARK(BM_short_cycles_default)->Iterations(20000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_short_cycles_drf_quota_static)->Iterations(20000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_short_cycles_stateful_erased)->Iterations(20000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_short_cycles_las_erased)->Iterations(20000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_copy_ledger)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
