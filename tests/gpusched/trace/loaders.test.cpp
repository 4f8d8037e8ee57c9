// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <gpusched/trace/gavel.hpp>
#include <gpusched/trace/openb_reader.hpp>
#include <gpusched/trace/philly.hpp>
#include <gpusched/trace/synthetic.hpp>
#include <gpusched/trace/tiresias.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace trace_loaders_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {
const std::string data = GPUSCHED_TEST_DATA_DIR "/trace/";

// The parse_error a loader throws for `text`, or a failed check.
template <class F>
gs::parse_error error_of(F&& load) {
  try {
    load();
  } catch (const gs::parse_error& e) {
    return e;
  }
  FAIL("no parse_error thrown");
  return gs::parse_error("", 0, "", "");
}
gs::trace philly(const std::string& text) {
  std::istringstream in(text);
  return gs::load_philly(in, "t.csv");
}
const char* philly_header = "timestamp,duration,num_gpus,gpu_time,cluster\n";
}  // namespace

TEST_SUITE("trace/philly") {
  TEST_CASE("the Philly fixture loads sorted by submission and rebased to zero") {
    const auto t = gs::load_philly_file(data + "philly_200.csv");
    REQUIRE(t.jobs.size() == 200);
    CHECK(t.jobs.front().submit == gs::sim_time{});
    for (std::size_t i = 1; i < t.jobs.size(); ++i) CHECK(t.jobs[i - 1].submit <= t.jobs[i].submit);
    // Row 1 of the file: 2017-10-09 07:01:55, 66 s, 1 GPU, VC 11cb48.
    const auto it = std::find_if(t.jobs.begin(), t.jobs.end(),
                                 [](const gs::trace_job& j) { return j.id == gs::job_id{1}; });
    REQUIRE(it != t.jobs.end());
    CHECK(it->duration == gs::seconds(66));
    CHECK(it->gpus == 1);
    CHECK(t.tenants.at(it->tenant.value()) == "11cb48");
  }

  TEST_CASE("a Philly timestamp converts to the right offset across a month boundary") {
    const auto t = philly(std::string(philly_header) +
                          "2017-09-30 23:59:59,10,2,20,a\n2017-10-01 00:00:09,5,1,5,b\n");
    REQUIRE(t.jobs.size() == 2);
    CHECK(t.jobs[1].submit - t.jobs[0].submit == gs::seconds(10));
    CHECK(t.jobs[0].gpus == 2);
    CHECK(t.tenants.size() == 2);
  }

  TEST_CASE("columns are found by name in any order") {
    const auto t =
        philly("cluster,num_gpus,duration,timestamp,gpu_time\nvc,4,2.5,2017-10-01 00:00:00,10\n");
    REQUIRE(t.jobs.size() == 1);
    CHECK(t.jobs[0].gpus == 4);
    CHECK(t.jobs[0].duration == gs::sim_duration{2500});
  }

  TEST_CASE("malformed Philly lines name the file, line and field") {
    auto e = error_of([] { philly(std::string(philly_header) + "2017-10-01 00:00:00,x,1,1,a\n"); });
    CHECK(e.file() == "t.csv");
    CHECK(e.line() == 2);
    CHECK(e.field() == "duration");
    e = error_of([] {
      philly(std::string(philly_header) +
             "2017-10-01 00:00:00,1,1,1,a\n\n2017-13-01 00:00:00,1,1,1,a\n");
    });
    CHECK(e.line() == 4);
    CHECK(e.field() == "timestamp");
    e = error_of([] { philly(std::string(philly_header) + "2017-10-01 00:00:00,-5,1,-5,a\n"); });
    CHECK(e.field() == "duration");
    e = error_of([] { philly(std::string(philly_header) + "2017-10-01 00:00:00,10,2,99,a\n"); });
    CHECK(e.field() == "gpu_time");
    e = error_of([] { philly(std::string(philly_header) + "2017-10-01 00:00:00,10,1.5,15,a\n"); });
    CHECK(e.field() == "num_gpus");
    e = error_of([] { philly(std::string(philly_header) + "2017-10-01 00:00:00,10,1\n"); });
    CHECK(e.field() == "gpu_time");
    e = error_of([] { philly("timestamp,duration,num_gpus,cluster\n"); });
    CHECK(e.line() == 1);
    CHECK(e.field() == "gpu_time");
    e = error_of([] { philly(""); });
    CHECK(e.field() == "header");
    CHECK(e.line() == 0);
  }

  TEST_CASE("a missing file is a parse_error naming the file") {
    const auto e = error_of([] { (void)gs::load_philly_file(data + "no-such-file.csv"); });
    CHECK(e.line() == 0);
    CHECK(e.field() == "file");
  }

  TEST_CASE("the reader streams: it returns records one at a time without loading the rest") {
    std::istringstream in(std::string(philly_header) +
                          "2017-10-01 00:00:00,1,1,1,a\n2017-10-01 00:00:01,1,1,1,a\nbroken\n");
    gs::philly_reader rd(in, "s.csv");
    gs::trace_job j;
    CHECK(rd.next(j));
    CHECK(rd.next(j));
    CHECK(j.id == gs::job_id{2});
    CHECK_THROWS_AS(rd.next(j), gs::parse_error);  // the bad line is read only now
  }
}

