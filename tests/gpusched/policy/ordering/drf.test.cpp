// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include <gpusched/pipeline/registry.hpp>
#include <gpusched/pipeline/pipeline.hpp>
#include <gpusched/policy/ordering/drf.hpp>
#include <gpusched/workload/tenant.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_ordering_drf_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

gs::share_vector vec(std::initializer_list<double> v) {
  gs::share_vector out(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double x : v) out[i++] = x;
  return out;
}

gs::resource_basis paper_basis() { return gs::resource_basis::custom({"cpu", "memory"}, {9, 18}); }

gs::job_spec job(unsigned id, unsigned tenant, int gpus, int tasks = 1, int submit_s = 0) {
  gs::job_spec j;
  j.id = gs::job_id{id};
  j.tenant = gs::tenant_id{tenant};
  j.submit = gs::at(gs::seconds(submit_s));
  j.groups.push_back({.name = "w",
                      .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                  .cpu = 1_cores,
                                  .memory = 1_gib},
                      .count = tasks});
  return j;
}

std::vector<gs::job_id> ids(std::span<const gs::job_spec*> v) {
  std::vector<gs::job_id> out;
  for (auto* j : v) out.push_back(j->id);
  return out;
}

/// Runs a seeded sequence of cycles (admissions, evictions by priority preemption), releases
/// through the pipeline and, now and then, a release behind its back (which the policy must
/// detect); after each step `check(book, now)` compares the incremental order with a fresh one.
template <class Pipe, class Check>
void incremental_sequence(gs::random_engine& g, Pipe& pipe, gs::ledger& book, Check check) {
  const auto cat = gs::basic_catalog();
  unsigned next = 1;
  for (int step = 0; step < 30; ++step) {
    const auto now = gs::at(gs::seconds(step));
    const auto dice = gs::uniform_index(g, 10);
    if (dice < 6 || book.running().empty()) {
      std::vector<gs::job_spec> batch;
      const auto n = 1 + gs::uniform_index(g, 6);
      for (std::size_t i = 0; i < n; ++i) {
        batch.push_back(gs::testing::random_job(g, cat, gs::job_id{next++}, now, 2));
        batch.back().tenant = gs::tenant_id{static_cast<unsigned>(gs::uniform_index(g, 6))};
      }
      pipe.schedule(book, batch, now, g);
    } else {
      const auto& run = book.running();
      const auto id = run[gs::uniform_index(g, run.size())].spec.id;
      if (dice == 9) {
        book.release(id);  // not reported: the policy must rebuild its state
      } else {
        pipe.release(book, id, now, g);
      }
    }
    check(book, now);
  }
}

}  // namespace

static_assert(gs::ordering_policy<gs::drf_ordering>);
static_assert(gs::incremental_ordering_policy<gs::drf_ordering>);
static_assert(!gs::incremental_ordering_policy<gs::fifo_ordering>);
static_assert(!gs::comparison_ordering_policy<gs::drf_ordering>);

