// SPDX-License-Identifier: Apache-2.0
/// @file
/// `topology_aware_placement`: places a whole gang under as few network domains as possible
/// and, inside each node, on the best-connected GPUs. (`domains_spanned`, to judge a placement,
/// and `fabric_occupancy`, the domain fragmentation score, are in `topology/occupancy.hpp`,
/// which this header includes.)
///
/// Algorithm (Kueue TAS / Slurm topology/tree style, on the `topology_model`'s fabric):
/// 0. A gang without whole-GPU tasks (shares, MIG, CPU only) is placed task by task where the
///    packing policy puts it, as `first_fit_placement` does.
/// 1. The *main group* is the task group asking for the most whole GPUs (ties: the first).
///    Each node's capacity is the number of its tasks that fit now (free whole GPUs, CPU,
///    memory, allowed model; with rail alignment, 1 if the rail mask is free, else 0). Domain
///    capacities are the sums over their members, bottom-up (with slices: rounded down to whole
///    slices at the slice level).
/// 2. Level search, lowest first: one node, then one level-1 domain (leaf), then level 2, ...;
///    at the first level where some domain holds all main tasks, the domain with the *smallest*
///    sufficient capacity wins (best fit; ties: lowest id), so small gangs fill partly used
///    domains and leave empty leaves and NVLink domains to the gangs that need them. With
///    `prefer_previous` and a remembered placement for the job (it ran before: failure or
///    preemption), the sufficient domain closest to that placement wins first: the one whose
///    ancestor at the lowest level holds a node of the previous placement (then best fit). So
///    a requeued gang returns to its old node, else its old leaf, and so on, but never to a
///    higher level than it needs. A
///    `required_level` stops the search there (then: not placed, `reason_code::topology`);
///    without it, a gang that fits no single domain spreads over the top-level domains.
/// 3. Descent: inside the chosen domain, a single child that fits takes everything (best fit);
///    otherwise children are taken largest first and the last one best fit, recursively down to
///    nodes (fewest domains at every level).
/// 4. Each main task goes to its node with the packing policy's `fit` (CPU, memory, checks); its
///    GPUs are then re-chosen on the node with `select_gpus` (or set to the rail mask) when the
///    node has a node type. The other groups follow on the gang's nodes first, then anywhere
///    the packing policy puts them. All in the pipeline's transaction; never evicts.
/// Complexity: O(nodes x L) to build capacities plus O(domains touched x fanout log fanout);
/// with rail alignment, times the number of best-scoring rail masks. Scratch buffers live in
/// the policy, so a warmed-up policy allocates only for the plan it returns.
///
/// Constraints follow Kueue TAS (`podset-required-topology`, `podset-preferred-topology`,
/// `podset-slice-size` + `podset-slice-required-topology`) and Volcano (hard mode with
/// `highestTierAllowed`). The search always starts at the lowest level, so a preferred level is
/// met whenever any domain at or below it fits; `gang_plan::level` tells whether it was.
#pragma once

#include <algorithm>  // std::sort, std::min
#include <bit>        // std::popcount
#include <cstdint>
#include <memory>  // std::shared_ptr
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>  // std::move, std::pair
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/detail/fit.hpp"
#include "gpusched/policy/placement/first_fit.hpp"
#include "gpusched/topology/fabric.hpp"
#include "gpusched/topology/occupancy.hpp"  // domains_spanned
#include "gpusched/topology/select.hpp"
#include "gpusched/workload/history.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Where a gang may go (per job, or the policy default).
struct domain_constraint {
  int required_level = -1;    ///< hard: all main tasks inside one domain of this level (-1 none)
  int preferred_level = -1;   ///< soft: reported in the plan; the search is lowest-first anyway
  int slice_size = 0;         ///< tasks per slice (0: no slices); the task count must divide
  int slice_level = -1;       ///< each slice inside one domain of this level
  bool rail_aligned = false;  ///< every main task uses the same local GPU indices (one per node)
  friend bool operator==(const domain_constraint&, const domain_constraint&) noexcept = default;
};

