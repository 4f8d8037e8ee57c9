// SPDX-License-Identifier: Apache-2.0
// checkpoint_aware_preemption, the cost model and the kube-scheduler baseline: scenarios,
// bad input, and properties on seeded random clusters (seed: GPUSCHED_SEED).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include <gpusched/gpusched.hpp>

#include "generators.hpp"
#include "preemption_fixtures.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_checkpoint_aware_test {

namespace gs = gpusched;
using gs::testing::run_on;
using gs::testing::whole_gpu_job;

namespace {
const gs::sim_time t_now = gs::at(gs::seconds(10'000));

gs::job_spec with_checkpoint(gs::job_spec j, std::optional<gs::sim_time> last,
                             gs::sim_duration restore = {}) {
  j.checkpoint.last = last;
  j.checkpoint.restore_cost = restore;
  return j;
}

/// Runs `policy.select` with the real first-fit probe.
template <class Policy>
gs::preemption_plan select_with(Policy& policy, gs::ledger& book, const gs::job_spec& j,
                                gs::sim_time now = t_now) {
  gs::random_engine g(1);
  const gs::schedule_context ctx(book, now, g);
  gs::testing::first_fit_probe probe{&book, &j, now};
  return policy.select(ctx, j, gs::fit_probe(probe));
}

std::vector<std::uint32_t> ids(const std::vector<gs::job_id>& v) {
  std::vector<std::uint32_t> out;
  for (auto id : v) out.push_back(id.value());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<gs::node_spec> domain_nodes(std::size_t n, int gpus, std::size_t per_domain) {
  auto nodes = gs::testing::uniform_nodes(n, gpus);
  for (std::size_t i = 0; i < n; ++i) {
    nodes[i].topology = static_cast<std::uint32_t>(1 + i / per_domain);
  }
  return nodes;
}
}  // namespace

TEST_SUITE("policy/preemption/checkpoint_aware") {
  TEST_CASE("the job checkpointed a minute ago is preempted rather than the one an hour ago") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    const auto start = gs::at(gs::seconds(0));
    REQUIRE(
        run_on(book, with_checkpoint(whole_gpu_job(1, 1, 8), t_now - gs::seconds(60)), {0}, start));
    REQUIRE(run_on(book, with_checkpoint(whole_gpu_job(2, 1, 8), t_now - gs::seconds(3600)), {1},
                   start));
    const auto urgent = whole_gpu_job(9, 1, 8, 10);
    gs::checkpoint_aware_preemption policy;
    const auto plan = select_with(policy, book, urgent);
    REQUIRE(ids(plan.victims) == std::vector<std::uint32_t>{1});
    CHECK(plan.why.code == gs::reason_code::placed_by_preemption);
    REQUIRE(plan.details.size() == 1);
    CHECK(plan.details[0].action == gs::victim_action::requeue);
    CHECK(plan.details[0].lost_gpu_seconds == doctest::Approx(8 * 60));
    CHECK(plan.lost_gpu_seconds == doctest::Approx(480));
    REQUIRE(plan.placement.size() == 1);
    CHECK(plan.placement[0].node == gs::node_index{0});
    CHECK(policy.last_stats().exact);

    // the same through the pipeline: evict and place in one commit
    auto pipe = gs::make_pipeline(gs::checkpoint_aware_preemption{});
    gs::random_engine g(1);
    const std::vector<gs::job_spec> pending{urgent};
    const auto res = pipe.schedule(book, pending, t_now, g);
    REQUIRE(res.decisions.size() == 1);
    const auto& d = res.decisions[0];
    CHECK(d.kind == gs::verdict::admit);
    CHECK(ids(d.victims) == std::vector<std::uint32_t>{1});
    CHECK(d.lost_gpu_seconds == doctest::Approx(480));
    CHECK(book.is_running(gs::job_id{9}));
    CHECK_FALSE(book.is_running(gs::job_id{1}));
    CHECK(book.is_running(gs::job_id{2}));
    CHECK(gs::check_invariants(book).ok());
  }

  TEST_CASE("a job without checkpoint data loses all its work since start") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    REQUIRE(run_on(book, whole_gpu_job(1, 1, 8), {0}, t_now - gs::seconds(600)));
    REQUIRE(run_on(book, with_checkpoint(whole_gpu_job(2, 1, 8), t_now - gs::seconds(900)), {1},
                   t_now - gs::seconds(3600)));
    gs::checkpoint_aware_preemption policy;
    const auto plan = select_with(policy, book, whole_gpu_job(9, 1, 8, 10));
    CHECK(ids(plan.victims) == std::vector<std::uint32_t>{1});  // 600 s < 900 s of work
    CHECK(plan.lost_gpu_seconds == doctest::Approx(8 * 600));
  }

  TEST_CASE("restore cost and value weight enter the cost") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    REQUIRE(run_on(
        book, with_checkpoint(whole_gpu_job(1, 1, 8), t_now - gs::seconds(60), gs::seconds(600)),
        {0}, t_now - gs::seconds(7200)));
    REQUIRE(run_on(
        book, with_checkpoint(whole_gpu_job(2, 1, 8), t_now - gs::seconds(300), gs::seconds(0)),
        {1}, t_now - gs::seconds(7200)));
    gs::checkpoint_aware_preemption plain;
    CHECK(ids(select_with(plain, book, whole_gpu_job(9, 1, 8, 10)).victims) ==
          std::vector<std::uint32_t>{2});  // 8 x 300 < 8 x (60 + 600)
    gs::checkpoint_aware_options o;
    o.cost.value_weight = [](const gs::job_spec& j) { return j.id.value() == 2 ? 10.0 : 1.0; };
    gs::checkpoint_aware_preemption weighted(o);
    const auto plan = select_with(weighted, book, whole_gpu_job(9, 1, 8, 10));
    CHECK(ids(plan.victims) == std::vector<std::uint32_t>{1});
    CHECK(plan.lost_gpu_seconds == doctest::Approx(8 * 660));
  }

