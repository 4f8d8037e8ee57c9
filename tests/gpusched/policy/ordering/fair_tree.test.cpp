// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include <gpusched/policy/ordering/fair_tree.hpp>
#include <gpusched/policy/ordering/multifactor.hpp>

#include "generators.hpp"
#include "preemption_fixtures.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_ordering_fair_tree_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

gs::tenant_spec node(unsigned id, unsigned parent = 0, double w = 1.0) {
  return {gs::tenant_id{id}, "t" + std::to_string(id),
          parent == 0 ? gs::tenant_id::invalid() : gs::tenant_id{parent}, w, 0};
}

std::shared_ptr<gs::decayed_usage> usage_of(const std::vector<std::pair<unsigned, double>>& u) {
  auto usage = std::make_shared<gs::decayed_usage>(gs::seconds(3600), 1);
  for (const auto& [t, x] : u) {
    gs::share_vector v(1);
    v[0] = x;
    usage->add(gs::tenant_id{t}, v, gs::at(gs::seconds(0)));
  }
  return usage;
}

double factor_of(const gs::tenant_tree& tree, const std::vector<double>& f, unsigned id) {
  return f[*tree.find(gs::tenant_id{id})];
}

}  // namespace

TEST_SUITE("policy/ordering/fair_tree") {
  TEST_CASE("users of the account with the higher level fairshare all rank first") {
    // Accounts A (1) and B (2) with equal shares; A holds users 11 and 12, B holds user 21.
    // Usage: user 11 10 units, user 21 30. LF(A) = 0.5 / 0.25 = 2, LF(B) = 0.5 / 0.75 = 2/3.
    // Inside A: LF(12) = infinite (no usage), LF(11) = 0.5 / 1. Ranks 3, 2, 1 of 3 users.
    const gs::tenant_tree tree({node(1), node(2), node(11, 1), node(12, 1), node(21, 2)});
    const auto usage = usage_of({{11, 10}, {21, 30}});
    std::vector<double> lf;
    const auto f = gs::fair_tree_factors(tree, *usage, gs::at(gs::seconds(0)), &lf);
    CHECK(lf[*tree.find(gs::tenant_id{1})] == doctest::Approx(2.0));
    CHECK(lf[*tree.find(gs::tenant_id{2})] == doctest::Approx(2.0 / 3));
    CHECK(std::isinf(lf[*tree.find(gs::tenant_id{12})]));
    CHECK(factor_of(tree, f, 12) == doctest::Approx(1.0));
    CHECK(factor_of(tree, f, 11) == doctest::Approx(2.0 / 3));
    CHECK(factor_of(tree, f, 21) == doctest::Approx(1.0 / 3));
    CHECK(factor_of(tree, f, 1) == 0.0);  // accounts have no factor
  }

  TEST_CASE("a heavy user of a light account still ranks above a light user of a heavy account") {
    // The point of Fair Tree against the classic formula: A used little, B much; A's only
    // user is its heavy user, B's idle user 22 shares B's usage.
    const gs::tenant_tree tree({node(1), node(2), node(11, 1), node(21, 2), node(22, 2)});
    const auto usage = usage_of({{11, 10}, {21, 90}});
    const auto f = gs::fair_tree_factors(tree, *usage, gs::at(gs::seconds(0)));
    CHECK(factor_of(tree, f, 11) > factor_of(tree, f, 22));
    CHECK(factor_of(tree, f, 22) > factor_of(tree, f, 21));
  }

  TEST_CASE("ties: tied users share a rank, and a user tied with an account gets its best rank") {
    const gs::tenant_tree idle({node(1), node(2), node(3)});
    const auto none = usage_of({});
    const auto f = gs::fair_tree_factors(idle, *none, gs::at(gs::seconds(0)));
    CHECK(f == std::vector<double>{1.0, 1.0, 1.0});

    // Top level: account 1 (users 11 and 12, 5 units each), user 2 (10 units), user 3 (20).
    // Shares 1/3 each, usage 10/40, 10/40, 20/40: LF 4/3, 4/3, 2/3, so account 1 and user 2
    // tie. Users 11 and 12 tie inside account 1 (LF 1 each) at the top rank, 4 of 4; user 2
    // gets the account's best rank, 4, too; user 3 comes next with rank 4 - 3 = 1.
    const gs::tenant_tree tree({node(1), node(2), node(3), node(11, 1), node(12, 1)});
    const auto usage = usage_of({{11, 5}, {12, 5}, {2, 10}, {3, 20}});
    const auto g = gs::fair_tree_factors(tree, *usage, gs::at(gs::seconds(0)));
    CHECK(factor_of(tree, g, 11) == doctest::Approx(1.0));
    CHECK(factor_of(tree, g, 12) == doctest::Approx(1.0));
    CHECK(factor_of(tree, g, 2) == doctest::Approx(1.0));
    CHECK(factor_of(tree, g, 3) == doctest::Approx(1.0 / 4));
  }

  TEST_CASE("weights count: a doubled share doubles the level fairshare") {
    const gs::tenant_tree tree({node(1, 0, 2.0), node(2, 0, 1.0)});
    const auto usage = usage_of({{1, 10}, {2, 10}});
    std::vector<double> lf;
    const auto f = gs::fair_tree_factors(tree, *usage, gs::at(gs::seconds(0)), &lf);
    CHECK(lf[0] == doctest::Approx(2 * lf[1]));
    CHECK(f[0] == doctest::Approx(1.0));
    CHECK(f[1] == doctest::Approx(0.5));
  }

  TEST_CASE("fair_tree_ordering puts the best-ranked tenant's jobs first, then FIFO") {
    gs::random_engine g(1);
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    auto tree = std::make_shared<const gs::tenant_tree>(
        std::vector<gs::tenant_spec>{node(1), node(2), node(11, 1), node(12, 1), node(21, 2)});
    auto usage = usage_of({{11, 10}, {21, 30}});
    gs::fair_tree_ordering order(usage, tree);
    std::vector<gs::job_spec> jobs(5);
    const unsigned tenants[] = {21, 11, 12, 12, 99};  // 99 is not in the tree: last
    for (unsigned i = 0; i < 5; ++i) {
      jobs[i].id = gs::job_id{i + 1};
      jobs[i].tenant = gs::tenant_id{tenants[i]};
      jobs[i].submit = gs::at(gs::seconds(10 - static_cast<int>(i)));
    }
    std::vector<const gs::job_spec*> q;
    for (const auto& j : jobs) q.push_back(&j);
    const gs::schedule_context ctx(book, gs::at(gs::seconds(0)), g);
    order.order(ctx, q);
    std::vector<unsigned> got;
    for (const auto* j : q) got.push_back(j->id.value());
    CHECK(got == std::vector<unsigned>{4, 3, 2, 1, 5});  // 12 (later job first: earlier submit)
    // The factor recomputes when usage changes at the same instant: user 12 now uses 1,000
    // units, so account B (LF 0.5 / (30/1040)) overtakes A (0.5 / (1010/1040)), and inside A
    // user 11 overtakes 12: user 21 ranks 3, user 11 2, user 12 1.
    gs::share_vector v(1);
    v[0] = 1000;
    usage->add(gs::tenant_id{12}, v, gs::at(gs::seconds(0)));
    order.order(ctx, q);
    got.clear();
    for (const auto* j : q) got.push_back(j->id.value());
    CHECK(got == std::vector<unsigned>{1, 2, 4, 3, 5});
    // As a multifactor factor: user 11's factor is 2/3.
    auto mf = gs::make_multifactor(gs::weighted(gs::fair_tree_factor(usage, tree), 1000.0));
    CHECK(mf.priority(ctx, jobs[1]) == doctest::Approx(2000.0 / 3));
  }

  TEST_CASE("fair_tree_ordering made without a tree reads the run's, with its own decayed usage") {
    gs::random_engine g(1);
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    gs::job_spec busy = gs::testing::whole_gpu_job(9, 1, 8);
    busy.tenant = gs::tenant_id{11};
    REQUIRE(gs::testing::run_on(book, busy, {0}, gs::at(gs::seconds(0))));
    gs::policy_environment env;
    env.tenants = std::make_shared<const gs::tenant_tree>(
        std::vector<gs::tenant_spec>{node(1), node(2), node(11, 1), node(12, 1), node(21, 2)});
    std::vector<gs::job_spec> jobs(3);
    const unsigned tenants[] = {11, 12, 21};
    for (unsigned i = 0; i < 3; ++i) {
      jobs[i].id = gs::job_id{i + 1};
      jobs[i].tenant = gs::tenant_id{tenants[i]};
    }
    std::vector<const gs::job_spec*> q;
    for (const auto& j : jobs) q.push_back(&j);
    gs::fair_tree_ordering order;  // the registry's fair-tree
    // without a tenant tree in the run: a clear error
    CHECK_THROWS_WITH_AS(order.order(gs::schedule_context(book, gs::at(gs::seconds(3600)), g), q),
                         doctest::Contains("needs the run's tenant tree"), gs::invalid_value_error);
    // tenant 11 ran 8 GPUs for an hour: account 2 (no usage) first, then 12 before 11
    order.order(gs::schedule_context(book, gs::at(gs::seconds(3600)), g, env), q);
    std::vector<unsigned> got;
    for (const auto* j : q) got.push_back(j->id.value());
    CHECK(got == std::vector<unsigned>{3, 2, 1});
    REQUIRE(order.own_factors().size() == 5);
    CHECK(order.own_factors()[4] == doctest::Approx(1.0));      // tenant 21: rank 3 of 3
    CHECK(order.own_factors()[3] == doctest::Approx(2.0 / 3));  // tenant 12
    CHECK(order.own_factors()[2] == doctest::Approx(1.0 / 3));  // tenant 11
  }

  TEST_CASE("property: at every level, a sibling with higher LF has all its leaves ranked above") {
    const auto seed = gs::seed_from_env(4242);
    MESSAGE("seed " << seed << " (set GPUSCHED_SEED to repeat)");
    gs::random_engine rng(seed);
    int strict_pairs = 0;
    for (int round = 0; round < 200; ++round) {
      // A random forest of up to 3 levels.
      std::vector<gs::tenant_spec> specs;
      unsigned next = 1;
      const auto tops = 1 + gs::uniform_index(rng, 4);
      std::vector<unsigned> level1;
      for (std::size_t i = 0; i < tops; ++i) {
        specs.push_back(node(next, 0, 1.0 + static_cast<double>(gs::uniform_index(rng, 3))));
        level1.push_back(next++);
      }
      std::vector<unsigned> level2;
      for (const auto p : level1) {
        const auto kids = gs::uniform_index(rng, 4);
        for (std::size_t k = 0; k < kids; ++k) {
          specs.push_back(node(next, p, 1.0 + static_cast<double>(gs::uniform_index(rng, 3))));
          level2.push_back(next++);
        }
      }
      for (const auto p : level2) {
        const auto kids = gs::uniform_index(rng, 3);
        for (std::size_t k = 0; k < kids; ++k) specs.push_back(node(next++, p));
      }
      const gs::tenant_tree tree(specs);
      auto usage = std::make_shared<gs::decayed_usage>(gs::seconds(3600), 2);
      for (std::uint32_t i = 0; i < tree.size(); ++i) {
        if (!tree.is_leaf(i) || gs::uniform_index(rng, 4) == 0) continue;
        gs::share_vector v(2);
        v[0] = static_cast<double>(gs::uniform_index(rng, 100));
        v[1] = static_cast<double>(gs::uniform_index(rng, 100));
        usage->add(tree[i].id, v, gs::at(gs::seconds(0)));
      }
      std::vector<double> lf;
      const auto f = gs::fair_tree_factors(tree, *usage, gs::at(gs::seconds(0)), &lf);
      const auto leaves_under = [&](std::uint32_t x) {
        std::vector<double> out;
        std::vector<std::uint32_t> stack{x};
        while (!stack.empty()) {
          const auto y = stack.back();
          stack.pop_back();
          if (tree.is_leaf(y)) out.push_back(f[y]);
          for (const auto c : tree.children(y)) stack.push_back(c);
        }
        return out;
      };
      for (std::uint32_t i = 0; i < tree.size(); ++i) {
        if (tree.is_leaf(i)) {
          CHECK(f[i] > 0.0);
          CHECK(f[i] <= 1.0);
        }
      }
      const auto check_siblings = [&](std::span<const std::uint32_t> sibs) {
        for (const auto a : sibs) {
          for (const auto b : sibs) {
            if (!(lf[a] > lf[b])) continue;
            const auto la = leaves_under(a);
            const auto lb = leaves_under(b);
            if (la.empty() || lb.empty()) continue;
            CHECK(*std::min_element(la.begin(), la.end()) >
                  *std::max_element(lb.begin(), lb.end()));
            ++strict_pairs;
          }
        }
      };
      check_siblings(tree.children(gs::tenant_tree::npos));
      for (std::uint32_t i = 0; i < tree.size(); ++i) check_siblings(tree.children(i));
      // The best leaf always has factor 1.
      CHECK(*std::max_element(f.begin(), f.end()) == doctest::Approx(1.0));
    }
    MESSAGE(strict_pairs << " sibling pairs with unequal LF checked");
    CHECK(strict_pairs > 100);
  }
}

}  // namespace policy_ordering_fair_tree_test
