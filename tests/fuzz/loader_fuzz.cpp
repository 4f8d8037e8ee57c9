// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for one text reader, chosen at compile time with GPUSCHED_FUZZ_LOADER
// (1 Philly, 2 Tiresias, 3 openb, 4 Gavel, 5 `nvidia-smi topo -m`). Any input either loads into
// a well-formed result or throws one of the library's errors (gpusched::error); anything else
// (another exception, a crash, a sanitizer report, a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <gpusched/topology/distances.hpp>
#include <gpusched/topology/topo_text.hpp>
#include <gpusched/trace/gavel.hpp>
#include <gpusched/trace/openb_reader.hpp>
#include <gpusched/trace/philly.hpp>
#include <gpusched/trace/tiresias.hpp>

namespace gs = gpusched;

#if GPUSCHED_FUZZ_LOADER == 5
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
