// SPDX-License-Identifier: Apache-2.0
// Kueue's capacity hold for a waiting reclaimer (issue #35, point 4): ports of
// kubernetes-sigs/kueue pkg/scheduler/scheduler_test.go, TestSchedule, the cases named below;
// one pipeline cycle with `quota_admission` (each ClusterQueue's `preemption` given with
// `set_preemption`; a ClusterQueue without one gets Kueue's defaults) and
// `priority_preemption`. Mapping: Kueue's resource `gpu` or `cpu` (one flavor) is whole GPUs, a
// workload of n of them one task of n GPUs... written as n tasks of one GPU here, as in
// quota_kueue_preemption.test.cpp. Kueue's cycle takes the pending workloads in the order of
// their creation time here (its other keys tie), so the pending jobs are submitted in that
// order and the default FIFO ordering keeps it. Every case runs on a cluster of exactly the
// cohort's quota and on a large one (the GPUs short, or only the quota).
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gpusched/gpusched.hpp>

#include "generators.hpp"
#include "preemption_fixtures.hpp"

namespace policy_quota_kueue_hold_test {

namespace gs = gpusched;
using qr = gs::quota_resource;
using rwc = gs::reclaim_within_cohort;
using bwc = gs::borrow_within_cohort;
using wcq = gs::within_cluster_queue;

namespace {
/// A ClusterQueue: name, GPUs nominal / borrowing limit, preemption settings (none: Kueue's
/// defaults, Never everywhere). Every queue of a case is in one cohort, "root".
struct cq {
  std::string name;
  std::int64_t gpus = 0;
  std::optional<std::int64_t> borrow;
  std::optional<gs::queue_preemption> pre;
};
/// A workload: name, queue, GPUs, creation order (seconds).
struct wl {
  std::string name, queue;
  int gpus = 0;
  int created_at = 0;
};
struct kcase {
  std::vector<cq> cqs;
  std::vector<wl> admitted, pending;
};
struct outcome {
  std::set<std::string> admitted;
  std::vector<gs::quota_admission<>::hold> holds;
  std::map<std::string, std::int32_t> queue_node;
  bool exact_usage = false;
};

gs::job_spec make_job(const wl& w, unsigned id, gs::tenant_id tenant) {
  gs::job_spec j;
  j.id = gs::job_id{id};
  j.name = w.name;
  j.tenant = tenant;
  j.submit = gs::at(gs::seconds(w.created_at));
  j.groups.push_back({.name = "g",
                      .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{1}),
                                  .cpu = gs::cpu_millis{0},
                                  .memory = gs::memory_mib{0}},
                      .count = w.gpus});
  return j;
}

