// SPDX-License-Identifier: Apache-2.0
// Laws over every comparison ordering of the fair-share family, plus Slurm multifactor and
// Kueue DRS behaviour.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include <gpusched/pipeline/registry.hpp>
#include <gpusched/policy/ordering/kueue_share.hpp>
#include <gpusched/policy/ordering/las.hpp>
#include <gpusched/policy/ordering/multifactor.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_ordering_laws_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

std::shared_ptr<gs::tenant_tree> four_tenants() {
  return std::make_shared<gs::tenant_tree>(
      std::vector<gs::tenant_spec>{{gs::tenant_id{0}, "a", {}, 1, 0},
                                   {gs::tenant_id{1}, "b", {}, 2, 5},
                                   {gs::tenant_id{2}, "c", gs::tenant_id{1}, 1, 1},
                                   {gs::tenant_id{3}, "d", gs::tenant_id{1}, 3, 2}});
}

// Each comparison ordering under test, built with state that makes its keys vary.
struct las_case {
  static gs::las_ordering make(gs::random_engine& g) {
    auto rec = std::make_shared<gs::service_record>();
    for (unsigned i = 0; i < 40; ++i) {
      const double service = static_cast<double>(gs::uniform_index(g, 3)) * 2000.0;
      const auto wall = gs::seconds(static_cast<int>(gs::uniform_index(g, 3)) * 1000);
      rec->add(gs::job_id{100 - i}, service, wall);  // one draw per statement
    }
    return gs::las_ordering(rec, {1000, 3000});
  }
};
struct gittins_case {
  static gs::gittins_ordering make(gs::random_engine& g) {
    auto rec = std::make_shared<gs::service_record>();
    for (unsigned i = 0; i < 40; ++i) {
      rec->add(gs::job_id{100 - i}, static_cast<double>(gs::uniform_index(g, 4)) * 900.0, {});
    }
    std::vector<double> samples;
    for (int i = 0; i < 200; ++i)
      samples.push_back(static_cast<double>(1 + gs::uniform_index(g, 10000)));
    return gs::gittins_ordering(std::make_shared<gs::gpu_time_prior>(samples), rec);
  }
};
struct srtf_case {
  static gs::srtf_ordering make(gs::random_engine& g) {
    auto rec = std::make_shared<gs::service_record>();
    for (unsigned i = 0; i < 40; ++i)
      rec->add(gs::job_id{100 - i}, 0, gs::seconds(static_cast<int>(gs::uniform_index(g, 3)) * 60));
    return gs::srtf_ordering(rec, gs::uniform_index(g, 2) == 0);
  }
};
struct multifactor_case {
  static auto make(gs::random_engine& g) {
    auto usage = std::make_shared<gs::decayed_usage>(gs::seconds(3600), 1);
    for (unsigned t = 0; t < 4; ++t) {
      gs::share_vector v(1);
      v[0] = static_cast<double>(gs::uniform_index(g, 3));
      usage->add(gs::tenant_id{t}, v, {});
    }
    auto tree = four_tenants();
    return gs::make_multifactor(gs::weighted(gs::age_factor{gs::seconds(3)}, 1000.0),
                                gs::weighted(gs::job_size_factor{}, 100.0),
                                gs::weighted(gs::fair_share_factor(usage, tree), 2000.0),
                                gs::weighted(gs::qos_factor{2}, 500.0),
                                gs::weighted(gs::tenant_priority_factor(tree), 50.0));
  }
};
struct kueue_case {
  static gs::kueue_share_ordering make(gs::random_engine& g) {
    std::vector<gs::cohort_quota> q;
    for (unsigned t = 0; t < 3; ++t) {
      q.push_back({gs::tenant_id{t}, static_cast<std::int64_t>(gs::uniform_index(g, 3)) * 2000,
                   gs::cpu_millis{4000}, gs::memory_mib{8192},
                   static_cast<double>(gs::uniform_index(g, 3))});
    }
    return gs::kueue_share_ordering(q);
  }
};

}  // namespace

