// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include <gpusched/pipeline/registry.hpp>
#include <gpusched/policy/ordering/fifo.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_ordering_test {

namespace gs = gpusched;

static_assert(gs::ordering_policy<gs::fifo_ordering>);
static_assert(!gs::packing_policy<gs::fifo_ordering>);  // tags keep families apart
static_assert(!gs::admission_policy<gs::fifo_ordering>);

TEST_SUITE("policy/ordering") {
  TEST_CASE_TEMPLATE("a comparison ordering is a strict weak order and order() sorts by it", P,
                     gs::fifo_ordering, gs::priority_ordering) {
    const auto seed = gs::seed_from_env(11);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(1, 8)));
    const gs::schedule_context ctx(book, {}, g);
    std::vector<gs::job_spec> jobs;
    for (unsigned i = 0; i < 40; ++i) {
      // few distinct submit times and priorities, so ties are common
      jobs.push_back(gs::testing::random_job(
          g, cat, gs::job_id{100 - i},
          gs::at(gs::seconds(static_cast<int>(gs::uniform_index(g, 4)))), 2));
    }
    const P p{};
    for (const auto& a : jobs) {
      CHECK_FALSE(p.before(ctx, a, a));  // irreflexive
      for (const auto& b : jobs) {
        if (p.before(ctx, a, b)) CHECK_FALSE(p.before(ctx, b, a));  // asymmetric
        for (const auto& c : jobs) {
          const bool inc_ab = !p.before(ctx, a, b) && !p.before(ctx, b, a);
          const bool inc_bc = !p.before(ctx, b, c) && !p.before(ctx, c, b);
          const bool inc_ac = !p.before(ctx, a, c) && !p.before(ctx, c, a);
          if (p.before(ctx, a, b) && p.before(ctx, b, c)) CHECK(p.before(ctx, a, c));  // transitive
          if (inc_ab && inc_bc) CHECK(inc_ac);  // incomparability is transitive
        }
      }
    }
    std::vector<const gs::job_spec*> order;
    for (const auto& j : jobs) order.push_back(&j);
    gs::any_ordering_policy erased{p};
    auto copy = order;
    P{}.order(ctx, order);
    erased.order(ctx, copy);
    CHECK(order == copy);
    CHECK(std::is_sorted(order.begin(), order.end(),
                         [&](auto* a, auto* b) { return p.before(ctx, *a, *b); }));
  }

  TEST_CASE("fifo goes by submit time then id, and priority goes by priority first") {
    gs::random_engine g(1);
    gs::ledger book;
    const gs::schedule_context ctx(book, {}, g);
    gs::job_spec a, b;
    a.id = gs::job_id{2};
    a.submit = gs::at(gs::seconds(1));
    b.id = gs::job_id{1};
    b.submit = gs::at(gs::seconds(1));
    CHECK(gs::fifo_ordering{}.before(ctx, b, a));  // same time: smaller id first
    a.submit = gs::at(gs::seconds(0));
    CHECK(gs::fifo_ordering{}.before(ctx, a, b));  // earlier first
    b.priority = 5;
    CHECK(gs::priority_ordering{}.before(ctx, b, a));
  }
}

}  // namespace policy_ordering_test
