// SPDX-License-Identifier: Apache-2.0
// Laws over every admission policy (policy/concepts.hpp, `admission_policy`): `admit` does not
// change the cluster or the ledger; through a pipeline, over many seeded cycles with arrivals,
// departures and preemption, no gang is ever half-placed, every admitted job runs (or was
// evicted later in the cycle), and the ledger passes check_invariants. Quota admission also
// keeps every queue's usage within its nominal quota plus its borrowing limit, and the cohort's
// within the sum of its queues' nominal quotas.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <gpusched/check/invariants.hpp>
#include <gpusched/pipeline/pipeline.hpp>
#include <gpusched/policy/admission/gang.hpp>
#include <gpusched/policy/admission/quota.hpp>
#include <gpusched/policy/placement/gang.hpp>
#include <gpusched/policy/preemption/priority.hpp>
#include <gpusched/workload/quota.hpp>

#include "law_fixtures.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_admission_laws_test {

namespace gs = gpusched;
namespace gt = gpusched::testing;

namespace {

/// Per tenant 0..3: nominal milli-GPU and CPU quota, borrowing limit (negative: none).
struct queue_quota {
  std::int64_t gpu_milli, cpu, borrow;
};
constexpr queue_quota quotas[] = {{6000, 48000, 2000}, {10000, 64000, -1}, {3000, 32000, 0},
                                  {0, 16000, 4000}};

gs::quota_tree law_quota_tree(const gs::gpu_catalog& cat) {
  gs::quota_tree::builder b(cat);
  b.cohort("lab");
  for (unsigned t = 0; t < 4; ++t) {
    b.queue("q" + std::to_string(t), gs::tenant_id{t}, "lab")
        .nominal(gs::quota_resource::gpu_milli(), quotas[t].gpu_milli)
        .nominal(gs::quota_resource::cpu(), quotas[t].cpu);
    if (quotas[t].borrow >= 0) b.borrowing_limit(gs::quota_resource::gpu_milli(), quotas[t].borrow);
  }
  return b.build();
}

template <gs::queueing Q>
struct gang_case {
  static constexpr bool quota = false;
  static gs::gang_admission make(const gs::gpu_catalog&) { return gs::gang_admission(Q); }
};
struct gang_backoff_case {
  static constexpr bool quota = false;
  static gs::gang_admission make(const gs::gpu_catalog&) {
    return gs::gang_admission(gs::queueing::best_effort, {.base = 1, .cap = 4, .limit = 6});
  }
};
template <gs::queueing Q>
struct quota_case {
  static constexpr bool quota = true;
  static gs::quota_admission<> make(const gs::gpu_catalog& cat) {
    return gs::quota_admission<>(law_quota_tree(cat), gs::gang_admission(Q));
  }
};

/// Usage of tenant `t` from the ledger alone, per quota dimension.
gs::quota_vector usage_of(const gs::ledger& book, gs::tenant_id t, std::size_t dims) {
  gs::quota_vector v(dims, 0);
  for (const auto& r : book.running()) {
    if (r.spec.tenant == t) gs::add_usage(book.state(), r.tasks, v);
  }
  return v;
}

/// True when `j` can be placed on the empty cluster `empty` (so that it runs once enough jobs
/// finish, and a strict FIFO head does not block the queue forever).
bool fits_when_empty(gs::ledger& empty, const gs::job_spec& j, gs::random_engine& g) {
  const gs::schedule_context ctx(empty, {}, g);
  auto tx = empty.begin();
  const gs::first_fit_packing pack;
  const bool ok = gs::gang_placement{}.place(ctx, j, gs::packing_ref(pack), tx).placed;
  tx.rollback();
  return ok;
}

}  // namespace

