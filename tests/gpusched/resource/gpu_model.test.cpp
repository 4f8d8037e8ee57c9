// SPDX-License-Identifier: Apache-2.0
// resource/gpu_model.hpp: GPU models, model sets and the catalog.
#include <doctest/doctest.h>

#include <string>

#include <gpusched/resource/gpu_model.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace resource_gpu_model_test {

namespace gs = gpusched;
using namespace gpusched::literals;

TEST_SUITE("resource/gpu_model") {
  TEST_CASE("an empty model set admits every model and a non-empty one only its members") {
    gs::gpu_model_set any;
    CHECK(any.empty());
    CHECK(any.admits(gs::gpu_model_id{3}));
    gs::gpu_model_set s;
    s.insert(gs::gpu_model_id{1});
    s.insert(gs::gpu_model_id{5});
    s.insert(gs::gpu_model_id{1});
    CHECK(s.size() == 2);
    CHECK(s.admits(gs::gpu_model_id{5}));
    CHECK_FALSE(s.admits(gs::gpu_model_id{3}));
    CHECK_FALSE(s.contains(gs::gpu_model_id{64}));  // beyond the bitmask: never a member
    CHECK(s.bits() == ((1u << 1) | (1u << 5)));
  }

  TEST_CASE("the catalog assigns ids in insertion order and finds models by name") {
    gs::gpu_catalog c;
    const auto a = c.add({"X1", 16_gib, 40, {}});
    const auto b = c.add({"X2", 32_gib, 80, {}});
    CHECK(a == gs::gpu_model_id{0});
    CHECK(b == gs::gpu_model_id{1});
    CHECK(c.size() == 2);
    CHECK(c.find("X2") == b);
    CHECK_FALSE(c.find("X3").has_value());
    CHECK(c[b].memory == 32_gib);
    CHECK(c.contains(b));
    CHECK_FALSE(c.contains(gs::gpu_model_id{2}));
    CHECK_FALSE(c[a].supports_mig());
  }

  TEST_CASE("the catalog refuses bad models and names the known ones for an unknown name") {
    gs::gpu_catalog c;
    (void)c.add({"X1", 16_gib, 40, {}});
    CHECK_THROWS_WITH_AS((void)c.add({"X1", 16_gib, 40, {}}), doctest::Contains("already in"),
                         gs::invalid_value_error);
    CHECK_THROWS_WITH_AS((void)c.add({"", 16_gib, 40, {}}), doctest::Contains("field 'name'"),
                         gs::invalid_value_error);
    CHECK_THROWS_WITH_AS((void)c.add({"Z", 0_gib, 40, {}}), doctest::Contains("field 'memory'"),
                         gs::invalid_value_error);
    CHECK(c.size() == 1);  // strong guarantee
    CHECK_THROWS_WITH_AS((void)c.id("Y"), doctest::Contains("known: X1"), gs::invalid_value_error);
  }

  TEST_CASE("a MIG profile occupies memory_slices slots from its start, and the A100 has 1g.5gb") {
    const gs::mig_profile p{"3g", 3, 4, 2, 0b00010001, false, 20_gib, false};
    CHECK(p.slots_at(0) == 0b00001111);
    CHECK(p.slots_at(4) == 0b11110000);
    const auto cat = gs::basic_catalog();
    const auto& a100 = cat[cat.id("A100-SXM4-40GB")];
    CHECK(a100.supports_mig());
    const auto* small = a100.mig.find(1, 1);
    REQUIRE(small != nullptr);
    CHECK(small == a100.mig.find(small->name));
    CHECK(a100.mig.memory_slices == 8);
    CHECK(a100.mig.find(5, 5) == nullptr);
  }
}

}  // namespace resource_gpu_model_test
