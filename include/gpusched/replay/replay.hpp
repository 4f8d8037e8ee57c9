// SPDX-License-Identifier: Apache-2.0
/// @file
/// `replay`: runs one policy composition, chosen by name in a `policy_registry` (so a user's
/// own registered policies too), over a stream of jobs on a cluster with the discrete-event
/// simulator, and returns the metrics. The `gpusched-replay` program is argument parsing and
/// output writing around this function; a researcher can call it directly:
/// @code
/// gpusched::policy_registry reg;
/// reg.add("my-order", "...", [](const gpusched::policy_inputs&) { return my_order{}; });
/// const auto run = gpusched::replay(cluster, {.label = "mine", .config = {.ordering =
/// "my-order"}},
///                                   gpusched::source_from(jobs), {}, reg);
/// gpusched::print_table(std::cout, std::vector{run.summary});
/// @endcode
/// Deterministic: the same cluster, jobs, composition and `sim_config::seed` give the same
/// result. Cost: the simulator's (one scheduling cycle per event time).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <utility>  // std::move
#include <vector>

#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/metrics/summary.hpp"
#include "gpusched/pipeline/registry.hpp"
#include "gpusched/sim/simulator.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief A named composition: the label in tables and file names, and one policy name per
/// slot.
struct replay_composition {
  /// The label in tables and file names.
  std::string label = "default";
  /// The policy name of each slot.
  pipeline_config config{};
};

/// @brief How to run a replay, besides the composition.
struct replay_options {
  sim_config sim{};        ///< the simulator's knobs (seed, failures, sampling, time limit)
  policy_inputs inputs{};  ///< what factories may use (topology model, ...)
  std::vector<std::string> tenant_names{};  ///< for per-tenant figures (index = tenant id)
  /// Called after every scheduling cycle with the time and the ledger (read-only), e.g. to
  /// tally placements or show progress. Optional.
  std::function<void(sim_time, const ledger&)> observer{};
};

/// @brief What one replay produced: the summary and the simulator's raw output.
struct replay_run {
  /// The run's summary (`summarize` of the records, samples and totals).
  sim_summary summary;
  std::vector<job_record> records;  ///< one per job that arrived, in arrival order
  std::vector<sim_sample> samples;  ///< the time series (every `sim.sample_interval`)
  /// Cluster-wide totals.
  sim_totals totals;
};

/// @brief Replays the jobs of `source` on `cluster` with composition `c`, whose policy names
/// are looked up in `registry` (built-in and user-registered policies).
/// @throws invalid_value_error (unknown_name) for a name the registry does not know, before
/// anything runs; whatever the simulator and the policies throw for bad jobs.
/// (A template only so that including this header instantiates nothing until `replay` is
/// called: it keeps the umbrella header's parse cost down. Call it as a plain function.)
template <class = void>
[[nodiscard]] replay_run replay(const cluster& cluster_state, const replay_composition& c,
                                job_source source, const replay_options& o = {},
                                const policy_registry& registry = {}) {
  simulator<any_pipeline> sim(cluster_state, registry.make_pipeline(c.config, o.inputs), o.sim);
  if (o.observer) sim.set_observer(o.observer);
  sim.run(std::move(source));
  replay_run out;
  out.summary = summarize(sim.records(), sim.samples(), sim.totals(), o.tenant_names, {}, c.label);
  out.records.assign(sim.records().begin(), sim.records().end());
  out.samples.assign(sim.samples().begin(), sim.samples().end());
  out.totals = sim.totals();
  return out;
}

GPUSCHED_END_NAMESPACE
