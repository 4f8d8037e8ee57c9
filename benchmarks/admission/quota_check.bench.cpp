// SPDX-License-Identifier: Apache-2.0
// Cost of Kueue-style quota checks (workload/quota.hpp, policy/admission/quota.hpp).
//
// The quota tree: `tenants` queues under a hierarchy of cohorts with fan-out 10 (10 tenants:
// one cohort; 10,000 tenants: 1,000 + 100 + 10 + 1 cohorts, four levels above each queue). Every
// queue has a nominal quota of 8 H100 GPUs, 8,000 milli-GPU and 64 cores (scaled up for the cycle
// benchmarks); every other queue also has a borrowing limit, every third a lending limit; cohorts
// hold no quota of their own. Usage: every tenant uses half of its nominal GPUs.
//
//  BM_QuotaCheck/<tenants>       quota_tree::check of a 4-GPU demand for a random tenant
//                                (O(dims x depth)).
//  BM_QuotaCharge/<tenants>      charge then refund that demand (O(dims x depth)).
//  BM_QuotaRecompute/<running>   quota_tree::recompute from a ledger with that many running
//                                jobs (1..8 GPUs) over 1,000 tenants: what quota_admission
//                                does once per cycle (O(running tasks)).
//  BM_QuotaAdmissionCycle/<running>  one pipeline cycle with quota_admission<gang_admission>
//                                and 100 pending 1-GPU jobs of random tenants on a cluster
//                                with that many running jobs (every iteration from a copy of
//                                the same state, copied outside the timing); the 1,000 queues'
//                                nominal quotas add up to about the cluster's GPUs.
//  BM_GangAdmissionCycle/<running>   the same cycle without quotas, for the overhead.
#include <benchmark/benchmark.h>

#include <algorithm>  // std::max
#include <cstdint>
#include <string>
#include <vector>

#include <gpusched/gpusched.hpp>

#include "generators.hpp"

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

const gs::gpu_catalog& catalog() {
  static const gs::gpu_catalog c = gs::basic_catalog();
  return c;
}

/// `gpus_each`: every queue's nominal H100 GPUs (milli-GPU and cores scale with it).
gs::quota_tree make_tree(std::size_t tenants, std::int64_t gpus_each = 8) {
  const auto& cat = catalog();
  const auto h100 = gs::quota_resource::gpus(cat.id("H100-SXM5-80GB"));
  gs::quota_tree::builder b(cat);
  // cohort levels: level L has ceil(tenants / 10^(L+1)) cohorts, up to a single root
  std::vector<std::size_t> level_sizes;
  for (std::size_t n = (tenants + 9) / 10;; n = (n + 9) / 10) {
    level_sizes.push_back(n);
    if (n == 1) break;
  }
  const auto cohort_name = [](std::size_t level, std::size_t k) {
    return "c" + std::to_string(level) + "-" + std::to_string(k);
  };
  for (std::size_t level = level_sizes.size(); level-- > 0;) {
    for (std::size_t k = 0; k < level_sizes[level]; ++k) {
      b.cohort(cohort_name(level, k),
               level + 1 < level_sizes.size() ? cohort_name(level + 1, k / 10) : "");
    }
  }
  for (std::size_t t = 0; t < tenants; ++t) {
    b.queue("q" + std::to_string(t), gs::tenant_id{static_cast<gs::tenant_id::rep>(t)},
            cohort_name(0, t / 10))
        .nominal(h100, gpus_each)
        .nominal(gs::quota_resource::gpu_milli(), 1000 * gpus_each)
        .nominal(gs::quota_resource::cpu(), 8000 * gpus_each);
    if (t % 2 == 0) {
      b.borrowing_limit(h100, gpus_each / 2)
          .borrowing_limit(gs::quota_resource::gpu_milli(), 500 * gpus_each);
    }
    if (t % 3 == 0) b.lending_limit(h100, gpus_each / 2);
  }
  return b.build();
}

gs::quota_vector demand(std::size_t dims, std::int64_t gpus) {
  gs::quota_vector v(dims, 0);
  v[gs::quota_resource::cpu().index()] = 4000 * gpus;
  v[gs::quota_resource::gpu_milli().index()] = 1000 * gpus;
  v[gs::quota_resource::gpus(catalog().id("H100-SXM5-80GB")).index()] = gpus;
  return v;
}

void BM_QuotaCheck(benchmark::State& state) {
  const auto tenants = static_cast<std::size_t>(state.range(0));
  auto tree = make_tree(tenants);
  const auto half = demand(tree.dims(), 4);
  for (std::size_t t = 0; t < tenants; ++t) {
    tree.charge(gs::tenant_id{static_cast<gs::tenant_id::rep>(t)}, half);
  }
  gs::random_engine g(7);
  std::vector<gs::tenant_id> who(4096);
  for (auto& t : who)
    t = gs::tenant_id{static_cast<gs::tenant_id::rep>(gs::uniform_index(g, tenants))};
  const auto d = demand(tree.dims(), 4);
  std::size_t k = 0, over = 0;
  for (auto _ : state) {
    const auto s = tree.check(who[k++ & 4095U], d);
    if (s) ++over;
    benchmark::DoNotOptimize(s);
  }
  state.counters["cohort levels"] = 0;
  for (auto n = tree.at(tree.queue_of(gs::tenant_id{0})).parent; n >= 0; n = tree.at(n).parent) {
    state.counters["cohort levels"] += 1;
  }
  state.counters["over quota %"] =
      100.0 * static_cast<double>(over) / static_cast<double>(state.iterations());
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_QuotaCheck)
    ->Arg(10)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kNanosecond)
    ->Complexity(benchmark::oLogN);