TEST_SUITE("trace/tiresias") {
  TEST_CASE("the Tiresias 60-job file loads with its GPU mix") {
    const auto t = gs::load_tiresias_file(data + "tiresias_60_job.csv");
    REQUIRE(t.jobs.size() == 60);
    int by[9] = {};
    for (const auto& j : t.jobs) by[j.gpus] += 1;
    CHECK(by[1] == 30);
    CHECK(by[2] == 10);
    CHECK(by[4] == 10);
    CHECK(by[8] == 10);
    CHECK(t.jobs[0].id == gs::job_id{0});
    CHECK(t.jobs[0].duration == gs::seconds(164));
    CHECK(t.jobs[1].submit == gs::at(gs::seconds(30)));
  }
  TEST_CASE("a bad Tiresias row is reported with its field") {
    std::istringstream in("job_id,num_gpu,submit_time,duration\n0,1,0,10\n1,one,5,10\n");
    const auto e = error_of([&] { (void)gs::load_tiresias(in, "x.csv"); });
    CHECK(e.line() == 3);
    CHECK(e.field() == "num_gpu");
  }
}

TEST_SUITE("trace/openb") {
  TEST_CASE("openb pods load with shares, GPU specs, QoS tenants and lifetimes") {
    const auto t = gs::load_openb_file(data + "openb_pod_list_default_100.csv");
    REQUIRE(t.jobs.size() == 100);
    const auto& p1 = *std::find_if(t.jobs.begin(), t.jobs.end(),
                                   [](const gs::trace_job& j) { return j.id == gs::job_id{2}; });
    // openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061
    CHECK(p1.gpus == 0);
    CHECK(p1.gpu_share == 460_mgpu);
    CHECK(p1.cpu == 6000_mcpu);
    CHECK(p1.memory == 12288_mib);
    CHECK(p1.submit == gs::at(gs::seconds(427061)));
    CHECK(p1.duration == gs::seconds(12902960 - 427061));
    CHECK(t.gpu_specs.at(p1.gpu_spec).empty());
    CHECK(t.tenants.at(p1.tenant.value()) == "LS");
  }
  TEST_CASE("inconsistent openb rows are rejected with the field") {
    const std::string h =
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
        "deletion_time,scheduled_time\n";
    std::istringstream a(h + "p,1000,1024,2,500,,LS,Running,0,10,0\n");
    CHECK(error_of([&] { (void)gs::load_openb(a); }).field() == "gpu_milli");
    std::istringstream b(h + "p,1000,1024,1,1000,,LS,Running,20,10,0\n");
    CHECK(error_of([&] { (void)gs::load_openb(b); }).field() == "deletion_time");
    std::istringstream c(h + "p,-1,1024,1,1000,,LS,Running,0,10,0\n");
    CHECK(error_of([&] { (void)gs::load_openb(c); }).field() == "cpu_milli");
    std::istringstream d("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,1,1000\n");
    CHECK(error_of([&] { (void)gs::load_openb(d); }).field() == "gpu_spec");
  }
  TEST_CASE("an openb GPU spec resolves to catalog models and unknown names are errors") {
    gs::gpu_catalog cat = gs::basic_catalog();
    const auto s = gs::resolve_gpu_spec("T4|A10", cat);
    CHECK(s.contains(*cat.find("T4")));
    CHECK(s.contains(*cat.find("A10")));
    CHECK_FALSE(s.contains(*cat.find("L40S")));
    CHECK(gs::resolve_gpu_spec("", cat).empty());
    CHECK_THROWS_AS((void)gs::resolve_gpu_spec("G2", cat), gs::invalid_value_error);
  }
}

