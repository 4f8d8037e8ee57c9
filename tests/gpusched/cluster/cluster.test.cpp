// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <string>
#include <type_traits>
#include <vector>

#include <gpusched/cluster/cluster.hpp>
#include <gpusched/detail/max_tree.hpp>
#include <gpusched/workload/ledger.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace cluster_cluster_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {
std::string message_of(auto&& f) {
  try {
    f();
  } catch (const gs::error& e) {
    return e.what();
  }
  return "";
}
gs::node_spec node(unsigned id, std::string name, std::string model, int gpus) {
  return {.id = gs::node_id{id},
          .name = std::move(name),
          .gpu_model = std::move(model),
          .gpus = gs::gpu_count{gpus},
          .cpu = 32_cores,
          .memory = 256_gib};
}
}  // namespace

TEST_SUITE("cluster/cluster") {
  TEST_CASE("a node_spec is written by name, and its GPU count is a gpu_count, not an int") {
    static_assert(std::is_same_v<decltype(gs::node_spec::gpus), gs::gpu_count>);
    static_assert(!std::is_convertible_v<int, gs::gpu_count>);  // `.gpus = 8` does not compile
    const gs::node_spec s{.id = gs::node_id{1},
                          .name = "dgx",
                          .gpu_model = "H100-SXM5-80GB",
                          .gpus = 8_gpus,
                          .cpu = 112_cores,
                          .memory = 2048_gib};
    CHECK_FALSE(s.mig_enabled);  // the omitted fields take their defaults
    CHECK(s.labels.empty());
    CHECK(s.topology == 0);
    CHECK(s.sharing == gs::gpu_sharing::exclusive);
    CHECK(s.replicas == 0);
    const gs::cluster c(gs::basic_catalog(), std::vector<gs::node_spec>{s});
    CHECK(c.gpus(gs::node_index{0}).size() == 8);
    CHECK(c.name(gs::node_index{0}) == "dgx");
  }
  TEST_CASE("construction lays GPUs out contiguously per node with everything free") {
    const std::vector<gs::node_spec> nodes = {node(10, "a", "T4", 4), node(11, "b", "", 0),
                                              node(12, "c", "H100-SXM5-80GB", 8)};
    const gs::cluster c(gs::basic_catalog(), nodes);
    CHECK(c.node_count() == 3);
    CHECK(c.gpu_count() == 12);
    CHECK(c.total_gpus() == 12);
    CHECK(c.total_free_whole_gpus() == 12);
    const auto n = *c.find(gs::node_id{12});
    CHECK(c.name(n) == "c");
    CHECK(c.first_gpu(n).value() == 4);
    CHECK(c.gpus(n).size() == 8);
    CHECK(c.free_whole_gpus(n) == 8);
    CHECK(c.max_node_gpus() == 8);
    CHECK(c.max_node_gpus(c.catalog().id("T4")) == 4);
    CHECK_FALSE(c.model(*c.find(gs::node_id{11})).valid());
    CHECK(c.total_free_cpu() == 96_cores);
  }

  TEST_CASE("invalid nodes are rejected naming the node, the field and the value") {
    const auto cat = gs::basic_catalog();
    auto build = [&](std::vector<gs::node_spec> v) {
      return message_of([&] { gs::cluster c(cat, v); });
    };
    CHECK(build({node(1, "a", "T4", 1), node(1, "b", "T4", 1)}).find("field 'id' = 1: duplicate") !=
          std::string::npos);
    CHECK(build({node(1, "a", "T4", 1), node(2, "a", "T4", 1)}).find("field 'name' = a") !=
          std::string::npos);
    CHECK(build({node(1, "a", "RTX-0", 1)}).find("node 1 'a': field 'gpu_model' = RTX-0") !=
          std::string::npos);
    CHECK(build({node(1, "a", "T4", 17)}).find("field 'gpus' = 17") != std::string::npos);
    CHECK(build({node(1, "a", "T4", -1)}).find("field 'gpus' = -1") != std::string::npos);
    auto neg = node(1, "a", "T4", 1);
    neg.cpu = gs::cpu_millis{-1};
    CHECK(build({neg}).find("field 'cpu' = -1") != std::string::npos);
    neg = node(1, "a", "T4", 1);
    neg.memory = gs::memory_mib{-2};
    CHECK(build({neg}).find("field 'memory' = -2") != std::string::npos);
    auto mig = node(1, "a", "T4", 1);
    mig.mig_enabled = true;
    CHECK(build({mig}).find("has no MIG") != std::string::npos);
    CHECK(build({node(gs::node_id::invalid().value(), "a", "T4", 1)}).find("field 'id'") !=
          std::string::npos);
  }

  TEST_CASE("can_apply refuses grants off the node, twice on one GPU, or beyond free amounts") {
    const std::vector<gs::node_spec> nodes = {node(1, "a", "T4", 2), node(2, "b", "T4", 2)};
    const gs::cluster c(gs::basic_catalog(), nodes);
    gs::task_allocation a;
    a.node = gs::node_index{0};
    a.cpu = 1_cores;
    a.gpus.push_back({gs::gpu_index{0}, gs::whole_gpu_milli, 0, false});
    CHECK(c.can_apply(a));
    a.gpus.push_back({gs::gpu_index{0}, 1_mgpu, 0, false});
    CHECK_FALSE(c.can_apply(a));  // same GPU twice
    a.gpus.pop_back();
    a.gpus.push_back({gs::gpu_index{2}, gs::whole_gpu_milli, 0, false});
    CHECK_FALSE(c.can_apply(a));  // GPU of node b
    a.gpus.pop_back();
    a.cpu = 33_cores;
    CHECK_FALSE(c.can_apply(a));
    a.cpu = 1_cores;
    a.gpus[0].mig_slots = 1;
    CHECK_FALSE(c.can_apply(a));  // MIG slots on a non-MIG GPU
  }

  TEST_CASE("index queries agree with a linear scan on random clusters under random load") {
    const auto seed = gs::seed_from_env(20261202);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    for (int round = 0; round < 20; ++round) {
      gs::ledger book(gs::cluster(cat, gs::testing::random_nodes(g, 1 + gs::uniform_index(g, 40))));
      // load it with random single-task jobs placed by hand on random nodes
      for (unsigned j = 1; j < 60; ++j) {
        const auto& c = book.state();
        const gs::node_index n{
            static_cast<gs::node_index::rep>(gs::uniform_index(g, c.node_count()))};
        gs::task_allocation a;
        a.node = n;
        a.cpu = gs::cpu_millis{static_cast<std::int64_t>(gs::uniform_index(g, 4000))};
        const auto gpus = c.gpus(n);
        for (std::size_t k = 0; k < gpus.size(); ++k) {
          if (!gpus[k].mig_enabled && gpus[k].free > 0_mgpu && gs::uniform_index(g, 3) == 0) {
            const int m = 1 + static_cast<int>(gs::uniform_index(
                                  g, static_cast<std::uint64_t>(gpus[k].free.value())));
            a.gpus.push_back({gs::gpu_index{c.first_gpu(n).value() + static_cast<unsigned>(k)},
                              gs::milli_gpu{m}, 0, false});
          }
        }
        gs::job_spec spec;
        spec.id = gs::job_id{j};
        auto tx = book.begin();
        if (tx.place(a)) tx.commit(spec, {});
      }
      const auto& c = book.state();
      for (int q = 0; q < 50; ++q) {
        const gs::node_index from{
            static_cast<gs::node_index::rep>(gs::uniform_index(g, c.node_count() + 1))};
        const int k = static_cast<int>(gs::uniform_index(g, 9));
        const gs::milli_gpu m{static_cast<int>(gs::uniform_index(g, 1001))};
        const gs::cpu_millis cpu{static_cast<std::int64_t>(gs::uniform_index(g, 64000))};
        std::optional<gs::node_index> want_k, want_m, want_c;
        for (auto n = from.value(); n < c.node_count(); ++n) {
          const gs::node_index ni{n};
          if (!want_k && c.free_whole_gpus(ni) >= k) want_k = ni;
          if (!want_m && c.max_free_share(ni) >= m) want_m = ni;
          if (!want_c && c.cpu_free(ni) >= cpu) want_c = ni;
        }
        CHECK(c.first_with_free_gpus(from, k) == want_k);
        CHECK(c.first_with_free_share(from, m) == want_m);
        CHECK(c.first_with_free_cpu(from, cpu) == want_c);
      }
    }
  }
}

TEST_SUITE("detail/max_tree") {
  TEST_CASE("find_first returns the leftmost position at or after from with key at least k") {
    gs::detail::max_tree t(5, 0);
    t.set(1, 3);
    t.set(3, 7);
    CHECK(t.max() == 7);
    CHECK(t.find_first(0, 1) == 1);
    CHECK(t.find_first(2, 1) == 3);
    CHECK(t.find_first(0, 8) == gs::detail::max_tree::npos);
    CHECK(t.find_first(4, 0) == 4);
    CHECK(t.find_first(5, 0) == gs::detail::max_tree::npos);
    t.set(3, 0);
    CHECK(t.max() == 3);
    CHECK(t.find_first(2, 1) == gs::detail::max_tree::npos);
  }
}

}  // namespace cluster_cluster_test
