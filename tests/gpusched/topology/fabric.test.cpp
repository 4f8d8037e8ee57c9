// SPDX-License-Identifier: Apache-2.0
// topology/fabric.hpp: the network as a tree of domains, and the topology model binding.
#include <doctest/doctest.h>

#include <vector>

#include <gpusched/topology/fabric.hpp>

#include "law_fixtures.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace topology_fabric_test {

namespace gs = gpusched;
namespace gt = gpusched::testing;

TEST_SUITE("topology/fabric") {
  TEST_CASE("a three-tier fat tree groups nodes into leaves and leaves into pods") {
    // 16 nodes, 4 per leaf, 2 leaves per pod
    const auto f = gs::fabric::fat_tree(16, 4, 2);
    CHECK(f.node_count() == 16);
    CHECK(f.level_count() == 2);
    CHECK(f.domain_count(1) == 4);
    CHECK(f.domain_count(2) == 2);
    CHECK(f.domain(gs::node_index{5}, 1) == 1u);
    CHECK(f.domain(gs::node_index{5}, 2) == 0u);
    CHECK(f.children(1, 1).size() == 4);
    CHECK(f.parent(1, 3) == 1u);
    CHECK(f.parent(0, 9) == 2u);
    CHECK(f.level_name(0) == "node");
    CHECK(f.level_name(1) == "leaf");
    CHECK(f.level_name(3) == "fabric");
  }

  TEST_CASE("common_level is 0 for one node, the lowest shared level, or L+1 through the root") {
    const auto f = gs::fabric::fat_tree(16, 4, 2);
    CHECK(f.common_level(gs::node_index{3}, gs::node_index{3}) == 0);
    CHECK(f.common_level(gs::node_index{0}, gs::node_index{3}) == 1);
    CHECK(f.common_level(gs::node_index{0}, gs::node_index{7}) == 2);
    CHECK(f.common_level(gs::node_index{0}, gs::node_index{15}) == 3);
  }

  TEST_CASE("a topology model hands out node-type handles from 1 and checks the cluster size") {
    gs::topology_model m(gs::fabric::fat_tree(4, 2));
    const auto h = m.add_node_type(gs::dgx_h100());
    CHECK(h == 1u);
    CHECK(m.node_type(0) == nullptr);
    CHECK(m.node_type(h) != nullptr);
    CHECK(m.node_type(h + 1) == nullptr);
    std::vector<gs::node_spec> nodes;
    for (unsigned i = 1; i <= 3; ++i) nodes.push_back(gt::node_of(i, "H100-SXM5-80GB", 8));
    const gs::cluster three(gs::basic_catalog(), nodes);
    CHECK_THROWS_WITH_AS(m.check(three), doctest::Contains("fabric nodes"), gs::invalid_value_error);
    nodes.push_back(gt::node_of(4, "H100-SXM5-80GB", 8));
    CHECK_NOTHROW(m.check(gs::cluster(gs::basic_catalog(), nodes)));
  }
}

}  // namespace topology_fabric_test
