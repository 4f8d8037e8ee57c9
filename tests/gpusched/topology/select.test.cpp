// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <numeric>
#include <vector>

#include <gpusched/gpusched.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace topology_select_test {

namespace gs = gpusched;

namespace {

gs::gpu_mask mask_of(std::initializer_list<int> l) {
  gs::gpu_mask m = 0;
  for (int i : l) m |= gs::gpu_mask{1} << i;
  return m;
}

/// Brute force: best ring bottleneck by trying every ordering.
std::int64_t brute_ring(const gs::node_distances& d, gs::gpu_mask m) {
  std::vector<int> v;
  for (int i = 0; i < d.gpu_count(); ++i) {
    if ((m >> i) & 1u) v.push_back(i);
  }
  if (v.size() < 2) return 0;
  if (v.size() == 2) return d.direct_mbps(v[0], v[1]);
  std::int64_t best = 0;
  do {
    std::int64_t b = d.direct_mbps(v.back(), v.front());
    for (std::size_t i = 0; i + 1 < v.size(); ++i) b = std::min(b, d.direct_mbps(v[i], v[i + 1]));
    best = std::max(best, b);
  } while (std::next_permutation(v.begin() + 1, v.end()));
  return best;
}

std::int64_t brute_pairs(const gs::node_distances& d, gs::gpu_mask m) {
  std::int64_t s = 0;
  for (int i = 0; i < d.gpu_count(); ++i) {
    for (int j = i + 1; j < d.gpu_count(); ++j) {
      if (((m >> i) & 1u) && ((m >> j) & 1u)) s += d.direct_mbps(i, j);
    }
  }
  return s;
}

}  // namespace

