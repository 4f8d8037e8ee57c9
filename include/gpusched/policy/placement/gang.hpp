// SPDX-License-Identifier: Apache-2.0
/// @file
/// `gang_placement`: all-or-nothing placement of heterogeneous gangs (several task groups with
/// different requests), complete where the instance is small and fast where it is large, with
/// elastic (min..max) sizing.
///
/// How a gang of a given size is placed, in one transaction:
/// 1. first fit in the job's group order with the packing policy; then first fit with the
///    groups taken largest first (GPUs, then CPU, then memory per task);
/// 2. if both miss and the gang has at most `max_exact_tasks` tasks and at most
///    `max_exact_nodes` nodes could host any of its tasks, an exact depth-first search over
///    task -> (node, GPU choice) assignments decides: it finds a placement whenever one exists
///    (up to `search_budget` search nodes; the budget is never reached on gangs of 8 tasks on
///    16 nodes of 8 GPUs in our tests, and when it is the attempt counts as a miss).
///    The search breaks symmetry (identical tasks take non-decreasing choices; idle GPUs of a
///    node are interchangeable; shares choose among distinct free amounts; MIG instances among
///    distinct GPU occupancies and their legal start slots).
///
/// Elastic gangs (some group with `min_count < count`): the full size is tried first; then the
/// shortest reduction `x` in `0..D`, `D = sum(count - minimum)`, is found by bisection, where a
/// reduction removes `x` tasks spread over the elastic groups in proportion to their slack
/// (largest remainder, ties to the earlier group), as Kueue's partial admission searches the
/// total delta. Bisection assumes that a smaller gang fits whenever a larger one does.
///
/// Complexity: heuristics O(tasks x packing cost); exact search bounded by `search_budget`;
/// elastic sizing O(log D) attempts.
#pragma once

#include <algorithm>  // std::sort
#include <cstdint>
#include <string_view>
#include <utility>  // std::cmp_less, std::pair
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/detail/fit.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief All-or-nothing gang placement; see the file documentation.
struct gang_placement {
  /// Opts into the placement family.
  using policy_category = placement_tag;
  int max_exact_tasks = 8;                  ///< larger gangs use the heuristics only
  int max_exact_nodes = 16;                 ///< more candidate nodes: heuristics only
  std::uint64_t search_budget = 2'000'000;  ///< search nodes of one exact attempt

  /// The policy's name: `gang`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "gang"; }

