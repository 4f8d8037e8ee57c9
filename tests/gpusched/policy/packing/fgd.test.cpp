// SPDX-License-Identifier: Apache-2.0
// policy/packing/fgd.hpp: the FGD family's own API (pod shapes, node views, `fit`/`pack` on
// nodes out of service). Scores against the paper's simulator: policy/fgd_packing.test.cpp.
#include <doctest/doctest.h>

#include <vector>

#include <gpusched/policy/packing/fgd.hpp>

#include "law_fixtures.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_packing_fgd_test {

namespace gs = gpusched;
namespace gt = gpusched::testing;

TEST_SUITE("policy/packing/fgd") {
  TEST_CASE_TEMPLATE("an FGD-family policy never packs onto a node out of service", P,
                     gs::random_packing, gs::dotprod_packing, gs::gpu_clustering_packing,
                     gs::gpu_packing_packing, gs::fgd_best_fit_packing, gs::fgd_packing) {
    // node 0 is out of service, node 1 is the only one in service but too small for 2 GPUs
    const std::vector<gs::node_spec> nodes = {gt::node_of(1, "T4", 4), gt::node_of(2, "T4", 1)};
    gs::ledger book(gs::cluster(gs::basic_catalog(), nodes));
    book.set_available(gs::node_index{0}, false);
    gs::random_engine g(1);
    const gs::schedule_context ctx(book, {}, g);
    const P p;
    const auto two = gt::request_of(gs::gpu_demand::whole(gs::gpu_count{2}));
    CHECK_FALSE(p.pack(ctx, two).has_value());
    CHECK_FALSE(p.fit(ctx, gs::node_index{0}, two).has_value());
    const auto cpu_only = gt::request_of(gs::gpu_demand::none());
    const auto a = p.pack(ctx, cpu_only);
    REQUIRE(a.has_value());
    CHECK(a->node == gs::node_index{1});
    CHECK(book.state().can_apply(*a));
  }

  TEST_CASE("a pod shape is the request's CPU, per-GPU milli and GPU count, and MIG has none") {
    const auto whole = gs::fgd_pod_shape::of(
        gt::request_of(gs::gpu_demand::whole(gs::gpu_count{4}), gs::cpu_millis{2000}));
    REQUIRE(whole.has_value());
    CHECK(whole->cpu == 2000);
    CHECK(whole->milli == 1000);
    CHECK(whole->gpus == 4);
    CHECK(whole->total_milli() == 4000);
    CHECK_FALSE(whole->is_share());
    const auto share = gs::fgd_pod_shape::of(
        gt::request_of(gs::gpu_demand::fraction(gs::milli_gpu{250})));
    REQUIRE(share.has_value());
    CHECK(share->is_share());
    CHECK(share->total_milli() == 250);
    CHECK_FALSE(gs::fgd_pod_shape::of(gt::request_of(gs::gpu_demand::mig(1, 1))).has_value());
  }

  TEST_CASE("the node view reads free CPU, memory and per-GPU free milli from the cluster") {
    const std::vector<gs::node_spec> nodes = {
        gt::node_of(1, "A10", 2, gs::cpu_millis{16000}, gs::memory_mib{4096})};
    gs::ledger book(gs::cluster(gs::basic_catalog(), nodes));
    const auto j = gt::job_of(
        1, {gt::group_of("w", gt::request_of(gs::gpu_demand::fraction(gs::milli_gpu{300}),
                                             gs::cpu_millis{1000}, gs::memory_mib{1024}),
                         1)});
    REQUIRE(gt::run_anywhere(book, j, {}));
    const auto v = gs::fgd_view(book.state(), gs::node_index{0});
    CHECK(v.cpu_left == 15000);
    CHECK(v.memory_left == 3072);
    CHECK(v.gpus == 2);
    CHECK(v.left[0] == 700);
    CHECK(v.left[1] == 1000);
    CHECK(v.model == book.state().model(gs::node_index{0}));
  }
}

}  // namespace policy_packing_fgd_test
