// SPDX-License-Identifier: Apache-2.0
/// @file
/// The command line of `gpusched-slurm` (apps/slurm/main.cpp) in one table per command, and the
/// checks applied to it before Slurm is asked anything:
///
/// - every number is read whole with `parse_real` (decimal, finite: no `5abc`, `0x10`, `inf`,
///   `nan`) and must lie in the option's range (`kBridgeOptions`: `--interval` 0.1 s to 1 day,
///   `--grace` 0 to 3600 s, `--timeout` 1 to 3600 s);
/// - an option given twice, two options that exclude each other (`--once` and `--interval`,
///   `--topo` and `--model`) and a policy slot given twice are refused, naming both;
/// - a file option naming a directory is refused, naming the path;
/// - a value the program writes into a generated configuration file (`gres-links --nodes`,
///   `--type`, `--file-prefix`, and `--topo`, whose path is the comment line's name) must hold no
///   control character (a newline would add a line to gres.conf).
///
/// Every error is a `usage_error` (exit status 2) whose message starts with the option's name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/parse.hpp"
#include "gpusched/pipeline/registry.hpp"

GPUSCHED_BEGIN_NAMESPACE

namespace slurm {

/// A bad command line of `gpusched-slurm` (exit status 2); the message names the option(s).
struct usage_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// What an option's value is, and so how it is checked.
enum class value_kind : std::uint8_t {
  flag,         ///< no value
  seconds,      ///< a decimal number of seconds in [min, max]
  text,         ///< any text (passed as one argv word, never to a shell)
  file,         ///< a path read as a file: not a directory
  policy,       ///< slot=name pairs, each slot once
  config,       ///< text written into a generated configuration file: no control character
  config_file,  ///< both `file` and `config`
};

/// One option of a command: its name (with `--`), the name of its value (empty for a flag),
/// its kind, its range (`seconds` only) and its help text.
struct option_spec {
  const char* name;   ///< the option, with its leading `--` (or `-h`)
  const char* value;  ///< the name of its value in the help text; empty for a flag
  value_kind kind;    ///< how its value is checked
  double min;         ///< the least value (`seconds` only)
  double max;         ///< the greatest value (`seconds` only)
  const char* help;   ///< one line of help text
};

/// Two options of one command that exclude each other, and why.
struct option_exclusion {
  const char* a;    ///< one option, with its `--`
  const char* b;    ///< the option it excludes
  const char* why;  ///< why the two cannot be given together (quoted in the error)
};

/// The options of `gpusched-slurm` (the scheduling command).
inline constexpr option_spec kBridgeOptions[] = {
    {"--once", "", value_kind::flag, 0, 0, "run one cycle, then exit (the default)"},
    {"--interval", "SECONDS", value_kind::seconds, 0.1, 86400,
     "run a cycle every SECONDS until SIGTERM, no default"},
    {"--dry-run", "", value_kind::flag, 0, 0, "print the commands instead of running them"},
    {"--json", "", value_kind::flag, 0, 0,
     "JSON objects only on stdout, one a line; the human text on stderr"},
    {"--policy", "SLOT=NAME,...", value_kind::policy, 0, 0,
     "the composition over the slots ordering, admission, packing, placement, preemption, "
     "each at most once"},
    {"--partition", "NAME[,NAME...]", value_kind::text, 0, 0,
     "schedule only these partitions (default: every partition)"},
    {"--topology", "FILE", value_kind::file, 0, 0,
     "Slurm topology.conf (topology/tree) for placement=topology"},
    {"--signal", "SIG", value_kind::text, 0, 0,
     "signal sent to a preemption victim before its requeue (default USR1)"},
    {"--grace", "SECONDS", value_kind::seconds, 0, 3600,
     "wait between the signal and the requeue, default 10"},
    {"--timeout", "SECONDS", value_kind::seconds, 1, 3600,
     "every Slurm command is killed after SECONDS, default 20"},
    {"--help", "", value_kind::flag, 0, 0, "this text"},
    {"-h", "", value_kind::flag, 0, 0, "the same as --help"},
};
/// The options of `gpusched-slurm` that exclude each other.
inline constexpr option_exclusion kBridgeExclusions[] = {
    {"--once", "--interval", "--once runs one cycle, --interval one every SECONDS"},
};

/// The options of `gpusched-slurm gres-links`.
inline constexpr option_spec kGresLinksOptions[] = {
    {"--nodes", "HOSTLIST", value_kind::config, 0, 0, "the NodeName= of every line (required)"},
    {"--type", "T", value_kind::config, 0, 0, "the Type= of every line (default: none)"},
    {"--topo", "FILE", value_kind::config_file, 0, 0, "a node's `nvidia-smi topo -m` output"},
    {"--model", "NAME", value_kind::text, 0, 0,
     "a built-in node type: dgx1-v100, dgx-a100, dgx-h100, pcie-8gpu"},
    {"--file-prefix", "PATH", value_kind::config, 0, 0,
     "File= is PATH followed by the GPU index (default /dev/nvidia)"},
    {"--help", "", value_kind::flag, 0, 0, "this text"},
};
/// The options of `gpusched-slurm gres-links` that exclude each other.
inline constexpr option_exclusion kGresLinksExclusions[] = {
    {"--topo", "--model", "both give the node's topology"},
};

/// The options given on a command line: name -> value (empty for a flag), each at most once.
using given_options = std::map<std::string, std::string, std::less<>>;

namespace detail {

/// A number as the help text writes it (`0.1`, `86400`).
[[nodiscard]] inline std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

/// The words for a character of a value (`a newline`, `the control character 0x1b`).
[[nodiscard]] inline std::string control_name(char c) {
  if (c == '\n') return "a newline";
  if (c == '\r') return "a carriage return";
  if (c == '\t') return "a tab";
  static constexpr char hex[] = "0123456789abcdef";
  const auto u = static_cast<unsigned char>(c);
  return std::string("the control character 0x") + hex[u >> 4] + hex[u & 15];
}

}  // namespace detail

/// The range of an option of kind `seconds`, as the help text and the errors say it.
[[nodiscard]] inline std::string range_text(const option_spec& o) {
  return detail::number_text(o.min) + " to " + detail::number_text(o.max) + " s";
}

/// The position (0-based) of the first control character (below 0x20, or 0x7f) of `v`, or
/// `npos`. O(|v|).
[[nodiscard]] constexpr std::size_t find_control(std::string_view v) noexcept {
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto u = static_cast<unsigned char>(v[i]);
    if (u < 0x20 || u == 0x7f) return i;
  }
  return std::string_view::npos;
}

