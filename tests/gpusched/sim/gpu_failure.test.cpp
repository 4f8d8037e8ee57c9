// SPDX-License-Identifier: Apache-2.0
// GPU-level failures: the ledger's per-GPU availability and the simulator's GPU failure events.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include <gpusched/check/invariants.hpp>
#include <gpusched/metrics/report.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/sim/simulator.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace sim_gpu_failure_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {
gs::sim_job gjob(unsigned id, double submit_s, double work_s, int gpus,
                 gs::checkpoint_info ck = {}) {
  gs::sim_job j;
  j.spec.id = gs::job_id{id};
  j.spec.submit = gs::at(gs::sim_duration{static_cast<std::int64_t>(submit_s * 1000)});
  j.spec.checkpoint = ck;
  j.spec.groups.push_back({.name = "w",
                           .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                       .cpu = 1_cores,
                                       .memory = 1_gib},
                           .count = 1});
  j.work = gs::sim_duration{static_cast<std::int64_t>(work_s * 1000)};
  return j;
}
double secs(gs::sim_time t) { return gs::to_seconds(t); }

// The GPUs job `id` holds now (empty when it is not running).
std::vector<gs::gpu_index> gpus_of(const gs::ledger& b, unsigned id) {
  std::vector<gs::gpu_index> out;
  if (const auto* r = b.find(gs::job_id{id})) {
    for (const auto& t : r->tasks) {
      for (const auto& g : t.gpus) out.push_back(g.gpu);
    }
  }
  return out;
}

std::vector<gs::sim_job> workload(std::uint64_t seed, std::size_t n) {
  gs::random_engine g(seed);
  std::vector<gs::sim_job> out;
  double t = 0;
  for (unsigned i = 1; i <= n; ++i) {
    t += static_cast<double>(gs::uniform_index(g, 30));
    gs::checkpoint_info ck;
    if (gs::uniform_index(g, 2) == 0) ck = {gs::seconds(50), {}, gs::seconds(2), gs::seconds(5)};
    const double work = 10.0 + static_cast<double>(gs::uniform_index(g, 400));
    const int gpus = 1 << gs::uniform_index(g, 4);  // one draw per statement
    out.push_back(gjob(i, t, work, gpus, ck));
  }
  return out;
}
}  // namespace