TEST_SUITE("policy/ordering/laws") {
  TEST_CASE_TEMPLATE(
      "every fair-share comparison ordering is a strict weak order and order() sorts by it", C,
      las_case, gittins_case, srtf_case, multifactor_case, kueue_case) {
    const auto seed = gs::seed_from_env(403);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(4, 8)));
    {
      std::vector<gs::job_spec> load;
      for (unsigned i = 0; i < 6; ++i)
        load.push_back(gs::testing::random_job(g, cat, gs::job_id{1000 + i}, {}, 2));
      auto pipe = gs::make_pipeline(gs::no_preemption{});
      pipe.schedule(book, load, {}, g);
    }
    auto p = C::make(g);
    const gs::schedule_context ctx(book, gs::at(gs::seconds(2)), g);
    std::vector<gs::job_spec> jobs;
    for (unsigned i = 0; i < 40; ++i) {
      auto j = gs::testing::random_job(
          g, cat, gs::job_id{100 - i},
          gs::at(gs::seconds(static_cast<int>(gs::uniform_index(g, 4)))), 2);
      if (gs::uniform_index(g, 3) != 0)
        j.expected_duration = gs::seconds(static_cast<int>(60 + 60 * gs::uniform_index(g, 3)));
      jobs.push_back(std::move(j));
    }
    for (const auto& a : jobs) {
      CHECK_FALSE(p.before(ctx, a, a));
      for (const auto& b : jobs) {
        if (p.before(ctx, a, b)) CHECK_FALSE(p.before(ctx, b, a));
        for (const auto& c : jobs) {
          const bool inc_ab = !p.before(ctx, a, b) && !p.before(ctx, b, a);
          const bool inc_bc = !p.before(ctx, b, c) && !p.before(ctx, c, b);
          const bool inc_ac = !p.before(ctx, a, c) && !p.before(ctx, c, a);
          if (p.before(ctx, a, b) && p.before(ctx, b, c)) CHECK(p.before(ctx, a, c));
          if (inc_ab && inc_bc) CHECK(inc_ac);
        }
      }
    }
    std::vector<const gs::job_spec*> order;
    for (const auto& j : jobs) order.push_back(&j);
    auto copy = order;
    p.order(ctx, order);
    gs::any_ordering_policy erased{p};
    erased.order(ctx, copy);
    CHECK(order == copy);
    CHECK(std::is_sorted(order.begin(), order.end(),
                         [&](auto* a, auto* b) { return p.before(ctx, *a, *b); }));
  }
}

