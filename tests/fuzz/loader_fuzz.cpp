// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for every text reader, one binary: the reader is chosen when the fuzzer
// starts, by the name the program is run under (fuzz_<reader>, a link to fuzz_loaders made at
// build time) or by GPUSCHED_FUZZ_TARGET=<reader>. The readers: philly, tiresias, openb (pod list
// for replay), gavel, topo (`nvidia-smi topo -m`), openb_nodes and openb_pods (the packing
// experiment's node and pod lists), prior (the Gittins GPU-time prior), replay_args
// (gpusched-replay's command line and config file), experiment_args (gpusched-experiment's
// command line). One binary instead of ten saves nine sanitizer builds of the same headers; the
// coverage the fuzzer follows is that of the chosen reader. Any input either loads into a
// well-formed result or throws one of the library's errors (gpusched::error); anything else
// (another exception, a crash, a sanitizer report, a hang, a runaway allocation) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "experiment_args.hpp"
#include "replay.hpp"

#include <gpusched/policy/ordering/las.hpp>
#include <gpusched/topology/distances.hpp>
#include <gpusched/topology/topo_text.hpp>
#include <gpusched/trace/gavel.hpp>
#include <gpusched/trace/openb.hpp>
#include <gpusched/trace/openb_reader.hpp>
#include <gpusched/trace/philly.hpp>
#include <gpusched/trace/tiresias.hpp>

namespace gs = gpusched;

namespace {

using fuzz_fn = int (*)(const std::uint8_t*, std::size_t);

// The openb node list of the packing experiment.
int fuzz_openb_nodes(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const auto nodes = gs::read_openb_nodes(in, "fuzz");
    for (const auto& n : nodes) {
      if (n.name.empty() || n.gpus < 0 || n.gpus > gs::openb_max_gpus || n.cpu_milli < 0 ||
          n.cpu_milli > gs::openb_max_amount || n.memory_mib < 0 ||
          (n.gpus > 0 && n.model.empty())) {
        __builtin_trap();
      }
    }
  } catch (const gs::error&) {
    // Bad input reported the documented way.
  }
  return 0;
}

// The openb pod list of the packing experiment.
int fuzz_openb_pods(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const auto pods = gs::read_openb_pods(in, "fuzz");
    for (const auto& p : pods) {
      if (p.num_gpu < 0 || p.num_gpu > gs::openb_max_gpus || p.gpu_milli < 0 ||
          p.gpu_milli > 1000 || (p.num_gpu == 0) != (p.gpu_milli == 0) || p.cpu_milli < 0 ||
          p.cpu_milli > gs::openb_max_amount) {
        __builtin_trap();
      }
      for (const auto& m : p.gpu_spec) {
        if (m.empty()) __builtin_trap();
      }
    }
  } catch (const gs::error&) {
    // Bad input reported the documented way.
  }
  return 0;
}

// The Gittins GPU-time prior.
int fuzz_prior(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const auto prior = gs::gpu_time_prior::read_csv(in, "fuzz");
    if (prior.size() == 0) __builtin_trap();
    for (const double x : prior.samples()) {
      if (!(x >= 0)) __builtin_trap();
    }
    (void)prior.quantile(0.5);
  } catch (const gs::error&) {
    // Bad input reported the documented way.
  }
  return 0;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> args;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto nl = text.find('\n', start);
    args.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  if (args.size() == 1 && args[0].empty()) args.clear();
  return args;
}

// gpusched-replay: the input is a config file's text, then a NUL byte, then the command-line
// arguments one per line (no file is read: --config and the paths are only parsed).
int fuzz_replay_args(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto nul = text.find('\0');
  const std::string config = nul == std::string::npos ? std::string() : text.substr(0, nul);
  const std::string rest = nul == std::string::npos ? text : text.substr(nul + 1);
  std::ostringstream err;
  (void)gpusched_experiment::check_replay_arguments(split_lines(rest), config, err);
  return 0;
}

// gpusched-experiment: the input is its arguments (after the program name), one per line; no
// file is read. A usage error is the documented outcome; any other exception is a finding.
int fuzz_experiment_args(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto args = split_lines(text);
  if (!args.empty() && args.front() == "replay") return 0;  // replay_args fuzzes that parser
  std::ostringstream err;
  (void)gpusched_experiment::check_experiment_arguments(args, err);
  return 0;
}

