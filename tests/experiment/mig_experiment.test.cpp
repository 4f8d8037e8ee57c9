// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "mig_experiment.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace experiment_mig_experiment_test {

namespace gs = gpusched;

namespace {
const std::string fixtures =
    std::string(GPUSCHED_TEST_DATA_DIR) + "/../../benchmarks/experiment/fixtures";

/// A random openb-like trace: 1-, 2-, 4- and 8-GPU nodes; shares, whole GPUs, CPU-only pods.
std::pair<std::vector<gs::openb_node>, std::vector<gs::openb_pod>> random_trace(
    gs::random_engine& g, int nodes, int pods) {
  std::vector<gs::openb_node> ns;
  for (int i = 0; i < nodes; ++i) {
    ns.push_back({"n" + std::to_string(i),
                  static_cast<std::int64_t>(8 + gs::uniform_index(g, 90)) * 1000, 262144,
                  1 << gs::uniform_index(g, 4), "T4"});
  }
  std::vector<gs::openb_pod> ps;
  for (int i = 0; i < pods; ++i) {
    gs::openb_pod p;
    p.name = "p" + std::to_string(1000 + i);
    p.cpu_milli = static_cast<std::int64_t>(1 + gs::uniform_index(g, 12)) * 1000;
    p.memory_mib = 1024;
    switch (gs::uniform_index(g, 4)) {
      case 0:
        break;  // CPU-only
      case 1:
      case 2:
        p.num_gpu = 1;
        p.gpu_milli = static_cast<int>(50 + gs::uniform_index(g, 951));
        break;
      default:
        p.num_gpu = static_cast<int>(1u << gs::uniform_index(g, 4));
        p.gpu_milli = 1000;
        p.gpu_spec = {"V100"};  // dropped on the MIG cluster
    }
    ps.push_back(std::move(p));
  }
  return {ns, ps};
}

std::string profile_name(const char* model, int milli, gs::mig_cover cover) {
  const auto c = gs::mig_catalog();
  return gs::mig_pod_profile(c[c.id(gs::mig_model_name(model))].mig, milli, cover).name;
}
}  // namespace

