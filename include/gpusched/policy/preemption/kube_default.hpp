// SPDX-License-Identifier: Apache-2.0
/// @file
/// `kube_default_preemption`: the kube-scheduler DefaultPreemption plugin's victim selection,
/// as a baseline (it ignores checkpoints), plus `node_fits_after`, an exact per-node fit test
/// after freeing some allocations.
///
/// Behaviour (from the upstream plugin and KEP-5710, re-implemented here):
/// - Victims: running, preemptible jobs of strictly lower priority, evicted whole.
/// - A preemptor with one task (a pod): for every node, remove all its potential victims; if the
///   task then fits there, reprieve victims from the most important down (higher priority,
///   then earlier start), keeping each one whose return still lets the task fit. Among the
///   nodes, pick by (1) lowest highest-victim priority, (2) lowest sum of victim priorities,
///   (3) fewest victims, (4) latest start of the highest-priority victims (the earliest start
///   among them), (5) first node. (PodDisruptionBudgets do not exist here, so the PDB keys are
///   left out.) The pipeline's probe verifies the chosen node's victims; on failure the next
///   node in that order is tried.
/// - A gang (KEP-5710 workload-aware preemption): remove every potential victim cluster-wide
///   and probe once; then reprieve victims as units from the most important down (higher
///   priority, then earlier start, then larger), each reprieve verified by a probe.
/// Probes: single task, 1 per node tried; gang, 1 + one per potential victim.
/// Complexity: O(R x T) to collect victims, O(N x V log V) per-node work.
/// `cost` only annotates the plan (victim actions and lost GPU-seconds); it never steers it.
#pragma once

#include <algorithm>  // std::sort, std::find, std::min
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/preemption/cost.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief True when one task of `r` fits on node `n` once the allocations `freed` (any node;
/// only those on `n` count) are returned. Exact for every demand kind (whole GPUs, a share, a
/// MIG instance at a valid placement, a replica within its memory limit), CPU, memory and
/// allowed models. O(GPUs of n + freed
/// grants).
[[nodiscard]] inline bool node_fits_after(const cluster& c, node_index n, const task_request& r,
                                          std::span<const task_allocation* const> freed) {
  std::int64_t cpu = c.cpu_free(n).value();
  std::int64_t mem = c.memory_free(n).value();
  const auto gpus = c.gpus(n);
  const auto first = c.first_gpu(n).value();
  std::int32_t milli[max_gpus_per_node] = {};
  mig_slot_mask used[max_gpus_per_node] = {};
  int reps[max_gpus_per_node] = {};
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    milli[i] = gpus[i].free.value();
    used[i] = gpus[i].mig_used;
    reps[i] = gpus[i].free_replicas();
  }
  for (const task_allocation* a : freed) {
    if (a->node != n) continue;
    cpu += a->cpu.value();
    mem += a->memory.value();
    for (const auto& g : a->gpus) {
      const auto i = g.gpu.value() - first;
      milli[i] += g.milli.value();
      used[i] = static_cast<mig_slot_mask>(used[i] & ~g.mig_slots);
      if (g.replica) ++reps[i];
    }
  }
  if (r.cpu.value() > cpu || r.memory.value() > mem) return false;
  if (r.gpu.kind == gpu_demand_kind::none) return true;
  if (!c.model(n).valid() || !r.allowed_models.admits(c.model(n))) return false;
  switch (r.gpu.kind) {
    case gpu_demand_kind::whole: {
      int whole = 0;
      for (std::size_t i = 0; i < gpus.size(); ++i) {
        whole += !gpus[i].mig_enabled && milli[i] == whole_gpu_milli.value() ? 1 : 0;
      }
      return whole >= r.gpu.count.value();
    }
    case gpu_demand_kind::share:
      for (std::size_t i = 0; i < gpus.size(); ++i) {
        if (!gpus[i].mig_enabled && milli[i] >= r.gpu.share.value()) return true;
      }
      return false;
    case gpu_demand_kind::mig:
      for (std::size_t i = 0; i < gpus.size(); ++i) {
        if (!gpus[i].mig_enabled) continue;
        const mig_profile* p =
            c.catalog()[gpus[i].model].mig.find(r.gpu.mig_compute, r.gpu.mig_memory);
        if (p == nullptr) continue;
        for (unsigned st = 0; st < 8; ++st) {
          if (((p->placement_starts >> st) & 1u) != 0 && (used[i] & p->slots_at(st)) == 0) {
            return true;
          }
        }
      }
      return false;
    case gpu_demand_kind::replica:
      for (std::size_t i = 0; i < gpus.size(); ++i) {
        if (!gpus[i].replicated() || reps[i] <= 0) continue;
        const memory_mib limit = gpus[i].sharing == gpu_sharing::mps
                                     ? gpus[i].replica_memory
                                     : c.catalog()[gpus[i].model].memory;
        if (r.gpu.gpu_memory <= limit) return true;
      }
      return false;
    case gpu_demand_kind::none:
      break;
  }
  return true;
}

/// @brief kube-scheduler DefaultPreemption victim selection; see the file documentation.
struct kube_default_preemption {
  /// Opts into the preemption family.
  using policy_category = preemption_tag;
  preemption_cost_model cost;  ///< annotates the plan only

  /// The policy's name: `kube-default`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "kube-default"; }

