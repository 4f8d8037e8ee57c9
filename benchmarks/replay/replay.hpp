// SPDX-License-Identifier: Apache-2.0
// The `replay` experiment command: replays a trace on a cluster with one or several policy
// compositions (chosen by name through the registry in pipeline/any_policy.hpp) and writes
// metrics. It is the `replay` subcommand of `gpusched-experiment`
// (`return run_replay(argc - 1, argv + 1);`), and also the stand-alone `gpusched-replay`
// (benchmarks/replay/main.cpp).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace gpusched_experiment {

/// Runs the replay command. `argv[0]` is the command name. Writes the table to `out`, errors
/// and the progress line to `err`. Returns 0 on success, 2 on a usage or input error.
int run_replay(int argc, char** argv, std::ostream& out, std::ostream& err);
/// As above on std::cout / std::cerr.
int run_replay(int argc, char** argv);
/// Parses `args` (the options after the command name) over the options of `config_text` (a
/// config file's text), the cluster and every composition, reading no file and running
/// nothing: 0 when they are valid, 2 with the message on `err`. Any other exception escapes
/// (the argument fuzzer, tests/fuzz/, treats it as a finding).
int check_replay_arguments(const std::vector<std::string>& args, const std::string& config_text,
                           std::ostream& err);

}  // namespace gpusched_experiment
