// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gpusched/check/invariants.hpp>
#include <gpusched/metrics/report.hpp>
#include <gpusched/pipeline/any_policy.hpp>
#include <gpusched/policy/preemption/las.hpp>
#include <gpusched/sim/simulator.hpp>

#include "generators.hpp"

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {
gs::cluster one_node(int gpus = 4, std::size_t nodes = 1) {
  return gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(nodes, gpus));
}
gs::sim_job las_job(unsigned id, double submit_s, double work_s, int gpus, int priority = 0) {
  gs::sim_job j;
  j.spec.id = gs::job_id{id};
  j.spec.submit = gs::at(gs::sim_duration{static_cast<std::int64_t>(submit_s * 1000)});
  j.spec.priority = priority;
  j.spec.groups.push_back(
      {"w", {gs::gpu_demand::whole(gs::gpu_count{gpus}), 1_cores, 1_gib, {}}, 1, -1});
  j.work = gs::sim_duration{static_cast<std::int64_t>(work_s * 1000)};
  return j;
}
double finish_of(const gs::job_record& r) { return gs::to_seconds(r.finish.value()); }
double start_of(const gs::job_record& r) { return gs::to_seconds(r.first_start.value()); }

/// 2D-LAS as Tiresias runs it: LAS order and LAS-queue preemption over one shared record.
gs::any_pipeline tiresias_las(const std::shared_ptr<gs::service_record>& rec) {
  return gs::any_pipeline(gs::las_ordering(rec), gs::make_admission_policy("gang"),
                          gs::make_packing_policy("first-fit"),
                          gs::make_placement_policy("first-fit"), gs::las_preemption(rec));
}
}  // namespace

