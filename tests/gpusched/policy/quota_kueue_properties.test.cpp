// SPDX-License-Identifier: Apache-2.0
// Property tests of Kueue's preemption model in `quota_admission` (issue #35), on seeded random
// cohort trees (a root, up to two sub-cohorts, two to five queues with random nominal quotas,
// borrowing and lending limits and random `queue_preemption` settings) and a random stream of
// arriving and finishing whole-GPU gangs, one arriving job per cycle so that the state before
// each cycle is the state its preemptions are judged on. After every cycle:
// - no preemption Kueue's settings forbid: a victim of the preemptor's own queue only under
//   `withinClusterQueue` (of lower priority, or equal and newer for LowerOrNewerEqualPriority);
//   a victim of another queue only under `reclaimWithinCohort` (lower priority for
//   LowerPriority), under the same root cohort, and from a queue that borrowed before the cycle;
//   never a job that is not preemptible;
// - a preemptor admitted after preemption fits its quota: no queue uses more than the tree lets
//   it (`available >= 0`), and the policy's usage equals a recount;
// - the ledger's invariants (no GPU over-committed, every gang whole or absent).
// Both preemption policies are run (`priority_preemption`, `checkpoint_aware_preemption`).
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gpusched/gpusched.hpp>

#include "generators.hpp"
#include "preemption_fixtures.hpp"

namespace policy_quota_kueue_properties_test {

namespace gs = gpusched;
using qr = gs::quota_resource;

namespace {
constexpr std::size_t gpu_dim = 2;  // qr::gpu_milli().index()

struct world {
  gs::quota_tree tree;
  std::map<gs::tenant_id, gs::queue_preemption> settings;
  std::vector<gs::tenant_id> tenants;
};

int pick(gs::random_engine& g, int lo, int hi) {
  return lo + static_cast<int>(g() % static_cast<std::uint64_t>(hi - lo + 1));
}

world random_world(gs::random_engine& g, const gs::gpu_catalog& cat) {
  gs::quota_tree::builder b(cat);
  b.cohort("root");
  const int subs = pick(g, 0, 2);
  std::vector<std::string> parents{"root"};
  for (int s = 0; s < subs; ++s) {
    parents.push_back("sub" + std::to_string(s));
    b.cohort(parents.back(), "root");
  }
  world w;
  const int queues = pick(g, 2, 5);
  for (int i = 0; i < queues; ++i) {
    const gs::tenant_id t{static_cast<gs::tenant_id::rep>(i + 1)};
    const auto& parent = parents[static_cast<std::size_t>(pick(g, 0, subs))];
    const int nominal = pick(g, 0, 8);
    b.queue("q" + std::to_string(i), t, parent).nominal(qr::gpu_milli(), nominal * 1000);
    if (pick(g, 0, 2) == 0) b.borrowing_limit(qr::gpu_milli(), pick(g, 0, 8) * 1000);
    if (pick(g, 0, 3) == 0) b.lending_limit(qr::gpu_milli(), pick(g, 0, nominal) * 1000);
    gs::queue_preemption p;
    p.within = static_cast<gs::within_cluster_queue>(pick(g, 0, 2));
    p.reclaim = static_cast<gs::reclaim_within_cohort>(pick(g, 0, 2));
    p.borrow = static_cast<gs::borrow_within_cohort>(pick(g, 0, 1));
    if (pick(g, 0, 1) == 0) p.max_priority_threshold = pick(g, 0, 3);
    w.settings[t] = p;
    w.tenants.push_back(t);
  }
  w.tree = b.build();
  return w;
}

gs::job_spec random_gang(gs::random_engine& g, unsigned id, gs::tenant_id t, int submit_s) {
  gs::job_spec j;
  j.id = gs::job_id{id};
  j.name = "j" + std::to_string(id);
  j.tenant = t;
  j.priority = pick(g, 0, 3);
  j.preemptible = pick(g, 0, 5) != 0;
  j.submit = gs::at(gs::seconds(submit_s));
  j.groups.push_back({.name = "g",
                      .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{1}),
                                  .cpu = gs::cpu_millis{0},
                                  .memory = gs::memory_mib{0}},
                      .count = pick(g, 1, 5)});
  return j;
}

bool borrows(const gs::quota_tree& q, std::int32_t n) {
  return q.usage(n, gpu_dim) > q.nominal(n, gpu_dim);
}
std::int32_t root_of(const gs::quota_tree& q, std::int32_t n) {
  while (q.at(n).parent >= 0) n = q.at(n).parent;
  return n;
}

