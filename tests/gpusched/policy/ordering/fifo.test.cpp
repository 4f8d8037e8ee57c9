// SPDX-License-Identifier: Apache-2.0
// policy/ordering/fifo.hpp: FIFO, priority, and the shared score-ordering helper.
#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include <gpusched/policy/ordering/fifo.hpp>

#include "law_fixtures.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_ordering_fifo_test {

namespace gs = gpusched;
namespace gt = gpusched::testing;

namespace {
gs::job_spec at_time(unsigned id, int submit_s, int priority = 0) {
  auto j = gt::job_of(id, {gt::group_of("w", gt::request_of(gs::gpu_demand::none()), 1)}, priority);
  j.submit = gs::at(gs::seconds(submit_s));
  return j;
}
std::vector<unsigned> ids(std::span<const gs::job_spec*> jobs) {
  std::vector<unsigned> out;
  for (const auto* j : jobs) out.push_back(j->id.value());
  return out;
}
}  // namespace

TEST_SUITE("policy/ordering/fifo") {
  TEST_CASE("fifo orders by submit time, then by job id") {
    gs::ledger book;
    gs::random_engine g(1);
    const gs::schedule_context ctx(book, {}, g);
    const std::vector<gs::job_spec> jobs = {at_time(4, 10), at_time(2, 10), at_time(9, 5)};
    std::vector<const gs::job_spec*> q = {&jobs[0], &jobs[1], &jobs[2]};
    gs::fifo_ordering{}.order(ctx, q);
    CHECK(ids(q) == std::vector<unsigned>{9, 2, 4});
    CHECK(gs::fifo_ordering{}.before(ctx, jobs[1], jobs[0]));
    CHECK_FALSE(gs::fifo_ordering{}.before(ctx, jobs[0], jobs[0]));
  }

  TEST_CASE("priority ordering puts higher priority first and falls back to fifo") {
    gs::ledger book;
    gs::random_engine g(1);
    const gs::schedule_context ctx(book, {}, g);
    const std::vector<gs::job_spec> jobs = {at_time(1, 0, 0), at_time(2, 50, 3), at_time(3, 20, 3)};
    std::vector<const gs::job_spec*> q = {&jobs[0], &jobs[1], &jobs[2]};
    gs::priority_ordering{}.order(ctx, q);
    CHECK(ids(q) == std::vector<unsigned>{3, 2, 1});
    CHECK(gs::priority_ordering{}.name() == "priority");
  }

  TEST_CASE("order_by_score puts higher scores first and breaks ties by fifo") {
    const std::vector<gs::job_spec> jobs = {at_time(1, 5), at_time(2, 1), at_time(3, 1)};
    std::vector<std::pair<double, const gs::job_spec*>> keyed = {
        {1.0, &jobs[0]}, {0.5, &jobs[1]}, {1.0, &jobs[2]}};
    std::vector<const gs::job_spec*> out(3, nullptr);
    gs::detail::order_by_score(keyed, out);
    CHECK(ids(out) == std::vector<unsigned>{3, 1, 2});
  }
}

}  // namespace policy_ordering_fifo_test
