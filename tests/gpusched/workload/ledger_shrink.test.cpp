// SPDX-License-Identifier: Apache-2.0
// ledger::transaction::shrink: releasing tasks of a running elastic job, committed or rolled
// back, with the ledger consistent (check_invariants) either way.
#include <doctest/doctest.h>

#include <gpusched/check/invariants.hpp>
#include <gpusched/workload/ledger.hpp>

#include "generators.hpp"
#include "preemption_fixtures.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace workload_ledger_shrink_test {

namespace gs = gpusched;

TEST_SUITE("workload/ledger/shrink") {
  TEST_CASE("a shrink releases the last tasks of a group and commits or rolls back cleanly") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    const auto el = gs::testing::whole_gpu_job(1, 4, 2, 0, 2);  // 4 x 2 GPUs, minimum 2
    REQUIRE(gs::testing::run_on(book, el, {0, 0, 1, 1}, gs::at(gs::seconds(0))));
    CHECK(book.state().total_free_whole_gpus() == 8);
    {
      auto tx = book.begin();
      tx.shrink({gs::job_id{1}, 0, 2});
      CHECK(book.state().free_whole_gpus(gs::node_index{1}) == 8);  // tasks 3 and 4 were there
      CHECK(book.state().free_whole_gpus(gs::node_index{0}) == 4);
      CHECK(tx.shrunk().size() == 1);
      tx.rollback();
    }
    CHECK(book.state().total_free_whole_gpus() == 8);
    CHECK(book.find(gs::job_id{1})->tasks.size() == 4);
    CHECK(gs::check_invariants(book).ok());
    {
      auto tx = book.begin();
      tx.shrink({gs::job_id{1}, 0, 3});
      tx.commit();
    }
    CHECK(book.find(gs::job_id{1})->tasks.size() == 3);
    CHECK(book.state().total_free_whole_gpus() == 10);
    CHECK(gs::check_invariants(book).ok());
    book.release(gs::job_id{1});
    CHECK(book.state().total_free_whole_gpus() == 16);
    CHECK(gs::check_invariants(book).ok());
  }

  TEST_CASE("a shrink below the minimum or of an unknown job is refused and changes nothing") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(1, 8)));
    REQUIRE(gs::testing::run_on(book, gs::testing::whole_gpu_job(1, 4, 2, 0, 2), {0, 0, 0, 0},
                                gs::at(gs::seconds(0))));
    auto tx = book.begin();
    CHECK_THROWS_WITH_AS(tx.shrink({gs::job_id{1}, 0, 1}), doctest::Contains("field 'to' = 1"),
                         gs::invalid_value_error);
    CHECK_THROWS_AS(tx.shrink({gs::job_id{1}, 0, 4}), gs::invalid_value_error);
    CHECK_THROWS_AS(tx.shrink({gs::job_id{1}, 3, 2}), gs::invalid_value_error);
    CHECK_THROWS_AS(tx.shrink({gs::job_id{9}, 0, 2}), gs::invalid_value_error);
    CHECK(book.state().free_whole_gpus(gs::node_index{0}) == 0);
    tx.shrink({gs::job_id{1}, 0, 2});
    CHECK_THROWS_AS(tx.shrink({gs::job_id{1}, 0, 2}), gs::invalid_value_error);
    CHECK_THROWS_AS(tx.evict(gs::job_id{1}), gs::invalid_value_error);
    CHECK(book.state().free_whole_gpus(gs::node_index{0}) == 4);
    tx.rollback();
    CHECK(book.state().free_whole_gpus(gs::node_index{0}) == 0);
    CHECK(gs::check_invariants(book).ok());
  }
}

}  // namespace workload_ledger_shrink_test
