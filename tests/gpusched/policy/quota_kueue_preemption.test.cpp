// SPDX-License-Identifier: Apache-2.0
// Kueue's classical preemption (issue #35): ports of kubernetes-sigs/kueue
// pkg/scheduler/preemption/preemption_test.go, TestPreemption, one pipeline cycle with
// `quota_admission` (each queue given its ClusterQueue's `preemption` settings with
// `set_preemption`) and `priority_preemption`. Mapping: Kueue's resource cpu (flavor "default")
// is whole GPUs (the gpu_milli dimension, 1000 per GPU; a workload of n CPUs is n tasks of one
// GPU); Kueue's memory (flavor "default") is our cpu dimension (1 Gi = 1 core). Kueue admits
// to quota, not to machines, so every case runs twice: on a cluster of exactly the cohort's
// quota (no free GPUs: the GPUs are short, the shortage path) and on a large cluster (free
// GPUs: the quota is short, the free-quota path); both must evict Kueue's victims.
// Names: a ';' in a Kueue case name is written ':' or ',' here (ctest splits names at ';').
// Not ported: the two cases choosing between flavors "alpha" and "beta" (gpusched's quota has
// no flavor assignment per pod set).
#include <doctest/doctest.h>

#include <algorithm>
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

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_quota_kueue_preemption_test {

namespace gs = gpusched;
using qr = gs::quota_resource;
using wcq = gs::within_cluster_queue;
using rwc = gs::reclaim_within_cohort;
using bwc = gs::borrow_within_cohort;

namespace {
const gs::sim_time t_now = gs::at(gs::seconds(10'000));

/// One ClusterQueue of Kueue's test: name, cohort, cpu (our GPUs) nominal / borrowing limit /
/// lending limit, memory (our cores) nominal / borrowing limit, preemption settings.
struct cq {
  std::string name, cohort;
  std::int64_t gpus;
  std::optional<std::int64_t> gpu_borrow, gpu_lend;
  std::optional<std::int64_t> mem, mem_borrow;
  gs::queue_preemption pre;
};

/// TestPreemption's defaultClusterQueues (the flavors alpha/beta of "standalone" left out).
std::vector<cq> default_cqs() {
  return {
      {"standalone", "", 6, {}, {}, {}, {}, {wcq::lower_priority, rwc::never, bwc::never, {}}},
      {"c1", "cohort", 6, 6, {}, 3, 3, {wcq::lower_priority, rwc::lower_priority, bwc::never, {}}},
      {"c2", "cohort", 6, 6, {}, 3, 3, {wcq::never, rwc::any, bwc::never, {}}},
      {"d1", "cohort-no-limits", 6, {}, {}, 3, {},
       {wcq::lower_priority, rwc::lower_priority, bwc::never, {}}},
      {"d2", "cohort-no-limits", 6, {}, {}, 3, {}, {wcq::never, rwc::any, bwc::never, {}}},
      {"l1", "legion", 6, 12, {}, 3, 6, {wcq::lower_priority, rwc::lower_priority, bwc::never, {}}},
      {"preventStarvation", "", 6, {}, {}, {}, {},
       {wcq::lower_or_newer_equal_priority, rwc::never, bwc::never, {}}},
      {"a_standard", "with_shared_cq", 1, 12, {}, {}, {},
       {wcq::never, rwc::lower_priority, bwc::lower_priority, 0}},
      {"b_standard", "with_shared_cq", 1, 12, {}, {}, {},
       {wcq::lower_priority, rwc::any, bwc::lower_priority, 0}},
      {"a_best_effort", "with_shared_cq", 1, 12, {}, {}, {},
       {wcq::never, rwc::lower_priority, bwc::lower_priority, 0}},
      {"b_best_effort", "with_shared_cq", 0, 13, {}, {}, {},
       {wcq::never, rwc::lower_priority, bwc::lower_priority, 0}},
      {"shared", "with_shared_cq", 10, {}, {}, {}, {}, {}},
      {"lend1", "cohort-lend", 6, {}, 4, {}, {},
       {wcq::lower_priority, rwc::lower_priority, bwc::never, {}}},
      {"lend2", "cohort-lend", 6, {}, 2, {}, {},
       {wcq::lower_priority, rwc::lower_priority, bwc::never, {}}},
      {"a", "cohort-three", 2, {}, {}, 2, {}, {wcq::lower_priority, rwc::any, bwc::never, {}}},
      {"b", "cohort-three", 2, {}, {}, 2, {}, {}},
      {"c", "cohort-three", 2, {}, {}, 2, {}, {}},
  };
}

/// A workload: name, queue, cpu (our GPUs), priority, memory (our cores), admission time and
/// creation time (seconds).
struct wl {
  std::string name, queue;
  int gpus = 0;
  int priority = 0;
  int cores = 0;
  int admitted_at = 0;
  int created_at = 0;
};

struct kcase {
  std::vector<cq> cqs;
  std::vector<std::pair<std::string, std::string>> cohorts;  // extra cohorts: name, parent
  std::vector<wl> admitted;
  wl incoming;
  std::set<std::string> want_preempted;
};

/// The result of one cycle: admitted or not, and the victims by name.
struct outcome {
  bool admitted = false;
  std::set<std::string> victims;
  bool exact_usage = false;   // the policy's usage equals a recount
  bool within_quota = false;  // no queue uses more than it may (available >= 0 everywhere)
};

gs::job_spec make_job(const wl& w, unsigned id, gs::tenant_id tenant) {
  gs::job_spec j;
  j.id = gs::job_id{id};
  j.name = w.name;
  j.tenant = tenant;
  j.priority = w.priority;
  j.submit = gs::at(gs::seconds(w.created_at));
  if (w.gpus > 0) {
    j.groups.push_back({.name = "g",
                        .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{1}),
                                    .cpu = gs::cpu_millis{0},
                                    .memory = gs::memory_mib{0}},
                        .count = w.gpus});
  }
  if (w.cores > 0) {
    j.groups.push_back(
        {.name = "c",
         .request = {.cpu = gs::cpu_millis{w.cores * 1000}, .memory = gs::memory_mib{0}},
         .count = 1});
  }
  return j;
}

template <class Preempt>
outcome run_case(const kcase& c, int cluster_gpus, Preempt preempt) {
  const auto cat = gs::basic_catalog();
  gs::quota_tree::builder b(cat);
  std::set<std::string> cohorts;
  for (const auto& [name, parent] : c.cohorts) {
    b.cohort(name, parent);
    cohorts.insert(name);
  }
  for (const auto& q : c.cqs) {
    if (!q.cohort.empty() && cohorts.insert(q.cohort).second) b.cohort(q.cohort);
  }
  std::map<std::string, gs::tenant_id> tenant;
  unsigned next = 1;
  for (const auto& q : c.cqs) {
    tenant[q.name] = gs::tenant_id{next};
    b.queue(q.name, gs::tenant_id{next++}, q.cohort).nominal(qr::gpu_milli(), q.gpus * 1000);
    if (q.gpu_borrow) b.borrowing_limit(qr::gpu_milli(), *q.gpu_borrow * 1000);
    if (q.gpu_lend) b.lending_limit(qr::gpu_milli(), *q.gpu_lend * 1000);
    if (q.mem) b.nominal(qr::cpu(), *q.mem * 1000);
    if (q.mem_borrow) b.borrowing_limit(qr::cpu(), *q.mem_borrow * 1000);
  }
  gs::quota_admission<> adm(b.build());
  for (const auto& q : c.cqs) adm.set_preemption(q.name, q.pre);

  gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(
                                       static_cast<std::size_t>(cluster_gpus), 1)));
  std::map<gs::job_id, std::string> names;
  unsigned id = 1;
  for (const auto& w : c.admitted) {
    const auto j = make_job(w, id, tenant.at(w.queue));
    REQUIRE(gs::testing::run_anywhere(book, j, gs::at(gs::seconds(1000 + w.admitted_at))));
    names[j.id] = w.name;
    ++id;
  }
  const std::vector<gs::job_spec> pending{make_job(c.incoming, 100, tenant.at(c.incoming.queue))};
  auto pipe = gs::make_pipeline(std::move(adm), std::move(preempt));
  gs::random_engine g(1);
  const auto res = pipe.schedule(book, pending, t_now, g);
  REQUIRE(res.decisions.size() == 1);
  outcome o;
  o.admitted = res.decisions[0].kind == gs::verdict::admit;
  for (const auto v : res.decisions[0].victims) o.victims.insert(names.at(v));
  const auto& q = pipe.admission().quotas();
  auto recount = q;
  recount.recompute(book);
  o.exact_usage = true;
  o.within_quota = true;
  for (std::int32_t n = 0; std::cmp_less(n, q.nodes().size()); ++n) {
    for (std::size_t d = 0; d < q.dims(); ++d) {
      o.exact_usage = o.exact_usage && q.usage(n, d) == recount.usage(n, d);
      if (q.at(n).queue && q.governed(d)) o.within_quota = o.within_quota && q.available(n, d) >= 0;
    }
  }
  CHECK(gs::check_invariants(book).ok());
  return o;
}

