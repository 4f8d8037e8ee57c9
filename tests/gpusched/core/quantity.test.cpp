// SPDX-License-Identifier: Apache-2.0
// core/quantity.hpp: strong resource quantities and their literals.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <type_traits>

#include <gpusched/core/quantity.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace core_quantity_test {

namespace gs = gpusched;
using namespace gpusched::literals;

TEST_SUITE("core/quantity") {
  TEST_CASE("sums, differences and integer scaling obey the documented laws") {
    const gs::cpu_millis a{1500}, b{250};
    CHECK((a + b) - b == a);
    CHECK(a * 3 == a + a + a);
    CHECK(3 * a == a * 3);
    CHECK(-b == gs::cpu_millis{-250});
    gs::cpu_millis c = a;
    c += b;
    c -= a;
    CHECK(c == b);
    CHECK(gs::memory_mib::zero() == gs::memory_mib{0});
  }

  TEST_CASE("a shortfall is representable as a negative amount and orders below zero") {
    const auto need = gs::milli_gpu{300}, have = gs::milli_gpu{200};
    CHECK(have - need == gs::milli_gpu{-100});
    CHECK(have - need < gs::milli_gpu::zero());
  }

  TEST_CASE("literals build each kind in its unit") {
    CHECK(4_gpus == gs::gpu_count{4});
    CHECK(250_mgpu == gs::milli_gpu{250});
    CHECK(2_gib == 2048_mib);
    CHECK(3_cores == 3000_mcpu);
    CHECK(gs::whole_gpu_milli == 1000_mgpu);
  }

  TEST_CASE("quantities of different kinds do not mix or convert") {
    static_assert(!std::is_convertible_v<gs::cpu_millis, gs::memory_mib>);
    static_assert(!std::is_convertible_v<std::int64_t, gs::cpu_millis>);
    static_assert(!std::is_invocable_v<std::plus<>, gs::cpu_millis, gs::memory_mib>);
    CHECK(gs::cpu_millis{5}.value() == 5);
  }
}

}  // namespace core_quantity_test