void BM_QuotaCharge(benchmark::State& state) {
  const auto tenants = static_cast<std::size_t>(state.range(0));
  auto tree = make_tree(tenants);
  gs::random_engine g(7);
  std::vector<gs::tenant_id> who(4096);
  for (auto& t : who)
    t = gs::tenant_id{static_cast<gs::tenant_id::rep>(gs::uniform_index(g, tenants))};
  const auto d = demand(tree.dims(), 4);
  std::size_t k = 0;
  for (auto _ : state) {
    const auto t = who[k++ & 4095U];
    tree.charge(t, d);
    tree.charge(t, d, -1);
  }
  benchmark::DoNotOptimize(tree.usage(0, 3));
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_QuotaCharge)
    ->Arg(10)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kNanosecond)
    ->Complexity(benchmark::oLogN);

/// A ledger with `running` jobs of 1..8 GPUs over 1,000 tenants, placed first-fit.
gs::ledger busy_cluster(std::size_t running, std::uint64_t seed) {
  gs::random_engine g(seed);
  // about 4.5 GPUs per job on average; leave a quarter of the GPUs free
  const std::size_t nodes = running * 3 / 4 + 16;
  gs::ledger book(gs::cluster(catalog(), gs::testing::uniform_nodes(nodes, 8)));
  std::vector<gs::job_spec> load;
  for (std::size_t k = 0; k < running; ++k) {
    gs::job_spec j;
    j.id = gs::job_id{static_cast<gs::job_id::rep>(100'000 + k)};
    j.tenant = gs::tenant_id{static_cast<gs::tenant_id::rep>(gs::uniform_index(g, 1000))};
    j.expected_duration = gs::seconds(3600);
    const auto gpus = static_cast<int>(1 + gs::uniform_index(g, 8));
    j.groups.push_back({.name = "w",
                        .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                    .cpu = 1_cores,
                                    .memory = 1_gib},
                        .count = 1});
    load.push_back(std::move(j));
  }
  auto setup = gs::make_pipeline(gs::no_preemption{});
  setup.schedule(book, load, {}, g);
  return book;
}

void BM_QuotaRecompute(benchmark::State& state) {
  auto tree = make_tree(1000);
  const auto book = busy_cluster(static_cast<std::size_t>(state.range(0)), 42);
  for (auto _ : state) {
    tree.recompute(book);
    benchmark::DoNotOptimize(tree.usage(0, 3));
  }
  state.counters["running"] = static_cast<double>(book.running().size());
  state.SetComplexityN(static_cast<std::int64_t>(book.running().size()));
}
BENCHMARK(BM_QuotaRecompute)
    ->Arg(1000)
    ->Arg(3000)
    ->Arg(10000)
    ->Unit(benchmark::kMicrosecond)
    ->Complexity(benchmark::oN);

std::vector<gs::job_spec> pending_jobs(std::size_t count, std::uint64_t seed) {
  gs::random_engine g(seed);
  std::vector<gs::job_spec> out;
  for (std::size_t k = 0; k < count; ++k) {
    gs::job_spec j;
    j.id = gs::job_id{static_cast<gs::job_id::rep>(k + 1)};
    j.tenant = gs::tenant_id{static_cast<gs::tenant_id::rep>(gs::uniform_index(g, 1000))};
    j.submit = gs::at(gs::seconds(static_cast<std::int64_t>(k)));
    j.groups.push_back(
        {.name = "w",
         .request = {.gpu = gs::gpu_demand::whole(1_gpus), .cpu = 1_cores, .memory = 1_gib},
         .count = 1});
    out.push_back(std::move(j));
  }
  return out;
}

template <class Admission>
void cycle_loop(benchmark::State& state, Admission admission) {
  const auto base = busy_cluster(static_cast<std::size_t>(state.range(0)), 42);
  const auto pending = pending_jobs(100, 9);
  auto pipe = gs::make_pipeline(std::move(admission), gs::gang_placement{}, gs::no_preemption{});
  gs::random_engine g(1);
  gs::cycle_result res;
  std::size_t admitted = 0;
  for (auto _ : state) {
    state.PauseTiming();
    gs::ledger book = base;
    state.ResumeTiming();
    pipe.schedule(book, pending, gs::at(gs::seconds(1000)), g, res);
    benchmark::DoNotOptimize(res.decisions.data());
    state.PauseTiming();
    admitted = res.count(gs::verdict::admit);
    book = gs::ledger{};
    state.ResumeTiming();
  }
  state.counters["admitted"] = static_cast<double>(admitted);
  state.counters["running"] = static_cast<double>(base.running().size());
  state.SetComplexityN(state.range(0));
}

void BM_QuotaAdmissionCycle(benchmark::State& state) {
  // nominal quotas add up to about the cluster's GPUs (busy_cluster: running x 6 GPUs)
  const auto each = std::max<std::int64_t>(8, state.range(0) * 6 / 1000);
  cycle_loop(state, gs::quota_admission<>(make_tree(1000, each)));
}
BENCHMARK(BM_QuotaAdmissionCycle)
    ->Arg(1000)
    ->Arg(3000)
    ->Arg(10000)
    ->Unit(benchmark::kMicrosecond)
    ->Complexity(benchmark::oN);

void BM_GangAdmissionCycle(benchmark::State& state) { cycle_loop(state, gs::gang_admission{}); }
BENCHMARK(BM_GangAdmissionCycle)
    ->Arg(1000)
    ->Arg(3000)
    ->Arg(10000)
    ->Unit(benchmark::kMicrosecond)
    ->Complexity(benchmark::oN);

}  // namespace

BENCHMARK_MAIN();
