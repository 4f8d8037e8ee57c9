// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include <gpusched/metrics/report.hpp>
#include <gpusched/metrics/summary.hpp>

namespace gs = gpusched;

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
  }
}
