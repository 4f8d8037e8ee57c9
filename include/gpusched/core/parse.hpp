// SPDX-License-Identifier: Apache-2.0
/// @file
/// The one set of rules for text values that every loader and program applies:
///
/// - numbers: `parse_real` and `parse_integer` read the whole text with `std::from_chars`
///   (decimal, optional exponent for reals; no leading `+`, no spaces, no hexadecimal, no `inf`
///   or `nan`); `number_problem` words the error (malformed vs out of range, a subnormal
///   called too close to zero rather than "not a number");
/// - text: `is_utf8` (names written into JSON must be UTF-8), `strip_bom` (a UTF-8 byte-order
///   mark before a header is skipped);
/// - files: `open_input` (a directory given as a file is called a directory);
/// - checked arithmetic: `checked_add`, `checked_mul`, `to_millis` (seconds to milliseconds
///   of a value that may be huge or infinite).
///
/// Everything here is O(length of the text) and allocation-free except error messages.
#pragma once

#include <charconv>  // std::from_chars
#include <cmath>     // std::isfinite, std::fpclassify
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>  // std::errc

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// Why a text is not a number.
enum class number_status : std::uint8_t {
  ok,            ///< parsed
  malformed,     ///< not a number in the accepted syntax (hex, sign `+`, spaces, empty, inf, nan)
  out_of_range,  ///< a number, but too large for the type
  subnormal,     ///< a real too close to zero to be represented as a normal double
};

/// A parsed value and its status.
template <class T>
struct parsed_number {
  /// The value; meaningful only when `ok()`.
  T value{};
  /// Why the text is not a number, or `number_status::ok`.
  number_status status = number_status::malformed;
  /// True when the text was a number of the type.
  [[nodiscard]] bool ok() const noexcept { return status == number_status::ok; }
};

/// A finite decimal real (`12`, `-0.5`, `1e3`); the whole of `s` must be the number.
/// O(|s|). Never throws.
[[nodiscard]] inline parsed_number<double> parse_real(std::string_view s) noexcept {
  parsed_number<double> out;
  if (s.empty()) return out;
  // from_chars accepts "inf", "nan" and (format general) no hex; reject the words up front.
  for (const char c : s) {
    const bool allowed =
        (c >= '0' && c <= '9') || c == '.' || c == '-' || c == 'e' || c == 'E' || c == '+';
    if (!allowed) return out;
  }
  if (s.front() == '+') return out;
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (p != s.data() + s.size()) return out;
  if (ec == std::errc::result_out_of_range) {
    // Too large, or too close to zero (from_chars reports both this way).
    bool nonzero_digit = false;
    bool big = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      if (c == 'e' || c == 'E') {
        big = i + 1 < s.size() && s[i + 1] != '-';
        break;
      }
      nonzero_digit |= c >= '1' && c <= '9';
    }
    out.status = (!big && nonzero_digit) ? number_status::subnormal : number_status::out_of_range;
    return out;
  }
  if (ec != std::errc{} || !std::isfinite(v)) return out;
  if (v != 0 && std::fpclassify(v) == FP_SUBNORMAL) {
    out.status = number_status::subnormal;
    return out;
  }
  out.value = v;
  out.status = number_status::ok;
  return out;
}

/// A decimal integer (`-12`, `7`); the whole of `s` must be the number. O(|s|). Never throws.
template <class T = std::int64_t>
[[nodiscard]] parsed_number<T> parse_integer(std::string_view s) noexcept {
  parsed_number<T> out;
  if (s.empty() || s.front() == '+') return out;
  T v{};
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (p != s.data() + s.size()) return out;
  if (ec == std::errc::result_out_of_range) {
    out.status = number_status::out_of_range;
    return out;
  }
  if (ec != std::errc{}) return out;
  out.value = v;
  out.status = number_status::ok;
  return out;
}

/// The words for a failed parse of `s`, e.g. `'0x10' is not a number` or `'1e-320' is too
/// close to 0 (subnormal)`; `kind` names what was expected ("number", "whole number").
[[nodiscard]] inline std::string number_problem(std::string_view s, number_status st,
                                                std::string_view kind = "number") {
  const std::string q = "'" + std::string(s) + "'";
  switch (st) {
    case number_status::out_of_range:
      return q + " is out of range";
    case number_status::subnormal:
      return q + " is too close to 0 (below the smallest normal double)";
    default:
      return q + " is not a " + std::string(kind);
  }
}

/// True when `s` is well-formed UTF-8 (no overlong forms, no surrogates, at most U+10FFFF).
/// O(|s|).
[[nodiscard]] constexpr bool is_utf8(std::string_view s) noexcept {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
      cp = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      cp = c & 0x0Fu;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      cp = c & 0x07u;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;  // truncated sequence
    for (std::size_t k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0u) != 0x80u) return false;
      cp = (cp << 6) | (d & 0x3Fu);
    }
    if ((n == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (n == 3 && (cp < 0x10000 || cp > 0x10FFFF))) {
      return false;
    }
    i += n + 1;
  }
  return true;
}

/// `s` without a leading UTF-8 byte-order mark.
[[nodiscard]] constexpr std::string_view strip_bom(std::string_view s) noexcept {
  if (s.size() >= 3 && s[0] == '\xEF' && s[1] == '\xBB' && s[2] == '\xBF') s.remove_prefix(3);
  return s;
}

/// Opens `path` for reading. @throws parse_error (line 0, field `file`) for a path holding a NUL
/// byte (shown as `\0`), naming a directory as a directory, and otherwise "cannot open".
[[nodiscard]] inline std::ifstream open_input(const std::string& path) {
  // The operating system reads a path up to its first NUL: "a.csv\0b" would open "a.csv".
  if (const auto z = path.find('\0'); z != std::string::npos) {
    std::string shown;
    for (const char c : path) shown += c == '\0' ? std::string("\\0") : std::string(1, c);
    throw parse_error(shown, 0, "file",
                      "the path holds a NUL byte (at character " + std::to_string(z + 1) +
                          "); it would be cut there, so it is refused");
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw parse_error(path, 0, "file", "is a directory, not a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw parse_error(path, 0, "file", "cannot open");
  return in;
}

/// `a + b`, or nothing on overflow.
template <class T>
[[nodiscard]] constexpr std::optional<T> checked_add(T a, T b) noexcept {
  T r{};
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
/// `a x b`, or nothing on overflow.
template <class T>
[[nodiscard]] constexpr std::optional<T> checked_mul(T a, T b) noexcept {
  T r{};
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// Milliseconds of `seconds` rounded to nearest, or nothing when the value is not finite or
/// its millisecond count does not fit in 63 bits (a derived duration such as steps / a tiny
/// rate). O(1).
[[nodiscard]] inline std::optional<std::int64_t> to_millis(double seconds) noexcept {
  if (!std::isfinite(seconds)) return std::nullopt;
  const double ms = seconds * 1000.0 + (seconds >= 0 ? 0.5 : -0.5);
  // 2^62: far inside int64 after rounding; anything beyond is 146 million years.
  constexpr double limit = 4.611686018427387904e18;
  if (!(ms < limit && ms > -limit)) return std::nullopt;
  return static_cast<std::int64_t>(ms);
}

GPUSCHED_END_NAMESPACE
