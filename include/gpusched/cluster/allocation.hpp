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
/// - MIG instance: `milli == 0`, `mig_slots` the occupied memory slices, `media` for `+me`;
/// - replica of a time-sliced / MPS GPU: `replica`, `milli == 0`, `mig_slots == 0`.
struct gpu_grant {
  gpu_index gpu{};
  milli_gpu milli{};
  mig_slot_mask mig_slots = 0;
  bool media = false;
  bool replica = false;
  friend constexpr bool operator==(const gpu_grant&, const gpu_grant&) noexcept = default;
};

/// @brief Everything one task holds. `group` is the index of the task's group in its job.
struct task_allocation {
  node_index node{};
  std::uint16_t group = 0;
  cpu_millis cpu{};
  memory_mib memory{};
  detail::inline_vector<gpu_grant, max_gpus_per_node> gpus;
  friend constexpr bool operator==(const task_allocation&,
                                   const task_allocation&) noexcept = default;
};

GPUSCHED_END_NAMESPACE
