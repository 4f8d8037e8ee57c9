// SPDX-License-Identifier: Apache-2.0
// Laws over every preemption policy (policy/concepts.hpp, `preemption_policy`): victims are
// distinct, running, preemptible jobs other than the preemptor; shrinks name running jobs that
// are not victims, down to at least their group's minimum; a non-empty plan makes room (the
// probe with exactly its victims and shrinks places the preemptor: the victims free at least
// the shortfall); a preemptor that cannot be satisfied evicts nobody. Plus each policy's own
// promise about who may be a victim, as its header states it. On seeded random instances:
// whole-GPU gangs on uniform nodes, and gangs of every kind on mixed clusters.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include <gpusched/policy/preemption/checkpoint_aware.hpp>
#include <gpusched/policy/preemption/kube_default.hpp>
#include <gpusched/policy/preemption/las.hpp>
#include <gpusched/policy/preemption/priority.hpp>

#include "law_fixtures.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_preemption_laws_test {

namespace gs = gpusched;
namespace gt = gpusched::testing;

namespace {

using record_ptr = std::shared_ptr<gs::service_record>;

/// "Candidates: running, preemptible jobs with priority strictly below the preemptor's."
void strictly_lower_priority(const gs::running_job& v, const gs::job_spec& j) {
  CHECK(v.spec.priority < j.priority);
}

struct priority_case {
  static gs::priority_preemption make(const record_ptr&) { return {}; }
  static void promise(const gs::priority_preemption&, const gs::schedule_context&,
                      const gs::job_spec& j, const gs::running_job& v) {
    strictly_lower_priority(v, j);
  }
};
struct none_case {
  static gs::no_preemption make(const record_ptr&) { return {}; }
  static void promise(const gs::no_preemption&, const gs::schedule_context&, const gs::job_spec&,
                      const gs::running_job& v) {
    FAIL("no_preemption chose victim " << v.spec.id.value());  // "Never preempts."
  }
};
struct kube_default_case {
  static gs::kube_default_preemption make(const record_ptr&) { return {}; }
  static void promise(const gs::kube_default_preemption&, const gs::schedule_context&,
                      const gs::job_spec& j, const gs::running_job& v) {
    strictly_lower_priority(v, j);  // "running, preemptible jobs of strictly lower priority"
  }
};
struct checkpoint_aware_case {
  static gs::checkpoint_aware_preemption make(const record_ptr&) { return {}; }
  static void promise(const gs::checkpoint_aware_preemption&, const gs::schedule_context&,
                      const gs::job_spec& j, const gs::running_job& v) {
    strictly_lower_priority(v, j);  // without quota reclaim, which is off by default
  }
};
/// Checkpoint-aware with Slurm's PreemptExemptTime: victims ran for at least `min_runtime`.
struct checkpoint_aware_exempt_case {
  static gs::checkpoint_aware_preemption make(const record_ptr&) {
    gs::checkpoint_aware_options o;
    o.min_runtime = gs::seconds(1800);
    return gs::checkpoint_aware_preemption(std::move(o));
  }
  static void promise(const gs::checkpoint_aware_preemption& p, const gs::schedule_context& ctx,
                      const gs::job_spec& j, const gs::running_job& v) {
    strictly_lower_priority(v, j);
    CHECK(ctx.now() - v.start >= p.options().min_runtime);
  }
};
struct las_case {
  static gs::las_preemption make(const record_ptr& r) { return gs::las_preemption(r, {3600.0}); }
  static void promise(const gs::las_preemption& p, const gs::schedule_context& ctx,
                      const gs::job_spec& j, const gs::running_job& v) {
    // "Victims: running, preemptible jobs whose queue is strictly above the preemptor's"
    CHECK(p.queue_of(p.attained(v, ctx.now())) > p.queue_of(p.attained(j)));
  }
};
struct srtf_case {
  static gs::srtf_preemption make(const record_ptr& r) { return gs::srtf_preemption(r); }
  static void promise(const gs::srtf_preemption& p, const gs::schedule_context& ctx,
                      const gs::job_spec& j, const gs::running_job& v) {
    // "preempts running jobs whose remaining time is strictly larger than its own"
    CHECK(p.remaining(v, ctx.now()) > p.remaining(j));
  }
};
struct srsf_case {
  static gs::srtf_preemption make(const record_ptr& r) { return gs::srtf_preemption(r, true); }
  static void promise(const gs::srtf_preemption& p, const gs::schedule_context& ctx,
                      const gs::job_spec& j, const gs::running_job& v) {
    CHECK(p.remaining(v, ctx.now()) > p.remaining(j));
  }
};

}  // namespace

