// SPDX-License-Identifier: Apache-2.0
// quota_view_of: a Kueue-style quota tree as the quota view of checkpoint-aware preemption
// (quota reclaim from tenants borrowing above their nominal quota).
#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include <gpusched/gpusched.hpp>

#include "generators.hpp"
#include "preemption_fixtures.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_quota_reclaim_test {

namespace gs = gpusched;
using gs::testing::run_on;
using gs::testing::whole_gpu_job;

namespace {
const gs::sim_time t_now = gs::at(gs::seconds(10'000));

/// Kueue's documented cohort shape: two ClusterQueues, team-a and team-b, in cohort
/// "team-ab", each with a nominal quota of 8 GPUs; either may borrow what the other leaves
/// unused (no borrowing limit).
gs::quota_tree team_ab(const gs::gpu_catalog& cat) {
  const auto h100 = gs::quota_resource::gpus(cat.id("H100-SXM5-80GB"));
  gs::quota_tree::builder b(cat);
  b.cohort("team-ab");
  b.queue("team-a", gs::tenant_id{1}, "team-ab")
      .nominal(gs::quota_resource::gpu_milli(), 8000)
      .nominal(h100, 8);
  b.queue("team-b", gs::tenant_id{2}, "team-ab")
      .nominal(gs::quota_resource::gpu_milli(), 8000)
      .nominal(h100, 8);
  return b.build();
}

gs::job_spec for_tenant(gs::job_spec j, unsigned tenant,
                        std::optional<gs::sim_time> checkpoint = {}) {
  j.tenant = gs::tenant_id{tenant};
  j.checkpoint.last = checkpoint;
  return j;
}
}  // namespace

TEST_SUITE("policy/preemption/quota_tree_view") {
  TEST_CASE("a quota tree view gives a tenant's usage and nominal quota in milli-GPU") {
    const auto cat = gs::basic_catalog();
    auto tree = team_ab(cat);
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(2, 8)));
    REQUIRE(run_on(book, for_tenant(whole_gpu_job(1, 1, 8, 20), 2), {0}, gs::at(gs::seconds(0))));
    REQUIRE(run_on(book, for_tenant(whole_gpu_job(2, 1, 4, 20), 2), {1}, gs::at(gs::seconds(0))));
    tree.recompute(book);
    const auto live = gs::quota_view_of(tree);
    const auto counted = gs::quota_view_of(tree, book);
    for (const auto* view : {&live, &counted}) {
      const auto b = (*view)(gs::tenant_id{2});
      REQUIRE(b.has_value());
      CHECK(b->usage == 12000);
      CHECK(b->nominal == 8000);
      CHECK(b->borrowed() == 4000);  // Kueue: usage above nominal quota is borrowed
      const auto a = (*view)(gs::tenant_id{1});
      REQUIRE(a.has_value());
      CHECK(a->usage == 0);
      CHECK(a->borrowed() == 0);
      CHECK_FALSE((*view)(gs::tenant_id{3}).has_value());  // no queue: never borrowing
    }
    // whole GPUs of one model count 1000 milli-GPU each
    const auto by_model =
        gs::quota_view_of(tree, gs::quota_resource::gpus(cat.id("H100-SXM5-80GB")));
    CHECK(by_model(gs::tenant_id{2})->usage == 12000);
    CHECK(by_model(gs::tenant_id{2})->nominal == 8000);
    // the fair-sharing weight divides the share
    const auto weighted =
        gs::quota_view_of(tree, gs::quota_resource::gpu_milli(),
                          [](gs::tenant_id t) { return t.value() == 2 ? 2.0 : 1.0; });
    CHECK(weighted(gs::tenant_id{2})->share() == doctest::Approx(2000.0));
    // the counting view follows the ledger; the live view follows the tree
    book.release(gs::job_id{2});
    CHECK(counted(gs::tenant_id{2})->usage == 8000);
    CHECK(live(gs::tenant_id{2})->usage == 12000);
    tree.recompute(book);
    CHECK(live(gs::tenant_id{2})->usage == 8000);
  }

  TEST_CASE("a quota view of a resource that is not a GPU dimension is a clear error") {
    const auto cat = gs::basic_catalog();
    const auto tree = team_ab(cat);
    CHECK_THROWS_AS((void)gs::quota_view_of(tree, gs::quota_resource::cpu()),
                    gs::invalid_value_error);
    CHECK_THROWS_WITH((void)gs::quota_view_of(tree, gs::quota_resource::memory()),
                      doctest::Contains("resource"));
    const gs::gpu_model_id beyond{static_cast<gs::gpu_model_id::rep>(cat.size() + 5)};
    CHECK_THROWS_AS((void)gs::quota_view_of(tree, gs::quota_resource::gpus(beyond)),
                    gs::invalid_value_error);
  }

