// SPDX-License-Identifier: Apache-2.0
/// @file
/// `checkpoint_aware_preemption`: frees room for an urgent gang at the least lost work.
///
/// ## What it chooses
/// Among the running jobs it may preempt, the set of *options* (evict a job whole, or shrink an
/// elastic job to its minimum) of minimum total cost (lost GPU-seconds, see
/// `policy/preemption/cost.hpp`) after which the preemptor can be placed, verified by the
/// pipeline's `fit_probe` (a real placement in a rolled-back transaction).
///
/// ## Who may be a victim (all must hold)
/// - running, `preemptible`, not the preemptor, and running for at least `min_runtime`
///   (Slurm's `PreemptExemptTime`);
/// - priority strictly below the preemptor's, **or** quota reclaim (`reclaim = true`, Kueue's
///   `reclaimWithinCohort: Any`): the victim's tenant borrows above its nominal quota, the
///   preemptor's tenant stays within its nominal quota with the preemptor, and the victim's
///   tenant is still borrowing before its last reclaimed victim goes (Kueue removes candidates
///   of a queue only while that queue borrows);
/// - with a fair-share strategy, a victim of another tenant B also needs (shares are borrowed
///   GPU above nominal over the tenant's weight, Kueue's DRS restricted to GPUs):
///   `LessThanOrEqualToFinalShare`: share(A with the preemptor) <= share(B without all its
///   victims); `LessThanInitialShare`: share(A with the preemptor) < share(B before its last
///   victim goes). Either makes A->B then B->A impossible (no 2-cycles, Kueue's argument for
///   flat cohorts); the property tests simulate sequences.
/// - victims are whole gangs (or shrunk, never below a group's minimum);
/// - when `needs_single_domain(preemptor)` holds, every task the plan releases lies in one
///   topology domain (`domain_of(cluster, node)`, by default the node's topology handle), and
///   the plan is the cheapest over all domains;
/// - thrash protection: a job preempted less than `thrash_window` ago (recorded by
///   `on_preempted`, which the pipeline calls after committing, or by `note_preempted`) is used
///   only if no plan without such jobs exists.
///
/// ## How (and how fast)
/// 1. One pass over the running jobs keeps the admissible ones and sums, per node, what they
///    could free. Only nodes where that raises the number of tasks of some preemptor group the
///    node could host are *helpful*; only jobs with a task on a helpful node become candidates
///    (pruning; exact for one-group preemptors, a heuristic filter for multi-group gangs whose
///    groups compete for one node).
/// 2. A cheap necessary condition (the *bound*) tests a set without probing: for every group,
///    the tasks all nodes could host (per node: whole GPUs that become idle, counted per GPU
///    so that two jobs sharing a GPU are both needed; shares, MIG slices, CPU,
///    memory, allowed models) reach the group's count, and the totals suffice. It never
///    rejects a set the probe would accept.
/// 3. Exact (up to `exact_limit` candidate jobs): sets are enumerated in nondecreasing cost
///    (best-first over subsets sorted by cost, each subset once); the first set that is
///    admissible, passes the bound and passes the probe is a minimum-cost set. Probes happen
///    only on sets passing the bound. Bounded by `enumeration_budget` subsets and `max_probes`
///    probes; `last_stats().exact` says whether the search completed.
/// 4. Heuristic (more candidates): *node plans* (per helpful node, its cheapest options per
///    GPU freed there until the node can host one more preemptor task; an option counts
///    everything it releases on the node, e.g. both tasks of a job with two there), taken cheapest
///    per task gained until the bound holds; then the exact search, limited to `heuristic_budget`
///    subsets, over the jobs of those plans and the next ones (up to `exact_limit` jobs); if
///    that finds nothing, more plans until the probe passes, then a reprieve pass (drop the
///    most expensive victims while the preemptor still fits). Its optimality gap is measured
///    in `benchmarks/preemption/preemption_select.bench.cpp`.
/// 5. Screening (large instances, the `screen_nodes` option): when more than `screen_nodes`
///    + 2 x (preemptor tasks) nodes are helpful, every helpful node's plan of step 4 is
///    estimated from compact copies made in the one pass over the running jobs (each job's
///    eviction and shrink costs computed once, in that pass, while it is in cache; per node,
///    its tasks' options sorted by cost per GPU freed until the node hosts one more task;
///    unlike the node plans it counts only the ranked task of a job with several there),
///    and only the nodes with the cheapest estimates per task gained are searched (options
///    are built for their jobs only). Nodes are ranked in one pass keeping the best so far;
///    a node whose *lower bound* already ranks after the worst of them is skipped without
///    sorting or walking its tasks (the bound: the GPU milli the node must free for one more
///    task of the least demanding group, `need`; only tasks freeing at most the `slack` left
///    by all its tasks can stay, so the plan costs at least the sum of all minus theirs, over
///    at most `max_gain` tasks gained). Exact: the kept nodes are those of a full ranking
///    (`screen_bound = false` computes every plan; a test compares the two). If they give no plan
///    (e.g. set-level quota or fair-share conditions rule their victims out), all helpful nodes are
///    searched: screening never turns a feasible preemption into none. `last_stats()` reports
///    `screened_out` and `rescanned`; the benchmark reports the lost work against screening
///    off.
/// Complexity: O(R + T log T + N x G) for R running jobs with T tasks on N nodes and G
/// preemptor groups, plus the search: O(2^k (log 2^k + k x G)) worst case for
/// k <= exact_limit candidates, typically a few subsets; with screening the search sees only
/// the candidates on the screened nodes. No allocation once warmed up (scratch is reused).
///
/// ## Quota reclaim on free resources
/// With `reclaim` on, `select_reclaim` serves the pipeline's free-quota preemption path (see
/// `policy/preemption/reclaim.hpp`): the cluster has room but the cohort's quota is lent out.
/// Candidates are the scope's borrowers' jobs that are preemptible and past `min_runtime`,
/// offered cheapest eviction first (lost GPU-seconds, then id; jobs inside their thrash window
/// last) to `reclaim_victims`, which counts them by the quota they return (its probe asks the
/// admission policy). Victims are evicted whole; the plan carries their actions and costs.
///
/// A scope with Kueue's structure (a queue with Kueue preemption settings, see
/// `quota_admission::set_preemption`) is served whether `reclaim` is on or not: the queue's
/// settings decide who may be a victim (`withinClusterQueue`, `reclaimWithinCohort`,
/// `borrowWithinCohort`), and the lost-work objective orders the victims among them: by the
/// scope's group first (borrowers before the preemptor's own queue, Kueue's rule), then
/// cheapest eviction as above, run by run (`reclaim_in_runs`).
///
/// The plan gives each victim's action (requeue from checkpoint, suspend, shrink to N, signal
/// then wait) and cost, the total lost GPU-seconds, and the preemptor's placement in the
/// verifying probe; when no admissible set exists, nobody is evicted and the reason says how
/// much room was needed and how much the admissible candidates could give.
#pragma once

#include <algorithm>  // std::sort, std::push_heap, std::pop_heap, std::min, std::max
#include <bit>        // std::popcount
#include <cmath>      // std::isnan
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <utility>  // std::move, std::pair
#include <vector>

#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/hooks.hpp"
#include "gpusched/policy/preemption/cost.hpp"
#include "gpusched/policy/preemption/quota_tree_view.hpp"  // tenant_quota_from
#include "gpusched/policy/preemption/reclaim.hpp"
#include "gpusched/workload/quota.hpp"  // tenant_quota, quota_view

GPUSCHED_BEGIN_NAMESPACE

/// Kueue's fair-sharing preemption strategies.
enum class fair_share_strategy : std::uint8_t {
  none,                            ///< no fair-share condition
  less_than_or_equal_final_share,  ///< LessThanOrEqualToFinalShare
  less_than_initial_share,         ///< LessThanInitialShare
};

/// Maps a node to its topology domain (same value: same domain).
using domain_function = std::function<std::uint32_t(const cluster&, node_index)>;

/// @brief What the last `select` did (for tests, benchmarks and explanations).
struct preemption_search_stats {
  std::size_t running = 0;         ///< running jobs scanned
  std::size_t admissible = 0;      ///< admissible victims (before pruning)
  std::size_t candidates = 0;      ///< candidate jobs on helpful nodes (after pruning)
  std::size_t options = 0;         ///< candidate options (evict, shrink)
  std::size_t domains = 0;         ///< domains searched
  std::size_t subsets = 0;         ///< subsets enumerated by the exact search
  std::size_t probes = 0;          ///< fit probes made
  bool exact = true;               ///< the result is a proven minimum (exact search completed)
  bool used_recent = false;        ///< thrash protection had to be lifted
  std::size_t screened_out = 0;    ///< helpful nodes the screen left out (0: no screening)
  std::size_t screen_bounded = 0;  ///< of the screened nodes: plans skipped by the lower bound
  bool rescanned = false;          ///< the screened nodes gave no plan: all nodes were searched
};