TEST_SUITE("policy/ordering/multifactor") {
  TEST_CASE("slurm factors are normalised to the unit interval as slurm defines them") {
    gs::random_engine g(1);
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(2, 8)));  // 16 GPUs
    gs::job_spec j;
    j.id = gs::job_id{1};
    j.tenant = gs::tenant_id{2};
    j.priority = 3;
    j.submit = gs::at(gs::seconds(0));
    j.groups.push_back(
        {.name = "w",
         .request = {.gpu = gs::gpu_demand::whole(4_gpus), .cpu = 1_cores, .memory = 1_gib},
         .count = 1});
    const gs::schedule_context day(book, gs::at(gs::seconds(86400)), g);
    CHECK(gs::age_factor{}(day, j) == doctest::Approx(1.0 / 7));  // PriorityMaxAge 7 days
    CHECK(gs::age_factor{gs::seconds(3600)}(day, j) == 1.0);      // capped
    CHECK(gs::job_size_factor{}(day, j) == doctest::Approx(0.25));
    CHECK(gs::job_size_factor{true}(day, j) == doctest::Approx(0.75));
    CHECK(gs::qos_factor{6}(day, j) == doctest::Approx(0.5));
    CHECK(gs::qos_factor{2}(day, j) == 1.0);
    auto tree = four_tenants();
    CHECK(gs::tenant_priority_factor(tree)(day, j) == doctest::Approx(1.0 / 5));
    // fair share 2^(-U/S): tenant 2's global share is 2/3 x 1/4 = 1/6
    auto usage = std::make_shared<gs::decayed_usage>(gs::seconds(3600), 1);
    gs::share_vector v(1);
    v[0] = 1.0;
    usage->add(gs::tenant_id{2}, v, gs::at(gs::seconds(0)));
    usage->add(gs::tenant_id{0}, v * 3.0, gs::at(gs::seconds(0)));
    const gs::fair_share_factor fs(usage, tree);
    // U = 1/4 of all usage, S = 1/6: F = 2^(-1.5)
    CHECK(fs(day, j) == doctest::Approx(std::exp2(-1.5)));
    gs::job_spec none = j;
    none.tenant = gs::tenant_id{3};  // no usage: F = 1
    CHECK(fs(day, none) == doctest::Approx(1.0));
    none.tenant = gs::tenant_id{77};  // not in the tree: no shares
    CHECK(fs(day, none) == 0.0);
    CHECK(usage->normalized_usage(gs::tenant_id{0}, gs::at(gs::seconds(50000))) ==
          doctest::Approx(0.75));
  }

  TEST_CASE("the multifactor priority is the weighted sum and explains itself") {
    gs::random_engine g(1);
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(2, 8)));
    auto mf = gs::make_multifactor(gs::weighted(gs::age_factor{gs::seconds(100)}, 1000.0),
                                   gs::weighted(gs::qos_factor{10}, 10000.0));
    gs::job_spec old, urgent;
    old.id = gs::job_id{1};
    old.submit = gs::at(gs::seconds(0));
    urgent.id = gs::job_id{2};
    urgent.priority = 1;
    urgent.submit = gs::at(gs::seconds(100));
    const gs::schedule_context ctx(book, gs::at(gs::seconds(100)), g);
    CHECK(mf.priority(ctx, old) == doctest::Approx(1000));
    CHECK(mf.priority(ctx, urgent) == doctest::Approx(1000));
    CHECK(mf.before(ctx, old, urgent));  // equal priority: FIFO
    CHECK(mf.explain(ctx, old) == "age 1000x1 + qos 1e+04x0 = 1000");
    CHECK_THROWS_WITH_AS(gs::make_multifactor(gs::weighted(gs::age_factor{}, -1.0)),
                         doctest::Contains("factor 'age': field 'weight'"),
                         gs::invalid_value_error);
  }
}

