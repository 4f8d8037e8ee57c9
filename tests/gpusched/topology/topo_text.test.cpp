// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <string>

#include <gpusched/gpusched.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace topology_topo_text_test {

namespace gs = gpusched;

namespace {

// Real DGX-1 (8x V100-SXM2-16GB, driver 440.33.01) output quoted in hardware-facts 2.3
// (source: Oneflow-Inc/DLPerf, OneFlow/ConvNets/rn50_fp32_report_0821.md), with its legend.
const char* const dgx1_text =
    "\t\x1b[4mGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tmlx5_0\tCPU Affinity\x1b[0m\n"
    "GPU0\t X \tNV1\tNV1\tNV2\tNV2\tSYS\tSYS\tSYS\tNODE\t0-11,24-35\n"
    "GPU1\tNV1\t X \tNV2\tNV1\tSYS\tNV2\tSYS\tSYS\tNODE\t0-11,24-35\n"
    "GPU2\tNV1\tNV2\t X \tNV2\tSYS\tSYS\tNV1\tSYS\tPIX\t0-11,24-35\n"
    "GPU3\tNV2\tNV1\tNV2\t X \tSYS\tSYS\tSYS\tNV1\tPIX\t0-11,24-35\n"
    "GPU4\tNV2\tSYS\tSYS\tSYS\t X \tNV1\tNV1\tNV2\tSYS\t12-23,36-47\n"
    "GPU5\tSYS\tNV2\tSYS\tSYS\tNV1\t X \tNV2\tNV1\tSYS\t12-23,36-47\n"
    "GPU6\tSYS\tSYS\tNV1\tSYS\tNV1\tNV2\t X \tNV2\tSYS\t12-23,36-47\n"
    "GPU7\tSYS\tSYS\tSYS\tNV1\tNV2\tNV1\tNV2\t X \tSYS\t12-23,36-47\n"
    "mlx5_0\tNODE\tNODE\tPIX\tPIX\tSYS\tSYS\tSYS\tSYS\t X \n"
    "\n"
    "Legend:\n"
    "\n"
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n";

// Real 8-GPU PCIe-only host from hardware-facts 2.5 (vllm-project/vllm issue #11122); the
// source truncates the GPU6/GPU7 rows, completed by symmetry as hardware-facts notes [I].
const char* const pcie_text =
    "      GPU0 GPU1 GPU2 GPU3 GPU4 GPU5 GPU6 GPU7\n"
    "GPU0   X   PIX  PXB  PXB  SYS  SYS  SYS  SYS\n"
    "GPU1  PIX   X   PXB  PXB  SYS  SYS  SYS  SYS\n"
    "GPU2  PXB  PXB   X   PIX  SYS  SYS  SYS  SYS\n"
    "GPU3  PXB  PXB  PIX   X   SYS  SYS  SYS  SYS\n"
    "GPU4  SYS  SYS  SYS  SYS   X   PIX  PXB  PXB\n"
    "GPU5  SYS  SYS  SYS  SYS  PIX   X   PXB  PXB\n"
    "GPU6  SYS  SYS  SYS  SYS  PXB  PXB   X   PIX\n"
    "GPU7  SYS  SYS  SYS  SYS  PXB  PXB  PIX   X\n";

// The shape of a DGX H100 matrix (NV18 everywhere, NUMA 0 for GPUs 0-3 and 1 for 4-7, as
// hardware-facts 2.4 describes); constructed for the test, two NICs shown.
const char* const h100_text =
    "\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tNIC0\tNIC1\tCPU Affinity\tNUMA "
    "Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tPIX\tSYS\t0-55\t0\t\tN/A\n"
    "GPU1\tNV18\t X \tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tNODE\tSYS\t0-55\t0\t\tN/A\n"
    "GPU2\tNV18\tNV18\t X \tNV18\tNV18\tNV18\tNV18\tNV18\tNODE\tSYS\t0-55\t0\t\tN/A\n"
    "GPU3\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tNV18\tNV18\tNODE\tSYS\t0-55\t0\t\tN/A\n"
    "GPU4\tNV18\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tNV18\tSYS\tPIX\t56-111\t1\t\tN/A\n"
    "GPU5\tNV18\tNV18\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tSYS\tNODE\t56-111\t1\t\tN/A\n"
    "GPU6\tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\t X \tNV18\tSYS\tNODE\t56-111\t1\t\tN/A\n"
    "GPU7\tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\t X \tSYS\tNODE\t56-111\t1\t\tN/A\n"
    "NIC0\tPIX\tNODE\tNODE\tNODE\tSYS\tSYS\tSYS\tSYS\t X \tSYS\n"
    "NIC1\tSYS\tSYS\tSYS\tSYS\tPIX\tNODE\tNODE\tNODE\tSYS\t X \n"
    "\n"
    "NIC Legend:\n"
    "  NIC0: mlx5_0\n";

}  // namespace

