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

#include <algorithm>  // std::find, std::sort
#include <cstdint>    // std::uint8_t
#include <string>
#include <string_view>
#include <type_traits>  // std::is_invocable_v, std::invoke_result_t, std::remove_cvref_t
#include <utility>      // std::forward, std::pair
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/quantity.hpp"
#include "gpusched/detail/overloaded.hpp"
#include "gpusched/resource/gpu_model.hpp"
#include "gpusched/resource/mig_catalog.hpp"

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
  /// One MIG instance of the profile named `profile` on GPU model `model` of `catalog` (the
  /// per-model names of `nvidia-smi mig -lgip`, e.g. `3g.20gb` on an A100-SXM4-40GB, `3g.40gb`
  /// on an H100-SXM5-80GB): the demand is that profile's shape, `mig(compute, memory)`, which
  /// other models offer under their own names (set `task_request::allowed_models` to keep the
  /// task on `model`). @throws invalid_value_error (unknown_name) naming an unknown model (with
  /// the catalog's MIG models) or a profile `model` does not have (with its profiles); a `+me`
  /// profile is refused (demands with media extensions are not supported). O(models + profiles).
  static gpu_demand mig_profile(const gpu_catalog& catalog, std::string_view model,
                                std::string_view profile);
  /// As above with `mig_catalog()`, which has every MIG-capable model of the hardware notes:
  /// `gpu_demand::mig_profile("A100-SXM4-40GB", "3g.20gb") == gpu_demand::mig(3, 4)`.
  static gpu_demand mig_profile(std::string_view model, std::string_view profile);
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

inline gpu_demand gpu_demand::mig_profile(const gpu_catalog& catalog, std::string_view model,
                                          std::string_view profile) {
  const std::string where = "gpu_demand::mig_profile";
  const auto id = catalog.find(model);
  if (!id || !catalog[*id].supports_mig()) {
    std::string known;
    for (const auto& m : catalog.models()) {
      if (m.supports_mig()) known += (known.empty() ? "" : ", ") + m.name;
    }
    throw invalid_value_error(
        error_id::unknown_name, where, "model", std::string(model),
        std::string(id ? "has no MIG table in this catalog" : "unknown GPU model") +
            " (MIG models: " + (known.empty() ? std::string("none") : known) + ")");
  }
  const gpu_model& m = catalog[*id];
  const auto* p = m.mig.find(profile);  // (the member function hides the type name here)
  if (p == nullptr || p->media_extension) {
    std::string names;
    for (const auto& q : m.mig.profiles) {
      if (!q.media_extension) names += (names.empty() ? "" : ", ") + q.name;
    }
    throw invalid_value_error(
        error_id::unknown_name, where, "profile", std::string(profile),
        std::string(p != nullptr ? "a +me profile, which a demand cannot ask for"
                                 : "not a MIG profile of " + m.name) +
            " (its profiles: " + names + ")");
  }
  return mig(p->compute_slices, p->memory_slices);
}

inline gpu_demand gpu_demand::mig_profile(std::string_view model, std::string_view profile) {
  static const gpu_catalog catalog = mig_catalog();
  return mig_profile(catalog, model, profile);
}

namespace detail {
/// Checks that some model of `catalog` allowed by `allowed` has a MIG profile of `compute` and
/// `memory` slices (not `+me`). @throws invalid_value_error naming the models that have the
/// shape (when `allowed` excludes them) or the shapes the catalog offers. O(models x profiles).
inline void validate_mig_shape(std::uint8_t compute, std::uint8_t memory,
                               const gpu_model_set& allowed, const gpu_catalog& catalog,
                               const std::string& where) {
  std::string with;    // models that have the shape ("A100-SXM4-40GB (3g.20gb)")
  std::string shapes;  // distinct shapes of the catalog ("1c/1m, 1c/2m, ...")
  std::string mig_models;
  std::vector<std::pair<std::uint8_t, std::uint8_t>> seen;
  for (std::size_t i = 0; i < catalog.size(); ++i) {
    const gpu_model_id id{static_cast<gpu_model_id::rep>(i)};
    const gpu_model& m = catalog[id];
    if (!m.supports_mig()) continue;
    mig_models += (mig_models.empty() ? "" : ", ") + m.name;
    for (const auto& p : m.mig.profiles) {
      if (p.media_extension) continue;
      const std::pair<std::uint8_t, std::uint8_t> sh{p.compute_slices, p.memory_slices};
      if (std::find(seen.begin(), seen.end(), sh) == seen.end()) seen.push_back(sh);
    }
    if (const mig_profile* p = m.mig.find(compute, memory)) {
      if (allowed.admits(id)) return;
      with += (with.empty() ? "" : ", ") + m.name + " (" + p->name + ")";
    }
  }
  const std::string value = std::to_string(compute) + "c/" + std::to_string(memory) + "m";
  const std::string shape = "a MIG profile of " + std::to_string(compute) + " compute and " +
                            std::to_string(memory) + " memory slices";
  if (!with.empty()) {
    throw invalid_value_error(error_id::inconsistent, where, "gpu.mig", value,
                              "no allowed GPU model has " + shape + "; models with it: " + with);
  }
  if (mig_models.empty()) {
    throw invalid_value_error(error_id::invalid_value, where, "gpu.mig", value,
                              "no GPU model of the catalog has MIG (gpusched::mig_catalog() has "
                              "the MIG tables of every MIG-capable model)");
  }
  std::sort(seen.begin(), seen.end());
  for (const auto& [c, mm] : seen) {
    shapes += (shapes.empty() ? "" : ", ") + std::to_string(c) + "c/" + std::to_string(mm) + "m";
  }
  throw invalid_value_error(error_id::invalid_value, where, "gpu.mig", value,
                            "no GPU model of the catalog has " + shape + " (shapes offered: " +
                                shapes + "; MIG models: " + mig_models + ")");
}
}  // namespace detail

/// The most GPUs one node may have (and so one task may hold).
inline constexpr int max_gpus_per_node = 16;

/// Checks a request's values. `where` names the request in messages (e.g. `job 7 group
/// 'worker'`). @throws invalid_value_error naming the field and value: negative CPU or memory,
/// zero or negative whole count, a count above `max_gpus_per_node`, a share outside 1..1000,
/// zero MIG slices or a MIG shape that no (allowed) model of `catalog` offers (the message names
/// the models that have it, or the shapes the catalog offers), a negative replica memory ask, or
/// an allowed model not in `catalog`.
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
        detail::validate_mig_shape(m.compute, m.memory, r.allowed_models, catalog, where);
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
