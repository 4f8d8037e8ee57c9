// SPDX-License-Identifier: Apache-2.0
/// @file
/// What one task asks for: a GPU demand (none, whole GPUs, a milli share of one GPU, one MIG
/// instance, or one replica of a time-sliced / MPS GPU), CPU, memory, and the GPU models it may
/// run on.
///
/// Code that depends on the demand kind dispatches with `gpu_demand::visit`, one handler per
/// kind, each seeing only its kind's fields (`demand_whole::count`, `demand_share::share`, ...).
/// A visit without a handler for some kind does not compile, so adding a kind points at every
/// visiting site.
#pragma once

#include <cstdint>  // std::uint8_t
#include <string>
#include <type_traits>  // std::is_invocable_v, std::invoke_result_t, std::remove_cvref_t
#include <utility>      // std::forward

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/quantity.hpp"
#include "gpusched/detail/overloaded.hpp"
#include "gpusched/resource/gpu_model.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// The kind of GPU a task needs.
enum class gpu_demand_kind : std::uint8_t {
  none,     ///< CPU-only task (a launcher, a parameter server)
  whole,    ///< `count` whole GPUs on one node, exclusively
  share,    ///< a share (1..1000 milli) of one GPU, co-located with other shares
  mig,      ///< one MIG instance of the given slice geometry
  replica,  ///< one replica of a GPU in time-slicing or MPS sharing mode (see `gpu_sharing`)
};

/// @name The views `gpu_demand::visit` passes, one per `gpu_demand_kind`, with its fields.
/// @{
struct demand_none {};  ///< `gpu_demand_kind::none`
/// `gpu_demand_kind::whole`
struct demand_whole {
  gpu_count count;  ///< number of GPUs
};
/// `gpu_demand_kind::share`
struct demand_share {
  milli_gpu share;  ///< thousandths of one GPU
};
/// `gpu_demand_kind::mig`
struct demand_mig {
  std::uint8_t compute;  ///< compute slices
  std::uint8_t memory;   ///< memory slices
};
/// `gpu_demand_kind::replica`
struct demand_replica {
  memory_mib gpu_memory;  ///< device memory the task needs on its GPU (0: no ask)
};
/// @}

/// @brief A task's GPU demand. Build it with the named constructors; dispatch on its kind with
/// `visit`.
struct gpu_demand {
  /// Which kind of demand this is; selects the fields that apply.
  gpu_demand_kind kind = gpu_demand_kind::none;
  gpu_count count{};             ///< whole: number of GPUs
  milli_gpu share{};             ///< share: thousandths of one GPU
  std::uint8_t mig_compute = 0;  ///< mig: compute slices
  std::uint8_t mig_memory = 0;   ///< mig: memory slices
  /// replica: device memory the task needs on its GPU (0: no ask). Checked against the MPS
  /// per-replica limit (device memory / replicas); on a time-sliced GPU, which isolates no
  /// memory, against the device memory.
  memory_mib gpu_memory{};

  /// No GPU (a CPU-only task).
  static constexpr gpu_demand none() noexcept { return {}; }
  /// `n` whole GPUs on one node.
  static constexpr gpu_demand whole(gpu_count n) noexcept {
    return {gpu_demand_kind::whole, n, {}, 0, 0, {}};
  }
  /// A share of one GPU, in thousandths (`0 < m <= 1000`).
  static constexpr gpu_demand fraction(milli_gpu m) noexcept {
    return {gpu_demand_kind::share, {}, m, 0, 0, {}};
  }
  /// One MIG instance of `compute` compute slices and `memory` memory slices (`mig(3, 4)` is a
  /// 3g.40gb on an A100-40GB).
  static constexpr gpu_demand mig(std::uint8_t compute, std::uint8_t memory) noexcept {
    return {gpu_demand_kind::mig, {}, {}, compute, memory, {}};
  }
  /// One replica of a shared (time-sliced or MPS) GPU, optionally with a device-memory ask.
  static constexpr gpu_demand replica(memory_mib gpu_memory = {}) noexcept {
    return {gpu_demand_kind::replica, {}, {}, 0, 0, gpu_memory};
  }
  /// Calls the one of `handlers` that takes this demand's view (`demand_none`,
  /// `demand_whole`, `demand_share`, `demand_mig` or `demand_replica`, by `kind`) and returns
  /// its result converted to the `demand_none` handler's result type (`void` is fine):
  /// @code
  /// const milli_gpu m = d.visit([](demand_none) { return milli_gpu{0}; },
  ///                             [](demand_whole w) { return whole_gpu_milli * w.count.value(); },
  ///                             ...);
  /// @endcode
  /// Every kind needs a handler: a missing one is a compile error naming the view, so a new
  /// kind is a compile error at every visiting site. (A generic `[](auto)` handler would take
  /// every kind not named otherwise, and with it a new one: use it only for a real default.)
  /// O(1) plus the handler; `constexpr` when the handlers are.
  template <class... F>
  constexpr auto visit(F&&... handlers) const {
    detail::overloaded<std::remove_cvref_t<F>...> h{std::forward<F>(handlers)...};
    using H = decltype(h)&;
    static_assert(std::is_invocable_v<H, demand_none>,
                  "gpu_demand::visit: no handler for demand_none");
    static_assert(std::is_invocable_v<H, demand_whole>,
                  "gpu_demand::visit: no handler for demand_whole");
    static_assert(std::is_invocable_v<H, demand_share>,
                  "gpu_demand::visit: no handler for demand_share");
    static_assert(std::is_invocable_v<H, demand_mig>,
                  "gpu_demand::visit: no handler for demand_mig");
    static_assert(std::is_invocable_v<H, demand_replica>,
                  "gpu_demand::visit: no handler for demand_replica");
    using R = std::invoke_result_t<H, demand_none>;
    switch (kind) {
      case gpu_demand_kind::whole:
        return static_cast<R>(h(demand_whole{count}));
      case gpu_demand_kind::share:
        return static_cast<R>(h(demand_share{share}));
      case gpu_demand_kind::mig:
        return static_cast<R>(h(demand_mig{mig_compute, mig_memory}));
      case gpu_demand_kind::replica:
        return static_cast<R>(h(demand_replica{gpu_memory}));
      case gpu_demand_kind::none:
        break;
    }
    return static_cast<R>(h(demand_none{}));
  }
  /// Whole GPUs asked for (0 unless `whole`).
  [[nodiscard]] constexpr gpu_count whole_gpus() const noexcept {
    return kind == gpu_demand_kind::whole ? count : gpu_count{0};
  }
  /// The demand in milli-GPU (whole: count x 1000; share: the share; MIG, replica, none: 0).
  /// A replica's charge (`1000 / N` of a GPU advertised as N replicas) depends on the GPU it
  /// lands on: quotas and DRF shares charge it from the grant (`add_usage`, `resource_basis`).
  [[nodiscard]] constexpr milli_gpu milli() const noexcept {
    return visit([](demand_none) { return milli_gpu{0}; },
                 [](demand_whole w) { return whole_gpu_milli * w.count.value(); },
                 [](demand_share s) { return s.share; }, [](demand_mig) { return milli_gpu{0}; },
                 [](demand_replica) { return milli_gpu{0}; });
  }
  friend constexpr bool operator==(const gpu_demand&, const gpu_demand&) noexcept = default;
};