/// The GPUs of the incoming workload's root cohort (its queue alone without a cohort).
int cohort_gpus(const kcase& c) {
  std::string cohort;
  for (const auto& q : c.cqs) {
    if (q.name == c.incoming.queue) cohort = q.cohort;
  }
  int total = 0;
  for (const auto& q : c.cqs) {
    if (q.name == c.incoming.queue || (!cohort.empty() && q.cohort == cohort)) {
      total += static_cast<int>(q.gpus);
    }
  }
  if (!c.cohorts.empty()) {  // a hierarchy: every queue of the test shares the root
    total = 0;
    for (const auto& q : c.cqs) total += static_cast<int>(q.gpus);
  }
  return total;
}

/// Runs `c` on both clusters with `priority_preemption` and checks Kueue's victims. Kueue's
/// test asks for targets only (the incoming workload may fit without preemption, e.g. "no
/// workloads borrowing"); with victims, the incoming job must be admitted.
void check_kueue(const kcase& c) {
  for (const int gpus : {cohort_gpus(c), 64}) {
    CAPTURE(gpus);
    const auto o = run_case(c, gpus, gs::priority_preemption{});
    CHECK(o.victims == c.want_preempted);
    if (!c.want_preempted.empty()) CHECK(o.admitted);
    CHECK(o.exact_usage);
    CHECK(o.within_quota);
  }
  // checkpoint-aware preemption: the same rules decide who may be a victim (its lost-work order
  // may choose others among them); here every case has one minimal set, or costs tie by id
  for (const int gpus : {cohort_gpus(c), 64}) {
    CAPTURE(gpus);
    const auto o = run_case(c, gpus, gs::checkpoint_aware_preemption{});
    if (c.want_preempted.empty()) {
      CHECK(o.victims.empty());
    } else {
      CHECK(o.admitted);
      CHECK(o.victims.size() == c.want_preempted.size());
    }
    CHECK(o.within_quota);
  }
}
}  // namespace

