// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gpusched/cluster/cluster.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace cluster_totals_test {

namespace gs = gpusched;

TEST_SUITE("cluster/totals") {
  TEST_CASE("node CPU or memory whose cluster total overflows 64 bits is refused naming the node") {
    constexpr auto big = std::numeric_limits<std::int64_t>::max() - 10;
    const std::vector<gs::node_spec> cpu{
        {.id = gs::node_id{1}, .name = "a", .cpu = gs::cpu_millis{big}},
        {.id = gs::node_id{2}, .name = "b", .cpu = gs::cpu_millis{big}}};
    try {
      const gs::cluster c(gs::basic_catalog(), cpu);
      FAIL("no error");
    } catch (const gs::invalid_value_error& e) {
      CHECK(e.field() == "cpu");
      CHECK(e.where() == "node 2 'b'");
      CHECK(std::string(e.what()).find("total CPU overflows 64 bits") != std::string::npos);
    }
    const std::vector<gs::node_spec> memory{
        {.id = gs::node_id{1}, .name = "a", .memory = gs::memory_mib{big}},
        {.id = gs::node_id{2}, .name = "b", .memory = gs::memory_mib{big}}};
    CHECK_THROWS_AS(gs::cluster(gs::basic_catalog(), memory), gs::invalid_value_error);
    // One such node alone is fine.
    const gs::cluster one(gs::basic_catalog(), std::span(cpu).first(1));
    CHECK(one.total_free_cpu() == gs::cpu_millis{big});
  }
}

}  // namespace cluster_totals_test
