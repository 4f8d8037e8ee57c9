// SPDX-License-Identifier: Apache-2.0
// topology_placement: which GPUs and which nodes a gang gets, and why.
//
// Part 1, inside one DGX-1 (V100, hybrid cube-mesh): the NVLink matrix as `nvidia-smi topo -m`
// prints it, the best k GPUs for every k (ring bottleneck first, then total bandwidth, then
// NUMA), the same with GPUs busy, and what NVIDIA go-gpuallocator's besteffort policy picks.
//
// Part 2, a two-level fabric (16 DGX H100 nodes, 4 per leaf switch, 2 leaves per spine group):
// gangs go under as few switches as possible; a small job fills a partly used leaf so the
// empty leaves stay whole for big gangs; a hard "one leaf" constraint that cannot be met is a
// reason, not an error.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <gpusched/gpusched.hpp>

namespace gs = gpusched;

namespace {

std::string gpus_of(gs::gpu_mask m) {
  std::string s = "{";
  for (int i = 0; i < 32; ++i) {
    if (((m >> i) & 1u) == 0) continue;
    if (s.size() > 1) s += ',';
    s += std::to_string(i);
  }
  return s + "}";
}

std::string cell(const gs::node_distances& d, int i, int j) {
  if (i == j) return "X";
  if (d.level(i, j) == gs::p2p_level::nvlink) return "NV" + std::to_string(d.nvlinks()(i, j));
  return std::string(gs::to_string(d.level(i, j)));
}

void part1() {
  std::printf("== Part 1: one DGX-1 V100 node\n");
  const gs::node_distances d(gs::dgx1_v100());
  std::printf("      ");
  for (int j = 0; j < 8; ++j) std::printf(" GPU%d", j);
  std::printf("  NUMA\n");
  for (int i = 0; i < 8; ++i) {
    std::printf("  GPU%d", i);
    for (int j = 0; j < 8; ++j) std::printf(" %4s", cell(d, i, j).c_str());
    std::printf("  %d\n", d.numa(i));
  }
  std::printf(
      "objective: best ring bottleneck, then total pair bandwidth, then fewest NUMA nodes,\n"
      "then bandwidth left among the free GPUs (GB/s per direction)\n");
  std::printf("-- empty node\n");
  for (int k = 1; k <= 8; ++k) {
    const auto s = gs::select_gpus(d, d.all(), k);
    std::printf("  k=%d -> %-18s ring %5.1f  pairs %6.1f  NUMA %d\n", k, gpus_of(s.gpus).c_str(),
                static_cast<double>(s.score.ring_mbps) / 1000.0,
                static_cast<double>(s.score.pair_mbps) / 1000.0, s.score.numa_nodes);
  }
  const gs::gpu_mask free = d.all() & ~((1u << 0) | (1u << 5));
  std::printf("-- GPUs 0 and 5 busy (free %s)\n", gpus_of(free).c_str());
  for (int k : {2, 4}) {
    const auto s = gs::select_gpus(d, free, k);
    std::vector<int> avail;
    for (int i = 0; i < 8; ++i) {
      if ((free >> i) & 1u) avail.push_back(i);
    }
    const auto be = gs::besteffort_select(d, avail, {}, k);
    gs::gpu_mask bm = 0;
    for (int g : be.gpus) bm |= 1u << g;
    std::printf(
        "  k=%d -> %-10s ring %5.1f  pairs %6.1f | besteffort %-10s ring %5.1f  pairs %6.1f\n", k,
        gpus_of(s.gpus).c_str(), static_cast<double>(s.score.ring_mbps) / 1000.0,
        static_cast<double>(s.score.pair_mbps) / 1000.0, gpus_of(bm).c_str(),
        static_cast<double>(d.ring_mbps(bm)) / 1000.0,
        static_cast<double>(d.pair_mbps(bm)) / 1000.0);
  }
  const auto req = gs::select_gpus(d, d.all(), 2, 1u << 4);
  std::printf("  k=2 with GPU4 required -> %s (4-7 is NV2 on the same socket)\n",
              gpus_of(req.gpus).c_str());
  const auto bad = gs::select_gpus(d, free, 2, 1u << 5);
  std::printf("  k=2 with GPU5 required -> %s\n", std::string(gs::to_string(bad.status)).c_str());
}

gs::job_spec gang(unsigned id, const char* name, int tasks, int gpus) {
  return {.id = gs::job_id{id},
          .name = name,
          .groups = {{.name = "worker",
                      .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                  .cpu = gs::cpu_millis{4000}},
                      .count = tasks}}};
}