/// @brief What the placement decided for the main group, and why.
struct gang_plan {
  /// True when the main group can be placed as planned.
  bool ok = false;
  /// The index of the main group (the one with the most GPUs) in the job's `groups`.
  std::size_t main_group = 0;
  int tasks = 0;  ///< main tasks
  /// GPUs each main task needs.
  int gpus_per_task = 0;
  int level = -1;                    ///< level of the chosen domain (0 node .. L+1 spread)
  std::uint32_t domain = 0;          ///< its id at that level
  std::int64_t domain_capacity = 0;  ///< main tasks that domain could take
  int candidates = 0;                ///< domains at that level that could take the gang
  /// With `prefer_previous`: the lowest level at which the chosen domain shares a domain with
  /// the job's previous placement (0: the same node); -1 when there was none to prefer.
  int previous_affinity = -1;
  gpu_mask rail_mask = 0;  ///< with rail alignment: the local GPUs every task uses
  std::vector<std::pair<node_index, int>> nodes;  ///< main tasks per node, in placement order
  reason why;                                     ///< when not ok
};

/// @brief Topology-aware gang placement (see the file comment).
class topology_aware_placement {
 public:
  /// Opts into the placement family.
  using policy_category = placement_tag;

  /// Places by the domains of `model`, with `defaults` for jobs without their own constraint.
  /// @pre `model` is not null.
  explicit topology_aware_placement(std::shared_ptr<const topology_model> model,
                                    domain_constraint defaults = {})
      : model_(std::move(model)), defaults_(defaults) {
    GPUSCHED_EXPECTS(model_ != nullptr);
  }
  /// The policy's name: `topology`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "topology"; }

  /// Prefer, for a job that ran before, the domains closest to its last placement in the
  /// context's job history (`schedule_context::history().placement`, kept by the simulator;
  /// see the file documentation, step 2). Off by default.
  void prefer_previous(bool on = true) noexcept { prefer_previous_ = on; }
  /// As above, reading `memory` instead of the context's history (null: no preference).
  void prefer_previous(std::shared_ptr<const placement_memory> memory) {
    prefer_previous_ = memory != nullptr;
    memory_ = std::move(memory);
  }
  /// True when the placement prefers the domains of a job's previous placement.
  [[nodiscard]] bool prefers_previous() const noexcept { return prefer_previous_; }

  /// Sets the constraint of one job (as Kueue's pod-set annotations do).
  void set_constraint(job_id j, domain_constraint c) { per_job_[j] = c; }
  /// The constraint of job `j`: its own (`set_constraint`), else the defaults.
  [[nodiscard]] const domain_constraint& constraint(job_id j) const noexcept {
    const auto it = per_job_.find(j);
    return it == per_job_.end() ? defaults_ : it->second;
  }
  /// The topology the placement reads.
  [[nodiscard]] const topology_model& model() const noexcept { return *model_; }

  /// Plans the main group of `j` on the current state without changing anything.
  /// @pre the model's fabric covers the cluster (`topology_model::check`).
  [[nodiscard]] gang_plan plan(const schedule_context& ctx, const job_spec& j) {
    previous_ = !prefer_previous_ ? std::span<const node_index>{}
                : memory_         ? memory_->nodes(j.id)
                                  : ctx.history().placement.nodes(j.id);
    gang_plan p = plan_with_previous(ctx, j);
    previous_ = {};  // a view into the memory: never kept past this call
    return p;
  }

 private:
  [[nodiscard]] gang_plan plan_with_previous(const schedule_context& ctx, const job_spec& j) {
    gang_plan p;
    const cluster& c = ctx.state();
    [[maybe_unused]] const fabric& f = model_->network();
    GPUSCHED_EXPECTS(f.level_count() == 0 || f.node_count() == c.node_count());
    // main group
    std::int64_t best = -1;
    for (std::size_t g = 0; g < j.groups.size(); ++g) {
      const auto w = std::int64_t{j.groups[g].request.gpu.whole_gpus().value()} * j.groups[g].count;
      if (w > best) {
        best = w;
        p.main_group = g;
      }
    }
    const auto& grp = j.groups[p.main_group];
    p.tasks = grp.count;
    p.gpus_per_task = grp.request.gpu.whole_gpus().value();
    const domain_constraint& k = constraint(j.id);
    if (k.slice_size > 0 && (p.tasks % k.slice_size != 0 || k.slice_level < 0)) {
      p.why = reason::unschedulable_task(static_cast<std::int32_t>(p.main_group),
                                         resource_kind::gpu, p.tasks, k.slice_size);
      return p;
    }
    if (!k.rail_aligned || p.gpus_per_task == 0) {
      search(c, grp.request, k, 0, p);
      return p;
    }
    // rail alignment: try each best-scoring mask of the first typed node's type
    const node_distances* type = nullptr;
    for (node_index n : c.nodes()) {
      if ((type = model_->node_type(c.topology(n))) != nullptr) break;
    }
    std::vector<gpu_mask> masks;
    if (type != nullptr && p.gpus_per_task <= type->gpu_count()) {
      gpu_set_score top_score;
      bool have = false;
      for (gpu_mask m = 1; m <= type->all(); ++m) {
        if (std::popcount(m) != p.gpus_per_task) continue;
        auto s = score_gpu_set(*type, m, type->all());
        s.leftover_mbps = 0;
        if (!have || better(s, top_score)) {
          masks.assign(1, m);
          top_score = s;
          have = true;
        } else if (!better(top_score, s)) {
          masks.push_back(m);
        }
      }
    } else {
      masks.push_back(p.gpus_per_task >= 32 ? ~gpu_mask{0} : (gpu_mask{1} << p.gpus_per_task) - 1u);
    }
    gang_plan chosen;
    bool first = true;
    for (gpu_mask m : masks) {
      gang_plan q = p;
      search(c, grp.request, k, m, q);
      if (first ||
          (q.ok && (!chosen.ok || q.level < chosen.level ||
                    (q.level == chosen.level && q.domain_capacity < chosen.domain_capacity)))) {
        chosen = std::move(q);
      }
      first = false;
    }
    return chosen;
  }