TEST_SUITE("policy/ordering/kueue") {
  TEST_CASE("kueue DRS counts only borrowing above the nominal quota divided by weight") {
    gs::kueue_share_ordering k({{gs::tenant_id{1}, 4000, 8_cores, 64_gib, 1.0},
                                {gs::tenant_id{2}, 4000, 8_cores, 64_gib, 2.0},
                                {gs::tenant_id{3}, 0, 0_cores, 0_gib, 0.0}});
    CHECK(k.lendable().gpu_milli == 8000);
    CHECK(k.share(gs::tenant_id{1}, {4000, 8000, 1024}) == 0);  // within quota
    CHECK(k.share(gs::tenant_id{1}, {6000, 0, 0}) == doctest::Approx(2000.0 / 8000 * 1000));
    CHECK(k.share(gs::tenant_id{2}, {6000, 0, 0}) == doctest::Approx(2000.0 / 8000 * 1000 / 2));
    CHECK(std::isinf(k.share(gs::tenant_id{3}, {1, 0, 0})));  // weight 0 while borrowing
    CHECK(k.share(gs::tenant_id{3}, {0, 0, 0}) == 0);
    CHECK_THROWS_WITH_AS(gs::kueue_share_ordering({{gs::tenant_id{1}, -1, {}, {}, 1.0}}),
                         doctest::Contains("cohort tenant 1: field 'gpu_milli'"),
                         gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(gs::kueue_share_ordering({{gs::tenant_id{1}, 1, {}, {}, -1.0}}),
                         doctest::Contains("field 'weight'"), gs::invalid_value_error);
    CHECK_THROWS_AS(gs::kueue_share_ordering(
                        {{gs::tenant_id{1}, 1, {}, {}, 1.0}, {gs::tenant_id{1}, 1, {}, {}, 1.0}}),
                    gs::invalid_value_error);
  }

  TEST_CASE("kueue ordering admits first the job whose tenant borrows least after admission") {
    gs::random_engine g(1);
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(2, 8)));
    gs::kueue_share_ordering k({{gs::tenant_id{1}, 4000, 64_cores, 512_gib, 1.0},
                                {gs::tenant_id{2}, 4000, 64_cores, 512_gib, 1.0}});
    auto mk = [](unsigned id, unsigned t, int gpus) {
      gs::job_spec j;
      j.id = gs::job_id{id};
      j.tenant = gs::tenant_id{t};
      j.groups.push_back({.name = "w",
                          .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                      .cpu = 1_cores,
                                      .memory = 1_gib},
                          .count = 1});
      return j;
    };
    auto pipe = gs::make_pipeline(gs::no_preemption{});
    const std::vector<gs::job_spec> run = {mk(1, 1, 6)};  // tenant 1 borrows 2 GPUs
    pipe.schedule(book, run, {}, g);
    const std::vector<gs::job_spec> pending = {mk(10, 1, 1), mk(20, 2, 4), mk(21, 2, 6)};
    std::vector<const gs::job_spec*> q = {&pending[0], &pending[1], &pending[2]};
    k.order(gs::schedule_context(book, {}, g), q);
    CHECK(q[0]->id == gs::job_id{20});  // within quota: DRS 0
    CHECK(q[1]->id == gs::job_id{21});  // borrows 2 GPUs: 250
    CHECK(q[2]->id == gs::job_id{10});  // would borrow 3 GPUs: 375
  }
}

TEST_SUITE("policy/ordering/kueue_share") {
  TEST_CASE("kueue_share_ordering made without quotas reads the run's quota tree") {
    const auto cat = gs::basic_catalog();
    gs::quota_tree::builder b(cat);
    b.cohort("all");
    b.queue("a", gs::tenant_id{1}, "all").nominal(gs::quota_resource::gpu_milli(), 4000);
    b.queue("b", gs::tenant_id{2}, "all").nominal(gs::quota_resource::gpu_milli(), 4000);
    gs::policy_environment env;
    env.quotas = std::make_shared<const gs::quota_tree>(b.build());
    env.tenants = std::make_shared<const gs::tenant_tree>(
        std::vector<gs::tenant_spec>{{gs::tenant_id{1}, "a", gs::tenant_id::invalid(), 2.0, 0},
                                     {gs::tenant_id{2}, "b", gs::tenant_id::invalid(), 1.0, 0}});
    const auto quotas = gs::cohort_quotas_of(*env.quotas, env.tenants.get());
    REQUIRE(quotas.size() == 2);
    CHECK(quotas[0].gpu_milli == 4000);
    CHECK(quotas[0].weight == 2.0);
    CHECK(quotas[1].weight == 1.0);
    // the same order as one made from those quotas, on random queues
    gs::random_engine g(gs::seed_from_env(77));
    gs::ledger book(gs::cluster(cat, gs::testing::random_nodes(g, 6)));
    gs::kueue_share_ordering from_run;
    gs::kueue_share_ordering given(quotas);
    std::vector<gs::job_spec> jobs;
    for (unsigned i = 1; i <= 12; ++i) {
      auto j = gs::testing::random_job(g, cat, gs::job_id{i}, gs::at(gs::seconds(i)));
      j.tenant = gs::tenant_id{1 + i % 2};
      jobs.push_back(j);
    }
    std::vector<const gs::job_spec*> q1, q2;
    for (const auto& j : jobs) q1.push_back(&j);
    q2 = q1;
    const gs::schedule_context ctx(book, gs::at(gs::seconds(100)), g, env);
    from_run.order(ctx, q1);
    given.order(ctx, q2);
    CHECK(q1 == q2);
    CHECK(from_run.lendable().gpu_milli == 8000.0);
    CHECK(from_run.before(ctx, *q1[0], *q1[1]) == given.before(ctx, *q2[0], *q2[1]));
    // without a quota tree in the run: a clear error
    gs::kueue_share_ordering lost;
    CHECK_THROWS_WITH_AS(lost.order(gs::schedule_context(book, {}, g), q1),
                         doctest::Contains("needs the run's quota tree"), gs::invalid_value_error);
  }
}

