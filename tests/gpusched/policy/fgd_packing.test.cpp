// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include <gpusched/check/invariants.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/policy/packing/best_fit.hpp>
#include <gpusched/policy/packing/fgd.hpp>
#include <gpusched/policy/packing/mig_aware.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_fgd_packing_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {
/// The hand-computed case: 2 GPUs with 1000 and 300 milli free, 8 cores free, and a target
/// workload of a 500-milli share (4 cores, 50%), a CPU-only pod (2 cores, 25%) and a whole GPU
/// with 16 cores (25%).
gs::fgd_node hand_node() {
  gs::fgd_node n;
  n.cpu_left = 8000;
  n.memory_left = 1 << 20;
  n.model = gs::gpu_model_id{0};
  n.gpus = 2;
  n.left[0] = 1000;
  n.left[1] = 300;
  return n;
}
gs::target_workload hand_workload() {
  using e = gs::target_workload::entry;
  return gs::target_workload::from_entries(
      {e{{4000, 500, 1, {}}, 0.5}, e{{2000, 0, 0, {}}, 0.25}, e{{16000, 1000, 1, {}}, 0.25}});
}
/// A target workload drawn from the test's own request generator.
std::shared_ptr<const gs::target_workload> sample_workload(gs::random_engine& g,
                                                           const gs::gpu_catalog& cat) {
  std::vector<gs::fgd_pod_shape> shapes;
  for (int i = 0; i < 200; ++i) {
    if (auto s = gs::fgd_pod_shape::of(gs::testing::random_request(g, cat))) shapes.push_back(*s);
  }
  return std::make_shared<const gs::target_workload>(shapes, 95.0);
}
}  // namespace

