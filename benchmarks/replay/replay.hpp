// SPDX-License-Identifier: Apache-2.0
// The `replay` experiment command: replays a trace on a cluster with one or several policy
// compositions (chosen by name through the registry in pipeline/any_policy.hpp) and writes
// metrics. It is the `replay` subcommand of `gpusched-experiment`
// (`return run_replay(argc - 1, argv + 1);`), and also the stand-alone `gpusched-replay`
// (benchmarks/replay/main.cpp). The Python module's `gpusched.replay` calls
// `run_replay_tables` with the same options, so its figures are the command's.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <gpusched/config.hpp>

GPUSCHED_BEGIN_NAMESPACE
class policy_registry;
GPUSCHED_END_NAMESPACE

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

/// What the command computes for one composition, as the text of the CSV files it writes with
/// --out (the same writers, so the same columns and digits).
struct replay_tables {
  std::string label;
  std::string summary_csv;   ///< header and this composition's row of summary.csv
  std::string jobs_csv;      ///< LABEL/jobs.csv
  std::string samples_csv;   ///< LABEL/samples.csv
  std::string tenants_csv;   ///< LABEL/tenants.csv
  std::uint64_t events = 0;  ///< simulator events processed
  double wall_s = 0;         ///< wall-clock seconds of this composition's replay
};

/// Runs the command with `args` (its options, without the program name; --quiet is implied and
/// --help is an error) and the policy names of `registry` (the built-in names plus the
/// caller's), and returns each composition's tables in order. Writes files only with --out.
/// @throws gpusched::error: an `invalid_value` error with the command's message for a bad
/// option, and whatever loading the trace or replaying throws.
std::vector<replay_tables> run_replay_tables(const std::vector<std::string>& args,
                                             const gpusched::policy_registry& registry);

}  // namespace gpusched_experiment
