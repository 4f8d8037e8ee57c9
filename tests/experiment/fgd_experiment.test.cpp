// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "fgd_experiment.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace experiment_fgd_experiment_test {

namespace gs = gpusched;

namespace {
/// A random small openb-like trace: 2-, 4- and 8-GPU nodes; shares, whole GPUs, CPU-only pods.
std::pair<std::vector<gs::openb_node>, std::vector<gs::openb_pod>> small_trace(gs::random_engine& g,
                                                                               int nodes,
                                                                               int pods) {
  std::vector<gs::openb_node> ns;
  static constexpr int counts[] = {2, 4, 8};
  static constexpr const char* models[] = {"T4", "V100", "G2"};
  for (int i = 0; i < nodes; ++i) {
    const auto k = gs::uniform_index(g, 3);
    ns.push_back({"n" + std::to_string(i),
                  static_cast<std::int64_t>(16 + gs::uniform_index(g, 80)) * 1000, 262144,
                  counts[k], models[k]});
  }
  std::vector<gs::openb_pod> ps;
  for (int i = 0; i < pods; ++i) {
    gs::openb_pod p;
    p.name = "p" + std::to_string(1000 + i);
    p.cpu_milli = static_cast<std::int64_t>(1 + gs::uniform_index(g, 16)) * 1000;
    p.memory_mib = 1024;
    switch (gs::uniform_index(g, 4)) {
      case 0:
        break;  // CPU-only
      case 1:
        p.num_gpu = 1;
        p.gpu_milli = static_cast<int>(100 + gs::uniform_index(g, 900));
        break;
      case 2:
        p.num_gpu = 1;
        p.gpu_milli = 1000;
        break;
      default:
        p.num_gpu = static_cast<int>(1u << gs::uniform_index(g, 4));
        p.gpu_milli = 1000;
        if (gs::uniform_index(g, 3) == 0) p.gpu_spec = {models[gs::uniform_index(g, 3)]};
    }
    ps.push_back(std::move(p));
  }
  return {ns, ps};
}
}  // namespace