/// Refuses `value` of `field` when it holds a control character: it is written into a
/// generated configuration file `what` (one line each), where a newline would add a line.
/// @throws usage_error naming `field`.
inline void check_no_control(std::string_view field, std::string_view value,
                             std::string_view what) {
  if (const auto at = find_control(value); at != std::string_view::npos) {
    throw usage_error(std::string(field) + ": the value holds " + detail::control_name(value[at]) +
                      " (at character " + std::to_string(at + 1) + "); it is written into " +
                      std::string(what) + ", one line each, so it is refused");
  }
}

/// A number of seconds for option `o`: the whole text, decimal, finite, within [min, max].
/// @throws usage_error naming the option, the value and the range.
[[nodiscard]] inline double parse_seconds(const option_spec& o, std::string_view v) {
  const auto p = parse_real(v);
  if (!p.ok()) {
    throw usage_error(std::string(o.name) + ": " + number_problem(v, p.status) +
                      " (a decimal number of seconds, " + range_text(o) + ")");
  }
  if (p.value < o.min) {
    throw usage_error(std::string(o.name) + ": '" + std::string(v) + "' is below " +
                      detail::number_text(o.min) + " s (" + range_text(o) + ")");
  }
  if (p.value > o.max) {
    throw usage_error(std::string(o.name) + ": '" + std::string(v) + "' is above " +
                      detail::number_text(o.max) + " s (" + range_text(o) + ")");
  }
  return p.value;
}

