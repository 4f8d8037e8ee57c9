// SPDX-License-Identifier: Apache-2.0
/// @file
/// `overloaded{f, g, ...}`: one callable whose call operator is the overload set of the given
/// callables (the usual `std::visit` helper), used by `gpu_demand::visit`.
#pragma once

#include "gpusched/config.hpp"

GPUSCHED_BEGIN_NAMESPACE
namespace detail {

/// Inherits every `F`'s call operator; overload resolution picks among them. O(1).
template <class... F>
struct overloaded : F... {
  using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;

}  // namespace detail
GPUSCHED_END_NAMESPACE
