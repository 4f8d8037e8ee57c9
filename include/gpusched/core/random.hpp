// SPDX-License-Identifier: Apache-2.0
/// @file
/// The seeded random engine policies receive through the context, and a seed helper for tests
/// and experiments (`GPUSCHED_SEED` environment variable overrides a default seed).
#pragma once

#include <cstdint>  // std::uint64_t
#include <cstdlib>  // std::getenv, std::strtoull
#include <random>   // std::mt19937_64

#include "gpusched/config.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// The engine every randomised policy uses. Same seed, same decisions, on every platform
/// (`std::mt19937_64` is fully specified by the standard; distributions are not, so the library
/// draws with `uniform_index` below rather than `std::uniform_int_distribution`).
using random_engine = std::mt19937_64;

/// A uniformly distributed index in `[0, n)`, portable across standard libraries.
/// @pre `n > 0`. Uses Lemire-free rejection sampling: unbiased and deterministic.
inline std::uint64_t uniform_index(random_engine& g, std::uint64_t n) noexcept {
  GPUSCHED_EXPECTS(n > 0);
  const std::uint64_t limit = random_engine::max() - (random_engine::max() % n);
  std::uint64_t x = g();
  while (x >= limit) x = g();
  return x % n;
}

/// The seed to use: the value of environment variable `var` when it is set and parses as an
/// unsigned integer, otherwise `fallback`.
inline std::uint64_t seed_from_env(std::uint64_t fallback, const char* var = "GPUSCHED_SEED") {
  if (const char* s = std::getenv(var)) {  // NOLINT(concurrency-mt-unsafe): read once, at start
    char* end = nullptr;
    const auto v = std::strtoull(s, &end, 10);
    if (end != s && *end == '\0') return v;
  }
  return fallback;
}

GPUSCHED_END_NAMESPACE
