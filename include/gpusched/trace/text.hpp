// SPDX-License-Identifier: Apache-2.0
/// @file
/// The line reader every trace loader uses: reads one line at a time from a `std::istream`
/// (never the whole file), splits it on a delimiter into views of one reused buffer, maps header
/// names to columns, and parses fields with `std::from_chars`, throwing `parse_error` that names
/// the file, the line (1-based) and the field.
#pragma once

#include <array>
#include <charconv>  // std::from_chars
#include <cmath>     // std::isfinite
#include <cstdint>
#include <istream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>  // std::errc
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/parse.hpp"

GPUSCHED_BEGIN_NAMESPACE
namespace detail {

/// @brief Delimited text, one line at a time. Lines may end in `\n` or `\r\n`; blank lines are
/// skipped; a UTF-8 byte-order mark before the first line is skipped. A carriage return inside a
/// line (a file with CR-only line endings reads as one long line) is a `parse_error`, never a
/// silently empty file. Memory: one line and its field views.
class text_reader {
 public:
  text_reader(std::istream& in, std::string file, char delimiter)
      : in_(&in), file_(std::move(file)), delim_(delimiter) {}

  /// Reads the next non-blank line and splits it; false at end of input. O(line length).
  bool next() {
    while (std::getline(*in_, line_)) {
      ++line_no_;
      if (line_no_ == 1 && strip_bom(line_).size() != line_.size()) line_.erase(0, 3);
      if (!line_.empty() && line_.back() == '\r') line_.pop_back();
      if (line_.find('\r') != std::string::npos) {
        fail("(line)",
             "carriage return inside a line (CR-only line endings are not read; convert the "
             "file to LF or CRLF line endings)");
      }
      if (line_.find_first_not_of(" \t") == std::string::npos) continue;
      split();
      return true;
    }
    return false;
  }
  [[nodiscard]] std::span<const std::string_view> fields() const noexcept { return fields_; }
  [[nodiscard]] std::size_t line() const noexcept { return line_no_; }
  [[nodiscard]] const std::string& file() const noexcept { return file_; }

  [[noreturn]] void fail(std::string_view field, const std::string& problem) const {
    throw parse_error(file_, line_no_, std::string(field), problem);
  }

  /// The position of each of `names` in the current line (the header); @throws parse_error
  /// naming the first missing column.
  template <std::size_t N>
  std::array<std::size_t, N> columns(const std::array<std::string_view, N>& names) const {
    std::array<std::size_t, N> pos{};
    for (std::size_t k = 0; k < N; ++k) {
      bool found = false;
      for (std::size_t i = 0; i < fields_.size(); ++i) {
        if (trim(fields_[i]) == names[k]) {
          pos[k] = i;
          found = true;
          break;
        }
      }
      if (!found) fail(names[k], "column missing from the header");
    }
    return pos;
  }

  /// Field `i` of the current line, named `name` in errors. @throws parse_error if absent.
  [[nodiscard]] std::string_view field(std::size_t i, std::string_view name) const {
    if (i >= fields_.size()) {
      fail(name, "missing (line has " + std::to_string(fields_.size()) + " fields)");
    }
    return trim(fields_[i]);
  }
  /// An integer in `[lo, hi]`.
  [[nodiscard]] std::int64_t integer(std::size_t i, std::string_view name, std::int64_t lo,
                                     std::int64_t hi) const {
    const auto s = field(i, name);
    const auto r = parse_integer(s);
    if (r.status == number_status::out_of_range) {
      fail(name, std::string(s) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
    }
    if (!r.ok()) fail(name, "'" + std::string(s) + "' is not an integer");
    const std::int64_t v = r.value;
    if (v < lo || v > hi) {
      fail(name, std::string(s) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
    }
    return v;
  }
  /// A finite number in `[lo, hi]`.
  [[nodiscard]] double number(std::size_t i, std::string_view name, double lo, double hi) const {
    const auto s = field(i, name);
    const auto r = parse_real(s);
    if (r.status == number_status::subnormal || r.status == number_status::out_of_range) {
      fail(name, number_problem(s, r.status));
    }
    if (!r.ok()) fail(name, "'" + std::string(s) + "' is not a finite number");
    const double v = r.value;
    if (v < lo || v > hi) fail(name, std::string(s) + " is out of range");
    return v;
  }

  static std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '"')) {
      s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '"')) {
      s.remove_suffix(1);
    }
    return s;
  }

 private:
  void split() {
    fields_.clear();
    std::string_view rest(line_);
    while (true) {
      const auto d = rest.find(delim_);
      fields_.push_back(rest.substr(0, d));
      if (d == std::string_view::npos) break;
      rest.remove_prefix(d + 1);
    }
  }

  std::istream* in_;
  std::string file_;
  char delim_;
  std::string line_;
  std::vector<std::string_view> fields_;
  std::size_t line_no_ = 0;
};

/// Milliseconds from seconds, rounded to nearest. @pre `s` finite and in range.
inline std::int64_t seconds_to_ms(double s) noexcept {
  return static_cast<std::int64_t>(s * 1000.0 + (s >= 0 ? 0.5 : -0.5));
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
constexpr std::int64_t days_from_civil(std::int64_t y, std::int64_t m, std::int64_t d) noexcept {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/// Parses `YYYY-MM-DD HH:MM:SS` (UTC) into seconds since the Unix epoch, or nothing (also for
/// a day the month does not have).
inline std::optional<std::int64_t> parse_datetime(std::string_view s) noexcept {
  if (s.size() != 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
      s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  const auto num = [&](std::size_t at, std::size_t len, int& out) {
    const auto [p, ec] = std::from_chars(s.data() + at, s.data() + at + len, out);
    return ec == std::errc{} && p == s.data() + at + len;
  };
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (!num(0, 4, y) || !num(5, 2, mo) || !num(8, 2, d) || !num(11, 2, h) || !num(14, 2, mi) ||
      !num(17, 2, se)) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || h < 0 || mi < 0 || se < 0 || h > 23 || mi > 59 || se > 60 ||
      y < 1970) {
    return std::nullopt;
  }
  // A calendar date: February 30 is not March 2.
  constexpr int month_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > month_days[mo - 1] + (mo == 2 && leap ? 1 : 0)) return std::nullopt;
  return days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
}

}  // namespace detail
GPUSCHED_END_NAMESPACE