TEST_SUITE("policy/ordering/drf") {
  TEST_CASE("the DRF paper example gives A 3 tasks and B 2 tasks with dominant shares 2/3") {
    const auto b = paper_basis();
    const std::vector<gs::share_vector> d = {vec({1, 4}), vec({3, 1})};
    const auto r = gs::progressive_filling(b, d);
    CHECK(r.tasks == std::vector<std::int64_t>{3, 2});
    CHECK(r.dominant[0] == doctest::Approx(2.0 / 3));
    CHECK(r.dominant[1] == doctest::Approx(2.0 / 3));
    CHECK(r.used[0] == doctest::Approx(9));   // CPU 9/9
    CHECK(r.used[1] == doctest::Approx(14));  // memory 14/18
    // Our tie-break at share 0 picks the smaller index (A); the paper's Table 2 starts with B.
    // Either way the final allocation is the same; ours is pinned here.
    CHECK(r.picks == std::vector<std::size_t>{0, 1, 0, 1, 0});
  }

  TEST_CASE("weighted DRF with weights 2 and 1 breaks the tie at one third towards A") {
    const auto b = paper_basis();
    const std::vector<gs::share_vector> d = {vec({1, 4}), vec({3, 1})};
    const std::vector<double> w = {2, 1};
    const auto r = gs::progressive_filling(b, d, w);
    // A at 3 tasks and B at 1 task both have weighted share 1/3; the tie goes to A (index 0),
    // so A = 4, B = 1 using 7 CPU and 17 GB (the other tie-break would give 3 and 2).
    CHECK(r.tasks == std::vector<std::int64_t>{4, 1});
    CHECK(r.used[0] == doctest::Approx(7));
    CHECK(r.used[1] == doctest::Approx(17));
    // Swapping the users swaps who wins the tie: the rule is by index, not by identity.
    const std::vector<gs::share_vector> d2 = {vec({3, 1}), vec({1, 4})};
    const std::vector<double> w2 = {1, 2};
    const auto r2 = gs::progressive_filling(b, d2, w2);
    CHECK(r2.tasks == std::vector<std::int64_t>{2, 3});
  }

  TEST_CASE("progressive filling rejects bad demands and weights naming the user and field") {
    const auto b = paper_basis();
    const std::vector<gs::share_vector> bad = {vec({1, 4}), vec({-1, 1})};
    CHECK_THROWS_WITH_AS(gs::progressive_filling(b, bad),
                         doctest::Contains("user 1: field 'demand'"), gs::invalid_value_error);
    const std::vector<gs::share_vector> zero = {vec({0, 0})};
    CHECK_THROWS_AS(gs::progressive_filling(b, zero), gs::invalid_value_error);
    const std::vector<gs::share_vector> ok = {vec({1, 4}), vec({3, 1})};
    const std::vector<double> w = {1, 0};
    CHECK_THROWS_WITH_AS(gs::progressive_filling(b, ok, w),
                         doctest::Contains("user 1: field 'weight'"), gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(gs::resource_basis::custom({"cpu", "gpu"}, {9, 0}),
                         doctest::Contains("dimension 'gpu': field 'capacity'"),
                         gs::invalid_value_error);
  }

  TEST_CASE(
      "progressive filling is Pareto efficient and shares fairly up to one task on random "
      "instances") {
    const auto seed = gs::seed_from_env(401);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    for (int round = 0; round < 300; ++round) {
      const std::size_t dims = 1 + gs::uniform_index(g, 3);
      const std::size_t users = 1 + gs::uniform_index(g, 3);
      std::vector<std::string> names;
      std::vector<double> caps;
      for (std::size_t r = 0; r < dims; ++r) {
        names.push_back("r" + std::to_string(r));
        caps.push_back(static_cast<double>(4 + gs::uniform_index(g, 9)));
      }
      const auto b = gs::resource_basis::custom(names, caps);
      std::vector<gs::share_vector> d;
      std::vector<double> w;
      for (std::size_t u = 0; u < users; ++u) {
        gs::share_vector v(static_cast<Eigen::Index>(dims));
        for (std::size_t r = 0; r < dims; ++r)
          v[static_cast<Eigen::Index>(r)] = static_cast<double>(gs::uniform_index(g, 4));
        if ((v == 0).all()) v[0] = 1;
        d.push_back(v);
        w.push_back(static_cast<double>(1 + gs::uniform_index(g, 3)));
      }
      const auto res = gs::progressive_filling(b, d, w);
      CAPTURE(round);
      // feasible, and Pareto efficient: nobody's next task fits
      CHECK((res.used <= b.capacity() + 1e-9).all());
      double wsum = 0, delta_sum = 0;
      for (std::size_t u = 0; u < users; ++u) {
        CHECK_FALSE(((res.used + d[u]) <= b.capacity() + 1e-9).all());
        wsum += w[u];
        delta_sum += b.dominant_share(d[u]);
      }
      // sharing incentive, discrete form: s_i >= (w_i / W) (1 - sum_j delta_j), where delta_j
      // is one task's dominant share (the continuous guarantee minus one task per user)
      for (std::size_t u = 0; u < users; ++u) {
        CHECK(res.dominant[u] >= w[u] / wsum * (1 - delta_sum) - 1e-9);
      }
      // envy-freeness up to one task: replaying the grants, whenever j got its last task while
      // i's next task still fitted, j's weighted share without that task is at most i's final
      {
        std::vector<std::size_t> last(users, res.picks.size());
        for (std::size_t t = 0; t < res.picks.size(); ++t) last[res.picks[t]] = t;
        gs::share_vector used = b.zero();
        for (std::size_t t = 0; t < res.picks.size(); ++t) {
          const std::size_t j = res.picks[t];
          if (last[j] == t) {
            for (std::size_t i = 0; i < users; ++i) {
              if (i == j || !((used + d[i]) <= b.capacity() + 1e-9).all()) continue;
              CHECK((static_cast<double>(res.tasks[j]) - 1) * b.dominant_share(d[j]) / w[j] <=
                    res.dominant[i] / w[i] + 1e-9);
            }
          }
          used += d[j];
        }
      }
      // brute force (small instances): for every feasible integer allocation y, some user k
      // has (y_k - 1) delta_k / w_k below the min weighted share DRF achieved (max-min fair
      // up to one task)
      double m = 1e300;
      for (std::size_t u = 0; u < users; ++u) m = std::min(m, res.dominant[u] / w[u]);
      std::vector<std::int64_t> y(users, 0);
      std::function<void(std::size_t, gs::share_vector)> rec = [&](std::size_t u,
                                                                   gs::share_vector used) {
        if (u == users) {
          double best = 1e300;
          for (std::size_t k = 0; k < users; ++k) {
            best = std::min(best, static_cast<double>(y[k] - 1) * b.dominant_share(d[k]) / w[k]);
          }
          CHECK(best < m + 1e-9);
          return;
        }
        for (y[u] = 0;; ++y[u]) {
          rec(u + 1, used);
          used += d[u];
          if (!(used <= b.capacity() + 1e-9).all()) break;
        }
        y[u] = 0;
      };
      rec(0, b.zero());
    }
  }

  TEST_CASE("drf ordering gives the next job to the tenant with the lowest dominant share") {
    gs::random_engine g(1);
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(2, 8)));
    // tenant 1 already runs 8 GPUs (share 1/2 of the GPUs), tenant 2 runs nothing
    auto pipe = gs::make_pipeline(gs::no_preemption{});
    const std::vector<gs::job_spec> running = {job(1, 1, 8)};
    pipe.schedule(book, running, {}, g);
    REQUIRE(book.running().size() == 1);
    const std::vector<gs::job_spec> pending = {job(10, 1, 1, 1, 0), job(11, 1, 1, 1, 1),
                                               job(20, 2, 4, 1, 5), job(21, 2, 4, 1, 6),
                                               job(22, 2, 4, 1, 7)};
    std::vector<const gs::job_spec*> q;
    for (const auto& j : pending) q.push_back(&j);
    gs::drf_ordering drf;
    const gs::schedule_context ctx(book, gs::at(gs::seconds(10)), g);
    drf.order(ctx, q);
    // tenant 2 goes first (0 < 1/2), after 4 GPUs it is at 1/4, still lower; after 8 GPUs it
    // ties tenant 1 at 1/2 and the tie goes to the smaller tenant id (1); then tenant 1 is at
    // 9/16 and tenant 2 (1/2) goes again
    CHECK(ids(q) == std::vector<gs::job_id>{gs::job_id{20}, gs::job_id{21}, gs::job_id{10},
                                            gs::job_id{22}, gs::job_id{11}});
    REQUIRE(drf.picks().size() == 5);
    CHECK(drf.picks()[0].dominant_share == doctest::Approx(0));
    CHECK(drf.picks()[2].dominant_share == doctest::Approx(0.5));
    CHECK(drf.picks()[2].tenant == gs::tenant_id{1});
    CHECK(drf.basis().name(static_cast<std::size_t>(drf.picks()[2].dominant_dimension)) ==
          "gpu:H100-SXM5-80GB");
    // snapshot mode (no progressive filling): all of tenant 2 first, then tenant 1
    gs::drf_ordering snap(gs::drf_options{.progressive = false, .history = {}});
    snap.order(ctx, q);
    CHECK(ids(q) == std::vector<gs::job_id>{gs::job_id{20}, gs::job_id{21}, gs::job_id{22},
                                            gs::job_id{10}, gs::job_id{11}});
  }

  TEST_CASE("weights divide the dominant share in the ordering") {
    gs::random_engine g(1);
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(2, 8)));
    std::vector<gs::job_spec> pending;
    for (unsigned i = 0; i < 6; ++i) pending.push_back(job(10 + i, 1, 1, 1, static_cast<int>(i)));
    for (unsigned i = 0; i < 6; ++i) pending.push_back(job(20 + i, 2, 1, 1, static_cast<int>(i)));
    std::vector<const gs::job_spec*> q;
    for (const auto& j : pending) q.push_back(&j);
    gs::drf_ordering drf(gs::tenant_tree(
        {{gs::tenant_id{1}, "a", {}, 2.0, 0}, {gs::tenant_id{2}, "b", {}, 1.0, 0}}));
    drf.order(gs::schedule_context(book, {}, g), q);
    // weight 2: tenant 1 gets two jobs for every job of tenant 2 (ties to tenant 1)
    CHECK(ids(q) == std::vector<gs::job_id>{gs::job_id{10}, gs::job_id{20}, gs::job_id{11},
                                            gs::job_id{12}, gs::job_id{21}, gs::job_id{13},
                                            gs::job_id{14}, gs::job_id{22}, gs::job_id{15},
                                            gs::job_id{23}, gs::job_id{24}, gs::job_id{25}});
  }

  TEST_CASE("hierarchical drf compares organisations before teams") {
    gs::random_engine g(1);
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(4, 8)));
    // org 1 has teams 11 and 12; org 2 has team 21. Orgs weigh 1 each.
    gs::tenant_tree tree({{gs::tenant_id{1}, "org1", {}, 1, 0},
                          {gs::tenant_id{2}, "org2", {}, 1, 0},
                          {gs::tenant_id{11}, "t11", gs::tenant_id{1}, 1, 0},
                          {gs::tenant_id{12}, "t12", gs::tenant_id{1}, 1, 0},
                          {gs::tenant_id{21}, "t21", gs::tenant_id{2}, 1, 0}});
    std::vector<gs::job_spec> pending;
    for (unsigned i = 0; i < 4; ++i) {
      pending.push_back(job(110 + i, 11, 2, 1, static_cast<int>(i)));
      pending.push_back(job(120 + i, 12, 2, 1, static_cast<int>(i)));
      pending.push_back(job(210 + i, 21, 2, 1, static_cast<int>(i)));
    }
    std::vector<const gs::job_spec*> q;
    for (const auto& j : pending) q.push_back(&j);
    gs::drf_ordering h(tree);
    CHECK(h.name() == "hdrf");
    h.order(gs::schedule_context(book, {}, g), q);
    // Org 2's single team gets as much as org 1's two teams together: in the first 8 jobs,
    // 4 come from team 21.
    int t21 = 0;
    for (std::size_t i = 0; i < 8; ++i) t21 += q[i]->tenant == gs::tenant_id{21} ? 1 : 0;
    CHECK(t21 == 4);
    // flat DRF over the same jobs gives team 21 only a third
    gs::drf_ordering flat;
    flat.order(gs::schedule_context(book, {}, g), q);
    int flat21 = 0;
    for (std::size_t i = 0; i < 6; ++i) flat21 += q[i]->tenant == gs::tenant_id{21} ? 1 : 0;
    CHECK(flat21 == 2);
  }

  TEST_CASE("drf ordering returns a permutation on random clusters and queues") {
    const auto seed = gs::seed_from_env(402);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    for (int round = 0; round < 20; ++round) {
      gs::ledger book(gs::cluster(cat, gs::testing::random_nodes(g, 12)));
      std::vector<gs::job_spec> load, pending;
      for (unsigned i = 0; i < 20; ++i)
        load.push_back(gs::testing::random_job(g, cat, gs::job_id{i + 1}, {}, 2));
      auto pipe = gs::make_pipeline(gs::no_preemption{});
      pipe.schedule(book, load, {}, g);
      for (unsigned i = 0; i < 60; ++i) {
        pending.push_back(gs::testing::random_job(
            g, cat, gs::job_id{1000 + i},
            gs::at(gs::seconds(static_cast<int>(gs::uniform_index(g, 5)))), 3));
      }
      std::vector<const gs::job_spec*> q;
      for (const auto& j : pending) q.push_back(&j);
      gs::drf_ordering drf(gs::tenant_tree(
          {{gs::tenant_id{0}, "t0", {}, 1, 0}, {gs::tenant_id{1}, "t1", gs::tenant_id{0}, 3, 0}}));
      drf.order(gs::schedule_context(book, {}, g), q);
      auto sorted = ids(q);
      std::sort(sorted.begin(), sorted.end());
      CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
      CHECK(sorted.size() == pending.size());
      // within one tenant, FIFO (submit, id)
      for (std::size_t a = 0; a < q.size(); ++a) {
        for (std::size_t b2 = a + 1; b2 < q.size(); ++b2) {
          if (q[a]->tenant != q[b2]->tenant) continue;
          CHECK((q[a]->submit < q[b2]->submit ||
                 (q[a]->submit == q[b2]->submit && q[a]->id < q[b2]->id)));
        }
      }
      // deterministic
      auto again = q;
      std::reverse(again.begin(), again.end());
      drf.order(gs::schedule_context(book, {}, g), again);
      CHECK(again == q);
    }
  }
}