// `nvidia-smi topo -m`.
int fuzz_topo(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const gs::topo_matrix m = gs::parse_topo_matrix(text, {.file = "fuzz"});
    const auto gpus = static_cast<std::size_t>(m.topology.gpu_count());
    // One affinity entry per GPU; the distance tables of a small node are symmetric and
    // non-negative (larger nodes are skipped: their tables take 2^n subsets to build).
    if (m.cpu_affinity.size() != gpus || m.numa.size() != gpus) __builtin_trap();
    if (gpus <= 8) {
      const gs::node_distances d(m.topology);
      for (int a = 0; a < d.gpu_count(); ++a) {
        for (int b = 0; b < d.gpu_count(); ++b) {
          if (d.bottleneck()(a, b) < 0 || d.bottleneck()(a, b) != d.bottleneck()(b, a)) {
            __builtin_trap();
          }
        }
      }
    }
  } catch (const gs::error&) {
    // Bad input reported the documented way.
  }
  return 0;
}

// The trace loaders: any trace they return is well formed.
template <class Load>
int fuzz_trace(const std::uint8_t* data, std::size_t size, Load load) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const gs::trace t = load(in);
    for (std::size_t i = 0; i < t.jobs.size(); ++i) {
      const auto& j = t.jobs[i];
      if (j.duration < gs::sim_duration{0} || j.gpus < 0) __builtin_trap();
      if (i > 0 && t.jobs[i - 1].submit > j.submit) __builtin_trap();
      if (j.tenant.value() >= t.tenants.size() && !t.tenants.empty()) __builtin_trap();
      if (j.gpu_spec >= t.gpu_specs.size()) __builtin_trap();
    }
  } catch (const gs::error&) {
    // Bad input reported the documented way.
  }
  return 0;
}

int fuzz_philly(const std::uint8_t* data, std::size_t size) {
  return fuzz_trace(data, size, [](std::istream& in) { return gs::load_philly(in, "fuzz"); });
}
int fuzz_tiresias(const std::uint8_t* data, std::size_t size) {
  return fuzz_trace(data, size, [](std::istream& in) { return gs::load_tiresias(in, "fuzz"); });
}
int fuzz_openb(const std::uint8_t* data, std::size_t size) {
  return fuzz_trace(data, size, [](std::istream& in) { return gs::load_openb(in, "fuzz"); });
}
int fuzz_gavel(const std::uint8_t* data, std::size_t size) {
  return fuzz_trace(data, size, [](std::istream& in) {
    return gs::load_gavel(
        in,
        [](std::string_view type, int scale) -> std::optional<double> {
          if (type.size() % 3 == 0) return std::nullopt;
          return static_cast<double>(scale) * 0.5;
        },
        "fuzz");
  });
}

struct target {
  const char* name;
  fuzz_fn run;
};
constexpr target targets[] = {
    {"philly", fuzz_philly},         {"tiresias", fuzz_tiresias},
    {"openb", fuzz_openb},           {"gavel", fuzz_gavel},
    {"topo", fuzz_topo},             {"openb_nodes", fuzz_openb_nodes},
    {"openb_pods", fuzz_openb_pods}, {"prior", fuzz_prior},
    {"replay_args", fuzz_replay_args}, {"experiment_args", fuzz_experiment_args},
};

fuzz_fn chosen = nullptr;

}  // namespace

// Chooses the reader: GPUSCHED_FUZZ_TARGET if set, else the program's name after "fuzz_".
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  std::string name;
  if (const char* env = std::getenv("GPUSCHED_FUZZ_TARGET"); env != nullptr && *env != '\0') {
    name = env;
  } else if (*argc > 0) {
    std::string_view program = (*argv)[0];
    if (const auto slash = program.rfind('/'); slash != std::string_view::npos) {
      program.remove_prefix(slash + 1);
    }
    if (program.starts_with("fuzz_")) name = std::string(program.substr(5));
  }
  for (const auto& t : targets) {
    if (name == t.name) {
      chosen = t.run;
      return 0;
    }
  }
  std::fprintf(stderr,
               "fuzz_loaders: no reader chosen ('%s'): run it as fuzz_<reader> or set "
               "GPUSCHED_FUZZ_TARGET to one of:",
               name.c_str());
  for (const auto& t : targets) std::fprintf(stderr, " %s", t.name);
  std::fprintf(stderr, "\n");
  std::exit(2);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return chosen(data, size);
}