/// @brief Options of `checkpoint_aware_preemption`; see the file documentation.
struct checkpoint_aware_options {
  /// How the lost work of each option is priced (`policy/preemption/cost.hpp`).
  preemption_cost_model cost{};
  sim_duration min_runtime{0};    ///< jobs younger than this are exempt
  sim_duration thrash_window{0};  ///< recently preempted jobs are a last resort
  bool allow_shrink = true;       ///< elastic jobs may shrink instead of being evicted
  /// Quota reclaim from borrowing tenants (reads `quotas`, or the run's quota tree).
  bool reclaim = false;
  /// Kueue's fair-sharing strategy (reads `quotas`, or the run's quota tree).
  fair_share_strategy fair_share = fair_share_strategy::none;
  /// Each tenant's quota position, for reclaim and the fair-share strategies. Empty (the
  /// default): the run's quota tree (`schedule_context::quotas()`, the pipeline's environment),
  /// with usage counted from the ledger and weights from the run's tenant tree; no positions
  /// when the run has no quota tree.
  quota_view quotas{};
  domain_function domain_of{};                                 ///< empty: `cluster::topology(node)`
  std::function<bool(const job_spec&)> needs_single_domain{};  ///< empty: never
  std::size_t exact_limit = 20;  ///< exact search up to this many candidate jobs (at most 31)
  std::size_t max_probes = 64;   ///< probes per select
  std::size_t enumeration_budget = 1u << 22;  ///< subsets per exact search
  std::size_t heuristic_budget = 256;         ///< subsets for the exact step inside the heuristic
  /// Screening of large instances: when more than `screen_nodes` + 2 x (preemptor tasks)
  /// nodes are helpful, only that many are searched, those whose cheapest single-node
  /// eviction plan costs least per preemptor task; all are searched if they give no plan.
  /// 0: never screen.
  std::size_t screen_nodes = 16;
  /// Screening skips the node plans of nodes whose lower bound (cost of freeing the GPU milli
  /// one more task needs, see `screen_slots`) already ranks them out; false computes every
  /// node plan (the reference for tests: the kept nodes, hence the plan, are the same).
  bool screen_bound = true;
};

namespace detail {
struct ca_demand {
  gpu_demand_kind kind = gpu_demand_kind::none;
  std::int64_t k = 0;  ///< whole GPUs / share milli / MIG memory slices per task
  std::int64_t cpu = 0, mem = 0, count = 0;
  gpu_model_set allowed;
};
struct ca_res {
  std::int64_t whole = 0, milli = 0, slices = 0, cpu = 0, mem = 0;
  ca_res& operator+=(const ca_res& o) noexcept {
    whole += o.whole;
    milli += o.milli;
    slices += o.slices;
    cpu += o.cpu;
    mem += o.mem;
    return *this;
  }
};
struct ca_grant {
  std::uint32_t gpu = 0;  ///< position of the GPU on its node
  std::int32_t milli = 0;
};
struct ca_effect {
  std::uint32_t slot = 0;
  ca_res freed;  ///< `whole` unused: whole GPUs are counted per GPU from the grants
  std::uint32_t grant_begin = 0, grant_end = 0;
};
struct ca_job {
  const running_job* r = nullptr;
  bool recent = false;
  bool reclaim = false;  ///< admissible only through quota reclaim
  std::uint32_t domain = 0;
  bool one_domain = true;
};
struct ca_item {
  std::uint32_t job = 0;  ///< index into the candidate jobs
  preemption_option opt;
  std::uint32_t eff_begin = 0, eff_end = 0;  ///< effects on helpful slots
  std::uint32_t ord_begin = 0, ord_end = 0;  ///< shrink orders
  ca_res total;                              ///< everything released (all nodes)
};
struct ca_slot {
  node_index node;
  ca_res base;
  std::int64_t gpus = 0;  ///< non-MIG GPUs on the node
  gpu_model_id model;
  bool mig = false;
  std::uint32_t domain = 0;
};
struct ca_entry {
  double key = 0;  ///< cost per milli-GPU the option frees on the node
  std::uint32_t item = 0, effect = 0;
};
struct ca_plan {
  double cost = 0;
  double gain = 0;  ///< tasks the node gains
  std::uint32_t begin = 0, end = 0;
};
struct ca_screen_entry {
  double key = 0;          ///< cost per milli-GPU the task frees
  std::uint32_t task = 0;  ///< index into the admissible jobs' tasks (ordered as the jobs)
};
/// A task of an admissible job, copied in the one pass over the running jobs.
struct ca_task {
  std::uint32_t node = 0, job = 0;               ///< node position; index into admissible jobs
  std::uint32_t grant_begin = 0, grant_end = 0;  ///< its non-MIG grants
  ca_res freed;             ///< what it frees (`whole`: its non-MIG GPUs, an upper bound)
  bool shrinkable = false;  ///< released when the job shrinks to its minimum
};
struct ca_heap_node {
  double cost;
  std::uint64_t mask;
  std::uint32_t last;
};
}  // namespace detail

/// @brief Checkpoint-aware, gang-atomic, topology- and quota-aware victim selection; see the
/// file documentation. Stateful only for thrash protection (the preemption history) and
/// reusable scratch; copying copies both.
class checkpoint_aware_preemption {
 public:
  /// Opts into the preemption family.
  using policy_category = preemption_tag;
  /// The optional hooks it implements, called by the pipeline (`policy/hooks.hpp`).
  using hooks = hook_list<hook::on_preempted, hook::select_reclaim>;

  checkpoint_aware_preemption() = default;
  /// @throws invalid_value_error for invalid options (negative durations, zero limits).
  explicit checkpoint_aware_preemption(checkpoint_aware_options o) : opt_(std::move(o)) {
    opt_.cost.validate();
    if (opt_.min_runtime < sim_duration{0} || opt_.thrash_window < sim_duration{0}) {
      throw invalid_value_error(
          error_id::invalid_value, "checkpoint-aware preemption",
          opt_.min_runtime < sim_duration{0} ? "min_runtime" : "thrash_window", "negative",
          "must not be negative");
    }
    if (opt_.exact_limit > 31 || opt_.max_probes == 0) {
      throw invalid_value_error(error_id::invalid_value, "checkpoint-aware preemption",
                                opt_.max_probes == 0 ? "max_probes" : "exact_limit",
                                std::to_string(opt_.max_probes == 0 ? 0 : opt_.exact_limit),
                                "exact_limit must be at most 31 and max_probes positive");
    }
  }

  /// The policy's name: `checkpoint-aware`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "checkpoint-aware"; }
  /// The options it was made with.
  [[nodiscard]] const checkpoint_aware_options& options() const noexcept { return opt_; }
  /// How the last `select` searched (candidates, subsets, probes, whether it was exact).
  [[nodiscard]] const preemption_search_stats& last_stats() const noexcept { return stats_; }

  /// Records that `id` was preempted at `when` (for thrash protection). O(1) amortised.
  void note_preempted(job_id id, sim_time when) {
    for (auto& h : history_) {
      if (h.first == id) {
        h.second = std::max(h.second, when);
        return;
      }
    }
    history_.emplace_back(id, when);
  }
  /// Pipeline hook: records the victims of a committed plan.
  void on_preempted(const schedule_context& ctx, const job_spec& /*preemptor*/,
                    const preemption_plan& plan) {
    for (const job_id v : plan.victims) note_preempted(v, ctx.now());
    for (const auto& s : plan.shrinks) note_preempted(s.job, ctx.now());
  }
  /// Whether `id` is inside its thrash window at `now`.
  [[nodiscard]] bool recently_preempted(job_id id, sim_time now) const noexcept {
    if (opt_.thrash_window <= sim_duration{0}) return false;
    for (const auto& h : history_) {
      if (h.first == id) return now - h.second < opt_.thrash_window;
    }
    return false;
  }

  /// Quota reclaim on free resources (the file documentation, last section): no victims unless
  /// `reclaim` is on or the scope has Kueue's structure. O(C log C) for C candidates plus the
  /// probes of `reclaim_in_runs`.
  /// @throws invalid_value_error for bad checkpoint data or weights of a candidate.
  [[nodiscard]] preemption_plan select_reclaim(const schedule_context& ctx, const job_spec& j,
                                               const reclaim_scope& scope, fit_probe probe) {
    preemption_plan none;
    none.why = reason::no_victims();
    if (!opt_.reclaim && !scope.structured()) return none;
    const sim_time now = ctx.now();
    forget_old(now);
    struct ranked {
      std::uint8_t group;
      bool recent;
      preemption_option opt;
      job_id id;
      std::uint32_t index;
    };
    const auto cand = scope.candidates();
    std::vector<ranked> rank;
    for (std::size_t i = 0; i < cand.size(); ++i) {
      const running_job& r = *cand[i];
      if (r.spec.id == j.id || !r.spec.preemptible || now - r.start < opt_.min_runtime) continue;
      rank.push_back({scope.group(i), recently_preempted(r.spec.id, now),
                      opt_.cost.evict(ctx.state(), r, now), r.spec.id,
                      static_cast<std::uint32_t>(i)});
    }
    if (rank.empty()) return none;
    std::sort(rank.begin(), rank.end(), [](const ranked& a, const ranked& b) {
      if (a.group != b.group) return a.group < b.group;
      if (a.recent != b.recent) return !a.recent;
      if (a.opt.lost_gpu_seconds != b.opt.lost_gpu_seconds) {
        return a.opt.lost_gpu_seconds < b.opt.lost_gpu_seconds;
      }
      return a.id < b.id;
    });
    std::vector<std::uint32_t> order;
    order.reserve(rank.size());
    for (const auto& x : rank) order.push_back(x.index);
    preemption_plan plan = reclaim_in_runs(scope, order, probe);
    for (const job_id v : plan.victims) {
      for (const auto& x : rank) {
        if (x.id != v) continue;
        plan.details.push_back(
            {v, x.opt.action, -1, -1, x.opt.gpus, x.opt.lost_gpu_seconds, x.opt.wait});
        plan.lost_gpu_seconds += x.opt.lost_gpu_seconds;
      }
    }
    return plan;
  }