TEST_SUITE("policy/ordering/drf") {
  TEST_CASE("the flat drf path gives the same order and picks as the general algorithm") {
    const auto seed = gs::seed_from_env(404);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    int wide = 0;
    for (int round = 0; round < 60; ++round) {
      INFO("round = " << round);
      gs::ledger book(gs::cluster(cat, gs::testing::random_nodes(g, 6 + gs::uniform_index(g, 20))));
      const auto tenants = 1 + gs::uniform_index(g, 40);
      // tenant ids: small ones and some beyond the direct lookup table
      const auto tenant = [&] {
        const auto t = static_cast<unsigned>(gs::uniform_index(g, tenants));
        return gs::tenant_id{t % 7 == 6 ? 5000000 + t : t};
      };
      std::vector<gs::job_spec> load, pending;
      for (unsigned i = 0; i < 30; ++i) {
        load.push_back(gs::testing::random_job(g, cat, gs::job_id{i + 1}, {}, 2));
        load.back().tenant = tenant();
      }
      auto pipe = gs::make_pipeline(gs::no_preemption{});
      pipe.schedule(book, load, {}, g);
      const auto n = gs::uniform_index(g, 200);
      for (unsigned i = 0; i < n; ++i) {
        pending.push_back(gs::testing::random_job(
            g, cat, gs::job_id{1000 + i},
            gs::at(gs::seconds(static_cast<int>(gs::uniform_index(g, 4)))), 3));
        pending.back().tenant = tenant();
      }
      // a one-level tree with random weights for some tenants (others are implicit, weight 1);
      // sometimes a tiny weight, whose keys do not fit the packed 64-bit sort
      std::vector<gs::tenant_spec> specs;
      const bool tiny = round % 5 == 4;
      for (unsigned t = 0; t < tenants; ++t) {
        if (gs::uniform_index(g, 2) == 0) continue;
        const double w =
            tiny && t == 0 ? 1e-9 : 0.25 * static_cast<double>(1 + gs::uniform_index(g, 12));
        specs.push_back({gs::tenant_id{t}, "", {}, w, 0});
      }
      gs::drf_options o;
      o.progressive = round % 4 != 3;
      o.gpus = round % 3 == 2 ? gs::resource_basis::gpu_dimensions::pooled
                              : gs::resource_basis::gpu_dimensions::per_model;
      gs::drf_ordering fast(gs::tenant_tree(specs), o), general(gs::tenant_tree(specs), o);
      std::vector<const gs::job_spec*> q1, q2;
      for (const auto& j : pending) q1.push_back(&j);
      std::shuffle(q1.begin(), q1.end(), g);
      q2 = q1;
      const gs::schedule_context ctx(book, gs::at(gs::seconds(10)), g);
      fast.order(ctx, q1);
      general.order_general(ctx, q2);
      REQUIRE(q1.size() == q2.size());
      CHECK(ids(q1) == ids(q2));
      REQUIRE(fast.picks().size() == general.picks().size());
      for (std::size_t i = 0; i < q1.size(); ++i) {
        const auto& a = fast.picks()[i];
        const auto& b = general.picks()[i];
        CHECK(a.job == b.job);
        CHECK(a.tenant == b.tenant);
        CHECK(a.dominant_share == b.dominant_share);
        CHECK(a.weighted_share == b.weighted_share);
        CHECK(a.dominant_dimension == b.dominant_dimension);
        if (a.weighted_share > 1e6) ++wide;
      }
    }
    CHECK(wide > 0);  // the wide-key fallback was exercised
  }
}

