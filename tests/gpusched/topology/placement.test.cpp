// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <memory>
#include <string>
#include <vector>

#include <gpusched/gpusched.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace topology_placement_test {

namespace gs = gpusched;

namespace {

/// `nodes` nodes of `gpus` GPUs bound to node type `handle`.
std::vector<gs::node_spec> typed_nodes(std::size_t nodes, int gpus, std::uint32_t handle,
                                       const char* model = "H100-SXM5-80GB") {
  auto s = gs::testing::uniform_nodes(nodes, gpus, model);
  for (auto& n : s) n.topology = handle;
  return s;
}

gs::job_spec gang(unsigned id, int tasks, int gpus_per_task) {
  gs::job_spec j;
  j.id = gs::job_id{id};
  j.name = "g" + std::to_string(id);
  gs::task_request r;
  r.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus_per_task});
  r.cpu = gs::cpu_millis{1000};
  j.groups.push_back({.name = "worker", .request = r, .count = tasks});
  return j;
}

/// A job spec matching hand-made allocations (no CPU).
gs::job_spec filler(unsigned id, int tasks, int gpus_per_task) {
  auto j = gang(id, tasks, gpus_per_task);
  j.groups[0].request.cpu = gs::cpu_millis{0};
  return j;
}

/// Places `j` with `p` in a transaction and commits it when placed.
gs::placement_outcome run(gs::topology_aware_placement& p, gs::ledger& book, const gs::job_spec& j,
                          std::vector<gs::task_allocation>* out = nullptr) {
  gs::random_engine rng(1);
  gs::first_fit_packing pack;
  auto tx = book.begin();
  const gs::schedule_context ctx(book, gs::sim_time{}, rng);
  const auto o = p.place(ctx, j, gs::packing_ref(pack), tx);
  if (o.placed) {
    if (out != nullptr) out->assign(tx.placed().begin(), tx.placed().end());
    tx.commit(j, gs::sim_time{});
  } else {
    tx.rollback();
  }
  return o;
}

/// Occupies every GPU of the given nodes with a filler job.
void fill(gs::ledger& book, std::initializer_list<unsigned> nodes, unsigned id) {
  auto tx = book.begin();
  const auto& c = book.state();
  for (unsigned n : nodes) {
    gs::task_allocation a;
    a.node = gs::node_index{n};
    for (std::size_t i = 0; i < c.gpus(a.node).size(); ++i) {
      a.gpus.push_back(
          {gs::gpu_index{static_cast<gs::gpu_index::rep>(c.first_gpu(a.node).value() + i)},
           gs::whole_gpu_milli, 0, false});
    }
    REQUIRE(tx.place(a));
  }
  tx.commit(filler(id, static_cast<int>(nodes.size()),
                   static_cast<int>(c.gpus(gs::node_index{*nodes.begin()}).size())),
            gs::sim_time{});
}

}  // namespace

