// SPDX-License-Identifier: Apache-2.0
// The recorded Slurm 22.05 answers under tests/data/slurm/, read by the bridge's tests.
#pragma once

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace gpusched::testing {

/// The text of `tests/data/slurm/<name>`; fails the test when it cannot be read.
inline std::string read_slurm_data(const std::string& name) {
  std::ifstream in(std::string(GPUSCHED_TEST_DATA_DIR "/slurm/") + name);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace gpusched::testing
