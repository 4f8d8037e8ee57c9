// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gpusched/core/parse.hpp>
#include <gpusched/metrics/report.hpp>
#include <gpusched/metrics/summary.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/sim/simulator.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace metrics_metrics_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {
// Tenant A submits 16 one-GPU jobs of 100 s at t=0, tenant B 16 at t=1; one 8-GPU node.
gs::sim_summary two_tenants(const char* ordering) {
  std::vector<gs::sim_job> jobs;
  for (unsigned i = 0; i < 32; ++i) {
    gs::sim_job j;
    j.spec.id = gs::job_id{i + 1};
    j.spec.tenant = gs::tenant_id{i < 16 ? 0U : 1U};
    j.spec.submit = gs::at(gs::seconds(i < 16 ? 0 : 1));
    j.spec.groups.push_back({.name = "w",
                             .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{1}),
                                         .cpu = 1_cores,
                                         .memory = 1_gib},
                             .count = 1});
    j.work = gs::seconds(100);
    jobs.push_back(std::move(j));
  }
  gs::sim_config cfg;
  cfg.sample_interval = gs::seconds(10);
  gs::pipeline_config pc;
  pc.ordering = ordering;
  gs::simulator<gs::any_pipeline> sim(
      gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(1, 8)), gs::make_pipeline(pc),
      cfg);
  sim.run(gs::source_from(jobs));
  return gs::summarize(sim);
}
}  // namespace

