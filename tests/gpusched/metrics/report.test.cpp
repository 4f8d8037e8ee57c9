// SPDX-License-Identifier: Apache-2.0
// The report writers: the printed table's column widths (a golden), shortest round-trip
// numbers in CSV and JSON, undefined statistics, and the per-job table's tenant names and
// rejection reasons.
#include <doctest/doctest.h>

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <gpusched/core/random.hpp>
#include <gpusched/metrics/report.hpp>
#include <gpusched/metrics/summary.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/sim/simulator.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace metrics_report_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {
/// The double `text` reads back as (the whole of it), or NaN.
double read_back(const std::string& text) {
  double v = std::numeric_limits<double>::quiet_NaN();
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc{} || r.ptr != text.data() + text.size()) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return v;
}
bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

/// One job of `tasks` tasks of `gpus` whole GPUs each, of tenant `tenant`, submitted at `at_s`, running `work_s`.
gs::sim_job one_job(unsigned id, unsigned tenant, int gpus, int at_s, int work_s, int tasks = 1) {
  gs::sim_job j;
  j.spec.id = gs::job_id{id};
  j.spec.tenant = gs::tenant_id{tenant};
  j.spec.submit = gs::at(gs::seconds(at_s));
  j.spec.groups.push_back({.name = "w",
                           .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                       .cpu = 1_cores,
                                       .memory = 1_gib},
                           .count = tasks});
  j.work = gs::seconds(work_s);
  return j;
}
}  // namespace

