// SPDX-License-Identifier: Apache-2.0
// The by-name registry and the type-erased pipeline: for every policy the registry can build,
// the static pipeline holding the concrete policy and the any_pipeline holding it through the
// registry make the same decisions, cycle after cycle, on seeded random workloads (elastic jobs,
// checkpoints, several tenants); the free-quota reclaim path included. Then the open registry:
// a user's policy by name, duplicates and unknown names refused.
// Seed: GPUSCHED_SEED; cycles per composition: GPUSCHED_CYCLES.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <gpusched/check/invariants.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/policy/admission/quota.hpp>

#include "generators.hpp"
#include "preemption_fixtures.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace pipeline_registry_test {

namespace gs = gpusched;

namespace {
long cycles_from_env(long fallback) {
  if (const char* s = std::getenv("GPUSCHED_CYCLES")) return std::atol(s);  // NOLINT
  return fallback;
}

/// Four tenants in one cohort, 6 whole GPUs (any model: milli-GPU) of nominal quota each, so
/// that some borrow and others reclaim.
gs::quota_tree four_teams(const gs::gpu_catalog& cat) {
  gs::quota_tree::builder b(cat);
  b.cohort("all");
  for (unsigned t = 0; t < 4; ++t) {
    b.queue("team-" + std::to_string(t), gs::tenant_id{t}, "all")
        .nominal(gs::quota_resource::gpu_milli(), 6000);
  }
  return b.build();
}

/// A random job as the property tests make it, sometimes elastic (each group may shrink to one
/// task) and sometimes checkpointing.
gs::job_spec workload_job(gs::random_engine& g, const gs::gpu_catalog& cat, gs::job_id id,
                          gs::sim_time now) {
  auto j = gs::testing::random_job(g, cat, id, now);
  if (gs::uniform_index(g, 3) == 0) {
    for (auto& grp : j.groups) grp.min_count = 1;
  }
  if (gs::uniform_index(g, 2) == 0) {
    j.checkpoint.interval = gs::seconds(60);
    j.checkpoint.last = now;
    j.checkpoint.checkpoint_cost = gs::seconds(5);
    j.checkpoint.restore_cost = gs::seconds(10);
  }
  if (gs::uniform_index(g, 2) == 0) j.expected_duration = gs::seconds(30 + 10 * id.value() % 300);
  return j;
}

/// Runs `a` and `b` in lock step on two copies of the same random cluster with the same job
/// stream and the same engine seed, and requires identical cycle results and ledgers.
template <class A, class B>
void lockstep(A a, B b, std::uint64_t seed, long cycles, const std::string& label) {
  INFO(label << ", seed " << seed);
  gs::random_engine g(seed);
  gs::random_engine ga(seed + 1), gb(seed + 1);
  const auto cat = gs::basic_catalog();
  gs::ledger book_a(gs::cluster(cat, gs::testing::random_nodes(g, 3 + gs::uniform_index(g, 6))));
  gs::ledger book_b = book_a;
  std::vector<gs::job_spec> pending;
  unsigned next_id = 1;
  std::size_t admitted = 0, grown = 0;
  for (long c = 0; c < cycles; ++c) {
    const auto now = gs::at(gs::seconds(10 * c));
    for (auto k = gs::uniform_index(g, 3); k > 0; --k) {
      pending.push_back(workload_job(g, cat, gs::job_id{next_id++}, now));
    }
    std::vector<gs::job_id> finishing;
    for (const auto& r : book_a.running()) {
      if (gs::uniform_index(g, 6) == 0) finishing.push_back(r.spec.id);
    }
    for (auto id : finishing) {
      a.release(book_a, id, now, ga);
      b.release(book_b, id, now, gb);
    }
    const auto ra = a.schedule(book_a, pending, now, ga);
    const auto rb = b.schedule(book_b, pending, now, gb);
    REQUIRE_MESSAGE(ra.decisions.size() == rb.decisions.size(), "cycle " << c);
    for (std::size_t i = 0; i < ra.decisions.size(); ++i) {
      REQUIRE_MESSAGE(ra.decisions[i] == rb.decisions[i],
                      "cycle " << c << ", decision " << i << ": static '"
                               << gs::describe(ra.decisions[i], book_a.state()) << "' vs erased '"
                               << gs::describe(rb.decisions[i], book_b.state()) << "'");
    }
    REQUIRE_MESSAGE(ra.grown == rb.grown, "cycle " << c);
    REQUIRE(book_a.running().size() == book_b.running().size());
    for (std::size_t i = 0; i < book_a.running().size(); ++i) {
      REQUIRE(book_a.running()[i].spec.id == book_b.running()[i].spec.id);
      REQUIRE(book_a.running()[i].tasks == book_b.running()[i].tasks);
    }
    REQUIRE(gs::check_invariants(book_a).ok());
    admitted += ra.count(gs::verdict::admit);
    grown += ra.grown.size();
    std::vector<gs::job_id> gone;
    for (const auto& d : ra.decisions) {
      if (d.kind != gs::verdict::defer) gone.push_back(d.job);
    }
    std::erase_if(pending, [&](const gs::job_spec& j) {
      return std::find(gone.begin(), gone.end(), j.id) != gone.end();
    });
    if (pending.size() > 30) pending.erase(pending.begin(), pending.begin() + 10);
  }
  CHECK_MESSAGE(admitted > 0, label);
}

/// A user's ordering: last come, first served.
struct newest_first {
  using policy_category = gs::ordering_tag;
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "newest-first"; }
  void order(const gs::schedule_context&, std::span<const gs::job_spec*> jobs) {
    std::sort(jobs.begin(), jobs.end(), [](const gs::job_spec* a, const gs::job_spec* b) {
      return a->submit != b->submit ? a->submit > b->submit : a->id > b->id;
    });
  }
};

