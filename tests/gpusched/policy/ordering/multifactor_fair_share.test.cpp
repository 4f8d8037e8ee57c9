// SPDX-License-Identifier: Apache-2.0
// The self-accruing classic fair-share factor (decayed_fair_share_factor), the multifactor
// preparation hook, and the registry's `multifactor` (with fair share) and `multifactor-nofs`.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <span>
#include <vector>

#include <gpusched/pipeline/registry.hpp>
#include <gpusched/pipeline/pipeline.hpp>
#include <gpusched/policy/ordering/multifactor.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_ordering_multifactor_fair_share_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

gs::job_spec job(unsigned id, unsigned tenant, int gpus, int submit_s = 0) {
  gs::job_spec j;
  j.id = gs::job_id{id};
  j.tenant = gs::tenant_id{tenant};
  j.submit = gs::at(gs::seconds(submit_s));
  // CPU and memory proportional to the GPUs, so every dimension gives the same usage fraction
  j.groups.push_back({.name = "w",
                      .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                  .cpu = gs::cpu_millis{1000 * gpus},
                                  .memory = gs::memory_mib{1024 * gpus}},
                      .count = 1});
  return j;
}

// 16 GPUs; from t = 0 tenant 1 holds 8 GPUs (job 1) and tenant 2 holds 4 (job 2).
struct two_tenants {
  gs::random_engine g{1};
  gs::ledger book{gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8))};
  two_tenants() {
    auto pipe = gs::make_pipeline(gs::no_preemption{});
    const std::vector<gs::job_spec> run = {job(1, 1, 8), job(2, 2, 4)};
    pipe.schedule(book, run, gs::at(gs::seconds(0)), g);
    REQUIRE(book.running().size() == 2);
  }
  gs::schedule_context at(int s) { return {book, gs::at(gs::seconds(s)), g}; }
};

gs::decayed_fair_share_options hourly() {
  return {.half_life = gs::seconds(3600),
          .tenants = nullptr,
          .gpus = gs::resource_basis::gpu_dimensions::pooled};
}

// Counts its prepare calls (shared counter: the factor is copied into the ordering).
struct counting_factor {
  std::shared_ptr<int> calls = std::make_shared<int>(0);
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "count"; }
  void prepare(const gs::schedule_context&) { ++*calls; }
  [[nodiscard]] double operator()(const gs::schedule_context&, const gs::job_spec&) const {
    return 0.5;
  }
};

}  // namespace