TEST_SUITE("policy/ordering/drf") {
  TEST_CASE("incremental drf orders like a fresh drf after any seeded admit/evict/release run") {
    const auto seed = gs::seed_from_env(405);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    const gs::tenant_tree tree({{gs::tenant_id{1}, "a", {}, 2.0, 0},
                                {gs::tenant_id{2}, "b", {}, 0.5, 0},
                                {gs::tenant_id{4}, "c", {}, 1.5, 0}});
    gs::drf_options o;
    o.incremental = true;
    std::size_t live = 0, checks = 0;
    for (int round = 0; round < 6; ++round) {
      INFO("round = " << round);
      // no MIG: allocations are whole units, so tracked sums are exact
      gs::ledger book(gs::cluster(cat, gs::testing::random_nodes(g, 10, false)));
      auto pipe = gs::make_pipeline(gs::drf_ordering(tree, o));
      std::vector<gs::job_spec> probe;
      for (unsigned i = 0; i < 40; ++i) {
        probe.push_back(gs::testing::random_job(g, cat, gs::job_id{100000 + i}, {}, 3));
        probe.back().tenant = gs::tenant_id{static_cast<unsigned>(gs::uniform_index(g, 7))};
      }
      incremental_sequence(g, pipe, book, [&](const gs::ledger& b, gs::sim_time now) {
        const gs::schedule_context ctx(b, now, g);
        std::vector<const gs::job_spec*> q1, q2;
        for (const auto& j : probe) q1.push_back(&j);
        q2 = q1;
        auto& inc = pipe.ordering();
        const auto before = inc.incremental_cycles();
        inc.order(ctx, q1);
        live += inc.incremental_cycles() - before;
        gs::drf_ordering fresh(tree);
        fresh.order(ctx, q2);
        ++checks;
        CHECK(ids(q1) == ids(q2));
        REQUIRE(inc.picks().size() == fresh.picks().size());
        for (std::size_t i = 0; i < q1.size(); ++i) {
          CHECK(inc.picks()[i].dominant_share == fresh.picks()[i].dominant_share);
          CHECK(inc.picks()[i].dominant_dimension == fresh.picks()[i].dominant_dimension);
        }
        // the tenant DRF serves next, by brute force over the running jobs
        std::vector<std::pair<gs::tenant_id, gs::share_vector>> use;
        for (const auto& r : b.running()) {
          auto it = std::find_if(use.begin(), use.end(),
                                 [&](const auto& u) { return u.first == r.spec.tenant; });
          if (it == use.end()) {
            use.emplace_back(r.spec.tenant, inc.basis().zero());
            it = use.end() - 1;
          }
          inc.basis().add_running(it->second, b.state(), r);
        }
        std::optional<std::pair<std::int64_t, unsigned>> best;
        for (const auto& [t, u] : use) {
          if ((u == 0).all()) continue;  // holds nothing: not ranked
          const auto p = tree.find(t);
          const double w = p ? tree[*p].weight : 1.0;
          const std::pair<std::int64_t, unsigned> k{
              gs::detail::share_key(inc.basis().dominant_share(u) / w), t.value()};
          if (!best || k < *best) best = k;
        }
        if (best) {
          REQUIRE(inc.lowest_share_tenant().has_value());
          CHECK(inc.lowest_share_tenant()->value() == best->second);
        }
      });
    }
    // most cycles read the tracked state (the others follow an unreported release)
    CHECK(live * 10 > checks * 7);
  }

  TEST_CASE("any_ordering_policy forwards the incremental hooks through the pipeline") {
    const auto seed = gs::seed_from_env(406);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    gs::drf_options o;
    o.incremental = true;
    gs::ledger book(gs::cluster(cat, gs::testing::random_nodes(g, 10, false)));
    gs::pipeline<gs::any_ordering_policy> pipe(gs::any_ordering_policy(gs::drf_ordering(o)), {}, {},
                                               {}, {});
    std::vector<gs::job_spec> probe;
    for (unsigned i = 0; i < 40; ++i) {
      probe.push_back(gs::testing::random_job(g, cat, gs::job_id{100000 + i}, {}, 3));
      probe.back().tenant = gs::tenant_id{static_cast<unsigned>(gs::uniform_index(g, 7))};
    }
    incremental_sequence(g, pipe, book, [&](const gs::ledger& b, gs::sim_time now) {
      const gs::schedule_context ctx(b, now, g);
      std::vector<const gs::job_spec*> q1, q2;
      for (const auto& j : probe) q1.push_back(&j);
      q2 = q1;
      pipe.ordering().order(ctx, q1);
      gs::drf_ordering fresh;
      fresh.order(ctx, q2);
      CHECK(ids(q1) == ids(q2));
    });
  }
}

