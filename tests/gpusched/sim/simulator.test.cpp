// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gpusched/metrics/report.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/policy/preemption/checkpoint_aware.hpp>
#include <gpusched/sim/simulator.hpp>
#include <gpusched/trace/synthetic.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace sim_simulator_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {
gs::cluster small_cluster(std::size_t nodes = 2, int gpus = 4) {
  return gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(nodes, gpus));
}
gs::sim_job job(unsigned id, double submit_s, double work_s, int gpus, int priority = 0,
                gs::checkpoint_info ck = {}) {
  gs::sim_job j;
  j.spec.id = gs::job_id{id};
  j.spec.submit = gs::at(gs::sim_duration{static_cast<std::int64_t>(submit_s * 1000)});
  j.spec.priority = priority;
  j.spec.checkpoint = ck;
  j.spec.groups.push_back({.name = "w",
                           .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                       .cpu = 1_cores,
                                       .memory = 1_gib},
                           .count = 1});
  j.work = gs::sim_duration{static_cast<std::int64_t>(work_s * 1000)};
  return j;
}
double finish_s(const gs::job_record& r) { return gs::to_seconds(r.finish.value()); }
/// Checkpoint-aware preemption, with the growth step on or off.
auto shrinking_pipeline(bool grow) {
  auto p = gs::make_pipeline(gs::checkpoint_aware_preemption{});
  p.set_options({.grow = grow, .max_grown_tasks = -1, .grow_while_waiting = false});
  return p;
}
double start_s(const gs::job_record& r) { return gs::to_seconds(r.first_start.value()); }

// A seeded random workload of whole-GPU jobs with priorities and checkpoints.
std::vector<gs::sim_job> random_workload(std::uint64_t seed, std::size_t n) {
  gs::random_engine g(seed);
  std::vector<gs::sim_job> out;
  double t = 0;
  for (unsigned i = 1; i <= n; ++i) {
    t += static_cast<double>(gs::uniform_index(g, 30));
    const int gpus = 1 << gs::uniform_index(g, 4);
    gs::checkpoint_info ck;
    if (gs::uniform_index(g, 2) == 0) ck = {gs::seconds(50), {}, gs::seconds(2), gs::seconds(5)};
    const double work = 10.0 + static_cast<double>(gs::uniform_index(g, 400));
    const int prio = static_cast<int>(gs::uniform_index(g, 3));  // one draw per statement
    auto j = job(i, t, work, gpus, prio, ck);
    j.spec.tenant = gs::tenant_id{static_cast<unsigned>(gs::uniform_index(g, 3))};
    out.push_back(std::move(j));
  }
  return out;
}

std::string run_to_text(std::uint64_t seed, gs::sim_config cfg, const char* ordering) {
  auto jobs = random_workload(seed, 150);
  cfg.seed = seed;
  gs::pipeline_config pc;
  pc.ordering = ordering;
  gs::simulator<gs::any_pipeline> sim(small_cluster(4, 8), gs::make_pipeline(pc), cfg);
  sim.run(gs::source_from(jobs));
  std::ostringstream os;
  gs::write_jobs_csv(os, sim.records());
  gs::write_samples_csv(os, sim.samples());
  return os.str();
}
}  // namespace

