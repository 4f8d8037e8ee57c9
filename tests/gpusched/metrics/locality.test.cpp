// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <vector>

#include <gpusched/metrics/locality.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace metrics_locality_test {

namespace gs = gpusched;

namespace {
gs::task_allocation task(std::uint32_t node, int gpus) {
  gs::task_allocation t;
  t.node = gs::node_index{node};
  for (int g = 0; g < gpus; ++g) {
    t.gpus.push_back(
        gs::gpu_grant{gs::gpu_index{static_cast<std::uint32_t>(g)}, gs::milli_gpu{1000}, 0, false});
  }
  return t;
}
}  // namespace

TEST_SUITE("metrics/locality") {
  TEST_CASE("a placement's locality counts distinct nodes and distinct leaves") {
    const auto f = gs::fabric::fat_tree(8, 4);  // leaves {0..3}, {4..7}
    const std::vector<gs::task_allocation> same_node{task(2, 4), task(2, 2)};
    const std::vector<gs::task_allocation> same_leaf{task(0, 8), task(3, 8)};
    const std::vector<gs::task_allocation> two_leaves{task(3, 8), task(4, 8), task(3, 1)};
    auto p = gs::locality_of(same_node, &f);
    CHECK(p.milli_gpus == 6000);
    CHECK(p.nodes == 1);
    CHECK(p.domains == 1);
    p = gs::locality_of(same_leaf, &f);
    CHECK(p.nodes == 2);
    CHECK(p.domains == 1);
    p = gs::locality_of(two_leaves, &f);
    CHECK(p.milli_gpus == 17000);
    CHECK(p.nodes == 2);
    CHECK(p.domains == 2);
    CHECK(gs::locality_of(two_leaves).domains == 0);         // no fabric
    CHECK(gs::locality_of(two_leaves, &f, 2).domains == 0);  // no such level
  }

  TEST_CASE("a tally counts only multi-GPU placements and reports fractions") {
    const auto f = gs::fabric::fat_tree(8, 4);
    gs::locality_tally t;
    CHECK(t.one_node_fraction() == 1.0);                            // nothing seen
    t.record(std::vector<gs::task_allocation>{task(0, 1)}, 8, &f);  // one GPU: not counted
    CHECK(t.gangs == 0);
    t.record(std::vector<gs::task_allocation>{task(1, 4)}, 8, &f);              // one node
    t.record(std::vector<gs::task_allocation>{task(1, 2), task(2, 2)}, 8, &f);  // split, one leaf
    t.record(std::vector<gs::task_allocation>{task(0, 8), task(5, 8)}, 8, &f);  // two leaves
    CHECK(t.gangs == 3);
    CHECK(t.one_node == 1);
    CHECK(t.one_domain == 2);
    CHECK(t.node_sized == 2);
    CHECK(t.node_sized_one == 1);
    CHECK(t.one_node_fraction() == doctest::Approx(1.0 / 3));
    CHECK(t.one_domain_fraction() == doctest::Approx(2.0 / 3));
    CHECK(t.node_sized_one_node_fraction() == doctest::Approx(0.5));
  }
}

}  // namespace metrics_locality_test
