// SPDX-License-Identifier: Apache-2.0
// core/time.hpp: simulated time points and durations.
#include <doctest/doctest.h>

#include <chrono>
#include <type_traits>

#include <gpusched/core/time.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace core_time_test {

namespace gs = gpusched;

TEST_SUITE("core/time") {
  TEST_CASE("durations tick in milliseconds and seconds() converts whole seconds") {
    CHECK(gs::seconds(2).count() == 2000);
    CHECK(gs::to_seconds(gs::sim_duration{1500}) == doctest::Approx(1.5));
    static_assert(std::is_same_v<gs::sim_clock::period, std::milli>);
  }

  TEST_CASE("at() is a point that far after the epoch, and points subtract to durations") {
    const auto t = gs::at(gs::seconds(90));
    CHECK(gs::to_seconds(t) == doctest::Approx(90.0));
    CHECK(t - gs::at(gs::seconds(30)) == gs::seconds(60));
    CHECK(gs::sim_time{} + gs::seconds(90) == t);
    CHECK(gs::at(gs::seconds(1)) < t);
  }

  TEST_CASE("scheduler time does not mix with the system clock") {
    static_assert(!std::is_convertible_v<std::chrono::system_clock::time_point, gs::sim_time>);
    static_assert(gs::sim_clock::is_steady);
    CHECK(gs::sim_time{}.time_since_epoch().count() == 0);
  }
}

}  // namespace core_time_test
