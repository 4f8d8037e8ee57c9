// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <gpusched/check/invariants.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace check_invariants_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {
gs::task_allocation two_gpus(const gs::cluster& c) {
  gs::task_allocation a;
  a.node = gs::node_index{0};
  a.cpu = 1_cores;
  a.memory = 1_gib;
  a.gpus.push_back({c.first_gpu(a.node), gs::whole_gpu_milli, 0, false});
  a.gpus.push_back({gs::gpu_index{c.first_gpu(a.node).value() + 1}, gs::whole_gpu_milli, 0, false});
  return a;
}
gs::job_spec spec(int tasks, int gpus) {
  gs::job_spec j;
  j.id = gs::job_id{1};
  j.groups.push_back({.name = "w",
                      .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                  .cpu = 1_cores,
                                  .memory = 1_gib},
                      .count = tasks});
  return j;
}
}  // namespace

TEST_SUITE("check/invariants") {
  TEST_CASE("a consistent ledger passes") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    auto tx = book.begin();
    REQUIRE(tx.place(two_gpus(book.state())));
    tx.commit(spec(1, 2), {});
    CHECK(gs::check_invariants(book).ok());
  }
  TEST_CASE("a gang recorded with fewer tasks than its groups need is reported as not whole") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    auto tx = book.begin();
    REQUIRE(tx.place(two_gpus(book.state())));
    tx.commit(spec(3, 2), {});  // a caller bug the checker must catch
    const auto rep = gs::check_invariants(book);
    REQUIRE_FALSE(rep.ok());
    CHECK(rep.to_string().find("runs 1 tasks, outside 3..3 (gang not whole)") != std::string::npos);
  }
  TEST_CASE("an allocation that does not match its request is reported") {
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(2, 8)));
    auto tx = book.begin();
    REQUIRE(tx.place(two_gpus(book.state())));
    tx.commit(spec(1, 4), {});
    const auto rep = gs::check_invariants(book);
    REQUIRE_FALSE(rep.ok());
    CHECK(rep.to_string().find("allocation does not match request") != std::string::npos);
  }
  TEST_CASE("a GPU of an excluded model is reported") {
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(1, 8)));
    auto tx = book.begin();
    REQUIRE(tx.place(two_gpus(book.state())));
    auto j = spec(1, 2);
    j.groups[0].request.allowed_models.insert(cat.id("T4"));
    tx.commit(j, {});
    CHECK(gs::check_invariants(book).to_string().find("model the request excludes") !=
          std::string::npos);
  }
}

}  // namespace check_invariants_test
