// SPDX-License-Identifier: Apache-2.0
/// @file
/// The library's exception hierarchy (error lane 3: bad input from outside).
///
/// - `gpusched::error` (base, derives `std::runtime_error`): carries a stable `error_id`.
///   - `invalid_value_error`: a model value that is not acceptable (negative amount, zero
///     tasks, unknown GPU model, duplicate id); names the object, the field and the value.
///   - `parse_error`: malformed text input (trace lines, topology text); names the file, the
///     line, the field or column.
///
/// Expected outcomes ("does not fit", "over quota") are never exceptions: they are decision
/// values with reasons. A function that throws one of these leaves every object it was given
/// unchanged (strong guarantee) unless documented otherwise.
#pragma once

#include <cstddef>    // std::size_t
#include <stdexcept>  // std::runtime_error
#include <string>
#include <string_view>
#include <utility>  // std::move

#include "gpusched/config.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// Stable identifiers of error kinds; printed in every message as `[gpusched.<name>]`.
enum class error_id {
  invalid_value,  ///< a value outside its domain (negative, zero where positive is needed)
  unknown_name,   ///< a name not in its catalog (GPU model, MIG profile, policy)
  duplicate_id,   ///< an id given twice where ids must be unique
  inconsistent,   ///< values that contradict each other (min > max, share with count > 1)
  unknown_id,     ///< an id that names nothing known (a job not in the ledger)
  parse,          ///< malformed text
};

/// The printed name of an error id.
constexpr std::string_view to_string(error_id id) noexcept {
  switch (id) {
    case error_id::invalid_value:
      return "invalid_value";
    case error_id::unknown_name:
      return "unknown_name";
    case error_id::duplicate_id:
      return "duplicate_id";
    case error_id::inconsistent:
      return "inconsistent";
    case error_id::unknown_id:
      return "unknown_id";
    case error_id::parse:
      return "parse";
  }
  return "unknown";
}

namespace detail {
/// `message` fit to print: a NUL byte becomes `\0` and every other control byte but line feed
/// and tab `\xHH` (also DEL), so that a message quoting a value that holds one is printed
/// whole (`what()` is a C string: a NUL would cut it) and cannot rewrite the terminal's line.
/// Other bytes are kept as they are. O(size).
inline std::string printable_message(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  for (const char ch : message) {
    const auto u = static_cast<unsigned char>(ch);
    if (u == 0) {
      out += "\\0";
    } else if ((u < 0x20 && ch != '\n' && ch != '\t') || u == 0x7F) {
      out += "\\x";
      out += "0123456789abcdef"[u >> 4];
      out += "0123456789abcdef"[u & 0xF];
    } else {
      out += ch;
    }
  }
  return out;
}
}  // namespace detail

/// Base of every exception the library throws. `what()` starts with `[gpusched.<id>] `.
class error : public std::runtime_error {
 public:
  /// An error of kind `id`. `what()` is the prefix `[gpusched.<id>]`, a space, then `message`
  /// with its control bytes escaped (see `detail::printable_message`).
  error(error_id id, const std::string& message)
      : std::runtime_error("[gpusched." + std::string(to_string(id)) + "] " +
                           detail::printable_message(message)),
        id_(id) {}
  /// The stable kind of this error.
  [[nodiscard]] error_id id() const noexcept { return id_; }

 private:
  error_id id_;
};

/// A value of a model object (cluster, node, job, request) is not acceptable.
/// Message: `WHERE: field 'FIELD' = VALUE: PROBLEM`.
class invalid_value_error : public error {
 public:
  /// A bad `value` of `field` in the object `where`; `problem` says which rule it breaks.
  invalid_value_error(error_id id, std::string where, std::string field, std::string value,
                      const std::string& problem)
      : error(id, where + ": field '" + field + "' = " + value + ": " + problem),
        where_(std::move(where)),
        field_(std::move(field)),
        value_(std::move(value)) {}
  /// The object that holds the bad value, e.g. `job 7 group 'worker'`.
  [[nodiscard]] const std::string& where() const noexcept { return where_; }
  /// The field name, e.g. `count`.
  [[nodiscard]] const std::string& field() const noexcept { return field_; }
  /// The offending value as text.
  [[nodiscard]] const std::string& value() const noexcept { return value_; }

 private:
  std::string where_, field_, value_;
};

/// Malformed text input. Message: `FILE:LINE: field 'FIELD': PROBLEM`.
class parse_error : public error {
 public:
  /// A malformed `field` at `line` (1-based; 0 when not known) of `file`.
  parse_error(std::string file, std::size_t line, std::string field, const std::string& problem)
      : error(error_id::parse,
              file + ":" + std::to_string(line) + ": field '" + field + "': " + problem),
        file_(std::move(file)),
        line_(line),
        field_(std::move(field)) {}
  /// The file, or the name the caller gave the text it read.
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  /// The 1-based line; 0 for an error about the whole file (cannot open, a directory).
  [[nodiscard]] std::size_t line() const noexcept { return line_; }
  /// The field or column name.
  [[nodiscard]] const std::string& field() const noexcept { return field_; }

 private:
  std::string file_;
  std::size_t line_;
  std::string field_;
};

GPUSCHED_END_NAMESPACE
