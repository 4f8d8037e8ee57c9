// SPDX-License-Identifier: Apache-2.0
// The communication model (sim/communication.hpp): hand-computed ring bandwidths and rates of
// placements, max-min sharing of an oversubscribed uplink, and simulated timelines.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gpusched/metrics/report.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/sim/simulator.hpp>
#include <gpusched/topology/node_topology.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace sim_communication_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {
/// A task holding GPUs `local` (local indices) of node `n`.
gs::task_allocation task(const gs::cluster& c, unsigned n, std::vector<unsigned> local) {
  gs::task_allocation t;
  t.node = gs::node_index{n};
  for (const unsigned g : local) {
    t.gpus.push_back({.gpu = gs::gpu_index{c.first_gpu(t.node).value() + g},
                      .milli = gs::milli_gpu{1000}});
  }
  return t;
}
gs::cluster untyped(std::size_t nodes, int gpus) {
  return gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(nodes, gpus));
}
gs::comm_config on(std::shared_ptr<const gs::topology_model> m, bool share = false) {
  return {.enabled = true,
          .topology = std::move(m),
          .intra_node_gbps = 25.0,
          .nic_gbps = 12.5,
          .reference_gbps = 25.0,
          .share_links = share};
}
}  // namespace

TEST_CASE("ring all-reduce time is 2(n-1)/n x bytes over the bottleneck") {
  CHECK(gs::ring_allreduce_ms(1, 1e9, 10) == 0.0);
  CHECK(gs::ring_allreduce_ms(2, 1e9, 10) == doctest::Approx(100.0));  // 1 x 1 GB / 10 GB/s
  CHECK(gs::ring_allreduce_ms(4, 4e8, 25) == doctest::Approx(24.0));   // 1.5 x 16 ms
  // the factor: (compute + ref) / (compute + actual), capped at 1
  const gs::comm_profile p{.compute_ms = 100, .sync_bytes = 4e8};
  CHECK(gs::comm_factor_ppm(p, 2, 16, 50) == 864'000);   // 108 / 125
  CHECK(gs::comm_factor_ppm(p, 2, 100, 50) == 1'000'000);  // faster than the reference
  CHECK(gs::comm_factor_ppm(p, 1, 1, 50) == 1'000'000);    // one rank: no all-reduce
}

TEST_CASE("a DGX-1 NV2 pair runs at the reference speed and a SYS pair at 0.864 of it") {
  auto model = std::make_shared<gs::topology_model>();
  const auto h = model->add_node_type(gs::dgx1_v100());
  auto nodes = gs::testing::uniform_nodes(1, 8, "V100-SXM2-32GB");
  nodes[0].topology = h;
  const gs::cluster c(gs::basic_catalog(), nodes);
  auto cfg = on(model);
  cfg.reference_gbps = 50;
  const gs::comm_network net(c, cfg);
  // GPUs 0 and 3: NV2, 2 x 25 GB/s; GPUs 0 and 5: SYS, the PCIe Gen3 x16 hop (16 GB/s) is the
  // slowest link of their PCIe path (UPI is 20)
  const std::vector<gs::task_allocation> nv2{task(c, 0, {0, 3})}, sys{task(c, 0, {0, 5})};
  const auto a = net.path(c, nv2), b = net.path(c, sys);
  CHECK(a.ranks == 2);
  CHECK(a.links.empty());  // one node: no network link
  CHECK(net.bandwidth(a) == doctest::Approx(50.0));
  CHECK(net.bandwidth(b) == doctest::Approx(16.0));
  const gs::comm_profile p{.compute_ms = 100, .sync_bytes = 4e8};
  // all-reduce of 400 MB over 2 ranks: 8 ms at 50 GB/s, 25 ms at 16 GB/s
  CHECK(gs::comm_factor_ppm(p, a.ranks, net.bandwidth(a), 50) == 1'000'000);
  CHECK(gs::comm_factor_ppm(p, b.ranks, net.bandwidth(b), 50) == 864'000);  // 108 / 125
}

TEST_CASE("one node, two nodes under one leaf and two across an oversubscribed spine") {
  // 4 nodes of 4 GPUs without node type (25 GB/s inside), 12.5 GB/s NICs, leaves of 2 nodes
  // at 4:1, so a leaf's uplink is 2 x 12.5 / 4 = 6.25 GB/s
  const auto c = untyped(4, 4);
  auto model = std::make_shared<gs::topology_model>(gs::fabric::fat_tree(4, 2, 0, 4.0));
  const gs::comm_network net(c, on(model));
  CHECK(net.link_count() == 6);  // 4 NICs, 2 leaf uplinks
  CHECK(net.capacity(4) == doctest::Approx(6.25));
  const std::vector<gs::task_allocation> one{task(c, 0, {0, 1, 2, 3})};
  const std::vector<gs::task_allocation> leaf{task(c, 0, {0, 1}), task(c, 1, {0, 1})};
  const std::vector<gs::task_allocation> spine{task(c, 0, {0, 1}), task(c, 2, {0, 1})};
  const auto p1 = net.path(c, one), p2 = net.path(c, leaf), p3 = net.path(c, spine);
  CHECK(p1.ranks == 4);
  CHECK(p2.ranks == 4);
  CHECK(p2.links == std::vector<std::uint32_t>{0, 1});
  CHECK(p3.links == std::vector<std::uint32_t>{0, 2, 4, 5});
  CHECK(net.bandwidth(p1) == doctest::Approx(25.0));
  CHECK(net.bandwidth(p2) == doctest::Approx(12.5));
  CHECK(net.bandwidth(p3) == doctest::Approx(6.25));
  // 300 MB over 4 ranks: 18 ms at 25 GB/s (the reference), 36 at 12.5, 72 at 6.25
  const gs::comm_profile p{.compute_ms = 100, .sync_bytes = 3e8};
  CHECK(gs::comm_factor_ppm(p, 4, 25.0, 25.0) == 1'000'000);
  CHECK(gs::comm_factor_ppm(p, 4, 12.5, 25.0) == 867'647);  // 118 / 136
  CHECK(gs::comm_factor_ppm(p, 4, 6.25, 25.0) == 686'047);  // 118 / 172
}

TEST_CASE("two jobs crossing one oversubscribed uplink share it max-min") {
  const auto c = untyped(4, 4);
  auto model = std::make_shared<gs::topology_model>(gs::fabric::fat_tree(4, 2, 0, 4.0));
  const gs::comm_network net(c, on(model, true));
  // both cross both 6.25 GB/s leaf uplinks; a third job stays under leaf 0 (its NICs only)
  const std::vector<gs::task_allocation> a{task(c, 0, {0}), task(c, 2, {0})};
  const std::vector<gs::task_allocation> b{task(c, 1, {0}), task(c, 3, {0})};
  const std::vector<gs::task_allocation> d{task(c, 0, {1, 2}), task(c, 1, {1, 2})};
  const auto pa = net.path(c, a), pb = net.path(c, b), pd = net.path(c, d);
  std::vector<double> bw;
  const std::vector<const gs::comm_path*> two{&pa, &pb};
  net.max_min(two, bw);
  REQUIRE(bw.size() == 2);
  CHECK(bw[0] == doctest::Approx(3.125));
  CHECK(bw[1] == doctest::Approx(3.125));
  // with job d: NIC 0 carries a and d, NIC 1 carries b and d; a and b stay at 3.125 (the
  // uplinks), and d takes the rest of the NICs, 12.5 - 3.125 = 9.375
  const std::vector<const gs::comm_path*> three{&pa, &pb, &pd};
  net.max_min(three, bw);
  CHECK(bw[0] == doctest::Approx(3.125));
  CHECK(bw[1] == doctest::Approx(3.125));
  CHECK(bw[2] == doctest::Approx(9.375));
  // alone, each gets the link's full capacity
  const std::vector<const gs::comm_path*> alone{&pa};
  net.max_min(alone, bw);
  CHECK(bw[0] == doctest::Approx(6.25));
}

namespace {
gs::sim_job gang(unsigned id, double submit_s, double work_s, int tasks, int gpus_per_task,
                 gs::comm_profile p) {
  gs::sim_job j;
  j.spec.id = gs::job_id{id};
  j.spec.submit = gs::at(gs::sim_duration{static_cast<std::int64_t>(submit_s * 1000)});
  j.spec.groups.push_back(
      {.name = "w",
       .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus_per_task}),
                   .cpu = 1_cores,
                   .memory = 1_gib},
       .count = tasks});
  j.work = gs::sim_duration{static_cast<std::int64_t>(work_s * 1000)};
  j.comm = p;
  return j;
}
struct timeline {
  std::vector<std::int64_t> start_ms, finish_ms;
  std::uint64_t rate_changes = 0;
};
// Three nodes of 4 GPUs, each its own leaf, leaves at 2:1 (uplink 12.5 / 2 = 6.25 GB/s).
// Job A (2 tasks x 3 GPUs, at 0 s, 100 s of work) lands on nodes 0 and 1; job B (2 tasks x 1
// GPU, at 20 s, 11 s of work) takes the last GPU of node 0 and of node 1: both cross the
// uplinks of leaves 0 and 1.
timeline two_jobs(bool share) {
  auto model = std::make_shared<gs::topology_model>(gs::fabric::fat_tree(3, 1, 0, 2.0));
  gs::sim_config cfg;
  cfg.comm = on(model, share);
  cfg.sample_interval = gs::sim_duration{0};
  gs::pipeline_config pc;
  pc.preemption = "none";
  gs::simulator<gs::any_pipeline> sim(untyped(3, 4), gs::make_pipeline(pc), cfg);
  std::vector<gs::sim_job> jobs{gang(1, 0, 100, 2, 3, {100, 2.5e8}),
                                gang(2, 20, 11, 2, 1, {100, 2.5e8})};
  sim.run(gs::source_from(jobs));
  timeline t;
  for (const auto& r : sim.records()) {
    t.start_ms.push_back(r.first_start.value().time_since_epoch().count());
    t.finish_ms.push_back(r.finish.value().time_since_epoch().count());
  }
  t.rate_changes = sim.totals().comm_rate_changes;
  return t;
}
}  // namespace

TEST_CASE("a shared uplink slows a running job while a second job crosses it") {
  // A alone at 6.25 GB/s: 6 ranks, 250 MB: all-reduce 66.67 ms against 16.67 at the reference,
  // rate 116.67 / 166.67 = 0.7. From 20 s B shares the uplinks: 3.125 GB/s each; A's rate
  // 116.67 / 233.33 = 0.5, B's (2 ranks: 80 ms against 10) 110 / 180 = 0.611111.
  // A: 14,000 ms of work by 20 s; B needs ceil(11,000 / 0.611111) = 18,001 ms and ends at
  // 38,001; A made floor(18,001 x 0.5) = 9,000 more (23,000), then 77,000 at 0.7 = 110,000 ms:
  // it ends at 148,001.
  const auto t = two_jobs(true);
  CHECK(t.start_ms == std::vector<std::int64_t>{0, 20'000});
  CHECK(t.finish_ms == std::vector<std::int64_t>{148'001, 38'001});
  CHECK(t.rate_changes == 2);  // A at B's start and at B's end
}

TEST_CASE("without sharing each job sees the uplink's full bandwidth") {
  // A at 0.7 throughout: ceil(100,000 / 0.7) = 142,858 ms; B at 6.25 GB/s alone: 40 ms against
  // 10, rate 110 / 140 = 0.785714: ceil(11,000 / 0.785714) = 14,001 ms after 20 s.
  const auto t = two_jobs(false);
  CHECK(t.finish_ms == std::vector<std::int64_t>{142'858, 34'001});
  CHECK(t.rate_changes == 0);
}

TEST_CASE("a job on one node runs at trace speed and a gang over two nodes slower") {
  gs::sim_config cfg;
  cfg.comm = on(nullptr);
  cfg.sample_interval = gs::sim_duration{0};
  gs::simulator sim(untyped(2, 4), gs::default_pipeline{}, cfg);
  // 8 ranks over 2 nodes (NIC 12.5 GB/s): 300 MB all-reduce 42 ms against 21 at 25 GB/s:
  // rate 121 / 142 = 0.852113; 1,000 s of work take ceil(10^6 / 0.852113) = 1,173,554 ms
  std::vector<gs::sim_job> jobs{gang(1, 0, 1000, 2, 4, {100, 3e8}),
                                gang(2, 2000, 1000, 1, 4, {100, 3e8})};
  sim.run(gs::source_from(jobs));
  CHECK(sim.records()[0].finish->time_since_epoch().count() == 1'173'554);
  // job 2 alone on one node, 4 ranks at the intra-node 25 GB/s = the reference: 1,000 s
  CHECK(sim.records()[1].finish->time_since_epoch().count() == 2'000'000 + 1'000'000);
}

TEST_CASE("with the model off a job's figures change nothing") {
  const auto run = [](bool enabled) {
    gs::sim_config cfg;
    cfg.comm.enabled = enabled;
    cfg.sample_interval = gs::sim_duration{0};
    gs::simulator sim(untyped(2, 4), gs::default_pipeline{}, cfg);
    std::vector<gs::sim_job> jobs{gang(1, 0, 1000, 2, 4, {100, 3e8})};
    sim.run(gs::source_from(jobs));
    return sim.records()[0].finish->time_since_epoch().count();
  };
  CHECK(run(false) == 1'000'000);
  CHECK(run(true) > 1'000'000);
}

TEST_CASE("a bad communication setting or job figure is refused naming the field") {
  gs::sim_config cfg;
  cfg.comm = on(nullptr);
  cfg.comm.nic_gbps = 0;
  CHECK_THROWS_WITH_AS(gs::simulator(untyped(1, 4), gs::default_pipeline{}, cfg),
                       doctest::Contains("nic_gbps"), gs::invalid_value_error);
  cfg.comm.nic_gbps = 12.5;
  gs::simulator sim(untyped(1, 4), gs::default_pipeline{}, cfg);
  std::vector<gs::sim_job> jobs{gang(1, 0, 10, 1, 2, {-1, 3e8})};
  CHECK_THROWS_WITH_AS(sim.run(gs::source_from(jobs)), doctest::Contains("comm"),
                       gs::invalid_value_error);
}

TEST_CASE("the default mix gives every job one of four models, the same in every run") {
  int seen[4] = {0, 0, 0, 0};
  for (unsigned id = 1; id <= 4000; ++id) {
    const auto p = gs::default_comm_profile(gs::job_id{id});
    REQUIRE(p == gs::default_comm_profile(gs::job_id{id}));
    for (std::size_t k = 0; k < gs::default_comm_mix.size(); ++k) {
      if (p.compute_ms == gs::default_comm_mix[k].compute_ms) ++seen[k];
    }
  }
  for (int s : seen) CHECK(s == doctest::Approx(1000).epsilon(0.1));
}

}  // namespace sim_communication_test
