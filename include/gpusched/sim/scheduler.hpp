// SPDX-License-Identifier: Apache-2.0
/// @file
/// `scheduler`: what the simulator drives. A model runs one scheduling cycle over the pending
/// jobs, committing admitted gangs and evictions into the ledger and reporting its decisions
/// (and grown jobs) in a `cycle_result`. `pipeline<...>` and `any_pipeline` model it.
///
/// Optional members the simulator uses when present (detected by `requires`):
/// - `release(ledger&, job_id, sim_time, random_engine&)`: release a finished or interrupted
///   job (so that an incremental ordering policy follows); without it the simulator releases
///   from the ledger directly;
/// - `history()`: the `job_history` the simulator keeps up to date (attained service, last
///   placements);
/// - `options().grow`: whether the cycle may grow running elastic jobs.
#pragma once

#include <concepts>
#include <span>

#include "gpusched/config.hpp"
#include "gpusched/core/random.hpp"
#include "gpusched/core/time.hpp"
#include "gpusched/pipeline/pipeline.hpp"
#include "gpusched/workload/job.hpp"
#include "gpusched/workload/ledger.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// A type the simulator can drive (see the file comment).
template <class P>
concept scheduler = std::move_constructible<P> &&
                    requires(P& p, ledger& book, std::span<const job_spec> pending, sim_time now,
                             random_engine& rng, cycle_result& out) {
                      p.schedule(book, pending, now, rng, out);
                    };

GPUSCHED_END_NAMESPACE
