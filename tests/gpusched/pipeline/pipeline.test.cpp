// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <optional>

#include <string>
#include <string_view>

#include <type_traits>
#include <vector>

#include <gpusched/check/invariants.hpp>
#include <gpusched/pipeline/pipeline.hpp>
#include <gpusched/pipeline/registry.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace pipeline_pipeline_test {

namespace gs = gpusched;
using namespace gpusched::literals;

// make_pipeline routes by tag, in any order, and fills defaults.
using routed = decltype(gs::make_pipeline(gs::no_preemption{}, gs::priority_ordering{}));
static_assert(std::is_same_v<routed::ordering_type, gs::priority_ordering>);
static_assert(std::is_same_v<routed::preemption_type, gs::no_preemption>);
static_assert(std::is_same_v<routed::admission_type, gs::default_admission>);
static_assert(std::is_same_v<decltype(gs::make_pipeline()), gs::default_pipeline>);
// stateless policies cost no space: only gang_admission (one bool, and its copy kept while a
// cycle runs), the buffers (the growth step's included) and the options take room
struct same_state_as_default_pipeline {
  gs::gang_admission a;
  std::vector<const gs::job_spec*> q;
  std::vector<gs::job_id> ids;
  std::vector<const gs::running_job*> grow_candidates;
  std::vector<gs::node_index> grow_nodes;
  std::vector<gs::job_id> grow_sized;
  std::vector<gs::task_allocation> grow_added;
  gs::pipeline_options options;
  gs::policy_environment environment;         // what the policies read through the context
  std::optional<gs::gang_admission> saved_a;  // its copy while a cycle runs (strong guarantee)
};
static_assert(sizeof(gs::default_pipeline) == sizeof(same_state_as_default_pipeline));

namespace {
gs::job_spec gang(unsigned id, int tasks, int gpus, int priority = 0, int submit = 0) {
  gs::job_spec j;
  j.id = gs::job_id{id};
  j.name = "j" + std::to_string(id);
  j.priority = priority;
  j.submit = gs::at(gs::seconds(submit));
  j.groups.push_back({.name = "worker",
                      .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                  .cpu = 1_cores,
                                  .memory = 1_gib},
                      .count = tasks});
  return j;
}
int gpus_held(const gs::ledger& book, unsigned id) {
  const auto* r = book.find(gs::job_id{id});
  if (r == nullptr) return 0;
  int n = 0;
  for (const auto& t : r->tasks) n += static_cast<int>(t.gpus.size());
  return n;
}
const gs::decision& of(const gs::cycle_result& r, unsigned id) {
  for (const auto& d : r.decisions) {
    if (d.job == gs::job_id{id}) return d;
  }
  FAIL("no decision for job " << id);
  return r.decisions.front();
}
// 8 nodes x 8 GPUs, with a 4-GPU job running: 60 of 64 GPUs free.
gs::ledger sixty_free(gs::random_engine& g) {
  gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(8, 8)));
  std::vector<gs::job_spec> first = {gang(1, 1, 4)};
  auto p = gs::make_pipeline();
  p.schedule(book, first, {}, g);
  REQUIRE(book.state().total_free_whole_gpus() == 60);
  return book;
}
/// A preemption policy that counts `begin_cycle` calls and the selects after each.
struct cycle_counting_preemption {
  using policy_category = gs::preemption_tag;
  using hooks = gs::hook_list<gs::hook::begin_cycle>;
  int* cycles;
  std::vector<int>* select_cycles;  // the cycle count seen by each select
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "cycle-counting"; }
  void begin_cycle(const gs::schedule_context& /*ctx*/) { ++*cycles; }
  gs::preemption_plan select(const gs::schedule_context& /*ctx*/, const gs::job_spec& /*j*/,
                             gs::fit_probe /*probe*/) {
    select_cycles->push_back(*cycles);
    return {};
  }
};
}  // namespace

