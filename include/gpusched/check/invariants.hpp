// SPDX-License-Identifier: Apache-2.0
/// @file
/// The invariant checker: recomputes, from the ledger's records alone, what every GPU, MIG slot,
/// node CPU and memory should have free, and compares with the cluster's state. For users'
/// tests, the simulator's debug mode, and our property tests.
///
/// Checked: no GPU share, MIG slot, replica, CPU or memory is over-committed; cluster free
/// amounts and caches (free whole GPUs, free replicas, totals) equal capacity minus what the
/// ledger records; replica grants only on replicated GPUs and nothing else there; the MPS
/// per-replica memory limit is memory / replicas and every replica's memory ask fits it; every
/// running gang is whole (each group runs between its minimum and its count, every task's grants
/// match its request, on its own node, on an allowed model); nodes out of service and failed GPUs
/// hold nothing and offer nothing to the indexes (a failed GPU reads as fully occupied), and the
/// out-of-service counts match. O(nodes + GPUs + running tasks).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/workload/ledger.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief What the checker found; `ok()` when nothing.
struct invariant_report {
  /// One sentence per violated invariant; empty when the ledger is consistent.
  std::vector<std::string> violations;
  /// True when no invariant is violated.
  [[nodiscard]] bool ok() const noexcept { return violations.empty(); }
  /// All violations, one per line.
  [[nodiscard]] std::string to_string() const {
    std::string s;
    for (const auto& v : violations) s += v + "\n";
    return s;
  }
};

namespace detail {
inline bool grant_matches(const task_request& r, const task_allocation& a, const cluster& c) {
  if (a.cpu != r.cpu || a.memory != r.memory) return false;
  return r.gpu.visit(
      [&](demand_none) { return a.gpus.empty(); },
      [&](demand_whole w) {
        if (a.gpus.size() != static_cast<std::size_t>(w.count.value())) return false;
        for (const auto& g : a.gpus) {
          if (g.milli != whole_gpu_milli || g.mig_slots != 0) return false;
        }
        return true;
      },
      [&](demand_share sh) {
        return a.gpus.size() == 1 && a.gpus[0].milli == sh.share && a.gpus[0].mig_slots == 0;
      },
      [&](demand_mig m) {
        if (a.gpus.size() != 1 || a.gpus[0].milli != milli_gpu{0}) return false;
        const auto& s = c.gpu(a.gpus[0].gpu);
        const mig_profile* p = c.catalog()[s.model].mig.find(m.compute, m.memory, a.gpus[0].media);
        if (p == nullptr) return false;
        for (unsigned st = 0; st < 8; ++st) {
          if (((p->placement_starts >> st) & 1u) != 0 && p->slots_at(st) == a.gpus[0].mig_slots)
            return true;
        }
        return false;
      },
      [&](demand_replica rep) {
        if (a.gpus.size() != 1 || !a.gpus[0].replica || a.gpus[0].milli != milli_gpu{0} ||
            a.gpus[0].mig_slots != 0)
          return false;
        const auto& s = c.gpu(a.gpus[0].gpu);
        const memory_mib limit =
            s.sharing == gpu_sharing::mps ? s.replica_memory : c.catalog()[s.model].memory;
        return rep.gpu_memory <= limit;
      });
}
}  // namespace detail

