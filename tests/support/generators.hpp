// SPDX-License-Identifier: Apache-2.0
// Seeded random clusters and jobs for property tests and benchmarks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <gpusched/gpusched.hpp>

namespace gpusched::testing {

/// A random cluster: `nodes` nodes with 0, 1, 2, 4 or 8 GPUs of a random model from the basic
/// catalog, some A100-40GB nodes in MIG mode, random CPU and memory.
inline std::vector<node_spec> random_nodes(random_engine& g, std::size_t nodes,
                                           bool allow_mig = true) {
  static constexpr const char* models[] = {"V100-SXM2-32GB", "T4", "A10", "A100-SXM4-40GB",
                                           "H100-SXM5-80GB"};
  static constexpr int gpu_counts[] = {0, 1, 2, 4, 8, 8};
  std::vector<node_spec> out;
  for (std::size_t i = 0; i < nodes; ++i) {
    node_spec s;
    s.id = node_id{static_cast<node_id::rep>(i + 1)};
    s.name = "n" + std::to_string(i);
    s.gpus = gpu_count{gpu_counts[uniform_index(g, 6)]};
    s.gpu_model = models[uniform_index(g, 5)];
    s.mig_enabled = allow_mig && s.gpus > gpu_count{0} &&
                    s.gpu_model == std::string("A100-SXM4-40GB") && uniform_index(g, 2) == 0;
    s.cpu = cpu_millis{static_cast<std::int64_t>(8 + uniform_index(g, 57)) * 1000};
    s.memory = memory_mib{static_cast<std::int64_t>(32 + uniform_index(g, 480)) * 1024};
    out.push_back(std::move(s));
  }
  return out;
}

/// A random task request of any kind (CPU-only, whole, share, MIG).
inline task_request random_request(random_engine& g, const gpu_catalog& cat) {
  task_request r;
  switch (uniform_index(g, 6)) {
    case 0:
      r.gpu = gpu_demand::none();
      break;
    case 1:
    case 2: {
      static constexpr int counts[] = {1, 1, 2, 4, 8};
      r.gpu = gpu_demand::whole(gpu_count{counts[uniform_index(g, 5)]});
      break;
    }
    case 3:
    case 4:
      r.gpu = gpu_demand::fraction(milli_gpu{static_cast<int>(50 + uniform_index(g, 951))});
      break;
    default: {
      static constexpr std::uint8_t mig[][2] = {{1, 1}, {1, 2}, {2, 2}, {3, 4}, {4, 4}, {7, 8}};
      const auto k = uniform_index(g, 6);
      r.gpu = gpu_demand::mig(mig[k][0], mig[k][1]);
    }
  }
  r.cpu = cpu_millis{static_cast<std::int64_t>(uniform_index(g, 16000))};
  r.memory = memory_mib{static_cast<std::int64_t>(uniform_index(g, 64 * 1024))};
  if (r.gpu.kind != gpu_demand_kind::none && uniform_index(g, 4) == 0) {
    const gpu_model_id m{static_cast<gpu_model_id::rep>(uniform_index(g, cat.size()))};
    // a MIG demand only on a model with its profile (validation refuses others, issue 36)
    if (r.gpu.kind != gpu_demand_kind::mig ||
        cat[m].mig.find(r.gpu.mig_compute, r.gpu.mig_memory)) {
      r.allowed_models.insert(m);
    }
  }
  return r;
}

/// A random gang: 1..3 groups of 1..`max_tasks` tasks, random priority and preemptibility.
inline job_spec random_job(random_engine& g, const gpu_catalog& cat, job_id id, sim_time submit,
                           int max_tasks = 4) {
  job_spec j;
  j.id = id;
  j.name = "j" + std::to_string(id.value());
  j.tenant = tenant_id{static_cast<tenant_id::rep>(uniform_index(g, 4))};
  j.priority = static_cast<std::int32_t>(uniform_index(g, 3));
  j.submit = submit;
  j.preemptible = uniform_index(g, 4) != 0;
  const auto groups = 1 + uniform_index(g, 3);
  for (std::size_t k = 0; k < groups; ++k) {
    j.groups.push_back({.name = "g" + std::to_string(k),
                        .request = random_request(g, cat),
                        .count = static_cast<std::int32_t>(
                            1 + uniform_index(g, static_cast<std::uint64_t>(max_tasks)))});
  }
  return j;
}

/// A homogeneous cluster of `nodes` nodes with `gpus` GPUs of `model` each.
inline std::vector<node_spec> uniform_nodes(std::size_t nodes, int gpus,
                                            const char* model = "H100-SXM5-80GB") {
  std::vector<node_spec> out;
  for (std::size_t i = 0; i < nodes; ++i) {
    out.push_back({.id = node_id{static_cast<node_id::rep>(i + 1)},
                   .name = "n" + std::to_string(i),
                   .gpu_model = model,
                   .gpus = gpu_count{gpus},
                   .cpu = cpu_millis{128000},
                   .memory = memory_mib{1024 * 1024}});
  }
  return out;
}

}  // namespace gpusched::testing
