// SPDX-License-Identifier: Apache-2.0
// Time-sliced and MPS GPU sharing: replicas per GPU, the oversubscription limit, the MPS
// per-replica memory limit, reconfiguration of idle GPUs, and invariants under random streams.
#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <gpusched/check/invariants.hpp>
#include <gpusched/pipeline/pipeline.hpp>
#include <gpusched/policy/ordering/share.hpp>
#include <gpusched/policy/preemption/kube_default.hpp>
#include <gpusched/workload/ledger.hpp>
#include <gpusched/workload/quota.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace cluster_sharing_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {
gs::node_spec node(unsigned id, int gpus, gs::gpu_sharing mode = gs::gpu_sharing::exclusive,
                   int replicas = 0, const char* model = "A100-SXM4-40GB") {
  gs::node_spec s;
  s.id = gs::node_id{id};
  s.name = "n" + std::to_string(id);
  s.gpu_model = model;
  s.gpus = gs::gpu_count{gpus};
  s.cpu = 64_cores;
  s.memory = 512_gib;
  s.sharing = mode;
  s.replicas = replicas;
  return s;
}

gs::job_spec job(unsigned id, gs::gpu_demand d, int tasks = 1) {
  gs::job_spec j;
  j.id = gs::job_id{id};
  j.name = "j" + std::to_string(id);
  j.groups.push_back(
      {.name = "w", .request = {.gpu = d, .cpu = 1_cores, .memory = 1_gib}, .count = tasks});
  return j;
}

/// Places `j` with first-fit packing and gang placement; commits on success.
template <class Pack = gs::first_fit_packing>
bool place(gs::ledger& book, const gs::job_spec& j, std::vector<gs::task_allocation>* out = nullptr,
           Pack pack = {}) {
  gs::random_engine g(0);
  const gs::schedule_context ctx(book, gs::sim_time{}, g);
  auto tx = book.begin();
  if (!gs::gang_placement{}.place(ctx, j, gs::packing_ref(pack), tx).placed) return false;
  if (out != nullptr) out->assign(tx.placed().begin(), tx.placed().end());
  tx.commit(j, gs::sim_time{});
  return true;
}

void check_ok(const gs::ledger& book) {
  const auto rep = gs::check_invariants(book);
  CHECK_MESSAGE(rep.ok(), rep.to_string());
}
}  // namespace