  /// Chooses the victims; see the file documentation. @throws invalid_value_error for bad
  /// checkpoint data or weights of a candidate (see `preemption_cost_model`).
  [[nodiscard]] preemption_plan select(const schedule_context& ctx, const job_spec& j,
                                       fit_probe probe) {
    stats_ = {};
    probe_ = &probe;
    ctx_ = &ctx;
    forget_old(ctx.now());
    preemptor_tenant_ = j.tenant;
    prepare_demand(j);
    scan(ctx, j, opt_.screen_nodes > 0);
    preemption_plan plan;
    bool found = search(false, plan);
    if (!found && stats_.screened_out > 0) {
      stats_.rescanned = true;
      scan(ctx, j, false);
      found = search(false, plan);
    }
    if (!found && has_recent_) {
      stats_.used_recent = true;
      found = search(true, plan);
    }
    if (!found) {
      plan = {};
      plan.why = no_victims_reason(j);
    }
    probe_ = nullptr;
    ctx_ = nullptr;
    return plan;
  }

 private:
  using res = detail::ca_res;

  // ---- preparation ------------------------------------------------------------------------
  void forget_old(sim_time now) {
    if (opt_.thrash_window <= sim_duration{0}) return;
    std::erase_if(history_, [&](const std::pair<job_id, sim_time>& h) {
      return now - h.second >= opt_.thrash_window;
    });
  }

  void prepare_demand(const job_spec& j) {
    demand_.clear();
    need_ = {};
    for (const auto& g : j.groups) {
      detail::ca_demand d;
      d.kind = g.request.gpu.kind;
      d.cpu = g.request.cpu.value();
      d.mem = g.request.memory.value();
      d.count = g.count;
      d.allowed = g.request.allowed_models;
      g.request.gpu.visit(
          [](demand_none) {},
          [&](demand_whole w) {
            d.k = w.count.value();
            need_.milli += d.k * 1000 * d.count;
          },
          [&](demand_share s) {
            d.k = s.share.value();
            need_.milli += d.k * d.count;
          },
          [&](demand_mig m) {
            d.k = m.memory;
            need_.slices += d.k * d.count;
          },
          [](demand_replica) {});  // not modelled: no plan frees replicas (see `cap`)
      need_.cpu += d.cpu * d.count;
      need_.mem += d.mem * d.count;
      demand_.push_back(d);
    }
    preemptor_milli_ = j.milli_gpus();
    preemptor_tasks_ = 0;
    for (const auto& d : demand_) preemptor_tasks_ += static_cast<std::size_t>(d.count);
  }

  /// Tasks of group `g` one node could host with resources `r` (not capped at the group's
  /// count, so that a node that could host more counts as helpful for multi-group gangs).
  [[nodiscard]] static std::int64_t cap(const detail::ca_demand& d, const res& r, std::int64_t gpus,
                                        gpu_model_id model, bool mig) noexcept {
    std::int64_t c = std::int64_t{1} << 40;
    if (d.kind != gpu_demand_kind::none && (!model.valid() || !d.allowed.admits(model))) return 0;
    if (d.cpu > 0) c = std::min(c, r.cpu / d.cpu);
    if (d.mem > 0) c = std::min(c, r.mem / d.mem);
    switch (d.kind) {
      case gpu_demand_kind::whole:
        c = mig ? 0 : std::min(c, std::min(r.whole, gpus) / std::max<std::int64_t>(d.k, 1));
        break;
      case gpu_demand_kind::share:
        c = mig ? 0 : std::min(c, r.milli / std::max<std::int64_t>(d.k, 1));
        break;
      case gpu_demand_kind::mig:
        c = mig ? std::min(c, r.slices / std::max<std::int64_t>(d.k, 1)) : 0;
        break;
      case gpu_demand_kind::replica:
        // Replicas of time-sliced / MPS GPUs are not modelled here: no node helps, so this
        // policy proposes no preemption for replica demands (kube_default does).
        c = 0;
        break;
      case gpu_demand_kind::none:
        break;
    }
    return std::max<std::int64_t>(c, 0);
  }

  [[nodiscard]] static res node_free(const cluster& c, node_index n) {
    res r;
    r.whole = c.free_whole_gpus(n);
    r.cpu = c.cpu_free(n).value();
    r.mem = c.memory_free(n).value();
    for (const auto& g : c.gpus(n)) {
      if (g.mig_enabled) {
        const auto slices = c.catalog()[g.model].mig.memory_slices;
        r.slices += slices - std::popcount(static_cast<unsigned>(g.mig_used));
      } else {
        r.milli += g.free.value();
      }
    }
    return r;
  }

  [[nodiscard]] static res task_freed(const task_allocation& t) noexcept {
    res r;
    r.cpu = t.cpu.value();
    r.mem = t.memory.value();
    for (const auto& g : t.gpus) {
      if (g.mig_slots != 0) {
        r.slices += std::popcount(static_cast<unsigned>(g.mig_slots));
      } else {
        r.whole += 1;  // an upper bound: the GPU becomes whole only if nobody else shares it
        r.milli += g.milli.value();
      }
    }
    return r;
  }

  [[nodiscard]] std::uint32_t domain(const cluster& c, node_index n) const {
    if (!single_domain_) return 0;
    return opt_.domain_of ? opt_.domain_of(c, n) : c.topology(n);
  }

  /// Tenant `t`'s quota position: from `options().quotas` when given, else from the run's quota
  /// tree (`ctx.quotas()`, usage counted from the ledger, weight from `ctx.tenants()`), else none.
  /// Cached per selection. O(running tasks) on a miss.
  [[nodiscard]] std::optional<tenant_quota> quota(tenant_id t) {
    for (const auto& q : quota_cache_) {
      if (q.first == t) return q.second;
    }
    std::optional<tenant_quota> q;
    if (opt_.quotas) {
      q = opt_.quotas(t);
    } else if (ctx_ != nullptr && ctx_->quotas() != nullptr) {
      q = tenant_quota_from(*ctx_, *ctx_->quotas(), t);
    }
    quota_cache_.emplace_back(t, q);
    return quota_cache_.back().second;
  }

  /// Whether running job `r` may be a victim of `j`; sets `reclaim` when only reclaim admits it.
  [[nodiscard]] bool admissible(const job_spec& j, const running_job& r, sim_time now,
                                bool& reclaim) {
    reclaim = false;
    if (r.spec.id == j.id || !r.spec.preemptible) return false;
    if (now - r.start < opt_.min_runtime) return false;
    const bool lower = r.spec.priority < j.priority;
    const bool cross = r.spec.tenant != j.tenant;
    if (!lower) {
      if (!opt_.reclaim || !cross) return false;
      const auto qa = quota(j.tenant);
      const auto qb = quota(r.spec.tenant);
      if (!qa || !qb || qb->borrowed() <= 0) return false;
      if (qa->usage + preemptor_milli_ > qa->nominal) return false;
      reclaim = true;
    }
    if (opt_.fair_share != fair_share_strategy::none && cross) {
      const auto qa = quota(j.tenant);
      const auto qb = quota(r.spec.tenant);
      const double a = qa ? qa->share(preemptor_milli_) : 0.0;
      const double b = qb ? qb->share() : 0.0;
      if (opt_.fair_share == fair_share_strategy::less_than_initial_share ? !(a < b) : !(a <= b)) {
        return false;  // a necessary condition; the set-level check follows
      }
    }
    return true;
  }

