// SPDX-License-Identifier: Apache-2.0
// ledger::transaction::grow: adding tasks to a running elastic job, committed or rolled back,
// with the ledger consistent (check_invariants) either way, and bad input refused with nothing
// changed.
#include <doctest/doctest.h>

#include <gpusched/check/invariants.hpp>
#include <gpusched/workload/ledger.hpp>

#include "generators.hpp"
#include "preemption_fixtures.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace workload_ledger_grow_test {

namespace gs = gpusched;

namespace {
/// A task of `j`'s group `g` on node `n`, as first fit packs it (nullopt: does not fit).
std::optional<gs::task_allocation> task_on(const gs::ledger& book, const gs::job_spec& j,
                                           std::uint16_t g, unsigned n) {
  gs::random_engine rng(0);
  const gs::schedule_context ctx(book, gs::at(gs::seconds(0)), rng);
  auto a = gs::first_fit_packing{}.fit(ctx, gs::node_index{n}, j.groups[g].request);
  if (a) a->group = g;
  return a;
}
}  // namespace

TEST_SUITE("workload/ledger/grow") {
  TEST_CASE("a grow adds tasks to an elastic group and commits or rolls back cleanly") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    const auto el = gs::testing::whole_gpu_job(1, 4, 2, 0, 1);  // up to 4 x 2 GPUs, minimum 1
    // it runs at 2 of its 4 tasks, both on node 0
    {
      auto tx = book.begin();
      REQUIRE(tx.place(*task_on(book, el, 0, 0)));
      REQUIRE(tx.place(*task_on(book, el, 0, 0)));
      tx.commit(el, gs::at(gs::seconds(0)));
    }
    REQUIRE(book.find(gs::job_id{1})->tasks_in_group(0) == 2);
    REQUIRE(gs::check_invariants(book).ok());
    const auto v0 = book.version();
    {
      auto tx = book.begin();
      CHECK(tx.grow(gs::job_id{1}, *task_on(book, el, 0, 1)));
      CHECK(book.state().free_whole_gpus(gs::node_index{1}) == 6);
      CHECK(tx.grown().size() == 1);
      tx.rollback();
    }
    CHECK(book.version() == v0);
    CHECK(book.state().free_whole_gpus(gs::node_index{1}) == 8);
    CHECK(book.find(gs::job_id{1})->tasks.size() == 2);
    CHECK(gs::check_invariants(book).ok());
    {
      auto tx = book.begin();
      CHECK(tx.grow(gs::job_id{1}, *task_on(book, el, 0, 0)));
      CHECK(tx.grow(gs::job_id{1}, *task_on(book, el, 0, 1)));
      tx.commit();
    }
    CHECK(book.version() == v0 + 1);
    const auto* r = book.find(gs::job_id{1});
    REQUIRE(r != nullptr);
    CHECK(r->tasks_in_group(0) == 4);
    CHECK(r->tasks[2].node == gs::node_index{0});  // appended after the tasks it held
    CHECK(r->tasks[3].node == gs::node_index{1});
    CHECK(book.state().total_free_whole_gpus() == 8);
    CHECK(gs::check_invariants(book).ok());
    // a later shrink releases the grown tasks first
    {
      auto tx = book.begin();
      tx.shrink({gs::job_id{1}, 0, 3});
      tx.commit();
    }
    CHECK(book.state().free_whole_gpus(gs::node_index{1}) == 8);
    CHECK(gs::check_invariants(book).ok());
    book.release(gs::job_id{1});
    CHECK(book.state().total_free_whole_gpus() == 16);
    CHECK(gs::check_invariants(book).ok());
  }

  TEST_CASE("a grow that does not fit returns false and changes nothing") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(1, 8)));
    auto el = gs::testing::whole_gpu_job(1, 4, 2, 0, 1);
    const auto filler = gs::testing::whole_gpu_job(2, 3, 2);
    {
      auto tx = book.begin();
      REQUIRE(tx.place(*task_on(book, el, 0, 0)));
      tx.commit(el, gs::at(gs::seconds(0)));
    }
    REQUIRE(gs::testing::run_on(book, filler, {0, 0, 0}, gs::at(gs::seconds(0))));
    REQUIRE(book.state().free_whole_gpus(gs::node_index{0}) == 0);
    // a task shaped for the node, taken while it was free: now it no longer fits
    gs::task_allocation a = book.find(gs::job_id{1})->tasks[0];
    auto tx = book.begin();
    CHECK_FALSE(tx.grow(gs::job_id{1}, a));
    CHECK(tx.grown().empty());
    tx.commit();
    CHECK(book.find(gs::job_id{1})->tasks.size() == 1);
    CHECK(gs::check_invariants(book).ok());
  }

  TEST_CASE("a bad grow is refused naming the job and field, and changes nothing") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    const auto el = gs::testing::whole_gpu_job(1, 3, 2, 0, 1);  // up to 3 x 2 GPUs
    const auto rigid = gs::testing::whole_gpu_job(2, 1, 2);     // not elastic
    {
      auto tx = book.begin();
      REQUIRE(tx.place(*task_on(book, el, 0, 0)));
      REQUIRE(tx.place(*task_on(book, el, 0, 0)));
      tx.commit(el, gs::at(gs::seconds(0)));
    }
    REQUIRE(gs::testing::run_on(book, rigid, {0}, gs::at(gs::seconds(0))));
    const auto free0 = book.state().total_free_whole_gpus();
    const auto v0 = book.version();
    const auto ok_task = *task_on(book, el, 0, 1);
    {
      auto tx = book.begin();
      CHECK_THROWS_WITH_AS(tx.grow(gs::job_id{9}, ok_task), doctest::Contains("field 'grow' = 9"),
                           gs::invalid_value_error);
      auto bad_group = ok_task;
      bad_group.group = 3;
      CHECK_THROWS_WITH_AS(tx.grow(gs::job_id{1}, bad_group),
                           doctest::Contains("job 1: field 'group' = 3"), gs::invalid_value_error);
      CHECK_THROWS_WITH_AS(tx.grow(gs::job_id{2}, ok_task),
                           doctest::Contains("job 2 group 'w': field 'group' = 0: not elastic"),
                           gs::invalid_value_error);
      auto wrong_shape = ok_task;
      wrong_shape.gpus.pop_back();  // one GPU where the group asks two
      CHECK_THROWS_WITH_AS(tx.grow(gs::job_id{1}, wrong_shape),
                           doctest::Contains("field 'allocation'"), gs::invalid_value_error);
      CHECK(book.state().total_free_whole_gpus() == free0);
      CHECK(tx.grow(gs::job_id{1}, ok_task));  // the third task: at the maximum now
      CHECK_THROWS_WITH_AS(tx.grow(gs::job_id{1}, *task_on(book, el, 0, 1)),
                           doctest::Contains("field 'tasks' = 4: above the group's maximum"),
                           gs::invalid_value_error);
      CHECK_THROWS_AS(tx.evict(gs::job_id{1}), gs::invalid_value_error);
      CHECK_THROWS_AS(tx.shrink({gs::job_id{1}, 0, 1}), gs::invalid_value_error);
      CHECK(tx.grown().size() == 1);
      CHECK(book.state().total_free_whole_gpus() == free0 - 2);
      tx.rollback();
    }
    {
      auto tx = book.begin();
      tx.evict(gs::job_id{1});
      CHECK_THROWS_WITH_AS(tx.grow(gs::job_id{1}, ok_task), doctest::Contains("not running"),
                           gs::invalid_value_error);
      tx.rollback();
    }
    {
      auto tx = book.begin();
      tx.shrink({gs::job_id{1}, 0, 1});
      CHECK_THROWS_WITH_AS(tx.grow(gs::job_id{1}, ok_task),
                           doctest::Contains("shrunk in this transaction"),
                           gs::invalid_value_error);
      tx.rollback();
    }
    CHECK(book.version() == v0);
    CHECK(book.state().total_free_whole_gpus() == free0);
    CHECK(book.find(gs::job_id{1})->tasks.size() == 2);
    CHECK(gs::check_invariants(book).ok());
  }

  TEST_CASE("rolling back to a savepoint undoes only the grows after it") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(1, 8)));
    const auto el = gs::testing::whole_gpu_job(1, 4, 2, 0, 1);
    {
      auto tx = book.begin();
      REQUIRE(tx.place(*task_on(book, el, 0, 0)));
      tx.commit(el, gs::at(gs::seconds(0)));
    }
    auto tx = book.begin();
    REQUIRE(tx.grow(gs::job_id{1}, *task_on(book, el, 0, 0)));
    const auto sp = tx.mark();
    CHECK(sp.grown == 1);
    REQUIRE(tx.grow(gs::job_id{1}, *task_on(book, el, 0, 0)));
    CHECK(book.state().free_whole_gpus(gs::node_index{0}) == 2);
    tx.rollback_to(sp);
    CHECK(book.state().free_whole_gpus(gs::node_index{0}) == 4);
    tx.commit();
    CHECK(book.find(gs::job_id{1})->tasks.size() == 2);
    CHECK(gs::check_invariants(book).ok());
  }
}

}  // namespace workload_ledger_grow_test