/// @brief Everything one task needs from one node.
struct task_request {
  /// The GPUs the task needs.
  gpu_demand gpu{};
  /// CPU the task needs on its node.
  cpu_millis cpu{};
  /// Host memory the task needs on its node.
  memory_mib memory{};
  gpu_model_set allowed_models{};  ///< empty: any model
  friend bool operator==(const task_request&, const task_request&) noexcept = default;
};

/// The most GPUs one node may have (and so one task may hold).
inline constexpr int max_gpus_per_node = 16;

/// Checks a request's values. `where` names the request in messages (e.g. `job 7 group
/// 'worker'`). @throws invalid_value_error naming the field and value: negative CPU or memory,
/// zero or negative whole count, a count above `max_gpus_per_node`, a share outside 1..1000,
/// zero MIG slices, a negative replica memory ask, or an allowed model not in `catalog`.
inline void validate(const task_request& r, const gpu_catalog& catalog, const std::string& where) {
  if (r.cpu < cpu_millis{0}) {
    throw invalid_value_error(error_id::invalid_value, where, "cpu", std::to_string(r.cpu.value()),
                              "must not be negative");
  }
  if (r.memory < memory_mib{0}) {
    throw invalid_value_error(error_id::invalid_value, where, "memory",
                              std::to_string(r.memory.value()), "must not be negative");
  }
  r.gpu.visit(
      [](demand_none) {},
      [&](demand_whole w) {
        if (w.count <= gpu_count{0} || w.count > gpu_count{max_gpus_per_node}) {
          throw invalid_value_error(
              error_id::invalid_value, where, "gpu.count", std::to_string(w.count.value()),
              "must be 1.." + std::to_string(max_gpus_per_node) + " (whole GPUs on one node)");
        }
      },
      [&](demand_share s) {
        if (s.share <= milli_gpu{0} || s.share > whole_gpu_milli) {
          throw invalid_value_error(error_id::invalid_value, where, "gpu.share",
                                    std::to_string(s.share.value()),
                                    "a share is 1..1000 milli-GPU of one GPU; ask for whole GPUs "
                                    "for more");
        }
      },
      [&](demand_mig m) {
        if (m.compute == 0 || m.memory == 0) {
          throw invalid_value_error(
              error_id::invalid_value, where, "gpu.mig",
              std::to_string(m.compute) + "c/" + std::to_string(m.memory) + "m",
              "a MIG demand needs compute and memory slices");
        }
      },
      [&](demand_replica p) {
        if (p.gpu_memory < memory_mib{0}) {
          throw invalid_value_error(error_id::invalid_value, where, "gpu.gpu_memory",
                                    std::to_string(p.gpu_memory.value()),
                                    "a replica's memory ask must not be negative");
        }
      });
  for (std::size_t i = 0; i < gpu_model_set::max_models; ++i) {
    const gpu_model_id id{static_cast<gpu_model_id::rep>(i)};
    if (r.allowed_models.contains(id) && !catalog.contains(id)) {
      throw invalid_value_error(error_id::unknown_name, where, "allowed_models", std::to_string(i),
                                "not a model of the catalog");
    }
  }
}

GPUSCHED_END_NAMESPACE