  void scan(const schedule_context& ctx, const job_spec& j, bool screen) {
    const cluster& c = ctx.state();
    const sim_time now = ctx.now();
    single_domain_ = opt_.needs_single_domain && opt_.needs_single_domain(j);
    quota_cache_.clear();
    const std::size_t n_nodes = c.node_count();
    if (node_acc_.size() != n_nodes) {
      node_acc_.assign(n_nodes, res{});
      node_slot_.assign(n_nodes, npos);
      node_tasks_.assign(n_nodes, 0);
    } else {
      // normally reset already; not if the last scan threw (e.g. from a quota view)
      for (const node_index n : touched_) {
        node_acc_[n.value()] = {};
        node_slot_[n.value()] = npos;
        node_tasks_[n.value()] = 0;
      }
    }
    touched_.clear();
    jobs_.clear();
    items_.clear();
    effects_.clear();
    grants_.clear();
    orders_.clear();
    slots_.clear();
    slot_tasks_.clear();
    slot_max_gain_.clear();
    has_recent_ = false;
    any_reclaim_ = false;
    // 1. admissible jobs and what they could free per node
    const auto running = ctx.book().running();
    stats_.running = running.size();
    // One pass over the running jobs (the only one: later steps read the compact copies
    // `adm_tasks_` and `adm_grants_`, so the cache lines of 10^4 jobs are loaded once).
    adm_.clear();
    adm_cost_.clear();
    adm_shrink_cost_.clear();
    adm_task_begin_.clear();
    adm_tasks_.clear();
    adm_grants_.clear();
    for (const auto& r : running) {
      bool reclaim = false;
      if (!admissible(j, r, now, reclaim)) continue;
      adm_.push_back({&r, recently_preempted(r.spec.id, now), reclaim, 0, true});
      adm_task_begin_.push_back(static_cast<std::uint32_t>(adm_tasks_.size()));
      double gpus = 0;  // held_gpus(c, r.tasks), summed in the same order
      const auto job_pos = static_cast<std::uint32_t>(adm_.size() - 1);
      for (const auto& t : r.tasks) {
        const auto n = t.node.value();
        if (node_slot_[n] == npos) {
          node_slot_[n] = 0;
          touched_.push_back(t.node);
        }
        // task_freed(t), the grants and the held GPUs in one loop over the grants
        auto& ct = adm_tasks_.emplace_back();
        ct.node = n;
        ct.job = job_pos;
        ct.grant_begin = static_cast<std::uint32_t>(adm_grants_.size());
        ct.freed.cpu = t.cpu.value();
        ct.freed.mem = t.memory.value();
        const auto first = c.first_gpu(t.node).value();
        for (const auto& g : t.gpus) {
          if (g.mig_slots == 0) {
            ct.freed.whole += 1;
            ct.freed.milli += g.milli.value();
            adm_grants_.push_back({g.gpu.value() - first, g.milli.value()});
            gpus += static_cast<double>(g.milli.value()) / 1000.0;
          } else {
            const auto used = std::popcount(static_cast<unsigned>(g.mig_slots));
            ct.freed.slices += used;
            const auto slices = c.catalog()[c.gpu(g.gpu).model].mig.memory_slices;
            gpus += slices == 0 ? 0.0 : static_cast<double>(used) / static_cast<double>(slices);
          }
        }
        node_acc_[n] += ct.freed;
        ++node_tasks_[n];
        ct.grant_end = static_cast<std::uint32_t>(adm_grants_.size());
      }
      if (screen) {
        // the eviction (and shrink) cost, while the job is in cache; bad data is reported
        // (thrown) only if the job becomes a candidate, as without screening
        double cost = std::numeric_limits<double>::quiet_NaN();
        try {
          cost = opt_.cost.evict_holding(gpus, r, now).lost_gpu_seconds;
        } catch (const invalid_value_error&) {
        }
        double shrink = std::numeric_limits<double>::quiet_NaN();
        if (opt_.allow_shrink && shrink_released(r, adm_task_begin_.back())) {
          try {
            shrink = opt_.cost.shrink(c, r, released_, now).lost_gpu_seconds;
          } catch (const invalid_value_error&) {
          }
        }
        adm_cost_.push_back(cost);
        adm_shrink_cost_.push_back(shrink);
      }
    }
    adm_task_begin_.push_back(static_cast<std::uint32_t>(adm_tasks_.size()));
    stats_.admissible = adm_.size();
    // 2. helpful nodes: where freeing everything raises what the node can host
    if (node_base_.size() != n_nodes) {
      node_base_.assign(n_nodes, res{});
      node_base_stamp_.assign(n_nodes, 0);
    }
    if (++scan_stamp_ == 0) {  // wrapped: forget every stamp
      std::fill(node_base_stamp_.begin(), node_base_stamp_.end(), 0);
      scan_stamp_ = 1;
    }
    for (const node_index n : touched_) {
      const res base = node_free(c, n);
      node_base_[n.value()] = base;  // for build_domains
      node_base_stamp_[n.value()] = scan_stamp_;
      res all = base;
      all += node_acc_[n.value()];
      const bool mig = c.has_mig(n);
      const auto gpus = static_cast<std::int64_t>(mig ? 0 : c.gpus(n).size());
      // helpful: some group gains; `max_gain` bounds the tasks any subset of the jobs here
      // can make room for (cap is monotone and `all` is at least what any subset frees)
      std::int64_t max_gain = 0;
      for (const auto& d : demand_) {
        max_gain += std::min(
            cap(d, all, gpus, c.model(n), mig) - cap(d, base, gpus, c.model(n), mig), d.count);
      }
      const bool helpful = max_gain > 0;
      node_slot_[n.value()] = npos;
      node_acc_[n.value()] = {};
      const auto tasks_here = node_tasks_[n.value()];
      node_tasks_[n.value()] = 0;
      if (!helpful) continue;
      node_slot_[n.value()] = static_cast<std::uint32_t>(slots_.size());
      slot_tasks_.push_back(tasks_here);
      slot_max_gain_.push_back(max_gain);
      slots_.push_back({n, base, gpus, c.model(n), mig, domain(c, n)});
    }
    // 2b. screening of large instances
    if (screen && !single_domain_ && slots_.size() > opt_.screen_nodes + 2 * preemptor_tasks_) {
      screen_slots(c, now, opt_.screen_nodes + 2 * preemptor_tasks_);
    }
    slot_acc_.assign(slots_.size(), res{});
    slot_touched_mark_.assign(slots_.size(), 0);
    slot_gpu_acc_.assign(slots_.size() * max_gpus_per_node, 0);
    slot_gpu_base_.assign(slots_.size() * max_gpus_per_node, std::int32_t{-(1 << 20)});
    for (std::size_t k = 0; k < slots_.size(); ++k) {
      const auto gs = c.gpus(slots_[k].node);
      for (std::size_t i = 0; i < gs.size(); ++i) {
        if (!gs[i].mig_enabled) slot_gpu_base_[k * max_gpus_per_node + i] = gs[i].free.value();
      }
    }
    slot_whole_base_.resize(slots_.size());
    slot_whole_delta_.assign(slots_.size(), 0);
    for (std::size_t k = 0; k < slots_.size(); ++k) {
      std::int64_t n = 0;
      const std::int32_t* base = &slot_gpu_base_[k * max_gpus_per_node];
      for (std::size_t i = 0; i < max_gpus_per_node; ++i)
        n += base[i] == whole_gpu_milli.value() ? 1 : 0;
      slot_whole_base_[k] = n;
    }
    // 3. base capacity per domain
    build_domains(c);
    // 4. candidates and their options
    // jobs with a task on a helpful node (one flat pass over the copied tasks)
    adm_helpful_.assign(adm_.size(), 0);
    for (const auto& t : adm_tasks_) {
      if (node_slot_[t.node] != npos) adm_helpful_[t.job] = 1;
    }
    for (std::size_t k = 0; k < adm_.size(); ++k) {
      if (adm_helpful_[k] == 0) continue;
      const auto& a = adm_[k];
      std::uint32_t dom = 0;
      bool first = true, one = true;
      if (single_domain_) {
        for (auto q = adm_task_begin_[k]; q < adm_task_begin_[k + 1]; ++q) {
          const auto d = domain(c, node_index{adm_tasks_[q].node});
          if (first) dom = d;
          one = one && d == dom;
          first = false;
        }
      }
      const running_job& r = *a.r;
      detail::ca_job cj = a;
      cj.domain = dom;
      cj.one_domain = one;
      has_recent_ = has_recent_ || cj.recent;
      any_reclaim_ = any_reclaim_ || cj.reclaim;
      const auto ji = static_cast<std::uint32_t>(jobs_.size());
      jobs_.push_back(cj);
      add_item(ji, opt_.cost.evict(c, r, now), r.tasks, {});
      if (opt_.allow_shrink) add_shrink(c, ji, r, now);
    }
    stats_.candidates = jobs_.size();
    stats_.options = items_.size();
    for (const node_index n : touched_) node_slot_[n.value()] = npos;
  }

