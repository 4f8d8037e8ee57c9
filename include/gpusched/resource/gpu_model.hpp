// SPDX-License-Identifier: Apache-2.0
/// @file
/// GPU models and their catalog: name, memory, SM count, and MIG geometry (memory slices,
/// compute slices, and a profile table with placements and instance caps).
///
/// MIG profiles are keyed by (GPU model, compute slices, memory slices), never by name alone:
/// `1g.10gb` is a one-eighth profile on an A100-80GB and a two-eighths profile on an A100-40GB.
#pragma once

#include <algorithm>  // std::find_if
#include <bit>        // std::popcount
#include <cstdint>    // std::uint8_t, std::uint64_t
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>  // std::move
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/ids.hpp"
#include "gpusched/core/quantity.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// Occupancy of a GPU's MIG memory slices: bit `i` set means slice `i` is in use.
using mig_slot_mask = std::uint8_t;

/// @brief One MIG GPU-instance profile of one GPU model (a row of `nvidia-smi mig -lgip`).
struct mig_profile {
  std::string name{};                  ///< per-model name, e.g. "3g.20gb"
  std::uint8_t compute_slices = 0;     ///< the `Ng` prefix
  std::uint8_t memory_slices = 0;      ///< placement size in memory slices
  std::uint8_t max_instances = 0;      ///< `Instances Total` of `-lgip`
  mig_slot_mask placement_starts = 0;  ///< bit `s` set: a placement may start at slice `s`
  bool media_extension = false;        ///< a `+me` profile (at most one per GPU)
  memory_mib memory{};                 ///< device memory of one instance
  bool inferred = false;               ///< true when the row is inferred, not read from hardware

  /// The slots a placement starting at `start` occupies.
  [[nodiscard]] constexpr mig_slot_mask slots_at(unsigned start) const noexcept {
    return static_cast<mig_slot_mask>(((1u << memory_slices) - 1u) << start);
  }
};

/// @brief MIG geometry of a GPU model. Empty `profiles` means the model has no MIG.
struct mig_geometry {
  std::uint8_t memory_slices = 0;   ///< 8 on A100/H100/H200/B200, 4 on A30
  std::uint8_t compute_slices = 0;  ///< 7 on A100/H100/H200/B200, 4 on A30
  /// The MIG profiles the model offers, each with its allowed placements; empty: no MIG.
  std::vector<mig_profile> profiles{};

  /// The profile with these slice counts (and `+me` flag), if the model has one.
  [[nodiscard]] const mig_profile* find(std::uint8_t compute, std::uint8_t memory,
                                        bool media = false) const noexcept {
    const auto it = std::find_if(profiles.begin(), profiles.end(), [&](const mig_profile& p) {
      return p.compute_slices == compute && p.memory_slices == memory && p.media_extension == media;
    });
    return it == profiles.end() ? nullptr : &*it;
  }
  /// The profile named `name` (`3g.40gb`, `1g.10gb+me`), or null. O(profiles).
  [[nodiscard]] const mig_profile* find(std::string_view name) const noexcept {
    const auto it = std::find_if(profiles.begin(), profiles.end(),
                                 [&](const mig_profile& p) { return p.name == name; });
    return it == profiles.end() ? nullptr : &*it;
  }
};

/// @brief A GPU model: what the packer needs to know about one kind of GPU.
struct gpu_model {
  std::string name{};   ///< catalog key, e.g. "A100-SXM4-40GB"
  memory_mib memory{};  ///< device memory
  int sm_count = 0;     ///< streaming multiprocessors
  mig_geometry mig{};   ///< empty when the model does not support MIG

  /// True when the model has a MIG table (`mig.profiles` not empty).
  [[nodiscard]] bool supports_mig() const noexcept { return !mig.profiles.empty(); }
};

