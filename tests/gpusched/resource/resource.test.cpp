// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <string>
#include <type_traits>

#include <gpusched/resource/gpu_model.hpp>
#include <gpusched/resource/request.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace resource_resource_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {
std::string message_of(auto&& f) {
  try {
    f();
  } catch (const gs::error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_SUITE("resource/gpu_model") {
  TEST_CASE("the basic catalog resolves names and rejects unknown ones with the known list") {
    const auto cat = gs::basic_catalog();
    const auto id = cat.id("T4");
    CHECK(cat[id].name == "T4");
    CHECK(cat[id].memory == 16_gib);
    CHECK_FALSE(cat.find("RTX-9999"));
    const auto msg = message_of([&] { (void)cat.id("RTX-9999", "node 3 'x'", "gpu_model"); });
    CHECK(msg.find("[gpusched.unknown_name] node 3 'x': field 'gpu_model' = RTX-9999") == 0);
    CHECK(msg.find("H100-SXM5-80GB") != std::string::npos);
  }

  TEST_CASE("adding a duplicate or malformed model throws and leaves the catalog unchanged") {
    auto cat = gs::basic_catalog();
    const auto before = cat.size();
    CHECK_THROWS_AS(cat.add({"T4", 16_gib, 40, {}}), gs::invalid_value_error);
    CHECK_THROWS_AS(cat.add({"", 16_gib, 40, {}}), gs::invalid_value_error);
    CHECK_THROWS_AS(cat.add({"X", 0_gib, 40, {}}), gs::invalid_value_error);
    CHECK_THROWS_AS(cat.add({"Y", 1_gib, -1, {}}), gs::invalid_value_error);
    gs::mig_geometry bad{8, 7, {{"4g.x", 4, 4, 1, 0b0001'0000 | 0b1000'0000, false, 1_gib, false}}};
    CHECK(message_of([&] { cat.add({"Z", 1_gib, 1, bad}); }).find("placement runs past") !=
          std::string::npos);
    CHECK(cat.size() == before);
  }

  TEST_CASE("A100-40GB MIG profiles are keyed by slices and placements are memory-slice masks") {
    const auto cat = gs::basic_catalog();
    const auto& a100 = cat[cat.id("A100-SXM4-40GB")];
    REQUIRE(a100.supports_mig());
    CHECK(a100.mig.memory_slices == 8);
    CHECK(a100.mig.compute_slices == 7);
    const auto* p3 = a100.mig.find(3, 4);
    REQUIRE(p3 != nullptr);
    CHECK(p3->name == "3g.20gb");
    CHECK(p3->placement_starts == 0b0001'0001);  // {0,4}:4
    CHECK(p3->slots_at(4) == 0b1111'0000);
    const auto* p1m = a100.mig.find(1, 2);
    REQUIRE(p1m != nullptr);
    CHECK(p1m->name == "1g.10gb");  // same compute as 1g.5gb, twice the memory
    CHECK(a100.mig.find(1, 1, true)->name == "1g.5gb+me");
    CHECK(a100.mig.find("7g.40gb")->slots_at(0) == 0xFF);
    CHECK(a100.mig.find(5, 5) == nullptr);
    CHECK_FALSE(cat[cat.id("T4")].supports_mig());
  }

  TEST_CASE("a model set is empty for 'any' and admits its members only otherwise") {
    gs::gpu_model_set s;
    CHECK(s.admits(gs::gpu_model_id{3}));
    s.insert(gs::gpu_model_id{1});
    CHECK(s.admits(gs::gpu_model_id{1}));
    CHECK_FALSE(s.admits(gs::gpu_model_id{3}));
    CHECK(s.size() == 1);
  }
}

TEST_SUITE("resource/request") {
  const auto cat = gs::basic_catalog();
  TEST_CASE("valid requests pass") {
    CHECK_NOTHROW(gs::validate(
        {.gpu = gs::gpu_demand::whole(8_gpus), .cpu = 1_cores, .memory = 1_gib}, cat, "t"));
    CHECK_NOTHROW(gs::validate({.gpu = gs::gpu_demand::fraction(1000_mgpu)}, cat, "t"));
    CHECK_NOTHROW(gs::validate({.gpu = gs::gpu_demand::mig(3, 4)}, cat, "t"));
    CHECK_NOTHROW(gs::validate({.gpu = gs::gpu_demand::none(), .cpu = 1_cores}, cat, "t"));
  }
  TEST_CASE("bad requests name the field and the value") {
    CHECK(message_of([&] {
            gs::validate({.gpu = gs::gpu_demand::fraction(1500_mgpu)}, cat, "job 1");
          }).find("job 1: field 'gpu.share' = 1500") != std::string::npos);
    CHECK(message_of([&] {
            gs::validate({.gpu = gs::gpu_demand::whole(0_gpus)}, cat, "j");
          }).find("field 'gpu.count' = 0") != std::string::npos);
    CHECK(message_of([&] {
            gs::validate({.gpu = gs::gpu_demand::whole(17_gpus)}, cat, "j");
          }).find("field 'gpu.count' = 17") != std::string::npos);
    CHECK(message_of([&] {
            gs::validate({.gpu = gs::gpu_demand::none(), .cpu = gs::cpu_millis{-5}}, cat, "j");
          }).find("field 'cpu' = -5") != std::string::npos);
    CHECK(message_of([&] {
            gs::validate({.gpu = gs::gpu_demand::none(), .memory = gs::memory_mib{-1}}, cat, "j");
          }).find("field 'memory' = -1") != std::string::npos);
    CHECK(message_of([&] {
            gs::validate({.gpu = gs::gpu_demand::mig(0, 4)}, cat, "j");
          }).find("field 'gpu.mig'") != std::string::npos);
    gs::gpu_model_set bad;
    bad.insert(gs::gpu_model_id{60});
    CHECK(message_of([&] {
            gs::validate({.gpu = gs::gpu_demand::whole(1_gpus), .allowed_models = bad}, cat, "j");
          }).find("field 'allowed_models' = 60") != std::string::npos);
  }
  TEST_CASE("a demand reports its milli-GPU equivalent") {
    CHECK(gs::gpu_demand::whole(2_gpus).milli() == 2000_mgpu);
    CHECK(gs::gpu_demand::fraction(300_mgpu).milli() == 300_mgpu);
    CHECK(gs::gpu_demand::mig(1, 1).milli() == 0_mgpu);
    CHECK(gs::gpu_demand::fraction(300_mgpu).whole_gpus() == 0_gpus);
  }

  TEST_CASE("visit calls the handler of the demand's kind with that kind's fields") {
    // Each handler names its kind and the fields it sees, so a wrong dispatch or field shows.
    const auto show = [](const gs::gpu_demand& d) {
      return d.visit(
          [](gs::demand_none) { return std::string("none"); },
          [](gs::demand_whole w) { return "whole " + std::to_string(w.count.value()); },
          [](gs::demand_share s) { return "share " + std::to_string(s.share.value()); },
          [](gs::demand_mig m) {
            return "mig " + std::to_string(m.compute) + "c/" + std::to_string(m.memory) + "m";
          },
          [](gs::demand_replica r) { return "replica " + std::to_string(r.gpu_memory.value()); });
    };
    CHECK(show(gs::gpu_demand::none()) == "none");
    CHECK(show(gs::gpu_demand::whole(4_gpus)) == "whole 4");
    CHECK(show(gs::gpu_demand::fraction(250_mgpu)) == "share 250");
    CHECK(show(gs::gpu_demand::mig(3, 4)) == "mig 3c/4m");
    CHECK(show(gs::gpu_demand::replica(gs::memory_mib{2048})) == "replica 2048");
  }

  TEST_CASE("visit converts every handler's result to the none handler's type, void included") {
    // Handlers returning int convert to the none handler's long long.
    const auto wide = gs::gpu_demand::whole(2_gpus).visit(
        [](gs::demand_none) { return 0LL; }, [](gs::demand_whole w) { return w.count.value(); },
        [](gs::demand_share) { return 1; }, [](gs::demand_mig) { return 2; },
        [](gs::demand_replica) { return 3; });
    static_assert(std::is_same_v<decltype(wide), const long long>);
    CHECK(wide == 2);
    int calls = 0;
    gs::gpu_demand::mig(1, 1).visit([&](gs::demand_none) {}, [&](gs::demand_whole) {},
                                    [&](gs::demand_share) {}, [&](gs::demand_mig) { ++calls; },
                                    [&](gs::demand_replica) {});
    CHECK(calls == 1);
    // constexpr: milli() is built on visit.
    static_assert(gs::gpu_demand::whole(gs::gpu_count{3}).milli() == gs::milli_gpu{3000});
  }
}

}  // namespace resource_resource_test
