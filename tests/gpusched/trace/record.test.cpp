// SPDX-License-Identifier: Apache-2.0
// trace/record.hpp: normalised trace records and their conversion to gangs.
#include <doctest/doctest.h>

#include <gpusched/trace/record.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace trace_record_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {
gs::trace_job rec(unsigned id, int submit_s, int gpus, int dur_s = 100) {
  gs::trace_job r;
  r.id = gs::job_id{id};
  r.submit = gs::at(gs::seconds(submit_s));
  r.gpus = gpus;
  r.duration = gs::seconds(dur_s);
  return r;
}
}  // namespace

TEST_SUITE("trace/record") {
  TEST_CASE("a job larger than a node becomes node-sized workers plus a remainder task") {
    gs::job_conversion c;
    c.gpus_per_node = 8;
    c.cpu_per_gpu = 2_cores;
    const auto j = gs::to_job_spec(rec(1, 0, 20), c);
    REQUIRE(j.groups.size() == 2);
    CHECK(j.groups[0].count == 2);
    CHECK(j.groups[0].request.gpu.whole_gpus() == 8_gpus);
    CHECK(j.groups[0].request.cpu == 16_cores);
    CHECK(j.groups[1].count == 1);
    CHECK(j.groups[1].request.gpu.whole_gpus() == 4_gpus);
    CHECK(j.whole_gpus() == 20_gpus);
    CHECK(j.expected_duration == gs::seconds(100));  // oracle duration by default
  }

  TEST_CASE("a share record becomes one task with that share, a GPU-less one a CPU-only task") {
    auto share = rec(2, 0, 0);
    share.gpu_share = 300_mgpu;
    share.cpu = 4_cores;
    const auto j = gs::to_job_spec(share, {});
    REQUIRE(j.groups.size() == 1);
    CHECK(j.groups[0].request.gpu.kind == gs::gpu_demand_kind::share);
    CHECK(j.groups[0].request.gpu.share == 300_mgpu);
    CHECK(j.groups[0].request.cpu == 4_cores);
    gs::job_conversion no_oracle;
    no_oracle.oracle_duration = false;
    const auto cpu = gs::to_job_spec(rec(3, 0, 0), no_oracle);
    CHECK(cpu.groups[0].request.gpu.kind == gs::gpu_demand_kind::none);
    CHECK_FALSE(cpu.expected_duration.has_value());
  }

  TEST_CASE("sorting by submit keeps file order on ties, and rebase moves the earliest to 0") {
    gs::trace t;
    t.jobs = {rec(1, 50, 1), rec(2, 20, 1), rec(3, 50, 1), rec(4, 20, 2)};
    t.sort_by_submit();
    CHECK(t.jobs[0].id == gs::job_id{2});
    CHECK(t.jobs[1].id == gs::job_id{4});
    CHECK(t.jobs[2].id == gs::job_id{1});
    CHECK(t.jobs[3].id == gs::job_id{3});
    t.rebase();
    CHECK(t.jobs[0].submit == gs::sim_time{});
    CHECK(t.jobs[3].submit == gs::at(gs::seconds(30)));
    CHECK(t.gpu_hours() == doctest::Approx(5 * 100 / 3600.0));
  }

  TEST_CASE("strings intern to dense indices and GPU specs resolve to model sets") {
    gs::string_table s;
    CHECK(s.intern("a") == 0u);
    CHECK(s.intern("b") == 1u);
    CHECK(s.intern("a") == 0u);
    CHECK(s.size() == 2);
    const auto cat = gs::basic_catalog();
    const auto set = gs::resolve_gpu_spec("T4|A10", cat);
    CHECK(set.size() == 2);
    CHECK(set.contains(cat.id("T4")));
    CHECK(gs::resolve_gpu_spec("", cat).empty());
    CHECK_THROWS_AS((void)gs::resolve_gpu_spec("T4|nope", cat), gs::invalid_value_error);
  }
}

}  // namespace trace_record_test
