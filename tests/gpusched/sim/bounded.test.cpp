// SPDX-License-Identifier: Apache-2.0
// Cost follows the work: a far-future job neither allocates samples across the gap without
// bound nor ticks through it one interval at a time.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include <gpusched/sim/simulator.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace sim_bounded_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {
gs::sim_job job(unsigned id, double submit_s, double work_s, int gpus) {
  gs::sim_job j;
  j.spec.id = gs::job_id{id};
  j.spec.submit = gs::at(gs::sim_duration{static_cast<std::int64_t>(submit_s * 1000)});
  j.spec.groups.push_back({.name = "w",
                           .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                       .cpu = 1_cores,
                                       .memory = 1_gib},
                           .count = 1});
  j.work = gs::sim_duration{static_cast<std::int64_t>(work_s * 1000)};
  return j;
}
gs::cluster small_cluster() {
  return gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 4));
}
}  // namespace

TEST_SUITE("sim/bounded") {
  TEST_CASE("a job 2^40 s after the others: samples stop at max_samples and the run completes") {
    gs::sim_config cfg;
    cfg.max_samples = 1000;
    gs::simulator<> sim(small_cluster(), {}, cfg);
    std::vector<gs::sim_job> jobs{job(1, 0, 30, 1), job(2, 1099511627776.0, 30, 1)};
    sim.run(gs::source_from(jobs));
    CHECK(sim.samples().size() == 1000);
    CHECK(sim.totals().samples_capped);
    REQUIRE(sim.records().size() == 2);
    CHECK(sim.records()[1].finish.has_value());
    // The kept samples are the first ones, at their own times.
    CHECK(sim.samples()[999].t - sim.samples()[0].t == 999 * gs::seconds(600));
  }

  TEST_CASE("samples taken in one idle stretch are those of the state, each at its own time") {
    gs::simulator<> sim(small_cluster());
    std::vector<gs::sim_job> jobs{job(1, 0, 3000, 2), job(2, 10000, 30, 1)};
    sim.run(gs::source_from(jobs));
    CHECK_FALSE(sim.totals().samples_capped);
    REQUIRE(sim.samples().size() == 17);  // 0, 600, ..., 9600
    CHECK(sim.samples()[1].allocated_gpus == 2.0);
    CHECK(sim.samples()[5].allocated_gpus == 2.0);  // t = 3000: before the completion there
    CHECK(sim.samples()[6].allocated_gpus == 0.0);
    CHECK(sim.samples()[16].t == gs::at(gs::seconds(9600)));
  }

  TEST_CASE("interval ticks skip an idle gap with the same totals as ticking through it") {
    // Figures pinned from the simulator before the skip (ticking through every interval),
    // with random node failures in the gap and with and without a time limit.
    const auto run = [](double limit_s) {
      gs::sim_config cfg;
      cfg.trigger = gs::cycle_trigger::interval;
      cfg.cycle_interval = gs::seconds(60);
      cfg.time_limit = gs::sim_duration{static_cast<std::int64_t>(limit_s * 1000)};
      cfg.node_mtbf = gs::seconds(20000);
      gs::simulator<> sim(small_cluster(), {}, cfg);
      std::vector<gs::sim_job> jobs{job(1, 0, 30, 1), job(2, 10, 200, 4), job(3, 100020, 30, 2)};
      sim.run(gs::source_from(jobs));
      return sim.totals();
    };
    const auto a = run(0);
    CHECK(a.events == 1688);
    CHECK(a.cycles == 3);
    CHECK(a.failures == 6);
    CHECK(a.end == gs::at(gs::sim_duration{100080000}));
    CHECK(run(50000).events == 847);
    CHECK(run(100030).events == 1686);
    CHECK(run(100000).events == 1684);
  }

  TEST_CASE("interval ticks over a 2^40 s gap finish in time proportional to the events") {
    gs::sim_config cfg;
    cfg.trigger = gs::cycle_trigger::interval;
    cfg.cycle_interval = gs::seconds(1);
    cfg.sample_interval = gs::sim_duration{0};
    gs::simulator<> sim(small_cluster(), {}, cfg);
    std::vector<gs::sim_job> jobs{job(1, 0, 30, 1), job(2, 1099511627776.0, 30, 1)};
    sim.run(gs::source_from(jobs));
    REQUIRE(sim.records().size() == 2);
    CHECK(sim.records()[1].finish.has_value());
    CHECK(sim.totals().events > std::uint64_t{1099511627776});  // every tick counted
  }
}

}  // namespace sim_bounded_test