outcome run_case(const kcase& c, int cluster_gpus) {
  const auto cat = gs::basic_catalog();
  gs::quota_tree::builder b(cat);
  b.cohort("root");
  std::map<std::string, gs::tenant_id> tenant;
  unsigned next = 1;
  for (const auto& q : c.cqs) {
    tenant[q.name] = gs::tenant_id{next};
    b.queue(q.name, gs::tenant_id{next++}, "root").nominal(qr::gpu_milli(), q.gpus * 1000);
    if (q.borrow) b.borrowing_limit(qr::gpu_milli(), *q.borrow * 1000);
  }
  gs::quota_admission<> adm(b.build());
  for (const auto& q : c.cqs) adm.set_preemption(q.name, q.pre.value_or(gs::queue_preemption{}));

  gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(
                                       static_cast<std::size_t>(cluster_gpus), 1)));
  unsigned id = 1;
  for (const auto& w : c.admitted) {
    REQUIRE(gs::testing::run_anywhere(book, make_job(w, id++, tenant.at(w.queue)),
                                      gs::at(gs::seconds(1000))));
  }
  std::vector<gs::job_spec> pending;
  std::map<gs::job_id, std::string> names;
  for (const auto& w : c.pending) {
    pending.push_back(make_job(w, 100 + id, tenant.at(w.queue)));
    names[pending.back().id] = w.name;
    ++id;
  }
  auto pipe = gs::make_pipeline(std::move(adm), gs::priority_preemption{});
  gs::random_engine g(1);
  const auto res = pipe.schedule(book, pending, gs::at(gs::seconds(10'000)), g);
  outcome o;
  for (const auto& d : res.decisions) {
    if (d.kind == gs::verdict::admit) o.admitted.insert(names.at(d.job));
  }
  const auto& q = pipe.admission().quotas();
  o.holds.assign(pipe.admission().holds().begin(), pipe.admission().holds().end());
  for (const auto& x : c.cqs) o.queue_node[x.name] = q.find(x.name);
  auto recount = q;
  recount.recompute(book);
  o.exact_usage = true;  // holds never show in quotas()
  for (std::int32_t n = 0; std::cmp_less(n, q.nodes().size()); ++n) {
    for (std::size_t d = 0; d < q.dims(); ++d) {
      o.exact_usage = o.exact_usage && q.usage(n, d) == recount.usage(n, d);
    }
  }
  CHECK(gs::check_invariants(book).ok());
  return o;
}

/// ClusterQueueA (2 GPUs, `reclaimWithinCohort: reclaim`) holds a1 (1 GPU) and waits with a2
/// (2 GPUs); ClusterQueueB (0 GPUs, Kueue's defaults) has b1 (1 GPU) pending.
kcase lending_case(rwc reclaim) {
  gs::queue_preemption a;
  a.reclaim = reclaim;
  return {.cqs = {{"ClusterQueueA", 2, {}, a}, {"ClusterQueueB", 0, {}, {}}},
          .admitted = {{"a1-admitted", "ClusterQueueA", 1, 0}},
          .pending = {{"a2-pending", "ClusterQueueA", 2, 1}, {"b1-pending", "ClusterQueueB", 1, 2}}};
}
}  // namespace

TEST_SUITE("policy/admission/quota_kueue_hold") {
  // scheduler_test.go TestSchedule "capacity not blocked when lending clusterqueue can reclaim
  // (ReclaimWithinCohort=Any)"
  TEST_CASE("Kueue TestSchedule: capacity not blocked when lending clusterqueue can reclaim "
            "(ReclaimWithinCohort=Any)") {
    for (const int gpus : {2, 64}) {
      CAPTURE(gpus);
      const auto o = run_case(lending_case(rwc::any), gpus);
      CHECK(o.admitted == std::set<std::string>{"b1-pending"});
      CHECK(o.holds.empty());
      CHECK(o.exact_usage);
    }
  }

  // scheduler_test.go TestSchedule "capacity blocked when lending clusterqueue not guaranteed
  // to reclaim (ReclaimWithinCohort=LowerPriority)"
  TEST_CASE("Kueue TestSchedule: capacity blocked when lending clusterqueue not guaranteed to "
            "reclaim (ReclaimWithinCohort=LowerPriority)") {
    for (const int gpus : {2, 64}) {
      CAPTURE(gpus);
      const auto o = run_case(lending_case(rwc::lower_priority), gpus);
      CHECK(o.admitted.empty());
      REQUIRE(o.holds.size() == 1);
      CHECK(o.holds[0].queue == o.queue_node.at("ClusterQueueA"));
      CHECK(o.holds[0].job == gs::job_id{102});
      // a2 would borrow (1 used + 2 > 2 nominal) and A has no borrowing limit: all 2 held
      CHECK(o.holds[0].amount[qr::gpu_milli().index()] == 2000);
      CHECK(o.exact_usage);
    }
  }

  // scheduler_test.go TestSchedule "capacity blocked when lending clusterqueue not guaranteed
  // to reclaim (ReclaimWithinCohort=Never)"
  TEST_CASE("Kueue TestSchedule: capacity blocked when lending clusterqueue not guaranteed to "
            "reclaim (ReclaimWithinCohort=Never)") {
    for (const int gpus : {2, 64}) {
      CAPTURE(gpus);
      const auto o = run_case(lending_case(rwc::never), gpus);
      CHECK(o.admitted.empty());
      CHECK(o.holds.size() == 1);
      CHECK(o.exact_usage);
    }
  }

  // scheduler_test.go TestSchedule "preemption while borrowing, workload waiting for preemption
  // should not block a borrowing workload in another CQ": cq_a (0 nominal, borrowing limit 3)
  // holds only what its borrowing limit leaves (3 - 2 used = 1 of a's 3), so b still borrows 1
  // of the cohort's 4.
  TEST_CASE("Kueue TestSchedule: preemption while borrowing, workload waiting for preemption "
            "should not block a borrowing workload in another CQ") {
    gs::queue_preemption p;
    p.reclaim = rwc::lower_priority;
    p.borrow = bwc::lower_priority;
    const kcase c{.cqs = {{"cq_shared", 4, 0, {}}, {"cq_a", 0, 3, p}, {"cq_b", 0, {}, p}},
                  .admitted = {{"admitted_a", "cq_a", 2, 0}},
                  .pending = {{"a", "cq_a", 3, 1}, {"b", "cq_b", 1, 2}}};
    for (const int gpus : {4, 64}) {
      CAPTURE(gpus);
      const auto o = run_case(c, gpus);
      CHECK(o.admitted == std::set<std::string>{"b"});
      REQUIRE(o.holds.size() == 1);
      CHECK(o.holds[0].amount[qr::gpu_milli().index()] == 1000);
      CHECK(o.exact_usage);
    }
  }

  // Not Kueue's case: without Kueue settings on the waiting job's queue nothing is held (the
  // behaviour before holds, kept for every existing composition).
  TEST_CASE("a queue without Kueue preemption settings holds nothing") {
    auto c = lending_case(rwc::never);
    c.cqs[0].pre.reset();
    for (const int gpus : {2, 64}) {
      CAPTURE(gpus);
      gs::quota_tree::builder b(gs::basic_catalog());
      const auto cat = gs::basic_catalog();
      b.cohort("root");
      b.queue("ClusterQueueA", gs::tenant_id{1}, "root").nominal(qr::gpu_milli(), 2000);
      b.queue("ClusterQueueB", gs::tenant_id{2}, "root").nominal(qr::gpu_milli(), 0);
      gs::quota_admission<> adm(b.build());  // no set_preemption at all
      gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(
                                           static_cast<std::size_t>(gpus), 1)));
      REQUIRE(gs::testing::run_anywhere(book, make_job(c.admitted[0], 1, gs::tenant_id{1}),
                                        gs::at(gs::seconds(1000))));
      const std::vector<gs::job_spec> pending{make_job(c.pending[0], 2, gs::tenant_id{1}),
                                              make_job(c.pending[1], 3, gs::tenant_id{2})};
      auto pipe = gs::make_pipeline(std::move(adm), gs::priority_preemption{});
      gs::random_engine g(1);
      const auto res = pipe.schedule(book, pending, gs::at(gs::seconds(10'000)), g);
      CHECK(pipe.admission().holds().empty());
      REQUIRE(res.decisions.size() == 2);
      CHECK(res.decisions[1].kind == gs::verdict::admit);  // b1 borrows the free quota
    }
  }
}

}  // namespace policy_quota_kueue_hold_test
