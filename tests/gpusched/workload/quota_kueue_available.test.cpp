// SPDX-License-Identifier: Apache-2.0
// Kueue's quota arithmetic, case by case: ports of kubernetes-sigs/kueue
// pkg/cache/scheduler/resource_test.go, TestAvailable. Each case builds the same ClusterQueues
// and Cohorts (flavor "red" of resource cpu is our cpu dimension, in millicores; flavor "blue"
// is our memory dimension, same numbers), checks Available and PotentialAvailable before usage,
// with Kueue's usage added, and after it is removed again. Kueue clamps Available at 0
// (`ClusterQueueSnapshot.Available`); `quota_tree::available` may go negative when a queue is
// over-admitted, so the clamp is applied here.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gpusched/workload/quota.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace workload_quota_kueue_available_test {

namespace gs = gpusched;
using qr = gs::quota_resource;

namespace {
constexpr std::size_t red = 0;   // cpu
constexpr std::size_t blue = 1;  // memory

struct want {
  std::string queue;
  std::size_t dim;
  std::int64_t available, potential;
};
struct usage {
  std::string queue;
  std::size_t dim;
  std::int64_t amount;
};

/// Builds the tree, then checks `wants` (available with usage, potential) as Kueue's test does.
void check_case(const std::function<void(gs::quota_tree::builder&)>& configure,
                const std::vector<usage>& use, const std::vector<want>& wants) {
  gs::quota_tree::builder b(gs::basic_catalog());
  configure(b);
  auto q = b.build();
  auto tenant_of = [&](const std::string& name) {
    const auto n = q.find(name);
    REQUIRE(n >= 0);
    REQUIRE(q.at(n).queue);
    return q.at(n).tenant;
  };
  auto clamped = [&](const want& w) {
    return std::max<std::int64_t>(0, q.available(q.find(w.queue), w.dim));
  };
  // before usage: available == potentially available
  for (const auto& w : wants) {
    CAPTURE(w.queue);
    CHECK(clamped(w) == w.potential);
    CHECK(q.potential_available(q.find(w.queue), w.dim) == w.potential);
  }
  auto charge = [&](std::int64_t sign) {
    for (const auto& u : use) {
      gs::quota_vector v(q.dims(), 0);
      v[u.dim] = u.amount;
      q.charge(tenant_of(u.queue), v, sign);
    }
  };
  charge(+1);
  for (const auto& w : wants) {
    CAPTURE(w.queue);
    CHECK(clamped(w) == w.available);
    CHECK(q.potential_available(q.find(w.queue), w.dim) == w.potential);
  }
  charge(-1);
  for (const auto& w : wants) {
    CAPTURE(w.queue);
    CHECK(clamped(w) == w.potential);
  }
}

gs::tenant_id t(unsigned v) { return gs::tenant_id{v}; }
}  // namespace