TEST_SUITE("policy/ordering/drf") {
  TEST_CASE("incremental drf detects a ledger change not reported through its hooks") {
    gs::random_engine g(407);
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(4, 8)));
    gs::drf_options o;
    o.incremental = true;
    auto pipe = gs::make_pipeline(gs::drf_ordering(o));
    const auto now = gs::at(gs::seconds(0));
    // tenant 1 holds 4 GPUs (job 1), tenant 2 holds 2 (job 2)
    pipe.schedule(book, std::vector<gs::job_spec>{job(1, 1, 4), job(2, 2, 2)}, now, g);
    REQUIRE(book.running().size() == 2);
    const std::vector<gs::job_spec> probe = {job(100, 1, 1), job(101, 2, 1)};
    const auto order_both = [&](std::vector<const gs::job_spec*>& q1,
                                std::vector<const gs::job_spec*>& q2) {
      const gs::schedule_context ctx(book, now, g);
      q1.clear();
      for (const auto& j : probe) q1.push_back(&j);
      q2 = q1;
      pipe.ordering().order(ctx, q1);
      gs::drf_ordering fresh;
      fresh.order(ctx, q2);
    };
    std::vector<const gs::job_spec*> q1, q2;
    order_both(q1, q2);  // builds the tracked state (or reads it, if the hooks built it)
    const auto c0 = pipe.ordering().incremental_cycles();
    order_both(q1, q2);
    CHECK(pipe.ordering().incremental_cycles() == c0 + 1);  // nothing changed: read
    CHECK(ids(q1) == std::vector<gs::job_id>{gs::job_id{101}, gs::job_id{100}});
    // behind its back: tenant 1 gives back its 4 GPUs and tenant 2 starts 4 more, through
    // another pipeline; the number of running jobs stays 2, the version moves
    const auto v0 = book.version();
    book.release(gs::job_id{1});
    auto other = gs::make_pipeline(gs::fifo_ordering{});
    other.schedule(book, std::vector<gs::job_spec>{job(3, 2, 4)}, now, g);
    REQUIRE(book.running().size() == 2);
    CHECK(book.version() == v0 + 2);
    order_both(q1, q2);
    CHECK(pipe.ordering().incremental_cycles() == c0 + 1);  // rebuilt from the ledger
    CHECK(ids(q1) == ids(q2));
    CHECK(ids(q1) == std::vector<gs::job_id>{gs::job_id{100}, gs::job_id{101}});
    // a change reported through the pipeline keeps the state: read, and still right
    pipe.release(book, gs::job_id{3}, now, g);
    order_both(q1, q2);
    CHECK(pipe.ordering().incremental_cycles() == c0 + 2);
    CHECK(ids(q1) == ids(q2));
    pipe.schedule(book, std::vector<gs::job_spec>{job(4, 1, 8)}, now, g);
    REQUIRE(book.is_running(gs::job_id{4}));
    const auto c1 = pipe.ordering().incremental_cycles();  // the cycle's own order read it too
    CHECK(c1 == c0 + 3);
    order_both(q1, q2);
    CHECK(pipe.ordering().incremental_cycles() == c1 + 1);
    CHECK(ids(q1) == ids(q2));
    CHECK(ids(q1) == std::vector<gs::job_id>{gs::job_id{101}, gs::job_id{100}});
  }

  TEST_CASE("any_ordering_policy forwards on_admitted and on_released to the held policy") {
    // a policy that only counts its hooks: without forwarding every count stays zero
    struct counting_ordering {
      using policy_category = gs::ordering_tag;
      using hooks = gs::hook_list<gs::hook::incremental>;
      std::shared_ptr<std::map<gs::job_id, int>> net =
          std::make_shared<std::map<gs::job_id, int>>();
      std::shared_ptr<int> calls = std::make_shared<int>(0);
      [[nodiscard]] std::string_view name() const noexcept { return "counting"; }
      void order(const gs::schedule_context&, std::span<const gs::job_spec*>) {}
      void on_admitted(const gs::schedule_context&, const gs::job_spec& j,
                       std::span<const gs::task_allocation>) {
        ++(*net)[j.id];
        ++*calls;
      }
      void on_released(const gs::schedule_context&, const gs::job_spec& j,
                       std::span<const gs::task_allocation>) {
        --(*net)[j.id];
        ++*calls;
      }
    };
    static_assert(gs::incremental_ordering_policy<counting_ordering>);
    const counting_ordering counter;
    gs::random_engine g(408);
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(2, 8)));
    gs::pipeline<gs::any_ordering_policy> pipe(gs::any_ordering_policy(counter), {}, {}, {}, {});
    const auto now = gs::at(gs::seconds(0));
    pipe.schedule(book, std::vector<gs::job_spec>{job(1, 1, 4), job(2, 2, 2), job(3, 3, 8)}, now,
                  g);
    REQUIRE(book.running().size() == 3);
    CHECK(*counter.calls == 3);
    pipe.release(book, gs::job_id{2}, now, g);
    CHECK(*counter.calls == 4);
    // what the hooks saw adds up to the ledger: +1 for each running job, 0 for the released
    for (const auto& r : book.running()) CHECK((*counter.net)[r.spec.id] == 1);
    CHECK((*counter.net)[gs::job_id{2}] == 0);
  }
}