/// @brief A set of GPU models as a bitmask over catalog ids (a catalog holds at most 64 models).
/// The empty set means "any model" where it constrains a request.
class gpu_model_set {
 public:
  /// The most models a set (and so a catalog) can hold.
  static constexpr std::size_t max_models = 64;
  constexpr gpu_model_set() noexcept = default;
  /// Adds model `id`. @pre `id.value() < max_models`. O(1).
  constexpr void insert(gpu_model_id id) noexcept {
    GPUSCHED_EXPECTS(id.value() < max_models);
    bits_ |= std::uint64_t{1} << id.value();
  }
  /// True when `id` is in the set. O(1).
  [[nodiscard]] constexpr bool contains(gpu_model_id id) const noexcept {
    return id.value() < max_models && ((bits_ >> id.value()) & 1u) != 0;
  }
  /// True for the empty set (which, as a constraint, admits every model).
  [[nodiscard]] constexpr bool empty() const noexcept { return bits_ == 0; }
  /// Number of models in the set. O(1).
  [[nodiscard]] constexpr int size() const noexcept { return std::popcount(bits_); }
  /// True when this set, read as a constraint, admits `id` (empty admits everything).
  [[nodiscard]] constexpr bool admits(gpu_model_id id) const noexcept {
    return empty() || contains(id);
  }
  /// The set as a bitmask: bit i is model i.
  [[nodiscard]] constexpr std::uint64_t bits() const noexcept { return bits_; }
  friend constexpr bool operator==(gpu_model_set, gpu_model_set) noexcept = default;

 private:
  std::uint64_t bits_ = 0;
};

/// @brief The GPU models a cluster may contain, addressed by `gpu_model_id` (insertion order).
/// Lookup by name is O(models); models are few.
class gpu_catalog {
 public:
  gpu_catalog() = default;

  /// Adds a model. @throws invalid_value_error on an empty or duplicate name, non-positive
  /// memory, a negative SM count, a malformed MIG table, or a 65th model. Strong guarantee.
  gpu_model_id add(gpu_model m) {
    const std::string where = "gpu model '" + m.name + "'";
    if (m.name.empty()) {
      throw invalid_value_error(error_id::invalid_value, "gpu model", "name", "\"\"",
                                "must not be empty");
    }
    if (find(m.name)) {
      throw invalid_value_error(error_id::duplicate_id, where, "name", m.name,
                                "already in the catalog");
    }
    if (m.memory <= memory_mib{0}) {
      throw invalid_value_error(error_id::invalid_value, where, "memory",
                                std::to_string(m.memory.value()), "must be positive");
    }
    if (m.sm_count < 0) {
      throw invalid_value_error(error_id::invalid_value, where, "sm_count",
                                std::to_string(m.sm_count), "must not be negative");
    }
    validate_mig(where, m.mig);
    if (models_.size() >= gpu_model_set::max_models) {
      throw invalid_value_error(error_id::invalid_value, where, "catalog size",
                                std::to_string(models_.size() + 1), "at most 64 models");
    }
    models_.push_back(std::move(m));
    return gpu_model_id{static_cast<gpu_model_id::rep>(models_.size() - 1)};
  }

  /// The id of the model named `name`, or `nullopt`. O(models).
  [[nodiscard]] std::optional<gpu_model_id> find(std::string_view name) const noexcept {
    for (std::size_t i = 0; i < models_.size(); ++i) {
      if (models_[i].name == name) return gpu_model_id{static_cast<gpu_model_id::rep>(i)};
    }
    return std::nullopt;
  }
  /// The id of `name`. @throws invalid_value_error (unknown_name) listing the known models;
  /// `where` and `field` name the place the name came from.
  [[nodiscard]] gpu_model_id id(std::string_view name, std::string_view where = "request",
                                std::string_view field = "gpu_model") const {
    if (auto id = find(name)) return *id;
    std::string known;
    for (const auto& m : models_) known += (known.empty() ? "" : ", ") + m.name;
    throw invalid_value_error(error_id::unknown_name, std::string(where), std::string(field),
                              std::string(name), "unknown GPU model (known: " + known + ")");
  }
  /// The model of `id`. @pre `contains(id)`.
  [[nodiscard]] const gpu_model& operator[](gpu_model_id id) const noexcept {
    GPUSCHED_EXPECTS(id.value() < models_.size());
    return models_[id.value()];
  }
  /// True when `id` names a model of this catalog.
  [[nodiscard]] bool contains(gpu_model_id id) const noexcept {
    return id.value() < models_.size();
  }
  /// Number of models.
  [[nodiscard]] std::size_t size() const noexcept { return models_.size(); }
  /// All models, indexed by `gpu_model_id`.
  [[nodiscard]] std::span<const gpu_model> models() const noexcept { return models_; }

