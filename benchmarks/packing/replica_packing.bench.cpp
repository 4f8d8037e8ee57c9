// SPDX-License-Identifier: Apache-2.0
/// Cost of placing one replica (`gpu_demand::replica`) of a time-sliced / MPS GPU on growing
/// clusters (64..16384 nodes of 8 GPUs: gpu0 time-sliced x4, gpu1 MPS x4, the rest exclusive),
/// filled first-fit to 95% of their replicas, so free replicas are left only near the end.
/// Each iteration packs one replica request, applies it in a transaction and rolls it back.
/// First fit walks the free-replica index (expected O(log nodes)); best and worst fit scan all
/// nodes (O(nodes)). Counters: `free_replicas` left free by the fill.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gpusched/gpusched.hpp>

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

std::unique_ptr<gs::ledger> make_filled(std::size_t n) {
  std::vector<gs::node_spec> nodes;
  nodes.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::string name = std::to_string(i);  // (not "n" + ...: g++ 12 -Wrestrict false positive)
    name.insert(name.begin(), 'n');
    nodes.push_back({.id = gs::node_id{static_cast<gs::node_id::rep>(i + 1)},
                     .name = std::move(name),
                     .gpu_model = "A100-SXM4-40GB",
                     .gpus = 8_gpus,
                     .cpu = 128_cores,
                     .memory = 1024_gib});
  }
  auto book = std::make_unique<gs::ledger>(gs::cluster(gs::basic_catalog(), nodes));
  for (gs::node_index ni : book->state().nodes()) {
    book->configure_sharing(ni, 0, gs::gpu_sharing::time_slicing, 4);
    book->configure_sharing(ni, 1, gs::gpu_sharing::mps, 4);
  }
  const auto target = book->state().total_replicas() * 95 / 100;
  const gs::task_request req{.gpu = gs::gpu_demand::replica(), .cpu = 100_mcpu, .memory = 256_mib};
  gs::random_engine rng(1);
  unsigned id = 1;
  std::int64_t used = 0;
  while (used < target) {
    const int tasks = static_cast<int>(std::min<std::int64_t>(64, target - used));
    gs::job_spec j;
    j.id = gs::job_id{id++};
    j.groups.push_back({.name = "nb", .request = req, .count = tasks});
    const gs::schedule_context ctx(*book, gs::sim_time{}, rng);
    auto tx = book->begin();
    for (int t = 0; t < tasks; ++t) {
      auto a = gs::first_fit_packing{}.pack(ctx, req);
      if (!a || !tx.place(*a)) return book;  // cannot happen: the fill stops short of full
    }
    tx.commit(j, gs::sim_time{});
    used += tasks;
  }
  return book;
}

gs::ledger& filled(std::size_t n) {
  static std::map<std::size_t, std::unique_ptr<gs::ledger>> cache;
  auto& p = cache[n];
  if (!p) p = make_filled(n);
  return *p;
}

template <class Pack>
void run(benchmark::State& state) {
  gs::ledger& book = filled(static_cast<std::size_t>(state.range(0)));
  const gs::task_request req{
      .gpu = gs::gpu_demand::replica(8_gib), .cpu = 500_mcpu, .memory = 1_gib};
  gs::random_engine rng(2);
  const Pack pack{};
  std::int64_t placed = 0;
  for (auto _ : state) {
    const gs::schedule_context ctx(book, gs::sim_time{}, rng);
    auto tx = book.begin();
    auto a = pack.pack(ctx, req);
    if (a && tx.place(*a)) ++placed;
    tx.rollback();
    benchmark::DoNotOptimize(a);
  }
  state.counters["placed"] =
      benchmark::Counter(static_cast<double>(placed), benchmark::Counter::kAvgIterations);
  state.counters["free_replicas"] = static_cast<double>(book.state().total_free_replicas());
  state.SetComplexityN(state.range(0));
}

void BM_ReplicaFirstFit(benchmark::State& state) { run<gs::first_fit_packing>(state); }
void BM_ReplicaBestFit(benchmark::State& state) { run<gs::best_fit_packing>(state); }
void BM_ReplicaWorstFit(benchmark::State& state) { run<gs::worst_fit_packing>(state); }

}  // namespace

BENCHMARK(BM_ReplicaFirstFit)->RangeMultiplier(4)->Range(64, 16384)->Complexity();
BENCHMARK(BM_ReplicaBestFit)->RangeMultiplier(4)->Range(64, 16384)->Complexity();
BENCHMARK(BM_ReplicaWorstFit)->RangeMultiplier(4)->Range(64, 16384)->Complexity();

BENCHMARK_MAIN();
