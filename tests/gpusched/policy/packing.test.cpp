// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include <gpusched/check/invariants.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/policy/packing/first_fit.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_packing_test {

namespace gs = gpusched;
using namespace gpusched::literals;

TEST_SUITE("policy/packing") {
  TEST_CASE_TEMPLATE(
      "packing never over-commits, grants exactly the request, and finds a fit "
      "whenever some node has one",
      P, gs::first_fit_packing, gs::any_packing_policy) {
    const auto seed = gs::seed_from_env(2024);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    const P packer = gs::first_fit_packing{};
    for (int round = 0; round < 30; ++round) {
      gs::ledger book(gs::cluster(cat, gs::testing::random_nodes(g, 1 + gs::uniform_index(g, 12))));
      unsigned next = 1;
      for (int step = 0; step < 80; ++step) {
        const gs::schedule_context ctx(book, {}, g);
        const auto req = gs::testing::random_request(g, cat);
        const auto got = packer.pack(ctx, req);
        bool any_node = false;
        for (gs::node_index n : book.state().nodes()) {
          if (auto a = packer.fit(ctx, n, req)) {
            any_node = true;
            CHECK(book.state().can_apply(*a));
            CHECK(gs::detail::grant_matches(req, *a, book.state()));
          }
        }
        CHECK(got.has_value() == any_node);  // pack finds a fit iff one exists
        if (!got) continue;
        CHECK(book.state().can_apply(*got));
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

  TEST_CASE("the candidate-node walk offers every node that fits, in order, and stops on request") {
    const auto seed = gs::seed_from_env(77);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    const gs::first_fit_packing ff;
    for (int round = 0; round < 40; ++round) {
      gs::ledger book(gs::cluster(cat, gs::testing::random_nodes(g, 1 + gs::uniform_index(g, 12))));
      const gs::cluster& c = book.state();
      const gs::schedule_context ctx(book, {}, g);
      for (int step = 0; step < 20; ++step) {
        const auto req = gs::testing::random_request(g, cat);
        std::vector<gs::node_index> seen;
        const bool all = gs::detail::for_each_candidate_node(c, req, [&](gs::node_index n) {
          seen.push_back(n);
          return true;
        });
        CHECK(all);
        if (req.gpu.kind != gs::gpu_demand_kind::mig) {
          CHECK(std::is_sorted(seen.begin(), seen.end()));
          CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());
        }
        for (gs::node_index n : c.nodes()) {
          if (ff.fit(ctx, n, req)) {
            CHECK(std::find(seen.begin(), seen.end(), n) != seen.end());
          }
        }
        // first fit is the first candidate that fits
        const auto got = ff.pack(ctx, req);
        const auto first = std::find_if(seen.begin(), seen.end(), [&](gs::node_index n) {
          return ff.fit(ctx, n, req).has_value();
        });
        CHECK(got.has_value() == (first != seen.end()));
        if (got) CHECK(got->node == *first);
        // returning false stops the walk after that node
        if (!seen.empty()) {
          std::size_t calls = 0;
          CHECK_FALSE(gs::detail::for_each_candidate_node(c, req, [&](gs::node_index) {
            ++calls;
            return false;
          }));
          CHECK(calls == 1);
        }
      }
    }
  }

  TEST_CASE("first fit takes the lowest node and the lowest free GPUs") {
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(3, 4)));
    gs::random_engine g(1);
    const gs::schedule_context ctx(book, {}, g);
    const gs::first_fit_packing ff;
    auto a = ff.pack(ctx, {.gpu = gs::gpu_demand::whole(2_gpus), .cpu = 1_cores, .memory = 1_gib});
    REQUIRE(a);
    CHECK(a->node.value() == 0);
    CHECK(a->gpus[0].gpu.value() == 0);
    CHECK(a->gpus[1].gpu.value() == 1);
    {
      auto tx = book.begin();
      REQUIRE(tx.place(*a));
      tx.commit(gs::job_spec{.id = gs::job_id{1},
                             .tenant = {},
                             .groups = {{.name = "t",
                                         .request = {.gpu = gs::gpu_demand::whole(2_gpus),
                                                     .cpu = 1_cores,
                                                     .memory = 1_gib},
                                         .count = 1}}},
                {});
    }
    auto b = ff.pack(ctx, {.gpu = gs::gpu_demand::whole(3_gpus), .cpu = 1_cores, .memory = 1_gib});
    REQUIRE(b);
    CHECK(b->node.value() == 1);  // node 0 has only 2 left
    auto s =
        ff.pack(ctx, {.gpu = gs::gpu_demand::fraction(500_mgpu), .cpu = 1_cores, .memory = 1_gib});
    REQUIRE(s);
    CHECK(s->node.value() == 0);
    CHECK(s->gpus[0].gpu.value() == 2);  // first GPU with 500 milli free
  }

  TEST_CASE("MIG requests take the lowest free placement of the model's profile") {
    std::vector<gs::node_spec> nodes = {{.id = gs::node_id{1},
                                         .name = "m",
                                         .gpu_model = "A100-SXM4-40GB",
                                         .gpus = 1_gpus,
                                         .mig_enabled = true,
                                         .cpu = 8_cores,
                                         .memory = 64_gib}};
    gs::ledger book(gs::cluster(gs::basic_catalog(), nodes));
    gs::random_engine g(1);
    const gs::schedule_context ctx(book, {}, g);
    const gs::first_fit_packing ff;
    // 2g.10gb may start at 0, 2 or 4 only: after three of them, slots 6-7 stay free, yet a fourth
    // 2g does not fit, though 2 memory slices are free: counting slices would say it fits.
    const gs::task_request two_g{.gpu = gs::gpu_demand::mig(2, 2)};
    for (unsigned k = 0; k < 3; ++k) {
      auto a = ff.pack(ctx, two_g);
      REQUIRE(a);
      CHECK(a->gpus[0].mig_slots == (0b11u << (2 * k)));
      auto tx = book.begin();
      REQUIRE(tx.place(*a));
      tx.commit(gs::job_spec{.id = gs::job_id{k + 1},
                             .tenant = {},
                             .groups = {{.name = "t", .request = two_g, .count = 1}}},
                {});
    }
    CHECK_FALSE(ff.pack(ctx, two_g));
    auto one = ff.pack(ctx, {.gpu = gs::gpu_demand::mig(1, 1)});
    REQUIRE(one);
    CHECK(one->gpus[0].mig_slots == 0b0100'0000);                   // 1g.5gb at slot 6
    CHECK_FALSE(ff.pack(ctx, {.gpu = gs::gpu_demand::mig(5, 5)}));  // no such profile
  }

  TEST_CASE("model constraints and host resources are respected") {
    const auto cat = gs::basic_catalog();
    std::vector<gs::node_spec> nodes = gs::testing::uniform_nodes(1, 8, "T4");
    auto more = gs::testing::uniform_nodes(2, 8, "H100-SXM5-80GB");
    more[1].id = gs::node_id{9};
    more[1].name = "h";
    nodes.push_back(more[1]);
    gs::ledger book(gs::cluster(cat, nodes));
    gs::random_engine g(1);
    const gs::schedule_context ctx(book, {}, g);
    gs::gpu_model_set h100;
    h100.insert(cat.id("H100-SXM5-80GB"));
    auto a = gs::first_fit_packing{}.pack(
        ctx, {.gpu = gs::gpu_demand::whole(1_gpus), .allowed_models = h100});
    REQUIRE(a);
    CHECK(book.state().name(a->node) == "h");
    CHECK_FALSE(gs::first_fit_packing{}.pack(
        ctx, {.gpu = gs::gpu_demand::none(), .cpu = gs::cpu_millis{200'000}}));
  }
}

}  // namespace policy_packing_test