 private:
  static void validate_mig(const std::string& where, const mig_geometry& g) {
    if (g.profiles.empty()) return;
    if (g.memory_slices == 0 || g.memory_slices > 8 || g.compute_slices == 0) {
      throw invalid_value_error(error_id::invalid_value, where, "mig.memory_slices",
                                std::to_string(g.memory_slices),
                                "must be 1..8 with at least one compute slice");
    }
    for (const auto& p : g.profiles) {
      const std::string pw = where + " MIG profile '" + p.name + "'";
      if (p.memory_slices == 0 || p.memory_slices > g.memory_slices) {
        throw invalid_value_error(error_id::invalid_value, pw, "memory_slices",
                                  std::to_string(p.memory_slices), "outside the GPU's slices");
      }
      if (p.compute_slices == 0 || p.compute_slices > g.compute_slices) {
        throw invalid_value_error(error_id::invalid_value, pw, "compute_slices",
                                  std::to_string(p.compute_slices), "outside the GPU's slices");
      }
      if (p.placement_starts == 0 || p.max_instances == 0) {
        throw invalid_value_error(error_id::invalid_value, pw, "placement_starts",
                                  std::to_string(p.placement_starts),
                                  "needs at least one placement and instance");
      }
      for (unsigned s = 0; s < 8; ++s) {
        if (((p.placement_starts >> s) & 1u) != 0 && s + p.memory_slices > g.memory_slices) {
          throw invalid_value_error(error_id::invalid_value, pw, "placement_starts",
                                    std::to_string(s), "placement runs past the last slice");
        }
      }
    }
  }

  std::vector<gpu_model> models_;
};

/// @brief A small catalog of common models, for examples and tests.
///
/// Whole-GPU facts (memory, SMs) are public datasheet values. Only the A100-SXM4-40GB carries
/// its MIG table here (from NVIDIA's MIG User Guide `-lgipp` listing, tagged verified in the
/// project's hardware notes); the full per-model MIG catalog is a separate component.
inline gpu_catalog basic_catalog() {
  gpu_catalog c;
  c.add({"V100-SXM2-16GB", 16_gib, 80, {}});
  c.add({"V100-SXM2-32GB", 32_gib, 80, {}});
  c.add({"T4", 16_gib, 40, {}});
  c.add({"A10", 24_gib, 72, {}});
  c.add({"L40S", 48_gib, 142, {}});
  mig_geometry a100{8, 7, {}};
  // name, compute, memory, max, placement starts (bitmask), +me, memory per instance
  a100.profiles = {
      {"1g.5gb", 1, 1, 7, 0b0111'1111, false, memory_mib{4864}, false},
      {"1g.5gb+me", 1, 1, 1, 0b0111'1111, true, memory_mib{4864}, false},
      {"1g.10gb", 1, 2, 4, 0b0101'0101, false, memory_mib{9856}, true},
      {"2g.10gb", 2, 2, 3, 0b0001'0101, false, memory_mib{9984}, false},
      {"3g.20gb", 3, 4, 2, 0b0001'0001, false, memory_mib{20096}, false},
      {"4g.20gb", 4, 4, 1, 0b0000'0001, false, memory_mib{20096}, false},
      {"7g.40gb", 7, 8, 1, 0b0000'0001, false, memory_mib{40448}, false},
  };
  c.add({"A100-SXM4-40GB", 40_gib, 108, std::move(a100)});
  c.add({"A100-SXM4-80GB", 80_gib, 108, {}});
  c.add({"H100-SXM5-80GB", 80_gib, 132, {}});
  return c;
}

GPUSCHED_END_NAMESPACE