TEST_SUITE("topology/topo_text") {
  TEST_CASE("the real DGX-1 output parses into the hybrid cube-mesh with its NIC and sockets") {
    const auto m = gs::parse_topo_matrix(dgx1_text);
    const gs::node_distances d(m.topology);
    const gs::node_distances ref(gs::dgx1_v100());
    REQUIRE(d.gpu_count() == 8);
    for (int i = 0; i < 8; ++i) {
      for (int j = 0; j < 8; ++j) {
        CHECK(d.nvlinks()(i, j) == ref.nvlinks()(i, j));
        CHECK(d.level(i, j) == ref.level(i, j));
      }
    }
    CHECK(m.nics == std::vector<std::string>{"mlx5_0"});
    CHECK(m.cpu_affinity[0] == "0-11,24-35");
    CHECK(m.cpu_affinity[7] == "12-23,36-47");
    for (int i = 0; i < 4; ++i) CHECK(d.numa(i) == 0);
    for (int i = 4; i < 8; ++i) CHECK(d.numa(i) == 1);
    CHECK(d.nic(2) == 0);
    CHECK(d.nic(3) == 0);
    // the same selection as on the built-in model
    for (int k = 1; k <= 8; ++k) {
      CHECK(gs::select_gpus(d, d.all(), k).score.ring_mbps ==
            gs::select_gpus(ref, ref.all(), k).score.ring_mbps);
    }
  }

  TEST_CASE("the real PCIe-only output parses into switches, host bridges and two sockets") {
    const auto m = gs::parse_topo_matrix(pcie_text);
    const gs::node_distances d(m.topology);
    const gs::node_distances ref(gs::pcie_dual_socket_8gpu());
    for (int i = 0; i < 8; ++i) {
      for (int j = 0; j < 8; ++j) CHECK(d.level(i, j) == ref.level(i, j));
    }
    CHECK(d.numa(0) != d.numa(4));
    CHECK(m.cpu_affinity[0].empty());
    CHECK(m.numa[0] == -1);
  }

  TEST_CASE("an NV18 matrix with NUMA columns becomes an NVSwitch plane with two NUMA nodes") {
    const auto m = gs::parse_topo_matrix(h100_text);
    const gs::node_distances d(m.topology);
    CHECK(m.nics.size() == 2);
    CHECK(m.numa[0] == 0);
    CHECK(m.numa[5] == 1);
    for (int i = 0; i < 8; ++i) {
      for (int j = 0; j < 8; ++j) {
        if (i != j) CHECK(d.nvlinks()(i, j) == 18);
      }
    }
    CHECK(d.numa(3) == 0);
    CHECK(d.numa(4) == 1);
    CHECK(d.nic(0) == 0);
    CHECK(d.nic(4) == 1);
  }

  TEST_CASE("malformed matrices fail with the line and column of the offending token") {
    const auto expect = [](const std::string& text, std::size_t line, std::size_t column,
                           const char* words) {
      try {
        (void)gs::parse_topo_matrix(text, {.file = "topo.txt"});
        FAIL("no error for: " << text);
      } catch (const gs::topology_parse_error& e) {
        CHECK(e.line() == line);
        CHECK(e.column() == column);
        CHECK(std::string(e.what()).find(words) != std::string::npos);
        CHECK(std::string(e.what()).find("topo.txt:") != std::string::npos);
        CHECK(e.id() == gs::error_id::parse);
      }
    };
    expect("", 1, 1, "no topology matrix");
    expect("  GPU1 GPU0\n", 1, 3, "start with GPU0");
    expect("  GPU0 GPU2\n", 1, 8, "expected GPU1");
    expect("     GPU0 GPU1\nGPU0  X   NV9Z\nGPU1  NV1  X\n", 2, 11, "unknown cell 'NV9Z'");
    expect("     GPU0 GPU1\nGPU0  X   PIX\nGPU1  PHB  X\n", 2, 11, "differs from GPU1/GPU0");
    expect("     GPU0 GPU1\nGPU0  PIX  PIX\nGPU1  PIX  X\n", 2, 7, "diagonal must be X");
    expect("     GPU0 GPU1\nGPU0  X   PIX\nGPU2  PIX  X\n", 3, 1, "expected row 'GPU1'");
    expect("     GPU0 GPU1\nGPU0  X\nGPU1  PIX  X\n", 2, 7, "expected 2 cells");
    expect("     GPU0 GPU1\nGPU0  X   PIX\n", 3, 1, "missing row GPU1");
    expect("     GPU0 GPU1 CPU Affinity\nGPU0  X   PIX  0-3\nGPU1  PIX  X\n", 3, 12,
           "expected 3 values");
    // not a hierarchy: 0-1 PIX and 1-2 PIX force 0-2 PIX, but it says SYS
    expect("     GPU0 GPU1 GPU2\nGPU0  X   PIX  SYS\nGPU1  PIX  X   PIX\nGPU2  SYS  PIX  X\n", 2,
           16, "not a hierarchy");
  }
}

}  // namespace topology_topo_text_test