  TEST_CASE("checkpoint on signal costs the checkpoint time when it fits in the grace period") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(1, 8)));
    auto j = with_checkpoint(whole_gpu_job(1, 1, 8), t_now - gs::seconds(3600));
    j.checkpoint.checkpoint_cost = gs::seconds(30);
    REQUIRE(run_on(book, j, {0}, gs::at(gs::seconds(0))));
    gs::checkpoint_aware_options o;
    o.cost.grace_period = gs::seconds(60);
    gs::checkpoint_aware_preemption policy(o);
    const auto plan = select_with(policy, book, whole_gpu_job(9, 1, 8, 10));
    REQUIRE(plan.details.size() == 1);
    CHECK(plan.details[0].action == gs::victim_action::signal_then_wait);
    CHECK(plan.details[0].wait == gs::seconds(30));
    CHECK(plan.lost_gpu_seconds == doctest::Approx(8 * 30));
    o.cost.grace_period = gs::seconds(10);  // too short to checkpoint: requeue
    gs::checkpoint_aware_preemption short_grace(o);
    const auto p2 = select_with(short_grace, book, whole_gpu_job(9, 1, 8, 10));
    CHECK(p2.details[0].action == gs::victim_action::requeue);
    CHECK(p2.lost_gpu_seconds == doctest::Approx(8 * 3600));
    o.cost.mode = gs::eviction_mode::suspend;
    gs::checkpoint_aware_preemption suspend(o);
    CHECK(select_with(suspend, book, whole_gpu_job(9, 1, 8, 10)).details[0].action ==
          gs::victim_action::suspend);
  }

  TEST_CASE("a gang preemptor evicts the cheapest whole gangs that make room") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(4, 8)));
    const auto s = gs::at(gs::seconds(0));
    // job 1 spans nodes 0 and 1 (a gang of 2 x 8) with a fresh checkpoint: evicting it frees
    // two nodes at once, but it costs 16 GPUs x 200 s
    REQUIRE(
        run_on(book, with_checkpoint(whole_gpu_job(1, 2, 8), t_now - gs::seconds(200)), {0, 1}, s));
    REQUIRE(
        run_on(book, with_checkpoint(whole_gpu_job(2, 1, 8), t_now - gs::seconds(150)), {2}, s));
    REQUIRE(
        run_on(book, with_checkpoint(whole_gpu_job(3, 1, 8), t_now - gs::seconds(180)), {3}, s));
    gs::checkpoint_aware_preemption policy;
    const auto plan = select_with(policy, book, whole_gpu_job(9, 2, 8, 10));
    CHECK(ids(plan.victims) == std::vector<std::uint32_t>{2, 3});  // 8x150 + 8x180 < 16x200
    CHECK(plan.lost_gpu_seconds == doctest::Approx(8 * 330));
    CHECK(plan.placement.size() == 2);
    // when one cheap victim is protected by its minimum runtime, the gang goes instead
    gs::checkpoint_aware_options o;
    o.min_runtime = gs::seconds(60);
    gs::ledger book2(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(4, 8)));
    REQUIRE(run_on(book2, with_checkpoint(whole_gpu_job(1, 2, 8), t_now - gs::seconds(200)), {0, 1},
                   s));
    REQUIRE(run_on(book2, whole_gpu_job(2, 1, 8), {2}, t_now - gs::seconds(30)));
    REQUIRE(
        run_on(book2, with_checkpoint(whole_gpu_job(3, 1, 8), t_now - gs::seconds(180)), {3}, s));
    gs::checkpoint_aware_preemption protect(o);
    CHECK(ids(select_with(protect, book2, whole_gpu_job(9, 2, 8, 10)).victims) ==
          std::vector<std::uint32_t>{1});
    gs::checkpoint_aware_preemption unprotected;
    CHECK(ids(select_with(unprotected, book2, whole_gpu_job(9, 2, 8, 10)).victims) ==
          std::vector<std::uint32_t>{2, 3});  // job 2 lost only 8 x 30
  }

  TEST_CASE("an elastic job shrinks towards its minimum instead of being evicted") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    // elastic: 4 tasks x 2 GPUs, minimum 2, on node 0; pausing to re-form costs 20 s
    auto el =
        with_checkpoint(whole_gpu_job(1, 4, 2, 0, 2), t_now - gs::seconds(1800), gs::seconds(20));
    REQUIRE(run_on(book, el, {0, 0, 0, 0}, gs::at(gs::seconds(0))));
    REQUIRE(run_on(book, with_checkpoint(whole_gpu_job(2, 1, 8), t_now - gs::seconds(600)), {1},
                   gs::at(gs::seconds(0))));
    const auto urgent = whole_gpu_job(9, 1, 4, 10);
    gs::checkpoint_aware_preemption policy;
    const auto plan = select_with(policy, book, urgent);
    CHECK(plan.victims.empty());
    REQUIRE(plan.shrinks.size() == 1);
    CHECK(plan.shrinks[0] == gs::shrink_order{gs::job_id{1}, 0, 2});
    REQUIRE(plan.details.size() == 1);
    CHECK(plan.details[0].action == gs::victim_action::shrink);
    CHECK(plan.details[0].shrink_to == 2);
    CHECK(plan.details[0].gpus == doctest::Approx(4));
    CHECK(plan.lost_gpu_seconds == doctest::Approx(8 * 20));  // every worker pauses 20 s
    // the pipeline applies the shrink and the placement together
    auto pipe = gs::make_pipeline(gs::checkpoint_aware_preemption{});
    gs::random_engine g(1);
    const std::vector<gs::job_spec> pending{urgent};
    const auto res = pipe.schedule(book, pending, t_now, g);
    REQUIRE(res.decisions[0].kind == gs::verdict::admit);
    CHECK(res.decisions[0].shrinks.size() == 1);
    REQUIRE(book.find(gs::job_id{1}) != nullptr);
    CHECK(book.find(gs::job_id{1})->tasks.size() == 2);
    CHECK(book.is_running(gs::job_id{2}));
    CHECK(gs::check_invariants(book).ok());
    // with shrinking disabled the elastic job is evicted whole or the other job goes
    gs::checkpoint_aware_options o;
    o.allow_shrink = false;
    gs::ledger book2(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    REQUIRE(run_on(book2, el, {0, 0, 0, 0}, gs::at(gs::seconds(0))));
    REQUIRE(run_on(book2, with_checkpoint(whole_gpu_job(2, 1, 8), t_now - gs::seconds(600)), {1},
                   gs::at(gs::seconds(0))));
    gs::checkpoint_aware_preemption no_shrink(o);
    const auto p2 = select_with(no_shrink, book2, urgent);
    CHECK(p2.shrinks.empty());
    CHECK(ids(p2.victims) == std::vector<std::uint32_t>{2});  // 8 x 600 < 8 x (1800 + 20)
  }

  TEST_CASE("an elastic job shrinks only as far as the preemptor needs") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(1, 8)));
    auto el =
        with_checkpoint(whole_gpu_job(1, 8, 1, 0, 2), t_now - gs::seconds(1800), gs::seconds(20));
    REQUIRE(run_on(book, el, {0, 0, 0, 0, 0, 0, 0, 0}, gs::at(gs::seconds(0))));
    gs::checkpoint_aware_preemption policy;
    const auto plan = select_with(policy, book, whole_gpu_job(9, 1, 3, 10));
    REQUIRE(plan.shrinks.size() == 1);
    CHECK(plan.shrinks[0].to == 5);  // releases 3 of 8 workers, not 6
    REQUIRE(plan.details.size() == 1);
    CHECK(plan.details[0].shrink_to == 5);
    CHECK(plan.details[0].gpus == doctest::Approx(3));
    CHECK(plan.lost_gpu_seconds == doctest::Approx(8 * 20));
    REQUIRE(gs::testing::apply_plan(book, whole_gpu_job(9, 1, 3, 10), plan, t_now));
    CHECK(book.find(gs::job_id{1})->tasks.size() == 5);
    CHECK(gs::check_invariants(book).ok());
  }

  TEST_CASE("a recently preempted job is spared unless nothing else works") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    REQUIRE(run_on(book, with_checkpoint(whole_gpu_job(1, 1, 8), t_now - gs::seconds(60)), {0},
                   t_now - gs::seconds(120)));
    REQUIRE(run_on(book, with_checkpoint(whole_gpu_job(2, 1, 8), t_now - gs::seconds(3600)), {1},
                   gs::at(gs::seconds(0))));
    gs::checkpoint_aware_options o;
    o.thrash_window = gs::seconds(600);
    gs::checkpoint_aware_preemption policy(o);
    policy.note_preempted(gs::job_id{1}, t_now - gs::seconds(300));
    CHECK(policy.recently_preempted(gs::job_id{1}, t_now));
    auto plan = select_with(policy, book, whole_gpu_job(9, 1, 8, 10));
    CHECK(ids(plan.victims) == std::vector<std::uint32_t>{2});
    CHECK_FALSE(policy.last_stats().used_recent);
    // needing both nodes, job 1 is used after all
    plan = select_with(policy, book, whole_gpu_job(9, 2, 8, 10));
    CHECK(ids(plan.victims) == std::vector<std::uint32_t>{1, 2});
    CHECK(policy.last_stats().used_recent);
    // outside the window it is an ordinary candidate again
    CHECK_FALSE(policy.recently_preempted(gs::job_id{1}, t_now + gs::seconds(300)));
    CHECK(ids(select_with(policy, book, whole_gpu_job(9, 1, 8, 10), t_now + gs::seconds(300))
                  .victims) == std::vector<std::uint32_t>{1});
  }

  TEST_CASE("the pipeline records committed victims so they are not preempted again at once") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    REQUIRE(run_on(book, with_checkpoint(whole_gpu_job(1, 1, 8), t_now - gs::seconds(60)), {0},
                   gs::at(gs::seconds(0))));
    REQUIRE(run_on(book, with_checkpoint(whole_gpu_job(2, 1, 8), t_now - gs::seconds(3600)), {1},
                   gs::at(gs::seconds(0))));
    gs::checkpoint_aware_options o;
    o.thrash_window = gs::seconds(3600);
    auto pipe = gs::make_pipeline(gs::checkpoint_aware_preemption(o));
    gs::random_engine g(1);
    std::vector<gs::job_spec> pending{whole_gpu_job(9, 1, 8, 10)};
    auto res = pipe.schedule(book, pending, t_now, g);
    CHECK(ids(res.decisions[0].victims) == std::vector<std::uint32_t>{1});
    CHECK(pipe.preemption().recently_preempted(gs::job_id{1}, t_now + gs::seconds(10)));
    // job 1 comes back (requeued) and runs again on node 0 after job 9 leaves
    book.release(gs::job_id{9});
    REQUIRE(run_on(book, with_checkpoint(whole_gpu_job(1, 1, 8), t_now + gs::seconds(5)), {0},
                   t_now + gs::seconds(5)));
    pending = {whole_gpu_job(10, 1, 8, 10)};
    res = pipe.schedule(book, pending, t_now + gs::seconds(10), g);
    CHECK(ids(res.decisions[0].victims) == std::vector<std::uint32_t>{2});
    CHECK(gs::check_invariants(book).ok());
  }

  TEST_CASE("a preemptor that needs one topology domain takes its victims from one domain") {
    // nodes 0,1 in domain 1 and nodes 2,3 in domain 2
    gs::ledger book(gs::cluster(gs::basic_catalog(), domain_nodes(4, 8, 2)));
    const auto s = gs::at(gs::seconds(0));
    const int ages[] = {100, 900, 200, 300};  // cheapest pair (0, 2) spans the two domains
    for (unsigned n = 0; n < 4; ++n) {
      REQUIRE(run_on(
          book, with_checkpoint(whole_gpu_job(n + 1, 1, 8), t_now - gs::seconds(ages[n])), {n}, s));
    }
    const auto urgent = whole_gpu_job(9, 2, 8, 10);
    gs::checkpoint_aware_preemption anywhere;
    CHECK(ids(select_with(anywhere, book, urgent).victims) == std::vector<std::uint32_t>{1, 3});
    gs::checkpoint_aware_options o;
    o.needs_single_domain = [](const gs::job_spec&) { return true; };
    gs::checkpoint_aware_preemption one_domain(o);
    const auto plan = select_with(one_domain, book, urgent);
    CHECK(ids(plan.victims) == std::vector<std::uint32_t>{3, 4});  // 500 < 1000 (domain 1)
    CHECK(plan.lost_gpu_seconds == doctest::Approx(8 * 500));
    CHECK(one_domain.last_stats().domains == 2);
    // a custom domain function: nodes 0 and 2 together
    o.domain_of = [](const gs::cluster&, gs::node_index n) { return n.value() % 2; };
    gs::checkpoint_aware_preemption custom(o);
    CHECK(ids(select_with(custom, book, urgent).victims) == std::vector<std::uint32_t>{1, 3});
  }

  TEST_CASE("no admissible victim set means nobody is evicted and the reason says why") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    REQUIRE(run_on(book, whole_gpu_job(1, 1, 8, 10), {0}, gs::at(gs::seconds(0))));
    REQUIRE(run_on(book, whole_gpu_job(2, 1, 4, 0), {1}, gs::at(gs::seconds(0))));
    gs::checkpoint_aware_preemption policy;
    const auto plan = select_with(policy, book, whole_gpu_job(9, 2, 8, 5));
    CHECK(plan.empty());
    CHECK(plan.why.code == gs::reason_code::no_victims);
    CHECK(plan.why.resource == gs::resource_kind::gpu);
    CHECK(plan.why.needed == 16);
    CHECK(plan.why.available == 8);  // 4 free + 4 of job 2; job 1 has priority 10
    CHECK(gs::describe(plan.why) ==
          "no admissible victim set frees enough room: needs 16 GPUs, at most 8 after evicting "
          "every admissible candidate");
    // through the pipeline: deferred, nothing evicted
    auto pipe = gs::make_pipeline(gs::checkpoint_aware_preemption{});
    gs::random_engine g(1);
    const std::vector<gs::job_spec> pending{whole_gpu_job(9, 2, 8, 5)};
    const auto res = pipe.schedule(book, pending, t_now, g);
    CHECK(res.decisions[0].kind == gs::verdict::defer);
    CHECK(book.running().size() == 2);
  }

  TEST_CASE("quota reclaim takes victims of any priority from tenants borrowing above nominal") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    auto borrower = whole_gpu_job(1, 1, 8, 20);  // higher priority than the preemptor
    borrower.tenant = gs::tenant_id{1};
    auto owner_job = whole_gpu_job(2, 1, 8, 20);
    owner_job.tenant = gs::tenant_id{2};
    REQUIRE(run_on(book, borrower, {0}, gs::at(gs::seconds(0))));
    REQUIRE(run_on(book, owner_job, {1}, gs::at(gs::seconds(0))));
    auto preemptor = whole_gpu_job(9, 1, 8, 5);
    preemptor.tenant = gs::tenant_id{0};
    // tenant 0: nominal 8 GPUs, uses 0; tenant 1 borrows 8; tenant 2 within nominal
    std::map<std::uint32_t, gs::tenant_quota> q{
        {0, {0, 8000, 1}}, {1, {8000, 0, 1}}, {2, {8000, 8000, 1}}};
    gs::checkpoint_aware_options o;
    o.quotas = [&](gs::tenant_id t) -> std::optional<gs::tenant_quota> {
      const auto it = q.find(t.value());
      return it == q.end() ? std::nullopt : std::optional{it->second};
    };
    gs::checkpoint_aware_preemption no_reclaim(o);
    CHECK(select_with(no_reclaim, book, preemptor).empty());
    o.reclaim = true;
    gs::checkpoint_aware_preemption reclaim(o);
    CHECK(ids(select_with(reclaim, book, preemptor).victims) == std::vector<std::uint32_t>{1});
    // a preemptor whose tenant would exceed its own nominal quota cannot reclaim
    q[0].usage = 4000;
    gs::checkpoint_aware_preemption over(o);
    CHECK(select_with(over, book, preemptor).empty());
  }

  TEST_CASE("bad input gets clear errors") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    auto future = with_checkpoint(whole_gpu_job(1, 1, 8), t_now + gs::seconds(5));
    REQUIRE(run_on(book, future, {0}, gs::at(gs::seconds(0))));
    gs::checkpoint_aware_preemption policy;
    CHECK_THROWS_WITH_AS((void)select_with(policy, book, whole_gpu_job(9, 1, 8, 10)),
                         doctest::Contains("running job 1 'j1': field 'checkpoint.last'"),
                         gs::invalid_value_error);

    gs::ledger book2(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    auto negative = whole_gpu_job(1, 1, 8);
    negative.checkpoint.restore_cost = gs::seconds(-1);
    REQUIRE(run_on(book2, negative, {0}, gs::at(gs::seconds(0))));
    CHECK_THROWS_WITH_AS((void)select_with(policy, book2, whole_gpu_job(9, 1, 8, 10)),
                         doctest::Contains("field 'checkpoint'"), gs::invalid_value_error);

    gs::ledger book3(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    REQUIRE(run_on(book3, whole_gpu_job(1, 1, 8), {0}, gs::at(gs::seconds(0))));
    gs::checkpoint_aware_options o;
    o.cost.value_weight = [](const gs::job_spec&) { return -2.0; };
    gs::checkpoint_aware_preemption weighted(o);
    CHECK_THROWS_WITH_AS((void)select_with(weighted, book3, whole_gpu_job(9, 1, 8, 10)),
                         doctest::Contains("value_weight"), gs::invalid_value_error);

    gs::random_engine g(1);
    const gs::schedule_context ctx(book3, t_now, g);
    const std::vector<gs::job_id> unknown{gs::job_id{77}};
    try {
      (void)gs::lost_gpu_seconds(ctx, gs::preemption_cost_model{}, unknown);
      FAIL("no exception");
    } catch (const gs::invalid_value_error& e) {
      CHECK(e.id() == gs::error_id::unknown_id);
      CHECK(std::string(e.what()).find("77") != std::string::npos);
    }
    gs::checkpoint_aware_options bad;
    bad.cost.grace_period = gs::seconds(-3);
    CHECK_THROWS_AS(gs::checkpoint_aware_preemption{bad}, gs::invalid_value_error);
    bad = {};
    bad.min_runtime = gs::seconds(-3);
    CHECK_THROWS_AS(gs::checkpoint_aware_preemption{bad}, gs::invalid_value_error);
    bad = {};
    bad.exact_limit = 64;
    CHECK_THROWS_AS(gs::checkpoint_aware_preemption{bad}, gs::invalid_value_error);
  }

  TEST_CASE("policies are made by name") {
    CHECK(gs::make_preemption_policy("checkpoint-aware").name() == "checkpoint-aware");
    CHECK(gs::make_preemption_policy("kube-default").name() == "kube-default");
    CHECK(gs::make_preemption_policy("lowest-priority-newest").name() == "priority");
    gs::pipeline_config cfg;
    cfg.preemption = "checkpoint-aware";
    auto pipe = gs::make_pipeline(cfg);
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    REQUIRE(run_on(book, with_checkpoint(whole_gpu_job(1, 1, 8), t_now - gs::seconds(60)), {0},
                   gs::at(gs::seconds(0))));
    REQUIRE(run_on(book, with_checkpoint(whole_gpu_job(2, 1, 8), t_now - gs::seconds(3600)), {1},
                   gs::at(gs::seconds(0))));
    gs::random_engine g(1);
    const std::vector<gs::job_spec> pending{whole_gpu_job(9, 1, 8, 10)};
    const auto res = pipe.schedule(book, pending, t_now, g);
    CHECK(ids(res.decisions[0].victims) == std::vector<std::uint32_t>{1});
  }
}