  /// Keeps the `keep` helpful slots whose cheapest single-node eviction plan (the heuristic's
  /// node plan restricted to evictions of jobs not recently preempted) costs least per
  /// preemptor task it makes room for (ties: slot order); the others stop being helpful.
  /// O(T log T) for T admissible tasks on helpful nodes. Costs are computed once per job.
  void screen_slots(const cluster& c, sim_time now, std::size_t keep) {
    const std::size_t S = slots_.size(), G = demand_.size();
    // per slot, the admissible tasks on its node (counted in the one pass), CSR
    scr_begin_.resize(S + 1);
    scr_begin_[0] = 0;
    for (std::size_t s = 0; s < S; ++s) scr_begin_[s + 1] = scr_begin_[s] + slot_tasks_[s];
    scr_entries_.resize(scr_begin_.back());
    scr_fill_.assign(scr_begin_.begin(), scr_begin_.end() - 1);
    scr_sum_.assign(S, {});
    // one flat pass over the copied tasks (in job order: bad data throws in job order)
    for (std::uint32_t q = 0; q < adm_tasks_.size(); ++q) {
      const auto& t = adm_tasks_[q];
      const auto s = node_slot_[t.node];
      if (s == npos) continue;
      const auto k = t.job;
      if (adm_[k].recent) continue;  // screened as if absent
      double cost = adm_cost_[k];
      if (std::isnan(cost)) {
        cost = opt_.cost.evict(c, *adm_[k].r, now).lost_gpu_seconds;  // throws
        adm_cost_[k] = cost;
      }
      // the cheapest option that releases this task: a shrink releases only some tasks
      const double own = t.shrinkable && adm_shrink_cost_[k] < cost ? adm_shrink_cost_[k] : cost;
      const double gain =
          static_cast<double>(t.freed.milli) + static_cast<double>(t.freed.slices) * 125.0;
      scr_entries_[scr_fill_[s]++] = {own / std::max(gain, 1e-9), q};
      auto& sum = scr_sum_[s];
      sum.cost += own;
      sum.milli += t.freed.milli;
      sum.min_milli = std::min(sum.min_milli, t.freed.milli);
    }
    // Ranking: a max-heap of the best `keep` (ratio, slot) so far. A slot whose lower bound
    // (below) already ranks after the heap's worst cannot be among the best: its node plan is
    // not computed (no sort, no walk). The kept set is the `keep` smallest (ratio, slot), as
    // by a full ranking.
    const auto better = [](const std::pair<double, std::uint32_t>& x,
                           const std::pair<double, std::uint32_t>& y) {
      if (x.first != y.first) return x.first < y.first;
      return x.second < y.second;
    };
    bool bound_ok = true;  // every group needs GPU milli on a non-MIG node to gain a task
    for (const auto& d : demand_) {
      bound_ok = bound_ok && (d.kind == gpu_demand_kind::whole || d.kind == gpu_demand_kind::share);
    }
    scr_rank_.clear();
    scr_stamp_.assign(adm_.size(), 0);
    for (std::uint32_t s = 0; s < S; ++s) {
      const auto lo = scr_begin_[s], hi = scr_fill_[s];  // recent jobs left gaps at the end
      const auto& sl = slots_[s];
      if (opt_.screen_bound && bound_ok && !sl.mig && scr_rank_.size() == keep) {
        // Lower bound on the plan's cost per task: the plan's tasks must bring the node's free
        // milli to what the least demanding group needs for one more task (`need`); with
        // `slack` = what all entries free beyond that, only entries freeing at most `slack`
        // can be left out, so cost >= (sum of all) - (sum of those); tasks <= max_gain.
        std::int64_t need = std::numeric_limits<std::int64_t>::max();
        for (const auto& d : demand_) {
          const auto m = cap(d, sl.base, sl.gpus, sl.model, sl.mig) + 1;
          need = std::min(
              need, d.kind == gpu_demand_kind::whole ? m * d.k * whole_gpu_milli.value() : m * d.k);
        }
        const auto& sum = scr_sum_[s];
        const std::int64_t slack = sum.milli - (need - sl.base.milli);
        if (need > sl.base.milli && slack >= 0) {
          double omit = 0;
          if (slack >= sum.min_milli) {
            for (auto k = lo; k < hi; ++k) {
              const auto& t = adm_tasks_[scr_entries_[k].task];
              if (t.freed.milli > slack) continue;
              const double ev = adm_cost_[t.job], sh = adm_shrink_cost_[t.job];
              omit += t.shrinkable && sh < ev ? sh : ev;
            }
          }
          // 1e-9: the sums are taken in another order than the plan's (rounding)
          const double lb =
              (sum.cost - omit - 1e-9 * sum.cost) / static_cast<double>(slot_max_gain_[s]);
          if (lb > scr_rank_.front().first) {
            ++stats_.screen_bounded;
            continue;
          }
        }
      }
      std::sort(scr_entries_.begin() + lo, scr_entries_.begin() + hi,
                [](const detail::ca_screen_entry& x, const detail::ca_screen_entry& y) {
                  if (x.key != y.key) return x.key < y.key;
                  return x.task < y.task;  // tasks are in job order: (job, task) order
                });
      const auto gs = c.gpus(sl.node);
      std::int32_t free[max_gpus_per_node];
      std::int64_t whole = 0;
      for (std::size_t i = 0; i < max_gpus_per_node; ++i) {
        free[i] = i < gs.size() && !gs[i].mig_enabled ? gs[i].free.value() : -(1 << 20);
        whole += free[i] == whole_gpu_milli.value() ? 1 : 0;
      }
      // what the node needs to host one task more than now, per group (no division per step)
      scr_next_.clear();
      for (std::size_t g = 0; g < G; ++g) {
        const auto& d = demand_[g];
        const auto m = cap(d, sl.base, sl.gpus, sl.model, sl.mig) + 1;
        scr_next_.push_back({d.kind == gpu_demand_kind::whole ? m * d.k : 0,
                             d.kind == gpu_demand_kind::share ? m * d.k : 0,
                             d.kind == gpu_demand_kind::mig ? m * d.k : 0, m * d.cpu, m * d.mem});
      }
      res acc = sl.base;
      double cost = 0, ratio = std::numeric_limits<double>::infinity();
      for (auto k = lo; k < hi; ++k) {
        const auto& t = adm_tasks_[scr_entries_[k].task];
        if (scr_stamp_[t.job] == s + 1) continue;  // one entry per job, as in the node plans
        scr_stamp_[t.job] = s + 1;
        res f = t.freed;
        f.whole = 0;
        acc += f;
        for (auto q = t.grant_begin; q < t.grant_end; ++q) {
          const auto i = adm_grants_[q].gpu;
          const bool was = free[i] == whole_gpu_milli.value();
          free[i] += adm_grants_[q].milli;
          whole += (free[i] == whole_gpu_milli.value() ? 1 : 0) - (was ? 1 : 0);
        }
        acc.whole = whole;
        {
          const double ev = adm_cost_[t.job], sh = adm_shrink_cost_[t.job];
          cost += t.shrinkable && sh < ev ? sh : ev;  // as `own` above
        }
        bool more = false;  // some group gains a task: cap(acc) reaches cap(base) + 1
        for (std::size_t g = 0; g < G && !more; ++g) {
          const auto& x = scr_next_[g];
          more = acc.whole >= x.whole && acc.milli >= x.milli && acc.slices >= x.slices &&
                 acc.cpu >= x.cpu && acc.mem >= x.mem;
        }
        if (!more) continue;
        std::int64_t gain = 0;
        for (std::size_t g = 0; g < G; ++g) {
          gain += std::min(cap(demand_[g], acc, sl.gpus, sl.model, sl.mig) -
                               cap(demand_[g], sl.base, sl.gpus, sl.model, sl.mig),
                           demand_[g].count);
        }
        if (gain >= 1) {
          ratio = cost / static_cast<double>(gain);
          break;
        }
      }
      const std::pair<double, std::uint32_t> here{ratio, s};
      if (scr_rank_.size() < keep) {
        scr_rank_.push_back(here);
        std::push_heap(scr_rank_.begin(), scr_rank_.end(), better);
      } else if (better(here, scr_rank_.front())) {
        std::pop_heap(scr_rank_.begin(), scr_rank_.end(), better);
        scr_rank_.back() = here;
        std::push_heap(scr_rank_.begin(), scr_rank_.end(), better);
      }
    }
    scr_keep_.assign(S, 0);
    for (const auto& rk : scr_rank_) scr_keep_[rk.second] = 1;
    std::size_t out = 0;
    for (std::size_t s = 0; s < S; ++s) {
      const node_index n = slots_[s].node;
      if (scr_keep_[s] == 0) {
        node_slot_[n.value()] = npos;
        continue;
      }
      node_slot_[n.value()] = static_cast<std::uint32_t>(out);
      slot_tasks_[out] = slot_tasks_[s];
      slot_max_gain_[out] = slot_max_gain_[s];
      slots_[out++] = slots_[s];
    }
    slots_.resize(out);
    slot_tasks_.resize(out);
    slot_max_gain_.resize(out);
    stats_.screened_out = S - out;
  }

  /// When `r` can shrink (some group runs above its minimum): fills `released_` with what
  /// shrinking every such group to its minimum releases, marks those of its copied tasks
  /// (from `adm_tasks_[first]` on, in task order) shrinkable, and returns true. O(tasks).
  bool shrink_released(const running_job& r, std::uint32_t first) {
    bool any = false;
    for (const auto& grp : r.spec.groups) any = any || grp.elastic();
    if (!any) return false;
    released_.clear();
    for (std::size_t g = 0; g < r.spec.groups.size(); ++g) {
      const auto& grp = r.spec.groups[g];
      if (!grp.elastic() || r.tasks_in_group(g) <= grp.minimum()) continue;
      std::int32_t seen = 0;
      for (std::size_t k = 0; k < r.tasks.size(); ++k) {
        if (r.tasks[k].group == g && seen++ >= grp.minimum()) {
          released_.push_back(r.tasks[k]);
          adm_tasks_[first + k].shrinkable = true;
        }
      }
    }
    return !released_.empty();
  }

  void add_item(std::uint32_t ji, const preemption_option& o,
                std::span<const task_allocation> released, std::span<const shrink_order> orders) {
    detail::ca_item it;
    it.job = ji;
    it.opt = o;
    it.eff_begin = static_cast<std::uint32_t>(effects_.size());
    for (const auto& t : released) {
      res f = task_freed(t);
      it.total += f;
      const auto s = node_slot_[t.node.value()];
      if (s == npos) continue;
      f.whole = 0;
      detail::ca_effect ef{s, f, static_cast<std::uint32_t>(grants_.size()), 0};
      const auto first = ctx_->state().first_gpu(t.node).value();
      for (const auto& g : t.gpus) {
        if (g.mig_slots == 0) grants_.push_back({g.gpu.value() - first, g.milli.value()});
      }
      ef.grant_end = static_cast<std::uint32_t>(grants_.size());
      effects_.push_back(ef);
    }
    it.eff_end = static_cast<std::uint32_t>(effects_.size());
    if (it.eff_end == it.eff_begin) return;  // frees nothing useful
    it.ord_begin = static_cast<std::uint32_t>(orders_.size());
    orders_.insert(orders_.end(), orders.begin(), orders.end());
    it.ord_end = static_cast<std::uint32_t>(orders_.size());
    items_.push_back(it);
  }

  void add_shrink(const cluster& c, std::uint32_t ji, const running_job& r, sim_time now) {
    shrink_tmp_.clear();
    released_.clear();
    for (std::size_t g = 0; g < r.spec.groups.size(); ++g) {
      const auto& grp = r.spec.groups[g];
      const std::int32_t runs = r.tasks_in_group(g);
      if (!grp.elastic() || runs <= grp.minimum()) continue;
      shrink_tmp_.push_back({r.spec.id, static_cast<std::uint16_t>(g), grp.minimum()});
      std::int32_t seen = 0;
      for (const auto& t : r.tasks) {
        if (t.group == g && seen++ >= grp.minimum()) released_.push_back(t);
      }
    }
    if (shrink_tmp_.empty()) return;
    add_item(ji, opt_.cost.shrink(c, r, released_, now), released_, shrink_tmp_);
  }