TEST_SUITE("cluster/sharing") {
  TEST_CASE("a time-sliced GPU takes N replicas, then refuses, and release returns them") {
    const std::vector<gs::node_spec> nodes{node(1, 1, gs::gpu_sharing::time_slicing, 4)};
    gs::ledger book(gs::cluster(gs::basic_catalog(), nodes));
    const auto& c = book.state();
    CHECK(c.total_replicas() == 4);
    CHECK(c.free_replicas(gs::node_index{0}) == 4);
    CHECK(c.free_whole_gpus(gs::node_index{0}) == 0);
    CHECK(c.max_free_share(gs::node_index{0}) == gs::milli_gpu{0});
    for (unsigned i = 1; i <= 4; ++i) {
      std::vector<gs::task_allocation> got;
      REQUIRE(place(book, job(i, gs::gpu_demand::replica()), &got));
      REQUIRE(got.size() == 1);
      CHECK(got[0].gpus.size() == 1);
      CHECK(got[0].gpus[0].replica);
      CHECK(got[0].gpus[0].milli == gs::milli_gpu{0});
      CHECK(c.free_replicas(gs::node_index{0}) == static_cast<int>(4 - i));
      check_ok(book);
    }
    CHECK_FALSE(place(book, job(5, gs::gpu_demand::replica())));
    CHECK(c.total_free_replicas() == 0);
    // A fifth grant by hand is refused too: no over-commit.
    gs::task_allocation extra;
    extra.node = gs::node_index{0};
    extra.gpus.push_back({c.first_gpu(gs::node_index{0}), 0_mgpu, 0, false, true});
    CHECK_FALSE(c.can_apply(extra));
    book.release(gs::job_id{2});
    CHECK(c.free_replicas(gs::node_index{0}) == 1);
    CHECK(c.total_free_replicas() == 1);
    CHECK(place(book, job(6, gs::gpu_demand::replica())));
    check_ok(book);
  }

  TEST_CASE("whole and share demands never land on a replicated GPU, replicas never elsewhere") {
    const std::vector<gs::node_spec> nodes{node(1, 2, gs::gpu_sharing::mps, 2), node(2, 1)};
    gs::ledger book(gs::cluster(gs::basic_catalog(), nodes));
    const auto& c = book.state();
    std::vector<gs::task_allocation> got;
    REQUIRE(place(book, job(1, gs::gpu_demand::fraction(300_mgpu)), &got));
    CHECK(got[0].node == gs::node_index{1});
    CHECK_FALSE(place(book, job(2, gs::gpu_demand::whole(1_gpus))));  // only GPU is shared now
    CHECK(place(book, job(3, gs::gpu_demand::fraction(700_mgpu))));
    CHECK_FALSE(place(book, job(4, gs::gpu_demand::fraction(1_mgpu))));
    // Hand-made grants of the wrong kind are refused.
    gs::task_allocation share_on_replica;
    share_on_replica.node = gs::node_index{0};
    share_on_replica.gpus.push_back({c.first_gpu(gs::node_index{0}), 100_mgpu, 0, false});
    CHECK_FALSE(c.can_apply(share_on_replica));
    gs::task_allocation replica_on_exclusive;
    replica_on_exclusive.node = gs::node_index{1};
    replica_on_exclusive.gpus.push_back({c.first_gpu(gs::node_index{1}), 0_mgpu, 0, false, true});
    CHECK_FALSE(c.can_apply(replica_on_exclusive));
    for (unsigned i = 10; i < 14; ++i) {
      REQUIRE(place(book, job(i, gs::gpu_demand::replica()), &got));
      CHECK(got[0].node == gs::node_index{0});
    }
    CHECK_FALSE(place(book, job(20, gs::gpu_demand::replica())));
    check_ok(book);
  }

  TEST_CASE("MPS limits each replica to memory / N, time-slicing to the device memory") {
    // A100-40GB: 40960 MiB. MPS x4: 10240 MiB per replica.
    const std::vector<gs::node_spec> nodes{node(1, 1, gs::gpu_sharing::mps, 4),
                                           node(2, 1, gs::gpu_sharing::time_slicing, 4)};
    gs::ledger book(gs::cluster(gs::basic_catalog(), nodes));
    const auto& c = book.state();
    const auto mem = c.catalog()[c.model(gs::node_index{0})].memory;
    CHECK(c.gpus(gs::node_index{0})[0].replica_memory == gs::memory_mib{mem.value() / 4});
    CHECK(c.gpus(gs::node_index{1})[0].replica_memory == gs::memory_mib{0});
    std::vector<gs::task_allocation> got;
    REQUIRE(place(book, job(1, gs::gpu_demand::replica(gs::memory_mib{mem.value() / 4})), &got));
    CHECK(got[0].node == gs::node_index{0});
    // One MiB more than the MPS limit goes to the time-sliced GPU.
    REQUIRE(
        place(book, job(2, gs::gpu_demand::replica(gs::memory_mib{mem.value() / 4 + 1})), &got));
    CHECK(got[0].node == gs::node_index{1});
    // More than the device: nowhere.
    CHECK_FALSE(place(book, job(3, gs::gpu_demand::replica(gs::memory_mib{mem.value() + 1}))));
    check_ok(book);
    // Validation names the field.
    gs::task_request bad{
        .gpu = gs::gpu_demand::replica(gs::memory_mib{-1}), .cpu = 1_cores, .memory = 1_gib};
    CHECK_THROWS_WITH_AS(gs::validate(bad, c.catalog(), "job 9"),
                         doctest::Contains("gpu.gpu_memory"), gs::invalid_value_error);
  }

  TEST_CASE("reconfiguring a busy GPU is refused with a clear error and no state change") {
    const std::vector<gs::node_spec> nodes{node(1, 2)};
    gs::ledger book(gs::cluster(gs::basic_catalog(), nodes));
    const auto& c = book.state();
    const gs::node_index n0{0};
    book.configure_sharing(n0, 1, gs::gpu_sharing::time_slicing, 3);
    CHECK(c.total_replicas() == 3);
    CHECK(c.free_whole_gpus(n0) == 1);
    CHECK(c.free_replicas(n0) == 3);
    check_ok(book);
    REQUIRE(place(book, job(1, gs::gpu_demand::replica())));
    REQUIRE(place(book, job(2, gs::gpu_demand::fraction(500_mgpu))));
    const auto before = c.gpus(n0)[1];
    CHECK_THROWS_WITH_AS(book.configure_sharing(n0, 1, gs::gpu_sharing::exclusive, 0),
                         doctest::Contains("busy (1 of 3 replicas in use)"),
                         gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(book.configure_sharing(n0, 0, gs::gpu_sharing::mps, 2),
                         doctest::Contains("busy (500 milli-GPU in use)"), gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(book.configure_sharing(n0, 2, gs::gpu_sharing::mps, 2),
                         doctest::Contains("gpu"), gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(book.configure_sharing(n0, 1, gs::gpu_sharing::mps, 0),
                         doctest::Contains("replicas"), gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(book.configure_sharing(n0, 1, gs::gpu_sharing::exclusive, 2),
                         doctest::Contains("replicas"), gs::invalid_value_error);
    CHECK(c.gpus(n0)[1].sharing == before.sharing);
    CHECK(c.gpus(n0)[1].replicas == before.replicas);
    CHECK(c.gpus(n0)[1].replicas_used == before.replicas_used);
    CHECK(c.total_replicas() == 3);
    check_ok(book);
    // Once idle, it can be switched back.
    book.release(gs::job_id{1});
    book.configure_sharing(n0, 1, gs::gpu_sharing::exclusive, 0);
    CHECK(c.total_replicas() == 0);
    CHECK(c.free_replicas(n0) == 0);
    CHECK(c.free_whole_gpus(n0) == 1);
    check_ok(book);
  }

  TEST_CASE("node specs with a bad sharing mode are refused naming the field") {
    auto build = [](gs::node_spec s) {
      const std::vector<gs::node_spec> v{std::move(s)};
      return gs::cluster(gs::basic_catalog(), v);
    };
    CHECK_THROWS_WITH_AS(build(node(1, 1, gs::gpu_sharing::mps, 0)), doctest::Contains("replicas"),
                         gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(build(node(1, 1, gs::gpu_sharing::time_slicing, 256)),
                         doctest::Contains("replicas"), gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(build(node(1, 0, gs::gpu_sharing::time_slicing, 2)),
                         doctest::Contains("sharing"), gs::invalid_value_error);
    auto mig = node(1, 1, gs::gpu_sharing::mps, 2);
    mig.mig_enabled = true;
    CHECK_THROWS_WITH_AS(build(mig), doctest::Contains("MIG"), gs::invalid_value_error);
    CHECK_THROWS_WITH_AS(build(node(1, 1, gs::gpu_sharing::exclusive, 2)),
                         doctest::Contains("replicas"), gs::invalid_value_error);
  }

  TEST_CASE("best fit packs replicas onto the fullest GPU, worst fit spreads them") {
    const std::vector<gs::node_spec> nodes{node(1, 2, gs::gpu_sharing::time_slicing, 4)};
    {
      gs::ledger book(gs::cluster(gs::basic_catalog(), nodes));
      std::vector<gs::task_allocation> got;
      REQUIRE(place(book, job(1, gs::gpu_demand::replica()), &got, gs::best_fit_packing{}));
      REQUIRE(place(book, job(2, gs::gpu_demand::replica()), &got, gs::best_fit_packing{}));
      CHECK(book.state().gpus(gs::node_index{0})[0].replicas_used == 2);
      CHECK(book.state().gpus(gs::node_index{0})[1].replicas_used == 0);
    }
    {
      gs::ledger book(gs::cluster(gs::basic_catalog(), nodes));
      std::vector<gs::task_allocation> got;
      REQUIRE(place(book, job(1, gs::gpu_demand::replica()), &got, gs::worst_fit_packing{}));
      REQUIRE(place(book, job(2, gs::gpu_demand::replica()), &got, gs::worst_fit_packing{}));
      CHECK(book.state().gpus(gs::node_index{0})[0].replicas_used == 1);
      CHECK(book.state().gpus(gs::node_index{0})[1].replicas_used == 1);
      check_ok(book);
    }
  }

  TEST_CASE("kube-default preemption sees replicas freed by victims, within the MPS limit") {
    const std::vector<gs::node_spec> nodes{node(1, 1, gs::gpu_sharing::mps, 2)};
    gs::ledger book(gs::cluster(gs::basic_catalog(), nodes));
    const auto& c = book.state();
    REQUIRE(place(book, job(1, gs::gpu_demand::replica())));
    REQUIRE(place(book, job(2, gs::gpu_demand::replica())));
    const gs::node_index n0{0};
    const gs::task_request small{
        .gpu = gs::gpu_demand::replica(4_gib), .cpu = 1_cores, .memory = 1_gib};
    const gs::task_request big{
        .gpu = gs::gpu_demand::replica(30_gib), .cpu = 1_cores, .memory = 1_gib};
    const gs::task_allocation* none[] = {nullptr};
    CHECK_FALSE(gs::node_fits_after(
        c, n0, small, std::span<const gs::task_allocation* const>(none, std::size_t{0})));
    const gs::task_allocation* victim[] = {&book.find(gs::job_id{1})->tasks[0]};
    CHECK(gs::node_fits_after(c, n0, small, victim));
    // 30 GiB is over the MPS limit (40 GiB / 2): freeing a replica does not help.
    CHECK_FALSE(gs::node_fits_after(c, n0, big, victim));
  }

  TEST_CASE("a gang of replicas is placed whole or not at all") {
    const std::vector<gs::node_spec> nodes{node(1, 1, gs::gpu_sharing::time_slicing, 3),
                                           node(2, 1, gs::gpu_sharing::mps, 2)};
    gs::ledger book(gs::cluster(gs::basic_catalog(), nodes));
    CHECK_FALSE(place(book, job(1, gs::gpu_demand::replica(), 6)));
    CHECK(book.state().total_free_replicas() == 5);
    CHECK(book.running().empty());
    REQUIRE(place(book, job(2, gs::gpu_demand::replica(), 5)));
    CHECK(book.state().total_free_replicas() == 0);
    check_ok(book);
  }

  TEST_CASE("quotas and DRF shares charge a held replica 1000 / N milli-GPU of its model") {
    // n1: one GPU time-sliced 4 ways; n2: one GPU under MPS, 2 replicas; n3: 2 exclusive GPUs
    const std::vector<gs::node_spec> nodes{node(1, 1, gs::gpu_sharing::time_slicing, 4),
                                           node(2, 1, gs::gpu_sharing::mps, 2), node(3, 2)};
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, nodes));
    const gs::resource_basis basis(book.state());
    const int d = basis.gpu_dimension(cat.id("A100-SXM4-40GB"));
    REQUIRE(d >= 0);
    CHECK(basis.capacity()[d] == doctest::Approx(4000.0));
    // a pending replica is charged 1000 / (most replicas of the model) = 250: the least it
    // can cost once placed
    CHECK(basis.demand(job(1, gs::gpu_demand::replica()))[d] == doctest::Approx(250.0));
    // five replicas: four fill n1 (250 each), the fifth lands on n2 (500)
    gs::quota_vector usage(3 + cat.size(), 0);
    gs::share_vector shares = basis.zero();
    for (unsigned i = 1; i <= 5; ++i) {
      std::vector<gs::task_allocation> got;
      REQUIRE(place(book, job(i, gs::gpu_demand::replica()), &got));
      gs::quota_vector one(3 + cat.size(), 0);
      gs::add_usage(book.state(), got, one);
      CHECK(one[2] == (i <= 4 ? 250 : 500));
      gs::add_usage(book.state(), got, usage);
    }
    CHECK(usage[2] == 1500);
    for (const auto& r : book.running()) basis.add_running(shares, book.state(), r);
    CHECK(shares[d] == doctest::Approx(1500.0));
    CHECK(basis.dominant_share(shares) == doctest::Approx(1500.0 / 4000.0));
    // removing charges exactly what adding did
    for (const auto& r : book.running()) {
      gs::add_usage(book.state(), r.tasks, usage, -1);
      basis.add_running(shares, book.state(), r, -1.0);
    }
    CHECK(usage[2] == 0);
    CHECK(shares[d] == doctest::Approx(0.0));
    // a cluster without shared GPUs charges a pending replica nothing (it cannot be placed)
    const std::vector<gs::node_spec> plain{node(1, 2)};
    const gs::resource_basis none(gs::cluster(cat, plain));
    const int pd = none.gpu_dimension(cat.id("A100-SXM4-40GB"));
    REQUIRE(pd >= 0);
    CHECK(none.demand(job(1, gs::gpu_demand::replica()))[pd] == doctest::Approx(0.0));
  }

  TEST_CASE("property: random mixed-mode clusters under random place/release streams") {
    // Invariants (no replica over-commit, caches equal recomputed use) after every step; a
    // refused gang leaves nothing behind; refused reconfigurations change nothing.
    std::int64_t replicas_granted = 0, refused_reconfigs = 0;
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
      CAPTURE(seed);
      gs::random_engine g(seed);
      auto nodes = gs::testing::random_nodes(g, 2 + gs::uniform_index(g, 10));
      for (auto& s : nodes) {
        if (s.gpus == 0_gpus || s.mig_enabled) continue;
        const auto k = gs::uniform_index(g, 3);
        if (k == 0) continue;
        s.sharing = k == 1 ? gs::gpu_sharing::time_slicing : gs::gpu_sharing::mps;
        s.replicas = static_cast<int>(1 + gs::uniform_index(g, 8));
      }
      gs::ledger book(gs::cluster(gs::basic_catalog(), nodes));
      const auto& c = book.state();
      const auto total_replicas = c.total_replicas();
      std::vector<gs::job_id> running;
      unsigned next = 1;
      for (int step = 0; step < 150; ++step) {
        const auto op = gs::uniform_index(g, 10);
        if (op < 2 && !running.empty()) {
          const auto k = gs::uniform_index(g, running.size());
          book.release(running[k]);
          running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
        } else if (op == 2) {
          // Reconfigure a random GPU; refused (with no change) when busy or in MIG mode.
          const gs::node_index n{
              static_cast<gs::node_index::rep>(gs::uniform_index(g, c.node_count()))};
          if (c.gpus(n).empty()) continue;
          const int gi = static_cast<int>(gs::uniform_index(g, c.gpus(n).size()));
          const auto before = c.gpus(n)[static_cast<std::size_t>(gi)];
          const auto mode = static_cast<gs::gpu_sharing>(gs::uniform_index(g, 3));
          const int reps = mode == gs::gpu_sharing::exclusive
                               ? 0
                               : 1 + static_cast<int>(gs::uniform_index(g, 6));
          const bool idle =
              before.replicated() ? before.replicas_used == 0 : before.free == gs::whole_gpu_milli;
          const bool allowed = idle && !before.mig_enabled;
          bool threw = false;
          try {
            book.configure_sharing(n, gi, mode, reps);
          } catch (const gs::invalid_value_error&) {
            threw = true;
          }
          CHECK(threw == !allowed);
          if (threw) {
            ++refused_reconfigs;
            const auto after = c.gpus(n)[static_cast<std::size_t>(gi)];
            CHECK(after.sharing == before.sharing);
            CHECK(after.replicas == before.replicas);
            CHECK(after.free == before.free);
          }
        } else {
          auto j = gs::testing::random_job(g, c.catalog(), gs::job_id{next++}, gs::sim_time{});
          for (auto& grp : j.groups) {
            if (gs::uniform_index(g, 2) == 0) {
              grp.request.gpu = gs::gpu_demand::replica(
                  gs::memory_mib{static_cast<std::int64_t>(gs::uniform_index(g, 3)) * 8192});
            }
          }
          const auto free_before = c.total_free_replicas();
          std::vector<gs::task_allocation> got;
          // First, best or worst fit, at random: every packer keeps the laws.
          const auto packer = gs::uniform_index(g, 3);
          const bool ok = packer == 0   ? place(book, j, &got)
                          : packer == 1 ? place(book, j, &got, gs::best_fit_packing{})
                                        : place(book, j, &got, gs::worst_fit_packing{});
          if (ok) {
            running.push_back(j.id);
            std::int64_t reps = 0;
            for (const auto& t : got) {
              for (const auto& gr : t.gpus) reps += gr.replica ? 1 : 0;
              // A replica request gets exactly one replica grant on a replicated GPU.
              const auto& req = j.groups[t.group].request;
              if (req.gpu.kind == gs::gpu_demand_kind::replica) {
                CHECK(t.gpus.size() == 1);
                CHECK(c.gpu(t.gpus[0].gpu).replicated());
              } else {
                for (const auto& gr : t.gpus) CHECK_FALSE(c.gpu(gr.gpu).replicated());
              }
            }
            CHECK(c.total_free_replicas() == free_before - reps);
            replicas_granted += reps;
          } else {
            CHECK_FALSE(book.is_running(j.id));  // nothing of a failed gang remains
            CHECK(c.total_free_replicas() == free_before);
          }
        }
        const auto rep = gs::check_invariants(book);
        REQUIRE_MESSAGE(rep.ok(), rep.to_string());
        CHECK(c.total_free_replicas() <= c.total_replicas());
      }
      while (!running.empty()) {
        book.release(running.back());
        running.pop_back();
      }
      CHECK(c.total_free_replicas() == c.total_replicas());
      CHECK(gs::check_invariants(book).ok());
      (void)total_replicas;
    }
    // The streams exercised what they are meant to.
    CHECK(replicas_granted > 100);
    CHECK(refused_reconfigs > 10);
  }
}

}  // namespace cluster_sharing_test