/// Checks every invariant of `book`; see the file documentation.
[[nodiscard]] inline invariant_report check_invariants(const ledger& book) {
  invariant_report rep;
  const cluster& c = book.state();
  auto fail = [&](std::string s) { rep.violations.push_back(std::move(s)); };
  std::vector<std::int64_t> milli(c.gpu_count(), 0);
  std::vector<mig_slot_mask> slots(c.gpu_count(), 0);
  std::vector<int> instances(c.gpu_count(), 0), media(c.gpu_count(), 0);
  std::vector<int> replicas(c.gpu_count(), 0);
  std::vector<cpu_millis> cpu(c.node_count());
  std::vector<memory_mib> mem(c.node_count());

  for (const auto& r : book.running()) {
    const std::string jw = "job " + std::to_string(r.spec.id.value());
    std::vector<std::int32_t> per_group(r.spec.groups.size(), 0);
    for (const auto& t : r.tasks) {
      if (t.group >= r.spec.groups.size()) {
        fail(jw + ": task with group " + std::to_string(t.group) + " out of range");
        continue;
      }
      ++per_group[t.group];
      if (t.node.value() >= c.node_count()) {
        fail(jw + ": task on unknown node position " + std::to_string(t.node.value()));
        continue;
      }
      if (!c.available(t.node)) fail(jw + ": task on node " + c.name(t.node) + ", out of service");
      const auto& req = r.spec.groups[t.group].request;
      if (!detail::grant_matches(req, t, c)) {
        fail(jw + " group " + std::to_string(t.group) + ": allocation does not match request");
      }
      cpu[t.node.value()] += t.cpu;
      mem[t.node.value()] += t.memory;
      const auto lo = c.first_gpu(t.node).value();
      const auto hi = lo + c.gpus(t.node).size();
      for (const auto& g : t.gpus) {
        const auto gi = g.gpu.value();
        if (gi < lo || gi >= hi) {
          fail(jw + ": grant on GPU " + std::to_string(gi) + " not on its node");
          continue;
        }
        if (req.gpu.kind != gpu_demand_kind::none &&
            !req.allowed_models.admits(c.gpu(g.gpu).model)) {
          fail(jw + ": GPU " + std::to_string(gi) + " is of a model the request excludes");
        }
        milli[gi] += g.milli.value();
        if ((slots[gi] & g.mig_slots) != 0) {
          fail(jw + ": MIG slots of GPU " + std::to_string(gi) + " granted twice");
        }
        slots[gi] = static_cast<mig_slot_mask>(slots[gi] | g.mig_slots);
        if (g.mig_slots != 0) ++instances[gi];
        if (g.media) ++media[gi];
        if (g.replica) ++replicas[gi];
      }
    }
    for (std::size_t g = 0; g < per_group.size(); ++g) {
      const auto& grp = r.spec.groups[g];
      if (per_group[g] < grp.minimum() || per_group[g] > grp.count) {
        fail(jw + " group '" + grp.name + "': runs " + std::to_string(per_group[g]) +
             " tasks, outside " + std::to_string(grp.minimum()) + ".." + std::to_string(grp.count) +
             " (gang not whole)");
      }
    }
  }

  std::int64_t failed_total = 0;  // failed GPUs, and those on nodes in service
  std::int64_t failed_up = 0;
  std::int64_t free_whole_total = 0;
  std::int64_t free_replica_total = 0;
  std::int64_t replica_total = 0;
  cpu_millis cpu_total{};
  memory_mib mem_total{};
  for (node_index n : c.nodes()) {
    const auto& nm = c.name(n);
    if (cpu[n.value()] > c.cpu_capacity(n)) fail("node " + nm + ": CPU over-committed");
    if (mem[n.value()] > c.memory_capacity(n)) fail("node " + nm + ": memory over-committed");
    if (c.cpu_free(n) != c.cpu_capacity(n) - cpu[n.value()])
      fail("node " + nm + ": CPU free mismatch");
    if (c.memory_free(n) != c.memory_capacity(n) - mem[n.value()])
      fail("node " + nm + ": memory free mismatch");
    cpu_total += c.cpu_free(n);
    mem_total += c.memory_free(n);
    int whole = 0;
    int free_reps = 0;
    const auto lo = c.first_gpu(n).value();
    for (std::size_t k = 0; k < c.gpus(n).size(); ++k) {
      const auto gi = lo + k;
      const auto& g = c.gpu(gpu_index{static_cast<gpu_index::rep>(gi)});
      const std::string gw = "node " + nm + " gpu" + std::to_string(k);
      if (milli[gi] > whole_gpu_milli.value()) fail(gw + ": share over-committed");
      replica_total += g.replicas;
      if (g.failed) {  // out of service: nothing granted, reads as fully occupied
        ++failed_total;
        if (c.available(n)) ++failed_up;
        if (milli[gi] != 0 || slots[gi] != 0 || replicas[gi] != 0)
          fail(gw + ": failed GPU holds a grant");
        const mig_slot_mask all =
            g.mig_enabled && g.model.valid()
                ? static_cast<mig_slot_mask>((1u << c.catalog()[g.model].mig.memory_slices) - 1u)
                : mig_slot_mask{0};
        if (g.free != milli_gpu{0} || g.replicas_used != g.replicas || g.mig_used != all)
          fail(gw + ": failed GPU offers capacity");
        continue;
      }
      if (g.replicated()) {
        if (g.mig_enabled) fail(gw + ": replicated GPU in MIG mode");
        if (milli[gi] != 0 || slots[gi] != 0) fail(gw + ": share or MIG slots on a replicated GPU");
        if (g.free != milli_gpu{0}) fail(gw + ": replicated GPU offers a milli share");
        if (g.replicas == 0) fail(gw + ": replicated GPU with no replicas");
        if (replicas[gi] > g.replicas) fail(gw + ": replicas over-committed");
        if (replicas[gi] != g.replicas_used) fail(gw + ": replica use mismatch");
        const memory_mib limit = g.sharing == gpu_sharing::mps
                                     ? memory_mib{c.catalog()[g.model].memory.value() / g.replicas}
                                     : memory_mib{0};
        if (g.replicas != 0 && g.replica_memory != limit)
          fail(gw + ": per-replica memory limit mismatch");
        free_reps += g.free_replicas();
        continue;
      }
      if (replicas[gi] != 0 || g.replicas != 0 || g.replicas_used != 0)
        fail(gw + ": replicas on an exclusive GPU");
      if (g.mig_enabled) {
        if (milli[gi] != 0) fail(gw + ": share granted on a MIG GPU");
        if (g.mig_used != slots[gi]) fail(gw + ": MIG slot occupancy mismatch");
        if (g.mig_instances != instances[gi]) fail(gw + ": MIG instance count mismatch");
        if (media[gi] > 1) fail(gw + ": more than one +me instance");
      } else {
        if (slots[gi] != 0) fail(gw + ": MIG slots granted on a non-MIG GPU");
        if (g.free.value() != whole_gpu_milli.value() - milli[gi])
          fail(gw + ": free share mismatch");
        whole += g.whole_free() ? 1 : 0;
      }
    }
    if (!c.available(n)) {  // a node out of service offers nothing to the indexes
      whole = 0;
      free_reps = 0;
    }
    if (whole != c.free_whole_gpus(n)) fail("node " + nm + ": free whole GPU cache mismatch");
    if (free_reps != c.free_replicas(n)) fail("node " + nm + ": free replica cache mismatch");
    free_whole_total += whole;
    free_replica_total += free_reps;
  }
  if (free_whole_total != c.total_free_whole_gpus()) fail("cluster: free whole GPU total mismatch");
  if (free_replica_total != c.total_free_replicas()) fail("cluster: free replica total mismatch");
  if (replica_total != c.total_replicas()) fail("cluster: replica total mismatch");
  std::size_t down = 0;
  std::int64_t down_gpus = 0;
  for (node_index n : c.nodes()) {
    if (c.available(n)) continue;
    ++down;
    down_gpus += static_cast<std::int64_t>(c.gpus(n).size());
    if (c.max_free_share(n) != milli_gpu{0})
      fail("node " + c.name(n) + ": out of service, offers a share");
  }
  if (down != c.unavailable_nodes() || down_gpus + failed_up != c.unavailable_gpus())
    fail("cluster: out-of-service node count mismatch");
  if (failed_total != c.failed_gpus()) fail("cluster: failed GPU count mismatch");
  if (cpu_total != c.total_free_cpu()) fail("cluster: free CPU total mismatch");
  if (mem_total != c.total_free_memory()) fail("cluster: free memory total mismatch");
  return rep;
}

GPUSCHED_END_NAMESPACE