TEST_SUITE("policy/preemption/kube_default") {
  TEST_CASE("kube default picks the node whose victims have the lowest priority then reprieves") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    const auto s = gs::at(gs::seconds(0));
    // node 0: priorities 3 and 1 (4 GPUs each); node 1: priorities 2 and 2
    REQUIRE(run_on(book, whole_gpu_job(1, 1, 4, 3), {0}, s));
    REQUIRE(run_on(book, whole_gpu_job(2, 1, 4, 1), {0}, s));
    REQUIRE(run_on(book, whole_gpu_job(3, 1, 4, 2), {1}, s));
    REQUIRE(run_on(book, whole_gpu_job(4, 1, 4, 2), {1}, s));
    gs::kube_default_preemption kube;
    // needs 4 GPUs: on node 0 job 1 (priority 3) is reprieved, job 2 goes (highest victim
    // priority 1); on node 1 one of the priority-2 jobs goes. Lowest highest-victim wins.
    auto plan = select_with(kube, book, whole_gpu_job(9, 1, 4, 10));
    CHECK(ids(plan.victims) == std::vector<std::uint32_t>{2});
    // needs 8 GPUs: node 0 victims {3, 1} (max 3), node 1 victims {2, 2} (max 2): node 1
    plan = select_with(kube, book, whole_gpu_job(9, 1, 8, 10));
    CHECK(ids(plan.victims) == std::vector<std::uint32_t>{3, 4});
  }

  TEST_CASE("kube default breaks ties by the latest start of the highest priority victims") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    REQUIRE(run_on(book, whole_gpu_job(1, 1, 8, 0), {0}, gs::at(gs::seconds(100))));
    REQUIRE(run_on(book, whole_gpu_job(2, 1, 8, 0), {1}, gs::at(gs::seconds(500))));
    gs::kube_default_preemption kube;
    CHECK(ids(select_with(kube, book, whole_gpu_job(9, 1, 8, 10)).victims) ==
          std::vector<std::uint32_t>{2});
  }

  TEST_CASE("kube default removes all victims of a gang then reprieves the most important") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(3, 8)));
    const auto s = gs::at(gs::seconds(0));
    REQUIRE(run_on(book, whole_gpu_job(1, 1, 8, 1), {0}, s));
    REQUIRE(run_on(book, whole_gpu_job(2, 1, 8, 0), {1}, s));
    REQUIRE(run_on(book, whole_gpu_job(3, 1, 8, 2), {2}, s));
    gs::kube_default_preemption kube;
    const auto plan = select_with(kube, book, whole_gpu_job(9, 2, 8, 10));
    CHECK(ids(plan.victims) == std::vector<std::uint32_t>{1, 2});  // job 3 reprieved first
    CHECK(select_with(kube, book, whole_gpu_job(9, 4, 8, 10)).empty());
  }
}