TEST_SUITE("metrics/report") {
  TEST_CASE("the table sizes its columns from the widest cell: a 7-digit value under a short label") {
    // Two runs labelled "a" and "b" whose largest JCTs have 8 digits, and a mean with decimals:
    // before, every column was as wide as its label plus two, and the values ran together
    // (`jct_max_s  1199448812042186`).
    gs::sim_summary a, b;
    a.label = "a";
    b.label = "b";
    a.jobs = b.jobs = 2;
    a.finished = b.finished = 2;
    a.jct_s = {.count = 2, .mean = 1551505.647, .median = 1551505, .p95 = 11994488,
               .p99 = 11994488, .max = 11994488};
    b.jct_s = {.count = 2, .mean = 964702.847, .median = 964702, .p95 = 12042186,
               .p99 = 12042186, .max = 12042186};
    a.makespan_s = 8118736;
    b.makespan_s = 7;
    std::ostringstream os;
    const std::vector<gs::sim_summary> runs{a, b};
    gs::print_table(os, runs);
    const std::string t = os.str();
    // Every run's column is 13 wide: the widest cell (`1551505.647`, 11 characters) plus two.
    CHECK(t.rfind("metric                                a            b\n"
                  "jobs                                  2            2\n"
                  "finished                              2            2\n"
                  "rejected                              0            0\n"
                  "unfinished                            0            0\n"
                  "jct_mean_s                  1551505.647   964702.847\n"
                  "jct_median_s                    1551505       964702\n"
                  "jct_p95_s                      11994488     12042186\n"
                  "jct_p99_s                      11994488     12042186\n"
                  "jct_max_s                      11994488     12042186\n"
                  // no job finished: the queueing figures are undefined, not 0
                  "queue_mean_s                          -            -\n",
                  0) == 0);
    CHECK(t.find("\nmakespan_s                      8118736            7\n") != std::string::npos);
    // Every line has the same length: the columns line up.
    std::istringstream lines(t);
    std::size_t width = 0;
    for (std::string line; std::getline(lines, line);) {
      if (width == 0) width = line.size();
      CHECK(line.size() == width);
    }
  }

  TEST_CASE("CSV and JSON numbers are the shortest decimals that read back exactly") {
    CHECK(gs::detail::num(8118736.0) == "8118736");  // was 8.11874e+06
    CHECK(gs::detail::num(2054270.125) == "2054270.125");
    CHECK(gs::detail::num(0.25) == "0.25");
    CHECK(gs::detail::num(0.1) == "0.1");
    CHECK(gs::detail::num(0.0) == "0");
    CHECK(gs::detail::num(1e20) == "100000000000000000000");
    CHECK(gs::detail::num(1e21) == "1e+21");
    CHECK(gs::detail::num(1e-7) == "0.0000001");
    CHECK(gs::detail::num(1.5e-8) == "1.5e-08");
    CHECK(gs::detail::csv_num(std::numeric_limits<double>::quiet_NaN()).empty());
    CHECK(gs::detail::json_num(std::numeric_limits<double>::quiet_NaN()) == "null");
    // Round trip: every finite double, drawn as random bit patterns and at the edges.
    std::vector<double> values{5e-324,
                               std::numeric_limits<double>::min(),
                               std::numeric_limits<double>::max(),
                               -std::numeric_limits<double>::max(),
                               -0.0,
                               1.0 / 3.0,
                               9.999999999999999e20,
                               1e-7,
                               std::nextafter(1e-7, 0.0),
                               288666.16900000005,
                               123456789012345678.0};
    gs::random_engine g(gs::seed_from_env(2024));
    for (int i = 0; i < 20000; ++i) {
      const double v = std::bit_cast<double>(g());
      if (std::isfinite(v)) values.push_back(v);
      // and values of the sizes the tables hold: 0..1e9 with a few decimals
      values.push_back(static_cast<double>(g() % 1'000'000'000'000ull) / 1000.0);
    }
    std::size_t checked = 0;
    for (const double v : values) {
      const std::string text = gs::detail::num(v);
      INFO(text);
      CHECK(same_bits(read_back(text), v));
      CHECK(text.size() <= 48);
      // shortest: one digit less does not read back (checked on the %.17g form's length)
      CHECK(text.size() <= gs::detail::num(v, "%.17g").size() + 8);
      ++checked;
    }
    CHECK(checked > 20000);
    // The writers use it: a summary's makespan reads back exactly from CSV and JSON.
    gs::sim_summary s;
    s.label = "x";
    s.makespan_s = 8118736.123456789;
    s.capacity_gpu_hours = 288666.16900000005;
    std::ostringstream csv, json;
    gs::write_summary_csv(csv, std::vector{s});
    gs::write_summary_json(json, s);
    CHECK(csv.str().find(",8118736.123456789,288666.16900000005,") != std::string::npos);
    CHECK(json.str().find("\"makespan_s\": 8118736.123456789,") != std::string::npos);
  }

  TEST_CASE("statistics of no finished job are empty in CSV, null in JSON, '-' in the table") {
    // One job that can never run (a gang of 2 x 8 GPUs on one 8-GPU node) and nothing else.
    std::vector<gs::sim_job> jobs{one_job(1, 0, 8, 0, 100, 2)};
    gs::simulator<gs::any_pipeline> sim(
        gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(1, 8)),
        gs::make_pipeline(gs::pipeline_config{}), gs::sim_config{});
    sim.run(gs::source_from(jobs));
    const auto s = gs::summarize(sim);
    REQUIRE(s.rejected == 1);
    REQUIRE(s.finished == 0);
    std::ostringstream csv, json, table, tenants;
    gs::write_summary_csv(csv, std::vector{s});
    gs::write_summary_json(json, s);
    gs::print_table(table, std::vector{s});
    gs::write_tenants_csv(tenants, s);
    // label,jobs,finished,rejected,unfinished, then 9 JCT/queue cells, empty
    CHECK(csv.str().find("\n,1,0,1,0,,,,,,,,,,") != std::string::npos);
    CHECK(json.str().find("\"jct_mean_s\": null") != std::string::npos);
    CHECK(json.str().find("\"queue_p99_s\": null") != std::string::npos);
    CHECK(json.str().find("\"rho_max\": null") != std::string::npos);
    CHECK(json.str().find("\"goodput\": null") != std::string::npos);
    CHECK(json.str().find("\"jct_mean_s\": 0") == std::string::npos);
    INFO(table.str());
    CHECK(table.str().find("\njct_mean_s" + std::string(23, ' ') + "-\n") != std::string::npos);
    // the tenant's mean JCT and fair ratio are empty too (no finished job, no sample)
    CHECK(tenants.str() == "tenant,jobs,finished,allocated_gpu_h,share,entitlement,mean_jct_s,"
                           "fair_ratio,active_samples\nt0,1,0,0,0,1,,,0\n");
  }

  TEST_CASE("jobs.csv names tenants as tenants.csv does and says why a job was rejected") {
    std::vector<gs::sim_job> jobs{one_job(1, 0, 2, 0, 100), one_job(2, 1, 8, 0, 100, 8),
                                  one_job(3, 2, 1, 5, 50)};
    gs::sim_config cfg;
    cfg.sample_interval = gs::seconds(10);
    gs::simulator<gs::any_pipeline> sim(
        gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)),
        gs::make_pipeline(gs::pipeline_config{}), cfg);
    sim.run(gs::source_from(jobs));
    const std::vector<std::string> names{"vc-a", "vc,b"};  // tenant 2 has no name: t2
    const auto s = gs::summarize(sim.records(), sim.samples(), sim.totals(), names);
    std::ostringstream os, tenants;
    gs::write_jobs_csv(os, sim.records(), names);
    gs::write_tenants_csv(tenants, s);
    const std::string t = os.str();
    CHECK(t.rfind("job,tenant,gpus,submit_s,start_s,finish_s,jct_s,work_s,outcome,preemptions,"
                  "failures,checkpoints,lost_preemption_gpu_s,lost_failure_gpu_s,overhead_gpu_s,"
                  "reason\n",
                  0) == 0);
    CHECK(t.find("\n1,vc-a,2,0.000,0.000,100.000,100.000,100.000,finished,0,0,0,0,0,0,\n") !=
          std::string::npos);
    // the reason holds commas: quoted, so the columns stay put
    CHECK(t.find("\n2,\"vc,b\",64,0.000,,,,100.000,rejected,0,0,0,0,0,0,\"needs 64 GPUs in all, "
                 "more than the whole cluster has (16)\"\n") != std::string::npos);
    CHECK(t.find("\n3,t2,1,") != std::string::npos);
    // the same names as the per-tenant table
    CHECK(tenants.str().find("\nvc-a,") != std::string::npos);
    CHECK(tenants.str().find("\n\"vc,b\",") != std::string::npos);
    CHECK(tenants.str().find("\nt2,") != std::string::npos);
    REQUIRE(sim.records().size() == 3);
    CHECK(sim.records()[0].reason.empty());
    CHECK(sim.records()[1].reason == "needs 64 GPUs in all, more than the whole cluster has (16)");
  }
}

}  // namespace metrics_report_test