TEST_SUITE("workload/quota_kueue_available") {
  // resource_test.go TestAvailable "base cqs"
  TEST_CASE("Kueue TestAvailable: base cqs") {
    check_case(
        [](auto& b) {
          b.queue("cq1", t(1)).nominal(qr::cpu(), 0);
          b.queue("cq2", t(2)).nominal(qr::cpu(), 5'000).nominal(qr::memory(), 10'000);
        },
        {{"cq1", red, 1'000}, {"cq2", red, 2'500}, {"cq2", blue, 1'000}},
        {{"cq1", red, 0, 0}, {"cq2", red, 2'500, 5'000}, {"cq2", blue, 9'000, 10'000}});
  }

  // resource_test.go TestAvailable "cqs with cohort"
  TEST_CASE("Kueue TestAvailable: cqs with cohort") {
    check_case(
        [](auto& b) {
          b.cohort("cohort").nominal(qr::cpu(), 10'000);
          b.queue("cq1", t(1), "cohort").nominal(qr::cpu(), 10'000);
          b.queue("cq2", t(2), "cohort").nominal(qr::cpu(), 10'000).lending_limit(qr::cpu(), 9'000);
        },
        {{"cq1", red, 1'000}, {"cq2", red, 500}},
        {{"cq1", red, 28'000, 29'000}, {"cq2", red, 28'500, 30'000}});
  }

  // resource_test.go TestAvailable "cq borrows from cohort"
  TEST_CASE("Kueue TestAvailable: cq borrows from cohort") {
    check_case(
        [](auto& b) {
          b.cohort("cohort").nominal(qr::cpu(), 10'000);
          b.queue("cq1", t(1), "cohort").nominal(qr::cpu(), 10'000);
        },
        {{"cq1", red, 11'000}}, {{"cq1", red, 9'000, 20'000}});
  }

  // resource_test.go TestAvailable "cq oversubscription spills into cohort"
  TEST_CASE("Kueue TestAvailable: cq oversubscription spills into cohort") {
    check_case(
        [](auto& b) {
          b.cohort("cohort").nominal(qr::cpu(), 10'000);
          b.queue("cq1", t(1), "cohort").nominal(qr::cpu(), 10'000);
          b.queue("cq2", t(2), "cohort")
              .nominal(qr::cpu(), 10'000)
              .borrowing_limit(qr::cpu(), 0)
              .lending_limit(qr::cpu(), 0);
        },
        {{"cq1", red, 31'000}}, {{"cq1", red, 0, 20'000}, {"cq2", red, 0, 10'000}});
  }

  // resource_test.go TestAvailable "lending and borrowing limits respected"
  TEST_CASE("Kueue TestAvailable: lending and borrowing limits respected") {
    check_case(
        [](auto& b) {
          b.cohort("cohort").nominal(qr::cpu(), 10'000);
          b.queue("cq1", t(1), "cohort").nominal(qr::cpu(), 10'000);
          b.queue("cq2", t(2), "cohort")
              .nominal(qr::cpu(), 10'000)
              .borrowing_limit(qr::cpu(), 2'000);
          b.queue("cq3", t(3), "cohort").nominal(qr::cpu(), 10'000).lending_limit(qr::cpu(), 5'000);
        },
        {{"cq1", red, 20'000}, {"cq2", red, 10'000}, {"cq3", red, 6'000}},
        {{"cq1", red, 4'000, 35'000}, {"cq2", red, 2'000, 12'000}, {"cq3", red, 4'000, 40'000}});
  }

  // resource_test.go TestAvailable "hierarchical cohort"
  TEST_CASE("Kueue TestAvailable: hierarchical cohort") {
    check_case(
        [](auto& b) {
          b.cohort("root");
          b.cohort("left", "root").nominal(qr::cpu(), 10'000);
          b.cohort("right", "root").nominal(qr::cpu(), 10'000);
          b.queue("cq1", t(1), "left").nominal(qr::cpu(), 10'000);
          b.queue("cq2", t(2), "right").nominal(qr::cpu(), 10'000).lending_limit(qr::cpu(), 0);
        },
        {{"cq1", red, 10'000}, {"cq2", red, 5'000}},
        {{"cq1", red, 20'000, 30'000}, {"cq2", red, 25'000, 40'000}});
  }

  // resource_test.go TestAvailable "hierarchical cohort respects borrowing limit"
  TEST_CASE("Kueue TestAvailable: hierarchical cohort respects borrowing limit") {
    check_case(
        [](auto& b) {
          b.cohort("root");
          b.cohort("left", "root").nominal(qr::cpu(), 10'000).borrowing_limit(qr::cpu(), 5'000);
          b.cohort("right", "root").nominal(qr::cpu(), 10'000);
          b.queue("left-cq1", t(1), "left").nominal(qr::cpu(), 10'000);
          b.queue("left-cq2", t(2), "left")
              .nominal(qr::cpu(), 10'000)
              .borrowing_limit(qr::cpu(), 5'000);
          b.queue("right-cq", t(3), "right").nominal(qr::cpu(), 10'000);
        },
        {}, {{"left-cq1", red, 35'000, 35'000}, {"left-cq2", red, 15'000, 15'000},
             {"right-cq", red, 50'000, 50'000}});
  }

  // resource_test.go TestAvailable "hierarchical cohort respects lending limit": cohort "left"
  // has nominal 0 and lending limit 5 (above its own nominal quota), which Kueue accepts for a
  // Cohort; gpusched refused it before issue #35.
  TEST_CASE("Kueue TestAvailable: hierarchical cohort respects lending limit") {
    check_case(
        [](auto& b) {
          b.cohort("root");
          b.cohort("left", "root").nominal(qr::cpu(), 0).lending_limit(qr::cpu(), 5'000);
          b.cohort("right", "root").nominal(qr::cpu(), 0);
          b.queue("left-cq1", t(1), "left")
              .nominal(qr::cpu(), 10'000)
              .lending_limit(qr::cpu(), 5'000);
          b.queue("left-cq2", t(2), "left").nominal(qr::cpu(), 10'000);
          b.queue("right-cq", t(3), "right").nominal(qr::cpu(), 0);
          b.queue("root-cq", t(4), "root").nominal(qr::cpu(), 0);
        },
        {}, {{"left-cq1", red, 20'000, 20'000}, {"left-cq2", red, 15'000, 15'000},
             {"right-cq", red, 5'000, 5'000}, {"root-cq", red, 5'000, 5'000}});
  }

  TEST_CASE("a queue's lending limit above its nominal quota is still refused") {
    gs::quota_tree::builder b(gs::basic_catalog());
    b.cohort("c").lending_limit(qr::cpu(), 7);  // a cohort: accepted
    b.queue("q", t(1), "c").nominal(qr::cpu(), 4).lending_limit(qr::cpu(), 5);
    CHECK_THROWS_AS((void)b.build(), gs::invalid_value_error);
    b.select("q").lending_limit(qr::cpu(), 4);
    const auto q = b.build();
    // the cohort lends at most 7 of its subtree's 4 (nothing more to lend): keeps nothing
    CHECK(q.guaranteed_quota(q.find("c"), 0) == 0);
    CHECK(q.available(q.queue_of(t(1)), 0) == 4);
  }
}

}  // namespace workload_quota_kueue_available_test
