// SPDX-License-Identifier: Apache-2.0
// core/random.hpp: the seeded engine, uniform_index and seed_from_env.
#include <doctest/doctest.h>

#include <cstdlib>
#include <vector>

#include <gpusched/core/random.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace core_random_test {

namespace gs = gpusched;

TEST_SUITE("core/random") {
  TEST_CASE("the same seed draws the same indices") {
    gs::random_engine a(42), b(42);
    for (int i = 0; i < 100; ++i) CHECK(gs::uniform_index(a, 17) == gs::uniform_index(b, 17));
  }

  TEST_CASE("uniform_index stays in range and reaches every value") {
    gs::random_engine g(7);
    std::vector<int> seen(6, 0);
    for (int i = 0; i < 6000; ++i) {
      const auto x = gs::uniform_index(g, 6);
      REQUIRE(x < 6u);
      ++seen[x];
    }
    for (int c : seen) CHECK(c > 800);  // 1000 expected each
    CHECK(gs::uniform_index(g, 1) == 0u);
  }

  TEST_CASE("seed_from_env reads a decimal variable and falls back otherwise") {
    ::setenv("GPUSCHED_TEST_SEED_A", "123", 1);
    CHECK(gs::seed_from_env(9, "GPUSCHED_TEST_SEED_A") == 123u);
    ::setenv("GPUSCHED_TEST_SEED_A", "12x", 1);
    CHECK(gs::seed_from_env(9, "GPUSCHED_TEST_SEED_A") == 9u);
    ::unsetenv("GPUSCHED_TEST_SEED_A");
    CHECK(gs::seed_from_env(9, "GPUSCHED_TEST_SEED_A") == 9u);
  }
}

}  // namespace core_random_test
