// SPDX-License-Identifier: Apache-2.0
// workload/tenant.hpp: the validated tenant forest.
#include <doctest/doctest.h>

#include <vector>

#include <gpusched/workload/tenant.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace workload_tenant_test {

namespace gs = gpusched;

namespace {
// a (w 1), b (w 3) at the top; c (w 1) and d (w 1) under b
std::vector<gs::tenant_spec> forest() {
  std::vector<gs::tenant_spec> t(4);
  t[0].id = gs::tenant_id{10};
  t[0].name = "a";
  t[1].id = gs::tenant_id{20};
  t[1].name = "b";
  t[1].weight = 3;
  t[2].id = gs::tenant_id{30};
  t[2].name = "c";
  t[2].parent = gs::tenant_id{20};
  t[3].id = gs::tenant_id{40};
  t[3].name = "d";
  t[3].parent = gs::tenant_id{20};
  return t;
}
}  // namespace

TEST_SUITE("workload/tenant") {
  TEST_CASE("positions follow the order given and the forest knows parents, depths and children") {
    const gs::tenant_tree t(forest());
    CHECK(t.size() == 4);
    CHECK(t.find(gs::tenant_id{30}) == 2u);
    CHECK_FALSE(t.find(gs::tenant_id{99}).has_value());
    CHECK(t.parent(2) == 1u);
    CHECK(t.parent(0) == gs::tenant_tree::npos);
    CHECK(t.depth(3) == 1u);
    CHECK(t.height() == 2u);
    CHECK(t.children(gs::tenant_tree::npos).size() == 2);
    CHECK(t.children(1).size() == 2);
    CHECK(t.is_leaf(0));
    CHECK_FALSE(t.is_leaf(1));
  }

  TEST_CASE("normalised weights split siblings and global shares multiply down the tree") {
    const gs::tenant_tree t(forest());
    CHECK(t.normalized_weight(0) == doctest::Approx(0.25));
    CHECK(t.normalized_weight(1) == doctest::Approx(0.75));
    CHECK(t.global_share(2) == doctest::Approx(0.375));
    CHECK(t.global_share(0) + t.global_share(2) + t.global_share(3) == doctest::Approx(1.0));
  }

  TEST_CASE("construction names the tenant and field of a duplicate, an orphan, a bad weight or a cycle") {
    auto dup = forest();
    dup[3].id = gs::tenant_id{30};
    CHECK_THROWS_WITH_AS(gs::tenant_tree{dup}, doctest::Contains("field 'id'"),
                         gs::invalid_value_error);
    auto orphan = forest();
    orphan[2].parent = gs::tenant_id{77};
    CHECK_THROWS_WITH_AS(gs::tenant_tree{orphan}, doctest::Contains("field 'parent'"),
                         gs::invalid_value_error);
    auto weight = forest();
    weight[0].weight = 0;
    CHECK_THROWS_WITH_AS(gs::tenant_tree{weight}, doctest::Contains("tenant 10 'a': field 'weight'"),
                         gs::invalid_value_error);
    auto cycle = forest();
    cycle[1].parent = gs::tenant_id{30};
    CHECK_THROWS_WITH_AS(gs::tenant_tree{cycle}, doctest::Contains("field 'parent'"),
                         gs::invalid_value_error);
  }
}

}  // namespace workload_tenant_test
