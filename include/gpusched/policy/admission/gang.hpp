// SPDX-License-Identifier: Apache-2.0
/// @file
/// `gang_admission`: the strict all-or-nothing baseline. A gang is admitted to placement unless
/// it can never run on this cluster (then it is rejected with the cause); placement places it
/// whole or not at all. When a gang does not fit, the queue either goes on (best effort, the
/// default) or blocks (strict FIFO).
#pragma once

#include <cstdint>
#include <string_view>

#include "gpusched/config.hpp"
#include "gpusched/policy/concepts.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief All-or-nothing gang admission with a head-of-line knob.
///
/// `admit` rejects (reason `unschedulable`) a gang whose whole-GPU total exceeds the cluster's
/// GPUs, or one of whose tasks exceeds the largest node in GPUs of an allowed model, CPU or
/// memory. These are necessary conditions only: a gang that passes may still never fit (for
/// example when no single node has both the GPUs and the CPU); it is then deferred every cycle
/// with a `no_fit` reason. Complexity O(groups x allowed models).
struct gang_admission {
  using policy_category = admission_tag;
  /// Strict FIFO: when a gang does not fit, every later job waits this cycle.
  bool strict_fifo = false;

  [[nodiscard]] constexpr std::string_view name() const noexcept {
    return strict_fifo ? "gang-strict" : "gang";
  }

  [[nodiscard]] admission_verdict admit(const schedule_context& ctx, const job_spec& j) const {
    const cluster& c = ctx.state();
    if (j.whole_gpus().value() > c.total_gpus()) {
      return {verdict::reject, reason{reason_code::unschedulable,
                                      resource_kind::gpu,
                                      j.whole_gpus().value(),
                                      c.total_gpus(),
                                      -1,
                                      {},
                                      {}}};
    }
    for (std::size_t g = 0; g < j.groups.size(); ++g) {
      const auto& r = j.groups[g].request;
      const auto gi = static_cast<std::int32_t>(g);
      if (r.gpu.kind == gpu_demand_kind::whole) {
        const int most = largest_node_gpus(c, r.allowed_models);
        if (r.gpu.count.value() > most) {
          return {verdict::reject, reason{reason_code::unschedulable,
                                          resource_kind::gpu,
                                          r.gpu.count.value(),
                                          most,
                                          gi,
                                          {},
                                          {}}};
        }
      }
      if (r.cpu > c.max_node_cpu()) {
        return {verdict::reject, reason{reason_code::unschedulable,
                                        resource_kind::cpu,
                                        r.cpu.value(),
                                        c.max_node_cpu().value(),
                                        gi,
                                        {},
                                        {}}};
      }
      if (r.memory > c.max_node_memory()) {
        return {verdict::reject, reason{reason_code::unschedulable,
                                        resource_kind::memory,
                                        r.memory.value(),
                                        c.max_node_memory().value(),
                                        gi,
                                        {},
                                        {}}};
      }
    }
    return {verdict::admit, {}};
  }

  [[nodiscard]] queue_action on_unplaced(const schedule_context& /*ctx*/, const job_spec& /*j*/,
                                         const reason& /*why*/) const noexcept {
    return strict_fifo ? queue_action::block : queue_action::skip;
  }

  friend constexpr bool operator==(gang_admission, gang_admission) noexcept = default;

 private:
  static int largest_node_gpus(const cluster& c, gpu_model_set allowed) noexcept {
    if (allowed.empty()) return c.max_node_gpus();
    int most = 0;
    for (std::size_t m = 0; m < c.catalog().size(); ++m) {
      const gpu_model_id id{static_cast<gpu_model_id::rep>(m)};
      if (allowed.contains(id)) most = std::max(most, c.max_node_gpus(id));
    }
    return most;
  }
};

static_assert(admission_policy<gang_admission>);

GPUSCHED_END_NAMESPACE
