// SPDX-License-Identifier: Apache-2.0
// Topology-aware selection and placement.
//
// - BM_select_*: choose k GPUs on one node (DGX-1, DGX H100, 16-GPU HGX) with `select_gpus`,
//   cycling through 64 random free masks (seed 42) so that branch prediction cannot memorise one
//   answer; Arg = k.
// - BM_besteffort_dgx1: go-gpuallocator's besteffort on the same masks, for comparison.
// - BM_gang_three_tier: `topology_aware_placement::place` of a 64-GPU gang (8 tasks x 8 GPUs)
//   in a transaction that is rolled back, on a three-tier fat tree (32 nodes per leaf, 16 leaves
//   per spine group) of DGX H100 nodes, about half busy; Arg = nodes (100 .. 10,000).
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include <gpusched/gpusched.hpp>

#include "generators.hpp"

namespace gs = gpusched;

namespace {

std::vector<gs::gpu_mask> random_masks(const gs::node_distances& d, int k) {
  gs::random_engine g(42);
  std::vector<gs::gpu_mask> out;
  while (out.size() < 64) {
    const auto m = static_cast<gs::gpu_mask>(g()) & d.all();
    if (std::popcount(m) >= k) out.push_back(m);
  }
  return out;
}

void run_select(benchmark::State& st, const gs::node_distances& d) {
  const int k = static_cast<int>(st.range(0));
  const auto masks = random_masks(d, k);
  std::size_t i = 0;
  for (auto _ : st) {
    const auto s = gs::select_gpus(d, masks[i++ & 63], k);
    benchmark::DoNotOptimize(s);
  }
  st.SetComplexityN(k);
}

void BM_select_dgx1(benchmark::State& st) {
  static const gs::node_distances d(gs::dgx1_v100());
  run_select(st, d);
}
void BM_select_dgx_h100(benchmark::State& st) {
  static const gs::node_distances d(gs::dgx_h100());
  run_select(st, d);
}
void BM_select_hgx16(benchmark::State& st) {
  static const gs::node_distances d(gs::hgx(16, 12, 1, gs::link_bandwidth::nvlink2));
  run_select(st, d);
}
void BM_select_dgx1_empty_k8(benchmark::State& st) {
  static const gs::node_distances d(gs::dgx1_v100());
  for (auto _ : st) {
    const auto s = gs::select_gpus(d, d.all(), 8);
    benchmark::DoNotOptimize(s);
  }
}

void BM_besteffort_dgx1(benchmark::State& st) {
  static const gs::node_distances d(gs::dgx1_v100());
  const int k = static_cast<int>(st.range(0));
  std::vector<std::vector<int>> avail;
  for (auto m : random_masks(d, k)) {
    std::vector<int> a;
    for (int i = 0; i < 8; ++i) {
      if ((m >> i) & 1u) a.push_back(i);
    }
    avail.push_back(a);
  }
  std::size_t i = 0;
  for (auto _ : st) {
    auto r = gs::besteffort_select(d, avail[i++ & 63], {}, k);
    benchmark::DoNotOptimize(r);
  }
}

void BM_gang_three_tier(benchmark::State& st) {
  const auto nodes = static_cast<std::size_t>(st.range(0));
  auto model = std::make_shared<gs::topology_model>(gs::fabric::fat_tree(nodes, 32, 16));
  const auto h = model->add_node_type(gs::dgx_h100());
  auto specs = gs::testing::uniform_nodes(nodes, 8);
  for (auto& s : specs) s.topology = h;
  gs::ledger book(gs::cluster(gs::basic_catalog(), specs));
  // background: about half of the nodes lose 1..8 GPUs
  gs::random_engine g(42);
  {
    auto tx = book.begin();
    const auto& c = book.state();
    for (gs::node_index n : c.nodes()) {
      if (gs::uniform_index(g, 2) == 0) continue;
      gs::task_allocation a;
      a.node = n;
      const auto take = 1 + gs::uniform_index(g, 8);
      for (std::uint64_t i = 0; i < take; ++i) {
        a.gpus.push_back(
            {gs::gpu_index{static_cast<gs::gpu_index::rep>(c.first_gpu(n).value() + i)},
             gs::whole_gpu_milli, 0, false});
      }
      tx.place(a);
    }
    tx.commit();  // nothing registered as a job is fine for a benchmark: only capacity matters
  }
  gs::job_spec j;
  j.id = gs::job_id{1};
  gs::task_request r;
  r.gpu = gs::gpu_demand::whole(gs::gpu_count{8});
  r.cpu = gs::cpu_millis{1000};
  j.groups.push_back({.name = "worker", .request = r, .count = 8});
  gs::topology_aware_placement p(model);
  gs::first_fit_packing pack;
  gs::random_engine rng(1);
  int spanned = 0;
  for (auto _ : st) {
    auto tx = book.begin();
    const gs::schedule_context ctx(book, gs::sim_time{}, rng);
    const auto o = p.place(ctx, j, gs::packing_ref(pack), tx);
    if (!o.placed) st.SkipWithError("gang not placed");
    spanned = gs::domains_spanned(model->network(), tx.placed(), 1);
    tx.rollback();
  }
  st.counters["leaves_spanned"] = spanned;
  st.SetComplexityN(static_cast<benchmark::IterationCount>(nodes));
}

}  // namespace

BENCHMARK(BM_select_dgx1)->DenseRange(1, 8)->Complexity();
BENCHMARK(BM_select_dgx_h100)->DenseRange(1, 8)->Complexity();
BENCHMARK(BM_select_hgx16)->Arg(2)->Arg(4)->Arg(8)->Arg(12)->Arg(16)->Complexity();
BENCHMARK(BM_select_dgx1_empty_k8);
BENCHMARK(BM_besteffort_dgx1)->Arg(2)->Arg(4)->Arg(8);
BENCHMARK(BM_gang_three_tier)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMicrosecond)
    ->Complexity(benchmark::oN);

BENCHMARK_MAIN();
