// SPDX-License-Identifier: Apache-2.0
/// @file
/// Strong resource quantities: `gpu_count`, `milli_gpu` (1000 = one whole GPU), `memory_mib`,
/// `cpu_millis`. Each is a distinct type with only the arithmetic that makes sense (sum,
/// difference, scaling by a plain integer, comparison); mixing kinds does not compile.
#pragma once

#include <compare>   // operator<=>
#include <concepts>  // std::integral
#include <cstdint>   // std::int64_t

#include "gpusched/config.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief An amount of one resource kind, carried as a signed integer.
/// Laws: `(a + b) - b == a`; `a * n == a + ... + a` (n times); ordering is that of the values.
/// Signed so that shortfalls (`need - have`) are representable; validation rejects negative
/// amounts where they make no sense (requests, capacities).
template <class Tag, class Rep = std::int64_t>
class quantity {
 public:
  /// The signed integer that carries the amount.
  using rep = Rep;
  constexpr quantity() noexcept = default;
  /// An amount of `v` units.
  constexpr explicit quantity(Rep v) noexcept : value_(v) {}
  /// The amount in units of this kind.
  [[nodiscard]] constexpr Rep value() const noexcept { return value_; }
  /// The amount 0.
  static constexpr quantity zero() noexcept { return quantity{}; }

  friend constexpr auto operator<=>(quantity, quantity) noexcept = default;
  friend constexpr quantity operator+(quantity a, quantity b) noexcept {
    return quantity{static_cast<Rep>(a.value_ + b.value_)};
  }
  friend constexpr quantity operator-(quantity a, quantity b) noexcept {
    return quantity{static_cast<Rep>(a.value_ - b.value_)};
  }
  /// Adds or subtracts an amount of the same kind in place. O(1).
  ///@{
  constexpr quantity& operator+=(quantity o) noexcept { return *this = *this + o; }
  constexpr quantity& operator-=(quantity o) noexcept { return *this = *this - o; }
  ///@}
  /// The negated amount (a shortfall). O(1).
  constexpr quantity operator-() const noexcept { return quantity{static_cast<Rep>(-value_)}; }
  template <std::integral I>
  friend constexpr quantity operator*(quantity a, I n) noexcept {
    return quantity{static_cast<Rep>(a.value_ * static_cast<Rep>(n))};
  }
  template <std::integral I>
  friend constexpr quantity operator*(I n, quantity a) noexcept {
    return a * n;
  }

 private:
  Rep value_{};
};

/// Whole GPUs.
using gpu_count = quantity<struct gpu_count_tag, std::int32_t>;
/// A share of one GPU in thousandths: 1000 is one whole GPU (the FGD / openb convention).
using milli_gpu = quantity<struct milli_gpu_tag, std::int32_t>;
/// Memory (host or device) in MiB.
using memory_mib = quantity<struct memory_mib_tag, std::int64_t>;
/// CPU in millicores: 1000 is one core.
using cpu_millis = quantity<struct cpu_millis_tag, std::int64_t>;

/// One whole GPU as a milli share.
inline constexpr milli_gpu whole_gpu_milli{1000};

inline namespace literals {
/// `n_gpus`: whole GPUs.
constexpr gpu_count operator""_gpus(unsigned long long v) noexcept {
  return gpu_count{static_cast<std::int32_t>(v)};
}
/// `n_mgpu`: a GPU share in thousandths (`500_mgpu` is half a GPU).
constexpr milli_gpu operator""_mgpu(unsigned long long v) noexcept {
  return milli_gpu{static_cast<std::int32_t>(v)};
}
/// `n_mib`: memory in MiB.
constexpr memory_mib operator""_mib(unsigned long long v) noexcept {
  return memory_mib{static_cast<std::int64_t>(v)};
}
/// `n_gib`: memory in GiB (1024 MiB each).
constexpr memory_mib operator""_gib(unsigned long long v) noexcept {
  return memory_mib{static_cast<std::int64_t>(v * 1024)};
}
/// `n_mcpu`: CPU in millicores.
constexpr cpu_millis operator""_mcpu(unsigned long long v) noexcept {
  return cpu_millis{static_cast<std::int64_t>(v)};
}
/// `n_cores`: whole CPU cores (1000 millicores each).
constexpr cpu_millis operator""_cores(unsigned long long v) noexcept {
  return cpu_millis{static_cast<std::int64_t>(v * 1000)};
}
}  // namespace literals

GPUSCHED_END_NAMESPACE