TEST_SUITE("sim/las_preemption") {
  TEST_CASE("the simulator credits a preempted job with the GPU-seconds it held") {
    // Job 1 (4 GPUs) runs from 0; urgent job 2 takes the node at t=10 (priority preemption).
    std::vector<gs::sim_job> jobs{las_job(1, 0, 100, 4), las_job(2, 10, 5, 4, 1)};
    auto rec = std::make_shared<gs::service_record>();
    gs::simulator sim(one_node());
    sim.set_service_record(rec);
    double at10 = -1;
    gs::sim_duration exec10{-1};
    sim.set_observer([&](gs::sim_time t, const gs::ledger&) {
      if (t == gs::at(gs::seconds(10))) {
        at10 = rec->gpu_seconds(gs::job_id{1});
        exec10 = rec->executed(gs::job_id{1});
      }
    });
    sim.run(gs::source_from(jobs));
    CHECK(sim.records()[0].preemptions == 1);
    CHECK(at10 == doctest::Approx(40.0));  // 4 GPUs x 10 s
    CHECK(exec10 == gs::seconds(10));
    CHECK(rec->gpu_seconds(gs::job_id{1}) == 0.0);  // finished jobs are forgotten
  }

  TEST_CASE("a job demoted past 3600 GPU-seconds gives way to a newcomer under 2D-LAS") {
    // Job 1: 4 GPUs x 2000 s, demoted at t=900 (3600 GPU-s). Job 2 arrives at t=1000.
    std::vector<gs::sim_job> jobs{las_job(1, 0, 2000, 4), las_job(2, 1000, 100, 4)};
    auto rec = std::make_shared<gs::service_record>();
    gs::sim_config cfg;
    cfg.preemption_saves_progress = true;  // Tiresias' assumption
    cfg.check_invariants = true;
    gs::simulator<gs::any_pipeline> sim(one_node(), tiresias_las(rec), cfg);
    sim.set_service_record(rec);
    sim.run(gs::source_from(jobs));
    CHECK(start_of(sim.records()[1]) == 1000);
    CHECK(finish_of(sim.records()[1]) == 1100);
    CHECK(sim.records()[0].preemptions == 1);
    CHECK(finish_of(sim.records()[0]) == 2100);  // resumed where it stopped
  }

  TEST_CASE("a running job still in the first queue is not preempted by a newcomer") {
    // At t=500 job 1 has 2000 GPU-s: same queue as the newcomer, which waits.
    std::vector<gs::sim_job> jobs{las_job(1, 0, 2000, 4), las_job(2, 500, 100, 4)};
    auto rec = std::make_shared<gs::service_record>();
    gs::simulator<gs::any_pipeline> sim(one_node(), tiresias_las(rec));
    sim.set_service_record(rec);
    sim.run(gs::source_from(jobs));
    CHECK(sim.records()[0].preemptions == 0);
    CHECK(start_of(sim.records()[1]) == 2000);
  }

  TEST_CASE("victims are taken from the lowest queue and the latest submit first") {
    // Two demoted jobs hold two GPUs each; a newcomer needs two: the later-submitted goes.
    auto rec = std::make_shared<gs::service_record>();
    rec->add(gs::job_id{1}, 5000, gs::seconds(2500));
    rec->add(gs::job_id{2}, 5000, gs::seconds(2500));
    gs::ledger book(one_node());
    const auto place = [&](unsigned id, double submit_s) {
      auto j = las_job(id, submit_s, 10, 2).spec;
      gs::random_engine rng(1);
      const gs::schedule_context ctx(book, gs::at(gs::seconds(0)), rng);
      const auto a = gs::first_fit_packing{}.pack(ctx, j.groups[0].request);
      REQUIRE(a.has_value());
      auto tx = book.begin();
      REQUIRE(tx.place(*a));
      tx.commit(j, gs::at(gs::seconds(0)));
    };
    place(1, 0);
    place(2, 5);
    gs::random_engine rng(1);
    const gs::schedule_context ctx(book, gs::at(gs::seconds(10)), rng);
    gs::las_preemption p(rec);
    const auto newcomer = las_job(3, 10, 10, 2).spec;
    std::vector<std::vector<gs::job_id>> probed;
    auto probe = [&](std::span<const gs::job_id> v) {
      probed.emplace_back(v.begin(), v.end());
      return !v.empty();  // any one victim frees two GPUs
    };
    const auto plan = p.select(ctx, newcomer, probe);
    REQUIRE(plan.victims.size() == 1);
    CHECK(plan.victims[0] == gs::job_id{2});
    CHECK(plan.why.code == gs::reason_code::placed_by_preemption);
    // A newcomer with 4,000 GPU-s attained is in the same queue as the running jobs: no victims.
    rec->add(gs::job_id{4}, 4000, gs::seconds(1000));
    const auto peer = las_job(4, 10, 10, 2).spec;
    CHECK(p.select(ctx, peer, probe).victims.empty());
  }

  TEST_CASE("random workloads under 2D-LAS keep the invariants and finish every job") {
    const auto seed = gs::seed_from_env(8003);
    MESSAGE("seed " << seed);
    gs::random_engine g(seed);
    for (int round = 0; round < 5; ++round) {
      std::vector<gs::sim_job> jobs;
      double t = 0;
      for (unsigned i = 1; i <= 120; ++i) {
        t += static_cast<double>(gs::uniform_index(g, 200));
        const int gpus = 1 << gs::uniform_index(g, 3);
        jobs.push_back(las_job(i, t, 10.0 + static_cast<double>(gs::uniform_index(g, 3000)), gpus));
      }
      auto rec = std::make_shared<gs::service_record>();
      gs::sim_config cfg;
      cfg.check_invariants = true;  // throws on a violation after any event
      cfg.preemption_saves_progress = gs::uniform_index(g, 2) == 0;
      cfg.seed = seed;
      gs::simulator<gs::any_pipeline> sim(one_node(4, 3), tiresias_las(rec), cfg);
      sim.set_service_record(rec);
      sim.run(gs::source_from(jobs));
      std::size_t finished = 0;
      for (const auto& r : sim.records()) finished += r.outcome == gs::job_outcome::finished;
      CHECK(finished == jobs.size());
      CHECK(gs::check_invariants(sim.book()).ok());
      CHECK(sim.book().running().empty());
    }
  }

  TEST_CASE("preemptive SRSF: a job with less remaining service preempts, never the reverse") {
    // Job 1: 4 GPUs x 1000 s (estimate known). Job 2 at t=100: 4 GPUs x 50 s -> 200 GPU-s left
    // against job 1's 3,600: job 1 is preempted, job 2 runs 100..150, job 1 resumes.
    const auto with_estimate = [](gs::sim_job j) {
      j.spec.expected_duration = j.work;
      return j;
    };
    std::vector<gs::sim_job> jobs{with_estimate(las_job(1, 0, 1000, 4)),
                                  with_estimate(las_job(2, 100, 50, 4)),
                                  with_estimate(las_job(3, 200, 900, 4))};
    auto rec = std::make_shared<gs::service_record>();
    gs::sim_config cfg;
    cfg.preemption_saves_progress = true;
    cfg.check_invariants = true;
    gs::simulator<gs::any_pipeline> sim(
        one_node(),
        gs::any_pipeline(gs::srtf_ordering(rec, true), gs::make_admission_policy("gang"),
                         gs::make_packing_policy("first-fit"),
                         gs::make_placement_policy("first-fit"), gs::srtf_preemption(rec, true)),
        cfg);
    sim.set_service_record(rec);
    sim.run(gs::source_from(jobs));
    CHECK(start_of(sim.records()[1]) == 100);
    CHECK(finish_of(sim.records()[1]) == 150);
    CHECK(sim.records()[0].preemptions == 1);
    // Job 3 (3,600 GPU-s left) arrives while job 1 has 850 s x 4 = 3,400 left: no preemption,
    // and job 3 waits for job 1 (resumed at 150, done at 1050).
    CHECK(finish_of(sim.records()[0]) == 1050);
    CHECK(start_of(sim.records()[2]) == 1050);
    CHECK(sim.records()[2].preemptions == 0);

    // Unit: victims have strictly more remaining service, largest first; no estimate = infinite.
    auto rec2 = std::make_shared<gs::service_record>();
    gs::ledger book(one_node(4));
    const auto place = [&](gs::job_spec j) {
      gs::random_engine rng(1);
      const gs::schedule_context ctx(book, gs::at(gs::seconds(0)), rng);
      const auto a = gs::first_fit_packing{}.pack(ctx, j.groups[0].request);
      REQUIRE(a.has_value());
      auto tx = book.begin();
      REQUIRE(tx.place(*a));
      tx.commit(std::move(j), gs::at(gs::seconds(0)));
    };
    auto a = las_job(1, 0, 100, 1).spec;
    a.expected_duration = gs::seconds(100);
    auto b = las_job(2, 0, 100, 1).spec;
    b.expected_duration = gs::seconds(400);
    auto c = las_job(3, 0, 100, 1).spec;  // no estimate
    place(a);
    place(b);
    place(c);
    gs::random_engine rng(1);
    const gs::schedule_context ctx(book, gs::at(gs::seconds(50)), rng);
    gs::srtf_preemption p(rec2);
    CHECK(p.remaining(*book.find(gs::job_id{2}), ctx.now()) == doctest::Approx(350));
    auto newcomer = las_job(9, 50, 100, 2).spec;
    newcomer.expected_duration = gs::seconds(100);
    std::vector<std::vector<gs::job_id>> probed;
    auto probe = [&](std::span<const gs::job_id> v) {
      probed.emplace_back(v.begin(), v.end());
      return v.size() >= 1;  // one free GPU + one victim's
    };
    const auto plan = p.select(ctx, newcomer, probe);
    REQUIRE(plan.victims.size() == 1);
    CHECK(plan.victims[0] == gs::job_id{3});  // infinite remaining goes first
    // Candidates were 3 then 2 (job 1 has 50 s left < 100): a probe never saw job 1.
    for (const auto& v : probed) {
      for (const auto id : v) CHECK(id != gs::job_id{1});
    }
    auto unknown = las_job(10, 50, 100, 2).spec;  // no estimate: never preempts
    CHECK(p.select(ctx, unknown, probe).victims.empty());
  }
}