TEST_SUITE("topology/fabric") {
  TEST_CASE("a three-tier fat tree maps nodes to leaf, spine and root levels") {
    const auto f = gs::fabric::fat_tree(100, 10, 5);
    CHECK(f.level_count() == 2);
    CHECK(f.domain_count(1) == 10);
    CHECK(f.domain_count(2) == 2);
    CHECK(f.domain(gs::node_index{37}, 1) == 3);
    CHECK(f.domain(gs::node_index{37}, 2) == 0);
    CHECK(f.common_level(gs::node_index{3}, gs::node_index{3}) == 0);
    CHECK(f.common_level(gs::node_index{3}, gs::node_index{9}) == 1);
    CHECK(f.common_level(gs::node_index{3}, gs::node_index{49}) == 2);
    CHECK(f.common_level(gs::node_index{3}, gs::node_index{50}) == 3);
    CHECK(f.children(1, 2).size() == 10);
    CHECK(f.children(1, 2)[0] == 20);
    CHECK(f.children(2, 1).size() == 5);
    CHECK(f.level_name(3) == "fabric");
  }

  TEST_CASE("explicit memberships must nest and cover every node") {
    CHECK_THROWS_WITH_AS(gs::fabric({{"leaf"}, {"spine"}}, {{0, 0, 1}, {0, 1, 1}}),
                         doctest::Contains("not a tree"), gs::invalid_value_error);
    CHECK_THROWS_AS(gs::fabric({{"leaf"}, {"spine"}}, {{0, 0, 1}, {0, 1}}),
                    gs::invalid_value_error);
    CHECK_THROWS_AS(gs::fabric::tree(4, {{"leaf", 0}}), gs::invalid_value_error);
    const gs::fabric ok({{"leaf"}, {"spine"}}, {{1, 1, 0}, {0, 0, 0}});
    CHECK(ok.children(1, 1).size() == 2);
  }

  TEST_CASE("a topology model checks node handles and GPU counts against the cluster") {
    gs::topology_model m(gs::fabric::fat_tree(2, 2));
    const auto h = m.add_node_type(gs::dgx_h100());
    const gs::cluster ok(gs::basic_catalog(), typed_nodes(2, 8, h));
    CHECK_NOTHROW(m.check(ok));
    const gs::cluster bad_handle(gs::basic_catalog(), typed_nodes(2, 8, 7));
    CHECK_THROWS_WITH_AS(m.check(bad_handle), doctest::Contains("no such node type"),
                         gs::invalid_value_error);
    const gs::cluster bad_count(gs::basic_catalog(), typed_nodes(2, 4, h));
    CHECK_THROWS_AS(m.check(bad_count), gs::invalid_value_error);
    const gs::cluster bad_size(gs::basic_catalog(), typed_nodes(3, 8, h));
    CHECK_THROWS_AS(m.check(bad_size), gs::invalid_value_error);
  }
}