TEST_SUITE("topology/select") {
  TEST_CASE("DGX-1 V100 has the hybrid cube-mesh edge list of hardware-facts 2.3") {
    const gs::node_topology t = gs::dgx1_v100();
    const gs::node_distances d(t);
    REQUIRE(d.gpu_count() == 8);
    const int nv2[8][2] = {{0, 3}, {0, 4}, {1, 2}, {1, 5}, {2, 3}, {4, 7}, {5, 6}, {6, 7}};
    const int nv1[8][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 6}, {3, 7}, {4, 5}, {4, 6}, {5, 7}};
    int total_links = 0;
    int edges = 0;
    for (int i = 0; i < 8; ++i) {
      int per_gpu = 0;
      for (int j = 0; j < 8; ++j) {
        per_gpu += d.nvlinks()(i, j);
        if (j > i) {
          total_links += d.nvlinks()(i, j);
          edges += d.nvlinks()(i, j) > 0 ? 1 : 0;
        }
      }
      CHECK(per_gpu == 6);  // every GPU uses all 6 NVLink 2 links
    }
    CHECK(edges == 16);
    CHECK(total_links == 24);
    for (const auto& e : nv2) CHECK(d.nvlinks()(e[0], e[1]) == 2);
    for (const auto& e : nv1) CHECK(d.nvlinks()(e[0], e[1]) == 1);
    // the real topo -m matrix (DLPERF): SYS for pairs without NVLink
    CHECK(d.level(0, 5) == gs::p2p_level::sys);
    CHECK(d.level(3, 4) == gs::p2p_level::sys);
    CHECK(d.level(0, 3) == gs::p2p_level::nvlink);
    // PCIe hierarchy (GPUALLOC model): PIX {0,1} {2,3}; PHB same socket; SYS across
    CHECK(t.pcie_level(0, 1) == gs::p2p_level::pix);
    CHECK(t.pcie_level(6, 7) == gs::p2p_level::pix);
    CHECK(t.pcie_level(0, 2) == gs::p2p_level::phb);
    CHECK(t.pcie_level(0, 4) == gs::p2p_level::sys);
    for (int i = 0; i < 4; ++i) CHECK(d.numa(i) == 0);
    for (int i = 4; i < 8; ++i) CHECK(d.numa(i) == 1);
    // NIC mlx5 on the switch of GPUs 2,3 is PIX to them (DLPERF column mlx5_0 ~ our NIC 1)
    CHECK(d.nic(2) == d.nic(3));
    CHECK(d.nic(0) != d.nic(2));
  }

  TEST_CASE("DGX-1 derived facts hold: NV2 ring, the two NVLink quads, the 5-link triangles") {
    const gs::node_distances d(gs::dgx1_v100());
    // the NV2 edges form the Hamiltonian ring 0-3-2-1-5-6-7-4-0: ring bottleneck 2 links
    CHECK(d.ring_mbps(d.all()) == 50000);
    // the only fully connected quads
    int full_quads = 0;
    for (gs::gpu_mask m = 0; m < 256; ++m) {
      if (std::popcount(m) != 4) continue;
      bool full = true;
      int links = 0;
      for (int i = 0; i < 8; ++i) {
        for (int j = i + 1; j < 8; ++j) {
          if (((m >> i) & 1u) && ((m >> j) & 1u)) {
            full = full && d.nvlinks()(i, j) > 0;
            links += d.nvlinks()(i, j);
          }
        }
      }
      if (full) {
        ++full_quads;
        CHECK(links == 9);
        CHECK((m == mask_of({0, 1, 2, 3}) || m == mask_of({4, 5, 6, 7})));
      }
      CHECK(d.ring_mbps(m) <= 25000);  // no 4-GPU NV2-only ring
    }
    CHECK(full_quads == 2);
  }

  TEST_CASE("the ring and pair tables equal brute force on every DGX-1 mask") {
    const gs::node_distances d(gs::dgx1_v100());
    for (gs::gpu_mask m = 0; m < 256; ++m) {
      CHECK(d.ring_mbps(m) == brute_ring(d, m));
      CHECK(d.pair_mbps(m) == brute_pairs(d, m));
    }
  }

  TEST_CASE("select_gpus is optimal on every DGX-1 availability mask and every k") {
    const gs::node_distances d(gs::dgx1_v100());
    int checked = 0;
    for (gs::gpu_mask free = 0; free < 256; ++free) {
      for (int k = 1; k <= 8; ++k) {
        const auto s = gs::select_gpus(d, free, k);
        if (std::popcount(free) < k) {
          CHECK(s.status == gs::selection_status::not_enough_free);
          continue;
        }
        REQUIRE(s.ok());
        CHECK(std::popcount(s.gpus) == k);
        CHECK((s.gpus & ~free) == 0);
        // brute force over all subsets with independently computed keys
        for (gs::gpu_mask c = 0; c < 256; ++c) {
          if (std::popcount(c) != k || (c & ~free) != 0) continue;
          const gs::gpu_set_score sc{brute_ring(d, c), brute_pairs(d, c), d.numa_span(c),
                                     brute_pairs(d, free & ~c)};
          CHECK_FALSE(gs::better(sc, s.score));
          if (sc == s.score) CHECK(s.gpus <= c);
        }
        ++checked;
      }
    }
    MESSAGE("checked " << checked << " (mask, k) cases");
  }

  TEST_CASE("select_gpus on an empty DGX-1 picks a fully connected quad for 4 and an NV2 pair") {
    const gs::node_distances d(gs::dgx1_v100());
    const auto four = gs::select_gpus(d, d.all(), 4);
    CHECK((four.gpus == mask_of({0, 1, 2, 3}) || four.gpus == mask_of({4, 5, 6, 7})));
    const auto two = gs::select_gpus(d, d.all(), 2);
    CHECK(d.nvlinks()(std::countr_zero(two.gpus), 31 - std::countl_zero(two.gpus)) == 2);
    CHECK(two.score.numa_nodes == 1);
    const auto three = gs::select_gpus(d, d.all(), 3);
    int links = 0;
    for (int i = 0; i < 8; ++i) {
      for (int j = i + 1; j < 8; ++j) {
        if (((three.gpus >> i) & 1u) && ((three.gpus >> j) & 1u)) links += d.nvlinks()(i, j);
      }
    }
    CHECK(links == 5);  // a fully connected triangle with 5 links
  }

  TEST_CASE("select_gpus honours required GPUs and reports bad input as a status") {
    const gs::node_distances d(gs::dgx1_v100());
    const auto s = gs::select_gpus(d, d.all(), 2, mask_of({4}));
    REQUIRE(s.ok());
    CHECK((s.gpus & mask_of({4})) != 0);
    CHECK(s.gpus == mask_of({4, 7}));  // 4-7 is NV2 on the same socket
    CHECK(gs::select_gpus(d, d.all(), 9).status == gs::selection_status::bad_count);
    CHECK(gs::select_gpus(d, d.all(), 0).status == gs::selection_status::bad_count);
    CHECK(gs::select_gpus(d, mask_of({1, 2, 9}), 2).status == gs::selection_status::unknown_gpu);
    CHECK(gs::select_gpus(d, mask_of({1, 2, 3}), 2, mask_of({0})).status ==
          gs::selection_status::required_busy);
    CHECK(gs::select_gpus(d, d.all(), 1, mask_of({0, 1})).status ==
          gs::selection_status::too_many_required);
    CHECK(gs::select_gpus(d, mask_of({1}), 2).status == gs::selection_status::not_enough_free);
  }

  TEST_CASE("besteffort reproduces the go-gpuallocator public DGX-1 Volta test cases") {
    const gs::node_distances d(gs::dgx1_v100());
    const auto run = [&](std::vector<int> avail, std::vector<int> req, int size) {
      auto r = gs::besteffort_select(d, avail, req, size).gpus;
      std::sort(r.begin(), r.end());
      return r;
    };
    const std::vector<int> all{0, 1, 2, 3, 4, 5, 6, 7};
    CHECK(run(all, {}, 2) == std::vector<int>{0, 3});
    CHECK(run(all, {}, 4) == std::vector<int>{0, 1, 2, 3});
    CHECK(run(all, {}, 8) == all);
    CHECK(run({0, 2, 4, 5}, {}, 2) == std::vector<int>{4, 5});
    CHECK(run({0, 4, 5, 6}, {}, 2) == std::vector<int>{5, 6});
    CHECK(run({0, 1, 3}, {}, 2) == std::vector<int>{0, 3});
    CHECK(run({0, 1, 4}, {}, 2) == std::vector<int>{0, 4});
    CHECK(run(all, {4}, 2) == std::vector<int>{4, 7});
    CHECK(run(all, {4}, 4) == std::vector<int>{4, 5, 6, 7});
    CHECK(run({1, 2, 3, 4, 5, 6, 7}, {0, 1, 2, 3}, 4).empty());  // required 0 unavailable
    CHECK(run(all, {0, 1, 2}, 2).empty());                       // required too many
    CHECK(run(all, {3}, 1) == std::vector<int>{3});
    CHECK(run(all, {}, 1) == std::vector<int>{0});
    CHECK_THROWS_AS((void)gs::besteffort_select(d, std::vector<int>{0, 8}, {}, 2),
                    gs::invalid_value_error);
  }

  TEST_CASE("besteffort pair scores match hardware-facts: NV2 on PIX is 250 and on PHB 230") {
    const gs::node_distances d(gs::dgx1_v100());
    CHECK(d.besteffort_score()(2, 3) == 250);
    CHECK(d.besteffort_score()(6, 7) == 250);
    CHECK(d.besteffort_score()(0, 3) == 230);
    CHECK(d.besteffort_score()(0, 5) == 10);
    // oracle table 3.6: the best 3-set scores 610, the best 5-set 1360, 6-set 1750
    const auto best_of = [&](int k) {
      int best = 0;
      for (gs::gpu_mask m = 0; m < 256; ++m) {
        if (std::popcount(m) != k) continue;
        int s = 0;
        for (int i = 0; i < 8; ++i) {
          for (int j = i + 1; j < 8; ++j) {
            if (((m >> i) & 1u) && ((m >> j) & 1u)) s += d.besteffort_score()(i, j);
          }
        }
        best = std::max(best, s);
      }
      return best;
    };
    CHECK(best_of(3) == 610);
    CHECK(best_of(5) == 1360);
    CHECK(best_of(6) == 1750);
  }

  TEST_CASE("NVSwitch systems show NV12 and NV18 between every pair and NUMA-local quads") {
    const gs::node_distances a100(gs::dgx_a100());
    const gs::node_distances h100(gs::dgx_h100());
    for (int i = 0; i < 8; ++i) {
      for (int j = 0; j < 8; ++j) {
        if (i == j) continue;
        CHECK(a100.nvlinks()(i, j) == 12);
        CHECK(h100.nvlinks()(i, j) == 18);
        CHECK(a100.direct()(i, j) == doctest::Approx(300.0));
        CHECK(h100.direct()(i, j) == doctest::Approx(450.0));
        CHECK(h100.hops()(i, j) == 2);  // GPU - NVSwitch - GPU
      }
    }
    // all NVLink-equal: NUMA locality decides
    const auto q = gs::select_gpus(h100, h100.all(), 4);
    CHECK(q.score.numa_nodes == 1);
    // DGX H100: GPU i owns NIC i (rail i)
    for (int i = 0; i < 8; ++i) CHECK(h100.nic(i) == i);
    const gs::node_distances hgx16(gs::hgx(16, 12, 1, gs::link_bandwidth::nvlink2));
    CHECK(hgx16.gpu_count() == 16);
    CHECK(hgx16.nvlinks()(0, 15) == 12);
    const gs::node_distances tray(gs::gb200_tray());
    CHECK(tray.nvlinks()(0, 3) == 18);
  }

  TEST_CASE("the PCIe-only host has the vLLM 11122 matrix") {
    const gs::node_distances d(gs::pcie_dual_socket_8gpu());
    CHECK(d.level(0, 1) == gs::p2p_level::pix);
    CHECK(d.level(0, 2) == gs::p2p_level::pxb);
    CHECK(d.level(2, 3) == gs::p2p_level::pix);
    CHECK(d.level(1, 3) == gs::p2p_level::pxb);
    CHECK(d.level(0, 4) == gs::p2p_level::sys);
    CHECK(d.level(6, 7) == gs::p2p_level::pix);
    CHECK(d.level(5, 6) == gs::p2p_level::pxb);
    // a 4-GPU job stays on one socket
    const auto s = gs::select_gpus(d, d.all(), 4);
    CHECK(s.score.numa_nodes == 1);
    CHECK(d.bottleneck()(0, 4) == doctest::Approx(gs::link_bandwidth::upi));
  }

  TEST_CASE("a disconnected graph or an unknown GPU index is a clear error") {
    gs::node_topology t("broken");
    const int cpu = t.add_cpu("CPU0");
    t.add_vertex(gs::vertex_kind::gpu, "GPU0", cpu, gs::link_kind::pcie, 16.0);
    t.add_nvswitch("lonely");
    CHECK_THROWS_WITH_AS(t.validate(), doctest::Contains("disconnected"), gs::invalid_value_error);
    CHECK_THROWS_AS((void)gs::node_distances(t), gs::invalid_value_error);
    CHECK_THROWS_AS((void)t.gpu_vertex(3), gs::invalid_value_error);
    CHECK_THROWS_AS(t.add_link(0, 1, gs::link_kind::pcie, 0, 16.0), gs::invalid_value_error);
    CHECK_THROWS_AS(t.add_link(0, 99, gs::link_kind::pcie, 1, 16.0), gs::invalid_value_error);
    CHECK_THROWS_AS((void)gs::hgx(7, 4, 2, 25.0), gs::invalid_value_error);
  }
}

}  // namespace topology_select_test