  /// The victims (and shrinks) that make room for `j`, verified with the probe; an empty plan
  /// with its reason when no admissible set exists.
  [[nodiscard]] preemption_plan select(const schedule_context& ctx, const job_spec& j,
                                       fit_probe probe) const {
    std::vector<const running_job*> pot;
    for (const auto& r : ctx.book().running()) {
      if (r.spec.preemptible && r.spec.priority < j.priority && r.spec.id != j.id) {
        pot.push_back(&r);
      }
    }
    // more important first: higher priority, earlier start, larger, then lower id
    const auto more_important = [](const running_job* a, const running_job* b) {
      if (a->spec.priority != b->spec.priority) return a->spec.priority > b->spec.priority;
      if (a->start != b->start) return a->start < b->start;
      if (a->tasks.size() != b->tasks.size()) return a->tasks.size() > b->tasks.size();
      return a->spec.id < b->spec.id;
    };
    std::sort(pot.begin(), pot.end(), more_important);
    std::vector<job_id> victims;
    if (j.task_count() == 1) {
      victims = per_node(ctx, j, pot, probe);
    } else {
      victims = gang(pot, probe);
    }
    preemption_plan plan;
    if (victims.empty()) {
      plan.why = reason::no_victims(static_cast<std::int64_t>(pot.size()));
      return plan;
    }
    std::sort(victims.begin(), victims.end());
    for (const job_id v : victims) {
      const auto o = cost.evict(ctx.state(), *ctx.book().find(v), ctx.now());
      plan.details.push_back({v, o.action, -1, -1, o.gpus, o.lost_gpu_seconds, o.wait});
      plan.lost_gpu_seconds += o.lost_gpu_seconds;
    }
    plan.victims = std::move(victims);
    plan.why = reason::placed_by_preemption();
    return plan;
  }

  friend bool operator==(const kube_default_preemption&, const kube_default_preemption&) noexcept {
    return true;
  }

 private:
  struct node_choice {
    node_index node;
    std::vector<const running_job*> victims;
    std::int32_t max_priority = std::numeric_limits<std::int32_t>::min();
    std::int64_t sum_priority = 0;
    sim_time earliest_top{};  ///< earliest start among the highest-priority victims
  };

  static std::vector<job_id> per_node(const schedule_context& ctx, const job_spec& j,
                                      const std::vector<const running_job*>& pot, fit_probe probe) {
    const cluster& c = ctx.state();
    const task_request& req = j.groups.front().request;
    // potential victims per node, keeping the importance order
    std::vector<std::vector<const running_job*>> on(c.node_count());
    for (const running_job* r : pot) {
      for (const auto& t : r->tasks) {
        auto& v = on[t.node.value()];
        if (v.empty() || v.back() != r) v.push_back(r);
      }
    }
    std::vector<node_choice> choices;
    std::vector<const task_allocation*> freed;
    const auto free_of = [&](node_index n, const std::vector<const running_job*>& js) {
      freed.clear();
      for (const running_job* r : js) {
        for (const auto& t : r->tasks) {
          if (t.node == n) freed.push_back(&t);
        }
      }
    };
    for (const node_index n : c.nodes()) {
      auto& all = on[n.value()];
      if (all.empty()) continue;
      free_of(n, all);
      if (!node_fits_after(c, n, req, freed)) continue;
      // reprieve from the most important down
      std::vector<const running_job*> removed = all;
      node_choice ch;
      ch.node = n;
      for (const running_job* r : all) {
        std::vector<const running_job*> without;
        for (const running_job* x : removed) {
          if (x != r) without.push_back(x);
        }
        free_of(n, without);
        if (node_fits_after(c, n, req, freed)) {
          removed = std::move(without);  // reprieved
        } else {
          ch.victims.push_back(r);
        }
      }
      if (ch.victims.empty()) continue;
      for (const running_job* r : ch.victims) {
        ch.sum_priority += r->spec.priority;
        ch.max_priority = std::max(ch.max_priority, r->spec.priority);
      }
      bool first = true;
      for (const running_job* r : ch.victims) {
        if (r->spec.priority != ch.max_priority) continue;
        if (first || r->start < ch.earliest_top) ch.earliest_top = r->start;
        first = false;
      }
      choices.push_back(std::move(ch));
    }
    // std::sort with the node position as the last key (std::stable_sort trips a libstdc++
    // deprecation warning under clang)
    std::sort(choices.begin(), choices.end(), [](const node_choice& a, const node_choice& b) {
      if (a.max_priority != b.max_priority) return a.max_priority < b.max_priority;
      if (a.sum_priority != b.sum_priority) return a.sum_priority < b.sum_priority;
      if (a.victims.size() != b.victims.size()) return a.victims.size() < b.victims.size();
      if (a.earliest_top != b.earliest_top) return a.earliest_top > b.earliest_top;  // latest
      return a.node < b.node;                                                        // first
    });
    std::vector<job_id> ids;
    for (const auto& ch : choices) {
      ids.clear();
      for (const running_job* r : ch.victims) ids.push_back(r->spec.id);
      if (probe(ids)) return ids;
    }
    return {};
  }

  static std::vector<job_id> gang(const std::vector<const running_job*>& pot, fit_probe probe) {
    std::vector<job_id> victims;
    for (const running_job* r : pot) victims.push_back(r->spec.id);
    if (victims.empty() || !probe(victims)) return {};
    std::vector<job_id> without;
    for (const running_job* r : pot) {  // most important first
      without.clear();
      for (const job_id v : victims) {
        if (v != r->spec.id) without.push_back(v);
      }
      if (!without.empty() && probe(without)) victims = without;
    }
    return victims;
  }
};

static_assert(preemption_policy<kube_default_preemption>);

GPUSCHED_END_NAMESPACE