const char* const default_names[] = {"fifo", "gang", "first-fit", "first-fit", "priority"};

/// The registry's config with slot `Tag` set to `name`, the others at the defaults (which are
/// the static pipeline's defaults: fifo, gang, first fit, first fit, priority).
template <class Tag>
gs::pipeline_config config_with(std::string_view name) {
  gs::pipeline_config c{default_names[0], default_names[1], default_names[2], default_names[3],
                        default_names[4]};
  if constexpr (std::same_as<Tag, gs::ordering_tag>) c.ordering = name;
  if constexpr (std::same_as<Tag, gs::admission_tag>) c.admission = name;
  if constexpr (std::same_as<Tag, gs::packing_tag>) c.packing = name;
  if constexpr (std::same_as<Tag, gs::placement_tag>) c.placement = name;
  if constexpr (std::same_as<Tag, gs::preemption_tag>) c.preemption = name;
  return c;
}

/// The four teams of `four_teams` as a tenant tree: two accounts of two teams each, weights
/// 1 to 4, so that Fair Tree ranks differ between accounts and within them.
gs::tenant_tree two_accounts() {
  const gs::tenant_id a{100}, b{101};
  return gs::tenant_tree({{a, "acct-a", gs::tenant_id::invalid(), 1.0, 0},
                          {b, "acct-b", gs::tenant_id::invalid(), 2.0, 0},
                          {gs::tenant_id{0}, "team-0", a, 1.0, 0},
                          {gs::tenant_id{1}, "team-1", a, 3.0, 0},
                          {gs::tenant_id{2}, "team-2", b, 2.0, 0},
                          {gs::tenant_id{3}, "team-3", b, 4.0, 0}});
}

/// What the factories get: a GPU-time prior (for 2d-gittins), the run's quota tree (quota,
/// kueue-drs, checkpoint-aware-reclaim) and tenant tree (fair-tree).
gs::policy_inputs test_inputs() {
  gs::policy_inputs in;
  in.prior = std::make_shared<const gs::gpu_time_prior>(
      std::vector<double>{30, 120, 600, 3600, 7200, 36000, 86400});
  in.quotas = std::make_shared<const gs::quota_tree>(four_teams(gs::basic_catalog()));
  in.tenants = std::make_shared<const gs::tenant_tree>(two_accounts());
  return in;
}

/// `pipe` with the trees of `in` in its environment, as the registry's `make_pipeline` does.
template <class Pipeline>
Pipeline with_trees(Pipeline pipe, const gs::policy_inputs& in) {
  pipe.environment().quotas = in.quotas;
  pipe.environment().tenants = in.tenants;
  return pipe;
}

/// Every built-in policy of family `Tag`: static vs erased, others at their defaults.
template <class Tag>
void every_builtin(std::uint64_t seed, long cycles) {
  const auto in = test_inputs();
  for (const auto name : gs::builtin_names<Tag>()) {
    const auto ran = gs::with_builtin_policy<Tag>(name, in, [&](auto policy) {
      lockstep(with_trees(gs::make_pipeline(policy), in),
               gs::make_pipeline(config_with<Tag>(name), in), seed, cycles,
               std::string(gs::family_name<Tag>()) + "=" + std::string(name));
      return true;
    });
    CHECK_MESSAGE(ran.has_value(), name);
  }
}
}  // namespace