TEST_SUITE("policy/admission/quota_kueue_preemption") {
  // preemption_test.go TestPreemption "preempt lowest priority"
  TEST_CASE("Kueue TestPreemption: preempt lowest priority") {
    check_kueue({default_cqs(),
                 {},
                 {{"low", "standalone", 2, -1}, {"mid", "standalone", 2, 0},
                  {"high", "standalone", 2, 1}},
                 {"in", "standalone", 2, 1},
                 {"low"}});
  }

  // preemption_test.go TestPreemption "preempt multiple"
  TEST_CASE("Kueue TestPreemption: preempt multiple") {
    check_kueue({default_cqs(),
                 {},
                 {{"low", "standalone", 2, -1}, {"mid", "standalone", 2, 0},
                  {"high", "standalone", 2, 1}},
                 {"in", "standalone", 3, 1},
                 {"low", "mid"}});
  }

  // preemption_test.go TestPreemption "no preemption for low priority"
  TEST_CASE("Kueue TestPreemption: no preemption for low priority") {
    check_kueue({default_cqs(),
                 {},
                 {{"low", "standalone", 3, -1}, {"mid", "standalone", 3, 0}},
                 {"in", "standalone", 1, -1},
                 {}});
  }

  // preemption_test.go TestPreemption "not enough low priority workloads"
  TEST_CASE("Kueue TestPreemption: not enough low priority workloads") {
    check_kueue({default_cqs(),
                 {},
                 {{"low", "standalone", 3, -1}, {"mid", "standalone", 3, 0}},
                 {"in", "standalone", 4, 0},
                 {}});
  }

  // preemption_test.go TestPreemption "some free quota, preempt low priority"
  TEST_CASE("Kueue TestPreemption: some free quota, preempt low priority") {
    check_kueue({default_cqs(),
                 {},
                 {{"low", "standalone", 1, -1}, {"mid", "standalone", 1, 0},
                  {"high", "standalone", 3, 1}},
                 {"in", "standalone", 2, 1},
                 {"low"}});
  }

  // preemption_test.go TestPreemption "minimal set excludes low priority"
  TEST_CASE("Kueue TestPreemption: minimal set excludes low priority") {
    check_kueue({default_cqs(),
                 {},
                 {{"low", "standalone", 1, -1}, {"mid", "standalone", 2, 0},
                  {"high", "standalone", 3, 1}},
                 {"in", "standalone", 2, 1},
                 {"mid"}});
  }

  // preemption_test.go TestPreemption "reclaim quota from borrower"
  TEST_CASE("Kueue TestPreemption: reclaim quota from borrower") {
    check_kueue({default_cqs(),
                 {},
                 {{"c1-low", "c1", 3, -1}, {"c2-mid", "c2", 3, 0}, {"c2-high", "c2", 6, 1}},
                 {"in", "c1", 3, 1},
                 {"c2-mid"}});
  }

  // preemption_test.go TestPreemption "reclaim quota if workload requests 0 resources for a
  // resource at nominal quota"
  TEST_CASE("Kueue TestPreemption: reclaim quota if workload requests 0 resources for a resource "
            "at nominal quota") {
    check_kueue({default_cqs(),
                 {},
                 {{"c1-low", "c1", 3, -1, 3}, {"c2-mid", "c2", 3, 0}, {"c2-high", "c2", 6, 1}},
                 {"in", "c1", 3, 1},
                 {"c2-mid"}});
  }

  // preemption_test.go TestPreemption "no workloads borrowing"
  TEST_CASE("Kueue TestPreemption: no workloads borrowing") {
    check_kueue({default_cqs(),
                 {},
                 {{"c1-high", "c1", 4, 1}, {"c2-low-1", "c2", 4, -1}},
                 {"in", "c1", 4, 1},
                 {}});
  }

  // preemption_test.go TestPreemption "not enough workloads borrowing"
  TEST_CASE("Kueue TestPreemption: not enough workloads borrowing") {
    check_kueue({default_cqs(),
                 {},
                 {{"c1-high", "c1", 4, 1}, {"c2-low-1", "c2", 4, -1}, {"c2-low-2", "c2", 4, -1}},
                 {"in", "c1", 4, 1},
                 {}});
  }

  // preemption_test.go TestPreemption "preempting locally and borrowing other resources in
  // cohort, without cohort candidates"
  TEST_CASE("Kueue TestPreemption: preempting locally and borrowing other resources in cohort, "
            "without cohort candidates") {
    check_kueue({default_cqs(),
                 {},
                 {{"c1-low", "c1", 4, -1}, {"c2-low-1", "c2", 4, -1}, {"c2-high-2", "c2", 4, 1}},
                 {"in", "c1", 4, 1, 5},
                 {"c1-low"}});
  }

  // preemption_test.go TestPreemption "preempting locally and borrowing same resource in cohort"
  TEST_CASE("Kueue TestPreemption: preempting locally and borrowing same resource in cohort") {
    check_kueue({default_cqs(),
                 {},
                 {{"c1-med", "c1", 4, 0}, {"c1-low", "c1", 4, -1}, {"c2-low-1", "c2", 4, -1}},
                 {"in", "c1", 4, 1},
                 {"c1-low"}});
  }

  // preemption_test.go TestPreemption "preempting locally and borrowing same resource in cohort;
  // no borrowing limit in the cohort"
  TEST_CASE("Kueue TestPreemption: preempting locally and borrowing same resource in cohort, no "
            "borrowing limit in the cohort") {
    check_kueue({default_cqs(),
                 {},
                 {{"d1-med", "d1", 4, 0}, {"d1-low", "d1", 4, -1}, {"d2-low-1", "d2", 4, -1}},
                 {"in", "d1", 4, 1},
                 {"d1-low"}});
  }

  // preemption_test.go TestPreemption "preempting locally and borrowing other resources in
  // cohort, with cohort candidates"
  TEST_CASE("Kueue TestPreemption: preempting locally and borrowing other resources in cohort, "
            "with cohort candidates") {
    check_kueue({default_cqs(),
                 {},
                 {{"c1-med", "c1", 4, 0},
                  {"c2-low-1", "c2", 5, -1},
                  {"c2-low-2", "c2", 1, -1},
                  {"c2-low-3", "c2", 1, -1}},
                 {"in", "c1", 2, 1, 5},
                 {"c1-med"}});
  }

  // preemption_test.go TestPreemption "preempting locally and not borrowing same resource in
  // 1-queue cohort"
  TEST_CASE("Kueue TestPreemption: preempting locally and not borrowing same resource in 1-queue "
            "cohort") {
    check_kueue({default_cqs(),
                 {},
                 {{"l1-med", "l1", 4, 0}, {"l1-low", "l1", 2, -1}},
                 {"in", "l1", 4, 1},
                 {"l1-med"}});
  }

  // preemption_test.go TestPreemption "do not reclaim borrowed quota from same priority for
  // withinCohort=ReclaimFromLowerPriority"
  TEST_CASE("Kueue TestPreemption: do not reclaim borrowed quota from same priority for "
            "withinCohort=ReclaimFromLowerPriority") {
    check_kueue({default_cqs(),
                 {},
                 {{"c1", "c1", 2, 0}, {"c2-1", "c2", 4, 0}, {"c2-2", "c2", 4, 0}},
                 {"in", "c1", 4, 0},
                 {}});
  }

  // preemption_test.go TestPreemption "reclaim borrowed quota from same priority for
  // withinCohort=ReclaimFromAny"
  TEST_CASE("Kueue TestPreemption: reclaim borrowed quota from same priority for "
            "withinCohort=ReclaimFromAny") {
    check_kueue({default_cqs(),
                 {},
                 {{"c1-1", "c1", 4, 0}, {"c1-2", "c1", 4, 1}, {"c2", "c2", 2, 0}},
                 {"in", "c2", 4, 0},
                 {"c1-1"}});
  }

  // preemption_test.go TestPreemption "preempt from all ClusterQueues in cohort"
  TEST_CASE("Kueue TestPreemption: preempt from all ClusterQueues in cohort") {
    check_kueue({default_cqs(),
                 {},
                 {{"c1-low", "c1", 3, -1},
                  {"c1-mid", "c1", 2, 0},
                  {"c2-low", "c2", 3, -1},
                  {"c2-mid", "c2", 4, 0}},
                 {"in", "c1", 4, 0},
                 {"c1-low", "c2-low"}});
  }

  // preemption_test.go TestPreemption "can't preempt workloads in ClusterQueue for
  // withinClusterQueue=Never"
  TEST_CASE("Kueue TestPreemption: can't preempt workloads in ClusterQueue for "
            "withinClusterQueue=Never") {
    check_kueue({default_cqs(), {}, {{"c2-low", "c2", 3, -1}}, {"in", "c2", 4, 1}, {}});
  }

  // preemption_test.go TestPreemption "preempt newer workloads with the same priority"
  TEST_CASE("Kueue TestPreemption: preempt newer workloads with the same priority") {
    check_kueue({default_cqs(),
                 {},
                 {{"wl1", "preventStarvation", 2, 2, 0, 0, 15},
                  {"wl2", "preventStarvation", 2, 1, 0, 1, 15},
                  {"wl3", "preventStarvation", 2, 1, 0, 0, 15}},
                 {"in", "preventStarvation", 2, 1, 0, 0, 0},
                 {"wl2"}});
  }

  // preemption_test.go TestPreemption "use BorrowWithinCohort; allow preempting a
  // lower-priority workload from another ClusterQueue while borrowing"
  TEST_CASE("Kueue TestPreemption: use BorrowWithinCohort: allow preempting a lower-priority "
            "workload from another ClusterQueue while borrowing") {
    check_kueue({default_cqs(),
                 {},
                 {{"a_best_effort_low", "a_best_effort", 10, -1},
                  {"b_best_effort_low", "b_best_effort", 1, -1}},
                 {"in", "a_standard", 10, 0},
                 {"a_best_effort_low"}});
  }

  // preemption_test.go TestPreemption "use BorrowWithinCohort; don't allow preempting a
  // lower-priority workload with priority above MaxPriorityThreshold, if borrowing is required
  // even after the preemption"
  TEST_CASE("Kueue TestPreemption: use BorrowWithinCohort: don't allow preempting a "
            "lower-priority workload with priority above MaxPriorityThreshold, if borrowing is "
            "required even after the preemption") {
    check_kueue({default_cqs(),
                 {},
                 {{"b_standard", "b_standard", 10, 1}},
                 {"in", "a_standard", 10, 2},
                 {}});
  }

  // preemption_test.go TestPreemption "use BorrowWithinCohort; allow preempting a
  // lower-priority workload with priority above MaxPriorityThreshold, if borrowing is not
  // required after the preemption"
  TEST_CASE("Kueue TestPreemption: use BorrowWithinCohort: allow preempting a lower-priority "
            "workload with priority above MaxPriorityThreshold, if borrowing is not required "
            "after the preemption") {
    check_kueue({default_cqs(),
                 {},
                 {{"b_standard", "b_standard", 13, 1}},
                 {"in", "a_standard", 1, 2},
                 {"b_standard"}});
  }

  // preemption_test.go TestPreemption "use BorrowWithinCohort; don't allow for preemption of
  // lower-priority workload from the same ClusterQueue"
  TEST_CASE("Kueue TestPreemption: use BorrowWithinCohort: don't allow for preemption of "
            "lower-priority workload from the same ClusterQueue") {
    check_kueue({default_cqs(),
                 {},
                 {{"a_standard", "a_standard", 13, 1}},
                 {"in", "a_standard", 1, 2},
                 {}});
  }

  // preemption_test.go TestPreemption "use BorrowWithinCohort; only preempt from CQ if no
  // workloads below threshold and already above nominal"
  TEST_CASE("Kueue TestPreemption: use BorrowWithinCohort: only preempt from CQ if no workloads "
            "below threshold and already above nominal") {
    check_kueue({default_cqs(),
                 {},
                 {{"a_standard_1", "a_standard", 10, 1},
                  {"a_standard_2", "a_standard", 1, 1},
                  {"b_standard_1", "b_standard", 1, 1},
                  {"b_standard_2", "b_standard", 1, 2}},
                 {"in", "b_standard", 1, 3},
                 {"b_standard_1"}});
  }

  // preemption_test.go TestPreemption "use BorrowWithinCohort; preempt from CQ and from other
  // CQs with workloads below threshold"
  TEST_CASE("Kueue TestPreemption: use BorrowWithinCohort: preempt from CQ and from other CQs "
            "with workloads below threshold") {
    check_kueue({default_cqs(),
                 {},
                 {{"b_standard_high", "b_standard", 10, 2},
                  {"b_standard_mid", "b_standard", 1, 1},
                  {"a_best_effort_low", "a_best_effort", 1, -1},
                  {"a_best_effort_lower", "a_best_effort", 1, -2}},
                 {"in", "b_standard", 2, 2},
                 {"a_best_effort_lower", "b_standard_mid"}});
  }

  // preemption_test.go TestPreemption "reclaim quota from lender"
  TEST_CASE("Kueue TestPreemption: reclaim quota from lender") {
    check_kueue({default_cqs(),
                 {},
                 {{"lend1-low", "lend1", 3, -1},
                  {"lend2-mid", "lend2", 3, 0},
                  {"lend2-high", "lend2", 4, 1}},
                 {"in", "lend1", 3, 1},
                 {"lend2-mid"}});
  }

  // preemption_test.go TestPreemption "preempt from all ClusterQueues in cohort-lend"
  TEST_CASE("Kueue TestPreemption: preempt from all ClusterQueues in cohort-lend") {
    check_kueue({default_cqs(),
                 {},
                 {{"lend1-low", "lend1", 3, -1},
                  {"lend1-mid", "lend1", 2, 0},
                  {"lend2-low", "lend2", 3, -1},
                  {"lend2-mid", "lend2", 4, 0}},
                 {"in", "lend1", 4, 0},
                 {"lend1-low", "lend2-low"}});
  }

  // preemption_test.go TestPreemption "cannot preempt from other ClusterQueues if exceeds
  // requestable quota including lending limit"
  TEST_CASE("Kueue TestPreemption: cannot preempt from other ClusterQueues if exceeds requestable "
            "quota including lending limit") {
    check_kueue({default_cqs(), {}, {{"lend2-low", "lend2", 10, -1}}, {"in", "lend1", 9, 0}, {}});
  }

  // preemption_test.go TestPreemption "preemptions from cq when target queue is exhausted for
  // the single requested resource"
  TEST_CASE("Kueue TestPreemption: preemptions from cq when target queue is exhausted for the "
            "single requested resource") {
    check_kueue({default_cqs(),
                 {},
                 {{"a1", "a", 1, -2},
                  {"a2", "a", 1, -2},
                  {"a3", "a", 1, -1},
                  {"b1", "b", 1, 0},
                  {"b2", "b", 1, 0},
                  {"b3", "b", 1, 0}},
                 {"in", "a", 2, 0},
                 {"a1", "a2"}});
  }

  // preemption_test.go TestPreemption "preemptions from cq when target queue is exhausted for
  // two requested resources"
  TEST_CASE("Kueue TestPreemption: preemptions from cq when target queue is exhausted for two "
            "requested resources") {
    check_kueue({default_cqs(),
                 {},
                 {{"a1", "a", 1, -2, 1},
                  {"a2", "a", 1, -2, 1},
                  {"a3", "a", 1, -1, 1},
                  {"b1", "b", 1, 0, 1},
                  {"b2", "b", 1, 0, 1},
                  {"b3", "b", 1, 0, 1}},
                 {"in", "a", 2, 0, 2},
                 {"a1", "a2"}});
  }

  // preemption_test.go TestPreemption "preemptions from cq when target queue is exhausted for
  // one requested resource, but not the other"
  TEST_CASE("Kueue TestPreemption: preemptions from cq when target queue is exhausted for one "
            "requested resource, but not the other") {
    check_kueue({default_cqs(),
                 {},
                 {{"a1", "a", 1, -2},
                  {"a2", "a", 1, -2},
                  {"a3", "a", 1, -1},
                  {"b1", "b", 1, 0},
                  {"b2", "b", 1, 0},
                  {"b3", "b", 1, 0}},
                 {"in", "a", 2, 0, 2},
                 {"a1", "a2"}});
  }

  // preemption_test.go TestPreemption "allow preemption from other cluster queues if target cq
  // is not exhausted for the requested resource"
  TEST_CASE("Kueue TestPreemption: allow preemption from other cluster queues if target cq is not "
            "exhausted for the requested resource") {
    check_kueue({default_cqs(),
                 {},
                 {{"a1", "a", 1, -1},
                  {"b1", "b", 1, 0},
                  {"b2", "b", 1, 0},
                  {"b3", "b", 1, 0},
                  {"b4", "b", 1, 0},
                  {"b5", "b", 1, -1}},
                 {"in", "a", 2, 0},
                 {"a1", "b5"}});
  }

  // preemption_test.go TestPreemption "long range preemption"
  TEST_CASE("Kueue TestPreemption: long range preemption") {
    check_kueue({{{"cq-left", "cohort-left", 10, {}, {}, {}, {}, {wcq::never, rwc::any, bwc::never, {}}},
                  {"cq-right", "cohort-right", 0, {}, {}, {}, {}, {}}},
                 {{"root", ""}, {"cohort-left", "root"}, {"cohort-right", "root"}},
                 {{"to-be-preempted", "cq-right", 5, 0}},
                 {"in", "cq-left", 8, 0},
                 {"to-be-preempted"}});
  }

  TEST_CASE("without Kueue settings the behaviour is unchanged: the preemptor's own low-priority "
            "job is still evicted under a GPU shortage") {
    // issue #35 point 5: c1 (6 GPUs) runs c1-low (3, priority -1); c2 borrows 3 (c2-mid); the
    // cluster holds exactly the 12 GPUs of quota. With Kueue's settings c2's borrower goes
    // (above); without them priority preemption takes c1's own low-priority job.
    auto cqs = default_cqs();
    kcase c{cqs,
            {},
            {{"c1-low", "c1", 3, -1}, {"c2-mid", "c2", 3, 0}, {"c2-high", "c2", 6, 1}},
            {"in", "c1", 3, 1},
            {"c2-mid"}};
    CHECK(run_case(c, 12, gs::priority_preemption{}).victims == std::set<std::string>{"c2-mid"});
  }
}

}  // namespace policy_quota_kueue_preemption_test
