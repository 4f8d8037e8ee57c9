// SPDX-License-Identifier: Apache-2.0
/// @file
/// Namespace macros (inline ABI namespace `v0`) and the contract macros of error lane 1.
///
/// Contracts (`GPUSCHED_EXPECTS`, `GPUSCHED_ASSERT`) guard caller bugs: violated preconditions.
/// They are on unless `NDEBUG` is defined; define `GPUSCHED_CONTRACTS` to 1 or 0 to force them
/// on or off. A violated contract prints the condition and its location and aborts: it is never
/// an expected outcome (those are decision values) nor bad input (those are exceptions).
#pragma once

#include <cstdio>   // std::fprintf
#include <cstdlib>  // std::abort

#include "gpusched/version.hpp"

/// Opens the library's namespace, `gpusched` with the inline ABI namespace `v0`.
#define GPUSCHED_BEGIN_NAMESPACE \
  namespace gpusched {           \
  inline namespace v0 {
/// Closes what `GPUSCHED_BEGIN_NAMESPACE` opened.
#define GPUSCHED_END_NAMESPACE \
  }                            \
  }

/// @def GPUSCHED_CONTRACTS
/// 1 when `GPUSCHED_EXPECTS` and `GPUSCHED_ASSERT` check, 0 when they compile to nothing. 1 unless
/// `NDEBUG` is defined; define it to 0 or 1 before the first gpusched include to choose.
#ifndef GPUSCHED_CONTRACTS
#ifdef NDEBUG
#define GPUSCHED_CONTRACTS 0
#else
#define GPUSCHED_CONTRACTS 1
#endif
#endif

GPUSCHED_BEGIN_NAMESPACE
namespace detail {
/// Reports a violated contract and aborts. Not inline-hot: kept out of line by `[[gnu::cold]]`.
[[noreturn, gnu::cold]] inline void contract_violation(const char* kind, const char* expr,
                                                       const char* file, int line) noexcept {
  std::fprintf(stderr, "gpusched: %s violated: %s (%s:%d)\n", kind, expr, file, line);
  std::abort();
}
}  // namespace detail
GPUSCHED_END_NAMESPACE

#if GPUSCHED_CONTRACTS
/// Precondition check (lane 1: caller bug). Aborts with the expression and location.
#define GPUSCHED_EXPECTS(cond)   \
  ((cond) ? static_cast<void>(0) \
          : ::gpusched::detail::contract_violation("precondition", #cond, __FILE__, __LINE__))
/// Internal invariant check. Aborts with the expression and location.
#define GPUSCHED_ASSERT(cond)    \
  ((cond) ? static_cast<void>(0) \
          : ::gpusched::detail::contract_violation("assertion", #cond, __FILE__, __LINE__))
#else
#define GPUSCHED_EXPECTS(cond) static_cast<void>(0)
#define GPUSCHED_ASSERT(cond) static_cast<void>(0)
#endif
