// SPDX-License-Identifier: Apache-2.0
// cluster/allocation.hpp: GPU grants and task allocations as plain values.
#include <doctest/doctest.h>

#include <type_traits>

#include <gpusched/cluster/allocation.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace cluster_allocation_test {

namespace gs = gpusched;
using namespace gpusched::literals;

TEST_SUITE("cluster/allocation") {
  TEST_CASE("allocations are equal when node, group, CPU, memory and every grant are equal") {
    gs::task_allocation a;
    a.node = gs::node_index{2};
    a.cpu = 1_cores;
    a.memory = 2_gib;
    a.gpus.push_back({gs::gpu_index{16}, gs::whole_gpu_milli, 0, false, false});
    gs::task_allocation b = a;
    CHECK(a == b);
    b.group = 1;
    CHECK_FALSE(a == b);
    b = a;
    b.gpus[0].milli = 500_mgpu;
    CHECK_FALSE(a == b);
    b = a;
    b.gpus.push_back({gs::gpu_index{17}, gs::whole_gpu_milli, 0, false, false});
    CHECK_FALSE(a == b);
  }

  TEST_CASE("a grant defaults to nothing on no GPU, and a replica grant is flagged") {
    const gs::gpu_grant g{};
    CHECK_FALSE(g.gpu.valid());
    CHECK(g.milli == 0_mgpu);
    CHECK(g.mig_slots == 0);
    CHECK_FALSE(g.replica);
    const gs::gpu_grant r{gs::gpu_index{1}, {}, 0, false, true};
    CHECK(r.replica);
    CHECK_FALSE(r == g);
  }

  TEST_CASE("an allocation is a heap-free value that holds up to max_gpus_per_node grants") {
    static_assert(std::is_trivially_copyable_v<gs::task_allocation>);
    static_assert(decltype(gs::task_allocation{}.gpus)::capacity() ==
                  static_cast<std::size_t>(gs::max_gpus_per_node));
    static_assert(!std::is_convertible_v<gs::node_index, gs::gpu_index>);
    gs::task_allocation a;
    for (int i = 0; i < gs::max_gpus_per_node; ++i)
      a.gpus.push_back({gs::gpu_index{static_cast<unsigned>(i)}, gs::whole_gpu_milli, 0, false,
                        false});
    CHECK(a.gpus.size() == 16);
  }
}

}  // namespace cluster_allocation_test
