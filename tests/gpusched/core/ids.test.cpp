// SPDX-License-Identifier: Apache-2.0
// core/ids.hpp: strong identifiers.
#include <doctest/doctest.h>

#include <type_traits>
#include <unordered_set>

#include <gpusched/core/ids.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace core_ids_test {

namespace gs = gpusched;

TEST_SUITE("core/ids") {
  TEST_CASE("a default-constructed id is invalid and every explicit value below the maximum is valid") {
    CHECK_FALSE(gs::job_id{}.valid());
    CHECK(gs::job_id{} == gs::job_id::invalid());
    CHECK(gs::job_id{0}.valid());
    CHECK(gs::job_id{7}.value() == 7u);
    CHECK_FALSE(gs::gpu_model_id{0xFFFF}.valid());  // the 16-bit maximum is the sentinel
  }

  TEST_CASE("ids are totally ordered by value and hash by value") {
    CHECK(gs::node_id{1} < gs::node_id{2});
    CHECK(gs::node_id{3} >= gs::node_id{3});
    std::unordered_set<gs::tenant_id> s{gs::tenant_id{1}, gs::tenant_id{1}, gs::tenant_id{2}};
    CHECK(s.size() == 2);
    CHECK(std::hash<gs::tenant_id>{}(gs::tenant_id{5}) == std::hash<std::uint32_t>{}(5u));
  }

  TEST_CASE("ids of different kinds do not convert into each other or from integers") {
    static_assert(!std::is_convertible_v<gs::job_id, gs::node_id>);
    static_assert(!std::is_convertible_v<unsigned, gs::job_id>);
    static_assert(!std::is_convertible_v<gs::job_id, unsigned>);
    static_assert(std::is_same_v<gs::gpu_model_id::rep, std::uint16_t>);
    CHECK(gs::job_id{1}.value() == gs::node_id{1}.value());
  }
}

}  // namespace core_ids_test
