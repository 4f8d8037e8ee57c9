// SPDX-License-Identifier: Apache-2.0
// workload/queue.hpp: pending jobs in arrival order.
#include <doctest/doctest.h>

#include <gpusched/workload/queue.hpp>

#include "law_fixtures.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace workload_queue_test {

namespace gs = gpusched;
namespace gt = gpusched::testing;

namespace {
gs::job_spec one_gpu(unsigned id) {
  return gt::job_of(id, {gt::group_of("w", gt::request_of(gs::gpu_demand::whole(gs::gpu_count{1})), 1)});
}
}  // namespace

TEST_SUITE("workload/queue") {
  TEST_CASE("jobs stay in arrival order and erase_if keeps the others' order") {
    const auto cat = gs::basic_catalog();
    gs::job_queue q;
    CHECK(q.empty());
    for (unsigned id : {5u, 1u, 3u, 2u}) q.push(one_gpu(id), cat);
    CHECK(q.size() == 4);
    CHECK(q.erase_if([](const gs::job_spec& j) { return j.id.value() % 2 == 1 && j.id.value() != 5; }) == 2);
    REQUIRE(q.size() == 2);
    CHECK(q.jobs()[0].id == gs::job_id{5});
    CHECK(q.jobs()[1].id == gs::job_id{2});
    CHECK_FALSE(q.contains(gs::job_id{1}));
    CHECK(q.contains(gs::job_id{2}));
  }

  TEST_CASE("push refuses a duplicate id or an invalid job and leaves the queue unchanged") {
    const auto cat = gs::basic_catalog();
    gs::job_queue q;
    q.push(one_gpu(1), cat);
    CHECK_THROWS_WITH_AS(q.push(one_gpu(1), cat), doctest::Contains("already queued"),
                         gs::invalid_value_error);
    auto bad = one_gpu(2);
    bad.groups[0].count = 0;
    CHECK_THROWS_AS(q.push(bad, cat), gs::invalid_value_error);
    CHECK(q.size() == 1);
    CHECK_FALSE(q.contains(gs::job_id{2}));
  }

  TEST_CASE("an erased id may be queued again") {
    const auto cat = gs::basic_catalog();
    gs::job_queue q;
    q.push(one_gpu(1), cat);
    (void)q.erase_if([](const gs::job_spec&) { return true; });
    CHECK(q.empty());
    CHECK_NOTHROW(q.push(one_gpu(1), cat));
  }
}

}  // namespace workload_queue_test