TEST_SUITE("policy/admission/laws") {
  TEST_CASE_TEMPLATE(
      "every admission policy admits without changing the ledger, and its pipeline never "
      "half-places a gang",
      C, gang_case<gs::queueing::best_effort>, gang_case<gs::queueing::strict_fifo>,
      gang_case<gs::queueing::easy_backfill>, gang_case<gs::queueing::conservative_backfill>,
      gang_backoff_case, quota_case<gs::queueing::best_effort>,
      quota_case<gs::queueing::easy_backfill>) {
    const auto seed = gs::seed_from_env(17003);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    const std::size_t dims = 3 + cat.size();
    std::size_t admitted = 0, waited = 0, borrowing = 0;
    for (int run = 0; run < 2; ++run) {
      CAPTURE(run);
      gs::ledger book(gs::cluster(cat, gt::law_nodes(g, 10)));
      gt::take_some_out(g, book);
      gs::ledger empty = book;
      auto pipe = gs::make_pipeline(C::make(cat), gs::gang_placement{}, gs::priority_preemption{});
      std::vector<gs::job_spec> jobs;  // every job submitted and not finished or rejected
      unsigned id = 1;
      for (int cycle = 0; cycle < 10; ++cycle) {
        CAPTURE(cycle);
        const auto now = gs::at(gs::seconds(60 * cycle));
        for (int k = 0; k < 6; ++k) {
          auto j = gt::law_job(g, cat, id++, now);
          j.expected_duration = gs::seconds(static_cast<std::int64_t>(60 + gs::uniform_index(g, 240)));
          if (fits_when_empty(empty, j, g)) jobs.push_back(std::move(j));
        }
        std::vector<gs::job_spec> pending;
        for (const auto& j : jobs) {
          if (!book.is_running(j.id)) pending.push_back(j);
        }
        {  // admit() leaves the cluster and the ledger alone
          auto probe = pipe.admission();
          const auto before = gt::ledger_snapshot::of(book);
          const auto version = book.version();
          const gs::schedule_context ctx(book, now, g);
          probe.begin_cycle(ctx);
          for (const auto& j : pending) (void)probe.admit(ctx, j);
          CHECK(gt::ledger_snapshot::of(book) == before);
          CHECK(book.version() == version);
        }
        const auto res = pipe.schedule(book, pending, now, g);
        CHECK(res.decisions.size() == pending.size());
        std::vector<gs::job_id> evicted;
        for (const auto& d : res.decisions) evicted.insert(evicted.end(), d.victims.begin(),
                                                           d.victims.end());
        for (const auto& d : res.decisions) {
          CAPTURE(d.job.value());
          if (d.kind == gs::verdict::admit) {
            ++admitted;
            CHECK((book.is_running(d.job) ||
                   std::find(evicted.begin(), evicted.end(), d.job) != evicted.end()));
          } else {
            ++waited;
            CHECK_FALSE(book.is_running(d.job));  // deferred or rejected: nothing of it runs
          }
          if (d.kind == gs::verdict::reject)
            std::erase_if(jobs, [&](const gs::job_spec& j) { return j.id == d.job; });
        }
        const auto report = gs::check_invariants(book);
        CHECK_MESSAGE(report.ok(), report.to_string());
        const auto half = gt::half_placed(book);
        CHECK_MESSAGE(half.empty(), half);
        if constexpr (C::quota) {
          const auto milli = gs::quota_resource::gpu_milli().index();
          std::int64_t cohort = 0, nominal = 0;
          for (unsigned t = 0; t < 4; ++t) {
            CAPTURE(t);
            const auto u = usage_of(book, gs::tenant_id{t}, dims);
            cohort += u[milli];
            nominal += quotas[t].gpu_milli;
            if (quotas[t].borrow >= 0) CHECK(u[milli] <= quotas[t].gpu_milli + quotas[t].borrow);
            if (u[milli] > quotas[t].gpu_milli) ++borrowing;
          }
          CHECK(cohort <= nominal);
        }
        // about a third of the running jobs finish
        std::vector<gs::job_id> done;
        for (const auto& r : book.running()) {
          if (gs::uniform_index(g, 3) == 0) done.push_back(r.spec.id);
        }
        for (auto d : done) {
          pipe.release(book, d, now, g);
          std::erase_if(jobs, [&](const gs::job_spec& j) { return j.id == d; });
        }
      }
    }
    CHECK(admitted > 0);
    CHECK(waited > 0);
    MESSAGE("admitted " << admitted << ", deferred or rejected " << waited << ", cycles in which "
                        << "a queue borrowed " << borrowing);
  }
}

}  // namespace policy_admission_laws_test