TEST_SUITE("workload/ledger") {
  TEST_CASE("the ledger version moves with every committed mutation and only then") {
    gs::random_engine g(409);
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(2, 8)));
    CHECK(book.version() == 0);
    auto pipe = gs::make_pipeline(gs::fifo_ordering{});
    const auto now = gs::at(gs::seconds(0));
    pipe.schedule(book, std::vector<gs::job_spec>{job(1, 1, 4), job(2, 2, 2)}, now, g);
    REQUIRE(book.running().size() == 2);
    CHECK(book.version() == 2);  // one commit per admitted job
    (void)book.running();
    (void)book.find(gs::job_id{1});
    {
      auto tx = book.begin();
    }  // rolled back
    CHECK(book.version() == 2);
    {
      auto tx = book.begin();
      tx.commit();  // nothing placed, evicted or shrunk
    }
    CHECK(book.version() == 2);
    {
      auto tx = book.begin();
      tx.evict(gs::job_id{2});
      tx.commit();
    }
    CHECK(book.version() == 3);
    CHECK_THROWS_AS(book.release(gs::job_id{2}), gs::invalid_value_error);  // not running
    CHECK(book.version() == 3);
    book.release(gs::job_id{1});
    CHECK(book.version() == 4);
    book.set_available(gs::node_index{0}, false);
    CHECK(book.version() == 5);
    CHECK_THROWS_AS(book.set_available(gs::node_index{99}, false), gs::invalid_value_error);
    CHECK(book.version() == 5);
    const gs::ledger copy = book;
    CHECK(copy.version() == 5);
  }
}

