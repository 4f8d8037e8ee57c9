// SPDX-License-Identifier: Apache-2.0
// detail/max_tree.hpp: first position at or after `from` with key >= k.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include <gpusched/core/random.hpp>
#include <gpusched/detail/max_tree.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace detail_max_tree_test {

namespace gs = gpusched;

TEST_SUITE("detail/max_tree") {
  TEST_CASE("find_first agrees with a linear scan after random updates") {
    const auto seed = gs::seed_from_env(17005);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    for (std::size_t n : {1u, 2u, 5u, 8u, 13u}) {
      gs::detail::max_tree t(n, 0);
      std::vector<std::int64_t> keys(n, 0);
      CHECK(t.size() == n);
      for (int step = 0; step < 200; ++step) {
        const auto i = gs::uniform_index(g, n);
        const auto v = static_cast<std::int64_t>(gs::uniform_index(g, 10));
        t.set(i, v);
        keys[i] = v;
        const auto from = gs::uniform_index(g, n + 1);
        const auto k = static_cast<std::int64_t>(gs::uniform_index(g, 11));
        std::size_t expect = gs::detail::max_tree::npos;
        for (std::size_t p = from; p < n; ++p) {
          if (keys[p] >= k) {
            expect = p;
            break;
          }
        }
        CHECK(t.find_first(from, k) == expect);
        CHECK(t.get(i) == v);
      }
      std::int64_t m = keys[0];
      for (auto x : keys) m = std::max(m, x);
      CHECK(t.max() == m);
    }
  }

  TEST_CASE("an empty tree has no maximum position and finds nothing") {
    const gs::detail::max_tree t;
    CHECK(t.size() == 0);
    CHECK(t.find_first(0, 0) == gs::detail::max_tree::npos);
  }
}

}  // namespace detail_max_tree_test