TEST_SUITE("topology/placement") {
  TEST_CASE("a gang that fits one leaf is placed under one leaf switch") {
    auto m = std::make_shared<gs::topology_model>(gs::fabric::fat_tree(16, 4));
    const auto h = m->add_node_type(gs::dgx_h100());
    gs::ledger book(gs::cluster(gs::basic_catalog(), typed_nodes(16, 8, h)));
    fill(book, {0, 5}, 900);  // leaves 0 and 1 each lose a node
    gs::topology_aware_placement p(m);
    std::vector<gs::task_allocation> got;
    REQUIRE(run(p, book, gang(1, 4, 8), &got).placed);
    CHECK(got.size() == 4);
    CHECK(gs::domains_spanned(m->network(), got, 1) == 1);
    CHECK(m->network().domain(got[0].node, 1) == 2);  // the first wholly free leaf
    CHECK(gs::check_invariants(book).ok());
  }

  TEST_CASE("a requeued gang returns to its previous node, else its previous leaf") {
    // 16 nodes in leaves of 4, all free. Job 1 ran on node 13 (leaf 3) before it was requeued.
    auto m = std::make_shared<gs::topology_model>(gs::fabric::fat_tree(16, 4));
    const auto h = m->add_node_type(gs::dgx_h100());
    gs::ledger book(gs::cluster(gs::basic_catalog(), typed_nodes(16, 8, h)));
    auto memory = std::make_shared<gs::placement_memory>();
    const std::vector<gs::node_index> was{gs::node_index{13}};
    memory->remember(gs::job_id{1}, was);
    gs::topology_aware_placement plain(m);
    gs::topology_aware_placement back(m);
    back.prefer_previous(memory);
    std::vector<gs::task_allocation> got;
    {
      gs::random_engine rng(1);
      const gs::schedule_context ctx(book, gs::sim_time{}, rng);
      const auto p0 = plain.plan(ctx, gang(1, 1, 8));
      CHECK(p0.nodes[0].first == gs::node_index{0});  // best fit, lowest id
      CHECK(p0.previous_affinity == -1);
      const auto p1 = back.plan(ctx, gang(1, 1, 8));
      CHECK(p1.nodes[0].first == gs::node_index{13});
      CHECK(p1.previous_affinity == 0);
      // a job with no memory is placed as without the preference
      CHECK(back.plan(ctx, gang(2, 1, 8)).nodes[0].first == gs::node_index{0});
    }
    // node 13 is busy now: the job goes to its old leaf (nodes 12..15), not to node 0
    fill(book, {13}, 900);
    REQUIRE(run(back, book, gang(1, 1, 8), &got).placed);
    CHECK(m->network().domain(got[0].node, 1) == 3);
    CHECK(got[0].node != gs::node_index{13});
    // locality first: a 4-node gang that ran on nodes 13 and 6 needs a whole leaf; leaf 3 is
    // no longer whole, so it takes a whole leaf, the one holding node 6 (leaf 1; plain best fit
    // would take leaf 0)
    const std::vector<gs::node_index> spread{gs::node_index{13}, gs::node_index{6}};
    memory->remember(gs::job_id{3}, spread);
    std::vector<gs::task_allocation> big;
    REQUIRE(run(back, book, gang(3, 4, 8), &big).placed);
    CHECK(gs::domains_spanned(m->network(), big, 1) == 1);
    CHECK(m->network().domain(big[0].node, 1) == 1);
    memory->forget(gs::job_id{3});
    CHECK(memory->nodes(gs::job_id{3}).empty());
    CHECK(gs::check_invariants(book).ok());
  }

  TEST_CASE("a small job fills a partly used leaf and keeps the empty leaf for a big gang") {
    auto m = std::make_shared<gs::topology_model>(gs::fabric::fat_tree(8, 4));
    const auto h = m->add_node_type(gs::dgx_h100());
    gs::ledger book(gs::cluster(gs::basic_catalog(), typed_nodes(8, 8, h)));
    fill(book, {4, 5, 6}, 900);  // leaf 1 has one free node, leaf 0 is empty
    gs::topology_aware_placement p(m);
    std::vector<gs::task_allocation> small;
    const gs::fabric_occupancy before(book.state(), m->network());
    CHECK(before.empty(1, 0));
    CHECK(before.break_cost(gs::node_index{0}) == 8 + 32);  // breaks node 0 and leaf 0
    CHECK(before.break_cost(gs::node_index{7}) == 8);       // leaf 1 is in use already
    REQUIRE(run(p, book, gang(1, 1, 8), &small).placed);
    CHECK(small[0].node == gs::node_index{7});
    // the 4-node gang still finds a whole leaf
    std::vector<gs::task_allocation> big;
    REQUIRE(run(p, book, gang(2, 4, 8), &big).placed);
    CHECK(gs::domains_spanned(m->network(), big, 1) == 1);
    // first-fit packing alone would have broken leaf 0 with the small job
    gs::ledger book2(gs::cluster(gs::basic_catalog(), typed_nodes(8, 8, h)));
    fill(book2, {4, 5, 6}, 900);
    gs::first_fit_packing ff;
    gs::random_engine rng(1);
    const gs::schedule_context ctx(book2, gs::sim_time{}, rng);
    CHECK(ff.pack(ctx, gang(1, 1, 8).groups[0].request)->node == gs::node_index{0});
  }

  TEST_CASE("fragmentation is the share of free GPUs in partly used domains") {
    gs::topology_model m(gs::fabric::fat_tree(4, 2));
    const auto h = m.add_node_type(gs::dgx_h100());
    gs::ledger book(gs::cluster(gs::basic_catalog(), typed_nodes(4, 8, h)));
    CHECK(gs::fabric_occupancy(book.state(), m.network()).fragmentation(1) == doctest::Approx(0.0));
    fill(book, {0}, 900);
    const gs::fabric_occupancy o(book.state(), m.network());
    CHECK(o.free_gpus(1, 0) == 8);
    CHECK(o.fragmentation(1) == doctest::Approx(8.0 / 24.0));
    CHECK(o.fragmentation(0) == doctest::Approx(0.0));
  }

  TEST_CASE("a required level that no domain satisfies is a topology reason, not an exception") {
    auto m = std::make_shared<gs::topology_model>(gs::fabric::fat_tree(16, 4));
    const auto h = m->add_node_type(gs::dgx_h100());
    gs::ledger book(gs::cluster(gs::basic_catalog(), typed_nodes(16, 8, h)));
    gs::topology_aware_placement p(m, {.required_level = 1});
    const auto o = run(p, book, gang(1, 6, 8));
    CHECK_FALSE(o.placed);
    CHECK(o.why.code == gs::reason_code::topology);
    CHECK(o.why.needed == 48);
    CHECK(o.why.available == 32);
    CHECK(gs::describe(o.why).find("no network domain at the required level") != std::string::npos);
    CHECK(book.running().empty());
    // without the constraint the gang spreads over exactly two leaves
    gs::topology_aware_placement soft(m);
    std::vector<gs::task_allocation> got;
    REQUIRE(run(soft, book, gang(2, 6, 8), &got).placed);
    CHECK(gs::domains_spanned(m->network(), got, 1) == 2);
    // a gang larger than the cluster is insufficient
    const auto huge = run(soft, book, gang(3, 20, 8));
    CHECK(huge.why.code == gs::reason_code::insufficient);
  }

  TEST_CASE("slices stay inside one leaf each") {
    auto m = std::make_shared<gs::topology_model>(gs::fabric::fat_tree(16, 4));
    const auto h = m->add_node_type(gs::dgx_h100());
    gs::ledger book(gs::cluster(gs::basic_catalog(), typed_nodes(16, 8, h)));
    fill(book, {0, 4}, 900);  // leaves 0,1: 3 free nodes; leaves 2,3: 4
    gs::topology_aware_placement p(m, {.slice_size = 4, .slice_level = 1});
    std::vector<gs::task_allocation> got;
    REQUIRE(run(p, book, gang(1, 8, 8), &got).placed);
    std::vector<int> per_leaf(4, 0);
    for (const auto& a : got) ++per_leaf[m->network().domain(a.node, 1)];
    for (int v : per_leaf) CHECK(v % 4 == 0);
    // a task count that is not a multiple of the slice is unschedulable
    CHECK(run(p, book, gang(2, 6, 8)).why.code == gs::reason_code::unschedulable);
  }

  TEST_CASE("rail alignment gives every task the same local GPUs") {
    auto m = std::make_shared<gs::topology_model>(gs::fabric::rail_optimized(8, 4, 8));
    const auto h = m->add_node_type(gs::dgx_h100());
    gs::ledger book(gs::cluster(gs::basic_catalog(), typed_nodes(8, 8, h)));
    // node 0 loses GPUs 0-3
    {
      auto tx = book.begin();
      gs::task_allocation a;
      a.node = gs::node_index{0};
      for (unsigned i = 0; i < 4; ++i)
        a.gpus.push_back({gs::gpu_index{i}, gs::whole_gpu_milli, 0, false});
      REQUIRE(tx.place(a));
      tx.commit(filler(900, 1, 4), gs::sim_time{});
    }
    gs::topology_aware_placement p(m, {.rail_aligned = true});
    std::vector<gs::task_allocation> got;
    REQUIRE(run(p, book, gang(1, 4, 4), &got).placed);
    const auto& c = book.state();
    std::vector<unsigned> locals;
    for (const auto& a : got) {
      gs::gpu_mask mk = 0;
      for (const auto& g : a.gpus)
        mk |= gs::gpu_mask{1} << (g.gpu.value() - c.first_gpu(a.node).value());
      locals.push_back(mk);
    }
    for (auto mk : locals) CHECK(mk == locals.front());
    CHECK(std::popcount(locals.front()) == 4);
    CHECK(gs::domains_spanned(m->network(), got, 1) == 1);
    CHECK(gs::check_invariants(book).ok());
  }

  TEST_CASE("inside a DGX-1 a 4-GPU task gets a fully connected NVLink quad") {
    auto m = std::make_shared<gs::topology_model>();
    const auto h = m->add_node_type(gs::dgx1_v100());
    gs::ledger book(gs::cluster(gs::basic_catalog(), typed_nodes(1, 8, h, "V100-SXM2-32GB")));
    // GPU 0 busy: first-fit would take 1,2,3,4; the quad 4-7 is fully connected
    {
      auto tx = book.begin();
      gs::task_allocation a;
      a.node = gs::node_index{0};
      a.gpus.push_back({gs::gpu_index{0}, gs::whole_gpu_milli, 0, false});
      REQUIRE(tx.place(a));
      tx.commit(filler(900, 1, 1), gs::sim_time{});
    }
    gs::topology_aware_placement p(m);
    std::vector<gs::task_allocation> got;
    REQUIRE(run(p, book, gang(1, 1, 4), &got).placed);
    std::vector<unsigned> ids;
    for (const auto& g : got[0].gpus) ids.push_back(g.gpu.value());
    CHECK(ids == std::vector<unsigned>{4, 5, 6, 7});
  }

  TEST_CASE("NVL72 racks: a gang that fits one rack stays in one NVLink domain") {
    auto m = std::make_shared<gs::topology_model>(gs::fabric::nvl72_racks(3, 3));
    const auto h = m->add_node_type(gs::gb200_tray());
    gs::ledger book(gs::cluster(gs::basic_catalog(), typed_nodes(54, 4, h)));
    fill(book, {0, 1}, 900);  // rack 0 partly used
    gs::topology_aware_placement p(m);
    std::vector<gs::task_allocation> got;
    REQUIRE(run(p, book, gang(1, 16, 4), &got).placed);  // 64 GPUs of rack 0's 64 free
    CHECK(gs::domains_spanned(m->network(), got, 1) == 1);
    CHECK(m->network().domain(got[0].node, 1) == 0);  // best fit: the partly used rack
    std::vector<gs::task_allocation> big;
    REQUIRE(run(p, book, gang(2, 18, 4), &big).placed);
    CHECK(gs::domains_spanned(m->network(), big, 1) == 1);
    CHECK(m->network().level(1).nvlink_domain);
  }

  TEST_CASE("a launcher group follows the gang onto its nodes") {
    auto m = std::make_shared<gs::topology_model>(gs::fabric::fat_tree(8, 4));
    const auto h = m->add_node_type(gs::dgx_h100());
    gs::ledger book(gs::cluster(gs::basic_catalog(), typed_nodes(8, 8, h)));
    gs::topology_aware_placement p(m);
    gs::job_spec j = gang(1, 2, 8);
    gs::task_request launcher;
    launcher.cpu = gs::cpu_millis{2000};
    j.groups.insert(j.groups.begin(), {.name = "launcher", .request = launcher, .count = 1});
    std::vector<gs::task_allocation> got;
    REQUIRE(run(p, book, j, &got).placed);
    REQUIRE(got.size() == 3);
    int launchers = 0;
    for (const auto& a : got) {
      if (a.group == 0) {
        ++launchers;
        CHECK(a.node == got[0].node);
      }
    }
    CHECK(launchers == 1);
  }

  TEST_CASE("the registry builds the topology placement by name") {
    const auto p = gs::make_placement_policy("topology");
    CHECK(p.name() == "topology");
    const auto pipe = gs::make_pipeline(gs::pipeline_config{.placement = "topology"});
    (void)pipe;
  }

  TEST_CASE(
      "property: on random fabrics placements are valid, whole, and span no more leaves than a "
      "random placement") {
    const auto seed = gs::seed_from_env(20261206);
    INFO("seed = " << seed);
    MESSAGE("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    int placed = 0;
    for (int round = 0; round < 60; ++round) {
      const auto leaves = 1 + gs::uniform_index(g, 6);
      const auto per_leaf = 1 + static_cast<int>(gs::uniform_index(g, 6));
      const auto nodes = leaves * static_cast<std::size_t>(per_leaf);
      auto m = std::make_shared<gs::topology_model>(gs::fabric::fat_tree(nodes, per_leaf));
      const auto h =
          m->add_node_type(gs::uniform_index(g, 2) == 0 ? gs::dgx1_v100() : gs::dgx_h100());
      gs::ledger book(gs::cluster(cat, typed_nodes(nodes, 8, h)));
      gs::topology_aware_placement p(m);
      // random background load with first-fit
      gs::first_fit_placement ffp;
      gs::first_fit_packing pack;
      for (int k = 0; k < 12; ++k) {
        gs::job_spec bg =
            gang(1000 + static_cast<unsigned>(k), 1, 1 + static_cast<int>(gs::uniform_index(g, 8)));
        auto tx = book.begin();
        const gs::schedule_context ctx(book, gs::sim_time{}, g);
        if (ffp.place(ctx, bg, gs::packing_ref(pack), tx).placed && gs::uniform_index(g, 2) == 0) {
          tx.commit(bg, gs::sim_time{});
        } else {
          tx.rollback();
        }
      }
      for (int k = 0; k < 4; ++k) {
        const int per = 1 << gs::uniform_index(g, 4);
        const int tasks = 1 + static_cast<int>(gs::uniform_index(g, 6));
        const gs::job_spec j = gang(static_cast<unsigned>(round * 10 + k + 1), tasks, per);
        // random valid placement of the same gang, for comparison
        int random_leaves = -1;
        {
          auto tx = book.begin();
          const auto& c = book.state();
          bool ok = true;
          for (int t = 0; t < tasks && ok; ++t) {
            std::vector<gs::node_index> cands;
            for (gs::node_index n : c.nodes()) {
              if (c.free_whole_gpus(n) >= per) cands.push_back(n);
            }
            if (cands.empty()) {
              ok = false;
              break;
            }
            const auto n = cands[gs::uniform_index(g, cands.size())];
            const gs::schedule_context ctx(book, gs::sim_time{}, g);
            auto a = pack.fit(ctx, n, j.groups[0].request);
            ok = a.has_value() && tx.place(*a);
          }
          if (ok) random_leaves = gs::domains_spanned(m->network(), tx.placed(), 1);
          tx.rollback();
        }
        std::vector<gs::task_allocation> got;
        const auto o = run(p, book, j, &got);
        const auto rep = gs::check_invariants(book);
        REQUIRE_MESSAGE(rep.ok(), rep.to_string());
        if (o.placed) {
          ++placed;
          CHECK(static_cast<int>(got.size()) == tasks);
          for (const auto& a : got) CHECK(static_cast<int>(a.gpus.size()) == per);
          if (random_leaves >= 0) CHECK(gs::domains_spanned(m->network(), got, 1) <= random_leaves);
        } else {
          CHECK_FALSE(book.is_running(j.id));
          CHECK(random_leaves < 0);  // if a random placement existed, so does ours
        }
      }
    }
    MESSAGE(placed << " gangs placed");
    CHECK(placed > 0);
  }
}

TEST_SUITE("topology/packing") {
  TEST_CASE(
      "topology packing puts a small task where it breaks no empty leaf and picks NVLink GPUs") {
    auto m = std::make_shared<gs::topology_model>(gs::fabric::fat_tree(8, 4));
    const auto h = m->add_node_type(gs::dgx1_v100());
    gs::ledger book(gs::cluster(gs::basic_catalog(), typed_nodes(8, 8, h, "V100-SXM2-32GB")));
    // node 5 has GPU 0 busy: leaf 1 is in use, leaf 0 empty
    {
      auto tx = book.begin();
      gs::task_allocation a;
      a.node = gs::node_index{5};
      a.gpus.push_back({gs::gpu_index{5 * 8}, gs::whole_gpu_milli, 0, false});
      REQUIRE(tx.place(a));
      tx.commit(filler(900, 1, 1), gs::sim_time{});
    }
    const gs::topology_packing pack(m);
    gs::random_engine rng(1);
    const gs::schedule_context ctx(book, gs::sim_time{}, rng);
    gs::task_request r;
    r.gpu = gs::gpu_demand::whole(gs::gpu_count{4});
    const auto a = pack.pack(ctx, r);
    REQUIRE(a.has_value());
    CHECK(a->node == gs::node_index{5});  // the used node in the used leaf
    std::vector<unsigned> ids;
    for (const auto& g : a->gpus) ids.push_back(g.gpu.value() - 40);
    CHECK(ids == std::vector<unsigned>{4, 5, 6, 7});  // the free fully connected quad
    CHECK(book.state().can_apply(*a));
    CHECK(gs::make_packing_policy("topology").name() == "topology");
  }

  TEST_CASE("property: random jobs through topology packing and placement never over-commit") {
    const auto seed = gs::seed_from_env(20261207);
    INFO("seed = " << seed);
    MESSAGE("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    std::size_t admitted = 0;
    unsigned next = 1;
    for (int round = 0; round < 20; ++round) {
      auto specs = gs::testing::random_nodes(g, 4 + gs::uniform_index(g, 20));
      auto m = std::make_shared<gs::topology_model>(
          gs::fabric::fat_tree(specs.size(), 1 + static_cast<int>(gs::uniform_index(g, 4)), 2));
      const auto h8 = m->add_node_type(gs::dgx_h100());
      for (auto& s : specs) s.topology = s.gpus == gs::gpu_count{8} ? h8 : 0;
      gs::ledger book(gs::cluster(cat, specs));
      m->check(book.state());
      // odd rounds: the registry's model-less variants (fewest nodes, best fit)
      auto pipe =
          round % 2 == 0
              ? gs::any_pipeline(gs::fifo_ordering{}, gs::gang_admission{}, gs::topology_packing(m),
                                 gs::topology_aware_placement(m), gs::priority_preemption{})
              : gs::make_pipeline(
                    gs::pipeline_config{.packing = "topology", .placement = "topology"});
      std::vector<gs::job_spec> pending;
      for (int c = 0; c < 30; ++c) {
        for (auto k = gs::uniform_index(g, 3); k > 0; --k) {
          pending.push_back(gs::testing::random_job(g, cat, gs::job_id{next++}, gs::sim_time{}));
        }
        std::vector<gs::job_id> done;
        for (const auto& r : book.running()) {
          if (gs::uniform_index(g, 4) == 0) done.push_back(r.spec.id);
        }
        for (auto id : done) book.release(id);
        const auto res = pipe.schedule(book, pending, gs::sim_time{}, g);
        for (const auto& d : res.decisions) {
          if (d.kind == gs::verdict::admit) ++admitted;
        }
        const auto rep = gs::check_invariants(book);
        REQUIRE_MESSAGE(rep.ok(), rep.to_string());
        std::erase_if(pending, [&](const gs::job_spec& j) {
          for (const auto& d : res.decisions) {
            if (d.job == j.id && d.kind != gs::verdict::defer) return true;
          }
          return false;
        });
      }
    }
    MESSAGE(admitted << " jobs admitted");
    CHECK(admitted > 0);
  }
}

TEST_SUITE("topology/facts") {
  TEST_CASE("DGX-1 NVLink counts equal the Slurm gres.conf Links rows of hardware-facts 3.3") {
    const gs::node_distances d(gs::dgx1_v100());
    const int links[8][8] = {{-1, 1, 1, 2, 2, 0, 0, 0}, {1, -1, 2, 1, 0, 2, 0, 0},
                             {1, 2, -1, 2, 0, 0, 1, 0}, {2, 1, 2, -1, 0, 0, 0, 1},
                             {2, 0, 0, 0, -1, 1, 1, 2}, {0, 2, 0, 0, 1, -1, 2, 1},
                             {0, 0, 1, 0, 1, 2, -1, 2}, {0, 0, 0, 1, 2, 1, 2, -1}};
    for (int i = 0; i < 8; ++i) {
      for (int j = 0; j < 8; ++j) CHECK((i == j ? -1 : d.nvlinks()(i, j)) == links[i][j]);
    }
  }

  TEST_CASE("an NVL72 rack is one NVLink domain of 18 four-GPU trays") {
    const auto f = gs::fabric::nvl72_racks(2, 1);
    CHECK(f.node_count() == 36);
    CHECK(f.children(1, 0).size() == 18);
    CHECK(f.level(1).nvlink_domain);
    const gs::node_distances tray(gs::gb200_tray());
    CHECK(static_cast<int>(f.children(1, 1).size()) * tray.gpu_count() == 72);
    // NVLink 5: 18 links x 50 GB/s per direction = 900 GB/s per GPU
    CHECK(tray.direct()(0, 1) == doctest::Approx(900.0));
  }

  TEST_CASE("DGX A100 and DGX H100 per-GPU NVLink bandwidth is 300 and 450 GB/s per direction") {
    // hardware-facts 2.2: 600 and 900 GB/s both directions
    const gs::node_distances a(gs::dgx_a100());
    const gs::node_distances h(gs::dgx_h100());
    CHECK(a.direct()(0, 7) * 2 == doctest::Approx(600.0));
    CHECK(h.direct()(0, 7) * 2 == doctest::Approx(900.0));
  }
}

}  // namespace topology_placement_test