  void build_domains(const cluster& c) {
    const std::size_t G = demand_.size();
    dom_ids_.clear();
    dom_cap_.clear();
    dom_res_.clear();
    slot_cap_.assign(slots_.size() * G, 0);
    for (std::size_t s = 0; s < slots_.size(); ++s) {
      for (std::size_t g = 0; g < G; ++g) {
        slot_cap_[s * G + g] =
            cap(demand_[g], slots_[s].base, slots_[s].gpus, slots_[s].model, slots_[s].mig);
      }
    }
    for (const node_index n : c.nodes()) {
      const auto d = domain(c, n);
      std::size_t di = 0;
      while (di < dom_ids_.size() && dom_ids_[di] != d) ++di;
      if (di == dom_ids_.size()) {
        dom_ids_.push_back(d);
        dom_cap_.resize(dom_cap_.size() + G, 0);
        dom_res_.push_back({});
      }
      const bool known = node_base_stamp_[n.value()] == scan_stamp_;  // from scan's step 2
      const res base = known ? node_base_[n.value()] : node_free(c, n);
      dom_res_[di] += base;
      const bool mig = c.has_mig(n);
      const auto gpus = static_cast<std::int64_t>(mig ? 0 : c.gpus(n).size());
      for (std::size_t g = 0; g < G; ++g) {
        dom_cap_[di * G + g] += cap(demand_[g], base, gpus, c.model(n), mig);
      }
    }
  }

  // ---- set evaluation ---------------------------------------------------------------------

  /// Returns the grants of effect `e` (on slot `e.slot`) into `acc` (milli per GPU position of
  /// that slot, returned so far) and gives the change in the slot's whole idle GPUs: a GPU
  /// counts once its free milli reaches a whole GPU, so two jobs sharing a GPU are both needed
  /// to free it. O(grants of `e`).
  [[nodiscard]] std::int64_t add_grants(const detail::ca_effect& e,
                                        std::int32_t* acc) const noexcept {
    const std::int32_t* base = &slot_gpu_base_[std::size_t{e.slot} * max_gpus_per_node];
    std::int64_t delta = 0;
    for (auto k = e.grant_begin; k < e.grant_end; ++k) {
      const auto i = grants_[k].gpu;
      const bool was = base[i] + acc[i] == whole_gpu_milli.value();
      acc[i] += grants_[k].milli;
      delta += (base[i] + acc[i] == whole_gpu_milli.value() ? 1 : 0) - (was ? 1 : 0);
    }
    return delta;
  }

  /// The bound: a necessary condition for the preemptor to fit after applying `set` in domain
  /// `di`. O(effects of the set x groups).
  [[nodiscard]] bool bound(std::span<const std::uint32_t> set, std::size_t di) {
    const std::size_t G = demand_.size();
    res agg = dom_res_[di];
    for (const auto i : set) {
      const auto& it = items_[i];
      agg += it.total;
      for (auto e = it.eff_begin; e < it.eff_end; ++e) {
        const auto s = effects_[e].slot;
        if (slot_touched_mark_[s] == 0) {
          slot_touched_mark_[s] = 1;
          slot_touched_.push_back(s);
        }
        slot_acc_[s] += effects_[e].freed;
        slot_whole_delta_[s] +=
            add_grants(effects_[e], &slot_gpu_acc_[std::size_t{s} * max_gpus_per_node]);
      }
    }
    bool ok = agg.milli >= need_.milli && agg.slices >= need_.slices && agg.cpu >= need_.cpu &&
              agg.mem >= need_.mem;
    for (std::size_t g = 0; ok && g < G; ++g) {
      std::int64_t total = dom_cap_[di * G + g];
      for (const auto s : slot_touched_) {
        res after = slots_[s].base;
        after += slot_acc_[s];
        after.whole = slot_whole_base_[s] + slot_whole_delta_[s];
        total += cap(demand_[g], after, slots_[s].gpus, slots_[s].model, slots_[s].mig) -
                 slot_cap_[s * G + g];
      }
      ok = total >= demand_[g].count;
    }
    for (const auto s : slot_touched_) {
      slot_acc_[s] = {};
      slot_whole_delta_[s] = 0;
      slot_touched_mark_[s] = 0;
      std::fill_n(slot_gpu_acc_.begin() + static_cast<std::ptrdiff_t>(s * max_gpus_per_node),
                  max_gpus_per_node, 0);
    }
    slot_touched_.clear();
    return ok;
  }

  /// Set-level admissibility: reclaim only while borrowing, fair-share strategies.
  [[nodiscard]] bool admissible_set(std::span<const std::uint32_t> set, tenant_id preemptor) {
    if (!any_reclaim_ && opt_.fair_share == fair_share_strategy::none) return true;
    tenant_sums_.clear();
    for (const auto i : set) {
      const auto& it = items_[i];
      const auto& jb = jobs_[it.job];
      const tenant_id t = jb.r->spec.tenant;
      if (t == preemptor) continue;
      const auto m = static_cast<std::int64_t>(it.opt.gpus * 1000.0 + 0.5);
      std::pair<tenant_id, tenant_sum>* e = nullptr;
      for (auto& ts : tenant_sums_) {
        if (ts.first == t) e = &ts;
      }
      if (e == nullptr) e = &tenant_sums_.emplace_back(t, tenant_sum{});
      e->second.sum += m;
      e->second.max = std::max(e->second.max, m);
      if (jb.reclaim) {
        e->second.reclaim_sum += m;
        e->second.reclaim_max = std::max(e->second.reclaim_max, m);
      }
    }
    const auto qa = quota(preemptor);
    const double a = qa ? qa->share(preemptor_milli_) : 0.0;
    for (const auto& [t, s] : tenant_sums_) {
      const auto qb = quota(t);
      if (s.reclaim_sum > 0) {
        // the tenant still borrows before its last reclaimed victim goes
        if (!qb || qb->borrowed(-(s.reclaim_sum - s.reclaim_max)) <= 0) return false;
      }
      if (opt_.fair_share == fair_share_strategy::less_than_or_equal_final_share) {
        if (!(a <= (qb ? qb->share(-s.sum) : 0.0))) return false;
      } else if (opt_.fair_share == fair_share_strategy::less_than_initial_share) {
        if (!(a < (qb ? qb->share(-(s.sum - s.max)) : 0.0))) return false;
      }
    }
    return true;
  }

  [[nodiscard]] bool run_probe(std::span<const std::uint32_t> set) {
    victims_buf_.clear();
    shrink_buf_.clear();
    for (const auto i : set) {
      const auto& it = items_[i];
      if (it.opt.action == victim_action::shrink) {
        shrink_buf_.insert(shrink_buf_.end(), orders_.begin() + it.ord_begin,
                           orders_.begin() + it.ord_end);
      } else {
        victims_buf_.push_back(jobs_[it.job].r->spec.id);
      }
    }
    ++stats_.probes;
    return (*probe_)(victims_buf_, shrink_buf_, &placement_buf_);
  }

  /// Admissible, passes the bound, passes the probe (in that order; the probe only if the
  /// others hold and the probe budget allows).
  enum class verdict3 : std::uint8_t { no, yes, out_of_probes };
  [[nodiscard]] verdict3 test(std::span<const std::uint32_t> set, std::size_t di) {
    if (!admissible_set(set, preemptor_tenant_)) return verdict3::no;
    if (!bound(set, di)) return verdict3::no;
    if (stats_.probes >= opt_.max_probes) return verdict3::out_of_probes;
    return run_probe(set) ? verdict3::yes : verdict3::no;
  }

  // ---- searches ---------------------------------------------------------------------------

