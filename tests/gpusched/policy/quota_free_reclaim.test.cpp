// SPDX-License-Identifier: Apache-2.0
// The pipeline's free-quota preemption path (Kueue reclaimWithinCohort with free resources):
// a gang within its tenant's nominal quota, placed on free GPUs but refused because cohort
// peers borrow the cohort's quota, reclaims that quota by evicting borrowers' jobs.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <gpusched/gpusched.hpp>

#include "generators.hpp"
#include "preemption_fixtures.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_quota_free_reclaim_test {

namespace gs = gpusched;
using gs::testing::run_on;
using gs::testing::whole_gpu_job;

namespace {
/// Three queues of nominal 8 GPUs each in one cohort (24 GPUs of quota): team-a (tenant 1),
/// team-b (tenant 2), team-c (tenant 3). With `per_model_only`, only whole H100 GPUs are
/// governed (not milli-GPU), so a request for any model has no governed lower bound.
gs::quota_tree team_abc(const gs::gpu_catalog& cat, bool per_model_only = false) {
  const auto h100 = gs::quota_resource::gpus(cat.id("H100-SXM5-80GB"));
  gs::quota_tree::builder b(cat);
  b.cohort("team-abc");
  const char* names[] = {"team-a", "team-b", "team-c"};
  for (unsigned t = 1; t <= 3; ++t) {
    b.queue(names[t - 1], gs::tenant_id{t}, "team-abc").nominal(h100, 8);
    if (!per_model_only) b.nominal(gs::quota_resource::gpu_milli(), 8000);
  }
  return b.build();
}

gs::job_spec for_tenant(gs::job_spec j, unsigned tenant) {
  j.tenant = gs::tenant_id{tenant};
  return j;
}

/// The policy's usage equals a recount from the ledger, node by node and dimension by dimension.
bool usage_is_exact(const gs::quota_tree& q, const gs::ledger& book) {
  auto recount = q;
  recount.recompute(book);
  for (std::int32_t n = 0; std::cmp_less(n, q.nodes().size()); ++n) {
    for (std::size_t d = 0; d < q.dims(); ++d) {
      if (q.usage(n, d) != recount.usage(n, d)) return false;
    }
  }
  return true;
}

std::int64_t milli_of(const gs::quota_tree& q, unsigned tenant) {
  return q.usage(q.queue_of(gs::tenant_id{tenant}), gs::quota_resource::gpu_milli().index());
}

/// 40 GPUs (5 nodes of 8); team-b holds 16 (borrowing 8: jobs 1 of 8 GPUs, 2 and 3 of 4 GPUs,
/// started in that order, priority 20), team-c holds its nominal 8 (job 4, priority 0): the
/// cohort's 24 GPUs of quota are used up while 16 GPUs (nodes 3 and 4) are free.
gs::ledger borrowed_cohort(const gs::gpu_catalog& cat) {
  gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(5, 8)));
  REQUIRE(run_on(book, for_tenant(whole_gpu_job(1, 1, 8, 20), 2), {0}, gs::at(gs::seconds(0))));
  REQUIRE(run_on(book, for_tenant(whole_gpu_job(2, 1, 4, 20), 2), {1}, gs::at(gs::seconds(100))));
  REQUIRE(run_on(book, for_tenant(whole_gpu_job(3, 1, 4, 20), 2), {1}, gs::at(gs::seconds(200))));
  REQUIRE(run_on(book, for_tenant(whole_gpu_job(4, 1, 8, 0), 3), {2}, gs::at(gs::seconds(300))));
  return book;
}