TEST_SUITE("policy/preemption/laws") {
  TEST_CASE_TEMPLATE(
      "every preemption policy evicts distinct running jobs that make room, and nobody for a "
      "preemptor that cannot be satisfied",
      C, priority_case, none_case, kube_default_case, checkpoint_aware_case,
      checkpoint_aware_exempt_case, las_case, srtf_case, srsf_case) {
    const auto seed = gs::seed_from_env(17004);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    const auto now = gs::at(gs::seconds(8 * 3600));
    std::size_t plans = 0, empty_plans = 0, hopeless = 0;
    for (int round = 0; round < 30; ++round) {
      CAPTURE(round);
      const bool any_kind = round % 2 == 1;
      gs::ledger book(gs::cluster(cat, any_kind ? gt::law_nodes(g, 6)
                                                : gt::uniform_nodes(3 + gs::uniform_index(g, 3), 8)));
      gt::law_running(g, book, cat, 10, now, any_kind);
      auto record = std::make_shared<gs::service_record>();
      for (const auto& r : book.running()) {
        if (gs::uniform_index(g, 2) == 0)
          record->add(r.spec.id, static_cast<double>(gs::uniform_index(g, 8000)),
                      gs::seconds(static_cast<std::int64_t>(gs::uniform_index(g, 3600))));
      }
      auto p = C::make(record);
      for (unsigned k = 0; k < 6; ++k) {
        CAPTURE(k);
        auto j = any_kind ? gt::law_job(g, cat, 900 + k, now, 3)
                          : gt::whole_gpu_job(900 + k, 1 + static_cast<int>(gs::uniform_index(g, 3)),
                                              1 << gs::uniform_index(g, 4));
        j.priority = static_cast<int>(gs::uniform_index(g, 5));
        j.submit = now;
        if (gs::uniform_index(g, 3) != 0)
          j.expected_duration = gs::seconds(static_cast<std::int64_t>(60 + gs::uniform_index(g, 7200)));
        if (gs::uniform_index(g, 4) == 0)
          record->add(j.id, static_cast<double>(gs::uniform_index(g, 8000)), gs::seconds(600));
        const gs::schedule_context ctx(book, now, g);
        const auto before = gt::ledger_snapshot::of(book);
        gt::first_fit_probe probe{&book, &j, now};
        const auto plan = p.select(ctx, j, gs::fit_probe(probe));
        CHECK(gt::ledger_snapshot::of(book) == before);  // select changes nothing
        // victims: distinct running, preemptible jobs, not the preemptor, as the policy promises
        for (std::size_t a = 0; a < plan.victims.size(); ++a) {
          const auto v = plan.victims[a];
          CAPTURE(v.value());
          CHECK(v != j.id);
          for (std::size_t b = 0; b < a; ++b) CHECK(plan.victims[b] != v);
          const auto* r = book.find(v);
          REQUIRE(r != nullptr);
          CHECK(r->spec.preemptible);
          C::promise(p, ctx, j, *r);
        }
        for (const auto& s : plan.shrinks) {
          CAPTURE(s.job.value());
          const auto* r = book.find(s.job);
          REQUIRE(r != nullptr);
          CHECK(r->spec.preemptible);
          CHECK(std::find(plan.victims.begin(), plan.victims.end(), s.job) == plan.victims.end());
          REQUIRE(s.group < r->spec.groups.size());
          CHECK(s.to >= r->spec.groups[s.group].minimum());
          CHECK(s.to < r->tasks_in_group(s.group));
          C::promise(p, ctx, j, *r);
        }
        // the victims free at least the shortfall: exactly they (and the shrinks) make room
        gt::first_fit_probe verify{&book, &j, now};
        if (!plan.empty()) {
          ++plans;
          CHECK(verify(plan.victims, plan.shrinks, nullptr));
        } else {
          ++empty_plans;
        }
        // a preemptor that even an empty cluster would not take evicts nobody
        std::vector<gs::job_id> everyone;
        for (const auto& r : book.running()) everyone.push_back(r.spec.id);
        if (!verify(everyone, {}, nullptr)) {
          ++hopeless;
          CHECK(plan.empty());
        }
        CHECK(gt::ledger_snapshot::of(book) == before);
      }
    }
    CHECK(empty_plans > 0);
    CHECK(hopeless > 0);
    MESSAGE("plans " << plans << ", empty " << empty_plans << ", hopeless " << hopeless);
  }
}

}  // namespace policy_preemption_laws_test
