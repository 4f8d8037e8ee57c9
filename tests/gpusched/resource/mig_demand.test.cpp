// SPDX-License-Identifier: Apache-2.0
// MIG demands by profile name (`gpu_demand::mig_profile`): names are per GPU model, the demand
// is the profile's shape.
#include <doctest/doctest.h>

#include <string>

#include <gpusched/resource/mig_catalog.hpp>
#include <gpusched/resource/request.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace resource_mig_demand_test {

namespace gs = gpusched;

namespace {
std::string error_of(auto&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}
bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}
}  // namespace

TEST_SUITE("resource/mig_profile") {
  TEST_CASE("a profile name per model gives that model's shape") {
    CHECK(gs::gpu_demand::mig_profile("A100-SXM4-40GB", "3g.20gb") == gs::gpu_demand::mig(3, 4));
    CHECK(gs::gpu_demand::mig_profile("H100-SXM5-80GB", "3g.40gb") == gs::gpu_demand::mig(3, 4));
    CHECK(gs::gpu_demand::mig_profile("A30-24GB", "2g.12gb") == gs::gpu_demand::mig(2, 2));
    CHECK(gs::gpu_demand::mig_profile("A100-SXM4-40GB", "7g.40gb") == gs::gpu_demand::mig(7, 8));
    // the same name is a different shape on another model
    CHECK(gs::gpu_demand::mig_profile("A100-SXM4-40GB", "1g.10gb") == gs::gpu_demand::mig(1, 2));
    CHECK(gs::gpu_demand::mig_profile("A100-SXM4-80GB", "1g.10gb") == gs::gpu_demand::mig(1, 1));
    CHECK(gs::gpu_demand::mig_profile("H200-141GB", "1g.35gb") == gs::gpu_demand::mig(1, 2));
    CHECK(gs::gpu_demand::mig_profile("GB300-288GB", "1g.35gb") == gs::gpu_demand::mig(1, 1));
  }

  TEST_CASE("every non-+me profile of mig_catalog() round-trips to its shape") {
    const auto cat = gs::mig_catalog();
    int n = 0;
    for (const auto& m : cat.models()) {
      for (const auto& p : m.mig.profiles) {
        if (p.media_extension) continue;
        const auto d = gs::gpu_demand::mig_profile(m.name, p.name);
        CHECK(d.kind == gs::gpu_demand_kind::mig);
        CHECK(d.mig_compute == p.compute_slices);
        CHECK(d.mig_memory == p.memory_slices);
        ++n;
      }
    }
    CHECK(n == 11 * 6 + 3);  // eleven 8-slice models of 6 profiles, the A30's 3
  }

  TEST_CASE("a catalog of one's own is used when given") {
    const auto cat = gs::basic_catalog();
    CHECK(gs::gpu_demand::mig_profile(cat, "A100-SXM4-40GB", "4g.20gb") ==
          gs::gpu_demand::mig(4, 4));
    const auto e =
        error_of([&] { (void)gs::gpu_demand::mig_profile(cat, "H100-SXM5-80GB", "3g.40gb"); });
    CHECK(has(e, "has no MIG table in this catalog"));
    CHECK(has(e, "MIG models: A100-SXM4-40GB"));
  }

  TEST_CASE("an unknown name lists the model's profiles, an unknown model the MIG models") {
    const auto e = error_of([] { (void)gs::gpu_demand::mig_profile("A100-SXM4-40GB", "3g.40gb"); });
    CHECK(has(e, "profile"));
    CHECK(has(e, "3g.40gb"));
    CHECK(has(e, "not a MIG profile of A100-SXM4-40GB"));
    CHECK(has(e, "1g.5gb, 1g.10gb, 2g.10gb, 3g.20gb, 4g.20gb, 7g.40gb"));
    const auto m = error_of([] { (void)gs::gpu_demand::mig_profile("A100", "3g.20gb"); });
    CHECK(has(m, "unknown GPU model"));
    CHECK(has(m, "A30-24GB"));
  }

  TEST_CASE("a +me profile is refused as a demand, saying so") {
    const auto e =
        error_of([] { (void)gs::gpu_demand::mig_profile("A100-SXM4-40GB", "1g.5gb+me"); });
    CHECK(has(e, "+me profile"));
  }
}

}  // namespace resource_mig_demand_test
