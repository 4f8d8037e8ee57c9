// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <string>

#include <gpusched/workload/quota.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace workload_quota_test {

namespace gs = gpusched;
using namespace gpusched::literals;
using qr = gs::quota_resource;

namespace {
std::string message_of(auto&& f) {
  try {
    f();
  } catch (const gs::error& e) {
    return e.what();
  }
  return "";
}
constexpr gs::tenant_id team_a{1}, team_b{2}, team_c{3};
}  // namespace

TEST_SUITE("workload/quota") {
  TEST_CASE("Kueue's borrowingLimit example: team-a may use 9 + 1 CPUs, team-b 12 + 9") {
    // kueue.sigs.k8s.io docs, concepts/cluster_queue, "BorrowingLimit": team-a-cq nominal 9,
    // borrowingLimit 1; team-b-cq nominal 12; both in cohort team-ab.
    gs::quota_tree::builder b(gs::basic_catalog());
    b.cohort("team-ab");
    b.queue("team-a-cq", team_a, "team-ab").nominal(qr::cpu(), 9).borrowing_limit(qr::cpu(), 1);
    b.queue("team-b-cq", team_b, "team-ab").nominal(qr::cpu(), 12);
    const auto q = b.build();
    CHECK(q.available(q.queue_of(team_a), 0) == 10);
    CHECK(q.available(q.queue_of(team_b), 0) == 21);
  }

  TEST_CASE("Kueue's lendingLimit example: team-b lends only 1 of 12, so team-a may use 10") {
    // Same page, "LendingLimit": team-a-cq nominal 9; team-b-cq nominal 12, lendingLimit 1.
    gs::quota_tree::builder b(gs::basic_catalog());
    b.cohort("team-ab");
    b.queue("team-a-cq", team_a, "team-ab").nominal(qr::cpu(), 9);
    b.queue("team-b-cq", team_b, "team-ab").nominal(qr::cpu(), 12).lending_limit(qr::cpu(), 1);
    auto q = b.build();
    const auto a = q.queue_of(team_a), bq = q.queue_of(team_b);
    CHECK(q.available(a, 0) == 10);
    CHECK(q.available(bq, 0) == 21);
    // team-b using 11 (within what it keeps) leaves team-a its 9 + the 1 lent
    gs::quota_vector v(q.dims(), 0);
    v[0] = 11;
    q.charge(team_b, v);
    CHECK(q.available(a, 0) == 10);
    // team-b using 12 takes back the lent CPU: team-a is down to its nominal 9
    v[0] = 1;
    q.charge(team_b, v);
    CHECK(q.available(a, 0) == 9);
    // team-a borrowing: at 10 it is above nominal, and team-b can only use what is left
    v[0] = 12;
    q.charge(team_b, v, -1);  // team-b idle again
    v[0] = 10;
    q.charge(team_a, v);
    CHECK(q.is_borrowing(team_a));
    CHECK(q.borrowed(a, 0) == 1);
    CHECK(q.available(bq, 0) == 11);
    CHECK_FALSE(q.is_borrowing(team_b));
  }

  TEST_CASE("hierarchical cohorts: a cohort's own quota and a borrowing limit on a sub-cohort") {
    const auto cat = gs::basic_catalog();
    const auto h100 = cat.id("H100-SXM5-80GB");
    gs::quota_tree::builder b(cat);
    b.cohort("org").nominal(qr::gpus(h100), 4);  // a pool owned by the org itself
    b.cohort("research", "org").borrowing_limit(qr::gpus(h100), 2);
    b.queue("vision", team_a, "research").nominal(qr::gpus(h100), 8);
    b.queue("nlp", team_b, "research").nominal(qr::gpus(h100), 8);
    b.queue("prod", team_c, "org").nominal(qr::gpus(h100), 16);
    auto q = b.build();
    const auto d = qr::gpus(h100).index();
    const auto vision = q.queue_of(team_a);
    // research may take at most 2 beyond its own 16 from the org: vision up to 16 + 2
    CHECK(q.available(vision, d) == 18);
    CHECK(q.available(q.queue_of(team_c), d) == 16 + 16 + 4);
    std::int32_t limiting = -1;
    gs::quota_vector need(q.dims(), 0);
    need[d] = 19;
    const auto s = q.check(team_a, need);
    REQUIRE(s);
    CHECK(s->available == 18);
    CHECK(q.at(s->limiting_node).name == "research");
    (void)limiting;
    // ungoverned dimensions are not limited
    gs::quota_vector cpu(q.dims(), 0);
    cpu[0] = 1'000'000;
    CHECK_FALSE(q.check(team_a, cpu));
    CHECK_FALSE(q.governed(0));
    // a tenant without a queue is not limited
    CHECK_FALSE(q.check(gs::tenant_id{99}, need));
  }

  TEST_CASE("bad quota trees are rejected naming the node and field") {
    const auto cat = gs::basic_catalog();
    auto msg = [&](auto&& configure) {
      return message_of([&] {
        gs::quota_tree::builder b(cat);
        configure(b);
        (void)b.build();
      });
    };
    CHECK(msg([](auto& b) {
            b.queue("q", team_a, "nowhere");
          }).find("quota queue 'q': field 'parent' = nowhere: no such cohort (orphan node)") !=
          std::string::npos);
    CHECK(msg([](auto& b) {
            b.cohort("x", "y");
            b.cohort("y", "x");
          }).find("cohorts form a cycle") != std::string::npos);
    CHECK(msg([](auto& b) {
            b.queue("q", team_a).nominal(qr::cpu(), -1);
          }).find("field 'nominal[cpu]' = -1: must not be negative") != std::string::npos);
    CHECK(msg([](auto& b) {
            b.queue("q", team_a).nominal(qr::cpu(), 4).lending_limit(qr::cpu(), 5);
          }).find("field 'lending_limit[cpu]' = 5: exceeds the nominal quota 4") !=
          std::string::npos);
    CHECK(msg([](auto& b) {
            b.queue("q1", team_a);
            b.queue("q2", team_a);
          }).find("field 'tenant' = 1: tenant has two queues") != std::string::npos);
    CHECK(msg([](auto& b) {
            b.queue("q1", team_a);
            b.queue("q2", team_b, "q1");
          }).find("a queue cannot have children") != std::string::npos);
    CHECK(msg([](auto& b) {
            b.cohort("c");
            b.cohort("c");
          }).find("duplicate node name") != std::string::npos);
    CHECK(msg([](auto& b) {
            b.queue("q", team_a).nominal(qr::gpus(gs::gpu_model_id{63}), 1);
          }).find("not a model of the catalog") != std::string::npos);
  }

  TEST_CASE("usage from allocations counts whole GPUs per model and shares as milli-GPU") {
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(1, 8)));
    gs::task_allocation a;
    a.node = gs::node_index{0};
    a.cpu = 3_cores;
    a.memory = 5_gib;
    a.gpus.push_back({gs::gpu_index{0}, gs::whole_gpu_milli, 0, false});
    a.gpus.push_back({gs::gpu_index{1}, gs::whole_gpu_milli, 0, false});
    gs::task_allocation s = a;
    s.gpus.clear();
    s.gpus.push_back({gs::gpu_index{2}, 250_mgpu, 0, false});
    std::vector<gs::task_allocation> tasks{a, s};
    gs::quota_vector v(3 + cat.size(), 0);
    gs::add_usage(book.state(), tasks, v);
    CHECK(v[0] == 6000);
    CHECK(v[1] == 10 * 1024);
    CHECK(v[2] == 2250);
    CHECK(v[qr::gpus(cat.id("H100-SXM5-80GB")).index()] == 2);
  }

  TEST_CASE(
      "random charges keep every queue within nominal plus its borrowing limit when "
      "admitted through check") {
    const auto seed = gs::seed_from_env(3);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    for (int round = 0; round < 50; ++round) {
      gs::quota_tree::builder b(cat);
      b.cohort("root");
      b.cohort("mid", "root")
          .nominal(qr::cpu(), static_cast<std::int64_t>(gs::uniform_index(g, 10)));
      for (unsigned t = 1; t <= 4; ++t) {
        b.queue("q" + std::to_string(t), gs::tenant_id{t}, t % 2 == 0 ? "mid" : "root")
            .nominal(qr::cpu(), static_cast<std::int64_t>(gs::uniform_index(g, 10)));
        if (gs::uniform_index(g, 2) == 0)
          b.borrowing_limit(qr::cpu(), static_cast<std::int64_t>(gs::uniform_index(g, 5)));
      }
      auto q = b.build();
      std::vector<std::pair<gs::tenant_id, std::int64_t>> held;
      for (int step = 0; step < 100; ++step) {
        if (!held.empty() && gs::uniform_index(g, 3) == 0) {
          const auto k = gs::uniform_index(g, held.size());
          gs::quota_vector v(q.dims(), 0);
          v[0] = held[k].second;
          q.charge(held[k].first, v, -1);
          held.erase(held.begin() + static_cast<std::ptrdiff_t>(k));
          continue;
        }
        const gs::tenant_id t{static_cast<unsigned>(1 + gs::uniform_index(g, 4))};
        gs::quota_vector v(q.dims(), 0);
        v[0] = static_cast<std::int64_t>(1 + gs::uniform_index(g, 6));
        if (!q.check(t, v)) {
          q.charge(t, v);
          held.emplace_back(t, v[0]);
        }
        // invariants: the root never exceeds its subtree quota; each queue stays within
        // nominal + borrowing limit; usage equals the sum of what was admitted
        const auto root = q.find("root");
        CHECK(q.usage(root, 0) <= q.subtree_quota(root, 0));
        for (unsigned tt = 1; tt <= 4; ++tt) {
          const auto qi = q.queue_of(gs::tenant_id{tt});
          std::int64_t sum = 0;
          for (const auto& [who, amount] : held) sum += who == gs::tenant_id{tt} ? amount : 0;
          CHECK(q.usage(qi, 0) == sum);
          if (const auto& bl = q.at(qi).per_dim[0].borrowing_limit) {
            CHECK(q.usage(qi, 0) <= q.nominal(qi, 0) + *bl);
          }
        }
      }
    }
  }
}

}  // namespace workload_quota_test
