// SPDX-License-Identifier: Apache-2.0
/// @file
/// Slurm host lists: `n[1-3,7],gpu01` expands to `n1 n2 n3 n7 gpu01` and back. Used for the
/// `nodes` fields of Slurm's JSON, for `topology.conf` and for the `NodeList=` the bridge
/// writes. One bracket group per name (Slurm's common form; `rack[1-2]-n[1-4]` is rejected).
/// Pure functions, no Slurm needed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"

GPUSCHED_BEGIN_NAMESPACE

namespace slurm {

namespace detail {
inline void hostlist_fail(std::string_view list, const std::string& problem) {
  throw invalid_value_error(error_id::parse, "slurm host list", "hosts", "'" + std::string(list) + "'",
                            problem);
}
inline std::uint64_t hostlist_number(std::string_view list, std::string_view digits) {
  if (digits.empty() || digits.size() > 18) hostlist_fail(list, "bad number in a range");
  std::uint64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') hostlist_fail(list, "bad number in a range");
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}
}  // namespace detail

/// @brief Expands a Slurm host list (`a[1-3,05],b`) into names, in the written order. Zero
/// padding of a range is kept (`n[01-10]`: n01 ... n10). Empty input: no names.
/// @throws invalid_value_error (parse) for unbalanced brackets, bad ranges or a second bracket
/// group in one name. O(output size).
[[nodiscard]] inline std::vector<std::string> expand_hostlist(std::string_view list) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < list.size()) {
    // one item: prefix [ranges] suffix, up to a comma outside brackets
    std::size_t end = i;
    int depth = 0;
    while (end < list.size() && !(list[end] == ',' && depth == 0)) {
      if (list[end] == '[') ++depth;
      if (list[end] == ']') --depth;
      if (depth < 0 || depth > 1) detail::hostlist_fail(list, "unbalanced brackets");
      ++end;
    }
    if (depth != 0) detail::hostlist_fail(list, "unbalanced brackets");
    const std::string_view item = list.substr(i, end - i);
    i = end + 1;
    if (item.empty()) continue;
    const std::size_t open = item.find('[');
    if (open == std::string_view::npos) {
      out.emplace_back(item);
      continue;
    }
    const std::size_t close = item.find(']', open);
    const std::string_view prefix = item.substr(0, open);
    const std::string_view suffix = item.substr(close + 1);
    if (suffix.find('[') != std::string_view::npos) {
      detail::hostlist_fail(list, "one bracket group per name is supported");
    }
    std::string_view ranges = item.substr(open + 1, close - open - 1);
    if (ranges.empty()) detail::hostlist_fail(list, "empty brackets");
    while (!ranges.empty()) {
      const std::size_t comma = ranges.find(',');
      const std::string_view r = ranges.substr(0, comma);
      ranges = comma == std::string_view::npos ? std::string_view{} : ranges.substr(comma + 1);
      const std::size_t dash = r.find('-');
      const std::string_view lo_s = r.substr(0, dash);
      const std::string_view hi_s = dash == std::string_view::npos ? lo_s : r.substr(dash + 1);
      const std::uint64_t lo = detail::hostlist_number(list, lo_s);
      const std::uint64_t hi = detail::hostlist_number(list, hi_s);
      if (hi < lo || hi - lo > 1'000'000) detail::hostlist_fail(list, "bad range");
      const std::size_t width = lo_s.size();
      for (std::uint64_t v = lo; v <= hi; ++v) {
        std::string num = std::to_string(v);
        if (num.size() < width) num.insert(0, width - num.size(), '0');
        out.push_back(std::string(prefix) + num + std::string(suffix));
      }
    }
  }
  return out;
}

/// @brief Writes names as a comma-separated list (`n1,n3`), in the given order: the form
/// `scontrol update NodeList=` takes without any ambiguity. O(total length).
[[nodiscard]] inline std::string join_hostlist(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ',';
    out += n;
  }
  return out;
}

}  // namespace slurm

GPUSCHED_END_NAMESPACE