 public:
  /// Places every task of `j` in `tx` (single tasks through `pk`), or says why it cannot.
  [[nodiscard]] placement_outcome place(const schedule_context& ctx, const job_spec& j,
                                        packing_ref pack, ledger::transaction& tx) {
    if (j.whole_gpus() == gpu_count{0}) {
      // no whole GPU in the gang (shares, MIG, CPU only): nothing to keep close; pack as given
      return first_fit_placement{}.place(ctx, j, pack, tx);
    }
    const gang_plan p = plan(ctx, j);
    if (!p.ok) return {false, p.why};
    const cluster& c = tx.state();
    const auto& grp = j.groups[p.main_group];
    for (const auto& [n, count] : p.nodes) {
      for (int t = 0; t < count; ++t) {
        auto a = pack.fit(ctx, n, grp.request);
        if (!a) return {false, detail::diagnose_unplaced(tx, j, p.main_group)};
        choose_gpus(c, n, grp.request, p.rail_mask, *a);
        a->group = static_cast<std::uint16_t>(p.main_group);
        if (!tx.place(*a)) return {false, detail::diagnose_unplaced(tx, j, p.main_group)};
      }
    }
    for (std::size_t g = 0; g < j.groups.size(); ++g) {
      if (g == p.main_group) continue;
      for (std::int32_t t = 0; t < j.groups[g].count; ++t) {
        std::optional<task_allocation> a;
        for (const auto& nc : p.nodes) {
          if ((a = pack.fit(ctx, nc.first, j.groups[g].request))) break;
        }
        if (!a) a = pack.pack(ctx, j.groups[g].request);
        if (!a) return {false, detail::diagnose_unplaced(tx, j, g)};
        choose_gpus(c, a->node, j.groups[g].request, 0, *a);
        a->group = static_cast<std::uint16_t>(g);
        if (!tx.place(*a)) return {false, detail::diagnose_unplaced(tx, j, g)};
      }
    }
    return {true, reason::placed()};
  }