TEST_SUITE("metrics/summary") {
  TEST_CASE("percentiles are nearest-rank") {
    std::vector<double> v;
    for (int i = 100; i >= 1; --i) v.push_back(i);
    const auto d = gs::summarize_values(v);
    CHECK(d.count == 100);
    CHECK(d.mean == doctest::Approx(50.5));
    CHECK(d.median == 50);
    CHECK(d.p95 == 95);
    CHECK(d.p99 == 99);
    CHECK(d.max == 100);
    std::vector<double> one{7};
    CHECK(gs::summarize_values(one).p99 == 7);
    std::vector<double> none;
    CHECK(gs::summarize_values(none).count == 0);
  }

  TEST_CASE("Jain's index is 1 for equal shares and 1 over n for one tenant taking all") {
    const std::vector<double> eq{0.5, 0.5, 0.5, 0.5};
    CHECK(gs::jain_index(eq) == doctest::Approx(1.0));
    const std::vector<double> one{4, 0, 0, 0};
    CHECK(gs::jain_index(one) == doctest::Approx(0.25));
    const std::vector<double> two{1, 3};
    CHECK(gs::jain_index(two) == doctest::Approx(16.0 / 20.0));
  }

  TEST_CASE("a summary computes shares entitlements rho and GPU-hours from records") {
    std::vector<gs::job_record> rs(2);
    rs[0].id = gs::job_id{1};
    rs[0].tenant = gs::tenant_id{0};
    rs[0].gpus_milli = 2000;
    rs[0].submit = gs::at(gs::seconds(0));
    rs[0].first_start = gs::at(gs::seconds(0));
    rs[0].finish = gs::at(gs::seconds(100));
    rs[0].work = gs::seconds(100);
    rs[0].outcome = gs::job_outcome::finished;
    rs[0].allocated_gpu_ms = 2 * 100000.0;
    rs[1] = rs[0];
    rs[1].id = gs::job_id{2};
    rs[1].tenant = gs::tenant_id{1};
    rs[1].gpus_milli = 1000;
    rs[1].first_start = gs::at(gs::seconds(100));
    rs[1].finish = gs::at(gs::seconds(200));
    rs[1].allocated_gpu_ms = 100000.0;
    gs::sim_totals tot;
    tot.start = gs::at(gs::seconds(0));
    tot.end = gs::at(gs::seconds(200));
    tot.capacity_gpus = 2;
    tot.allocated_integral = 300000.0 * 1000.0;
    const std::vector<std::string> names{"a", "b"};
    const std::vector<double> weights{3, 1};
    const auto s = gs::summarize(rs, {}, tot, names, weights, "x");
    CHECK(s.finished == 2);
    CHECK(s.jct_s.mean == doctest::Approx(150));
    CHECK(s.queueing_s.mean == doctest::Approx(50));
    CHECK(s.capacity_gpu_hours == doctest::Approx(400.0 / 3600.0));
    CHECK(s.allocated_gpu_hours == doctest::Approx(300.0 / 3600.0));
    CHECK(s.idle_gpu_hours == doctest::Approx(100.0 / 3600.0));
    CHECK(s.goodput == doctest::Approx(1.0));
    REQUIRE(s.tenants.size() == 2);
    CHECK(s.tenants[0].name == "a");
    CHECK(s.tenants[0].share == doctest::Approx(2.0 / 3.0));
    CHECK(s.tenants[0].entitlement == doctest::Approx(0.75));
    // x = share / entitlement = (0.888.., 1.333..)
    const std::vector<double> x{(2.0 / 3.0) / 0.75, (1.0 / 3.0) / 0.25};
    CHECK(s.jain == doctest::Approx(gs::jain_index(x)));
    // rho: fair share = 1 GPU per tenant; job 1 (2 GPUs) T_id = 200 s -> 0.5; job 2 -> 2.
    CHECK(s.rho.max == doctest::Approx(2.0));
    CHECK(s.rho.mean == doctest::Approx(1.25));
  }

  TEST_CASE("summarize: a tenant whose jobs did not finish has an undefined mean JCT (NaN)") {
    std::vector<gs::job_record> rs(1);
    rs[0].id = gs::job_id{1};
    rs[0].tenant = gs::tenant_id{1};
    rs[0].gpus_milli = 1000;
    rs[0].submit = gs::at(gs::seconds(0));
    rs[0].outcome = gs::job_outcome::unfinished;
    gs::sim_totals tot;
    tot.start = gs::at(gs::seconds(0));
    tot.end = gs::at(gs::seconds(10));
    tot.capacity_gpus = 1;
    const std::vector<std::string> names{"a", "b"};
    const auto s = gs::summarize(rs, {}, tot, names, {}, "x");
    REQUIRE(s.tenants.size() == 1);  // the tenants with jobs
    CHECK(s.tenants[0].name == "b");
    CHECK(s.tenants[0].finished == 0);
    CHECK(std::isnan(s.tenants[0].mean_jct_s));
  }

  TEST_CASE("JSON output escapes names and CSV has one row per run") {
    gs::sim_summary s;
    s.label = "a\"b\x01";
    gs::tenant_summary t;
    t.name = "vc\\1";
    s.tenants.push_back(t);
    std::ostringstream js;
    gs::write_summary_json(js, s);
    CHECK(js.str().find("\"label\": \"a\\\"b\\u0001\"") != std::string::npos);
    CHECK(js.str().find("\"name\": \"vc\\\\1\"") != std::string::npos);
    std::ostringstream csv;
    const std::vector<gs::sim_summary> runs{s, s};
    gs::write_summary_csv(csv, runs);
    std::size_t lines = 0;
    for (char c : csv.str()) lines += c == '\n';
    CHECK(lines == 3);
    // CSV cells holding a comma, a quote or a control character are quoted (RFC 4180), so a
    // name never adds a column or a row
    CHECK(csv.str().find("\n\"a\"\"b\x01\",") != std::string::npos);
    gs::sim_summary named;
    gs::tenant_summary odd, plain;
    odd.name = "vc,\"x\"\nnext";
    plain.name = "vc-2";
    named.tenants = {odd, plain};
    std::ostringstream tenants;
    gs::write_tenants_csv(tenants, named);
    const std::string text = tenants.str();
    CHECK(text.find("\n\"vc,\"\"x\"\"\nnext\",0,") != std::string::npos);
    CHECK(text.find("\nvc-2,0,") != std::string::npos);
    CHECK(gs::detail::csv_field("plain name") == "plain name");
  }

  TEST_CASE("weighted max-min fair shares: hand cases and the water-filling laws") {
    std::vector<double> out(3);
    const std::vector<double> d{2, 8, 8}, w1{1, 1, 1}, w2{1, 1, 2};
    gs::max_min_fair(10, d, w1, out);
    CHECK(out == std::vector<double>{2, 4, 4});
    gs::max_min_fair(10, d, w2, out);
    CHECK(out[0] == doctest::Approx(2));
    CHECK(out[1] == doctest::Approx(8.0 / 3));
    CHECK(out[2] == doctest::Approx(16.0 / 3));
    gs::max_min_fair(100, d, w1, out);  // enough for everyone
    CHECK(out == d);
    const auto seed = gs::seed_from_env(515);
    INFO("seed " << seed);
    gs::random_engine g(seed);
    for (int round = 0; round < 300; ++round) {
      const std::size_t n = 1 + gs::uniform_index(g, 7);
      std::vector<double> dem(n), wt(n), got(n);
      double dsum = 0;
      for (std::size_t i = 0; i < n; ++i) {
        dem[i] = static_cast<double>(gs::uniform_index(g, 20));
        wt[i] = 1.0 + static_cast<double>(gs::uniform_index(g, 4));
        dsum += dem[i];
      }
      const double cap = static_cast<double>(gs::uniform_index(g, 60));
      gs::max_min_fair(cap, dem, wt, got);
      double sum = 0, level = -1;
      for (std::size_t i = 0; i < n; ++i) {
        sum += got[i];
        CHECK(got[i] <= dem[i] + 1e-9);
        CHECK(got[i] >= 0);
        if (got[i] < dem[i] - 1e-9) {  // unsatisfied: all at one level
          if (level < 0) level = got[i] / wt[i];
          CHECK(got[i] / wt[i] == doctest::Approx(level));
        }
      }
      CHECK(sum == doctest::Approx(std::min(cap, dsum)));
      // a satisfied claimant wanted no more than the level of the unsatisfied ones
      for (std::size_t i = 0; i < n && level >= 0; ++i) {
        if (got[i] >= dem[i] - 1e-9) CHECK(dem[i] / wt[i] <= level + 1e-9);
      }
    }
  }

  TEST_CASE("fairness over time separates FIFO from DRF where whole-run shares cannot") {
    const auto fifo = two_tenants("fifo");
    const auto drf = two_tenants("drf");
    // FIFO: while both tenants have work (t < 200 s) A holds all 8 GPUs and B none: x = (2, 0).
    CHECK(fifo.jain_over_time == doctest::Approx(0.5));
    REQUIRE(fifo.tenants.size() == 2);
    CHECK(fifo.tenants[1].fair_ratio < fifo.tenants[0].fair_ratio);
    // DRF hands freed GPUs to the tenant with the smaller share, so B runs while A waits.
    CHECK(drf.jain_over_time > fifo.jain_over_time);
    // Every job finishes either way: whole-run shares (and so `jain`) are the same.
    CHECK(fifo.jain == doctest::Approx(drf.jain));
    MESSAGE("jain_over_time fifo " << fifo.jain_over_time << ", drf " << drf.jain_over_time);
  }
}