const gs::sim_time t_now = gs::at(gs::seconds(10'000));

std::int64_t free_gpus(const gs::ledger& book) {
  std::int64_t n = 0;
  for (const auto node : book.state().nodes()) n += book.state().free_whole_gpus(node);
  return n;
}

/// `quota_admission` that checks, at the moment of each decision, the reclaim laws: a gang left
/// unplaced over quota while within its tenant's nominal quota means no other queue borrowed
/// (else reclaim should have taken the quota back); every reclaim candidate is a job of another
/// tenant whose queue borrows.
struct checked_quota : gs::quota_admission<> {
  using gs::quota_admission<>::quota_admission;
  int blocked_within_nominal = 0, foreign_candidates = 0, reclaims = 0;

  std::optional<gs::reclaim_scope> reclaim_for(const gs::schedule_context& ctx,
                                               const gs::job_spec& j, const gs::reason& why) {
    auto scope = gs::quota_admission<>::reclaim_for(ctx, j, why);
    if (scope) {
      ++reclaims;
      for (const auto* r : scope->candidates()) {
        if (r->spec.tenant == j.tenant || !quotas().is_borrowing(r->spec.tenant)) {
          ++foreign_candidates;
        }
      }
    }
    return scope;
  }

  gs::queue_action on_unplaced(const gs::schedule_context& ctx, const gs::job_spec& j,
                               const gs::reason& why, const gs::admission_tools& tools) {
    if (why.code == gs::reason_code::over_quota) {
      const auto& q = quotas();
      const auto need = gs::demand_lower_bound(j, q.dims());
      bool other_borrows = false;
      for (unsigned t = 1; t <= 3; ++t) {
        other_borrows =
            other_borrows || (t != j.tenant.value() && q.is_borrowing(gs::tenant_id{t}));
      }
      if (q.within_nominal(j.tenant, need) && other_borrows) ++blocked_within_nominal;
    }
    return gs::quota_admission<>::on_unplaced(ctx, j, why, tools);
  }
};
}  // namespace

TEST_SUITE("policy/admission/quota_free_reclaim") {
  TEST_CASE("free GPUs but a borrower used up the cohort quota: a gang within nominal reclaims") {
    const auto cat = gs::basic_catalog();
    auto book = borrowed_cohort(cat);
    REQUIRE(free_gpus(book) == 16);
    auto pipe = gs::make_pipeline(gs::quota_admission<>(team_abc(cat)));
    gs::random_engine g(1);
    // team-a's gang of 4 GPUs (priority 5, below team-b's 20): within its nominal 8
    const std::vector<gs::job_spec> first{for_tenant(whole_gpu_job(9, 1, 4, 5), 1)};
    const auto res = pipe.schedule(book, first, t_now, g);
    REQUIRE(res.decisions.size() == 1);
    CHECK(res.decisions[0].kind == gs::verdict::admit);
    CHECK(res.decisions[0].why.code == gs::reason_code::placed_by_preemption);
    // one borrower's job is enough: the most recent of team-b's (Kueue's order)
    CHECK(res.decisions[0].victims == std::vector<gs::job_id>{gs::job_id{3}});
    CHECK(book.is_running(gs::job_id{9}));
    CHECK(book.is_running(gs::job_id{1}));
    CHECK(book.is_running(gs::job_id{2}));
    CHECK(book.is_running(gs::job_id{4}));  // team-c's lower-priority job: not a borrower
    CHECK(gs::check_invariants(book).ok());
    const auto& q = pipe.admission().quotas();
    CHECK(usage_is_exact(q, book));
    CHECK(milli_of(q, 1) == 4000);
    CHECK(milli_of(q, 2) == 12000);  // still borrowing 4
    // team-a's next 4 GPUs take it to its nominal 8: team-b gives back the rest of its loan,
    // one more job; its 8-GPU job stays (team-b is within nominal then)
    const std::vector<gs::job_spec> second{for_tenant(whole_gpu_job(10, 2, 2, 5), 1)};
    const auto res2 = pipe.schedule(book, second, t_now + gs::seconds(1), g);
    CHECK(res2.decisions[0].kind == gs::verdict::admit);
    CHECK(res2.decisions[0].victims == std::vector<gs::job_id>{gs::job_id{2}});
    CHECK(book.is_running(gs::job_id{1}));
    CHECK(book.is_running(gs::job_id{4}));
    CHECK(usage_is_exact(q, book));
    CHECK(milli_of(q, 1) == 8000);
    CHECK_FALSE(q.is_borrowing(gs::tenant_id{2}));
    CHECK(gs::check_invariants(book).ok());
  }

  TEST_CASE("without reclaim, or reclaim from lower priority only, the refusal stands") {
    const auto cat = gs::basic_catalog();
    for (const auto mode :
         {gs::reclaim_within_cohort::never, gs::reclaim_within_cohort::lower_priority}) {
      auto book = borrowed_cohort(cat);
      gs::quota_admission<> adm(team_abc(cat));
      adm.set_reclaim(mode);
      auto pipe = gs::make_pipeline(std::move(adm));
      gs::random_engine g(1);
      // priority 5 < team-b's 20: lower_priority finds no candidate
      const std::vector<gs::job_spec> jobs{for_tenant(whole_gpu_job(9, 1, 4, 5), 1)};
      const auto res = pipe.schedule(book, jobs, t_now, g);
      CHECK(res.decisions[0].kind == gs::verdict::defer);
      CHECK(res.decisions[0].why.code == gs::reason_code::over_quota);
      CHECK(res.decisions[0].victims.empty());
      CHECK(book.running().size() == 4);
      CHECK(usage_is_exact(pipe.admission().quotas(), book));
    }
    // lower_priority with a preemptor above team-b's priority reclaims
    auto book = borrowed_cohort(cat);
    gs::quota_admission<> adm(team_abc(cat));
    adm.set_reclaim(gs::reclaim_within_cohort::lower_priority);
    auto pipe = gs::make_pipeline(std::move(adm));
    gs::random_engine g(1);
    const std::vector<gs::job_spec> jobs{for_tenant(whole_gpu_job(9, 1, 4, 30), 1)};
    const auto res = pipe.schedule(book, jobs, t_now, g);
    CHECK(res.decisions[0].kind == gs::verdict::admit);
    CHECK(res.decisions[0].victims == std::vector<gs::job_id>{gs::job_id{3}});
  }

  TEST_CASE("checkpoint-aware reclaim on free resources evicts the borrower's cheapest job") {
    const auto cat = gs::basic_catalog();
    for (const bool reclaim : {true, false}) {
      CAPTURE(reclaim);
      gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(5, 8)));
      auto ckpt = [](gs::job_spec j, gs::sim_time at) {
        j.checkpoint.last = at;
        return j;
      };
      const auto t0 = gs::at(gs::seconds(0));
      REQUIRE(run_on(book, for_tenant(whole_gpu_job(1, 1, 8, 20), 2), {0}, t0));
      // job 2 checkpointed a minute ago (cheap to requeue), job 3 never did (costly)
      REQUIRE(run_on(book, ckpt(for_tenant(whole_gpu_job(2, 1, 4, 20), 2), t_now - gs::seconds(60)),
                     {1}, gs::at(gs::seconds(100))));
      REQUIRE(
          run_on(book, for_tenant(whole_gpu_job(3, 1, 4, 20), 2), {1}, gs::at(gs::seconds(200))));
      REQUIRE(
          run_on(book, for_tenant(whole_gpu_job(4, 1, 8, 0), 3), {2}, gs::at(gs::seconds(300))));
      gs::checkpoint_aware_options o;
      o.reclaim = reclaim;
      auto pipe = gs::make_pipeline(gs::quota_admission<>(team_abc(cat)),
                                    gs::checkpoint_aware_preemption(o));
      gs::random_engine g(1);
      const std::vector<gs::job_spec> jobs{for_tenant(whole_gpu_job(9, 1, 4, 5), 1)};
      const auto res = pipe.schedule(book, jobs, t_now, g);
      if (reclaim) {
        CHECK(res.decisions[0].kind == gs::verdict::admit);
        CHECK(res.decisions[0].victims == std::vector<gs::job_id>{gs::job_id{2}});
        REQUIRE(res.decisions[0].victim_details.size() == 1);
        CHECK(res.decisions[0].lost_gpu_seconds == doctest::Approx(4 * 60.0));
        CHECK(book.is_running(gs::job_id{3}));
        CHECK(book.is_running(gs::job_id{4}));
      } else {
        CHECK(res.decisions[0].kind == gs::verdict::defer);
        CHECK(res.decisions[0].why.code == gs::reason_code::over_quota);
        CHECK(book.running().size() == 4);
      }
      CHECK(usage_is_exact(pipe.admission().quotas(), book));
      CHECK(gs::check_invariants(book).ok());
    }
  }

  TEST_CASE("no_preemption never reclaims on free resources") {
    const auto cat = gs::basic_catalog();
    auto book = borrowed_cohort(cat);
    auto pipe = gs::make_pipeline(gs::quota_admission<>(team_abc(cat)), gs::no_preemption{});
    gs::random_engine g(1);
    const std::vector<gs::job_spec> jobs{for_tenant(whole_gpu_job(9, 1, 4, 5), 1)};
    const auto res = pipe.schedule(book, jobs, t_now, g);
    CHECK(res.decisions[0].kind == gs::verdict::defer);
    CHECK(res.decisions[0].why.code == gs::reason_code::over_quota);
    CHECK(book.running().size() == 4);
  }

  TEST_CASE("a gang over its own nominal quota is not helped by reclaim") {
    const auto cat = gs::basic_catalog();
    {
      // team-a runs 4 GPUs already; 8 more would take it to 12 > 8: deferred before placement
      auto book = borrowed_cohort(cat);
      REQUIRE(run_on(book, for_tenant(whole_gpu_job(5, 1, 4, 5), 1), {3}, gs::at(gs::seconds(0))));
      auto pipe = gs::make_pipeline(gs::quota_admission<>(team_abc(cat)));
      gs::random_engine g(1);
      const std::vector<gs::job_spec> jobs{for_tenant(whole_gpu_job(9, 2, 4, 5), 1)};
      const auto res = pipe.schedule(book, jobs, t_now, g);
      CHECK(res.decisions[0].kind == gs::verdict::defer);
      CHECK(res.decisions[0].why.code == gs::reason_code::over_quota);
      CHECK(res.decisions[0].victims.empty());
      CHECK(book.running().size() == 5);
    }
    {
      // Only whole H100s are governed and the gang asks for any model: its lower bound says
      // nothing, so only the exact placement shows 12 H100s > team-a's nominal 8. team-b
      // borrows 16 of the cohort's 24; evicting enough of it would make room in the cohort, but
      // team-a would then borrow: nothing is evicted.
      gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(5, 8)));
      REQUIRE(run_on(book, for_tenant(whole_gpu_job(1, 1, 8, 20), 2), {0}, gs::at(gs::seconds(0))));
      REQUIRE(run_on(book, for_tenant(whole_gpu_job(2, 1, 8, 20), 2), {1}, gs::at(gs::seconds(1))));
      REQUIRE(
          run_on(book, for_tenant(whole_gpu_job(3, 2, 4, 20), 2), {2, 2}, gs::at(gs::seconds(2))));
      auto pipe = gs::make_pipeline(gs::quota_admission<>(team_abc(cat, true)));
      gs::random_engine g(1);
      const std::vector<gs::job_spec> jobs{for_tenant(whole_gpu_job(9, 3, 4, 5), 1)};
      const auto res = pipe.schedule(book, jobs, t_now, g);
      CHECK(res.decisions[0].kind == gs::verdict::defer);
      CHECK(res.decisions[0].why.code == gs::reason_code::over_quota);
      CHECK(res.decisions[0].victims.empty());
      CHECK(res.decisions[0].preemption.code == gs::reason_code::no_victims);
      CHECK(book.running().size() == 3);
      // the same gang at 8 GPUs is within nominal: it reclaims (team-b's 2 x 4-GPU gang first)
      const std::vector<gs::job_spec> fits{for_tenant(whole_gpu_job(10, 2, 4, 5), 1)};
      const auto res2 = pipe.schedule(book, fits, t_now, g);
      CHECK(res2.decisions[0].kind == gs::verdict::admit);
      CHECK(res2.decisions[0].victims == std::vector<gs::job_id>{gs::job_id{3}});
      CHECK(usage_is_exact(pipe.admission().quotas(), book));
    }
  }

  TEST_CASE(
      "property: random cycles keep quota usage exact and never block a gang within nominal") {
    // 40 GPUs, 24 of cohort quota: gangs of 1 GPU per task always fit the cluster, so every
    // refusal is the quota's. Jobs arrive, finish and are requeued when preempted, with random
    // tenants and priorities; after every cycle the policy's usage equals a recount, and at
    // every decision the reclaim laws hold (checked_quota).
    const auto cat = gs::basic_catalog();
    int reclaimed = 0;
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      CAPTURE(seed);
      gs::random_engine g(seed);
      gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(5, 8)));
      auto pipe = gs::make_pipeline(checked_quota(team_abc(cat)));
      std::vector<gs::job_spec> pending;
      std::map<gs::job_id, gs::job_spec> specs;
      unsigned next = 1;
      for (int cycle = 0; cycle < 60; ++cycle) {
        const auto now = gs::at(gs::seconds(100 * (cycle + 1)));
        for (auto k = gs::uniform_index(g, 4); k > 0; --k) {
          // one draw per statement: argument evaluation order is unspecified in C++
          const int gpus = 1 + static_cast<int>(gs::uniform_index(g, 3));
          const int prio = static_cast<int>(gs::uniform_index(g, 30));
          const unsigned tenant = 1 + static_cast<unsigned>(gs::uniform_index(g, 3));
          auto j = for_tenant(whole_gpu_job(next++, gpus, 1, prio), tenant);
          specs[j.id] = j;
          pending.push_back(j);
        }
        std::vector<gs::job_id> done;
        for (const auto& r : book.running()) {
          if (gs::uniform_index(g, 5) == 0) done.push_back(r.spec.id);
        }
        for (const auto id : done) pipe.release(book, id, now, g);
        const auto res = pipe.schedule(book, pending, now, g);
        for (const auto& d : res.decisions) {
          if (d.kind != gs::verdict::admit) continue;
          std::erase_if(pending, [&](const gs::job_spec& j) { return j.id == d.job; });
          for (const auto v : d.victims) pending.push_back(specs.at(v));  // requeued
          if (d.why.code == gs::reason_code::placed_by_preemption) ++reclaimed;
        }
        REQUIRE(gs::check_invariants(book).ok());
        // what the policy kept in step through the cycle's commits, against a recount
        CHECK(usage_is_exact(pipe.admission().quotas(), book));
      }
      CHECK(pipe.admission().blocked_within_nominal == 0);
      CHECK(pipe.admission().foreign_candidates == 0);
    }
    CHECK(reclaimed > 0);  // the path is exercised
  }
}

}  // namespace policy_quota_free_reclaim_test
