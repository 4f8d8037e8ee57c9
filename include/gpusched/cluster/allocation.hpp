// SPDX-License-Identifier: Apache-2.0
/// @file
/// What one task holds on one node: the node, CPU, memory, and a grant per GPU (a milli share,
/// whole GPUs as 1000-milli grants, a set of MIG memory slices, or one replica of a shared GPU).
/// Plain values, no heap.
#pragma once

#include <cstdint>  // std::uint16_t

#include "gpusched/config.hpp"
#include "gpusched/core/ids.hpp"
#include "gpusched/core/quantity.hpp"
#include "gpusched/detail/inline_vector.hpp"
#include "gpusched/resource/gpu_model.hpp"
#include "gpusched/resource/request.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// Dense position of a node in its cluster (0..node_count-1); distinct from the caller's `node_id`.
using node_index = strong_id<struct node_index_tag>;
/// Dense position of a GPU in its cluster (0..gpu_count-1), GPUs of a node contiguous.
using gpu_index = strong_id<struct gpu_index_tag>;

/// @brief A grant on one GPU.
/// - whole GPU: `milli == 1000`, `mig_slots == 0`;
/// - share: `0 < milli < 1000` (or 1000 for a full share), `mig_slots == 0`;
/// - MIG instance: `milli == 0`, `mig_slots` the occupied memory slices, `media` for `+me`,
///   `mig_compute` the profile's compute slices (0 when the grant's maker did not say; the
///   memory slices and `media` then identify the profile where the model has only one such);
/// - replica of a time-sliced / MPS GPU: `replica`, `milli == 0`, `mig_slots == 0`.
struct gpu_grant {
  /// The GPU granted.
  gpu_index gpu{};
  /// The share in thousandths: 1000 for a whole GPU or a full share, 0 for a MIG instance or a
  /// replica.
  milli_gpu milli{};
  /// The MIG memory slices occupied (bit i is slice i); 0 when not a MIG instance.
  mig_slot_mask mig_slots = 0;
  /// The MIG instance has the media extensions (`+me`, at most one per GPU).
  bool media = false;
  /// One replica of a time-sliced or MPS GPU.
  bool replica = false;
  /// The MIG instance's compute slices (the `Ng` of its profile); 0 when not a MIG instance or
  /// not known. Printed placements name the profile with it (`gpu0:3g.20gb@4`).
  std::uint8_t mig_compute = 0;
  friend constexpr bool operator==(const gpu_grant&, const gpu_grant&) noexcept = default;
};

/// @brief Everything one task holds. `group` is the index of the task's group in its job.
struct task_allocation {
  /// The node the task runs on.
  node_index node{};
  /// The index of the task's group in its job's `groups`.
  std::uint16_t group = 0;
  /// CPU granted on the node.
  cpu_millis cpu{};
  /// Host memory granted on the node.
  memory_mib memory{};
  /// The GPU grants, one per GPU (whole, share, MIG instance or replica); empty for a CPU-only
  /// task.
  detail::inline_vector<gpu_grant, max_gpus_per_node> gpus;
  friend constexpr bool operator==(const task_allocation&,
                                   const task_allocation&) noexcept = default;
};

GPUSCHED_END_NAMESPACE