TEST_SUITE("pipeline") {
  TEST_CASE("the pipeline calls the preemption policy's begin_cycle before each cycle") {
    // Checked for the static pipeline and through any_preemption_policy (the replay tool's
    // any_pipeline): las_preemption keeps its ranking only between two such calls.
    int cycles = 0;
    std::vector<int> seen;
    const cycle_counting_preemption counting{&cycles, &seen};
    gs::random_engine g(1);
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(1, 8)));
    std::vector<gs::job_spec> jobs = {gang(1, 1, 8), gang(2, 1, 8), gang(3, 1, 8)};
    auto p = gs::make_pipeline(counting);
    p.schedule(book, jobs, {}, g);  // job 1 runs; 2 and 3 ask for victims in cycle 1
    std::vector<gs::job_spec> rest = {gang(2, 1, 8), gang(3, 1, 8)};
    p.schedule(book, rest, {}, g);
    CHECK(cycles == 2);
    CHECK(seen == std::vector<int>{1, 1, 2, 2});

    cycles = 0;
    seen.clear();
    gs::ledger book2(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(1, 8)));
    gs::any_pipeline any(gs::make_ordering_policy("fifo"), gs::make_admission_policy("gang"),
                         gs::make_packing_policy("first-fit"),
                         gs::make_placement_policy("first-fit"), counting);
    any.schedule(book2, jobs, {}, g);
    any.schedule(book2, rest, {}, g);
    CHECK(cycles == 2);
    CHECK(seen == std::vector<int>{1, 1, 2, 2});
  }

  TEST_CASE(
      "a 64-rank gang on 60 free GPUs is not admitted, holds nothing, and smaller jobs "
      "behind it proceed under best effort") {
    gs::random_engine g(1);
    auto book = sixty_free(g);
    const std::vector<gs::job_spec> pending = {gang(2, 64, 1, 0, 1), gang(3, 2, 4, 0, 2),
                                               gang(4, 1, 8, 0, 3)};
    auto p = gs::make_pipeline();
    const auto res = p.schedule(book, pending, gs::at(gs::seconds(10)), g);
    const auto& big = of(res, 2);
    CHECK(big.kind == gs::verdict::defer);
    CHECK(big.why.code == gs::reason_code::insufficient);
    CHECK(big.why.needed == 64);
    CHECK(big.why.available == 60);
    CHECK(big.placement.empty());
    CHECK(gpus_held(book, 2) == 0);
    CHECK(of(res, 3).kind == gs::verdict::admit);
    CHECK(of(res, 4).kind == gs::verdict::admit);
    CHECK(gs::describe(big.why) == "needs 64 GPUs in all, only 60 free in the cluster");
    CHECK(gs::check_invariants(book).ok());
  }

  TEST_CASE("under strict FIFO the jobs behind a gang that does not fit wait, naming the head") {
    gs::random_engine g(1);
    auto book = sixty_free(g);
    const std::vector<gs::job_spec> pending = {gang(2, 64, 1, 0, 1), gang(3, 2, 4, 0, 2)};
    auto p = gs::make_pipeline(gs::gang_admission{gs::queueing::strict_fifo});
    const auto res = p.schedule(book, pending, {}, g);
    CHECK(of(res, 2).kind == gs::verdict::defer);
    CHECK(of(res, 3).kind == gs::verdict::defer);
    CHECK(of(res, 3).why.code == gs::reason_code::blocked_by_head);
    CHECK(of(res, 3).why.related == gs::job_id{2});
    CHECK(book.running().size() == 1);
  }

  TEST_CASE("two gangs that each need 6 of 8 free GPUs never hold 4 + 4") {
    gs::random_engine g(1);
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 4)));
    const std::vector<gs::job_spec> pending = {gang(1, 6, 1), gang(2, 6, 1)};
    auto p = gs::make_pipeline();
    const auto res = p.schedule(book, pending, {}, g);
    CHECK(res.count(gs::verdict::admit) == 1);
    CHECK(gpus_held(book, 1) == 6);
    CHECK(gpus_held(book, 2) == 0);
    CHECK(of(res, 2).why.code == gs::reason_code::insufficient);
  }

  TEST_CASE("a gang fragmented across nodes is deferred with no_fit and the best node's room") {
    gs::random_engine g(1);
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    std::vector<gs::job_spec> first = {gang(1, 2, 5)};  // leaves 3 + 3 free
    auto p = gs::make_pipeline();
    p.schedule(book, first, {}, g);
    const std::vector<gs::job_spec> pending = {gang(2, 1, 4)};
    const auto res = p.schedule(book, pending, {}, g);
    CHECK(of(res, 2).why.code == gs::reason_code::no_fit);
    CHECK(of(res, 2).why.needed == 4);
    CHECK(of(res, 2).why.available == 3);
    CHECK(gs::describe(of(res, 2).why, &pending[0]) ==
          "group 'worker': no node can host a task needing 4 GPUs (the most free on one node: 3)");
  }

  TEST_CASE("a task short of CPU on every node is deferred naming CPU, not GPUs") {
    gs::random_engine g(1);
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    auto cpu_hog = gang(1, 2, 1);  // one GPU and 100 of 128 cores on each node
    cpu_hog.groups[0].request.cpu = 100_cores;
    std::vector<gs::job_spec> first = {cpu_hog};
    auto p = gs::make_pipeline();
    p.schedule(book, first, {}, g);
    auto wants_cores = gang(2, 1, 2);  // 2 GPUs (7 free per node) and 40 cores (28 free)
    wants_cores.groups[0].request.cpu = 40_cores;
    const std::vector<gs::job_spec> pending = {wants_cores};
    const auto res = p.schedule(book, pending, {}, g);
    CHECK(of(res, 2).why.code == gs::reason_code::no_fit);
    CHECK(of(res, 2).why.resource == gs::resource_kind::cpu);
    CHECK(of(res, 2).why.needed == 40000);
    CHECK(of(res, 2).why.available == 28000);
  }

  TEST_CASE("a task whose GPUs and CPU each fit somewhere but never together says so") {
    gs::random_engine g(1);
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    auto gpu_hog = gang(1, 1, 7);  // node A: 1 GPU and 127 cores left
    auto cpu_hog = gang(2, 1, 2);  // node B: 6 GPUs and 28 cores left
    cpu_hog.groups[0].request.cpu = 100_cores;
    std::vector<gs::job_spec> first = {gpu_hog, cpu_hog};
    auto p = gs::make_pipeline();
    p.schedule(book, first, {}, g);
    auto wants_both = gang(3, 1, 2);
    wants_both.groups[0].request.cpu = 40_cores;
    const std::vector<gs::job_spec> pending = {wants_both};
    const auto res = p.schedule(book, pending, {}, g);
    CHECK(of(res, 3).why.code == gs::reason_code::no_fit);
    CHECK(gs::describe(of(res, 3).why, &pending[0]) ==
          "group 'worker': no node has a task's 2 GPUs together with the rest of its request "
          "(GPU model, CPU, memory; the most GPUs free on one node: 6)");
  }

  TEST_CASE("preemption evicts lower-priority gangs and places the preemptor in one commit") {
    gs::random_engine g(1);
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    auto p = gs::make_pipeline();
    std::vector<gs::job_spec> low = {gang(1, 1, 8, 0), gang(2, 1, 8, 1)};
    p.schedule(book, low, {}, g);
    REQUIRE(book.running().size() == 2);
    std::vector<gs::job_spec> urgent = {gang(3, 1, 8, 5)};
    const auto res = p.schedule(book, urgent, {}, g);
    const auto& d = of(res, 3);
    CHECK(d.kind == gs::verdict::admit);
    CHECK(d.why.code == gs::reason_code::placed_by_preemption);
    CHECK(d.victims == std::vector<gs::job_id>{gs::job_id{1}});  // the lowest priority
    CHECK_FALSE(book.is_running(gs::job_id{1}));
    CHECK(book.is_running(gs::job_id{2}));
    CHECK(gs::check_invariants(book).ok());
  }

  TEST_CASE("when no victim set makes room, nobody is evicted") {
    gs::random_engine g(1);
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    auto p = gs::make_pipeline();
    std::vector<gs::job_spec> low = {gang(1, 1, 8, 0)};
    auto keep = gang(2, 1, 8, 0);
    keep.preemptible = false;
    low.push_back(keep);
    p.schedule(book, low, {}, g);
    std::vector<gs::job_spec> urgent = {gang(3, 2, 8, 5)};  // needs both nodes
    const auto res = p.schedule(book, urgent, {}, g);
    CHECK(of(res, 3).kind == gs::verdict::defer);
    CHECK(of(res, 3).preemption.code == gs::reason_code::no_victims);
    CHECK(book.is_running(gs::job_id{1}));
    CHECK(book.is_running(gs::job_id{2}));
  }

  TEST_CASE("duplicate or running ids in the pending list throw before anything changes") {
    gs::random_engine g(1);
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    auto p = gs::make_pipeline();
    std::vector<gs::job_spec> dup = {gang(1, 1, 1), gang(2, 1, 1), gang(1, 1, 1)};
    CHECK_THROWS_WITH_AS(
        p.schedule(book, dup, {}, g),
        "[gpusched.duplicate_id] pending queue: field 'id' = 1: job id appears twice",
        gs::invalid_value_error);
    CHECK(book.running().empty());
    std::vector<gs::job_spec> one = {gang(5, 1, 1)};
    p.schedule(book, one, {}, g);
    CHECK_THROWS_AS(p.schedule(book, one, {}, g), gs::invalid_value_error);
    CHECK(book.running().size() == 1);
  }

  TEST_CASE("a pipeline chosen by names decides exactly as the static one") {
    const auto seed = gs::seed_from_env(77);
    INFO("seed = " << seed);
    gs::random_engine gen(seed);
    const auto cat = gs::basic_catalog();
    const auto nodes = gs::testing::random_nodes(gen, 16);
    std::vector<gs::job_spec> jobs;
    for (unsigned i = 1; i <= 60; ++i) {
      jobs.push_back(gs::testing::random_job(gen, cat, gs::job_id{i},
                                             gs::at(gs::seconds(static_cast<int>(i)))));
    }
    gs::ledger a(gs::cluster(cat, nodes)), b(gs::cluster(cat, nodes));
    gs::random_engine ga(1), gb(1);
    auto stat =
        gs::make_pipeline(gs::priority_ordering{}, gs::gang_admission{gs::queueing::strict_fifo});
    auto dyn =
        gs::make_pipeline(gs::pipeline_config{.ordering = "priority", .admission = "gang-strict"});
    CHECK(dyn.admission().name() == "gang-strict");
    const auto ra = stat.schedule(a, jobs, {}, ga);
    const auto rb = dyn.schedule(b, jobs, {}, gb);
    REQUIRE(ra.decisions.size() == rb.decisions.size());
    for (std::size_t i = 0; i < ra.decisions.size(); ++i) {
      CHECK(ra.decisions[i].job == rb.decisions[i].job);
      CHECK(ra.decisions[i].kind == rb.decisions[i].kind);
      CHECK(ra.decisions[i].why == rb.decisions[i].why);
      CHECK(ra.decisions[i].placement == rb.decisions[i].placement);
    }
  }

  TEST_CASE("unknown policy names are clear errors listing the known ones") {
    // the list grows as packers are registered: check the message up to the first name
    CHECK_THROWS_WITH_AS(
        gs::make_packing_policy("no-such-packer"),
        doctest::Contains("[gpusched.unknown_name] policy registry: field "
                          "'packing' = no-such-packer: unknown policy (known: first-fit"),
        gs::invalid_value_error);
    CHECK_THROWS_AS(gs::make_pipeline(gs::pipeline_config{.preemption = "random"}),
                    gs::invalid_value_error);
    CHECK(gs::make_preemption_policy("none").name() == "none");
  }
}

}  // namespace pipeline_pipeline_test
