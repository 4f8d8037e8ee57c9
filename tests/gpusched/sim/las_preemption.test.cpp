// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gpusched/check/invariants.hpp>
#include <gpusched/metrics/report.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/policy/preemption/las.hpp>
#include <gpusched/sim/simulator.hpp>

#include "generators.hpp"
#include "preemption_fixtures.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace sim_las_preemption_test {

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
  j.spec.groups.push_back({.name = "w",
                           .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                       .cpu = 1_cores,
                                       .memory = 1_gib},
                           .count = 1});
  j.work = gs::sim_duration{static_cast<std::int64_t>(work_s * 1000)};
  return j;
}
double finish_of(const gs::job_record& r) { return gs::to_seconds(r.finish.value()); }
double start_of(const gs::job_record& r) { return gs::to_seconds(r.first_start.value()); }

/// Runs `gpus` whole GPUs of job `id` (submitted at `submit_s`) wherever first-fit puts them,
/// started at `start_s`.
void run_job(gs::ledger& book, unsigned id, double submit_s, int gpus, double start_s,
             bool preemptible = true) {
  auto j = las_job(id, submit_s, 10, gpus).spec;
  j.preemptible = preemptible;
  REQUIRE(gs::testing::run_anywhere(
      book, j, gs::at(gs::sim_duration{static_cast<std::int64_t>(start_s * 1000)})));
}

/// A probe that records what it was asked and says the preemptor fits once `need` victims go.
struct counting_probe {
  std::size_t need;
  std::vector<std::vector<gs::job_id>>* log;
  bool operator()(std::span<const gs::job_id> v) {
    log->emplace_back(v.begin(), v.end());
    return v.size() >= need;
  }
};

/// 2D-LAS as Tiresias runs it: LAS order and LAS-queue preemption over one shared record.
/// (Both read attained service from the pipeline's job history, which the simulator feeds.)
gs::any_pipeline tiresias_las() {
  return gs::any_pipeline(gs::las_ordering(), gs::make_admission_policy("gang"),
                          gs::make_packing_policy("first-fit"),
                          gs::make_placement_policy("first-fit"), gs::las_preemption());
}
}  // namespace

