// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <vector>

#include <gpusched/policy/admission/gang.hpp>
#include <gpusched/policy/preemption/priority.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_admission_preemption_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {
gs::job_spec gang(unsigned id, int tasks, int gpus, int priority = 0) {
  gs::job_spec j;
  j.id = gs::job_id{id};
  j.priority = priority;
  j.groups.push_back({.name = "w",
                      .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                  .cpu = 1_cores,
                                  .memory = 1_gib},
                      .count = tasks});
  return j;
}
void run(gs::ledger& book, const gs::job_spec& j, unsigned node, gs::sim_time start) {
  auto tx = book.begin();
  const auto& c = book.state();
  const gs::node_index n{node};
  gs::task_allocation a;
  a.node = n;
  a.cpu = 1_cores;
  a.memory = 1_gib;
  for (const auto& g : c.gpus(n)) {
    if (static_cast<int>(a.gpus.size()) == j.groups[0].request.gpu.count.value()) break;
    const auto idx =
        gs::gpu_index{c.first_gpu(n).value() + static_cast<unsigned>(&g - c.gpus(n).data())};
    if (g.whole_free()) a.gpus.push_back({idx, gs::whole_gpu_milli, 0, false});
  }
  REQUIRE(tx.place(a));
  tx.commit(j, start);
}
}  // namespace

TEST_SUITE("policy/admission/gang") {
  TEST_CASE("a gang that no node or cluster could ever hold is rejected with the cause") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(4, 8)));
    gs::random_engine g(1);
    const gs::schedule_context ctx(book, {}, g);
    const gs::gang_admission adm;
    CHECK(adm.admit(ctx, gang(1, 4, 8)).kind == gs::verdict::admit);
    const auto too_many = adm.admit(ctx, gang(2, 5, 8));
    CHECK(too_many.kind == gs::verdict::reject);
    CHECK(too_many.why.code == gs::reason_code::unschedulable);
    CHECK(too_many.why.needed == 40);
    CHECK(too_many.why.available == 32);
    const auto too_wide = adm.admit(ctx, gang(3, 1, 16));
    CHECK(too_wide.kind == gs::verdict::reject);
    CHECK(too_wide.why.group == 0);
    CHECK(too_wide.why.available == 8);
    auto cpu_heavy = gang(4, 1, 1);
    cpu_heavy.groups[0].request.cpu = gs::cpu_millis{1'000'000};
    CHECK(adm.admit(ctx, cpu_heavy).why.resource == gs::resource_kind::cpu);
    auto wrong_model = gang(5, 1, 1);
    wrong_model.groups[0].request.allowed_models.insert(book.state().catalog().id("T4"));
    CHECK(adm.admit(ctx, wrong_model).kind == gs::verdict::reject);  // no T4 node at all
  }
}

TEST_SUITE("policy/preemption/priority") {
  TEST_CASE("victims are strictly lower priority, lowest first, then most recent, and enough") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(4, 8)));
    run(book, gang(1, 1, 8, 1), 0, gs::at(gs::seconds(10)));  // priority 1, older
    run(book, gang(2, 1, 8, 0), 1, gs::at(gs::seconds(5)));   // priority 0, older
    run(book, gang(3, 1, 8, 0), 2, gs::at(gs::seconds(50)));  // priority 0, recent
    auto same = gang(4, 1, 8, 5);
    run(book, same, 3, gs::at(gs::seconds(0)));  // priority 5: never a victim of 5
    gs::random_engine g(1);
    const gs::schedule_context ctx(book, {}, g);
    const auto preemptor = gang(9, 2, 8, 5);
    std::vector<std::vector<gs::job_id>> probes;
    auto probe = [&](std::span<const gs::job_id> v) {
      probes.emplace_back(v.begin(), v.end());
      return v.size() >= 2;  // pretend two freed nodes suffice
    };
    const auto plan = gs::priority_preemption{}.select(ctx, preemptor, gs::fit_probe(probe));
    CHECK(plan.victims == std::vector<gs::job_id>{gs::job_id{3}, gs::job_id{2}});
    CHECK(probes.size() == 2);
    CHECK(plan.why.code == gs::reason_code::placed_by_preemption);
  }
  TEST_CASE("a preemptor that cannot be satisfied evicts nobody") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    run(book, gang(1, 1, 8, 0), 0, {});
    auto np = gang(2, 1, 8, 0);
    np.preemptible = false;
    run(book, np, 1, {});
    gs::random_engine g(1);
    const gs::schedule_context ctx(book, {}, g);
    auto never = [](std::span<const gs::job_id>) { return false; };
    const auto plan = gs::priority_preemption{}.select(ctx, gang(3, 1, 8, 9), gs::fit_probe(never));
    CHECK(plan.victims.empty());
    CHECK(plan.why.code == gs::reason_code::no_victims);
    CHECK(plan.why.available == 1);  // one candidate: job 2 is not preemptible
    CHECK(gs::no_preemption{}.select(ctx, gang(3, 1, 8, 9), gs::fit_probe(never)).victims.empty());
  }
}

}  // namespace policy_admission_preemption_test
