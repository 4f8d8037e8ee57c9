// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for one text reader, chosen at compile time with GPUSCHED_FUZZ_LOADER
// (1 Philly, 2 Tiresias, 3 openb pod list for replay, 4 Gavel, 5 `nvidia-smi topo -m`, 6 openb
// node list and 7 openb pod list of the packing experiment, 8 the Gittins GPU-time prior,
// 9 gpusched-replay's command line and config file, 10 gpusched-experiment's command line). Any input either loads into a
// well-formed result or throws one of the library's errors (gpusched::error); anything else
// (another exception, a crash, a sanitizer report, a hang, a runaway allocation) is a finding.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#if GPUSCHED_FUZZ_LOADER == 9
#include "replay.hpp"
#endif
#if GPUSCHED_FUZZ_LOADER == 10
#include "experiment_args.hpp"
#endif

#include <gpusched/policy/ordering/las.hpp>
#include <gpusched/topology/distances.hpp>
#include <gpusched/topology/topo_text.hpp>
#include <gpusched/trace/gavel.hpp>
#include <gpusched/trace/openb.hpp>
#include <gpusched/trace/openb_reader.hpp>
#include <gpusched/trace/philly.hpp>
#include <gpusched/trace/tiresias.hpp>

namespace gs = gpusched;

#if GPUSCHED_FUZZ_LOADER == 6 || GPUSCHED_FUZZ_LOADER == 7
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
#if GPUSCHED_FUZZ_LOADER == 6
    const auto nodes = gs::read_openb_nodes(in, "fuzz");
    for (const auto& n : nodes) {
      if (n.name.empty() || n.gpus < 0 || n.gpus > gs::openb_max_gpus || n.cpu_milli < 0 ||
          n.cpu_milli > gs::openb_max_amount || n.memory_mib < 0 ||
          (n.gpus > 0 && n.model.empty())) {
        __builtin_trap();
      }
    }
#else
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
#endif
  } catch (const gs::error&) {
    // Bad input reported the documented way.
  }
  return 0;
}
#elif GPUSCHED_FUZZ_LOADER == 8
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
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
#elif GPUSCHED_FUZZ_LOADER == 9
// The input is a config file's text, then a NUL byte, then the command-line arguments one per
// line (no file is read: --config and the paths are only parsed).
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto nul = text.find('\0');
  const std::string config = nul == std::string::npos ? std::string() : text.substr(0, nul);
  const std::string rest = nul == std::string::npos ? text : text.substr(nul + 1);
  std::vector<std::string> args;
  std::size_t start = 0;
  while (start <= rest.size()) {
    const auto nl = rest.find('\n', start);
    args.push_back(rest.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  if (args.size() == 1 && args[0].empty()) args.clear();
  std::ostringstream err;
  (void)gpusched_experiment::check_replay_arguments(args, config, err);
  return 0;
}
#elif GPUSCHED_FUZZ_LOADER == 10
// The input is gpusched-experiment's arguments (after the program name), one per line; no file
// is read. A usage error is the documented outcome; any other exception is a finding.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto nl = text.find('\n', start);
    args.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  if (args.size() == 1 && args[0].empty()) args.clear();
  if (!args.empty() && args.front() == "replay") return 0;  // replay_args fuzzes that parser
  std::ostringstream err;
  (void)gpusched_experiment::check_experiment_arguments(args, err);
  return 0;
}
#elif GPUSCHED_FUZZ_LOADER == 5
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
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
#else
namespace {
gs::trace load(std::istream& in) {
#if GPUSCHED_FUZZ_LOADER == 1
  return gs::load_philly(in, "fuzz");
#elif GPUSCHED_FUZZ_LOADER == 2
  return gs::load_tiresias(in, "fuzz");
#elif GPUSCHED_FUZZ_LOADER == 3
  return gs::load_openb(in, "fuzz");
#else
  return gs::load_gavel(
      in,
      [](std::string_view type, int scale) -> std::optional<double> {
        if (type.size() % 3 == 0) return std::nullopt;
        return static_cast<double>(scale) * 0.5;
      },
      "fuzz");
#endif
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
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
#endif