TEST_SUITE("policy/preemption/properties") {
  TEST_CASE("victims are lower priority and the preemptor fits after the plan on random clusters") {
    const auto seed = gs::seed_from_env(20261202);
    MESSAGE("seed " << seed);
    gs::random_engine g(seed);
    std::size_t planned = 0, kube_planned = 0;
    for (int round = 0; round < 60; ++round) {
      gs::ledger book(gs::cluster(gs::basic_catalog(),
                                  gs::testing::uniform_nodes(3 + gs::uniform_index(g, 6), 8)));
      gs::testing::random_running(g, book, 6 + gs::uniform_index(g, 20), t_now);
      // one draw per statement: argument evaluation order is unspecified in C++
      const int pre_tasks = 1 + static_cast<int>(gs::uniform_index(g, 3));
      const int pre_gpus = 1 << gs::uniform_index(g, 4);
      const int pre_prio = 1 + static_cast<int>(gs::uniform_index(g, 4));
      auto pre = whole_gpu_job(1000, pre_tasks, pre_gpus, pre_prio);
      gs::checkpoint_aware_options o;
      o.exact_limit = 1 + gs::uniform_index(g, 20);  // exercises the heuristic too
      o.min_runtime = gs::seconds(static_cast<std::int64_t>(gs::uniform_index(g, 600)));
      gs::checkpoint_aware_preemption policy(o);
      const auto plan = select_with(policy, book, pre);
      gs::kube_default_preemption kube;
      const auto kplan = select_with(kube, book, pre);
      for (const auto* p : {&plan, &kplan}) {
        for (const auto& d : p->details) {
          const auto* r = book.find(d.job);
          REQUIRE(r != nullptr);
          CHECK(r->spec.priority < pre.priority);
          CHECK(r->spec.preemptible);
        }
      }
      for (const auto& d : plan.details) {
        CHECK(t_now - book.find(d.job)->start >= o.min_runtime);
      }
      if (!kplan.empty()) {
        ++kube_planned;
        gs::ledger copy = book;
        CHECK(gs::testing::apply_plan(copy, pre, kplan, t_now));
        CHECK(gs::check_invariants(copy).ok());
      }
      if (plan.empty()) continue;
      ++planned;
      std::set<std::uint32_t> distinct;
      for (const auto& d : plan.details) distinct.insert(d.job.value());
      CHECK(distinct.size() == plan.details.size());
      double sum = 0;
      for (const auto& d : plan.details) sum += d.lost_gpu_seconds;
      CHECK(plan.lost_gpu_seconds == doctest::Approx(sum));
      REQUIRE(gs::testing::apply_plan(book, pre, plan, t_now));
      const auto rep = gs::check_invariants(book);
      CHECK_MESSAGE(rep.ok(), rep.to_string());
    }
    MESSAGE("plans: checkpoint-aware " << planned << ", kube-default " << kube_planned);
    CHECK(planned > 10);
  }

  TEST_CASE("the exact search finds the brute-force minimum cost") {
    const auto seed = gs::seed_from_env(7);
    MESSAGE("seed " << seed);
    gs::random_engine g(seed);
    std::size_t compared = 0;
    for (int round = 0; round < 40; ++round) {
      gs::ledger book(gs::cluster(gs::basic_catalog(),
                                  gs::testing::uniform_nodes(2 + gs::uniform_index(g, 3), 8)));
      gs::testing::random_running(g, book, 4 + gs::uniform_index(g, 7), t_now);
      const int pre_tasks = 1 + static_cast<int>(gs::uniform_index(g, 2));  // one draw per
      const int pre_gpus = 1 << gs::uniform_index(g, 4);  // statement (unspecified arg order)
      const auto pre = whole_gpu_job(1000, pre_tasks, pre_gpus, 4);
      const bool shrink = round % 2 == 0;
      {
        gs::testing::first_fit_probe fits{&book, &pre, t_now};
        if (fits({}, {}, nullptr)) continue;  // fits already: the pipeline would not preempt
      }
      gs::checkpoint_aware_options o;
      o.allow_shrink = shrink;
      o.max_probes = 1u << 16;
      gs::checkpoint_aware_preemption policy(o);
      const auto plan = select_with(policy, book, pre);
      const auto brute = gs::testing::brute_force_cost(book, pre, t_now, o.cost, shrink);
      CHECK(policy.last_stats().exact);
      if (!brute) {
        CHECK(plan.empty());
        continue;
      }
      ++compared;
      REQUIRE_FALSE(plan.empty());
      CHECK(plan.lost_gpu_seconds == doctest::Approx(*brute));
    }
    MESSAGE("instances with a feasible preemption: " << compared);
    CHECK(compared > 10);
  }

  TEST_CASE("fair-share strategies let requeued victims come back without preemption cycles") {
    const auto seed = gs::seed_from_env(99);
    MESSAGE("seed " << seed);
    for (const auto strategy : {gs::fair_share_strategy::less_than_or_equal_final_share,
                                gs::fair_share_strategy::less_than_initial_share}) {
      gs::random_engine g(seed);
      gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(4, 8)));
      const std::int64_t nominal[] = {8000, 8000, 16000};
      const auto usage = [&](gs::tenant_id t) {
        std::int64_t u = 0;
        for (const auto& r : book.running()) {
          if (r.spec.tenant == t) u += r.milli_gpus();
        }
        return u;
      };
      gs::checkpoint_aware_options o;
      o.reclaim = true;
      o.fair_share = strategy;
      o.quotas = [&](gs::tenant_id t) -> std::optional<gs::tenant_quota> {
        if (t.value() > 2) return std::nullopt;
        return gs::tenant_quota{usage(t), nominal[t.value()], 1.0};
      };
      auto pipe = gs::make_pipeline(gs::checkpoint_aware_preemption(o));
      // every job has the same priority: only reclaim (with the fair-share condition) preempts.
      // Arrivals for 30 cycles (tenants 1 and 2 only in the first 8, so they borrow and
      // tenant 0 reclaims later), then none: the system must settle.
      std::vector<gs::job_spec> pending;
      std::map<std::uint32_t, gs::job_spec> specs;
      unsigned id = 1;
      std::size_t preemptions = 0;
      std::map<std::uint32_t, int> times_preempted;
      int cycle = 0;
      int quiet = 0;
      for (; cycle < 100 && quiet < 3; ++cycle) {
        if (cycle < 30) {
          for (auto k = gs::uniform_index(g, 3); k > 0; --k) {
            auto j = whole_gpu_job(id++, 1, 1 << gs::uniform_index(g, 4), 0);
            const auto t = cycle < 8 ? 1 + gs::uniform_index(g, 2) : gs::uniform_index(g, 3);
            j.tenant = gs::tenant_id{static_cast<gs::tenant_id::rep>(t)};
            pending.push_back(j);
            specs[j.id.value()] = j;
          }
        }
        const auto now = gs::at(gs::seconds(1000 + cycle));
        std::map<std::uint32_t, std::uint32_t> tenant_of;
        for (const auto& r : book.running()) tenant_of[r.spec.id.value()] = r.spec.tenant.value();
        const auto res = pipe.schedule(book, pending, now, g);
        CHECK(gs::check_invariants(book).ok());
        std::vector<gs::job_spec> next;
        std::size_t changes = 0;
        for (const auto& d : res.decisions) {
          const auto& spec = specs.at(d.job.value());
          if (d.kind != gs::verdict::admit) {
            next.push_back(spec);
            continue;
          }
          ++changes;
          for (const auto v : d.victims) {
            ++preemptions;
            ++times_preempted[v.value()];
            CHECK(spec.tenant.value() != tenant_of.at(v.value()));  // only reclaim preempts
            next.push_back(specs.at(v.value()));  // requeued, comes back as it was
          }
        }
        pending = next;
        quiet = cycle >= 30 && changes == 0 ? quiet + 1 : 0;
      }
      int most = 0;
      for (const auto& [v, n] : times_preempted) most = std::max(most, n);
      MESSAGE("strategy " << static_cast<int>(strategy) << ": " << preemptions
                          << " preemptions (at most " << most << " of one job), settled after "
                          << cycle << " cycles");
      CHECK(quiet == 3);  // reached a fixed point: no endless preemption cycle
      CHECK(preemptions > 0);
    }
  }
}

}  // namespace policy_checkpoint_aware_test