TEST_SUITE("experiment/mig") {
  TEST_CASE("a share maps to the smallest profile covering its compute or memory fraction") {
    using gs::mig_cover;
    // compute: slices >= share x 7
    CHECK(profile_name("A100-40GB", 100, mig_cover::compute) == "1g.5gb");
    CHECK(profile_name("A100-40GB", 142, mig_cover::compute) == "1g.5gb");   // 0.994 slices
    CHECK(profile_name("A100-40GB", 143, mig_cover::compute) == "2g.10gb");  // 1.001 slices
    CHECK(profile_name("A100-40GB", 500, mig_cover::compute) == "4g.20gb");
    CHECK(profile_name("A100-40GB", 571, mig_cover::compute) == "4g.20gb");
    CHECK(profile_name("A100-40GB", 572, mig_cover::compute) == "7g.40gb");
    CHECK(profile_name("A100-40GB", 1000, mig_cover::compute) == "7g.40gb");
    // memory: slices >= share x 8; 1g with two memory slices before 2g
    CHECK(profile_name("A100-40GB", 125, mig_cover::memory) == "1g.5gb");
    CHECK(profile_name("A100-40GB", 126, mig_cover::memory) == "1g.10gb");
    CHECK(profile_name("A100-40GB", 250, mig_cover::memory) == "1g.10gb");
    CHECK(profile_name("A100-40GB", 500, mig_cover::memory) == "3g.20gb");
    CHECK(profile_name("A100-40GB", 501, mig_cover::memory) == "7g.40gb");
    // names per model: the one-eighth profile of an H100-80GB is 1g.10gb
    CHECK(profile_name("H100-80GB", 100, mig_cover::compute) == "1g.10gb");
    CHECK(profile_name("H100-80GB", 250, mig_cover::memory) == "1g.20gb");
    CHECK(profile_name("H100-SXM5-80GB", 400, mig_cover::compute) == "3g.40gb");
    // A30: 4 compute slices
    CHECK(profile_name("A30-24GB", 300, mig_cover::compute) == "2g.12gb");
    const auto c = gs::mig_catalog();
    CHECK_THROWS_AS((void)gs::mig_pod_profile(c[c.id("A100-SXM4-40GB")].mig, 0, mig_cover::compute),
                    gs::invalid_value_error);
  }

  TEST_CASE("an unknown or non-MIG model is an invalid value naming the model") {
    CHECK_THROWS_WITH_AS((void)gs::mig_model_name("T4"), doctest::Contains("'model' = T4"),
                         gs::invalid_value_error);
    CHECK(gs::mig_model_name("A100-40GB") == "A100-SXM4-40GB");
    CHECK_THROWS_AS(gs::mig_experiment({{"n0", 1000, 1000, 2, "T4"}}, {}, "V100"),
                    gs::invalid_value_error);
    CHECK_THROWS_AS(gs::mig_experiment({{"n0", 1000, 1000, 0, ""}}, {}), gs::invalid_value_error);
    // a multi-GPU pod takes whole GPUs
    CHECK_THROWS_AS(gs::mig_experiment({{"n0", 1000, 1000, 2, "T4"}}, {{"p", 1000, 1, 2, 500, {}}}),
                    gs::invalid_value_error);
  }

  TEST_CASE("on the fixture every policy and cover keeps the ledger consistent after every pod") {
    const auto nodes = gs::load_openb_nodes(fixtures + "/nodes.csv");
    const auto pods = gs::load_openb_pods(fixtures + "/pods.csv");
    for (const char* model : {"A100-40GB", "H100-80GB"}) {
      for (const auto cover : {gs::mig_cover::compute, gs::mig_cover::memory}) {
        const gs::mig_experiment e(nodes, pods, model, cover);
        CHECK(e.total_gpus() == 14);
        for (const auto k : {gs::mig_policy_kind::first_fit, gs::mig_policy_kind::mig_aware}) {
          for (std::uint64_t seed = 1; seed <= 3; ++seed) {
            CAPTURE(model);
            CAPTURE(seed);
            gs::mig_run_config cfg;
            cfg.policy = k;
            cfg.seed = seed;
            cfg.check_invariants = true;
            const auto r = e.run(cfg);
            CHECK(r.invariant_checks == r.pods);
            CHECK(r.violations.empty());
            CHECK(r.placed + r.failed == r.pods);
            CHECK(r.placed > 0);
            for (std::size_t b = 0; b < r.bins(); ++b) {
              if (b > 0) CHECK(r.alloc[b] >= r.alloc[b - 1] - 1e-9);
              CHECK(r.alloc[b] <= 100.0 + 1e-9);
              // a compute-covering profile holds at least the share's compute
              if (cover == gs::mig_cover::compute) CHECK(r.alloc[b] >= r.used[b] - 1e-9);
            }
          }
        }
      }
    }
  }

  TEST_CASE("property: invariants hold and the choice cache equals calling pack") {
    const auto seed = gs::seed_from_env(5);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    for (int round = 0; round < 4; ++round) {
      auto [ns, ps] = random_trace(g, 10, 70);
      const gs::mig_experiment e(ns, ps, round % 2 == 0 ? "A100-40GB" : "H100-80GB",
                                 round < 2 ? gs::mig_cover::compute : gs::mig_cover::memory);
      for (const auto k : {gs::mig_policy_kind::first_fit, gs::mig_policy_kind::mig_aware}) {
        gs::mig_run_config cfg;
        cfg.policy = k;
        cfg.seed = seed + static_cast<unsigned>(round);
        cfg.check_invariants = true;
        const auto cached = e.run(cfg);
        CHECK(cached.violations.empty());
        cfg.cache_choices = false;
        const auto direct = e.run(cfg);
        CHECK(direct.violations.empty());
        CHECK(cached.alloc == direct.alloc);
        CHECK(cached.placed == direct.placed);
        // Same inputs, same result.
        const auto again = e.run(cfg);
        CHECK(again.alloc == direct.alloc);
        CHECK(again.used == direct.used);
      }
    }
  }

  TEST_CASE("MIG-aware keeps the slots a later 4g instance needs and first-fit does not") {
    // One A100: a 1g pod, then a 4g pod (compute cover: 0.1 -> 1g, 0.5 -> 4g, which can only
    // start at slice 0). First-fit puts 1g at slice 0 and the 4g pod fails; MIG-aware puts 1g
    // where it costs the least option value (slices 4..6) and the 4g pod fits.
    std::vector<gs::openb_node> ns{{"n0", 64000, 1 << 20, 1, "T4"}};
    std::vector<gs::openb_pod> ps{{"a", 1000, 1, 1, 100, {}}, {"b", 1000, 1, 1, 500, {}}};
    const gs::mig_experiment e(ns, ps, "A100-40GB", gs::mig_cover::compute);
    gs::mig_run_config cfg;
    cfg.tune = 1.0;
    cfg.check_invariants = true;
    cfg.policy = gs::mig_policy_kind::first_fit;
    const auto ff = e.run_order(cfg, {0, 1});
    cfg.policy = gs::mig_policy_kind::mig_aware;
    const auto ma = e.run_order(cfg, {0, 1});
    CHECK(ff.violations.empty());
    CHECK(ma.violations.empty());
    CHECK(ff.failed == 1);
    CHECK(ma.failed == 0);
    CHECK(ma.unallocated_at(100) <= ff.unallocated_at(100));
    CHECK(ma.unallocated_at(100) == doctest::Approx(200.0 / 7));  // 5 of 7 compute slices held
    CHECK(ff.unallocated_at(100) == doctest::Approx(600.0 / 7));  // 1 of 7
    CHECK(ma.used[60] == doctest::Approx(60.0));
    CHECK(ff.used[60] == doctest::Approx(10.0));
  }

  TEST_CASE("a whole multi-GPU pod takes full-GPU instances on one node, as a gang") {
    std::vector<gs::openb_node> ns{{"small", 64000, 1 << 20, 2, "T4"},
                                   {"big", 64000, 1 << 20, 4, "T4"}};
    std::vector<gs::openb_pod> ps{{"w", 8000, 1024, 4, 1000, {}}, {"s", 8000, 1024, 1, 100, {}}};
    const gs::mig_experiment e(ns, ps, "H100-80GB");
    gs::mig_run_config cfg;
    cfg.tune = 2.0;  // arrived 67%, 133%, 135%: bins up to 200
    cfg.check_invariants = true;
    for (const auto k : {gs::mig_policy_kind::first_fit, gs::mig_policy_kind::mig_aware}) {
      cfg.policy = k;
      const auto r = e.run_order(cfg, {0, 0, 1});
      CHECK(r.violations.empty());
      CHECK(r.placed == 2);  // the second 4-GPU pod finds no node with 4 free GPUs
      CHECK(r.failed == 1);
      // 4 full GPUs + one 1g instance of 6 GPUs x 7 slices
      CHECK(r.alloc.back() == doctest::Approx(100.0 * 29 / 42));
    }
  }

  TEST_CASE(
      "the MIG run, the fractional run and the packing experiment see the same pods in the same "
      "order") {
    const auto nodes = gs::load_openb_nodes(fixtures + "/nodes.csv");
    const auto pods = gs::load_openb_pods(fixtures + "/pods.csv");
    const gs::mig_experiment e(nodes, pods, "A100-40GB");
    gs::mig_run_config cfg;
    cfg.seed = 7;
    const auto r = e.run(cfg);
    gs::fgd_run_config f;
    f.seed = 7;
    f.policy = gs::fgd_policy_kind::fgd;
    const auto fr = e.fractional().run(f);
    // ... and the packing experiment on the original trace orders the pods the same way.
    const gs::fgd_experiment original(nodes, pods);
    gs::random_engine r1(7), r2(7);
    CHECK(original.workload(f, r1) == e.fractional().workload(f, r2));
    CHECK(fr.pods == r.pods);
    CHECK(fr.total_gpus == r.total_gpus);
    CHECK(fr.bins() == r.bins());
    // The fractional allocation is exactly what the placed pods asked for.
    CHECK(fr.alloc.back() <= 100.0);
  }
}

}  // namespace experiment_mig_experiment_test
