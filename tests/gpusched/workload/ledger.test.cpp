// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <vector>

#include <gpusched/check/invariants.hpp>
#include <gpusched/workload/ledger.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace workload_ledger_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {
// Everything observable about free capacity, for before/after comparisons.
struct snapshot {
  std::vector<std::int64_t> v;
  explicit snapshot(const gs::cluster& c) {
    for (gs::node_index n : c.nodes()) {
      v.push_back(c.cpu_free(n).value());
      v.push_back(c.memory_free(n).value());
      v.push_back(c.free_whole_gpus(n));
      v.push_back(c.max_free_share(n).value());
      for (const auto& g : c.gpus(n)) {
        v.push_back(g.free.value());
        v.push_back(g.mig_used);
        v.push_back(g.mig_instances);
      }
    }
    v.push_back(c.total_free_whole_gpus());
    v.push_back(c.total_free_cpu().value());
    v.push_back(c.total_free_memory().value());
  }
  friend bool operator==(const snapshot&, const snapshot&) = default;
};

gs::task_allocation whole(const gs::cluster& c, unsigned node,
                          std::initializer_list<unsigned> local) {
  gs::task_allocation a;
  a.node = gs::node_index{node};
  a.cpu = 4_cores;
  a.memory = 16_gib;
  for (auto l : local)
    a.gpus.push_back(
        {gs::gpu_index{c.first_gpu(a.node).value() + l}, gs::whole_gpu_milli, 0, false});
  return a;
}
gs::job_spec spec(unsigned id, int tasks, int gpus) {
  gs::job_spec j;
  j.id = gs::job_id{id};
  j.groups.push_back({.name = "w",
                      .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                  .cpu = 4_cores,
                                  .memory = 16_gib},
                      .count = tasks});
  return j;
}
}  // namespace

