// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <string>

#include <gpusched/topology/topo_text.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace topology_topo_limits_test {

namespace gs = gpusched;

TEST_SUITE("topology/topo_text") {
  TEST_CASE("a header with more device columns than the limit fails before any matrix is built") {
    // 30,000 NIC columns asked for 21.6 GB at once before the limit.
    std::string header = "      GPU0";
    for (int i = 0; i < 30000; ++i) header += " NIC" + std::to_string(i);
    try {
      (void)gs::parse_topo_matrix(header + "\n", {.file = "wide.txt"});
      FAIL("no error");
    } catch (const gs::topology_parse_error& e) {
      CHECK(e.line() == 1);
      CHECK(std::string(e.what()).find("wide.txt:1: field 'header'") != std::string::npos);
      CHECK(std::string(e.what()).find("more than 256 device columns") != std::string::npos);
    }
  }

  TEST_CASE("a NUMA id beyond the limit is an error naming it, not an overflowing int") {
    const std::string text =
        "     GPU0 GPU1 CPU Affinity NUMA Affinity\n"
        "GPU0  X   PIX  0-11 99999999999999999999\n"
        "GPU1  PIX  X   0-11 0\n";
    try {
      (void)gs::parse_topo_matrix(text, {.file = "numa.txt"});
      FAIL("no error");
    } catch (const gs::topology_parse_error& e) {
      CHECK(e.line() == 2);
      CHECK(std::string(e.what()).find("field 'NUMA Affinity'") != std::string::npos);
      CHECK(std::string(e.what()).find("is above 4095") != std::string::npos);
    }
    const auto ok = gs::parse_topo_matrix(
        "     GPU0 GPU1 CPU Affinity NUMA Affinity\n"
        "GPU0  X   PIX  0-11 4095\n"
        "GPU1  PIX  X   0-11 4095\n");
    CHECK(ok.numa == std::vector<int>{4095, 4095});
  }

  TEST_CASE("a byte-order mark is skipped and CR-only line endings are refused by name") {
    const std::string lf = "     GPU0 GPU1\nGPU0  X   PIX\nGPU1  PIX  X\n";
    CHECK(gs::parse_topo_matrix("\xEF\xBB\xBF" + lf).topology.gpu_count() == 2);
    std::string crlf, cr;
    for (const char c : lf) {
      crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
      cr += c == '\n' ? '\r' : c;
    }
    CHECK(gs::parse_topo_matrix(crlf).topology.gpu_count() == 2);
    try {
      (void)gs::parse_topo_matrix(cr, {.file = "cr.txt"});
      FAIL("no error");
    } catch (const gs::topology_parse_error& e) {
      CHECK(e.line() == 1);
      CHECK(std::string(e.what()).find("carriage return inside a line") != std::string::npos);
    }
  }
}

}  // namespace topology_topo_limits_test