/// Reads `--policy` text (`slot=name,...`) into `c`; an empty text leaves the defaults.
/// @throws usage_error for an item without `=`, an unknown slot, or a slot given twice.
inline void parse_policy_slots(std::string_view text, pipeline_config& c) {
  std::map<std::string, std::string, std::less<>> seen;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(start, end - start);
    start = end + 1;
    const auto eq = item.find('=');
    std::string* slot = nullptr;
    const std::string k(item.substr(0, eq == std::string_view::npos ? item.size() : eq));
    if (k == "ordering")
      slot = &c.ordering;
    else if (k == "admission")
      slot = &c.admission;
    else if (k == "packing")
      slot = &c.packing;
    else if (k == "placement")
      slot = &c.placement;
    else if (k == "preemption")
      slot = &c.preemption;
    if (eq == std::string_view::npos || slot == nullptr) {
      throw usage_error(
          "--policy takes slot=name pairs (ordering, admission, packing, "
          "placement, preemption): '" +
          std::string(item) + "' is not one");
    }
    const std::string v(item.substr(eq + 1));
    if (const auto it = seen.find(k); it != seen.end()) {
      throw usage_error("--policy: the slot '" + k + "' is given twice ('" + k + "=" + it->second +
                        "', then '" + k + "=" + v + "'): give it once");
    }
    seen.emplace(k, v);
    *slot = v;
  }
}

/// Reads `args` against `table`: each option at most once, a value where the option takes one,
/// each value checked by its kind (`seconds` range, `file` not a directory, `config` no control
/// character; `policy` is checked by `parse_policy_slots`), no two options of `exclusions`
/// together. `generated` names the file that `config` values are written into. O(|args| x
/// |table|).
/// @throws usage_error naming the option(s).
[[nodiscard]] inline given_options parse_command_line(std::span<const std::string> args,
                                                      std::span<const option_spec> table,
                                                      std::span<const option_exclusion> exclusions,
                                                      std::string_view generated = "gres.conf") {
  given_options given;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const option_spec* spec = nullptr;
    for (const auto& o : table) {
      if (a == o.name) spec = &o;
    }
    if (spec == nullptr) throw usage_error("unknown argument '" + a + "'");
    std::string v;
    if (spec->kind != value_kind::flag) {
      if (i + 1 >= args.size()) throw usage_error(a + " needs a value");
      v = args[++i];
    }
    if (const auto it = given.find(a); it != given.end()) {
      throw usage_error(spec->kind == value_kind::flag ? a + " is given twice: give it once"
                                                       : a + " is given twice ('" + it->second +
                                                             "', then '" + v + "'): give it once");
    }
    switch (spec->kind) {
      case value_kind::seconds:
        (void)parse_seconds(*spec, v);
        break;
      case value_kind::config:
        check_no_control(a, v, "the generated " + std::string(generated));
        break;
      case value_kind::config_file:
        check_no_control(a, v, "the generated " + std::string(generated));
        [[fallthrough]];
      case value_kind::file: {
        std::error_code ec;
        if (std::filesystem::is_directory(v, ec)) {
          throw usage_error(a + ": '" + v + "' is a directory, not a file");
        }
        break;
      }
      case value_kind::policy: {
        pipeline_config ignored;
        parse_policy_slots(v, ignored);
        break;
      }
      case value_kind::flag:
      case value_kind::text:
        break;
    }
    given.emplace(a, std::move(v));
  }
  for (const auto& x : exclusions) {
    if (given.contains(x.a) && given.contains(x.b)) {
      throw usage_error(std::string(x.a) + " and " + x.b + " exclude each other (" + x.why +
                        "): give one");
    }
  }
  return given;
}

/// The settings of the scheduling command.
struct bridge_options {
  bool once = true;          ///< one cycle, then exit (no `--interval`)
  double interval = 0;       ///< `--interval`: seconds between cycles (when not `once`)
  bool dry_run = false;      ///< `--dry-run`: print the commands instead of running them
  bool json = false;         ///< `--json`: JSON lines on stdout, human text on stderr
  bool help = false;         ///< `--help` / `-h`: print the usage and exit
  pipeline_config policy{};  ///< `--policy`: the composition, slot by slot
  std::string partition;     ///< `--partition`: the partitions to schedule, by comma (empty: all)
  std::string topology;      ///< `--topology`: Slurm topology.conf for placement=topology
  std::string signal = "USR1";  ///< `--signal`: sent to a victim before it is requeued
  double grace = 10;            ///< `--grace`: seconds between the signal and the requeue
  double timeout = 20;          ///< `--timeout`: seconds a Slurm command may take
};