TEST_SUITE("workload/tenant") {
  TEST_CASE("a tenant tree rejects bad weights, orphans and cycles naming tenant and field") {
    using gs::tenant_id;
    CHECK_THROWS_WITH_AS(gs::tenant_tree({{tenant_id{1}, "a", {}, 0.0, 0}}),
                         doctest::Contains("tenant 1 'a': field 'weight'"),
                         gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(gs::tenant_tree({{tenant_id{1}, "a", {}, -2.0, 0}}),
                         doctest::Contains("field 'weight'"), gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(gs::tenant_tree({{tenant_id{1}, "a", tenant_id{9}, 1.0, 0}}),
                         doctest::Contains("tenant 1 'a': field 'parent' = 9"),
                         gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(gs::tenant_tree({{tenant_id{1}, "a", tenant_id{2}, 1.0, 0},
                                          {tenant_id{2}, "b", tenant_id{1}, 1.0, 0}}),
                         doctest::Contains("cycle"), gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(gs::tenant_tree({{tenant_id{1}, "a", tenant_id{1}, 1.0, 0}}),
                         doctest::Contains("cycle"), gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(
        gs::tenant_tree({{tenant_id{1}, "a", {}, 1.0, 0}, {tenant_id{1}, "b", {}, 1.0, 0}}),
        doctest::Contains("duplicate tenant id"), gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(gs::tenant_tree({{tenant_id{1}, "a", {}, 1.0, -1}}),
                         doctest::Contains("field 'priority'"), gs::invalid_value_error);
  }

  TEST_CASE("a tenant tree knows parents children depths and normalised shares") {
    using gs::tenant_id;
    const gs::tenant_tree t({{tenant_id{5}, "leaf", tenant_id{1}, 3.0, 0},
                             {tenant_id{1}, "org", {}, 1.0, 0},
                             {tenant_id{2}, "org2", {}, 3.0, 0},
                             {tenant_id{6}, "leaf2", tenant_id{1}, 1.0, 0}});
    REQUIRE(t.size() == 4);
    const auto leaf = *t.find(tenant_id{5});
    const auto org = *t.find(tenant_id{1});
    CHECK(t.parent(leaf) == org);
    CHECK(t.parent(org) == gs::tenant_tree::npos);
    CHECK(t.depth(leaf) == 1);
    CHECK(t.height() == 2);
    CHECK(t.children(gs::tenant_tree::npos).size() == 2);
    CHECK(t.is_leaf(leaf));
    CHECK_FALSE(t.is_leaf(org));
    CHECK(t.normalized_weight(org) == doctest::Approx(0.25));
    CHECK(t.global_share(leaf) == doctest::Approx(0.25 * 0.75));
  }
}

TEST_SUITE("policy/ordering/decay") {
  TEST_CASE("decayed usage halves after one half-life and an old allocation fades") {
    gs::decayed_usage u(gs::seconds(3600), 2);
    const gs::tenant_id t{3};
    u.add(t, vec({100, 40}), gs::at(gs::seconds(0)));
    CHECK(u.usage(t, gs::at(gs::seconds(3600)))[0] == doctest::Approx(50));
    CHECK(u.usage(t, gs::at(gs::seconds(3600)))[1] == doctest::Approx(20));
    CHECK(u.usage(t, gs::at(gs::seconds(7200)))[0] == doctest::Approx(25));
    u.add(t, vec({10, 0}), gs::at(gs::seconds(3600)));
    CHECK(u.usage(t, gs::at(gs::seconds(3600)))[0] == doctest::Approx(60));
    CHECK(u.usage(gs::tenant_id{9}, gs::at(gs::seconds(1)))[0] == 0);
    CHECK_THROWS_WITH_AS(u.add(t, vec({-1, 0}), gs::at(gs::seconds(4000))),
                         doctest::Contains("tenant 3: field 'usage'"), gs::invalid_value_error);
    CHECK(u.usage(t, gs::at(gs::seconds(3600)))[0] == doctest::Approx(60));  // unchanged
    CHECK_THROWS_AS(gs::decayed_usage(gs::sim_duration{0}, 2), gs::invalid_value_error);
  }

  TEST_CASE("accrued usage of a steady allocation converges to the allocation times tau") {
    gs::random_engine g(1);
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(1, 8)));
    auto pipe = gs::make_pipeline(gs::no_preemption{});
    const std::vector<gs::job_spec> running = {job(1, 7, 4)};
    pipe.schedule(book, running, {}, g);
    const gs::resource_basis b(book.state());
    gs::decayed_usage u(gs::seconds(600), b.size());
    // accrue in uneven steps; exact integration makes the sum independent of the step sizes
    for (int s : {10, 250, 600, 1800, 6000, 30000}) u.accrue(book, b, gs::at(gs::seconds(s)));
    const auto eq = u.equivalent_allocation(gs::tenant_id{7}, gs::at(gs::seconds(30000)));
    CHECK(eq[b.gpu_dimension(cat.id("H100-SXM5-80GB"))] == doctest::Approx(4000).epsilon(1e-6));
    gs::decayed_usage one_step(gs::seconds(600), b.size());
    one_step.accrue(book, b, gs::at(gs::seconds(30000)));
    CHECK(one_step.usage(gs::tenant_id{7}, gs::at(gs::seconds(30000)))[0] ==
          doctest::Approx(u.usage(gs::tenant_id{7}, gs::at(gs::seconds(30000)))[0]));
  }

  TEST_CASE("decayed drf puts a tenant with heavy history behind a newcomer") {
    gs::random_engine g(1);
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(2, 8)));
    const gs::resource_basis b(book.state());
    auto hist = std::make_shared<gs::decayed_usage>(gs::seconds(3600), b.size());
    gs::share_vector used = b.zero();
    used[b.gpu_dimension(cat.id("H100-SXM5-80GB"))] = 8000.0 * 3600;  // 8 GPUs for an hour
    hist->add(gs::tenant_id{1}, used, gs::at(gs::seconds(0)));
    const std::vector<gs::job_spec> pending = {job(10, 1, 1, 1, 0), job(20, 2, 1, 1, 5)};
    std::vector<const gs::job_spec*> q = {&pending[0], &pending[1]};
    gs::drf_ordering d(gs::drf_options{.gpus = gs::resource_basis::gpu_dimensions::per_model,
                                       .progressive = true,
                                       .history = hist});
    CHECK(d.name() == "drf-decayed");
    d.order(gs::schedule_context(book, gs::at(gs::seconds(3600)), g), q);
    CHECK(q[0]->id == gs::job_id{20});
    CHECK(d.picks()[1].dominant_share > 0);
    // without history, FIFO between equal (zero) shares is by tenant id
    gs::drf_ordering plain;
    plain.order(gs::schedule_context(book, gs::at(gs::seconds(3600)), g), q);
    CHECK(q[0]->id == gs::job_id{10});
  }
}

}  // namespace policy_ordering_drf_test
