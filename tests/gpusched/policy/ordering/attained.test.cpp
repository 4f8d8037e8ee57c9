// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <gpusched/policy/ordering/las.hpp>
#include <gpusched/policy/ordering/themis.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_ordering_attained_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

std::string data_file(const char* name) {
  // not from __FILE__: a compiler cache with a base directory makes it relative to the build
  // directory, which is not the directory CTest runs the test in
  return std::string(GPUSCHED_TEST_DATA_DIR "/tiresias/") + name;
}

gs::job_spec job(unsigned id, int gpus, int submit_s, std::optional<int> duration_s = {}) {
  gs::job_spec j;
  j.id = gs::job_id{id};
  j.submit = gs::at(gs::seconds(submit_s));
  if (duration_s) j.expected_duration = gs::seconds(*duration_s);
  j.groups.push_back({.name = "w",
                      .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                  .cpu = 1_cores,
                                  .memory = 1_gib},
                      .count = 1});
  return j;
}

// Gittins index straight from the definition, O(samples).
double naive_gittins(std::span<const double> v, double a, double d) {
  double alive = 0, done = 0, spent = 0;
  for (double s : v) {
    if (s <= a) continue;
    alive += 1;
    if (s <= a + d) done += 1;
    spent += std::min(s - a, d);
  }
  return alive == 0 ? 0.0 : done / spent;
}

}  // namespace

