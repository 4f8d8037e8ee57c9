// SPDX-License-Identifier: Apache-2.0
/// @file
/// `inline_vector<T, N>`: a vector with fixed inline capacity and no heap allocation, for the
/// small per-task lists of the hot path (the GPUs one task holds on one node).
#pragma once

#include <algorithm>  // std::equal
#include <array>
#include <cstddef>      // std::size_t
#include <type_traits>  // std::is_trivially_copyable_v

#include "gpusched/config.hpp"

GPUSCHED_BEGIN_NAMESPACE
namespace detail {

/// Fixed-capacity vector of trivially copyable `T`. `push_back` beyond `N` is a precondition
/// violation. All operations are O(1) except comparison and iteration, which are O(size()).
template <class T, std::size_t N>
class inline_vector {
  static_assert(std::is_trivially_copyable_v<T>, "inline_vector holds trivially copyable types");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;
  static constexpr std::size_t capacity() noexcept { return N; }

  constexpr void push_back(const T& v) noexcept {
    GPUSCHED_EXPECTS(size_ < N);
    data_[size_++] = v;
  }
  constexpr void pop_back() noexcept {
    GPUSCHED_EXPECTS(size_ > 0);
    --size_;
  }
  constexpr void clear() noexcept { size_ = 0; }
  [[nodiscard]] constexpr std::size_t size() const noexcept { return size_; }
  [[nodiscard]] constexpr bool empty() const noexcept { return size_ == 0; }
  constexpr T& operator[](std::size_t i) noexcept {
    GPUSCHED_EXPECTS(i < size_);
    return data_[i];
  }
  constexpr const T& operator[](std::size_t i) const noexcept {
    GPUSCHED_EXPECTS(i < size_);
    return data_[i];
  }
  constexpr T* begin() noexcept { return data_.data(); }
  constexpr T* end() noexcept { return data_.data() + size_; }
  constexpr const T* begin() const noexcept { return data_.data(); }
  constexpr const T* end() const noexcept { return data_.data() + size_; }

  friend constexpr bool operator==(const inline_vector& a, const inline_vector& b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  std::array<T, N> data_{};
  std::size_t size_ = 0;
};

}  // namespace detail
GPUSCHED_END_NAMESPACE