template <class Preempt>
int run_seed(std::uint64_t seed, Preempt preempt) {
  const auto cat = gs::basic_catalog();
  gs::random_engine g(seed);
  world w = random_world(g, cat);
  const int cluster_gpus = pick(g, 4, 24);
  gs::quota_admission<> adm(w.tree);
  for (const auto& [t, p] : w.settings) {
    adm.set_preemption(w.tree.at(w.tree.queue_of(t)).name, p);
  }
  auto pipe = gs::make_pipeline(std::move(adm), std::move(preempt));
  gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(
                                       static_cast<std::size_t>(cluster_gpus), 1)));
  gs::random_engine rng(seed + 1);
  int preemptions = 0;
  for (unsigned step = 1; step <= 40; ++step) {
    const int now_s = 100 * static_cast<int>(step);
    const auto now = gs::at(gs::seconds(now_s));
    // a running job finishes now and then
    if (!book.running().empty() && pick(g, 0, 2) == 0) {
      const auto k = static_cast<std::size_t>(pick(g, 0, static_cast<int>(book.running().size()) - 1));
      pipe.release(book, book.running()[k].spec.id, now, rng);
    }
    const auto t = w.tenants[static_cast<std::size_t>(pick(g, 0, static_cast<int>(w.tenants.size()) - 1))];
    const std::vector<gs::job_spec> pending{random_gang(g, step, t, now_s - pick(g, 0, 400))};
    const auto& j = pending[0];
    // the state the cycle's preemptions are judged on
    auto before = w.tree;
    before.recompute(book);
    std::map<gs::job_id, gs::job_spec> running_before;
    for (const auto& r : book.running()) running_before[r.spec.id] = r.spec;

    const auto res = pipe.schedule(book, pending, now, rng);
    REQUIRE(res.decisions.size() == 1);
    const auto& d = res.decisions[0];
    CAPTURE(seed);
    CAPTURE(step);
    const auto jq = before.queue_of(j.tenant);
    const auto& p = w.settings.at(j.tenant);
    for (const auto v : d.victims) {
      REQUIRE(running_before.count(v) == 1);
      const auto& vs = running_before.at(v);
      CHECK(vs.preemptible);
      const auto vq = before.queue_of(vs.tenant);
      if (vq == jq) {
        const bool lower = vs.priority < j.priority;
        const bool newer_equal = vs.priority == j.priority && j.submit < vs.submit;
        CHECK(p.within != gs::within_cluster_queue::never);
        CHECK((lower ||
               (p.within == gs::within_cluster_queue::lower_or_newer_equal_priority && newer_equal)));
      } else {
        CHECK(p.reclaim != gs::reclaim_within_cohort::never);
        if (p.reclaim == gs::reclaim_within_cohort::lower_priority) {
          CHECK(vs.priority < j.priority);
        }
        CHECK(root_of(before, vq) == root_of(before, jq));
        CHECK(borrows(before, vq));
      }
      ++preemptions;
    }
    if (!d.victims.empty()) CHECK(d.kind == gs::verdict::admit);
    // the admitted preemptor (and everyone else) fits the quota; the policy's usage is exact
    const auto& q = pipe.admission().quotas();
    auto recount = w.tree;
    recount.recompute(book);
    for (std::int32_t n = 0; std::cmp_less(n, q.nodes().size()); ++n) {
      CHECK(q.usage(n, gpu_dim) == recount.usage(n, gpu_dim));
      if (q.at(n).queue) CHECK(q.available(n, gpu_dim) >= 0);
    }
    CHECK(gs::check_invariants(book).ok());
  }
  return preemptions;
}
}  // namespace

TEST_SUITE("policy/admission/quota_kueue_properties") {
  TEST_CASE("random cohorts, priority preemption: only allowed victims, every queue within its quota") {
    int preemptions = 0;
    for (std::uint64_t seed = 1; seed <= 60; ++seed) {
      preemptions += run_seed(seed, gs::priority_preemption{});
    }
    CHECK(preemptions >= 60);  // the streams do preempt (about 3 per seed)
  }
  TEST_CASE("random cohorts, checkpoint-aware preemption: only allowed victims, every queue within "
            "its quota") {
    int preemptions = 0;
    for (std::uint64_t seed = 1; seed <= 60; ++seed) {
      preemptions += run_seed(seed, gs::checkpoint_aware_preemption{});
    }
    CHECK(preemptions >= 60);
  }
}

}  // namespace policy_quota_kueue_properties_test
