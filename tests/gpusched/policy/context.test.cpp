// SPDX-License-Identifier: Apache-2.0
// policy/context.hpp: what a policy sees.
#include <doctest/doctest.h>

#include <vector>

#include <gpusched/policy/context.hpp>

#include "law_fixtures.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_context_test {

namespace gs = gpusched;
namespace gt = gpusched::testing;

TEST_SUITE("policy/context") {
  TEST_CASE("the context reads the ledger, its cluster, the clock and the engine it was given") {
    const std::vector<gs::node_spec> nodes = {gt::node_of(1, "T4", 2)};
    gs::ledger book(gs::cluster(gs::basic_catalog(), nodes));
    gs::random_engine g(5);
    const gs::schedule_context ctx(book, gs::at(gs::seconds(42)), g);
    CHECK(&ctx.book() == &book);
    CHECK(&ctx.state() == &book.state());
    CHECK(ctx.now() == gs::at(gs::seconds(42)));
    CHECK(&ctx.rng() == &g);
    gs::random_engine same(5);
    CHECK(ctx.rng()() == same());  // draws advance the caller's engine
  }

  TEST_CASE("during a transaction the context sees the tentative state") {
    const std::vector<gs::node_spec> nodes = {gt::node_of(1, "T4", 2)};
    gs::ledger book(gs::cluster(gs::basic_catalog(), nodes));
    gs::random_engine g(1);
    const gs::schedule_context ctx(book, {}, g);
    auto tx = book.begin();
    gs::task_allocation a;
    a.node = gs::node_index{0};
    a.gpus.push_back({gs::gpu_index{0}, gs::whole_gpu_milli, 0, false, false});
    REQUIRE(tx.place(a));
    CHECK(ctx.state().free_whole_gpus(gs::node_index{0}) == 1);
    tx.rollback();
    CHECK(ctx.state().free_whole_gpus(gs::node_index{0}) == 2);
  }
}

}  // namespace policy_context_test
