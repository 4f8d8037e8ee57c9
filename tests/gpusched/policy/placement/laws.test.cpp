// SPDX-License-Identifier: Apache-2.0
// Laws over every placement policy (policy/concepts.hpp, `placement_policy`): when placed, the
// transaction holds exactly one allocation per task, at full size for non-elastic groups and
// between minimum and count for elastic ones, each with its group index and granting exactly
// the group's request, and nothing was evicted; the committed ledger passes check_invariants.
// When not placed, rolling back restores the ledger exactly (the gang is whole or absent). On
// seeded random clusters with every kind of GPU, nodes out of service and failed GPUs.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include <gpusched/check/invariants.hpp>
#include <gpusched/policy/packing/best_fit.hpp>
#include <gpusched/policy/packing/first_fit.hpp>
#include <gpusched/policy/placement/first_fit.hpp>
#include <gpusched/policy/placement/gang.hpp>
#include <gpusched/policy/placement/topology_aware.hpp>

#include "law_fixtures.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_placement_laws_test {

namespace gs = gpusched;
namespace gt = gpusched::testing;

namespace {

constexpr std::size_t law_nodes_count = 12;  // a multiple of the fat tree's 4 nodes per leaf

struct law_topology {
  std::shared_ptr<gs::topology_model> model =
      std::make_shared<gs::topology_model>(gs::fabric::fat_tree(law_nodes_count, 4));
  std::uint32_t handle = model->add_node_type(gs::dgx_h100());
};

// Each placement policy under test.
struct first_fit_case {
  static gs::first_fit_placement make(const law_topology&) { return {}; }
};
struct gang_case {
  static gs::gang_placement make(const law_topology&) { return {}; }
};
struct topology_case {
  static gs::topology_aware_placement make(const law_topology& t) {
    return gs::topology_aware_placement(t.model);
  }
};

}  // namespace

TEST_SUITE("policy/placement/laws") {
  TEST_CASE_TEMPLATE(
      "every placement policy places a whole gang with exact grants or leaves the ledger as it "
      "was",
      C, first_fit_case, gang_case, topology_case) {
    const auto seed = gs::seed_from_env(17002);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    const law_topology topo;
    auto p = C::make(topo);
    std::size_t placed = 0, unplaced = 0, reduced = 0;
    for (int round = 0; round < 10; ++round) {
      CAPTURE(round);
      gs::ledger book(gs::cluster(cat, gt::law_nodes(g, law_nodes_count, topo.handle)));
      gt::take_some_out(g, book);
      gt::fill_randomly(g, book, cat, 4 + gs::uniform_index(g, 20));
      const gs::first_fit_packing first;
      const gs::best_fit_packing best;
      for (unsigned k = 0; k < 25; ++k) {
        CAPTURE(k);
        const auto j = gt::law_job(g, cat, 1 + k, gs::at(gs::seconds(k)));
        const auto before = gt::ledger_snapshot::of(book);
        const gs::schedule_context ctx(book, gs::at(gs::seconds(round)), g);
        auto tx = book.begin();
        const auto out = gs::uniform_index(g, 2) == 0
                             ? p.place(ctx, j, gs::packing_ref(first), tx)
                             : p.place(ctx, j, gs::packing_ref(best), tx);
        if (!out.placed) {
          ++unplaced;
          CHECK(out.why.code != gs::reason_code::placed);
          tx.rollback();
          CHECK(gt::ledger_snapshot::of(book) == before);  // absent: nothing of it remains
          CHECK_FALSE(book.is_running(j.id));
          continue;
        }
        ++placed;
        CHECK(tx.evicted().empty());  // placement never evicts
        std::vector<std::int32_t> per_group(j.groups.size(), 0);
        for (const auto& a : tx.placed()) {
          REQUIRE(a.group < j.groups.size());
          ++per_group[a.group];
          const auto err = gt::grant_error(tx.state(), j.groups[a.group].request, a);
          CHECK_MESSAGE(err.empty(), err);
        }
        for (std::size_t gi = 0; gi < j.groups.size(); ++gi) {
          const auto& grp = j.groups[gi];
          CAPTURE(gi);
          if (!grp.elastic()) {
            CHECK(per_group[gi] == grp.count);  // full size
          } else {
            CHECK(per_group[gi] >= grp.minimum());
            CHECK(per_group[gi] <= grp.count);
            if (per_group[gi] < grp.count) ++reduced;
          }
        }
        tx.commit(j, ctx.now());
        const auto report = gs::check_invariants(book);
        CHECK_MESSAGE(report.ok(), report.to_string());
        const auto half = gt::half_placed(book);
        CHECK_MESSAGE(half.empty(), half);
        // release it again half of the time, so that later gangs meet fuller and emptier states
        if (gs::uniform_index(g, 2) == 0) {
          book.release(j.id);
          CHECK(gt::ledger_snapshot::of(book) == before);
        }
      }
    }
    CHECK(placed > 0);
    CHECK(unplaced > 0);
    MESSAGE("placed " << placed << ", not placed " << unplaced << ", elastic groups reduced "
                      << reduced);
  }
}

}  // namespace policy_placement_laws_test
