// SPDX-License-Identifier: Apache-2.0
// The `replay` experiment command: replays a trace on a cluster with one or several policy
// compositions (chosen by name through the registry in pipeline/any_policy.hpp) and writes
// metrics. It is the `replay` subcommand of `gpusched-experiment`
// (`return run_replay(argc - 1, argv + 1);`), and also the stand-alone `gpusched-replay`
// (benchmarks/replay/main.cpp).
#pragma once

#include <iosfwd>

namespace gpusched_experiment {

/// Runs the replay command. `argv[0]` is the command name. Writes the table to `out`, errors
/// and the progress line to `err`. Returns 0 on success, 2 on a usage or input error.
int run_replay(int argc, char** argv, std::ostream& out, std::ostream& err);
/// As above on std::cout / std::cerr.
int run_replay(int argc, char** argv);

}  // namespace gpusched_experiment