TEST_SUITE("trace/gavel") {
  TEST_CASE("a Gavel trace derives durations from the rate table and skips unknown rates") {
    std::ifstream in(data + "gavel_b436b2_20.trace");
    const auto t = gs::load_gavel(
        in,
        [](std::string_view type, int scale) -> std::optional<double> {
          if (type.starts_with("Transformer")) return std::nullopt;
          return 10.0 * scale;
        },
        "b436b2");
    CHECK(t.skipped > 0);
    CHECK(t.jobs.size() + t.skipped == 20);
    for (const auto& j : t.jobs) CHECK(j.gpus >= 1);
    // Row 2: Recommendation (batch size 8192), 460102 steps on 8 GPUs at 10 x 8 steps/s,
    // arrival 70024 s.
    const auto it = std::find_if(t.jobs.begin(), t.jobs.end(),
                                 [](const gs::trace_job& j) { return j.id == gs::job_id{2}; });
    REQUIRE(it != t.jobs.end());
    CHECK(it->submit == gs::at(gs::seconds(70024)));
    CHECK(it->gpus == 8);
    CHECK(it->duration == gs::sim_duration{5751275});
  }
  TEST_CASE("a Gavel row with the wrong field count is a parse_error") {
    std::istringstream in("a\tb\tc\n");
    const auto e = error_of([&] {
      (void)gs::load_gavel(in, [](std::string_view, int) { return std::optional<double>(1.0); });
    });
    CHECK(e.line() == 1);
    CHECK(e.field() == "row");
    std::istringstream in2("x");
    CHECK_THROWS_AS((void)gs::load_gavel(in2, nullptr), gs::invalid_value_error);
  }
}

TEST_SUITE("trace/synthetic") {
  TEST_CASE("the synthetic generator is deterministic and follows the Philly-like mix") {
    const auto seed = gs::seed_from_env(42);
    INFO("seed " << seed);
    gs::synthetic_options o;
    o.jobs = 20000;
    o.jobs_per_hour = 100;
    o.tenants = 3;
    o.seed = seed;
    const auto a = gs::make_synthetic_trace(o);
    const auto b = gs::make_synthetic_trace(o);
    REQUIRE(a.jobs.size() == 20000);
    int by[9] = {};
    double mean_gap = 0;
    for (std::size_t i = 0; i < a.jobs.size(); ++i) {
      CHECK(a.jobs[i].submit == b.jobs[i].submit);
      CHECK(a.jobs[i].duration == b.jobs[i].duration);
      by[a.jobs[i].gpus] += 1;
      CHECK(a.jobs[i].duration >= gs::sim_duration{60 * 31622});  // 60 x 10^1.5 s
      CHECK(a.jobs[i].duration <= gs::seconds(600000));           // 60 x 10^4 s
      CHECK(a.jobs[i].tenant.value() < 3);
      if (i > 0) mean_gap += gs::to_seconds(a.jobs[i].submit - a.jobs[i - 1].submit);
    }
    mean_gap /= 19999.0;
    CHECK(by[1] / 20000.0 == doctest::Approx(0.7).epsilon(0.03));
    CHECK(by[2] / 20000.0 == doctest::Approx(0.1).epsilon(0.1));
    CHECK(by[4] / 20000.0 == doctest::Approx(0.15).epsilon(0.1));
    CHECK(by[8] / 20000.0 == doctest::Approx(0.05).epsilon(0.15));
    CHECK(mean_gap == doctest::Approx(36.0).epsilon(0.05));  // 3600 / 100 jobs per hour
  }
}

TEST_SUITE("trace/record") {
  TEST_CASE("a job larger than a node becomes node-sized tasks plus a remainder") {
    gs::trace_job r;
    r.id = gs::job_id{5};
    r.gpus = 20;
    r.duration = gs::seconds(10);
    gs::job_conversion conv;
    conv.gpus_per_node = 8;
    conv.cpu_per_gpu = 4_cores;
    const auto j = gs::to_job_spec(r, conv);
    REQUIRE(j.groups.size() == 2);
    CHECK(j.groups[0].count == 2);
    CHECK(j.groups[0].request.gpu.count == gs::gpu_count{8});
    CHECK(j.groups[0].request.cpu == 32_cores);
    CHECK(j.groups[1].count == 1);
    CHECK(j.groups[1].request.gpu.count == gs::gpu_count{4});
    CHECK(j.whole_gpus() == gs::gpu_count{20});
    CHECK(j.expected_duration == gs::seconds(10));
    gs::trace_job s;
    s.id = gs::job_id{6};
    s.gpu_share = 250_mgpu;
    s.cpu = 3_cores;
    const auto k = gs::to_job_spec(s, {});
    REQUIRE(k.groups.size() == 1);
    CHECK(k.groups[0].request.gpu.kind == gs::gpu_demand_kind::share);
    CHECK(k.groups[0].request.cpu == 3_cores);
  }
}

}  // namespace trace_loaders_test