TEST_SUITE("experiment/fgd") {
  TEST_CASE("every policy places or drops every pod, and allocation never decreases") {
    const auto seed = gs::seed_from_env(99);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    for (int round = 0; round < 4; ++round) {
      auto [ns, ps] = small_trace(g, 12, 60);
      const gs::fgd_experiment e(ns, ps);
      for (int k = 0; k < 6; ++k) {
        gs::fgd_run_config cfg;
        cfg.policy = static_cast<gs::fgd_policy_kind>(k);
        cfg.seed = seed + static_cast<unsigned>(round);
        const auto r = e.run(cfg);
        CAPTURE(k);
        CHECK(r.placed + r.failed == r.pods);
        CHECK(r.bins() == 131);
        for (std::size_t b = 1; b < r.bins(); ++b) CHECK(r.alloc[b] >= r.alloc[b - 1] - 1e-9);
        for (std::size_t b = 0; b < r.bins(); ++b) {
          CHECK(r.alloc[b] <= 100.0);
          CHECK(r.frag[b] >= 0.0);
          CHECK(r.frag[b] <= 100.0 - r.alloc[b] + 1e-6);  // fragment is part of the idle GPUs
        }
        // Same inputs, same result.
        const auto again = e.run(cfg);
        CHECK(again.alloc == r.alloc);
        CHECK(again.frag == r.frag);
      }
    }
  }

  TEST_CASE("FGD's score cache changes nothing") {
    gs::random_engine g(7);
    auto [ns, ps] = small_trace(g, 20, 120);
    const gs::fgd_experiment e(ns, ps);
    gs::fgd_run_config cfg;
    cfg.policy = gs::fgd_policy_kind::fgd;
    const auto cached = e.run(cfg);
    cfg.cache_scores = false;
    const auto fresh = e.run(cfg);
    CHECK(cached.alloc == fresh.alloc);
    CHECK(cached.frag == fresh.frag);
    CHECK(cached.placed == fresh.placed);
  }

  TEST_CASE(
      "tuning inflates the workload past the target by sampling with replacement after "
      "the shuffled pods") {
    gs::random_engine g(11);
    auto [ns, ps] = small_trace(g, 10, 40);
    const gs::fgd_experiment e(ns, ps);
    gs::fgd_run_config cfg;
    cfg.tune = 3.0;
    gs::random_engine rng(cfg.seed);
    const auto order = e.workload(cfg, rng);
    REQUIRE(order.size() >= ps.size());
    std::vector<std::size_t> head(order.begin(),
                                  order.begin() + static_cast<std::ptrdiff_t>(ps.size()));
    std::sort(head.begin(), head.end());
    for (std::size_t i = 0; i < head.size(); ++i) CHECK(head[i] == i);  // a permutation first
    std::int64_t total = 0;
    for (auto i : order) total += ps[i].gpu_request();
    CHECK(total >= static_cast<std::int64_t>(3.0 * static_cast<double>(e.total_gpus()) * 1000.0));
    // Without the last sampled pod the total was still below the target.
    CHECK(total - ps[order.back()].gpu_request() <
          static_cast<std::int64_t>(3.0 * static_cast<double>(e.total_gpus()) * 1000.0));
  }

  TEST_CASE("the node order is the name order, or a seeded permutation of it fixed per run") {
    // Nodes given out of name order; the name order is n0 n1 n2 n3 n4 = indexes 2 0 4 1 3.
    std::vector<gs::openb_node> ns{{"n1", 8000, 1 << 20, 1, "T4"},
                                   {"n3", 8000, 1 << 20, 1, "T4"},
                                   {"n0", 8000, 1 << 20, 1, "T4"},
                                   {"n4", 8000, 1 << 20, 1, "T4"},
                                   {"n2", 8000, 1 << 20, 1, "T4"}};
    const gs::fgd_experiment e(ns, {{"p0", 1000, 1, 1, 1000, {}}});
    gs::fgd_run_config cfg;
    cfg.permute_nodes = false;
    gs::random_engine rng(1);
    CHECK(e.node_order(cfg, rng) == std::vector<std::size_t>{2, 0, 4, 1, 3});
    cfg.permute_nodes = true;
    bool other_than_name_order = false;
    for (std::uint64_t seed = 42; seed < 52; ++seed) {
      gs::random_engine a(seed), b(seed);
      const auto order = e.node_order(cfg, a);
      CHECK(order == e.node_order(cfg, b));  // deterministic for a seed
      auto sorted = order;
      std::sort(sorted.begin(), sorted.end());
      CHECK(sorted == std::vector<std::size_t>{0, 1, 2, 3, 4});  // a permutation
      other_than_name_order |= order != std::vector<std::size_t>{2, 0, 4, 1, 3};
    }
    CHECK(other_than_name_order);
  }

  TEST_CASE(
      "a CPU-only pod goes to the first node of the run node order under GpuPacking and "
      "GpuClustering") {
    // The simulator's GpuPacking and GpuClustering score a pod without GPUs 0 on every node, so
    // it lands on the first node of the (permuted) node order. Here it takes all the CPU of its
    // node: on "a" (1 GPU) the 2-GPU pod still fits "b"; on "b" the 2-GPU pod fails.
    std::vector<gs::openb_node> ns{{"a", 2000, 1 << 20, 1, "T4"}, {"b", 2000, 1 << 20, 2, "T4"}};
    std::vector<gs::openb_pod> ps{{"cpu", 2000, 1, 0, 0, {}}, {"gpu", 1000, 1, 2, 1000, {}}};
    const gs::fgd_experiment e(ns, ps);
    for (const auto kind : {gs::fgd_policy_kind::packing, gs::fgd_policy_kind::clustering}) {
      std::size_t fails = 0;
      for (const bool permute : {false, true}) {
        for (std::uint64_t seed = 1; seed <= 24; ++seed) {
          gs::fgd_run_config cfg;
          cfg.policy = kind;
          cfg.seed = seed;
          cfg.tune = 0;  // no tuning: the two pods, shuffled
          cfg.permute_nodes = permute;
          gs::random_engine rng(seed);
          const auto order = e.workload(cfg, rng);
          const auto scan = e.node_order(cfg, rng);
          REQUIRE(order.size() == 2);
          const bool strands_b = order[0] == 0 && scan[0] == 1;  // CPU pod first, "b" first
          const auto r = e.run(cfg);
          CAPTURE(seed);
          CAPTURE(permute);
          CHECK(r.failed == (strands_b ? 1u : 0u));
          if (!permute) CHECK(r.failed == 0);
          fails += r.failed;
        }
      }
      CHECK(fails > 0);  // some seed puts "b" first and the CPU pod first
    }
  }

  TEST_CASE("a pod whose gpu_spec names no model of the cluster is never placed") {
    std::vector<gs::openb_node> ns{{"n0", 64000, 1 << 20, 8, "T4"}};
    std::vector<gs::openb_pod> ps{{"p0", 1000, 1, 1, 1000, {"H100"}}};
    const gs::fgd_experiment e(ns, ps);
    gs::fgd_run_config cfg;
    cfg.tune = 0.125;  // target 1 GPU: the one pod, nothing sampled or removed
    const auto r = e.run(cfg);
    CHECK(r.pods == 1);
    CHECK(r.failed == 1);
  }

  TEST_CASE("tuning pods that ask for no GPU is an error, not an endless loop") {
    std::vector<gs::openb_node> ns{{"n0", 64000, 1 << 20, 8, "T4"}};
    std::vector<gs::openb_pod> ps{{"p0", 1000, 1, 0, 0, {}}, {"p1", 2000, 1, 0, 0, {}}};
    const gs::fgd_experiment e(ns, ps);
    gs::fgd_run_config cfg;  // tune 1.3: 10.4 GPUs of requests wanted, none available
    CHECK_THROWS_WITH_AS((void)e.run(cfg),
                         "[gpusched.invalid_value] fgd experiment: field 'tune' = 1.300000: no pod "
                         "asks for a GPU, so the workload cannot be inflated to a share of the "
                         "cluster's GPUs",
                         gs::invalid_value_error);
    cfg.tune = 0;  // no tuning: the pods run as they are
    CHECK(e.run(cfg).pods == 2);
  }

  TEST_CASE("tuning that would sample more pods than the limit is refused before sampling") {
    // One 1-milli pod among many CPU-only ones: about 10.4 x 10^3 x 10^4 / 1 pods needed.
    std::vector<gs::openb_node> ns{{"n0", 64000, 1 << 20, 8, "T4"}};
    std::vector<gs::openb_pod> ps{{"g", 1000, 1, 1, 1, {}}};
    for (int i = 0; i < 9999; ++i) ps.push_back({"c" + std::to_string(i), 1000, 1, 0, 0, {}});
    const gs::fgd_experiment e(ns, ps);
    gs::fgd_run_config cfg;
    CHECK_THROWS_WITH_AS((void)e.run(cfg), doctest::Contains("pods (at most 10000000)"),
                         gs::invalid_value_error);
  }

  TEST_CASE("a cluster without GPUs is an invalid value") {
    CHECK_THROWS_AS(gs::fgd_experiment({{"n0", 1000, 1000, 0, ""}}, {}), gs::invalid_value_error);
  }
}

}  // namespace experiment_fgd_experiment_test