TEST_SUITE("policy/ordering/attained") {
  TEST_CASE("2D-LAS puts jobs below the threshold first and is FIFO inside a queue") {
    auto rec = std::make_shared<gs::service_record>();
    rec->add(gs::job_id{1}, 5000.0, gs::seconds(1250));  // above 3600 GPU-s: queue 1
    rec->add(gs::job_id{2}, 3599.0, gs::seconds(900));   // queue 0
    gs::las_ordering las(rec);
    CHECK(las.queue_of(0) == 0);
    CHECK(las.queue_of(3599.9) == 0);
    CHECK(las.queue_of(3600) == 1);  // at the threshold: demoted
    gs::las_ordering three(rec, {100, 1000});
    CHECK(three.queue_of(99) == 0);
    CHECK(three.queue_of(100) == 1);
    CHECK(three.queue_of(999) == 1);
    CHECK(three.queue_of(5000) == 2);
    const std::vector<gs::job_spec> jobs = {job(1, 4, 0), job(2, 4, 5), job(3, 1, 9)};
    std::vector<const gs::job_spec*> q = {&jobs[0], &jobs[1], &jobs[2]};
    gs::random_engine g(1);
    gs::ledger book;
    las.order(gs::schedule_context(book, {}, g), q);
    CHECK(q[0]->id == gs::job_id{2});  // queue 0, submitted before job 3
    CHECK(q[1]->id == gs::job_id{3});
    CHECK(q[2]->id == gs::job_id{1});  // demoted
    // the time-based (1D) variant uses executed seconds: 1250 s and 900 s are both below 3600
    gs::las_ordering dlas(rec, {3600}, gs::service_measure::time);
    dlas.order(gs::schedule_context(book, {}, g), q);
    CHECK(q[0]->id == gs::job_id{1});
    CHECK_THROWS_WITH_AS(gs::las_ordering(rec, {100, 100}), doctest::Contains("field 'thresholds'"),
                         gs::invalid_value_error);
    CHECK_THROWS_AS(gs::las_ordering(rec, {-1}), gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(rec->add(gs::job_id{4}, -1.0, {}),
                         doctest::Contains("job 4: field 'gpu_seconds'"), gs::invalid_value_error);
  }

  TEST_CASE("the Gittins index from the Tiresias yarn prior matches its definition") {
    const auto prior = gs::gpu_time_prior::load_csv(data_file("yarn-gput1000.csv"));
    REQUIRE(prior.size() == 1001);
    CHECK(prior.samples().front() == 121);
    CHECK(prior.samples().back() == 53294624);
    CHECK(prior.quantile(0.5) == 2227);  // the median: nearest rank 501 of 1001
    const double inf = std::numeric_limits<double>::infinity();
    for (double a : {0.0, 120.0, 500.0, 2227.0, 3599.0, 50000.0, 1e7}) {
      for (double d : {1.0, 100.0, 3600.0 - std::min(a, 3599.0), 1e5, inf}) {
        CAPTURE(a);
        CAPTURE(d);
        CHECK(prior.gittins_index(a, d) ==
              doctest::Approx(naive_gittins(prior.samples(), a, d)).epsilon(1e-9));
      }
    }
    CHECK(prior.gittins_index(6e7, inf) == 0);  // outlived every sample
    // Heavy tail: a fresh job has a higher index than one that already ran 1,000 GPU-s in the
    // same queue (values from the definition: 2.87e-4 vs 2.55e-4).
    CHECK(prior.gittins_index(0, 3600) == doctest::Approx(2.8749e-4).epsilon(1e-3));
    CHECK(prior.gittins_index(1000, 2600) == doctest::Approx(2.5465e-4).epsilon(1e-3));
    auto rec = std::make_shared<gs::service_record>();
    rec->add(gs::job_id{1}, 1000, gs::seconds(250));
    gs::gittins_ordering git(std::make_shared<gs::gpu_time_prior>(prior), rec);
    const std::vector<gs::job_spec> jobs = {job(1, 4, 0), job(2, 4, 5)};
    std::vector<const gs::job_spec*> q = {&jobs[0], &jobs[1]};
    gs::random_engine g(1);
    gs::ledger book;
    git.order(gs::schedule_context(book, {}, g), q);
    CHECK(q[0]->id == gs::job_id{2});  // higher index although submitted later
    CHECK(git.index(jobs[1]) > git.index(jobs[0]));
  }

  TEST_CASE("a malformed prior file is reported with file line and field") {
    const std::string path = "gpusched_bad_prior.csv";
    {
      std::ofstream out(path);
      out << "duration\n121\n\n-5\n";
    }
    CHECK_THROWS_WITH_AS(gs::gpu_time_prior::load_csv(path),
                         doctest::Contains("gpusched_bad_prior.csv:4: field 'duration'"),
                         gs::parse_error);
    {
      std::ofstream out(path);
      out << "duration\n12x\n";
    }
    CHECK_THROWS_WITH_AS(gs::gpu_time_prior::load_csv(path),
                         doctest::Contains(":2: field 'duration'"), gs::parse_error);
    {
      std::ofstream out(path);  // no header line: its first sample would have been dropped
      out << "121\n300\n";
    }
    CHECK_THROWS_WITH_AS(gs::gpu_time_prior::load_csv(path),
                         doctest::Contains(":1: field 'header': '121' is a number"),
                         gs::parse_error);
    std::remove(path.c_str());
    CHECK_THROWS_AS(gs::gpu_time_prior::load_csv("/nonexistent/prior.csv"), gs::parse_error);
    CHECK_THROWS_AS(gs::gpu_time_prior(std::vector<double>{}), gs::invalid_value_error);
  }

  TEST_CASE(
      "srtf and srsf order by remaining time and remaining service with unknown durations last") {
    auto rec = std::make_shared<gs::service_record>();
    rec->add(gs::job_id{1}, 0, gs::seconds(900));
    const std::vector<gs::job_spec> jobs = {job(1, 8, 0, 1000), job(2, 1, 0, 500), job(3, 1, 0)};
    std::vector<const gs::job_spec*> q = {&jobs[2], &jobs[1], &jobs[0]};
    gs::random_engine g(1);
    gs::ledger book;
    gs::srtf_ordering(rec).order(gs::schedule_context(book, {}, g), q);
    CHECK(q[0]->id == gs::job_id{1});  // 100 s left
    CHECK(q[1]->id == gs::job_id{2});  // 500 s
    CHECK(q[2]->id == gs::job_id{3});  // unknown
    gs::srtf_ordering srsf(rec, true);
    CHECK(srsf.name() == "srsf");
    srsf.order(gs::schedule_context(book, {}, g), q);
    CHECK(q[0]->id == gs::job_id{2});  // 500 GPU-s < 8 x 100 GPU-s
  }

  TEST_CASE("finish-time fairness serves the job whose rho is largest") {
    gs::random_engine g(1);
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(2, 8)));  // 16 GPUs
    std::vector<gs::job_spec> jobs = {job(1, 2, 0, 1000), job(2, 2, 900, 100), job(3, 16, 0, 1000)};
    jobs[1].tenant = gs::tenant_id{1};
    jobs[2].tenant = gs::tenant_id{2};
    std::vector<const gs::job_spec*> q = {&jobs[0], &jobs[1], &jobs[2]};
    gs::finish_time_fairness_ordering th;
    const gs::schedule_context ctx(book, gs::at(gs::seconds(1000)), g);
    th.order(ctx, q);
    REQUIRE(th.contenders() == 3);
    // N = 3 tenants, fair share 16/3 GPUs. Job 1: (1000 + 1000) / 1000 = 2. Job 2: (100 + 100) /
    // 100 = 2, ties go FIFO. Job 3 needs 16 > 16/3: isolated 3000 s, rho = 2000/3000.
    CHECK(th.rho(ctx, jobs[0], 3) == doctest::Approx(2.0));
    CHECK(th.rho(ctx, jobs[1], 3) == doctest::Approx(2.0));
    CHECK(th.rho(ctx, jobs[2], 3) == doctest::Approx(2.0 / 3));
    CHECK(q[0]->id == gs::job_id{1});
    CHECK(q[1]->id == gs::job_id{2});
    CHECK(q[2]->id == gs::job_id{3});
  }
}

}  // namespace policy_ordering_attained_test
