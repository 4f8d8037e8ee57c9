// SPDX-License-Identifier: Apache-2.0
// resource/request.hpp: GPU demands, task requests and their validation.
#include <doctest/doctest.h>

#include <gpusched/resource/request.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace resource_request_test {

namespace gs = gpusched;
using namespace gpusched::literals;

TEST_SUITE("resource/request") {
  TEST_CASE("the named constructors set the kind and only their own fields") {
    CHECK(gs::gpu_demand::none().kind == gs::gpu_demand_kind::none);
    const auto w = gs::gpu_demand::whole(4_gpus);
    CHECK(w.kind == gs::gpu_demand_kind::whole);
    CHECK(w.whole_gpus() == 4_gpus);
    const auto s = gs::gpu_demand::fraction(250_mgpu);
    CHECK(s.share == 250_mgpu);
    CHECK(s.whole_gpus() == 0_gpus);
    const auto m = gs::gpu_demand::mig(3, 4);
    CHECK(m.mig_compute == 3);
    CHECK(m.mig_memory == 4);
    CHECK(gs::gpu_demand::replica(2_gib).gpu_memory == 2_gib);
  }

  TEST_CASE("milli() is count x 1000 for whole GPUs, the share for a share, 0 otherwise") {
    CHECK(gs::gpu_demand::whole(3_gpus).milli() == 3000_mgpu);
    CHECK(gs::gpu_demand::fraction(400_mgpu).milli() == 400_mgpu);
    CHECK(gs::gpu_demand::mig(1, 1).milli() == 0_mgpu);
    CHECK(gs::gpu_demand::replica().milli() == 0_mgpu);
    CHECK(gs::gpu_demand::none().milli() == 0_mgpu);
  }

  TEST_CASE("validate names the field and value of each bad request") {
    const auto cat = gs::basic_catalog();
    const auto bad = [&](gs::task_request r) { gs::validate(r, cat, "job 1 group 'w'"); };
    CHECK_THROWS_WITH_AS(bad({gs::gpu_demand::whole(0_gpus), {}, {}, {}}),
                         doctest::Contains("job 1 group 'w': field 'gpu.count' = 0"),
                         gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(bad({gs::gpu_demand::whole(17_gpus), {}, {}, {}}),
                         doctest::Contains("field 'gpu.count' = 17"), gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(bad({gs::gpu_demand::fraction(1001_mgpu), {}, {}, {}}),
                         doctest::Contains("field 'gpu.share' = 1001"), gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(bad({gs::gpu_demand::mig(0, 1), {}, {}, {}}),
                         doctest::Contains("field 'gpu.mig'"), gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(bad({gs::gpu_demand::none(), gs::cpu_millis{-1}, {}, {}}),
                         doctest::Contains("field 'cpu' = -1"), gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(bad({gs::gpu_demand::replica(gs::memory_mib{-1}), {}, {}, {}}),
                         doctest::Contains("field 'gpu.gpu_memory'"), gs::invalid_value_error);
    gs::task_request unknown{gs::gpu_demand::whole(1_gpus), {}, {}, {}};
    unknown.allowed_models.insert(gs::gpu_model_id{40});
    CHECK_THROWS_WITH_AS(bad(unknown), doctest::Contains("field 'allowed_models' = 40"),
                         gs::invalid_value_error);
    CHECK_NOTHROW(bad({gs::gpu_demand::fraction(1000_mgpu), 1_cores, 1_gib, {}}));
  }
}

}  // namespace resource_request_test