TEST_SUITE("pipeline/registry") {
  TEST_CASE("every built-in ordering decides the same through the registry as statically") {
    every_builtin<gs::ordering_tag>(gs::seed_from_env(1701), cycles_from_env(150));
  }
  TEST_CASE("every built-in admission decides the same through the registry as statically") {
    every_builtin<gs::admission_tag>(gs::seed_from_env(1702), cycles_from_env(150));
  }
  TEST_CASE("every built-in packing decides the same through the registry as statically") {
    every_builtin<gs::packing_tag>(gs::seed_from_env(1703), cycles_from_env(150));
  }
  TEST_CASE("every built-in placement decides the same through the registry as statically") {
    every_builtin<gs::placement_tag>(gs::seed_from_env(1704), cycles_from_env(150));
  }
  TEST_CASE("every built-in preemption decides the same through the registry as statically") {
    every_builtin<gs::preemption_tag>(gs::seed_from_env(1705), cycles_from_env(150));
  }

  TEST_CASE("every admission with every preemption decides the same erased as statically") {
    const auto seed = gs::seed_from_env(1706);
    const auto cycles = cycles_from_env(100);
    const auto in = test_inputs();
    for (const auto adm : gs::builtin_names<gs::admission_tag>()) {
      for (const auto pre : gs::builtin_names<gs::preemption_tag>()) {
        gs::with_builtin_policy<gs::admission_tag>(adm, in, [&](auto a) {
          gs::with_builtin_policy<gs::preemption_tag>(pre, in, [&](auto p) {
            auto cfg = config_with<gs::admission_tag>(adm);
            cfg.preemption = pre;
            lockstep(with_trees(gs::make_pipeline(a, p), in), gs::make_pipeline(cfg, in), seed,
                     cycles, std::string(adm) + "+" + std::string(pre));
            return true;
          });
          return true;
        });
      }
    }
  }

  TEST_CASE("quota admission with reclaim decides the same erased as statically, reclaiming") {
    // The any_pipeline of quota_admission and a preemption policy with select_reclaim takes the
    // free-quota reclaim path exactly as the static one (the wrappers used to drop the hooks).
    const auto seed = gs::seed_from_env(1707);
    const auto cat = gs::basic_catalog();
    gs::checkpoint_aware_options reclaiming;
    reclaiming.reclaim = true;
    const auto run = [&](auto preemption, const char* label) {
      gs::quota_admission<> adm(four_teams(cat));
      gs::any_pipeline erased(gs::make_ordering_policy("fifo"), gs::any_admission_policy(adm),
                              gs::make_packing_policy("first-fit"),
                              gs::make_placement_policy("first-fit"),
                              gs::any_preemption_policy(preemption));
      lockstep(gs::make_pipeline(adm, preemption), std::move(erased), seed, cycles_from_env(300),
               label);
    };
    run(gs::priority_preemption{}, "quota+priority");
    run(gs::checkpoint_aware_preemption{reclaiming}, "quota+checkpoint-aware(reclaim)");
    run(gs::kube_default_preemption{}, "quota+kube-default (no select_reclaim)");
    run(gs::no_preemption{}, "quota+none");
  }

  TEST_CASE("an any_pipeline with quota admission reclaims quota from a borrower on free GPUs") {
    // The case the type-erased wrappers used to lose (they did not forward reclaim_for,
    // approve_reclaim and select_reclaim): 40 GPUs, team-b (tenant 2) borrows 8 of the cohort's
    // 24 GPUs of quota, team-c holds its nominal 8; team-a's 4-GPU gang is within its nominal
    // quota and fits on the 16 free GPUs, but the cohort's quota is used up: the most recent
    // borrower's job is evicted, as the static pipeline does (quota_free_reclaim.test.cpp).
    const auto cat = gs::basic_catalog();
    const auto h100 = gs::quota_resource::gpus(cat.id("H100-SXM5-80GB"));
    gs::quota_tree::builder qb(cat);
    qb.cohort("team-abc");
    const char* teams[] = {"team-a", "team-b", "team-c"};
    for (unsigned t = 1; t <= 3; ++t) {
      qb.queue(teams[t - 1], gs::tenant_id{t}, "team-abc").nominal(h100, 8);
      qb.nominal(gs::quota_resource::gpu_milli(), 8000);
    }
    const auto tenant = [](gs::job_spec j, unsigned t) {
      j.tenant = gs::tenant_id{t};
      return j;
    };
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(5, 8)));
    using gs::testing::run_on;
    using gs::testing::whole_gpu_job;
    REQUIRE(run_on(book, tenant(whole_gpu_job(1, 1, 8, 20), 2), {0}, gs::at(gs::seconds(0))));
    REQUIRE(run_on(book, tenant(whole_gpu_job(2, 1, 4, 20), 2), {1}, gs::at(gs::seconds(100))));
    REQUIRE(run_on(book, tenant(whole_gpu_job(3, 1, 4, 20), 2), {1}, gs::at(gs::seconds(200))));
    REQUIRE(run_on(book, tenant(whole_gpu_job(4, 1, 8, 0), 3), {2}, gs::at(gs::seconds(300))));
    gs::any_pipeline pipe(gs::make_ordering_policy("fifo"),
                          gs::any_admission_policy(gs::quota_admission<>(qb.build())),
                          gs::make_packing_policy("first-fit"),
                          gs::make_placement_policy("first-fit"),
                          gs::make_preemption_policy("priority"));
    gs::random_engine g(1);
    const std::vector<gs::job_spec> jobs{tenant(whole_gpu_job(9, 1, 4, 5), 1)};
    const auto res = pipe.schedule(book, jobs, gs::at(gs::seconds(10'000)), g);
    REQUIRE(res.decisions.size() == 1);
    CHECK(res.decisions[0].kind == gs::verdict::admit);
    CHECK(res.decisions[0].why.code == gs::reason_code::placed_by_preemption);
    CHECK(res.decisions[0].victims == std::vector<gs::job_id>{gs::job_id{3}});
    CHECK(book.is_running(gs::job_id{9}));
    CHECK(gs::check_invariants(book).ok());
  }

  TEST_CASE("the open registry builds a user's policy by name and refuses duplicates") {
    gs::policy_registry reg;
    reg.add("newest-first", "last come, first served",
            [](const gs::policy_inputs&) { return newest_first{}; });
    const auto names = reg.names<gs::ordering_tag>();
    CHECK(names.back() == "newest-first");
    CHECK(names.size() == gs::builtin_names<gs::ordering_tag>().size() + 1);
    CHECK(reg.summary<gs::ordering_tag>("newest-first") == "last come, first served");
    CHECK(reg.summary<gs::ordering_tag>("drf") ==
          "weighted DRF by progressive filling, incremental");
    // a fresh registry (no global state) does not know it
    CHECK_THROWS_WITH_AS((void)gs::policy_registry{}.make_ordering("newest-first"),
                         doctest::Contains("unknown policy (known: fifo"), gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(
        reg.add("newest-first", "again", [](const gs::policy_inputs&) { return newest_first{}; }),
        doctest::Contains("ordering"), gs::invalid_value_error);
    CHECK_THROWS_AS(reg.add("drf", "shadowing a built-in",
                            [](const gs::policy_inputs&) { return newest_first{}; }),
                    gs::invalid_value_error);
    CHECK_THROWS_AS(reg.add("", "no name", [](const gs::policy_inputs&) { return newest_first{}; }),
                    gs::invalid_value_error);
    CHECK(reg.names<gs::ordering_tag>().size() == names.size());  // unchanged by the refusals
    // used in a pipeline by name: the newest job goes first
    auto pipe = reg.make_pipeline({.ordering = "newest-first", .admission = "gang-strict"});
    CHECK(pipe.ordering().name() == "newest-first");
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(1, 8)));
    gs::random_engine g(1);
    std::vector<gs::job_spec> jobs;
    for (unsigned i = 1; i <= 2; ++i) {
      gs::job_spec j = gs::testing::whole_gpu_job(i, 1, 8);
      j.submit = gs::at(gs::seconds(i));
      jobs.push_back(j);
    }
    const auto res = pipe.schedule(book, jobs, gs::at(gs::seconds(5)), g);
    REQUIRE(res.decisions.size() == 2);
    CHECK(res.decisions[0].job == gs::job_id{2});
    CHECK(res.decisions[0].kind == gs::verdict::admit);
    CHECK(res.decisions[1].kind == gs::verdict::defer);
    // an unknown name in any slot fails before anything is built
    CHECK_THROWS_WITH_AS((void)reg.make_pipeline({.placement = "nope"}),
                         doctest::Contains("placement"), gs::invalid_value_error);
  }
}

}  // namespace pipeline_registry_test