  /// Exact best-first search over `pool` (item indices). On success `out` holds the cheapest
  /// passing set and the placement buffer its placement. Costs at or above `cutoff` are not
  /// explored.
  bool exact(std::span<const std::uint32_t> pool, std::size_t di, double cutoff,
             std::vector<std::uint32_t>& out) {
    sorted_.assign(pool.begin(), pool.end());
    std::sort(sorted_.begin(), sorted_.end(), [&](std::uint32_t a, std::uint32_t b) {
      const auto &x = items_[a], &y = items_[b];
      if (x.opt.lost_gpu_seconds != y.opt.lost_gpu_seconds) {
        return x.opt.lost_gpu_seconds < y.opt.lost_gpu_seconds;
      }
      return a < b;
    });
    const std::size_t n = sorted_.size();
    if (n == 0 || n > 63) return false;
    // conflict masks: options of the same job
    conflict_.clear();
    for (std::size_t a = 0; a < n; ++a) {
      for (std::size_t b = a + 1; b < n; ++b) {
        if (items_[sorted_[a]].job == items_[sorted_[b]].job) {
          conflict_.push_back((std::uint64_t{1} << a) | (std::uint64_t{1} << b));
        }
      }
    }
    const auto cost = [&](std::size_t k) { return items_[sorted_[k]].opt.lost_gpu_seconds; };
    heap_.clear();
    const auto cmp = [](const detail::ca_heap_node& x, const detail::ca_heap_node& y) {
      if (x.cost != y.cost) return x.cost > y.cost;
      return x.mask > y.mask;
    };
    heap_.push_back({cost(0), 1, 0});
    std::size_t enumerated = 0;
    while (!heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), cmp);
      const detail::ca_heap_node cur = heap_.back();
      heap_.pop_back();
      if (cur.cost >= cutoff) return false;  // nondecreasing order: nothing cheaper remains
      if (++enumerated > opt_.enumeration_budget) {
        stats_.exact = false;
        return false;
      }
      ++stats_.subsets;
      if (cur.last + 1 < n) {
        const auto nx = cur.last + 1;
        heap_.push_back({cur.cost + cost(nx), cur.mask | (std::uint64_t{1} << nx), nx});
        std::push_heap(heap_.begin(), heap_.end(), cmp);
        heap_.push_back({cur.cost - cost(cur.last) + cost(nx),
                         (cur.mask & ~(std::uint64_t{1} << cur.last)) | (std::uint64_t{1} << nx),
                         nx});
        std::push_heap(heap_.begin(), heap_.end(), cmp);
      }
      bool clash = false;
      for (const auto m : conflict_) clash = clash || (cur.mask & m) == m;
      if (clash) continue;
      set_.clear();
      for (std::size_t k = 0; k < n; ++k) {
        if (((cur.mask >> k) & 1u) != 0) set_.push_back(sorted_[k]);
      }
      switch (test(set_, di)) {
        case verdict3::yes:
          out = set_;
          return true;
        case verdict3::out_of_probes:
          stats_.exact = false;
          return false;
        case verdict3::no:
          break;
      }
    }
    return false;
  }

  /// Node plans, then exact over a pool, then probe-driven additions with a reprieve pass.
  ///
  /// A *node plan* frees one helpful node just enough to host one more task of some group: the
  /// node's options in order of cost per GPU they free there. Plans are taken cheapest per task
  /// gained first until the bound holds. Then the exact search (with `heuristic_budget`
  /// subsets) runs over the jobs of the chosen plans plus the next plans' jobs, up to
  /// `exact_limit` jobs; if it finds nothing, plans are added until the probe passes and the
  /// most expensive victims are reprieved while the preemptor still fits.
  bool heuristic(std::span<const std::uint32_t> pool, std::size_t di, double cutoff,
                 std::vector<std::uint32_t>& out) {
    stats_.exact = false;
    const std::size_t G = demand_.size();
    // slot -> (item, effect) lists, CSR
    slot_begin_.assign(slots_.size() + 1, 0);
    for (const auto i : pool) {
      for (auto e = items_[i].eff_begin; e < items_[i].eff_end; ++e) {
        ++slot_begin_[effects_[e].slot + 1];
      }
    }
    for (std::size_t s = 0; s < slots_.size(); ++s) slot_begin_[s + 1] += slot_begin_[s];
    slot_entries_.resize(slot_begin_.back());
    slot_fill_.assign(slot_begin_.begin(), slot_begin_.end() - 1);
    for (const auto i : pool) {
      for (auto e = items_[i].eff_begin; e < items_[i].eff_end; ++e) {
        const auto& f = effects_[e].freed;
        const double gain =
            static_cast<double>(f.milli) + static_cast<double>(f.slices) * 125.0;  // milli-GPU
        slot_entries_[slot_fill_[effects_[e].slot]++] = {
            items_[i].opt.lost_gpu_seconds / std::max(gain, 1e-9), i, e};
      }
    }
    // one plan per helpful slot
    job_stamp_.assign(jobs_.size(), 0);
    plans_.clear();
    plan_items_.clear();
    for (std::uint32_t s = 0; s < slots_.size(); ++s) {
      const auto lo = slot_begin_[s], hi = slot_begin_[s + 1];
      if (lo == hi) continue;
      std::sort(slot_entries_.begin() + lo, slot_entries_.begin() + hi,
                [](const detail::ca_entry& x, const detail::ca_entry& y) {
                  if (x.key != y.key) return x.key < y.key;
                  return x.item < y.item;
                });
      res acc = slots_[s].base;
      std::int32_t gacc[max_gpus_per_node] = {};
      std::int64_t wdelta = 0;
      detail::ca_plan pl;
      pl.begin = static_cast<std::uint32_t>(plan_items_.size());
      for (auto k = lo; k < hi; ++k) {
        const auto i = slot_entries_[k].item;
        // another option of the same job already in this plan
        if (job_stamp_[items_[i].job] == s + 1) continue;
        job_stamp_[items_[i].job] = s + 1;
        plan_items_.push_back(i);
        // everything the option releases on this node: a job with several tasks here frees
        // all of them (not only the task of the entry that ranked it)
        for (auto e2 = items_[i].eff_begin; e2 < items_[i].eff_end; ++e2) {
          if (effects_[e2].slot != s) continue;
          acc += effects_[e2].freed;
          wdelta += add_grants(effects_[e2], gacc);
        }
        acc.whole = slot_whole_base_[s] + wdelta;
        pl.cost += items_[i].opt.lost_gpu_seconds;
        std::int64_t gain = 0;
        for (std::size_t g = 0; g < G; ++g) {
          gain += std::min(cap(demand_[g], acc, slots_[s].gpus, slots_[s].model, slots_[s].mig) -
                               slot_cap_[s * G + g],
                           demand_[g].count);
        }
        if (gain >= 1) {
          pl.gain = static_cast<double>(gain);
          break;
        }
      }
      pl.end = static_cast<std::uint32_t>(plan_items_.size());
      if (pl.gain > 0) {
        plans_.push_back(pl);
      } else {
        plan_items_.resize(pl.begin);
      }
    }
    // plans in order of cost per task gained (ties: slot order), sorted lazily: usually only
    // the first few are needed, so a heap (O(P)) replaces a full sort (O(P log P))
    const auto later = [](const detail::ca_plan& x, const detail::ca_plan& y) {
      const double rx = x.cost / x.gain, ry = y.cost / y.gain;
      if (rx != ry) return rx > ry;
      return x.begin > y.begin;
    };
    std::make_heap(plans_.begin(), plans_.end(), later);
    std::size_t heap_end = plans_.size();
    plans_sorted_.clear();
    plans_sorted_.reserve(plans_.size());  // references from plan_at stay valid
    const auto plan_at = [&](std::size_t k) -> const detail::ca_plan& {
      while (plans_sorted_.size() <= k) {
        std::pop_heap(plans_.begin(), plans_.begin() + static_cast<std::ptrdiff_t>(heap_end),
                      later);
        plans_sorted_.push_back(plans_[--heap_end]);
      }
      return plans_sorted_[k];
    };
    // take plans until the bound holds
    greedy_.clear();
    used_job_.assign(jobs_.size(), 0);
    std::size_t next = 0;
    const auto add_plan = [&](const detail::ca_plan& pl) {
      const auto mark = greedy_.size();
      for (auto q = pl.begin; q < pl.end; ++q) {
        const auto i = plan_items_[q];
        if (used_job_[items_[i].job] != 0) continue;
        greedy_.push_back(i);
        used_job_[items_[i].job] = 1;
      }
      if (!admissible_set(greedy_, preemptor_tenant_)) {
        for (auto q = mark; q < greedy_.size(); ++q) used_job_[items_[greedy_[q]].job] = 0;
        greedy_.resize(mark);
        return false;
      }
      return greedy_.size() > mark;
    };
    bool holds = false;
    for (; next < plans_.size() && !holds; ++next) {
      if (add_plan(plan_at(next))) holds = bound(greedy_, di);
    }
    if (!holds) return false;
    // exact over the jobs of the chosen plans and the next ones
    pool_jobs_.assign(jobs_.size(), 0);
    std::size_t njobs = 0;
    for (const auto i : greedy_) {
      if (pool_jobs_[items_[i].job] == 0) ++njobs;
      pool_jobs_[items_[i].job] = 1;
    }
    for (std::size_t k = next; k < plans_.size() && njobs < opt_.exact_limit; ++k) {
      const auto& pk = plan_at(k);
      for (auto q = pk.begin; q < pk.end && njobs < opt_.exact_limit; ++q) {
        const auto jb = items_[plan_items_[q]].job;
        if (pool_jobs_[jb] == 0) {
          pool_jobs_[jb] = 1;
          ++njobs;
        }
      }
    }
    pool_.clear();
    for (const auto i : pool) {
      if (pool_jobs_[items_[i].job] != 0) pool_.push_back(i);
    }
    if (njobs <= opt_.exact_limit) {
      const auto saved_budget = opt_.enumeration_budget;
      opt_.enumeration_budget = std::min(opt_.enumeration_budget, opt_.heuristic_budget);
      const bool found = exact(pool_, di, cutoff, out);
      opt_.enumeration_budget = saved_budget;
      stats_.exact = false;
      if (found) return true;
    }
    // add plans until the probe passes
    bool ok = false;
    while (stats_.probes < opt_.max_probes) {
      if (bound(greedy_, di) && run_probe(greedy_)) {
        ok = true;
        break;
      }
      bool added = false;
      while (next < plans_.size() && !added) added = add_plan(plan_at(next++));
      if (!added) break;
    }
    if (!ok) return false;
    // reprieve: drop the most expensive victims while the preemptor still fits
    std::sort(greedy_.begin(), greedy_.end(), [&](std::uint32_t x, std::uint32_t y) {
      return items_[x].opt.lost_gpu_seconds > items_[y].opt.lost_gpu_seconds;
    });
    placement_keep_ = placement_buf_;
    for (std::size_t k = 0; k < greedy_.size();) {
      set_.assign(greedy_.begin(), greedy_.end());
      set_.erase(set_.begin() + static_cast<std::ptrdiff_t>(k));
      if (!set_.empty() && stats_.probes < opt_.max_probes && test(set_, di) == verdict3::yes) {
        greedy_ = set_;
        placement_keep_ = placement_buf_;
      } else {
        ++k;
      }
    }
    placement_buf_ = placement_keep_;
    double c = 0;
    for (const auto i : greedy_) c += items_[i].opt.lost_gpu_seconds;
    if (c >= cutoff) return false;
    out = greedy_;
    return true;
  }

  /// Searches every domain (one when topology does not matter); fills `plan` with the cheapest.
  bool search(bool include_recent, preemption_plan& plan) {
    best_.clear();
    double best_cost = std::numeric_limits<double>::infinity();
    bool found = false;
    for (std::size_t di = 0; di < dom_ids_.size(); ++di) {
      dom_items_.clear();
      std::size_t njobs = 0;
      last_job_ = npos;
      for (std::uint32_t i = 0; i < items_.size(); ++i) {
        const auto& jb = jobs_[items_[i].job];
        if (jb.recent && !include_recent) continue;
        if (single_domain_ && (!jb.one_domain || jb.domain != dom_ids_[di])) continue;
        dom_items_.push_back(i);
        if (items_[i].job != last_job_) ++njobs;
        last_job_ = items_[i].job;
      }
      if (dom_items_.empty()) continue;
      // quick reject: even every evict option (each frees at least what its shrink frees)
      evicts_.clear();
      for (const auto i : dom_items_) {
        if (items_[i].opt.action != victim_action::shrink) evicts_.push_back(i);
      }
      if (!bound(evicts_, di)) continue;
      ++stats_.domains;
      cand_.clear();
      const bool ok = njobs <= opt_.exact_limit ? exact(dom_items_, di, best_cost, cand_)
                                                : heuristic(dom_items_, di, best_cost, cand_);
      if (!ok) continue;
      double c = 0;
      for (const auto i : cand_) c += items_[i].opt.lost_gpu_seconds;
      if (c < best_cost) {
        best_cost = c;
        best_ = cand_;
        best_placement_ = placement_buf_;
        found = true;
      }
    }
    if (!found) return false;
    plan = {};
    std::sort(best_.begin(), best_.end(), [&](std::uint32_t a, std::uint32_t b) {
      return jobs_[items_[a].job].r->spec.id < jobs_[items_[b].job].r->spec.id;
    });
    for (const auto i : best_) {
      const auto& it = items_[i];
      const auto& r = *jobs_[it.job].r;
      victim_detail d;
      d.job = r.spec.id;
      d.action = it.opt.action;
      d.gpus = it.opt.gpus;
      d.lost_gpu_seconds = it.opt.lost_gpu_seconds;
      d.wait = it.opt.wait;
      if (it.opt.action == victim_action::shrink) {
        plan.shrinks.insert(plan.shrinks.end(), orders_.begin() + it.ord_begin,
                            orders_.begin() + it.ord_end);
        if (it.ord_end - it.ord_begin == 1) {
          d.group = orders_[it.ord_begin].group;
          d.shrink_to = orders_[it.ord_begin].to;
        }
      } else {
        plan.victims.push_back(r.spec.id);
      }
      plan.lost_gpu_seconds += d.lost_gpu_seconds;
      plan.details.push_back(d);
    }
    plan.placement = best_placement_;
    if (!plan.shrinks.empty()) trim_shrinks(plan);
    plan.why = reason::placed_by_preemption();
    return true;
  }

  /// Shrinks only as far as needed: raises each order's `to` (fewer tasks released) while the
  /// preemptor still fits (one probe per step). The cost does not change (the pause hits every
  /// worker whatever the number released); the details' `shrink_to` and `gpus` do.
  void trim_shrinks(preemption_plan& plan) {
    for (auto& o : plan.shrinks) {
      const std::int32_t runs = ctx_->book().find(o.job)->tasks_in_group(o.group);
      while (o.to + 1 < runs && stats_.probes < opt_.max_probes) {
        ++o.to;
        ++stats_.probes;
        if (!(*probe_)(plan.victims, plan.shrinks, &placement_buf_)) {
          --o.to;
          break;
        }
        plan.placement = placement_buf_;
      }
    }
    for (auto& d : plan.details) {
      if (d.action != victim_action::shrink) continue;
      const running_job& r = *ctx_->book().find(d.job);
      released_.clear();
      for (const auto& o : plan.shrinks) {
        if (o.job != d.job) continue;
        std::int32_t seen = 0;
        for (const auto& t : r.tasks) {
          if (t.group == o.group && seen++ >= o.to) released_.push_back(t);
        }
        if (d.group == o.group) d.shrink_to = o.to;
      }
      d.gpus = held_gpus(ctx_->state(), released_);
    }
  }

  [[nodiscard]] reason no_victims_reason(const job_spec& j) const {
    if (j.whole_gpus().value() > 0 && ctx_ != nullptr) {
      // GPUs free plus what every admissible candidate could free, in the best domain
      std::int64_t best = 0;
      for (std::size_t di = 0; di < dom_ids_.size(); ++di) {
        std::int64_t g = dom_res_[di].whole;
        for (const auto& it : items_) {
          const auto& jb = jobs_[it.job];
          if (it.opt.action == victim_action::shrink) continue;
          if (single_domain_ && (!jb.one_domain || jb.domain != dom_ids_[di])) continue;
          g += it.total.whole;
        }
        best = std::max(best, g);
      }
      return reason::no_victims(resource_kind::gpu, j.whole_gpus().value(), best);
    }
    return reason::no_victims(static_cast<std::int64_t>(jobs_.size()));
  }

  struct tenant_sum {
    std::int64_t sum = 0, max = 0, reclaim_sum = 0, reclaim_max = 0;
  };
  static constexpr std::uint32_t npos = std::numeric_limits<std::uint32_t>::max();

  checkpoint_aware_options opt_;
  preemption_search_stats stats_;
  std::vector<std::pair<job_id, sim_time>> history_;
  // per select
  const fit_probe* probe_ = nullptr;
  const schedule_context* ctx_ = nullptr;
  bool single_domain_ = false, has_recent_ = false, any_reclaim_ = false;
  tenant_id preemptor_tenant_{0};
  std::int64_t preemptor_milli_ = 0;
  std::size_t preemptor_tasks_ = 0;
  res need_;
  std::uint32_t last_job_ = npos;
  // scratch, reused across selects
  std::vector<detail::ca_demand> demand_;
  std::vector<res> node_acc_;
  std::vector<std::uint32_t> node_slot_;
  std::vector<node_index> touched_;
  std::vector<detail::ca_job> adm_, jobs_;
  std::vector<double> adm_cost_, adm_shrink_cost_;
  std::vector<std::uint32_t> adm_task_begin_;
  std::vector<detail::ca_task> adm_tasks_;
  std::vector<detail::ca_grant> adm_grants_;
  std::vector<detail::ca_item> items_;
  std::vector<detail::ca_effect> effects_;
  std::vector<detail::ca_grant> grants_;
  std::vector<std::int32_t> slot_gpu_acc_, slot_gpu_base_;
  std::vector<std::int64_t> slot_whole_base_, slot_whole_delta_;
  std::vector<shrink_order> orders_, shrink_tmp_, shrink_buf_;
  std::vector<task_allocation> released_, placement_buf_, placement_keep_, best_placement_;
  std::vector<detail::ca_slot> slots_;
  std::vector<std::int64_t> slot_cap_, dom_cap_;
  std::vector<std::uint32_t> dom_ids_;
  std::vector<res> dom_res_, slot_acc_;
  std::vector<std::uint8_t> slot_touched_mark_, used_job_, pool_jobs_, adm_helpful_;
  std::vector<res> node_base_;
  std::vector<std::uint32_t> node_tasks_, slot_tasks_;  ///< admissible tasks per node / slot
  std::vector<std::int64_t> slot_max_gain_;  ///< upper bound on the tasks a slot can gain
  struct screen_sum {
    double cost = 0;         ///< sum of the entries' costs
    std::int64_t milli = 0;  ///< sum of the milli they free
    std::int64_t min_milli = std::numeric_limits<std::int64_t>::max();  ///< least of those
  };
  std::vector<screen_sum> scr_sum_;  ///< free resources of the nodes touched by the current scan
  std::vector<std::uint32_t> node_base_stamp_;  ///< == scan_stamp_: node_base_ is current
  std::uint32_t scan_stamp_ = 0;
  std::vector<std::uint32_t> slot_touched_, sorted_, set_, order_, greedy_, pool_, dom_items_,
      evicts_, cand_, best_;
  std::vector<std::uint64_t> conflict_;
  std::vector<std::uint32_t> slot_begin_, slot_fill_, plan_items_, job_stamp_;
  std::vector<detail::ca_entry> slot_entries_;
  std::vector<detail::ca_screen_entry> scr_entries_;
  std::vector<res> scr_next_;
  std::vector<std::uint32_t> scr_begin_, scr_fill_, scr_stamp_;
  std::vector<std::uint8_t> scr_keep_;
  std::vector<std::pair<double, std::uint32_t>> scr_rank_;
  std::vector<detail::ca_plan> plans_, plans_sorted_;
  std::vector<detail::ca_heap_node> heap_;
  std::vector<job_id> victims_buf_;
  std::vector<std::pair<tenant_id, tenant_sum>> tenant_sums_;
  std::vector<std::pair<tenant_id, std::optional<tenant_quota>>> quota_cache_;
};

static_assert(preemption_policy<checkpoint_aware_preemption>);

GPUSCHED_END_NAMESPACE