TEST_SUITE("metrics/report") {
  TEST_CASE("summary JSON is valid UTF-8 JSON: invalid bytes replaced, non-finite numbers null") {
    gs::sim_summary s;
    s.label = "caf\xE9";
    s.makespan_s = std::numeric_limits<double>::quiet_NaN();
    s.tenants.push_back({});
    s.tenants.back().name = "t\xFF";
    s.tenants.back().mean_jct_s = std::numeric_limits<double>::infinity();
    std::ostringstream os;
    gs::write_summary_json(os, s);
    const std::string j = os.str();
    CHECK(j.find("\"label\": \"caf\xEF\xBF\xBD\"") != std::string::npos);
    CHECK(gs::is_utf8(j));
    CHECK(j.find(": nan") == std::string::npos);
    CHECK(j.find(": inf") == std::string::npos);
    CHECK(j.find("\"makespan_s\": null") != std::string::npos);
    CHECK(j.find("\"mean_jct_s\": null") != std::string::npos);
    CHECK(j.find("\"name\": \"t\xEF\xBF\xBD\"") != std::string::npos);
    CHECK(gs::detail::json_string("ok \xC3\xA9") == "\"ok \xC3\xA9\"");
  }
  TEST_CASE("a tenant that finished no job has no mean JCT: null in JSON, empty in CSV, never 0") {
    gs::sim_summary s;
    s.tenants.push_back({});
    s.tenants.back().name = "idle";
    s.tenants.back().jobs = 3;
    s.tenants.back().finished = 0;
    s.tenants.back().mean_jct_s = 0;  // what summarize wrote before: a value that reads as data
    std::ostringstream js, csv;
    gs::write_summary_json(js, s);
    gs::write_tenants_csv(csv, s);
    CHECK(js.str().find("\"mean_jct_s\": null") != std::string::npos);
    CHECK(js.str().find("\"mean_jct_s\": 0") == std::string::npos);
    CHECK(csv.str().find("idle,3,0,0,0,0,,") != std::string::npos);
  }
}

}  // namespace metrics_metrics_test
