// SPDX-License-Identifier: Apache-2.0
// Property test: random job streams through the default pipeline (and a strict, priority-ordered
// variant) on seeded random clusters; after every cycle the invariant checker must pass and every
// decision must be consistent with the ledger. Seed: GPUSCHED_SEED; cycles: GPUSCHED_CYCLES.
#include <doctest/doctest.h>

#include <cstdlib>
#include <unordered_set>
#include <vector>

#include <gpusched/check/invariants.hpp>
#include <gpusched/pipeline/pipeline.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace pipeline_property_test {

namespace gs = gpusched;

namespace {
template <class Pipeline>
void drive(Pipeline pipe, std::uint64_t seed, long cycles) {
  gs::random_engine g(seed);
  const auto cat = gs::basic_catalog();
  long done = 0;
  unsigned next_id = 1;
  std::size_t admitted = 0, deferred = 0, rejected = 0, preempting = 0;
  while (done < cycles) {
    // a fresh random cluster every 200 cycles
    gs::ledger book(gs::cluster(cat, gs::testing::random_nodes(g, 2 + gs::uniform_index(g, 14))));
    std::vector<gs::job_spec> pending;
    for (int c = 0; c < 200 && done < cycles; ++c, ++done) {
      const auto now = gs::at(gs::seconds(c));
      for (auto k = gs::uniform_index(g, 4); k > 0; --k) {
        pending.push_back(gs::testing::random_job(g, cat, gs::job_id{next_id++}, now));
      }
      // some running jobs finish
      std::vector<gs::job_id> finishing;
      for (const auto& r : book.running()) {
        if (gs::uniform_index(g, 5) == 0) finishing.push_back(r.spec.id);
      }
      for (auto id : finishing) book.release(id);

      const auto res = pipe.schedule(book, pending, now, g);
      REQUIRE(res.decisions.size() == pending.size());
      std::unordered_set<gs::job_id> gone;
      for (const auto& d : res.decisions) {
        const auto* spec = &*std::find_if(pending.begin(), pending.end(),
                                          [&](const gs::job_spec& j) { return j.id == d.job; });
        switch (d.kind) {
          case gs::verdict::admit: {
            ++admitted;
            if (!d.victims.empty()) ++preempting;
            // a gang is placed whole: one allocation per task, each on its group
            CHECK(static_cast<std::int64_t>(d.placement.size()) == spec->task_count());
            const auto* r = book.find(d.job);
            // (a later preemptor in the same cycle may have evicted it again)
            if (r != nullptr) CHECK(r->tasks == d.placement);
            for (auto v : d.victims) {
              CHECK_FALSE(book.is_running(v));
            }
            gone.insert(d.job);
            break;
          }
          case gs::verdict::defer:
            ++deferred;
            CHECK(d.placement.empty());
            CHECK_FALSE(book.is_running(d.job));  // holds nothing
            break;
          case gs::verdict::reject:
            ++rejected;
            CHECK_FALSE(book.is_running(d.job));
            gone.insert(d.job);
            break;
        }
      }
      const auto rep = gs::check_invariants(book);
      REQUIRE_MESSAGE(rep.ok(), "cycle " << done << ": " << rep.to_string());
      std::erase_if(pending, [&](const gs::job_spec& j) { return gone.contains(j.id); });
      if (pending.size() > 40) pending.erase(pending.begin(), pending.begin() + 10);
    }
  }
  MESSAGE("seed " << seed << ", " << cycles << " cycles: " << admitted << " admitted ("
                  << preempting << " by preemption), " << deferred << " deferred, " << rejected
                  << " rejected");
  CHECK(admitted > 0);
  CHECK(deferred > 0);
  CHECK(preempting > 0);
}

long cycles_from_env(long fallback) {
  if (const char* s = std::getenv("GPUSCHED_CYCLES")) return std::atol(s);  // NOLINT
  return fallback;
}
}  // namespace

TEST_SUITE("pipeline/property") {
  TEST_CASE("random job streams never over-commit and never leave a gang half-placed") {
    const auto seed = gs::seed_from_env(20261202);
    INFO("seed = " << seed);
    drive(gs::make_pipeline(), seed, cycles_from_env(10'000));
  }
  TEST_CASE("the same holds for a strict FIFO, priority-ordered pipeline") {
    const auto seed = gs::seed_from_env(7);
    INFO("seed = " << seed);
    drive(gs::make_pipeline(gs::priority_ordering{}, gs::gang_admission{gs::queueing::strict_fifo}),
          seed, cycles_from_env(10'000));
  }
}

}  // namespace pipeline_property_test