  /// Places every task of `j` in `tx` (single tasks through `pk`), or says why it cannot.
  [[nodiscard]] placement_outcome place(const schedule_context& ctx, const job_spec& j,
                                        packing_ref pack, ledger::transaction& tx) const {
    std::vector<std::int32_t> sizes;
    for (const auto& g : j.groups) sizes.push_back(g.count);
    attempt_stats stats;
    const auto base = tx.mark();  // the caller may have evicted victims before this point
    if (place_sized(ctx, j, sizes, pack, tx, stats)) return placed();
    std::int64_t slack = 0;
    for (const auto& g : j.groups) slack += g.count - g.minimum();
    if (slack > 0 && place_sized(ctx, j, detail::reduced_sizes(j, slack), pack, tx, stats)) {
      tx.rollback_to(base);
      std::int64_t lo = 0;      // a reduction known not to fit (the full size)
      std::int64_t hi = slack;  // a reduction known to fit (the minimum)
      while (hi - lo > 1) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        if (place_sized(ctx, j, detail::reduced_sizes(j, mid), pack, tx, stats)) {
          tx.rollback_to(base);
          hi = mid;
        } else {
          lo = mid;
        }
      }
      if (place_sized(ctx, j, detail::reduced_sizes(j, hi), pack, tx, stats)) return placed();
    }
    return {false, stats.why};
  }

  friend constexpr bool operator==(const gang_placement&, const gang_placement&) noexcept = default;

 private:
  struct attempt_stats {
    std::int32_t best_placed = -1;  ///< most tasks any heuristic attempt placed
    reason why;                     ///< diagnosed where that attempt stopped
  };
  struct task_ref {
    std::uint16_t group;
    const task_request* request;
  };

  static placement_outcome placed() { return {true, reason::placed()}; }

  /// Places the gang at `sizes` (tasks per group) into `tx`, or leaves `tx` as it was.
  bool place_sized(const schedule_context& ctx, const job_spec& j,
                   const std::vector<std::int32_t>& sizes, packing_ref pack,
                   ledger::transaction& tx, attempt_stats& stats) const {
    std::vector<task_ref> tasks;
    for (std::size_t g = 0; g < j.groups.size(); ++g) {
      for (std::int32_t t = 0; t < sizes[g]; ++t) {
        tasks.push_back({static_cast<std::uint16_t>(g), &j.groups[g].request});
      }
    }
    const auto sp = tx.mark();
    if (greedy(ctx, j, tasks, pack, tx, stats)) return true;
    tx.rollback_to(sp);
    std::vector<task_ref> largest = tasks;
    // Heaviest first; equal weights keep group order (tasks of one group are interchangeable).
    std::sort(largest.begin(), largest.end(), [](const task_ref& a, const task_ref& b) {
      if (heavier(*a.request, *b.request)) return true;
      if (heavier(*b.request, *a.request)) return false;
      return a.group < b.group;
    });
    if (greedy(ctx, j, largest, pack, tx, stats)) return true;
    tx.rollback_to(sp);
    if (static_cast<int>(tasks.size()) > max_exact_tasks) return false;
    std::vector<node_index> nodes;
    if (!candidate_nodes(tx.state(), j, nodes)) return false;  // too many for the exact search
    std::uint64_t budget = search_budget;
    if (search(tx, largest, 0, nodes, 0, budget)) return true;
    tx.rollback_to(sp);
    return false;
  }

  static bool heavier(const task_request& a, const task_request& b) noexcept {
    const auto ga =
        a.gpu.milli().value() + (a.gpu.kind == gpu_demand_kind::mig ? a.gpu.mig_memory * 125 : 0);
    const auto gb =
        b.gpu.milli().value() + (b.gpu.kind == gpu_demand_kind::mig ? b.gpu.mig_memory * 125 : 0);
    if (ga != gb) return ga > gb;
    if (a.cpu != b.cpu) return a.cpu > b.cpu;
    return a.memory > b.memory;
  }

  static bool greedy(const schedule_context& ctx, const job_spec& j,
                     const std::vector<task_ref>& tasks, packing_ref pack, ledger::transaction& tx,
                     attempt_stats& stats) {
    std::int32_t placed_count = 0;
    for (const task_ref& t : tasks) {
      auto a = pack.pack(ctx, *t.request);
      if (a) a->group = t.group;
      if (!a || !tx.place(*a)) {
        if (placed_count > stats.best_placed) {  // diagnose where the best attempt stopped
          stats.best_placed = placed_count;
          stats.why = detail::diagnose_unplaced(tx, j, t.group);
          stats.why.tasks_placed = placed_count;
        }
        return false;
      }
      ++placed_count;
    }
    return true;
  }

  /// Nodes where at least one task of `j` fits on its own, or false if more than
  /// `max_exact_nodes`. Uses the cluster's indexes: O(groups x candidates x log nodes).
  bool candidate_nodes(const cluster& c, const job_spec& j, std::vector<node_index>& out) const {
    out.clear();
    const auto limit = static_cast<std::size_t>(max_exact_nodes);
    auto add = [&](node_index n) {
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
      return out.size() <= limit;
    };
    for (const auto& g : j.groups) {
      const auto& r = g.request;
      const bool mig = r.gpu.kind == gpu_demand_kind::mig;
      const bool all_visited = detail::for_each_candidate_node(c, r, [&](node_index n) {
        const bool fits = detail::host_fits(c, n, r) && (!mig || any_mig_option(c, n, r));
        return !fits || add(n);
      });
      if (!all_visited) return false;
    }
    std::sort(out.begin(), out.end());
    return true;
  }

  static bool any_mig_option(const cluster& c, node_index n, const task_request& r) {
    const auto base = c.first_gpu(n).value();
    for (std::size_t k = 0; k < c.gpus(n).size(); ++k) {
      if (detail::first_free_mig_slot(c, gpu_index{base + static_cast<gpu_index::rep>(k)}, r.gpu))
        return true;
    }
    return false;
  }

  /// Exact search: places tasks[i..] or returns false having undone its own placements.
  /// Consecutive identical tasks (same group) take non-decreasing nodes: any placement can be
  /// permuted into that form, so no solution is lost.
  static bool search(ledger::transaction& tx, const std::vector<task_ref>& tasks, std::size_t i,
                     const std::vector<node_index>& nodes, std::size_t min_node,
                     std::uint64_t& budget) {
    if (i == tasks.size()) return true;
    const task_ref& t = tasks[i];
    const bool same_as_next = i + 1 < tasks.size() && tasks[i + 1].group == t.group;
    std::vector<task_allocation> options;
    for (std::size_t ni = min_node; ni < nodes.size(); ++ni) {
      options.clear();
      node_options(tx.state(), nodes[ni], *t.request, options);
      for (auto& option : options) {
        if (budget == 0) return false;
        --budget;
        option.group = t.group;
        const auto sp = tx.mark();
        if (!tx.place(option)) continue;
        if (search(tx, tasks, i + 1, nodes, same_as_next ? ni : 0, budget)) return true;
        tx.rollback_to(sp);
      }
    }
    return false;
  }

  /// The distinct ways one task can sit on node `n` (see the file documentation).
  static void node_options(const cluster& c, node_index n, const task_request& r,
                           std::vector<task_allocation>& out) {
    if (!detail::host_fits(c, n, r)) return;
    task_allocation a;
    a.node = n;
    a.cpu = r.cpu;
    a.memory = r.memory;
    const auto base = c.first_gpu(n).value();
    const auto gpus = c.gpus(n);
    r.gpu.visit(
        [&](demand_none) { out.push_back(a); },
        [&](demand_whole w) {
          if (c.free_whole_gpus(n) < w.count.value()) return;
          for (std::size_t k = 0; k < gpus.size() && std::cmp_less(a.gpus.size(), w.count.value());
               ++k) {
            if (gpus[k].whole_free()) {
              a.gpus.push_back(
                  {gpu_index{base + static_cast<gpu_index::rep>(k)}, whole_gpu_milli, 0, false});
            }
          }
          out.push_back(a);
        },
        [&](demand_share s) {
          std::vector<std::int32_t> seen;
          for (std::size_t k = 0; k < gpus.size(); ++k) {
            if (gpus[k].mig_enabled || gpus[k].free < s.share) continue;
            if (std::find(seen.begin(), seen.end(), gpus[k].free.value()) != seen.end()) continue;
            seen.push_back(gpus[k].free.value());
            auto b = a;
            b.gpus.push_back({gpu_index{base + static_cast<gpu_index::rep>(k)}, s.share, 0, false});
            out.push_back(b);
          }
        },
        [&](demand_mig m) {
          std::vector<std::pair<mig_slot_mask, bool>> seen;
          for (std::size_t k = 0; k < gpus.size(); ++k) {
            const auto& g = gpus[k];
            if (!g.mig_enabled) continue;
            const std::pair<mig_slot_mask, bool> key{g.mig_used, g.mig_media_used};
            if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
            seen.push_back(key);
            const mig_profile* p = c.catalog()[g.model].mig.find(m.compute, m.memory);
            if (p == nullptr) continue;
            for (unsigned start = 0; start < 8; ++start) {
              if (((p->placement_starts >> start) & 1u) == 0) continue;
              const auto slots = p->slots_at(start);
              if ((g.mig_used & slots) != 0) continue;
              auto b = a;
              b.gpus.push_back({gpu_index{base + static_cast<gpu_index::rep>(k)}, milli_gpu{0},
                                slots, p->media_extension});
              out.push_back(b);
            }
          }
        },
        [&](demand_replica) {
          // GPUs with the same free replicas and mode are interchangeable.
          std::vector<std::pair<int, gpu_sharing>> seen;
          for (std::size_t k = 0; k < gpus.size(); ++k) {
            if (!detail::replica_fits(c, gpus[k], r.gpu)) continue;
            const std::pair<int, gpu_sharing> key{gpus[k].free_replicas(), gpus[k].sharing};
            if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
            seen.push_back(key);
            auto b = a;
            b.gpus.push_back(
                detail::replica_grant(gpu_index{base + static_cast<gpu_index::rep>(k)}));
            out.push_back(b);
          }
        });
  }
};

static_assert(placement_policy<gang_placement>);

GPUSCHED_END_NAMESPACE