TEST_SUITE("sim/las_preemption") {
  TEST_CASE("the simulator credits a preempted job with the GPU-seconds it held") {
    // Job 1 (4 GPUs) runs from 0; urgent job 2 takes the node at t=10 (priority preemption).
    std::vector<gs::sim_job> jobs{las_job(1, 0, 100, 4), las_job(2, 10, 5, 4, 1)};
    gs::simulator sim(one_node());
    const gs::service_record* rec = &sim.pipeline().history().service;
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
    gs::sim_config cfg;
    cfg.preemption_saves_progress = true;  // Tiresias' assumption
    cfg.check_invariants = true;
    gs::simulator<gs::any_pipeline> sim(one_node(), tiresias_las(), cfg);
    sim.run(gs::source_from(jobs));
    CHECK(start_of(sim.records()[1]) == 1000);
    CHECK(finish_of(sim.records()[1]) == 1100);
    CHECK(sim.records()[0].preemptions == 1);
    CHECK(finish_of(sim.records()[0]) == 2100);  // resumed where it stopped
  }

  TEST_CASE("a running job still in the first queue is not preempted by a newcomer") {
    // At t=500 job 1 has 2000 GPU-s: same queue as the newcomer, which waits.
    std::vector<gs::sim_job> jobs{las_job(1, 0, 2000, 4), las_job(2, 500, 100, 4)};
    gs::simulator<gs::any_pipeline> sim(one_node(), tiresias_las());
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
      gs::sim_config cfg;
      cfg.check_invariants = true;  // throws on a violation after any event
      cfg.preemption_saves_progress = gs::uniform_index(g, 2) == 0;
      cfg.seed = seed;
      gs::simulator<gs::any_pipeline> sim(one_node(4, 3), tiresias_las(), cfg);
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
    gs::sim_config cfg;
    cfg.preemption_saves_progress = true;
    cfg.check_invariants = true;
    gs::simulator<gs::any_pipeline> sim(
        one_node(),
        gs::any_pipeline(gs::srtf_ordering(true), gs::make_admission_policy("gang"),
                         gs::make_packing_policy("first-fit"),
                         gs::make_placement_policy("first-fit"), gs::srtf_preemption(true)),
        cfg);
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

  TEST_CASE("within a cycle the kept ranking follows ledger, record and clock changes") {
    // Each step below changes one input of the running jobs' queues after a first select in
    // the same cycle; a kept ranking that ignored that input would answer no_victims again.
    auto rec = std::make_shared<gs::service_record>();
    gs::ledger book(one_node(4, 2));
    run_job(book, 1, 0, 2, 0);  // attained 2 GPUs x now: queue 0 until t = 1800
    gs::random_engine rng(1);
    const auto newcomer = las_job(9, 50, 10, 4).spec;
    std::vector<std::vector<gs::job_id>> log;
    counting_probe probe{1, &log};
    gs::las_preemption p(rec);
    const gs::schedule_context at100(book, gs::at(gs::seconds(100)), rng);
    p.begin_cycle(at100);
    CHECK(p.select(at100, newcomer, probe).why.code == gs::reason_code::no_victims);
    CHECK(log.empty());

    // ledger: a demoted job starts (rec: 5,000 GPU-s) - it is a victim at once
    rec->add(gs::job_id{2}, 5000, gs::seconds(2500));
    p.begin_cycle(at100);
    CHECK(p.select(at100, newcomer, probe).why.code == gs::reason_code::no_victims);
    run_job(book, 2, 10, 2, 100);
    auto plan = p.select(at100, newcomer, probe);
    REQUIRE(plan.victims.size() == 1);
    CHECK(plan.victims[0] == gs::job_id{2});

    // record: job 1 is credited past the threshold while the ledger stays as it is
    book.release(gs::job_id{2});
    p.begin_cycle(at100);
    CHECK(p.select(at100, newcomer, probe).victims.empty());
    rec->add(gs::job_id{1}, 4000, gs::seconds(2000));
    plan = p.select(at100, newcomer, probe);
    REQUIRE(plan.victims.size() == 1);
    CHECK(plan.victims[0] == gs::job_id{1});

    // clock: job 3 passes 3,600 GPU-s between t = 100 and t = 2,000 (2 GPUs x 1,800 s)
    book.release(gs::job_id{1});
    run_job(book, 3, 0, 2, 0);
    rec->add(gs::job_id{5}, 9000, gs::seconds(4500));  // for the other ledger below
    p.begin_cycle(at100);
    CHECK(p.select(at100, newcomer, probe).victims.empty());
    const gs::schedule_context at2000(book, gs::at(gs::seconds(2000)), rng);
    plan = p.select(at2000, newcomer, probe);
    REQUIRE(plan.victims.size() == 1);
    CHECK(plan.victims[0] == gs::job_id{3});

    // another ledger with the same version, clock and record is not mistaken for the first
    gs::ledger other(one_node(4, 2));
    run_job(other, 4, 0, 2, 0);
    run_job(other, 5, 0, 2, 0);
    other.release(gs::job_id{4});
    run_job(other, 6, 0, 1, 0);
    run_job(other, 7, 0, 1, 0);
    REQUIRE(other.version() == book.version());
    const gs::schedule_context other_ctx(other, gs::at(gs::seconds(2000)), rng);
    plan = p.select(other_ctx, newcomer, probe);
    REQUIRE(plan.victims.size() == 1);
    CHECK(plan.victims[0] == gs::job_id{5});
  }

  TEST_CASE("a policy keeping its ranking within a cycle plans and probes as ranking afresh") {
    // Random running jobs with random attained service / estimates; many preemptors per cycle.
    // Property: the kept ranking (begin_cycle once) probes only prefixes of the candidate list
    // an independent oracle builds afresh (filter rank > preemptor's, sort by rank, submit, id,
    // all descending), and plans its shortest fitting prefix - as before the kept ranking.
    const auto seed = gs::seed_from_env(8004);
    MESSAGE("seed " << seed);
    gs::random_engine g(seed);
    const std::vector<double> thresholds{600.0, 3600.0, 20000.0};
    std::size_t placed = 0, refused = 0;
    for (int round = 0; round < 20; ++round) {
      auto rec = std::make_shared<gs::service_record>();
      gs::ledger book(one_node(8, 4));
      const gs::sim_time now = gs::at(gs::seconds(10'000));
      unsigned id = 1;
      for (int k = 0; k < 40; ++k, ++id) {
        // one random draw per statement (argument evaluation order is unspecified)
        const auto submit = static_cast<double>(gs::uniform_index(g, 3));
        const int gpus = 1 << gs::uniform_index(g, 2);
        auto j = las_job(id, submit, 10, gpus).spec;
        j.preemptible = gs::uniform_index(g, 5) != 0;
        if (gs::uniform_index(g, 4) != 0) {
          j.expected_duration = gs::seconds(static_cast<std::int64_t>(gs::uniform_index(g, 9000)));
        }
        const auto start = now - gs::seconds(static_cast<std::int64_t>(gs::uniform_index(g, 5000)));
        if (!gs::testing::run_anywhere(book, j, start)) continue;
        const auto attained = static_cast<double>(gs::uniform_index(g, 30000));
        rec->add(j.id, attained,
                 gs::seconds(static_cast<std::int64_t>(gs::uniform_index(g, 3000))));
      }
      // the preemptors' attained service is recorded before the cycle (the simulator changes
      // the record only between cycles); a record change would rebuild the ranking
      std::vector<gs::job_spec> preemptors;
      for (int q = 0; q < 30; ++q, ++id) {
        auto pre = las_job(id, 5, 10, 1 + static_cast<int>(gs::uniform_index(g, 8))).spec;
        if (gs::uniform_index(g, 4) != 0) {
          pre.expected_duration =
              gs::seconds(static_cast<std::int64_t>(gs::uniform_index(g, 9000)));
        }
        rec->add(pre.id, static_cast<double>(gs::uniform_index(g, 30000)), gs::seconds(0));
        preemptors.push_back(pre);
      }
      gs::random_engine rng(1);
      const gs::schedule_context ctx(book, now, rng);
      gs::las_preemption las(rec, thresholds);
      gs::srtf_preemption srsf(rec, true);
      las.begin_cycle(ctx);
      srsf.begin_cycle(ctx);
      // the oracle: candidates ranked above `mine`, in eviction order, built afresh
      const auto oracle = [&](auto rank_of, double mine) {
        struct c {
          double rank;
          gs::sim_time submit;
          gs::job_id id;
        };
        std::vector<c> cs;
        for (const auto& r : book.running()) {
          const double rk = rank_of(r);
          if (r.spec.preemptible && rk > mine) cs.push_back({rk, r.spec.submit, r.spec.id});
        }
        std::sort(cs.begin(), cs.end(), [](const c& a, const c& b) {
          return std::tie(a.rank, a.submit, a.id) > std::tie(b.rank, b.submit, b.id);
        });
        std::vector<gs::job_id> ids;
        for (const auto& x : cs) ids.push_back(x.id);
        return ids;
      };
      const auto check = [&](const gs::preemption_plan& plan, const std::vector<gs::job_id>& want,
                             const std::vector<std::vector<gs::job_id>>& log, std::size_t need) {
        for (const auto& v : log) {
          REQUIRE(v.size() <= want.size());
          CHECK(std::equal(v.begin(), v.end(), want.begin()));
        }
        if (need <= want.size()) {
          ++placed;
          CHECK(plan.victims ==
                std::vector<gs::job_id>(want.begin(),
                                        want.begin() + static_cast<std::ptrdiff_t>(need)));
        } else {
          ++refused;
          CHECK(plan.victims.empty());
          CHECK(plan.why.code == gs::reason_code::no_victims);
          CHECK(plan.why.available == static_cast<std::int64_t>(want.size()));
        }
      };
      for (const auto& pre : preemptors) {
        const std::size_t need = 1 + gs::uniform_index(g, 12);
        std::vector<std::vector<gs::job_id>> log;
        counting_probe probe{need, &log};
        const auto a = las.select(ctx, pre, probe);
        check(a,
              oracle(
                  [&](const gs::running_job& r) {
                    return static_cast<double>(las.queue_of(las.attained(r, now)));
                  },
                  static_cast<double>(las.queue_of(las.attained(pre)))),
              log, need);
        log.clear();
        const auto b = srsf.select(ctx, pre, probe);
        check(b,
              oracle([&](const gs::running_job& r) { return srsf.remaining(r, now); },
                     srsf.remaining(pre)),
              log, need);
      }
    }
    CHECK(placed > 100);  // both outcomes are exercised
    CHECK(refused > 100);
  }
}

}  // namespace sim_las_preemption_test