TEST_SUITE("sim/simulator") {
  TEST_CASE("a lone job starts at submission and finishes after its work") {
    std::vector<gs::sim_job> jobs{job(1, 5, 100, 4)};
    gs::simulator sim(small_cluster());
    sim.run(gs::source_from(jobs));
    REQUIRE(sim.records().size() == 1);
    const auto& r = sim.records()[0];
    CHECK(r.outcome == gs::job_outcome::finished);
    CHECK(start_s(r) == 5);
    CHECK(finish_s(r) == 105);
    CHECK(r.allocated_gpu_ms == doctest::Approx(4 * 100000.0));
    CHECK(sim.book().running().empty());
  }

  TEST_CASE("allocation figures charge a MIG instance and a GPU replica their share of a GPU") {
    // n0: one A100-40GB in MIG mode (8 memory slices); n1: one H100 time-sliced into 4 replicas.
    // Job 1 holds a 3g.20gb instance (4 of 8 slices: 500 milli) for 100 s, job 2 one replica
    // (1000 / 4 = 250 milli) for 100 s. Before, both counted 0 in the allocation figures.
    auto nodes = gs::testing::uniform_nodes(2, 1);
    nodes[0].gpu_model = "A100-SXM4-40GB";
    nodes[0].mig_enabled = true;
    nodes[1].sharing = gs::gpu_sharing::time_slicing;
    nodes[1].replicas = 4;
    std::vector<gs::sim_job> jobs{job(1, 0, 100, 1), job(2, 0, 100, 1)};
    jobs[0].spec.groups[0].request.gpu = gs::gpu_demand::mig(3, 4);
    jobs[1].spec.groups[0].request.gpu = gs::gpu_demand::replica();
    gs::sim_config cfg;
    cfg.check_invariants = true;
    cfg.sample_interval = gs::seconds(50);
    gs::simulator sim(gs::cluster(gs::basic_catalog(), nodes), gs::default_pipeline{}, cfg);
    sim.run(gs::source_from(jobs));
    REQUIRE(sim.records().size() == 2);
    CHECK(sim.records()[0].outcome == gs::job_outcome::finished);
    CHECK(sim.records()[1].outcome == gs::job_outcome::finished);
    CHECK(sim.records()[0].allocated_gpu_ms == doctest::Approx(0.5 * 100000));
    CHECK(sim.records()[1].allocated_gpu_ms == doctest::Approx(0.25 * 100000));
    CHECK(sim.totals().allocated_integral == doctest::Approx(750.0 * 100000));
    REQUIRE(sim.samples().size() >= 2);  // t = 0 (before the cycle), t = 50 (both running)
    CHECK(gs::to_seconds(sim.samples()[1].t) == 50);
    CHECK(sim.samples()[1].allocated_gpus == doctest::Approx(0.75));
    const auto sum = gs::summarize(sim);
    CHECK(sum.allocation == doctest::Approx(0.75 / 2));  // 0.75 of 2 GPUs over the run
  }

  TEST_CASE("a completion at the same time as an arrival frees resources before the cycle") {
    // Job 1 holds all 8 GPUs until t=10; job 2 needs all 8 and arrives at t=10.
    std::vector<gs::sim_job> jobs{job(1, 0, 10, 4), job(2, 0, 10, 4), job(3, 10, 5, 4),
                                  job(4, 10, 5, 4)};
    gs::simulator sim(small_cluster());
    sim.run(gs::source_from(jobs));
    CHECK(start_s(sim.records()[2]) == 10);
    CHECK(start_s(sim.records()[3]) == 10);
    CHECK(sim.totals().cycles == 2);  // one per distinct event time with work to place
  }

  TEST_CASE("jobs that do not fit wait in FIFO order and start as others complete") {
    std::vector<gs::sim_job> jobs{job(1, 0, 100, 8), job(2, 1, 50, 8), job(3, 2, 10, 2)};
    gs::simulator sim(small_cluster(2, 4));
    sim.run(gs::source_from(jobs));
    // Job 2 needs 8 GPUs on one node of 4: the gang of one 8-GPU task can never fit -> rejected.
    CHECK(sim.records()[0].outcome == gs::job_outcome::rejected);
    CHECK(sim.records()[1].outcome == gs::job_outcome::rejected);
    CHECK(start_s(sim.records()[2]) == 2);
  }

  TEST_CASE("periodic checkpoints add their cost to the run time") {
    const gs::checkpoint_info ck{gs::seconds(30), {}, gs::seconds(5), gs::seconds(10)};
    std::vector<gs::sim_job> jobs{job(1, 0, 100, 2, 0, ck)};
    gs::simulator sim(small_cluster());
    sim.run(gs::source_from(jobs));
    const auto& r = sim.records()[0];
    CHECK(r.checkpoints == 3);  // at progress 30, 60, 90
    CHECK(finish_s(r) == 115);
    CHECK(r.overhead_gpu_ms == doctest::Approx(3 * 5000.0 * 2));
  }

  TEST_CASE("a preempted job loses the work since its checkpoint and pays the restore cost") {
    const gs::checkpoint_info ck{gs::seconds(30), {}, gs::seconds(5), gs::seconds(10)};
    // Low-priority job 1 holds all 8 GPUs; urgent job 2 arrives at t=50 and needs them all.
    std::vector<gs::sim_job> jobs{job(1, 0, 100, 4, 0, ck), job(2, 0, 100, 4, 0, ck),
                                  job(3, 50, 20, 4, 5), job(4, 50, 20, 4, 5)};
    gs::sim_config cfg;
    gs::simulator sim(small_cluster(), gs::default_pipeline{}, cfg);
    sim.run(gs::source_from(jobs));
    const auto& victim = sim.records()[0];
    CHECK(victim.preemptions == 1);
    // t=50: progress 30 (written 30..35) + 15 = 45; saved 30 -> 15 s x 4 GPUs lost.
    CHECK(victim.lost_preemption_gpu_ms == doctest::Approx(15000.0 * 4));
    // Restarts at 70 (urgent jobs done), restores 10 s, then 70 s of work from progress 30
    // with one more checkpoint (at 60; 90) -> 70 + 10 + 70 + 2 x 5 = 160.
    CHECK(finish_s(victim) == 160);
    CHECK(victim.starts == 2);
    CHECK(start_s(sim.records()[2]) == 50);
    CHECK(sim.totals().preemptions == 2);
  }

  TEST_CASE(
      "an elastic job shrunk by a preemption resizes: it pauses and runs on at its new size") {
    // Job 1: elastic, 4 tasks x 2 GPUs (minimum 2) on the one 8-GPU node, 100 s of work at full
    // size, no periodic checkpoint, 10 s restore. Urgent job 2 (4 GPUs, 20 s) arrives at t=40.
    // Checkpoint-aware preemption shrinks job 1 (8 GPUs x 10 s pause) rather than evict it
    // (8 GPUs x (40 s lost + 10 s restore)). Growth is off here: the shrink model alone (the
    // growth test below runs the same jobs with it on).
    const auto make_jobs = [] {
      auto el =
          job(1, 0, 100, 2, 0, {gs::sim_duration{0}, {}, gs::sim_duration{0}, gs::seconds(10)});
      el.spec.groups[0].count = 4;
      el.spec.groups[0].min_count = 2;
      return std::vector<gs::sim_job>{el, job(2, 40, 20, 4, 5)};
    };
    {
      auto jobs = make_jobs();
      gs::simulator sim(small_cluster(1, 8), shrinking_pipeline(false));
      sim.run(gs::source_from(jobs));
      const auto& el = sim.records()[0];
      CHECK(el.resizes == 1);
      CHECK(el.grows == 0);
      CHECK(el.preemptions == 0);
      CHECK(el.lost_preemption_gpu_ms == 0);
      CHECK(start_s(sim.records()[1]) == 40);
      // t=40: 40 s of progress kept; 4 GPUs pause 10 s; 60 s of full-size work at half rate.
      CHECK(finish_s(el) == 40 + 10 + 120);
      CHECK(el.overhead_gpu_ms == doctest::Approx(4 * 10000.0));
      CHECK(el.allocated_gpu_ms == doctest::Approx(8 * 40000.0 + 4 * 130000.0));
      CHECK(sim.totals().resizes == 1);
      CHECK(sim.totals().preemptions == 0);
    }
    {
      // A framework that restarts every worker from the last checkpoint: the 40 s are lost.
      auto jobs = make_jobs();
      gs::sim_config cfg;
      cfg.shrink_loses_progress = true;
      cfg.shrink_pause = gs::seconds(5);
      gs::simulator sim(small_cluster(1, 8), shrinking_pipeline(false), cfg);
      sim.run(gs::source_from(jobs));
      const auto& el = sim.records()[0];
      CHECK(el.resizes == 1);
      CHECK(el.lost_preemption_gpu_ms == doctest::Approx(8 * 40000.0));
      CHECK(finish_s(el) == 40 + 5 + 200);
      CHECK(el.overhead_gpu_ms == doctest::Approx(4 * 5000.0));
    }
    {
      // The service record counts a run once across a resize: shrunk at t=40 (8 -> 4 GPUs),
      // evicted at t=60 by job 3 (job 2 is not preemptible): 8 x 40 + 4 x 20 GPU-seconds.
      auto jobs = make_jobs();
      jobs[1].spec.preemptible = false;
      jobs[1].work = gs::seconds(100);  // still running at t=60
      jobs.push_back(job(3, 60, 10, 4, 10));
      gs::simulator sim(small_cluster(1, 8), gs::make_pipeline(gs::checkpoint_aware_preemption{}));
      const gs::service_record* rec = &sim.pipeline().history().service;
      double at60 = -1;
      gs::sim_duration exec60{-1};
      sim.set_observer([&](gs::sim_time t, const gs::ledger&) {
        if (t == gs::at(gs::seconds(60))) {
          at60 = rec->gpu_seconds(gs::job_id{1});
          exec60 = rec->executed(gs::job_id{1});
        }
      });
      sim.run(gs::source_from(jobs));
      CHECK(sim.records()[0].resizes == 1);
      CHECK(sim.records()[0].preemptions == 1);
      CHECK(at60 == doctest::Approx(8 * 40 + 4 * 20));
      CHECK(exec60 == gs::seconds(60));
    }
    gs::sim_config bad;
    bad.shrink_pause = gs::seconds(-1);
    CHECK_THROWS_AS(gs::simulator(small_cluster(1, 8), gs::default_pipeline{}, bad),
                    gs::invalid_value_error);
  }

  TEST_CASE("a shrunk elastic job grows back to its maximum when the urgent job completes") {
    // The jobs of the shrink test above: job 1 (4 x 2 GPUs, minimum 2, 100 s of work, 10 s
    // restore) is shrunk to 2 tasks at t=40 for job 2 (4 GPUs, 20 s). Timeline with growth:
    //   t=0..40   8 GPUs, rate 1: 40 s of work done.
    //   t=40      shrink to 4 GPUs; pause 10 s (shrink_pause = restore_cost).
    //   t=50..60  rate 1/2: 5 s of work (45 s done).
    //   t=60      job 2 completes; the growth step gives job 1 its 2 tasks back (8 GPUs);
    //             pause 10 s (grow_pause = restore_cost).
    //   t=70..125 rate 1: the 55 s left.
    // Without growth it would finish at 40 + 10 + 120 = 170 (the shrink test).
    const auto make_jobs = [] {
      auto el =
          job(1, 0, 100, 2, 0, {gs::sim_duration{0}, {}, gs::sim_duration{0}, gs::seconds(10)});
      el.spec.groups[0].count = 4;
      el.spec.groups[0].min_count = 2;
      return std::vector<gs::sim_job>{el, job(2, 40, 20, 4, 5)};
    };
    {
      auto jobs = make_jobs();
      gs::simulator sim(small_cluster(1, 8), shrinking_pipeline(true));
      std::int32_t tasks_at_60 = -1;
      sim.set_observer([&](gs::sim_time t, const gs::ledger& book) {
        if (t == gs::at(gs::seconds(60))) tasks_at_60 = book.find(gs::job_id{1})->tasks_in_group(0);
      });
      sim.run(gs::source_from(jobs));
      const auto& el = sim.records()[0];
      CHECK(tasks_at_60 == 4);
      CHECK(el.resizes == 1);
      CHECK(el.grows == 1);
      CHECK(el.preemptions == 0);
      CHECK(finish_s(el) == 125);
      // pauses: 4 GPUs x 10 s after the shrink, 8 GPUs x 10 s after the grow
      CHECK(el.overhead_gpu_ms == doctest::Approx(4 * 10000.0 + 8 * 10000.0));
      CHECK(el.allocated_gpu_ms == doctest::Approx(8 * 40000.0 + 4 * 20000.0 + 8 * 65000.0));
      CHECK(sim.totals().grows == 1);
      CHECK(sim.totals().resizes == 1);
      CHECK(gs::summarize(sim).grows == 1);
    }
    {
      // grow_pause apart from shrink_pause: 2 s instead of 10 -> 55 s left from t=62.
      auto jobs = make_jobs();
      gs::sim_config cfg;
      cfg.grow_pause = gs::seconds(2);
      gs::simulator sim(small_cluster(1, 8), shrinking_pipeline(true), cfg);
      sim.run(gs::source_from(jobs));
      CHECK(finish_s(sim.records()[0]) == 117);
      CHECK(sim.records()[0].overhead_gpu_ms == doctest::Approx(4 * 10000.0 + 8 * 2000.0));
    }
    {
      // A framework that restarts from the last checkpoint on any membership change: the 40 s
      // before the shrink and the 7.5 s at half rate (t=45..60, 4 GPUs) are both lost.
      auto jobs = make_jobs();
      gs::sim_config cfg;
      cfg.shrink_loses_progress = true;
      cfg.shrink_pause = gs::seconds(5);
      gs::simulator sim(small_cluster(1, 8), shrinking_pipeline(true), cfg);
      sim.run(gs::source_from(jobs));
      const auto& el = sim.records()[0];
      CHECK(el.lost_preemption_gpu_ms == doctest::Approx(8 * 40000.0 + 4 * 15000.0));
      CHECK(finish_s(el) == 60 + 10 + 100);
    }
    gs::sim_config bad;
    bad.grow_pause = gs::seconds(-1);
    CHECK_THROWS_WITH_AS(gs::simulator(small_cluster(1, 8), gs::default_pipeline{}, bad),
                         doctest::Contains("grow_pause"), gs::invalid_value_error);
  }

  TEST_CASE("the simulator keeps a placement memory: last nodes while a job runs or waits") {
    // Jobs 1 and 3 fill the two nodes; urgent job 2 preempts one at t=50, which then resumes.
    std::vector<gs::sim_job> jobs{job(1, 0, 100, 4), job(3, 0, 100, 4), job(2, 50, 20, 4, 5)};
    gs::simulator sim(small_cluster(), gs::default_pipeline{});
    const gs::placement_memory* memory = &sim.pipeline().history().placement;
    std::size_t checked = 0;
    sim.set_observer([&](gs::sim_time, const gs::ledger& book) {
      for (const gs::job_id id : {gs::job_id{1}, gs::job_id{2}, gs::job_id{3}}) {
        const auto prev = sim.previous_placement(id);
        const auto kept = memory->nodes(id);
        CHECK(std::vector<gs::node_index>(prev.begin(), prev.end()) ==
              std::vector<gs::node_index>(kept.begin(), kept.end()));
        if (book.is_running(id)) CHECK(!kept.empty());
        ++checked;
      }
    });
    sim.run(gs::source_from(jobs));
    CHECK(checked > 0);
    CHECK(sim.records()[0].preemptions + sim.records()[1].preemptions == 1);
    CHECK(memory->size() == 0);  // finished jobs are forgotten
  }

  TEST_CASE("graceful preemption keeps all progress") {
    std::vector<gs::sim_job> jobs{job(1, 0, 100, 4), job(2, 0, 100, 4), job(3, 50, 20, 4, 5),
                                  job(4, 50, 20, 4, 5)};
    gs::sim_config cfg;
    cfg.preemption_saves_progress = true;
    gs::simulator sim(small_cluster(), gs::default_pipeline{}, cfg);
    sim.run(gs::source_from(jobs));
    CHECK(sim.records()[0].lost_preemption_gpu_ms == 0);
    CHECK(finish_s(sim.records()[0]) == 120);  // 50 s done, waits 20 s, 50 s left
  }

  TEST_CASE("the same seed gives identical output and another seed differs") {
    const auto seed = gs::seed_from_env(808);
    INFO("seed " << seed);
    gs::sim_config cfg;
    cfg.node_mtbf = gs::seconds(4000);
    cfg.repair_time = gs::seconds(120);
    cfg.sample_interval = gs::seconds(60);
    const auto a = run_to_text(seed, cfg, "priority");
    const auto b = run_to_text(seed, cfg, "priority");
    CHECK(a == b);
    const auto c = run_to_text(seed + 1, cfg, "priority");
    CHECK(a != c);
  }

  TEST_CASE("GPU time is conserved: allocated plus idle plus down equals capacity times time") {
    const auto seed = gs::seed_from_env(909);
    INFO("seed " << seed);
    auto jobs = random_workload(seed, 200);
    gs::sim_config cfg;
    cfg.seed = seed;
    cfg.node_mtbf = gs::seconds(3000);
    cfg.repair_time = gs::seconds(200);
    gs::pipeline_config pc;
    pc.ordering = "priority";
    bool elastic = false;
    SUBCASE("priority preemption") {}
    SUBCASE("checkpoint-aware preemption with elastic jobs that get shrunk") {
      // Multi-GPU jobs become elastic: one task per GPU, at least one task.
      for (auto& j : jobs) {
        auto& g = j.spec.groups[0];
        const int n = static_cast<int>(g.request.gpu.count.value());
        if (n < 2) continue;
        g.request.gpu = gs::gpu_demand::whole(gs::gpu_count{1});
        g.count = n;
        g.min_count = 1;
      }
      pc.preemption = "checkpoint-aware";
      elastic = true;
    }
    auto pipe = gs::make_pipeline(pc);
    // elastic: growth also while jobs wait, so that shrunk jobs grow back in this loaded run
    pipe.set_options({.grow = true, .max_grown_tasks = -1, .grow_while_waiting = elastic});
    gs::simulator<gs::any_pipeline> sim(small_cluster(4, 8), std::move(pipe), cfg);
    // Independent integral of idle and down GPUs, read from the cluster after every event time.
    double idle = 0, down = 0;
    gs::sim_time last{};
    bool first = true;
    std::int64_t idle_now = 0, down_now = 0;
    sim.set_observer([&](gs::sim_time t, const gs::ledger& book) {
      if (!first) {
        idle += static_cast<double>(idle_now) * static_cast<double>((t - last).count());
        down += static_cast<double>(down_now) * static_cast<double>((t - last).count());
      }
      first = false;
      last = t;
      idle_now = book.state().total_free_whole_gpus();
      down_now = book.state().unavailable_gpus();
    });
    sim.run(gs::source_from(jobs));
    const auto& tot = sim.totals();
    CHECK(tot.failures > 0);
    const double span = static_cast<double>((tot.end - tot.start).count());
    const double alloc = tot.allocated_integral / 1000.0;
    CHECK(alloc + idle + down == doctest::Approx(32.0 * span));
    CHECK(down == doctest::Approx(tot.down_integral / 1000.0));
    double per_job = 0;
    for (const auto& r : sim.records()) {
      per_job += r.allocated_gpu_ms;
      CHECK(r.outcome == gs::job_outcome::finished);
    }
    CHECK(per_job == doctest::Approx(alloc));
    const auto s = gs::summarize(sim);
    CHECK(s.idle_gpu_hours == doctest::Approx(idle / 3.6e6));
    CHECK(s.lost_failure_gpu_hours > 0);
    if (elastic) {
      CHECK(tot.resizes > 0);
      CHECK(s.resizes == tot.resizes);
      CHECK(tot.grows > 0);
      CHECK(s.grows == tot.grows);
      MESSAGE("resizes " << tot.resizes << ", grows " << tot.grows << ", preemptions "
                         << tot.preemptions);
    }
  }

  TEST_CASE("random failures go on after one fires while nothing runs") {
    // One 200-hour job without checkpoints on one node that fails every hour on average and
    // takes an hour to repair: a failure can fire while the node is still under repair (nothing
    // running, no job left to arrive). The failure process must resume at the next start, so
    // the job keeps failing and does not finish within 1,000 hours (about 500 failures);
    // stopping the process there let it finish after one to three failures.
    for (const std::uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
      INFO("seed " << seed);
      std::vector<gs::sim_job> jobs{job(1, 0.0, 200.0 * 3600.0, 1)};
      gs::sim_config cfg;
      cfg.seed = seed;
      cfg.node_mtbf = gs::seconds(3600);
      cfg.repair_time = gs::seconds(3600);
      cfg.time_limit = gs::seconds(1000 * 3600);
      gs::simulator sim(small_cluster(1, 8), gs::default_pipeline{}, cfg);
      sim.run(gs::source_from(jobs));
      CHECK(sim.totals().failures > 100);
      CHECK(sim.records()[0].outcome == gs::job_outcome::unfinished);
    }
  }

  TEST_CASE("random GPU failures go on after one fires while nothing runs") {
    // The same with the GPU failure process, on a node of one GPU.
    for (const std::uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
      INFO("seed " << seed);
      std::vector<gs::sim_job> jobs{job(1, 0.0, 200.0 * 3600.0, 1)};
      gs::sim_config cfg;
      cfg.seed = seed;
      cfg.gpu_mtbf = gs::seconds(3600);
      cfg.gpu_repair_time = gs::seconds(3600);
      cfg.time_limit = gs::seconds(1000 * 3600);
      gs::simulator sim(small_cluster(1, 1), gs::default_pipeline{}, cfg);
      sim.run(gs::source_from(jobs));
      CHECK(sim.totals().gpu_failures > 100);
      CHECK(sim.records()[0].outcome == gs::job_outcome::unfinished);
    }
  }

  TEST_CASE("a failure interrupts the jobs on the node and the node returns after repair") {
    std::vector<gs::sim_job> jobs;
    for (unsigned i = 1; i <= 40; ++i) jobs.push_back(job(i, i * 10.0, 500, 4));
    gs::sim_config cfg;
    cfg.node_mtbf = gs::seconds(2000);
    cfg.repair_time = gs::seconds(300);
    cfg.check_invariants = true;
    gs::simulator sim(small_cluster(2, 4), gs::default_pipeline{}, cfg);
    std::size_t max_down = 0;
    sim.set_observer([&](gs::sim_time, const gs::ledger& b) {
      max_down = std::max(max_down, b.state().unavailable_nodes());
    });
    sim.run(gs::source_from(jobs));
    CHECK(sim.totals().failures > 0);
    CHECK(max_down >= 1);
    CHECK(sim.book().state().unavailable_nodes() == 0);  // every node repaired at the end
    int failed = 0;
    for (const auto& r : sim.records()) {
      CHECK(r.outcome == gs::job_outcome::finished);
      failed += r.failures;
      if (r.failures > 0) CHECK(r.starts > 1);
    }
    CHECK(failed > 0);
  }

  TEST_CASE("the interval trigger schedules only at ticks") {
    std::vector<gs::sim_job> jobs{job(1, 1, 10, 4), job(2, 7, 10, 4)};
    gs::sim_config cfg;
    cfg.trigger = gs::cycle_trigger::interval;
    cfg.cycle_interval = gs::seconds(5);
    gs::simulator sim(small_cluster(), gs::default_pipeline{}, cfg);
    sim.run(gs::source_from(jobs));
    CHECK(start_s(sim.records()[0]) == 1);   // the first tick is at the first arrival
    CHECK(start_s(sim.records()[1]) == 11);  // ticks at 1, 6, 11
    CHECK(finish_s(sim.records()[1]) == 21);
  }

  TEST_CASE("a source that goes back in time or repeats an id is an error") {
    std::vector<gs::sim_job> back{job(1, 10, 1, 1), job(2, 5, 1, 1)};
    gs::simulator a(small_cluster());
    CHECK_THROWS_AS(a.run(gs::source_from(back)), gs::invalid_value_error);
    std::vector<gs::sim_job> dup{job(1, 1, 1, 1), job(1, 2, 1, 1)};
    gs::simulator b(small_cluster());
    CHECK_THROWS_AS(b.run(gs::source_from(dup)), gs::invalid_value_error);
  }

  TEST_CASE("invariants hold after every event on random workloads with failures") {
    const auto seed = gs::seed_from_env(4242);
    INFO("seed " << seed);
    gs::random_engine g(seed);
    const auto nodes = gs::testing::random_nodes(g, 12);
    gs::cluster c(gs::basic_catalog(), nodes);
    std::vector<gs::sim_job> jobs;
    for (unsigned i = 1; i <= 120; ++i) {
      gs::sim_job j;
      j.spec = gs::testing::random_job(g, c.catalog(), gs::job_id{i},
                                       gs::at(gs::seconds(static_cast<std::int64_t>(i) * 7)), 3);
      j.work = gs::seconds(20 + static_cast<std::int64_t>(gs::uniform_index(g, 300)));
      jobs.push_back(std::move(j));
    }
    gs::sim_config cfg;
    cfg.seed = seed;
    cfg.check_invariants = true;  // throws std::logic_error on a violation
    cfg.node_mtbf = gs::seconds(6000);
    cfg.repair_time = gs::seconds(100);
    gs::pipeline_config pc;
    pc.ordering = "priority";
    gs::simulator<gs::any_pipeline> sim(std::move(c), gs::make_pipeline(pc), cfg);
    CHECK_NOTHROW(sim.run(gs::source_from(jobs)));
    std::size_t finished = 0;
    for (const auto& r : sim.records()) finished += r.outcome == gs::job_outcome::finished;
    MESSAGE("finished " << finished << " of 120, failures " << sim.totals().failures);
    CHECK(finished > 0);
  }
}

}  // namespace sim_simulator_test