namespace {
/// 2d-gittins needs a GPU-time prior, fair-tree a tenant tree, kueue-drs a quota tree; the
/// others ignore them. Tenants 0..2 (random_job's, here): one cohort, 4 GPUs each.
gs::policy_inputs prior_inputs() {
  gs::policy_inputs in;
  in.prior = std::make_shared<const gs::gpu_time_prior>(std::vector<double>{60, 600, 3600, 36000});
  gs::quota_tree::builder b(gs::basic_catalog());
  b.cohort("all");
  std::vector<gs::tenant_spec> teams;
  for (unsigned t = 0; t < 3; ++t) {
    b.queue("team-" + std::to_string(t), gs::tenant_id{t}, "all")
        .nominal(gs::quota_resource::gpu_milli(), 4000);
    teams.push_back(
        {gs::tenant_id{t}, "team-" + std::to_string(t), gs::tenant_id::invalid(), 1.0 + t, 0});
  }
  in.quotas = std::make_shared<const gs::quota_tree>(b.build());
  in.tenants = std::make_shared<const gs::tenant_tree>(std::move(teams));
  return in;
}
}  // namespace

TEST_SUITE("policy/ordering/registry") {
  TEST_CASE("every registered ordering runs seeded pipeline cycles without over-committing") {
    const auto seed = gs::seed_from_env(404);
    INFO("seed = " << seed);
    const auto cat = gs::basic_catalog();
    for (const auto name : gs::policy_names{}.ordering) {
      CAPTURE(name);
      gs::random_engine g(seed);
      auto pipe = gs::make_pipeline(gs::pipeline_config{.ordering = std::string(name),
                                                        .admission = "gang",
                                                        .packing = "first-fit",
                                                        .placement = "first-fit",
                                                        .preemption = "none"},
                                    prior_inputs());
      gs::ledger book(gs::cluster(cat, gs::testing::random_nodes(g, 10)));
      std::vector<gs::job_spec> pending;
      unsigned id = 1;
      for (int cycle = 0; cycle < 5; ++cycle) {
        for (int k = 0; k < 15; ++k) {
          auto j = gs::testing::random_job(g, cat, gs::job_id{id++},
                                           gs::at(gs::seconds(cycle * 60 + k)), 3);
          if (gs::uniform_index(g, 2) == 0) j.expected_duration = gs::seconds(600);
          pending.push_back(std::move(j));
        }
        const auto res = pipe.schedule(book, pending, gs::at(gs::seconds(cycle * 60 + 30)), g);
        CHECK(res.decisions.size() == pending.size());
        CHECK(gs::check_invariants(book).ok());
        std::erase_if(pending, [&](const gs::job_spec& j) { return book.is_running(j.id); });
        // some running jobs finish
        std::vector<gs::job_id> done;
        for (const auto& r : book.running()) {
          if (gs::uniform_index(g, 3) == 0) done.push_back(r.spec.id);
        }
        for (auto d : done) book.release(d);
      }
    }
    CHECK_THROWS_WITH_AS(gs::make_ordering_policy("drf2"), doctest::Contains("known: fifo"),
                         gs::invalid_value_error);
  }
}

}  // namespace policy_ordering_laws_test