TEST_SUITE("sim/gpu_failure") {
  TEST_CASE("a failed GPU offers nothing, cannot fail while held, and returns idle on repair") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(1, 2)));
    const gs::gpu_index g0{0}, g1{1};
    gs::random_engine rng(1);
    gs::default_pipeline p;
    std::vector<gs::job_spec> pending{gjob(1, 0, 1, 1).spec};
    auto r = p.schedule(book, pending, gs::sim_time{}, rng);
    REQUIRE(r.decisions.at(0).kind == gs::verdict::admit);
    const auto held = r.decisions[0].placement.at(0).gpus[0].gpu;
    CHECK(book.jobs_on_gpu(held) == std::vector<gs::job_id>{gs::job_id{1}});
    CHECK_THROWS_AS(book.set_gpu_available(held, false), gs::invalid_value_error);
    CHECK(book.state().gpu_available(held));
    CHECK_THROWS_AS(book.set_gpu_available(gs::gpu_index{2}, false), gs::invalid_value_error);
    const auto other = held == g0 ? g1 : g0;
    book.set_gpu_available(other, false);
    book.set_gpu_available(other, false);  // idempotent
    const auto& c = book.state();
    CHECK_FALSE(c.gpu_available(other));
    CHECK(c.available(gs::node_index{0}));  // the node stays in service
    CHECK(c.failed_gpus() == 1);
    CHECK(c.unavailable_gpus() == 1);
    CHECK(c.unavailable_nodes() == 0);
    CHECK(c.total_free_whole_gpus() == 0);
    CHECK(c.max_free_share(gs::node_index{0}) == gs::milli_gpu{0});
    gs::task_allocation a;
    a.node = gs::node_index{0};
    a.cpu = 1_cores;
    gs::gpu_grant share;
    share.gpu = other;
    share.milli = gs::milli_gpu{500};
    a.gpus.push_back(share);
    CHECK_FALSE(c.can_apply(a));
    CHECK_THROWS_AS(book.configure_sharing(gs::node_index{0}, static_cast<int>(other.value()),
                                           gs::gpu_sharing::time_slicing, 2),
                    gs::invalid_value_error);
    auto rep = gs::check_invariants(book);
    CHECK_MESSAGE(rep.ok(), rep.to_string());
    // A second job waits: the only idle GPU has failed.
    pending = {gjob(2, 0, 1, 1).spec};
    r = p.schedule(book, pending, gs::sim_time{}, rng);
    CHECK(r.decisions.at(0).kind != gs::verdict::admit);
    // The node fails too, and returns while its GPU is still failed: counted once.
    book.release(gs::job_id{1});
    book.set_available(gs::node_index{0}, false);
    CHECK(c.unavailable_gpus() == 2);
    book.set_available(gs::node_index{0}, true);
    CHECK(c.unavailable_gpus() == 1);
    CHECK_FALSE(c.gpu_available(other));
    rep = gs::check_invariants(book);
    CHECK_MESSAGE(rep.ok(), rep.to_string());
    book.set_gpu_available(other, true);
    CHECK(c.unavailable_gpus() == 0);
    CHECK(c.failed_gpus() == 0);
    CHECK(c.total_free_whole_gpus() == 2);
    CHECK(c.can_apply(a));
    rep = gs::check_invariants(book);
    CHECK_MESSAGE(rep.ok(), rep.to_string());
  }

  TEST_CASE("a time limit ends a run that a job without checkpoints could never finish") {
    // One GPU fails every 4 h on average; job 1 needs 100 h on 2 GPUs with no checkpoint, so it
    // restarts from zero after every failure and (almost surely) never finishes. Job 2 (1 GPU,
    // 10 s, at t=0) finishes; job 3 arrives after the 2-day limit and is never counted.
    std::vector<gs::sim_job> jobs{gjob(1, 0, 100 * 3600.0, 2), gjob(2, 0, 10, 1),
                                  gjob(3, 3 * 86400.0, 10, 1)};
    gs::sim_config cfg;
    cfg.check_invariants = true;
    cfg.gpu_mtbf = gs::seconds(4 * 3600);
    cfg.gpu_repair_time = gs::seconds(600);
    cfg.sample_interval = gs::seconds(3600);
    cfg.time_limit = gs::seconds(2 * 86400);
    gs::simulator sim(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(1, 4)),
                      gs::default_pipeline{}, cfg);
    sim.run(gs::source_from(jobs));
    const auto& t = sim.totals();
    CHECK(t.stopped_at_limit);
    CHECK(secs(t.end) == 2 * 86400.0);
    REQUIRE(sim.records().size() == 2);  // job 3 never arrived
    CHECK(sim.records()[0].outcome == gs::job_outcome::unfinished);
    CHECK(sim.records()[0].failures > 0);
    CHECK(sim.records()[1].outcome == gs::job_outcome::finished);
    CHECK(t.gpu_failures > 0);
    // accounted up to the limit: held + down never exceed capacity x 2 days, samples stop there
    const double cap = 4.0 * 1000.0 * 2 * 86400e3;
    CHECK(t.allocated_integral + t.down_integral <= cap);
    CHECK(t.allocated_integral > 0.5 * cap);  // job 1 held 2 of 4 GPUs most of the time
    REQUIRE_FALSE(sim.samples().empty());
    CHECK(secs(sim.samples().back().t) == 2 * 86400.0);
    const auto s = gs::summarize(sim);
    CHECK(s.jobs == 2);
    CHECK(s.unfinished == 1);
    CHECK(s.finished == 1);

    gs::sim_config bad;
    bad.time_limit = gs::seconds(-1);
    CHECK_THROWS_AS(
        gs::simulator(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(1, 4)),
                      gs::default_pipeline{}, bad),
        gs::invalid_value_error);
  }

  TEST_CASE("a GPU failure: the job loses the work since its checkpoint and restarts elsewhere") {
    // One node, two GPUs. Job 1 (100 s, checkpoint every 30 s, restore 5 s) runs on one GPU,
    // which fails at t=50 (repair 40 s): it loses 20 s, restarts at once on the other GPU of the
    // same node (which stays in service), restores 5 s from progress 30 and finishes at
    // 55 + 70 = 125. Job 2 (arrives at 60) waits for the repair at 90 and runs 90..100.
    std::vector<gs::sim_job> jobs{
        gjob(1, 0, 100, 1, {gs::seconds(30), {}, gs::seconds(0), gs::seconds(5)}),
        gjob(2, 60, 10, 1)};
    gs::sim_config cfg;
    cfg.check_invariants = true;
    cfg.gpu_repair_time = gs::seconds(40);
    cfg.sample_interval = gs::sim_duration{0};
    gs::simulator sim(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(1, 2)),
                      gs::default_pipeline{}, cfg);
    const gs::gpu_index failing{0};
    sim.inject_gpu_failure(failing, gs::at(gs::seconds(50)));
    std::vector<std::string> log;
    bool first_on_failing = false;
    sim.set_observer([&](gs::sim_time t, const gs::ledger& b) {
      const double s = secs(t);
      const auto& c = b.state();
      if (s < 50) {
        first_on_failing = gpus_of(b, 1) == std::vector<gs::gpu_index>{failing};
      } else if (s < 90) {  // failed: nothing placed on it, the node is in service
        CHECK_MESSAGE(!c.gpu_available(failing), "t=" << s);
        CHECK_MESSAGE(b.jobs_on_gpu(failing).empty(), "t=" << s);
        CHECK(c.available(gs::node_index{0}));
        CHECK(c.unavailable_gpus() == 1);
        if (s < 125) CHECK(gpus_of(b, 1) == std::vector<gs::gpu_index>{gs::gpu_index{1}});
      } else {
        CHECK(c.gpu_available(failing));
      }
      if (s == 90) CHECK(gpus_of(b, 2) == std::vector<gs::gpu_index>{failing});
    });
    sim.run(gs::source_from(jobs));
    CHECK(first_on_failing);
    const auto& a = sim.records()[0];
    const auto& b = sim.records()[1];
    CHECK(a.outcome == gs::job_outcome::finished);
    CHECK(a.failures == 1);
    CHECK(a.starts == 2);
    CHECK(a.lost_failure_gpu_ms == doctest::Approx(20000));  // 20 s on one GPU
    CHECK(a.lost_preemption_gpu_ms == 0);
    CHECK(a.overhead_gpu_ms == doctest::Approx(5000));  // one restore
    CHECK(secs(*a.finish) == 125);
    CHECK(secs(*b.first_start) == 90);
    CHECK(secs(*b.finish) == 100);
    CHECK(sim.totals().gpu_failures == 1);
    CHECK(sim.totals().failures == 0);
    CHECK(sim.totals().down_integral == doctest::Approx(1000.0 * 40000));  // 1 GPU x 40 s
    CHECK(sim.book().state().failed_gpus() == 0);
    const auto s = gs::summarize(sim);
    CHECK(s.gpu_failures == 1);
    CHECK(s.lost_failure_gpu_hours == doctest::Approx(20.0 / 3600));
  }

  TEST_CASE(
      "random GPU and node failures: deterministic per seed, invariants, GPU time conserved") {
    const auto seed = gs::seed_from_env(5150);
    INFO("seed " << seed);
    const auto run = [](std::uint64_t sd, double& alloc, double& idle, double& down,
                        gs::sim_totals& tot) {
      auto jobs = workload(sd, 120);
      gs::sim_config cfg;
      cfg.seed = sd;
      cfg.check_invariants = true;  // throws on a violation (a grant on a failed GPU included)
      cfg.gpu_mtbf = gs::seconds(32 * 600);  // one GPU failure every ~600 s on 32 GPUs
      cfg.gpu_repair_time = gs::seconds(150);
      cfg.node_mtbf = gs::seconds(4 * 3000);
      cfg.repair_time = gs::seconds(200);
      gs::pipeline_config pc;
      pc.ordering = "fifo";
      gs::simulator<gs::any_pipeline> sim(
          gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(4, 8)), gs::make_pipeline(pc),
          cfg);
      gs::sim_time last{};
      bool first = true;
      std::int64_t idle_now = 0, down_now = 0;
      idle = down = 0;
      sim.set_observer([&](gs::sim_time t, const gs::ledger& b) {
        if (!first) {
          idle += static_cast<double>(idle_now) * static_cast<double>((t - last).count());
          down += static_cast<double>(down_now) * static_cast<double>((t - last).count());
        }
        first = false;
        last = t;
        idle_now = b.state().total_free_whole_gpus();
        down_now = b.state().unavailable_gpus();
      });
      sim.run(gs::source_from(jobs));
      tot = sim.totals();
      alloc = tot.allocated_integral / 1000.0;
      for (const auto& r : sim.records()) CHECK(r.outcome == gs::job_outcome::finished);
      std::ostringstream os;
      gs::write_jobs_csv(os, sim.records());
      return os.str();
    };
    double alloc = 0, idle = 0, down = 0;
    gs::sim_totals tot;
    const auto a = run(seed, alloc, idle, down, tot);
    CHECK(tot.gpu_failures > 0);
    MESSAGE("GPU failures " << tot.gpu_failures << ", node failures " << tot.failures);
    const double span = static_cast<double>((tot.end - tot.start).count());
    CHECK(alloc + idle + down == doctest::Approx(32.0 * span));
    CHECK(down == doctest::Approx(tot.down_integral / 1000.0));
    CHECK(a.find(",1,") != std::string::npos);  // some job saw a failure (failures column)
    double a2 = 0, i2 = 0, d2 = 0;
    gs::sim_totals t2;
    CHECK(run(seed, a2, i2, d2, t2) == a);
    CHECK(run(seed + 1, a2, i2, d2, t2) != a);
  }

  TEST_CASE("GPU failures on mixed nodes (MIG, shared GPUs) keep the invariants") {
    const auto seed = gs::seed_from_env(6160);
    INFO("seed " << seed);
    gs::random_engine g(seed);
    gs::cluster c(gs::basic_catalog(), gs::testing::random_nodes(g, 10));
    std::vector<gs::sim_job> jobs;
    for (unsigned i = 1; i <= 100; ++i) {
      gs::sim_job j;
      j.spec = gs::testing::random_job(g, c.catalog(), gs::job_id{i},
                                       gs::at(gs::seconds(static_cast<std::int64_t>(i) * 7)), 3);
      j.work = gs::seconds(20 + static_cast<std::int64_t>(gs::uniform_index(g, 300)));
      jobs.push_back(std::move(j));
    }
    gs::sim_config cfg;
    cfg.seed = seed;
    cfg.check_invariants = true;
    cfg.gpu_mtbf = gs::seconds(static_cast<std::int64_t>(c.gpu_count()) * 100);
    cfg.gpu_repair_time = gs::seconds(120);
    gs::pipeline_config pc;
    pc.ordering = "priority";
    gs::simulator<gs::any_pipeline> sim(std::move(c), gs::make_pipeline(pc), cfg);
    CHECK_NOTHROW(sim.run(gs::source_from(jobs)));
    CHECK(sim.totals().gpu_failures > 0);
    CHECK(sim.book().state().failed_gpus() == 0);  // every GPU repaired at the end
  }
}

}  // namespace sim_gpu_failure_test
