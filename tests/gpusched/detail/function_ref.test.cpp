// SPDX-License-Identifier: Apache-2.0
// detail/function_ref.hpp: the non-owning callable reference.
#include <doctest/doctest.h>

#include <gpusched/detail/function_ref.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace detail_function_ref_test {

namespace gs = gpusched;

namespace {
int twice(gs::detail::function_ref<int(int)> f, int x) { return f(f(x)); }
}  // namespace

TEST_SUITE("detail/function_ref") {
  TEST_CASE("a function_ref calls the referenced callable with its state, without copying it") {
    int calls = 0;
    auto add = [&calls](int x) {
      ++calls;
      return x + 3;
    };
    CHECK(twice(add, 1) == 7);
    CHECK(calls == 2);
  }

  TEST_CASE("a function_ref converts the result to its declared return type") {
    auto small = [](int x) -> short { return static_cast<short>(x * 2); };
    const gs::detail::function_ref<long(int)> f(small);
    CHECK(f(21) == 42L);
  }
}

}  // namespace detail_function_ref_test