TEST_SUITE("policy/fgd") {
  TEST_CASE("the fragmentation measure matches a hand-computed case") {
    // share 500: fits, only the 300-milli GPU is fragment: 0.5 x 300 = 150
    // CPU-only: all free milli counts: 0.25 x 1300 = 325
    // whole GPU with 16 cores: lacks CPU, all counts: 0.25 x 1300 = 325
    CHECK(gs::fgd_fragmentation(hand_node(), hand_workload()) == doctest::Approx(800.0));
    auto n = hand_node();
    n.left[0] = 0;
    n.left[1] = 0;
    CHECK(gs::fgd_fragmentation(n, hand_workload()) == 0.0);
  }

  TEST_CASE("a target shape excluded by its model set counts all free milli as fragment") {
    using e = gs::target_workload::entry;
    gs::gpu_model_set other;
    other.insert(gs::gpu_model_id{3});
    const auto m = gs::target_workload::from_entries({e{{1000, 100, 1, other}, 1.0}});
    CHECK(gs::fgd_fragmentation(hand_node(), m) == doctest::Approx(1300.0));
  }

  TEST_CASE("FGD puts a 300-milli share on the 300-milli GPU and scores 57") {
    // On GPU 1: F goes 800 -> 500 (sigmoid(0.3) = 0.574); on GPU 0: 800 -> 650 (0.537).
    const auto m = hand_workload();
    const auto n = hand_node();
    const gs::fgd_pod_shape pod{1000, 300, 1, {}};
    const auto [score, choice] = gs::fgd_score(n, pod, m, gs::fgd_fragmentation(n, m));
    CHECK(score == 57);
    REQUIRE(choice.count == 1);
    CHECK(choice.gpu[0] == 1);
  }

  TEST_CASE("the other five node scores match hand-computed values") {
    auto n = hand_node();
    n.affinity = gs::fgd_affinity_bit({0, 300, 1, {}});
    const gs::fgd_pod_shape pod{1000, 300, 1, {}};
    CHECK(gs::fgd_gpu_packing_score(n, pod) == 97);  // shared GPU with 300 free: 100 - 30/10
    CHECK(gs::fgd_best_fit_score(n, pod) == 91);     // 1 - (7000/128000 + 1000/8000) / 2
    CHECK(gs::fgd_dotprod_score(n, pod) == 99);
    CHECK(gs::fgd_clustering_score(n, pod) == 95);  // only shares here: 75 + 25 x 6700/8000
    const gs::fgd_pod_shape whole{1000, 1000, 1, {}};
    CHECK(gs::fgd_clustering_score(n, whole) == 20);   // other affinities only
    CHECK(gs::fgd_gpu_packing_score(n, whole) == 49);  // used node, one idle GPU consumed
    gs::fgd_node empty = n;
    empty.left[1] = 1000;
    empty.affinity = 0;
    CHECK(gs::fgd_gpu_packing_score(empty, whole) == 31);  // empty node: 33 - 2
    CHECK(gs::fgd_clustering_score(empty, whole) == 43);   // empty: 25 + 25 x 6000/8000
  }

  TEST_CASE("best-fit GPU choice takes the tightest fitting GPU and whole pods the lowest idle") {
    auto n = hand_node();
    n.gpus = 4;
    n.left[2] = 600;
    n.left[3] = 1000;
    CHECK(gs::fgd_best_fit_gpus(n, {0, 500, 1, {}}).gpu[0] == 2);
    const auto two = gs::fgd_best_fit_gpus(n, {0, 1000, 2, {}});
    REQUIRE(two.count == 2);
    CHECK(two.gpu[0] == 0);
    CHECK(two.gpu[1] == 3);
  }

  TEST_CASE(
      "the target workload keeps the most popular shapes up to the threshold and "
      "renormalises") {
    std::vector<gs::fgd_pod_shape> pods;
    for (int i = 0; i < 6; ++i) pods.push_back({1000, 500, 1, {}});
    for (int i = 0; i < 3; ++i) pods.push_back({2000, 0, 0, {}});
    pods.push_back({8000, 1000, 8, {}});
    const gs::target_workload m90(pods, 90);
    REQUIRE(m90.entries().size() == 2);
    CHECK(m90.entries()[0].shape == gs::fgd_pod_shape{1000, 500, 1, {}});
    CHECK(m90.entries()[0].weight == doctest::Approx(6.0 / 9.0));
    CHECK(m90.entries()[1].weight == doctest::Approx(3.0 / 9.0));
    const gs::target_workload m100(pods, 100);
    CHECK(m100.entries().size() == 3);
  }

  TEST_CASE_TEMPLATE(
      "every new packer never over-commits, grants exactly the request, and finds "
      "a fit whenever some node has one",
      P, gs::best_fit_packing, gs::worst_fit_packing, gs::random_packing, gs::dotprod_packing,
      gs::gpu_clustering_packing, gs::gpu_packing_packing, gs::fgd_best_fit_packing,
      gs::fgd_packing, gs::mig_aware_packing) {
    const auto seed = gs::seed_from_env(4242);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    P packer;
    if constexpr (std::is_same_v<P, gs::fgd_packing>) packer = P(sample_workload(g, cat));
    for (int round = 0; round < 12; ++round) {
      gs::ledger book(gs::cluster(cat, gs::testing::random_nodes(g, 1 + gs::uniform_index(g, 10))));
      unsigned next = 1;
      for (int step = 0; step < 50; ++step) {
        const gs::schedule_context ctx(book, {}, g);
        const auto req = gs::testing::random_request(g, cat);
        const auto got = packer.pack(ctx, req);
        bool any = false;
        for (gs::node_index n : book.state().nodes()) {
          if (auto a = packer.fit(ctx, n, req)) {
            any = true;
            CHECK(book.state().can_apply(*a));
            CHECK(gs::detail::grant_matches(req, *a, book.state()));
          }
        }
        CHECK(got.has_value() == any);
        if (!got) continue;
        REQUIRE(book.state().can_apply(*got));
        gs::job_spec j;
        j.id = gs::job_id{next++};
        j.groups.push_back({.name = "t", .request = req, .count = 1});
        auto tx = book.begin();
        REQUIRE(tx.place(*got));
        tx.commit(j, {});
        const auto rep = gs::check_invariants(book);
        CHECK_MESSAGE(rep.ok(), rep.to_string());
      }
    }
  }

  TEST_CASE("FGD packing over a cluster prefers the GPU that fragments least") {
    std::vector<gs::node_spec> nodes{{.id = gs::node_id{1},
                                      .name = "a",
                                      .gpu_model = "T4",
                                      .gpus = 2_gpus,
                                      .cpu = 8_cores,
                                      .memory = 64_gib},
                                     {.id = gs::node_id{2},
                                      .name = "b",
                                      .gpu_model = "T4",
                                      .gpus = 2_gpus,
                                      .cpu = 8_cores,
                                      .memory = 64_gib}};
    gs::ledger book(gs::cluster(gs::basic_catalog(), nodes));
    gs::random_engine g(3);
    // Node b gets a 700-milli share first, leaving 300 on its GPU 0.
    gs::task_request first;
    first.gpu = gs::gpu_demand::fraction(700_mgpu);
    gs::task_allocation a;
    a.node = gs::node_index{1};
    a.gpus.push_back({book.state().first_gpu(gs::node_index{1}), 700_mgpu, 0, false});
    gs::job_spec j;
    j.id = gs::job_id{1};
    j.groups.push_back({.name = "t", .request = first, .count = 1});
    auto tx = book.begin();
    REQUIRE(tx.place(a));
    tx.commit(j, {});
    using e = gs::target_workload::entry;
    const gs::fgd_packing fgd(std::make_shared<const gs::target_workload>(
        gs::target_workload::from_entries({e{{0, 500, 1, {}}, 0.5}, e{{0, 1000, 1, {}}, 0.5}})));
    gs::task_request r;
    r.gpu = gs::gpu_demand::fraction(300_mgpu);
    const gs::schedule_context ctx(book, {}, g);
    const auto got = fgd.pack(ctx, r);
    REQUIRE(got);
    CHECK(got->node == gs::node_index{1});
    CHECK(got->gpus[0].gpu == book.state().first_gpu(gs::node_index{1}));
  }

  TEST_CASE("the registry knows the new packers by name") {
    for (const char* n : {"best-fit", "worst-fit", "random", "dotprod", "gpu-clustering",
                          "gpu-packing", "fgd-best-fit", "mig-aware"}) {
      CAPTURE(n);
      CHECK(gs::make_packing_policy(n).name() == n);
    }
  }
}

}  // namespace policy_fgd_packing_test