TEST_SUITE("policy/ordering/multifactor fair share") {
  TEST_CASE("the tenant with more decayed usage goes second with F = 2 to the minus U over S") {
    two_tenants c;
    auto mf = gs::make_multifactor(gs::weighted(gs::decayed_fair_share_factor(hourly()), 10000.0),
                                   gs::weighted(gs::age_factor{}, 1000.0));
    // job 10 (tenant 1) is older than job 20 (tenant 2): FIFO and age put it first
    const std::vector<gs::job_spec> pending = {job(10, 1, 1, 0), job(20, 2, 1, 100)};
    std::vector<const gs::job_spec*> q = {&pending[0], &pending[1]};
    const auto ctx = c.at(3600);
    mf.order(ctx, q);
    // after one half-life tenant 1 has used 8 GPUs, tenant 2 4: U = 2/3 and 1/3 of all usage;
    // two tenants with equal shares: S = 1/2. F = 2^(-4/3) = 0.39685, 2^(-2/3) = 0.62996
    const auto& fs = std::get<0>(mf.factors()).factor;
    CHECK(fs.tenants_seen() == 2);
    CHECK(fs(ctx, pending[0]) == doctest::Approx(0.39685).epsilon(1e-4));
    CHECK(fs(ctx, pending[1]) == doctest::Approx(0.62996).epsilon(1e-4));
    CHECK(mf.priority(ctx, pending[0]) ==
          doctest::Approx(10000 * std::exp2(-4.0 / 3) + 1000 * 3600.0 / 604800));
    CHECK(mf.priority(ctx, pending[1]) ==
          doctest::Approx(10000 * std::exp2(-2.0 / 3) + 1000 * 3500.0 / 604800));
    CHECK(q[0]->id == gs::job_id{20});
    CHECK(q[1]->id == gs::job_id{10});
    CHECK(mf.before(ctx, pending[1], pending[0]));
    // a tenant that never ran has no usage: F = 1
    CHECK(fs(ctx, job(30, 7, 1, 0)) == 1.0);
  }

  TEST_CASE("a job released through the hook is charged up to its end") {
    two_tenants c;
    auto mf = gs::make_multifactor(gs::weighted(gs::decayed_fair_share_factor(hourly()), 1.0));
    static_assert(gs::incremental_ordering_policy<decltype(mf)>);
    // tenant 1's job ends at 1800 s, reported before the ledger lets it go
    const gs::running_job* r = c.book.find(gs::job_id{1});
    REQUIRE(r != nullptr);
    mf.on_released(c.at(1800), r->spec, r->tasks);
    c.book.release(gs::job_id{1});
    mf.prepare(c.at(3600));
    // tenant 1: 8 x (1 - 2^-0.5) charged at 1800, decayed by 2^-0.5 to 3600 = 1.65685;
    // tenant 2: 4 x (1 - 2^-1) = 2 (times tau each): U1 = 1.65685 / 3.65685
    const double u1 = 8 * (1 - std::exp2(-0.5)) * std::exp2(-0.5);
    const auto& fs = std::get<0>(mf.factors()).factor;
    REQUIRE(fs.usage() != nullptr);
    CHECK(fs.usage()->normalized_usage(gs::tenant_id{1}, gs::at(gs::seconds(3600))) ==
          doctest::Approx(u1 / (u1 + 2)));
    CHECK(fs(c.at(3600), job(10, 1, 1, 0)) == doctest::Approx(std::exp2(-2 * u1 / (u1 + 2))));
  }

  TEST_CASE("prepare runs once per order and never from priority explain or before") {
    two_tenants c;
    counting_factor counter;
    auto mf = gs::make_multifactor(gs::weighted(counter, 1.0), gs::weighted(gs::age_factor{}, 1.0));
    static_assert(!gs::incremental_ordering_policy<decltype(mf)>);  // no release hook
    const std::vector<gs::job_spec> pending = {job(10, 1, 1, 0), job(20, 2, 1, 5),
                                               job(30, 1, 1, 9)};
    std::vector<const gs::job_spec*> q = {&pending[0], &pending[1], &pending[2]};
    mf.order(c.at(60), q);
    CHECK(*counter.calls == 1);
    (void)mf.priority(c.at(60), pending[0]);
    (void)mf.explain(c.at(60), pending[1]);
    (void)mf.before(c.at(60), pending[0], pending[2]);
    CHECK(*counter.calls == 1);
    mf.order(c.at(120), q);
    CHECK(*counter.calls == 2);
    mf.prepare(c.at(180));
    CHECK(*counter.calls == 3);
  }

  TEST_CASE("copies of a fair-share ordering carry the usage so far and then evolve apart") {
    two_tenants c;
    gs::any_ordering_policy a = gs::make_ordering_policy("multifactor");
    const std::vector<gs::job_spec> pending = {job(10, 1, 1, 0), job(20, 2, 1, 100)};
    std::vector<const gs::job_spec*> q = {&pending[0], &pending[1]};
    a.order(c.at(3600), q);
    REQUIRE(q[0]->id == gs::job_id{20});
    gs::any_ordering_policy copy = a;  // holds tenant 1: 8 GPU-h, tenant 2: 4 GPU-h (decayed)
    // the original alone sees tenant 2 run 12 GPUs for a day: tenant 2 is now the heavy one
    c.book.release(gs::job_id{1});
    auto pipe = gs::make_pipeline(gs::no_preemption{});
    const std::vector<gs::job_spec> more = {job(3, 2, 8)};
    pipe.schedule(c.book, more, gs::at(gs::seconds(3600)), c.g);
    a.order(c.at(3600), q);
    a.order(c.at(90000), q);  // tenant 2 held 12 GPUs for 24 half-lives
    CHECK(q[0]->id == gs::job_id{10});
    // the copy still holds its own state of 3600 s (tenant 1 the heavier): a state shared with
    // the original would restart at this earlier time and charge only tenant 2's two jobs
    copy.order(c.at(3600), q);
    CHECK(q[0]->id == gs::job_id{20});
  }

  TEST_CASE("fair-share factor input is checked") {
    CHECK_THROWS_WITH_AS(gs::decayed_fair_share_factor({.half_life = gs::seconds(0)}),
                         doctest::Contains("fair-share factor: field 'half_life'"),
                         gs::invalid_value_error);
    CHECK_THROWS_AS(gs::decayed_fair_share_factor({.half_life = gs::seconds(-5)}),
                    gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(gs::make_multifactor(gs::weighted(gs::decayed_fair_share_factor{}, -1.0)),
                         doctest::Contains("factor 'fair-share': field 'weight'"),
                         gs::invalid_value_error);
  }

  TEST_CASE("tenants outside a given tree get no share and the tree's shares apply") {
    two_tenants c;
    // tenant 1 holds 3 shares, tenant 2 one: S = 3/4 and 1/4
    auto tree = std::make_shared<const gs::tenant_tree>(std::vector<gs::tenant_spec>{
        {gs::tenant_id{1}, "a", {}, 3, 0}, {gs::tenant_id{2}, "b", {}, 1, 0}});
    auto o = hourly();
    o.tenants = tree;
    gs::decayed_fair_share_factor fs(o);
    fs.prepare(c.at(3600));
    CHECK(fs(c.at(3600), job(10, 1, 1, 0)) == doctest::Approx(std::exp2(-(2.0 / 3) / 0.75)));
    CHECK(fs(c.at(3600), job(20, 2, 1, 0)) == doctest::Approx(std::exp2(-(1.0 / 3) / 0.25)));
    CHECK(fs(c.at(3600), job(30, 9, 1, 0)) == 0.0);
  }

  TEST_CASE("the registry's multifactor has fair share and multifactor-nofs has not") {
    two_tenants c;
    const std::vector<gs::job_spec> pending = {job(10, 1, 1, 0), job(20, 2, 1, 100)};
    std::vector<const gs::job_spec*> q = {&pending[0], &pending[1]};
    auto with = gs::make_ordering_policy("multifactor");
    with.order(c.at(3600), q);
    CHECK(q[0]->id == gs::job_id{20});
    q = {&pending[0], &pending[1]};
    auto without = gs::make_ordering_policy("multifactor-nofs");
    without.order(c.at(3600), q);
    CHECK(q[0]->id == gs::job_id{10});
    CHECK(with.name() == "multifactor");
  }
}

}  // namespace policy_ordering_multifactor_fair_share_test
