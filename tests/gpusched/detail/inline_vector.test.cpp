// SPDX-License-Identifier: Apache-2.0
// detail/inline_vector.hpp: the fixed-capacity vector of task grants.
#include <doctest/doctest.h>

#include <numeric>

#include <gpusched/detail/inline_vector.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace detail_inline_vector_test {

namespace gs = gpusched;

TEST_SUITE("detail/inline_vector") {
  TEST_CASE("push_back and pop_back change the size up to the fixed capacity") {
    gs::detail::inline_vector<int, 4> v;
    CHECK(v.empty());
    static_assert(gs::detail::inline_vector<int, 4>::capacity() == 4);
    for (int i = 1; i <= 4; ++i) v.push_back(i);
    CHECK(v.size() == 4);
    CHECK(v[3] == 4);
    v.pop_back();
    CHECK(v.size() == 3);
    CHECK(std::accumulate(v.begin(), v.end(), 0) == 6);
    v.clear();
    CHECK(v.empty());
  }

  TEST_CASE("equality compares the elements in use only") {
    gs::detail::inline_vector<int, 4> a, b;
    a.push_back(1);
    a.push_back(9);
    a.pop_back();  // the stale 9 is not compared
    b.push_back(1);
    CHECK(a == b);
    b[0] = 2;
    CHECK_FALSE(a == b);
    b.push_back(3);
    CHECK_FALSE(a == b);
  }
}

}  // namespace detail_inline_vector_test