void show(gs::topology_aware_placement& p, gs::ledger& book, const gs::job_spec& j) {
  const auto& f = p.model().network();
  gs::random_engine rng(1);
  gs::first_fit_packing pack;
  const gs::schedule_context ctx(book, gs::sim_time{}, rng);
  const auto plan = p.plan(ctx, j);
  std::printf("-- %s: %d x %d GPUs\n", j.name.c_str(), plan.tasks, plan.gpus_per_task);
  auto tx = book.begin();
  const auto o = p.place(ctx, j, gs::packing_ref(pack), tx);
  if (!o.placed) {
    std::printf("  not placed: %s\n", gs::describe(o.why, &j).c_str());
    tx.rollback();
    return;
  }
  std::printf("  why: lowest level with a domain that holds the gang: %s",
              f.level_name(plan.level).c_str());
  if (plan.level <= f.level_count()) {
    std::printf(" %u (room for %lld task(s); best fit among %d candidate domains)\n", plan.domain,
                static_cast<long long>(plan.domain_capacity), plan.candidates);
  } else {
    std::printf(" (no single spine group holds it; spread, largest domains first)\n");
  }
  std::printf(
      "  (ties go to the candidate whose enclosing leaf, then spine group, has the least room)\n");
  const std::vector<gs::task_allocation> placed(tx.placed().begin(), tx.placed().end());
  std::printf("  on: %s\n", gs::describe_placement(placed, book.state()).c_str());
  std::printf("  spans %d node(s), %d leaf switch(es), %d spine group(s)\n",
              gs::domains_spanned(f, placed, 0), gs::domains_spanned(f, placed, 1),
              gs::domains_spanned(f, placed, 2));
  tx.commit(j, gs::sim_time{});
  const gs::fabric_occupancy occ(book.state(), f);
  std::printf("  leaf fragmentation now %.2f (share of free GPUs in partly used leaves)\n",
              occ.fragmentation(1));
}

void part2() {
  std::printf("\n== Part 2: 16 DGX H100 nodes, 4 per leaf, 2 leaves per spine group\n");
  auto model = std::make_shared<gs::topology_model>(gs::fabric::fat_tree(16, 4, 2));
  const auto h100 = model->add_node_type(gs::dgx_h100());
  std::vector<gs::node_spec> nodes;
  for (unsigned i = 0; i < 16; ++i) {
    nodes.push_back({.id = gs::node_id{i + 1},
                     .name = "n" + std::to_string(i),
                     .gpu_model = "H100-SXM5-80GB",
                     .gpus = gs::gpu_count{8},
                     .cpu = gs::cpu_millis{112000},
                     .memory = gs::memory_mib{2048 * 1024},
                     .topology = h100});
  }
  gs::ledger book(gs::cluster(gs::basic_catalog(), nodes));
  model->check(book.state());
  gs::topology_aware_placement topo(model);
  // background: leaf 1 is mostly busy (3 of 4 nodes), leaf 2 has one busy node
  gs::topology_aware_placement plain(model);
  {
    gs::random_engine rng(1);
    gs::first_fit_packing pack;
    auto tx = book.begin();
    for (unsigned n : {4u, 5u, 6u, 8u}) {
      const gs::schedule_context ctx(book, gs::sim_time{}, rng);
      auto a = pack.fit(ctx, gs::node_index{n}, gang(99, "", 1, 8).groups[0].request);
      tx.place(*a);
    }
    tx.commit(gang(99, "background", 4, 8), gs::sim_time{});
  }
  std::printf("busy before: n4 n5 n6 (leaf 1) and n8 (leaf 2)\n");
  show(topo, book, gang(1, "small", 1, 8));
  show(topo, book, gang(2, "four-node", 4, 8));
  topo.set_constraint(gs::job_id{3}, {.required_level = 1});
  show(topo, book, gang(3, "five-node, one leaf required", 5, 8));
  show(topo, book, gang(4, "five-node, soft", 5, 8));
  show(topo, book, gang(5, "two-node", 2, 8));
  show(topo, book, gang(6, "one-more", 1, 8));
  std::printf("invariants %s\n", gs::check_invariants(book).ok() ? "hold" : "VIOLATED");
}

}  // namespace

int main() {
  part1();
  part2();
  return 0;
}
