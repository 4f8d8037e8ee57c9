// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <vector>

#include <gpusched/check/invariants.hpp>
#include <gpusched/pipeline/pipeline.hpp>
#include <gpusched/policy/placement/gang.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_gang_placement_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

/// Brute force: every task -> every node -> every way to take its GPUs (all subsets of idle
/// GPUs for whole demands, every GPU for shares, every GPU and start slot for MIG), in job
/// order, with no symmetry breaking. True when some complete assignment exists.
bool brute_force(gs::ledger::transaction& tx, const std::vector<const gs::task_request*>& tasks,
                 std::size_t i, std::uint64_t& steps) {
  if (i == tasks.size()) return true;
  const auto& r = *tasks[i];
  const auto& c = tx.state();
  for (gs::node_index n : c.nodes()) {
    const auto gpus = c.gpus(n);
    const auto base = c.first_gpu(n).value();
    std::vector<gs::task_allocation> options;
    gs::task_allocation a;
    a.node = n;
    a.cpu = r.cpu;
    a.memory = r.memory;
    switch (r.gpu.kind) {
      case gs::gpu_demand_kind::none:
        options.push_back(a);
        break;
      case gs::gpu_demand_kind::whole: {
        const auto k = static_cast<unsigned>(r.gpu.count.value());
        for (unsigned mask = 0; mask < (1u << gpus.size()); ++mask) {
          if (static_cast<unsigned>(std::popcount(mask)) != k) continue;
          auto b = a;
          for (unsigned g = 0; g < gpus.size(); ++g) {
            if ((mask >> g) & 1u)
              b.gpus.push_back({gs::gpu_index{base + g}, gs::whole_gpu_milli, 0, false});
          }
          options.push_back(b);
        }
        break;
      }
      case gs::gpu_demand_kind::share:
        for (unsigned g = 0; g < gpus.size(); ++g) {
          auto b = a;
          b.gpus.push_back({gs::gpu_index{base + g}, r.gpu.share, 0, false});
          options.push_back(b);
        }
        break;
      case gs::gpu_demand_kind::mig:
        for (unsigned g = 0; g < gpus.size(); ++g) {
          if (!gpus[g].mig_enabled) continue;
          const auto* p = c.catalog()[gpus[g].model].mig.find(r.gpu.mig_compute, r.gpu.mig_memory);
          if (p == nullptr) continue;
          for (unsigned s = 0; s < 8; ++s) {
            if (((p->placement_starts >> s) & 1u) == 0) continue;
            auto b = a;
            b.gpus.push_back({gs::gpu_index{base + g}, 0_mgpu, p->slots_at(s), p->media_extension});
            options.push_back(b);
          }
        }
        break;
      case gs::gpu_demand_kind::replica:
        for (unsigned g = 0; g < gpus.size(); ++g) {
          auto b = a;
          b.gpus.push_back({gs::gpu_index{base + g}, 0_mgpu, 0, false, true});
          options.push_back(b);
        }
        break;
    }
    for (auto& o : options) {
      ++steps;
      if (!r.allowed_models.admits(c.model(n)) && r.gpu.kind != gs::gpu_demand_kind::none) continue;
      const auto sp = tx.mark();
      if (!tx.place(o)) continue;
      if (brute_force(tx, tasks, i + 1, steps)) return true;
      tx.rollback_to(sp);
    }
  }
  return false;
}

gs::job_spec gang_of(gs::random_engine& g, const gs::gpu_catalog& cat, unsigned id, int max_tasks) {
  gs::job_spec j = gs::testing::random_job(g, cat, gs::job_id{id}, {}, max_tasks);
  std::int64_t n = 0;
  for (auto& grp : j.groups) {
    if (n + grp.count > max_tasks)
      grp.count = static_cast<std::int32_t>(std::max<std::int64_t>(1, max_tasks - n));
    n += grp.count;
  }
  return j;
}