TEST_SUITE("workload/ledger") {
  TEST_CASE("a rolled-back transaction leaves the cluster exactly as before") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(3, 8)));
    {
      auto tx = book.begin();
      REQUIRE(tx.place(whole(book.state(), 0, {0, 1})));
      tx.commit(spec(1, 1, 2), gs::at(gs::seconds(1)));
    }
    const snapshot before(book.state());
    {
      auto tx = book.begin();
      CHECK(tx.place(whole(book.state(), 1, {0, 1, 2, 3})));
      tx.evict(gs::job_id{1});
      CHECK(tx.place(whole(book.state(), 0, {0, 1, 2})));  // reuses the evicted GPUs
      CHECK(book.state().free_whole_gpus(gs::node_index{0}) == 5);
      CHECK(tx.placed().size() == 2);
      CHECK(tx.evicted().size() == 1);
    }  // destructor rolls back
    CHECK(snapshot(book.state()) == before);
    CHECK(book.is_running(gs::job_id{1}));
    CHECK(gs::check_invariants(book).ok());
  }

  TEST_CASE("commit makes evictions final and registers the placed tasks as one job") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    auto tx = book.begin();
    REQUIRE(tx.place(whole(book.state(), 0, {0, 1, 2, 3, 4, 5, 6, 7})));
    tx.commit(spec(1, 1, 8), gs::at(gs::seconds(0)));
    auto tx2 = book.begin();
    tx2.evict(gs::job_id{1});
    REQUIRE(tx2.place(whole(book.state(), 0, {0, 1, 2, 3})));
    REQUIRE(tx2.place(whole(book.state(), 1, {0, 1, 2, 3})));
    tx2.commit(spec(2, 2, 4), gs::at(gs::seconds(5)));
    CHECK_FALSE(book.is_running(gs::job_id{1}));
    REQUIRE(book.is_running(gs::job_id{2}));
    CHECK(book.find(gs::job_id{2})->tasks.size() == 2);
    CHECK(book.find(gs::job_id{2})->start == gs::at(gs::seconds(5)));
    CHECK(book.state().total_free_whole_gpus() == 8);
    CHECK(gs::check_invariants(book).ok());
  }

  TEST_CASE("a placement that does not fit is refused without changing anything") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(1, 2)));
    const snapshot before(book.state());
    auto tx = book.begin();
    auto a = whole(book.state(), 0, {0});
    a.cpu = gs::cpu_millis{1'000'000};
    CHECK_FALSE(tx.place(a));
    CHECK(tx.placed().empty());
    tx.rollback();
    CHECK(snapshot(book.state()) == before);
  }

  TEST_CASE("release returns everything and an unknown job is a clear error that changes nothing") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(1, 8)));
    const snapshot empty(book.state());
    auto tx = book.begin();
    REQUIRE(tx.place(whole(book.state(), 0, {2, 5})));
    tx.commit(spec(7, 1, 2), {});
    const snapshot loaded(book.state());
    CHECK_THROWS_WITH_AS(book.release(gs::job_id{8}),
                         "[gpusched.unknown_id] ledger: field 'job' = 8: not running",
                         gs::invalid_value_error);
    CHECK(snapshot(book.state()) == loaded);
    book.release(gs::job_id{7});
    CHECK(snapshot(book.state()) == empty);
    CHECK(book.running().empty());
  }

  TEST_CASE("evicting an unknown job or the same job twice throws, and unwinding rolls back") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(1, 8)));
    {
      auto tx = book.begin();
      REQUIRE(tx.place(whole(book.state(), 0, {0})));
      tx.commit(spec(1, 1, 1), {});
    }
    const snapshot before(book.state());
    CHECK_THROWS_AS(([&] {
                      auto tx = book.begin();
                      tx.evict(gs::job_id{1});
                      tx.evict(gs::job_id{1});
                    }()),
                    gs::invalid_value_error);
    CHECK_THROWS_AS(([&] {
                      auto tx = book.begin();
                      tx.evict(gs::job_id{99});
                    }()),
                    gs::invalid_value_error);
    CHECK(snapshot(book.state()) == before);
    CHECK(book.is_running(gs::job_id{1}));
  }

  TEST_CASE("MIG grants occupy slots and come back on rollback") {
    std::vector<gs::node_spec> nodes = {{.id = gs::node_id{1},
                                         .name = "m",
                                         .gpu_model = "A100-SXM4-40GB",
                                         .gpus = 1_gpus,
                                         .mig_enabled = true,
                                         .cpu = 8_cores,
                                         .memory = 64_gib}};
    gs::ledger book(gs::cluster(gs::basic_catalog(), nodes));
    gs::task_allocation a;
    a.node = gs::node_index{0};
    a.gpus.push_back({gs::gpu_index{0}, 0_mgpu, 0b0000'1111, false});
    auto tx = book.begin();
    REQUIRE(tx.place(a));
    CHECK(book.state().gpu(gs::gpu_index{0}).mig_used == 0b0000'1111);
    auto b = a;
    b.gpus[0].mig_slots = 0b0011'0000;  // overlaps nothing: fine
    CHECK(tx.place(b));
    auto overlap = a;
    overlap.gpus[0].mig_slots = 0b0000'1000;
    CHECK_FALSE(tx.place(overlap));
    tx.rollback();
    CHECK(book.state().gpu(gs::gpu_index{0}).mig_used == 0);
    CHECK(book.state().gpu(gs::gpu_index{0}).mig_instances == 0);
  }
}

TEST_SUITE("workload/ledger") {
  TEST_CASE("rolling back to a savepoint undoes only what came after it, evictions included") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    {
      auto tx = book.begin();
      REQUIRE(tx.place(whole(book.state(), 0, {0, 1, 2, 3})));
      tx.commit(spec(1, 1, 4), {});
    }
    auto tx = book.begin();
    REQUIRE(tx.place(whole(book.state(), 1, {0})));
    const snapshot at_mark(book.state());
    const auto sp = tx.mark();
    tx.evict(gs::job_id{1});
    REQUIRE(tx.place(whole(book.state(), 0, {0, 1, 2, 3, 4, 5})));
    CHECK(tx.is_evicted(gs::job_id{1}));
    tx.rollback_to(sp);
    CHECK(snapshot(book.state()) == at_mark);
    CHECK_FALSE(tx.is_evicted(gs::job_id{1}));
    CHECK(tx.placed().size() == 1);
    tx.commit(spec(2, 1, 1), {});
    CHECK(book.is_running(gs::job_id{1}));
    CHECK(book.is_running(gs::job_id{2}));
    CHECK(gs::check_invariants(book).ok());
  }
}

}  // namespace workload_ledger_test