  TEST_CASE("a tenant within its nominal quota reclaims GPUs its cohort peer borrowed") {
    // team-b took all 16 GPUs (8 of them team-a's unused nominal quota) with jobs of priority
    // 20; team-a's priority-5 job of 8 GPUs reclaims them (Kueue reclaimWithinCohort: Any):
    // the victim is team-b's job with the least lost work, and afterwards team-b is within
    // its nominal quota, so team-a's next job cannot reclaim again.
    const auto cat = gs::basic_catalog();
    const auto tree = team_ab(cat);
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(2, 8)));
    const auto start = gs::at(gs::seconds(0));
    REQUIRE(run_on(book, for_tenant(whole_gpu_job(1, 1, 8, 20), 2, t_now - gs::seconds(3600)), {0},
                   start));
    REQUIRE(run_on(book, for_tenant(whole_gpu_job(2, 1, 8, 20), 2, t_now - gs::seconds(60)), {1},
                   start));
    gs::checkpoint_aware_options o;
    o.reclaim = true;
    o.quotas = gs::quota_view_of(tree, book);  // a view of the policy's own
    auto pipe = gs::make_pipeline(gs::checkpoint_aware_preemption(o));
    gs::random_engine g(1);
    const std::vector<gs::job_spec> first{for_tenant(whole_gpu_job(9, 1, 8, 5), 1)};
    const auto res = pipe.schedule(book, first, t_now, g);
    REQUIRE(res.decisions.size() == 1);
    CHECK(res.decisions[0].kind == gs::verdict::admit);
    CHECK(res.decisions[0].victims == std::vector<gs::job_id>{gs::job_id{2}});
    CHECK(res.decisions[0].why.code == gs::reason_code::placed_by_preemption);
    CHECK(gs::check_invariants(book).ok());
    const auto b = gs::quota_view_of(tree, book)(gs::tenant_id{2});
    CHECK(b->borrowed() == 0);
    // team-a at its nominal quota now: its next job would borrow, so it cannot reclaim
    const std::vector<gs::job_spec> second{for_tenant(whole_gpu_job(10, 1, 8, 5), 1)};
    const auto res2 = pipe.schedule(book, second, t_now + gs::seconds(1), g);
    CHECK(res2.decisions[0].kind == gs::verdict::defer);
    CHECK(res2.decisions[0].victims.empty());
    CHECK(book.is_running(gs::job_id{1}));
  }

  TEST_CASE("within_nominal: usage plus demand within the queue's own nominal quota") {
    const auto cat = gs::basic_catalog();
    auto tree = team_ab(cat);
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(2, 8)));
    const auto start = gs::at(gs::seconds(0));
    REQUIRE(run_on(book, for_tenant(whole_gpu_job(1, 1, 8, 20), 2), {0}, start));
    REQUIRE(run_on(book, for_tenant(whole_gpu_job(2, 1, 4, 20), 2), {1}, start));
    tree.recompute(book);
    gs::quota_vector demand(tree.dims(), 0);
    demand[gs::quota_resource::gpu_milli().index()] = 8000;
    // team-a uses nothing: 8 GPUs are its own, though only 4 are available in the cohort
    CHECK(tree.within_nominal(gs::tenant_id{1}, demand));
    CHECK(tree.check(gs::tenant_id{1}, demand).has_value());
    demand[gs::quota_resource::gpu_milli().index()] = 8001;
    CHECK_FALSE(tree.within_nominal(gs::tenant_id{1}, demand));
    // team-b is above its nominal quota already
    demand[gs::quota_resource::gpu_milli().index()] = 1000;
    CHECK_FALSE(tree.within_nominal(gs::tenant_id{2}, demand));
    CHECK(tree.within_nominal(gs::tenant_id{7}, demand));  // no queue: not limited
  }

  TEST_CASE(
      "reclaim through quota admission: a tenant within its nominal quota passes admission "
      "although borrowers fill the cohort, and checkpoint-aware preemption evicts a borrower") {
    // team-b borrowed all 16 GPUs of cohort team-ab; team-a asks for its own nominal 8. The
    // quota gate must not defer it (it would never reach preemption); the exact check after
    // placement counts the victim's usage as returned. Usage stays exact afterwards.
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(2, 8)));
    const auto start = gs::at(gs::seconds(0));
    REQUIRE(run_on(book, for_tenant(whole_gpu_job(1, 1, 8, 20), 2, t_now - gs::seconds(3600)), {0},
                   start));
    REQUIRE(run_on(book, for_tenant(whole_gpu_job(2, 1, 8, 20), 2, t_now - gs::seconds(60)), {1},
                   start));
    gs::checkpoint_aware_options o;
    o.reclaim = true;
    auto pipe =
        gs::make_pipeline(gs::quota_admission<>(team_ab(cat)), gs::checkpoint_aware_preemption(o));
    // the run's quota tree reaches the preemption policy through the context
    pipe.environment().quotas = std::make_shared<const gs::quota_tree>(team_ab(cat));
    {
      // without the run's tree the preemption policy sees no quota positions: no reclaim
      auto bare = gs::make_pipeline(gs::quota_admission<>(team_ab(cat)),
                                    gs::checkpoint_aware_preemption(o));
      gs::ledger copy = book;
      gs::random_engine g0(1);
      const std::vector<gs::job_spec> j9{for_tenant(whole_gpu_job(9, 1, 8, 5), 1)};
      const auto r0 = bare.schedule(copy, j9, t_now, g0);
      REQUIRE(r0.decisions.size() == 1);
      CHECK(r0.decisions[0].kind == gs::verdict::defer);
    }
    gs::random_engine g(1);
    const std::vector<gs::job_spec> first{for_tenant(whole_gpu_job(9, 1, 8, 5), 1)};
    const auto res = pipe.schedule(book, first, t_now, g);
    REQUIRE(res.decisions.size() == 1);
    CHECK(res.decisions[0].kind == gs::verdict::admit);
    CHECK(res.decisions[0].victims == std::vector<gs::job_id>{gs::job_id{2}});
    CHECK(res.decisions[0].why.code == gs::reason_code::placed_by_preemption);
    CHECK_FALSE(book.is_running(gs::job_id{2}));
    CHECK(book.is_running(gs::job_id{9}));
    CHECK(gs::check_invariants(book).ok());
    // usage is exact: what the policy holds equals a recount from the ledger
    const auto& q = pipe.admission().quotas();
    auto recount = q;
    recount.recompute(book);
    for (std::int32_t n = 0; std::cmp_less(n, q.nodes().size()); ++n) {
      for (std::size_t d = 0; d < q.dims(); ++d) CHECK(q.usage(n, d) == recount.usage(n, d));
    }
    const auto milli = gs::quota_resource::gpu_milli().index();
    CHECK(q.usage(q.queue_of(gs::tenant_id{1}), milli) == 8000);
    CHECK(q.usage(q.queue_of(gs::tenant_id{2}), milli) == 8000);
    CHECK_FALSE(q.is_borrowing(gs::tenant_id{2}));
    // team-a at its nominal quota now: its next job would borrow, so the gate defers it over
    // quota before placement and nothing is evicted
    const std::vector<gs::job_spec> second{for_tenant(whole_gpu_job(10, 1, 8, 5), 1)};
    const auto res2 = pipe.schedule(book, second, t_now + gs::seconds(1), g);
    CHECK(res2.decisions[0].kind == gs::verdict::defer);
    CHECK(res2.decisions[0].why.code == gs::reason_code::over_quota);
    CHECK(res2.decisions[0].victims.empty());
    CHECK(book.is_running(gs::job_id{1}));
  }

  TEST_CASE("without reclaim or from a tenant within nominal nothing is reclaimed") {
    const auto cat = gs::basic_catalog();
    const auto tree = team_ab(cat);
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(2, 8)));
    const auto start = gs::at(gs::seconds(0));
    // team-b borrows 8 GPUs, but reclaim is off: priority 20 > 5 protects its jobs
    REQUIRE(run_on(book, for_tenant(whole_gpu_job(1, 1, 8, 20), 2), {0}, start));
    REQUIRE(run_on(book, for_tenant(whole_gpu_job(2, 1, 8, 20), 2), {1}, start));
    gs::checkpoint_aware_options o;
    o.quotas = gs::quota_view_of(tree, book);
    gs::checkpoint_aware_preemption no_reclaim(o);
    const auto pre = for_tenant(whole_gpu_job(9, 1, 8, 5), 1);
    gs::random_engine g(1);
    const gs::schedule_context ctx(book, t_now, g);
    gs::testing::first_fit_probe probe{&book, &pre, t_now};
    CHECK(no_reclaim.select(ctx, pre, gs::fit_probe(probe)).empty());
    // reclaim on, but team-b uses only its nominal 8 GPUs (a third tenant without a queue
    // holds the other node): no borrower, no victim
    gs::ledger book2(gs::cluster(cat, gs::testing::uniform_nodes(2, 8)));
    REQUIRE(run_on(book2, for_tenant(whole_gpu_job(1, 1, 8, 20), 2), {0}, start));
    REQUIRE(run_on(book2, for_tenant(whole_gpu_job(2, 1, 8, 20), 3), {1}, start));
    o.reclaim = true;
    o.quotas = gs::quota_view_of(tree, book2);
    gs::checkpoint_aware_preemption reclaim(o);
    const gs::schedule_context ctx2(book2, t_now, g);
    gs::testing::first_fit_probe probe2{&book2, &pre, t_now};
    const auto plan = reclaim.select(ctx2, pre, gs::fit_probe(probe2));
    CHECK(plan.empty());
    CHECK(plan.why.code == gs::reason_code::no_victims);
  }
}

}  // namespace policy_quota_reclaim_test
