// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <gpusched/check/invariants.hpp>
#include <gpusched/pipeline/pipeline.hpp>
#include <gpusched/workload/ledger.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace cluster_availability_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {
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

TEST_SUITE("cluster/availability") {
  TEST_CASE("a node out of service offers no capacity and is refused by can_apply") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    const gs::node_index n0{0};
    book.set_available(n0, false);
    const auto& c = book.state();
    CHECK_FALSE(c.available(n0));
    CHECK(c.available(gs::node_index{1}));
    CHECK(c.free_whole_gpus(n0) == 0);
    CHECK(c.max_free_share(n0) == gs::milli_gpu{0});
    CHECK(c.total_free_whole_gpus() == 8);
    CHECK(c.unavailable_nodes() == 1);
    CHECK(c.unavailable_gpus() == 8);
    CHECK(c.total_gpus() == 16);  // capacity is unchanged
    CHECK(c.first_with_free_gpus(n0, 1) == gs::node_index{1});
    CHECK(c.first_with_free_cpu(n0, 1_cores) == gs::node_index{1});
    gs::task_allocation a;
    a.node = n0;
    a.cpu = 1_cores;
    a.gpus.push_back({c.first_gpu(n0), gs::whole_gpu_milli, 0, false});
    CHECK_FALSE(c.can_apply(a));
    const auto rep = gs::check_invariants(book);
    CHECK_MESSAGE(rep.ok(), rep.to_string());
  }

  TEST_CASE("a returned node offers its capacity again and the state equals the start") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(3, 4)));
    const auto before_whole = book.state().total_free_whole_gpus();
    book.set_available(gs::node_index{1}, false);
    book.set_available(gs::node_index{1}, false);  // idempotent
    CHECK(book.state().unavailable_nodes() == 1);
    book.set_available(gs::node_index{1}, true);
    CHECK(book.state().total_free_whole_gpus() == before_whole);
    CHECK(book.state().free_whole_gpus(gs::node_index{1}) == 4);
    CHECK(book.state().unavailable_nodes() == 0);
    CHECK(book.state().unavailable_gpus() == 0);
    CHECK(gs::check_invariants(book).ok());
  }

  TEST_CASE("taking out a node that still holds a job throws and changes nothing") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    gs::random_engine rng(1);
    gs::default_pipeline p;
    std::vector<gs::job_spec> pending{spec(1, 1, 8)};
    auto r = p.schedule(book, pending, gs::sim_time{}, rng);
    REQUIRE(r.decisions.at(0).kind == gs::verdict::admit);
    const auto n = r.decisions[0].placement.at(0).node;
    CHECK(book.jobs_on(n) == std::vector<gs::job_id>{gs::job_id{1}});
    CHECK_THROWS_AS(book.set_available(n, false), gs::invalid_value_error);
    CHECK(book.state().available(n));
    CHECK_THROWS_AS(book.set_available(gs::node_index{7}, false), gs::invalid_value_error);
    book.release(gs::job_id{1});
    book.set_available(n, false);
    CHECK(gs::check_invariants(book).ok());
  }

  TEST_CASE("the default pipeline never places on a node out of service") {
    const auto seed = gs::seed_from_env(8101);
    INFO("seed " << seed);
    gs::random_engine g(seed);
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::random_nodes(g, 20)));
    for (gs::node_index n : book.state().nodes()) {
      if (gs::uniform_index(g, 3) == 0) book.set_available(n, false);
    }
    std::vector<gs::job_spec> pending;
    for (unsigned i = 1; i <= 60; ++i) {
      pending.push_back(gs::testing::random_job(g, book.state().catalog(), gs::job_id{i}, {}));
    }
    gs::default_pipeline p;
    const auto r = p.schedule(book, pending, gs::sim_time{}, g);
    std::size_t admitted = 0;
    for (const auto& d : r.decisions) {
      if (d.kind != gs::verdict::admit) continue;
      ++admitted;
      for (const auto& t : d.placement) CHECK(book.state().available(t.node));
    }
    MESSAGE("admitted " << admitted << " of 60");
    const auto rep = gs::check_invariants(book);
    CHECK_MESSAGE(rep.ok(), rep.to_string());
  }
}

}  // namespace cluster_availability_test