 private:
  /// Replaces the packing policy's whole-GPU choice by the topology-best set on the node.
  void choose_gpus(const cluster& c, node_index n, const task_request& r, gpu_mask rail,
                   task_allocation& a) const {
    if (r.gpu.kind != gpu_demand_kind::whole) return;
    const node_distances* type = model_->node_type(c.topology(n));
    const auto gpus = c.gpus(n);
    if (type == nullptr || type->gpu_count() != static_cast<int>(gpus.size())) return;
    gpu_mask free = 0;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      if (gpus[i].whole_free()) free |= gpu_mask{1} << i;
    }
    gpu_mask set = rail;
    if (set == 0) {
      const auto s = select_gpus(*type, free, r.gpu.count.value());
      if (!s.ok()) return;
      set = s.gpus;
    }
    if ((set & ~free) != 0) return;
    const auto first = c.first_gpu(n).value();
    a.gpus.clear();
    for (gpu_mask x = set; x != 0; x &= x - 1) {
      a.gpus.push_back({gpu_index{static_cast<gpu_index::rep>(
                            first + static_cast<unsigned>(std::countr_zero(x)))},
                        whole_gpu_milli, 0, false});
    }
  }

  /// Main tasks of request `r` that fit on node `n` now (with a rail mask: 0 or 1).
  static int node_capacity(const cluster& c, node_index n, const task_request& r, gpu_mask rail) {
    if (!detail::host_fits(c, n, r)) return 0;
    std::int64_t k = 0;
    const int g = r.gpu.whole_gpus().value();
    if (g == 0) {
      k = 1 << 20;
    } else if (rail != 0) {
      const auto gpus = c.gpus(n);
      for (gpu_mask x = rail; x != 0; x &= x - 1) {
        const auto i = static_cast<std::size_t>(std::countr_zero(x));
        if (i >= gpus.size() || !gpus[i].whole_free()) return 0;
      }
      k = 1;
    } else {
      k = c.free_whole_gpus(n) / g;
    }
    if (r.cpu > cpu_millis{0}) k = std::min<std::int64_t>(k, c.cpu_free(n).value() / r.cpu.value());
    if (r.memory > memory_mib{0}) {
      k = std::min<std::int64_t>(k, c.memory_free(n).value() / r.memory.value());
    }
    return static_cast<int>(k);
  }

  [[nodiscard]] std::int64_t cap(int l, std::uint32_t d) const noexcept {
    return cap_[static_cast<std::size_t>(l)][d];
  }

  /// Best fit with a tie-break up the tree: `a` beats `b` (both at level `l`) when its capacity
  /// is smaller, or equal and its enclosing domain's capacity is smaller, and so on; then the
  /// lower id. So a small gang goes where it breaks the least empty capacity. O(L).
  [[nodiscard]] bool tighter(int l, std::uint32_t a, std::uint32_t b) const noexcept {
    const fabric& f = model_->network();
    const std::uint32_t a0 = a;
    const std::uint32_t b0 = b;
    for (int k = l; k <= f.level_count() && a != b; ++k) {
      if (cap(k, a) != cap(k, b)) return cap(k, a) < cap(k, b);
      a = f.parent(k, a);
      b = f.parent(k, b);
      if (a == fabric::npos || b == fabric::npos) break;
    }
    return a0 < b0;
  }

  /// Fills `p` (nodes, level, domain) or `p.why`.
  void search(const cluster& c, const task_request& r, const domain_constraint& k, gpu_mask rail,
              gang_plan& p) {
    const fabric& f = model_->network();
    const int levels = f.level_count();
    const int top = levels + 1;
    const std::int64_t slice = k.slice_size > 0 ? k.slice_size : 1;
    const int slice_level = k.slice_size > 0 ? k.slice_level : -1;
    cap_.resize(static_cast<std::size_t>(top) + 1);
    // level 0: nodes
    auto& c0 = cap_[0];
    c0.assign(c.node_count(), 0);
    for (node_index n : c.nodes()) {
      std::int64_t v = node_capacity(c, n, r, rail);
      if (slice_level == 0) v = v / slice * slice;
      c0[n.value()] = v;
    }
    for (int l = 1; l <= levels; ++l) {
      auto& cl = cap_[static_cast<std::size_t>(l)];
      cl.assign(f.domain_count(l), 0);
      for (std::uint32_t d = 0; d < cl.size(); ++d) {
        std::int64_t s = 0;
        for (auto ch : f.children(l, d)) s += cap(l - 1, ch);
        cl[d] = l == slice_level ? s / slice * slice : s;
      }
    }
    std::int64_t all = 0;
    for (auto v : cap_[static_cast<std::size_t>(levels)]) all += v;
    cap_[static_cast<std::size_t>(top)].assign(1, all);
    const std::int64_t need = p.tasks;
    const int stop = k.required_level >= 0 ? std::min(k.required_level, top) : top;
    for (int l = 0; l <= stop; ++l) {
      const auto& cl = cap_[static_cast<std::size_t>(l)];
      std::int64_t best = -1;
      std::uint32_t at = 0;
      int fits = 0;
      int near = top + 1;  // affinity of `at` to the previous placement (lower is closer)
      for (std::uint32_t d = 0; d < cl.size(); ++d) {
        if (cl[d] < need) continue;
        ++fits;
        const int a = previous_.empty() ? top : affinity(l, d);
        if (best < 0 || a < near || (a == near && tighter(l, d, at))) {
          best = cl[d];
          at = d;
          near = a;
        }
      }
      if (best < 0) continue;
      p.previous_affinity = previous_.empty() ? -1 : near;
      p.ok = true;
      p.level = l;
      p.domain = at;
      p.domain_capacity = best;
      p.candidates = fits;
      p.rail_mask = rail;
      p.nodes.clear();
      descend(l, at, need, p);
      return;
    }
    // not placed: say how much the best allowed domain could take
    std::int64_t most = 0;
    for (auto v : cap_[static_cast<std::size_t>(std::max(0, stop))]) most = std::max(most, v);
    const auto g = static_cast<std::int64_t>(p.gpus_per_task > 0 ? p.gpus_per_task : 1);
    const bool topo = stop < top;
    p.why = topo ? reason::topology(static_cast<std::int32_t>(p.main_group), resource_kind::gpu,
                                    need * g, most * g)
                 : reason::insufficient(resource_kind::gpu, need * g, most * g);
  }

  /// The lowest level k >= l at which domain `d` of level `l` (or its ancestor) holds a node of
  /// the previous placement; L+1 when only the root does. O(L x previous nodes).
  [[nodiscard]] int affinity(int l, std::uint32_t d) const noexcept {
    const fabric& f = model_->network();
    const int levels = f.level_count();
    if (l > levels) return levels + 1;
    std::uint32_t a = d;
    for (int k = l; k <= levels; ++k) {
      for (const node_index n : previous_) {
        if (k == 0 ? n.value() == a : n.value() < f.node_count() && f.domain(n, k) == a) return k;
      }
      if (k == levels) break;
      a = f.parent(k, a);
    }
    return levels + 1;
  }

  /// Distributes `need` main tasks inside domain `d` of level `l` (fewest children per level).
  void descend(int l, std::uint32_t d, std::int64_t need, gang_plan& p) {
    if (l == 0) {
      p.nodes.emplace_back(node_index{d}, static_cast<int>(need));
      return;
    }
    const fabric& f = model_->network();
    const int levels = f.level_count();
    // children of the virtual root: every top-level domain (or node)
    std::vector<std::uint32_t>& kids = scratch(l);
    kids.clear();
    if (l > levels) {
      const std::size_t n = cap_[static_cast<std::size_t>(levels)].size();
      for (std::uint32_t x = 0; x < n; ++x) kids.push_back(x);
    } else {
      const auto ch = f.children(l, d);
      kids.assign(ch.begin(), ch.end());
    }
    const int cl = l - 1;
    const auto fits_best = [&](std::size_t from, std::int64_t want) {
      std::size_t at = kids.size();
      for (std::size_t i = from; i < kids.size(); ++i) {
        const auto v = cap(cl, kids[i]);
        if (v >= want && (at == kids.size() || tighter(cl, kids[i], kids[at]))) at = i;
      }
      return at;
    };
    if (const auto one = fits_best(0, need); one != kids.size()) {
      descend(cl, kids[one], need, p);
      return;
    }
    std::sort(kids.begin(), kids.end(), [&](std::uint32_t a, std::uint32_t b) {
      return cap(cl, a) != cap(cl, b) ? cap(cl, a) > cap(cl, b) : a < b;
    });
    std::int64_t left = need;
    for (std::size_t i = 0; i < kids.size() && left > 0; ++i) {
      const auto v = cap(cl, kids[i]);
      if (v == 0) break;
      if (v >= left) {
        const auto at = fits_best(i, left);
        descend(cl, kids[at], left, p);
        return;
      }
      descend(cl, kids[i], v, p);
      left -= v;
    }
  }

  std::vector<std::uint32_t>& scratch(int l) {
    if (kids_.size() <= static_cast<std::size_t>(l)) kids_.resize(static_cast<std::size_t>(l) + 1);
    return kids_[static_cast<std::size_t>(l)];
  }

  std::shared_ptr<const topology_model> model_;
  domain_constraint defaults_;
  std::unordered_map<job_id, domain_constraint> per_job_;
  std::shared_ptr<const placement_memory> memory_;
  bool prefer_previous_ = false;
  std::span<const node_index> previous_;          // the planned job's previous nodes (during plan)
  std::vector<std::vector<std::int64_t>> cap_;    // scratch: capacity per level/domain
  std::vector<std::vector<std::uint32_t>> kids_;  // scratch: children per level
};

static_assert(placement_policy<topology_aware_placement>);

GPUSCHED_END_NAMESPACE
