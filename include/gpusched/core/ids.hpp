// SPDX-License-Identifier: Apache-2.0
/// @file
/// Strong identifiers: `job_id`, `node_id`, `tenant_id`, `gpu_model_id`. Each is a distinct type;
/// a `job_id` never converts to a `node_id` or to an integer silently.
#pragma once

#include <compare>     // operator<=>
#include <cstdint>     // std::uint32_t
#include <functional>  // std::hash
#include <limits>      // std::numeric_limits

#include "gpusched/config.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief A typed identifier: a value of `Rep` tagged with `Tag` so ids of different kinds do not
/// mix. Totally ordered and hashable; the default-constructed id is `invalid()`.
/// @tparam Tag an empty type naming the kind of id.
/// @tparam Rep the unsigned integer that carries the value.
template <class Tag, class Rep = std::uint32_t>
class strong_id {
 public:
  /// The integer type that carries the value.
  using rep = Rep;
  constexpr strong_id() noexcept = default;
  /// An id of value `v` (not checked: `v` equal to the maximum of `Rep` is `invalid()`).
  constexpr explicit strong_id(Rep v) noexcept : value_(v) {}
  /// The sentinel "no id" value (the maximum of `Rep`).
  static constexpr strong_id invalid() noexcept { return strong_id{}; }
  /// The integer value.
  [[nodiscard]] constexpr Rep value() const noexcept { return value_; }
  /// False for `invalid()`, true for every other value.
  [[nodiscard]] constexpr bool valid() const noexcept { return value_ != invalid_rep; }
  friend constexpr auto operator<=>(strong_id, strong_id) noexcept = default;

 private:
  static constexpr Rep invalid_rep = std::numeric_limits<Rep>::max();
  Rep value_ = invalid_rep;
};

/// A job (a gang). Chosen by the caller; unique within a queue and a ledger.
using job_id = strong_id<struct job_id_tag>;
/// A node, chosen by the caller; unique within a cluster.
using node_id = strong_id<struct node_id_tag>;
/// A tenant (queue, team, user) for quotas and fair share.
using tenant_id = strong_id<struct tenant_id_tag>;
/// A GPU model: the index of the model in its `gpu_catalog`.
using gpu_model_id = strong_id<struct gpu_model_id_tag, std::uint16_t>;

GPUSCHED_END_NAMESPACE

/// Hashes an id as its integer value, so ids key `std::unordered_map` and `std::unordered_set`.
template <class Tag, class Rep>
struct std::hash<gpusched::strong_id<Tag, Rep>> {
  /// The hash of `id.value()`. O(1).
  std::size_t operator()(gpusched::strong_id<Tag, Rep> id) const noexcept {
    return std::hash<Rep>{}(id.value());
  }
};