/// The option of `table` named `name` (which must be there).
[[nodiscard]] inline const option_spec& option_named(std::span<const option_spec> table,
                                                     std::string_view name) {
  for (const auto& o : table) {
    if (name == o.name) return o;
  }
  throw std::logic_error("gpusched-slurm: no option " + std::string(name));
}

/// The scheduling command's settings from its arguments (without the program name).
/// @throws usage_error naming the option(s).
[[nodiscard]] inline bridge_options parse_bridge_options(std::span<const std::string> args) {
  const auto g = parse_command_line(args, kBridgeOptions, kBridgeExclusions);
  bridge_options o;
  const auto seconds = [&](const char* name, double& out) {
    if (const auto it = g.find(name); it != g.end()) {
      out = parse_seconds(option_named(kBridgeOptions, name), it->second);
    }
  };
  const auto text = [&](const char* name, std::string& out) {
    if (const auto it = g.find(name); it != g.end()) out = it->second;
  };
  o.help = g.contains("--help") || g.contains("-h");
  o.dry_run = g.contains("--dry-run");
  o.json = g.contains("--json");
  seconds("--interval", o.interval);
  o.once = !g.contains("--interval");
  seconds("--grace", o.grace);
  seconds("--timeout", o.timeout);
  if (const auto it = g.find("--policy"); it != g.end()) parse_policy_slots(it->second, o.policy);
  text("--partition", o.partition);
  text("--topology", o.topology);
  text("--signal", o.signal);
  return o;
}

/// The settings of `gres-links`.
struct gres_links_options {
  std::string nodes;                        ///< `--nodes`: the node names (a Slurm hostlist)
  std::string type;                         ///< `--type`: the Type= of every line (empty: none)
  std::string topo;                         ///< `--topo`: a node's `nvidia-smi topo -m` output file
  std::string model;                        ///< `--model`: a built-in node type (e.g. `dgx-a100`)
  std::string file_prefix = "/dev/nvidia";  ///< `--file-prefix`: File= is this and the GPU index
  bool help = false;                        ///< `--help`: print the usage and exit
};

/// `gres-links`'s settings from its arguments (after the word `gres-links`).
/// @throws usage_error naming the option(s), or for --nodes or the topology missing.
[[nodiscard]] inline gres_links_options parse_gres_links_options(
    std::span<const std::string> args) {
  const auto g = parse_command_line(args, kGresLinksOptions, kGresLinksExclusions);
  gres_links_options o;
  o.help = g.contains("--help");
  const auto text = [&](const char* name, std::string& out) {
    if (const auto it = g.find(name); it != g.end()) out = it->second;
  };
  text("--nodes", o.nodes);
  text("--type", o.type);
  text("--topo", o.topo);
  text("--model", o.model);
  text("--file-prefix", o.file_prefix);
  if (!o.help && (o.nodes.empty() || o.topo.empty() == o.model.empty())) {
    throw usage_error(
        "gres-links needs --nodes and one of --topo FILE (nvidia-smi topo -m output) or --model "
        "NAME (dgx1-v100, dgx-a100, dgx-h100, pcie-8gpu)");
  }
  return o;
}

/// The option list of a help text: one line per option with its value, range and help.
[[nodiscard]] inline std::string options_help(std::span<const option_spec> table) {
  std::string out;
  for (const auto& o : table) {
    std::string head = std::string("  ") + o.name;
    if (*o.value != '\0') head += std::string(" ") + o.value;
    if (head.size() < 26) {
      head.resize(26, ' ');
    } else {
      head += "\n" + std::string(26, ' ');
    }
    out += head + o.help;
    if (o.kind == value_kind::seconds) out += " (" + range_text(o) + ")";
    out += '\n';
  }
  return out;
}

}  // namespace slurm

GPUSCHED_END_NAMESPACE