// Loads a cluster with random single tasks so that fits are borderline.
void load(gs::ledger& book, gs::random_engine& g, const gs::gpu_catalog& cat, int jobs) {
  auto pipe = gs::make_pipeline(gs::no_preemption{});
  std::vector<gs::job_spec> fill;
  for (int k = 0; k < jobs; ++k) {
    auto j = gs::testing::random_job(g, cat, gs::job_id{static_cast<unsigned>(10'000 + k)}, {}, 1);
    j.groups.resize(1);
    fill.push_back(j);
  }
  pipe.schedule(book, fill, {}, g);
}

}  // namespace

TEST_SUITE("policy/placement/gang") {
  TEST_CASE("a heterogeneous gang (CPU launcher + 8-GPU workers) is placed whole") {
    gs::random_engine g(1);
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(4, 8)));
    gs::job_spec j;
    j.id = gs::job_id{1};
    j.groups = {
        {.name = "launcher",
         .request = {.gpu = gs::gpu_demand::none(), .cpu = 2_cores, .memory = 4_gib},
         .count = 1},
        {.name = "worker",
         .request = {.gpu = gs::gpu_demand::whole(8_gpus), .cpu = 16_cores, .memory = 64_gib},
         .count = 4}};
    const gs::schedule_context ctx(book, {}, g);
    auto tx = book.begin();
    const auto out = gs::gang_placement{}.place(ctx, j, gs::first_fit_packing{}, tx);
    REQUIRE(out.placed);
    CHECK(tx.placed().size() == 5);
    tx.commit(j, {});
    CHECK(gs::check_invariants(book).ok());
  }

  TEST_CASE("the exact search finds a placement exactly when brute force does") {
    const auto seed = gs::seed_from_env(99);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    int feasible = 0, infeasible = 0, heuristic_misses = 0;
    for (int round = 0; round < 300; ++round) {
      // small enough for brute force: up to 5 nodes of up to 4 GPUs, up to 6 tasks
      std::vector<gs::node_spec> nodes;
      for (auto& s : gs::testing::random_nodes(g, 1 + gs::uniform_index(g, 5))) {
        s.gpus = std::min(s.gpus, 4_gpus);
        nodes.push_back(s);
      }
      gs::ledger book(gs::cluster(cat, nodes));
      load(book, g, cat, static_cast<int>(gs::uniform_index(g, 6)));
      const auto j = gang_of(g, cat, 1, 6);
      std::vector<const gs::task_request*> tasks;
      for (const auto& grp : j.groups) {
        for (int t = 0; t < grp.count; ++t) tasks.push_back(&grp.request);
      }
      bool brute = false;
      {
        auto tx = book.begin();
        std::uint64_t steps = 0;
        brute = brute_force(tx, tasks, 0, steps);
      }
      const gs::schedule_context ctx(book, {}, g);
      bool exact = false, heuristic = false;
      {
        auto tx = book.begin();
        exact = gs::gang_placement{}.place(ctx, j, gs::first_fit_packing{}, tx).placed;
        if (exact) {
          CHECK(static_cast<std::int64_t>(tx.placed().size()) == j.task_count());
        } else {
          CHECK(tx.placed().empty());  // nothing held on failure
        }
      }
      {
        auto tx = book.begin();
        heuristic = gs::first_fit_placement{}.place(ctx, j, gs::first_fit_packing{}, tx).placed;
      }
      CHECK(exact == brute);
      if (heuristic) CHECK(exact);
      heuristic_misses += (exact && !heuristic) ? 1 : 0;
      (brute ? feasible : infeasible) += 1;
    }
    MESSAGE("brute force cross-check: " << feasible << " feasible, " << infeasible
                                        << " infeasible; plain first fit missed "
                                        << heuristic_misses << " of the feasible ones");
    CHECK(feasible > 30);
    CHECK(infeasible > 30);
  }

  TEST_CASE(
      "gangs of up to 8 tasks on 16 nodes: the heuristics' miss rate against the exact "
      "search") {
    const auto seed = gs::seed_from_env(5);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    int feasible = 0, greedy_found = 0, first_fit_found = 0;
    for (int round = 0; round < 400; ++round) {
      gs::ledger book(gs::cluster(cat, gs::testing::random_nodes(g, 16)));
      load(book, g, cat, 20 + static_cast<int>(gs::uniform_index(g, 20)));
      const auto j = gang_of(g, cat, 1, 8);
      const gs::schedule_context ctx(book, {}, g);
      gs::gang_placement exact_only;
      gs::gang_placement heuristic_only;
      heuristic_only.max_exact_tasks = 0;  // never search
      bool e = false, h = false, f = false;
      {
        auto tx = book.begin();
        e = exact_only.place(ctx, j, gs::first_fit_packing{}, tx).placed;
      }
      {
        auto tx = book.begin();
        h = heuristic_only.place(ctx, j, gs::first_fit_packing{}, tx).placed;
      }
      {
        auto tx = book.begin();
        f = gs::first_fit_placement{}.place(ctx, j, gs::first_fit_packing{}, tx).placed;
      }
      if (h || f) CHECK(e);
      feasible += e ? 1 : 0;
      greedy_found += h ? 1 : 0;
      first_fit_found += f ? 1 : 0;
    }
    MESSAGE("feasible gangs: " << feasible << "; two-order greedy found " << greedy_found
                               << ", plain first fit found " << first_fit_found);
    CHECK(feasible > 0);
  }

  TEST_CASE("an elastic gang is admitted at the largest size that fits, at least its minimum") {
    gs::random_engine g(1);
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(5, 1)));
    gs::job_spec j;
    j.id = gs::job_id{1};
    j.groups = {{.name = "ps",
                 .request = {.gpu = gs::gpu_demand::none(), .cpu = 1_cores, .memory = 1_gib},
                 .count = 1},
                {.name = "worker",
                 .request = {.gpu = gs::gpu_demand::whole(1_gpus), .cpu = 1_cores, .memory = 1_gib},
                 .count = 8,
                 .min_count = 2}};
    const gs::schedule_context ctx(book, {}, g);
    {
      auto tx = book.begin();
      REQUIRE(gs::gang_placement{}.place(ctx, j, gs::first_fit_packing{}, tx).placed);
      CHECK(tx.placed().size() == 6);  // 1 ps + 5 workers: one per GPU
      tx.commit(j, {});
    }
    CHECK(book.find(gs::job_id{1})->tasks_in_group(1) == 5);
    CHECK(gs::check_invariants(book).ok());
    // the minimum does not fit any more: nothing is placed
    auto again = j;
    again.id = gs::job_id{2};
    auto tx = book.begin();
    const auto out = gs::gang_placement{}.place(ctx, again, gs::first_fit_packing{}, tx);
    CHECK_FALSE(out.placed);
    CHECK(tx.placed().empty());
  }

  TEST_CASE("reduced sizes spread a reduction over the elastic groups by their slack") {
    gs::job_spec j;
    j.groups = {{.name = "a", .request = {}, .count = 10, .min_count = 2},
                {.name = "b", .request = {}, .count = 5, .min_count = 5},
                {.name = "c", .request = {}, .count = 6, .min_count = 2}};  // slack 8, 0, 4
    CHECK(gs::detail::reduced_sizes(j, 0) == std::vector<std::int32_t>{10, 5, 6});
    CHECK(gs::detail::reduced_sizes(j, 12) == std::vector<std::int32_t>{2, 5, 2});
    CHECK(gs::detail::reduced_sizes(j, 6) == std::vector<std::int32_t>{6, 5, 4});
    const auto r = gs::detail::reduced_sizes(j, 5);  // 5*8/12 = 3.33, 5*4/12 = 1.67: remainders decide
    CHECK(r[0] + r[1] + r[2] == 21 - 5);
    CHECK(r == std::vector<std::int32_t>{7, 5, 4});
  }

  TEST_CASE("a failed gang reports the best attempt and what was short") {
    gs::random_engine g(1);
    gs::ledger book(gs::cluster(gs::basic_catalog(), gs::testing::uniform_nodes(3, 8)));
    gs::job_spec j;
    j.id = gs::job_id{1};
    j.groups = {{.name = "worker",
                 .request = {.gpu = gs::gpu_demand::whole(6_gpus), .cpu = 1_cores, .memory = 1_gib},
                 .count = 4}};
    const gs::schedule_context ctx(book, {}, g);
    auto tx = book.begin();
    const auto out = gs::gang_placement{}.place(ctx, j, gs::first_fit_packing{}, tx);
    CHECK_FALSE(out.placed);
    // 24 GPUs needed and 24 free, but 6-GPU tasks fit once per 8-GPU node: fragmentation
    CHECK(out.why.code == gs::reason_code::no_fit);
    CHECK(out.why.tasks_placed == 3);
    CHECK(out.why.needed == 6);
    CHECK(out.why.available == 2);
    CHECK(gs::describe(out.why, &j) ==
          "group 'worker': no node can host a task needing 6 GPUs (the most free on one node: 2); "
          "the best attempt placed 3 tasks");
  }
}

}  // namespace policy_gang_placement_test
