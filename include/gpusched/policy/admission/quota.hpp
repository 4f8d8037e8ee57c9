// SPDX-License-Identifier: Apache-2.0
/// @file
/// `quota_admission<Inner>`: tenant quotas with cohorts, borrowing and lending (Kueue
/// semantics, see `workload/quota.hpp`) in front of another admission policy (by default
/// `gang_admission`, which keeps its queueing, backfill and backoff).
///
/// Two checks: before placement, a lower bound of the gang's demand at its minimum size (CPU,
/// memory, milli-GPU, and whole GPUs of a model when a request allows exactly one model) must
/// fit, so a gang that can never fit its quota now is deferred without a placement attempt;
/// after the tentative placement (`approve`), the exact usage of what was placed (GPUs counted
/// per model they landed on) must fit, with any victims' usage returned first. The first check
/// also passes a gang whose lower bound stays within its tenant's own nominal quota
/// (`quota_tree::within_nominal`) even when cohort peers' borrowing leaves nothing available:
/// that quota may be reclaimed (Kueue `reclaimWithinCohort`), so the gang goes on to placement
/// and preemption, and `approve` decides exactly with the victims' usage returned.
///
/// Quota reclaim on free resources (the pipeline's free-quota preemption path): when such a
/// gang is placed without victims (or with the victims of GPU preemption) and `approve` refuses
/// it over quota, `reclaim_for` gives the pipeline a `reclaim_scope` when reclaim is allowed
/// (`reclaim_within_cohort`, Kueue's setting of that name: `any` by default, `lower_priority`,
/// `never`): the gang's lower bound is within its tenant's nominal quota, and the candidates
/// are the running, preemptible jobs of other queues under the same root cohort that borrow
/// (usage above nominal) a resource the gang needs (a governed dimension of its lower bound;
/// any GPU model's dimension when it needs GPUs). The pipeline then asks the preemption policy
/// (`select_reclaim`) for victims among them, probing each set with `approve_reclaim`:
/// `approve` with the victims' usage returned, plus the exact placement within the tenant's own
/// nominal quota (so reclaim never helps a gang that would itself borrow). Usage is
/// recomputed from the ledger at the start of every cycle (so releases between cycles count
/// exactly) and kept in step with every commit during the cycle. Tenants without a queue in the
/// tree are not limited.
///
/// Elastic gangs (Kueue's partial admission): the quota is checked on what the placement
/// actually granted (the placement policy may already have chosen a reduced size to fit the
/// cluster). If that is over quota and the gang can shrink further, the largest size that fits
/// both the cluster and the quota is admitted: sizes are reductions `x` of the full gang,
/// spread over the elastic groups as `detail::reduced_sizes(j, x)` does (policy/detail/fit.hpp),
/// each placed again with the pipeline's placement policy in the same transaction and checked
/// exactly; `x` is found by bisection between the granted size and the minimum, assuming that
/// a smaller gang fits (cluster and quota) whenever a larger one does. The decision's placement
/// shows the size admitted; a gang over quota even at its minimum is deferred with the
/// shortfall at its minimum. The inner policy's `approve` (backfill reservations) then judges
/// the final placement.
/// Complexity: O(dims x tree depth) per check; an elastic gang shrunk for quota costs
/// O(log(max - min)) placements; O(running tasks) per cycle for the recompute; `reclaim_for`
/// O(running jobs x (dims + depth) + running tasks), each `borrowing` test O(dims x victims).
/// Known limit: an elastic gang reclaims at the size `approve` chose for the cohort; if that
/// size is over the tenant's nominal quota, no smaller size is tried by reclaim.
///
/// ## Kueue's preemption model, per queue (`set_preemption`)
/// A queue given a `queue_preemption` (Kueue's `ClusterQueue.spec.preemption`:
/// `withinClusterQueue`, `reclaimWithinCohort`, `borrowWithinCohort` with
/// `maxPriorityThreshold`) follows Kueue's classical preemption for its jobs, and only it: its
/// victims are chosen on the reclaim path whether the GPUs or the quota are short (the
/// pipeline asks `reclaim_for` first when such a job does not fit on free resources, and the
/// preemption policy's `select` is then not used for it). Queues without settings keep the
/// behaviour described above.
/// - Gate (`admit`, Kueue's flavor assigner): a gang over quota goes on to placement when its
///   lower bound `r` may be reached by preemption in every governed dimension where it does not
///   fit what is available: `r <= potential_available` and (`r <= nominal`, or a sub-cohort
///   below the root would hold it, or `borrowWithinCohort` is not `never`); otherwise it is
///   deferred as before.
/// - Candidates (`reclaim_for`), running and preemptible, using a dimension that needs
///   preemption (`r` above what is available; all dimensions of `r` when only the GPUs are
///   short): the preemptor's own queue's jobs that `withinClusterQueue` allows (`lower_priority`:
///   priority below the preemptor's; `lower_or_newer_equal_priority`: or equal priority and
///   submitted after it); and, unless `reclaimWithinCohort` is `never`, the jobs of other queues
///   under the same root cohort that borrow (`lower_priority`: priority below the preemptor's).
///   Another queue's job is *hierarchical* (group 0) when the preemptor fits its own nominal
///   quota, or the subtree quota of a cohort below their common cohort (Kueue's
///   `QuantitiesFitInQuota` walk); otherwise group 1, and then it may be taken while the
///   preemptor borrows only under `borrowWithinCohort: lower_priority` with the job's priority
///   below the preemptor's and not above `max_priority_threshold`. Own-queue jobs are group 2.
///   Victims are offered by group (borrowers first, own queue last), then by the preemption
///   policy's order (`priority_preemption`: lowest priority, then most recently started).
/// - Runs (Kueue's `classicalPreemptions`): "borrowing allowed" takes every candidate except
///   group-1 jobs that may not be taken while borrowing, and requires the placement to fit
///   what the queue may use (`check`) after the victims leave; "no borrowing" takes every
///   candidate and also requires the placement within the queue's nominal quota. Only
///   "borrowing allowed" when there is no other queue's candidate, or when borrowing within the
///   cohort is `never` and the queue is not below its nominal quota; "no borrowing" first then
///   "borrowing allowed" when borrowing is `never` and there is no group-0 candidate; else
///   "borrowing allowed" first. Another queue's candidate stays one only while its queue
///   borrows (a queue's own candidates always). So a preemptor admitted after preemption fits
///   its quota, and within its nominal quota when it took a victim that forbids borrowing.
/// - Capacity hold (Kueue's `reserveCapacityForUnreclaimablePreempt`): a job of a queue whose
///   `reclaimWithinCohort` is not `any` (so the queue is not sure to get its quota back later)
///   that passed `admit` over its quota but stays unplaced (no victims allowed or enough)
///   holds quota for the rest of the cycle, so later jobs (of any queue) cannot borrow what it
///   waits for. The amount, per governed dimension of its lower bound `r` (Kueue's
///   `quotaResourcesToReserve`): when the queue would borrow (`usage + r > nominal` in some
///   dimension), `r` capped at `nominal + borrowing limit - usage` where a borrowing limit is
///   set; otherwise `min(r, nominal - usage)`; never below 0. One hold per queue per cycle (the
///   first such job; Kueue considers one head per ClusterQueue per cycle). Holds count in
///   `admit`, `approve` and `approve_growth`, not in choosing reclaim candidates (a queue is
///   not a borrower because of what it holds), and never in `quotas()`, whose usage stays what
///   the running jobs use; `holds()` lists them; the next `begin_cycle` drops them.
/// Known limits: the intermediate cohorts between a candidate's queue and the common cohort
/// are not checked for being over their quota (exact for one level of cohorts); Kueue's
/// fair sharing is not modelled here.
#pragma once

#include <algorithm>  // std::fill
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>  // std::move, std::pair
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/policy/admission/gang.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/detail/fit.hpp"  // detail::reduced_sizes
#include "gpusched/policy/hooks.hpp"
#include "gpusched/workload/quota.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// The resource kind (and GPU model, for whole GPUs of one model) of quota dimension `q`.
[[nodiscard]] inline std::pair<resource_kind, gpu_model_id> quota_reason_resource(
    const quota_resource& q) noexcept {
  resource_kind kind = resource_kind::none;
  gpu_model_id model;
  switch (q.what) {
    case quota_resource::kind::cpu:
      kind = resource_kind::cpu;
      break;
    case quota_resource::kind::memory:
      kind = resource_kind::memory;
      break;
    case quota_resource::kind::gpu_milli:
      kind = resource_kind::gpu_share;
      break;
    case quota_resource::kind::gpus:
      kind = resource_kind::gpu;
      model = q.model;
      break;
  }
  return {kind, model};
}

/// The over-quota reason for a shortfall in tenant's queue.
[[nodiscard]] inline reason over_quota_reason(const quota_shortfall& s) {
  const auto [kind, model] = quota_reason_resource(s.resource);
  return reason::over_quota(kind, s.needed, s.available, model,
                            s.limiting_node >= 0 ? std::optional(s.limiting_node) : std::nullopt);
}

/// The never-admissible reason (`reason_code::exceeds_quota`) for `demand` (a gang's lower
/// bound, `demand_lower_bound`) in tenant `t`'s queue of `q`: the first governed dimension in
/// which it exceeds `quota_tree::potential_available`, what the queue could be given with nothing
/// else in use (its nominal quota plus borrowing limit, within what its cohorts hold), with
/// `scope` the queue's node; nullopt when none (or `t` has no queue). O(dims x depth).
[[nodiscard]] inline std::optional<reason> never_admissible(const quota_tree& q, tenant_id t,
                                                            const quota_vector& demand) {
  const auto n = q.queue_of(t);
  if (n < 0) return std::nullopt;
  for (std::size_t d = 0; d < q.dims() && d < demand.size(); ++d) {
    if (!q.governed(d) || demand[d] <= 0) continue;
    const auto most = q.potential_available(n, d);
    if (demand[d] > most) {
      const auto [kind, model] = quota_reason_resource(q.resource_of(d));
      return reason::exceeds_quota(kind, demand[d], most, model, n);
    }
  }
  return std::nullopt;
}

/// As above, and for whole GPUs wherever they land: `j`'s whole GPUs at its minimum size must
/// go to models of cluster `c` that its groups allow (that some node of `c` has); when every
/// such model's dimension is governed, the queue can never hold more than the sum of their
/// `potential_available`, so a gang needing more is never admissible (`model` is that model
/// when there is one, else invalid). O(dims x depth + groups x models).
[[nodiscard]] inline std::optional<reason> never_admissible(const quota_tree& q, const cluster& c,
                                                            const job_spec& j,
                                                            const quota_vector& demand) {
  if (auto r = never_admissible(q, j.tenant, demand)) return r;
  const auto n = q.queue_of(j.tenant);
  if (n < 0) return std::nullopt;
  std::int64_t gpus = 0;
  gpu_model_set models;  // models the gang's whole GPUs may land on
  for (const auto& g : j.groups) {
    if (g.request.gpu.kind != gpu_demand_kind::whole) continue;
    gpus += std::int64_t{g.request.gpu.count.value()} * g.minimum();
    for (std::size_t m = 0; m < c.catalog().size(); ++m) {
      const gpu_model_id id{static_cast<gpu_model_id::rep>(m)};
      if (g.request.allowed_models.admits(id) && c.max_node_gpus(id) > 0) models.insert(id);
    }
  }
  if (gpus == 0 || models.empty()) return std::nullopt;
  std::int64_t most = 0;
  gpu_model_id only;
  for (std::size_t m = 0; m < c.catalog().size(); ++m) {
    const gpu_model_id id{static_cast<gpu_model_id::rep>(m)};
    if (!models.contains(id)) continue;
    const std::size_t d = quota_resource::gpus(id).index();
    if (d >= q.dims() || !q.governed(d)) return std::nullopt;  // an unlimited model may take them
    most += q.potential_available(n, d);
    only = id;
  }
  if (gpus <= most) return std::nullopt;
  return reason::exceeds_quota(resource_kind::gpu, gpus, most,
                               models.size() == 1 ? only : gpu_model_id{}, n);
}

/// Renders an over-quota reason with the names of the quota node and GPU model, e.g.
/// `over quota: needs 16 GPUs of H100-SXM5-80GB, 8 left under cohort 'research'`.
///
/// A never-admissible reason (`exceeds_quota`) names the queue, the resource and its limits:
/// @code{.txt}
/// never admissible by quota: needs 16 GPUs of H100-SXM5-80GB, more than queue 'team-a' can
///   ever be given (at most 8: nominal quota 8, borrowing limit 0)
/// @endcode
/// (one line), then the cohort that holds less when that binds, as in
/// `; cohort 'org' holds 12 in all`. O(depth).
[[nodiscard]] inline std::string describe_quota(const reason& r, const quota_tree& q,
                                                const gpu_catalog& catalog) {
  if (r.code == reason_code::exceeds_quota && r.scope && *r.scope >= 0 &&
      static_cast<std::size_t>(*r.scope) < q.nodes().size()) {
    const auto n = *r.scope;
    const auto& node = q.at(n);
    // the dimension: its resource and model
    std::size_t d = q.dims();
    for (std::size_t k = 0; k < q.dims(); ++k) {
      if (quota_reason_resource(q.resource_of(k)) == std::pair(r.resource, r.model)) d = k;
    }
    std::string s = "never admissible by quota: needs " + amount_text(r.needed, r.resource);
    if (r.model.valid() && catalog.contains(r.model)) s += " of " + catalog[r.model].name;
    s += ", more than " + std::string(node.queue ? "queue '" : "cohort '") + node.name +
         "' can ever be given (at most " + std::to_string(r.available);
    if (d < q.dims()) {
      const auto& lim = node.per_dim[d];
      s += ": nominal quota " + std::to_string(lim.nominal.value_or(0)) + ", " +
           (lim.borrowing_limit ? "borrowing limit " + std::to_string(*lim.borrowing_limit)
                                : std::string("no borrowing limit"));
      if (node.parent < 0) s += ", no cohort";
      s += ")";
      // the cohort that binds, when the queue's own limits do not
      const bool own =
          lim.borrowing_limit && q.subtree_quota(n, d) + *lim.borrowing_limit == r.available;
      if (node.parent >= 0 && !own) {
        std::int32_t root = node.parent;
        while (q.at(root).parent >= 0) root = q.at(root).parent;
        s += "; cohort '" + q.at(root).name + "' holds " +
             std::to_string(q.subtree_quota(root, d)) + " in all";
      }
    } else {
      s += ")";
    }
    return s;
  }
  if (r.code != reason_code::over_quota) return describe(r);
  std::string s = "over quota: needs " + amount_text(r.needed, r.resource);
  if (r.model.valid() && catalog.contains(r.model)) s += " of " + catalog[r.model].name;
  s += ", " + std::to_string(r.available) + " left";
  if (r.scope && *r.scope >= 0 && static_cast<std::size_t>(*r.scope) < q.nodes().size()) {
    const auto& n = q.at(*r.scope);
    s += std::string(n.queue ? " in queue '" : " under cohort '") + n.name + "'";
  }
  return s;
}

/// Kueue's `reclaimWithinCohort`: which borrowers' jobs a gang within its nominal quota may
/// reclaim its quota from on free resources (see `quota_admission`). Kueue's own default is
/// `Never`; here it is `any`, since `admit` already lets such a gang through for reclaim.
enum class reclaim_within_cohort : std::uint8_t {
  never,           ///< no reclaim on free resources
  lower_priority,  ///< only borrowers' jobs of priority below the gang's
  any,             ///< borrowers' jobs of any priority (the default)
};

/// Kueue's `withinClusterQueue`: which jobs of its own queue a gang may preempt.
enum class within_cluster_queue : std::uint8_t {
  never,                          ///< none (Kueue's default)
  lower_priority,                 ///< priority below the gang's
  lower_or_newer_equal_priority,  ///< below, or equal and submitted after the gang
};

/// Kueue's `borrowWithinCohort.policy`: whether a gang that will borrow may still preempt
/// lower-priority jobs of other queues in the cohort.
enum class borrow_within_cohort : std::uint8_t {
  never,           ///< no (Kueue's default)
  lower_priority,  ///< jobs of priority below the gang's (and not above the threshold)
};

/// @brief One queue's preemption settings, Kueue's `ClusterQueue.spec.preemption`; the
/// defaults are Kueue's (`Never` everywhere). See `quota_admission::set_preemption`.
struct queue_preemption {
  /// `withinClusterQueue`.
  within_cluster_queue within = within_cluster_queue::never;
  /// `reclaimWithinCohort`.
  reclaim_within_cohort reclaim = reclaim_within_cohort::never;
  /// `borrowWithinCohort.policy`.
  borrow_within_cohort borrow = borrow_within_cohort::never;
  /// `borrowWithinCohort.maxPriorityThreshold`: with borrowing, only jobs of priority at most
  /// this may be preempted (none: any priority below the gang's).
  std::optional<std::int32_t> max_priority_threshold;
  friend bool operator==(const queue_preemption&, const queue_preemption&) = default;
};

/// @brief Quota gate in front of `Inner`; see the file documentation.
template <class Inner = gang_admission>
  requires admission_policy<Inner>
class quota_admission {
 public:
  /// Opts into the admission family.
  using policy_category = admission_tag;
  /// Its own hooks; each also forwards to `Inner`'s hook of the same name when `Inner` declares it.
  using hooks = hook_list<hook::begin_cycle, hook::approve, hook::reclaim, hook::on_committed,
                          hook::on_admitted, hook::approve_growth, hook::on_grown>;

  /// Gates `inner` with the quotas of `tree`.
  explicit quota_admission(quota_tree tree, Inner inner = {})
      : tree_(std::move(tree)), inner_(std::move(inner)), prefs_(tree_.nodes().size()) {}

  /// The policy's name: `quota`.
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "quota"; }
  /// The quota tree, with its current usage.
  [[nodiscard]] const quota_tree& quotas() const noexcept { return tree_; }
  /// The admission policy behind the quota gate.
  ///@{
  [[nodiscard]] const Inner& inner() const noexcept { return inner_; }
  [[nodiscard]] Inner& inner() noexcept { return inner_; }
  ///@}
  /// Which borrowers a gang within its nominal quota may reclaim from.
  [[nodiscard]] reclaim_within_cohort reclaim() const noexcept { return reclaim_; }
  /// Sets which borrowers a gang within its nominal quota may reclaim from (default `any`).
  void set_reclaim(reclaim_within_cohort r) noexcept { reclaim_ = r; }

  /// Gives every queue Kueue's preemption model with settings `p` (file documentation, last
  /// section). O(nodes).
  void set_preemption(const queue_preemption& p) {
    for (std::size_t n = 0; n < prefs_.size(); ++n) {
      if (tree_.nodes()[n].queue) prefs_[n] = p;
    }
  }
  /// Gives queue `queue` Kueue's preemption model with settings `p`. O(nodes).
  /// @throws invalid_value_error when `queue` names no queue of the tree.
  void set_preemption(std::string_view queue, const queue_preemption& p) {
    const auto n = tree_.find(queue);
    if (n < 0 || !tree_.at(n).queue) {
      throw invalid_value_error(error_id::unknown_name, "quota admission", "queue",
                                std::string(queue), "no such queue in the quota tree");
    }
    prefs_[static_cast<std::size_t>(n)] = p;
  }
  /// The Kueue preemption settings of tenant `t`'s queue, or nullptr when it has none (then
  /// the behaviour without them applies). O(1).
  [[nodiscard]] const queue_preemption* preemption_of(tenant_id t) const noexcept {
    const auto q = tree_.queue_of(t);
    if (q < 0) return nullptr;
    const auto& p = prefs_[static_cast<std::size_t>(q)];
    return p ? &*p : nullptr;
  }

  /// Quota held in this cycle for a waiting job (file documentation, "Capacity hold").
  struct hold {
    std::int32_t queue = -1;  ///< the queue's node in `quotas()`
    job_id job;               ///< the waiting job it holds for
    quota_vector amount;      ///< how much, per dimension (`quota_resource::index()`)
  };
  /// The holds of the current cycle, in the order they were taken. O(1).
  [[nodiscard]] std::span<const hold> holds() const noexcept { return holds_; }

  /// Hook `begin_cycle`: called once per cycle, before the pending jobs are ordered.
  void begin_cycle(const schedule_context& ctx) {
    if constexpr (declares_hook<Inner, hook::begin_cycle>) inner_.begin_cycle(ctx);
    tree_.recompute(ctx.book());
    holds_.clear();
  }

  /// The verdict on `j` before placement (admit, defer or reject, with the reason).
  [[nodiscard]] admission_verdict admit(const schedule_context& ctx, const job_spec& j) {
    demand_lower_bound(j, tree_.dims(), buffer_);
    if (auto never = never_admissible(tree_, ctx.state(), j, buffer_)) {
      return {verdict::reject, *never};
    }
    admission_verdict v = inner_.admit(ctx, j);
    if (v.kind != verdict::admit) return v;
    const hold_guard held(*this);
    demand_lower_bound(j, tree_.dims(), buffer_);
    if (const auto s = tree_.check(j.tenant, buffer_)) {
      // within its own nominal quota: reclaimable from borrowers, so placement and preemption
      // are tried; approve() checks exactly with the victims' usage returned
      if (!tree_.within_nominal(j.tenant, buffer_) && !may_preempt_for(j.tenant, buffer_)) {
        return {verdict::defer, over_quota_reason(*s)};
      }
    }
    went_to_placement_ = j.id;
    return v;
  }

  /// After the tentative placement in `tx`: the exact quota check (shrinking an elastic gang
  /// until it fits, see the file documentation), then the inner policy's `approve`.
  [[nodiscard]] admission_verdict approve(const schedule_context& ctx, const job_spec& j,
                                          ledger::transaction& tx, const admission_tools& tools) {
    return approve_impl(ctx, j, tx, tools, false);
  }

  /// `approve` for the free-quota reclaim path: also requires the exact placement to stay
  /// within the tenant's own nominal quota (a gang that would borrow reclaims nothing).
  [[nodiscard]] admission_verdict approve_reclaim(const schedule_context& ctx, const job_spec& j,
                                                  ledger::transaction& tx,
                                                  const admission_tools& tools) {
    return approve_impl(ctx, j, tx, tools, reclaim_nominal_);
  }

  /// The scope of a quota reclaim for `j`, refused by `approve` for `why`, when reclaim applies
  /// (see the file documentation): `why` is over quota, `j`'s tenant has a queue, `j`'s lower
  /// bound is within that queue's nominal quota, and some candidate exists; nullopt otherwise.
  /// The scope points into this policy and the ledger: valid until either changes.
  /// O(running jobs x (dims + depth) + running tasks).
  [[nodiscard]] std::optional<reclaim_scope> reclaim_for(const schedule_context& ctx,
                                                         const job_spec& j, const reason& why) {
    reclaim_nominal_ = true;
    if (const auto* p = preemption_of(j.tenant)) return kueue_scope(ctx, j, why, *p);
    if (reclaim_ == reclaim_within_cohort::never || why.code != reason_code::over_quota) {
      return std::nullopt;
    }
    const auto q = tree_.queue_of(j.tenant);
    if (q < 0) return std::nullopt;
    demand_lower_bound(j, tree_.dims(), need_);
    if (!tree_.within_nominal(j.tenant, need_)) return std::nullopt;
    const std::size_t dims = tree_.dims();
    relevant_.assign(dims, 0);
    for (std::size_t d = 0; d < dims; ++d) {
      relevant_[d] = tree_.governed(d) && (need_[d] > 0 || (d >= 3 && need_[2] > 0)) ? 1 : 0;
    }
    const auto root = root_of(q);
    own_queue_ = -1;  // no own-queue candidates here
    cand_.clear();
    cand_queue_.clear();
    cand_usage_.clear();
    for (const auto& r : ctx.book().running()) {
      if (r.spec.tenant == j.tenant || !r.spec.preemptible) continue;
      if (reclaim_ == reclaim_within_cohort::lower_priority && r.spec.priority >= j.priority) {
        continue;
      }
      const auto qr = tree_.queue_of(r.spec.tenant);
      if (qr < 0 || root_of(qr) != root || !borrows(qr, {})) continue;
      cand_.push_back(&r);
      cand_queue_.push_back(qr);
      cand_usage_.resize(cand_usage_.size() + dims, 0);
      add_usage(ctx.state(), r.tasks,
                std::span<std::int64_t>(cand_usage_).subspan(cand_usage_.size() - dims, dims));
    }
    if (cand_.empty()) return std::nullopt;
    borrowing_.self = this;
    return reclaim_scope(cand_, borrowing_);
  }

  /// Hook `on_committed`: called after an admitted job's commit, with its decision.
  void on_committed(const schedule_context& ctx, const decision& d) {
    if constexpr (declares_hook<Inner, hook::on_committed>) inner_.on_committed(ctx, d);
    if (!d.victims.empty() || !d.shrinks.empty()) {
      tree_.recompute(ctx.book());  // victims' allocations are gone: count again, exactly
      return;
    }
    if (const auto* r = ctx.book().find(d.job)) {
      quota_vector v(tree_.dims(), 0);
      add_usage(ctx.state(), r->tasks, v);
      tree_.charge(r->spec.tenant, v);
    }
  }

  /// The growth step's check (see `pipeline`): the tasks `added` to running job `r`
  /// (tentatively applied) must fit its tenant's quota like a new placement, exactly (GPUs per
  /// model they landed on); then the inner policy's `approve_growth`, if any.
  /// O(grants + dims x depth).
  [[nodiscard]] admission_verdict approve_growth(const schedule_context& ctx, const running_job& r,
                                                 std::span<const task_allocation> added) {
    buffer_.assign(tree_.dims(), 0);
    add_usage(ctx.state(), added, buffer_);
    std::optional<quota_shortfall> s;
    {
      const hold_guard held(*this);
      s = tree_.check(r.spec.tenant, buffer_);
    }
    if (s) return {verdict::defer, over_quota_reason(*s)};
    if constexpr (declares_hook<Inner, hook::approve_growth>) {
      return inner_.approve_growth(ctx, r, added);
    } else {
      return {verdict::admit, {}};
    }
  }

  /// After a growth commit: charges the added tasks to `r`'s tenant (a shrink is counted by
  /// the recompute in `on_committed`; a growth adds exactly what it placed). O(grants + dims x
  /// depth).
  void on_grown(const schedule_context& ctx, const running_job& r,
                std::span<const task_allocation> added) {
    if constexpr (declares_hook<Inner, hook::on_grown>) inner_.on_grown(ctx, r, added);
    quota_vector v(tree_.dims(), 0);
    add_usage(ctx.state(), added, v);
    tree_.charge(r.spec.tenant, v);
  }

  /// Hook `on_admitted`: called after an admitted job's commit.
  void on_admitted(const schedule_context& ctx, const job_spec& j) {
    if constexpr (declares_hook<Inner, hook::on_admitted>) inner_.on_admitted(ctx, j);
  }

  /// What the queue does after `j` could not be placed (skip to the next job, or block).
  /// Takes the capacity hold for `j` when it applies (file documentation, "Capacity hold").
  [[nodiscard]] queue_action on_unplaced(const schedule_context& ctx, const job_spec& j,
                                         const reason& why, const admission_tools& tools) {
    hold_for(j);
    if constexpr (requires { inner_.on_unplaced(ctx, j, why, tools); }) {
      return inner_.on_unplaced(ctx, j, why, tools);
    } else {
      return inner_.on_unplaced(ctx, j, why);
    }
  }

 private:
  /// Charges the cycle's holds to the tree for its lifetime (exactly undone, in reverse order).
  class hold_guard {
   public:
    explicit hold_guard(quota_admission& self) : self_(self) { self_.charge_holds(1); }
    ~hold_guard() { self_.charge_holds(-1); }
    hold_guard(const hold_guard&) = delete;
    hold_guard& operator=(const hold_guard&) = delete;

   private:
    quota_admission& self_;
  };
  void charge_holds(std::int64_t sign) {
    const std::size_t n = holds_.size();
    for (std::size_t k = 0; k < n; ++k) {
      const auto& h = holds_[sign > 0 ? k : n - 1 - k];
      tree_.charge(tree_.at(h.queue).tenant, h.amount, sign);
    }
  }

  /// Kueue's capacity hold for waiting job `j` (file documentation). O(dims x depth x holds).
  void hold_for(const job_spec& j) {
    const auto* p = preemption_of(j.tenant);
    if (p == nullptr || p->reclaim == reclaim_within_cohort::any) return;
    if (went_to_placement_ != j.id) return;  // deferred by the gate or the inner policy
    const auto q = tree_.queue_of(j.tenant);
    for (const auto& h : holds_) {
      if (h.queue == q) return;  // one hold per queue per cycle
    }
    const std::size_t dims = tree_.dims();
    quota_vector amount(dims, 0);
    {
      const hold_guard held(*this);
      demand_lower_bound(j, dims, need_);
      if (!tree_.check(j.tenant, need_)) return;  // fits its quota: it waits for GPUs, not quota
      if (!tree_.within_nominal(j.tenant, need_) && !may_preempt_for(j.tenant, need_)) {
        return;  // Kueue's NoFit: preemption cannot help, nothing to hold for
      }
      bool borrowing = false;
      for (std::size_t d = 0; d < dims; ++d) {
        if (tree_.governed(d) && need_[d] > 0 &&
            tree_.usage(q, d) + need_[d] > tree_.nominal(q, d)) {
          borrowing = true;
        }
      }
      bool any = false;
      for (std::size_t d = 0; d < dims; ++d) {
        if (!tree_.governed(d) || need_[d] <= 0) continue;
        std::int64_t h = 0;
        if (borrowing) {
          const auto& bl = tree_.at(q).per_dim[d].borrowing_limit;
          h = bl ? std::min(need_[d], tree_.nominal(q, d) + *bl - tree_.usage(q, d)) : need_[d];
        } else {
          h = std::min(need_[d], tree_.nominal(q, d) - tree_.usage(q, d));
        }
        amount[d] = std::max<std::int64_t>(0, h);
        any = any || amount[d] > 0;
      }
      if (!any) return;
    }
    holds_.push_back({q, j.id, std::move(amount)});
  }

  /// `borrowing(i, taken)` of the reclaim scope: candidate `i`'s queue still uses more than its
  /// nominal quota of a relevant dimension once the candidates `taken` are gone.
  struct borrowing_test {
    const quota_admission* self = nullptr;
    bool operator()(std::size_t i, std::span<const std::uint32_t> taken) const {
      const auto q = self->cand_queue_[i];
      return q == self->own_queue_ || self->borrows(q, taken);
    }
  };
  /// `begin_run(run)` of a Kueue scope: the probe's `approve_reclaim` applies the run's rule.
  struct run_setter {
    quota_admission* self = nullptr;
    void operator()(std::size_t run) const {
      self->reclaim_nominal_ = run < self->run_borrow_.size() ? self->run_borrow_[run] == 0 : true;
    }
  };

  /// Kueue's gate (file documentation, last section): whether lower bound `r` of a gang of
  /// tenant `t`, over its quota, may be reached by preemption in every governed dimension.
  /// False for a tenant without Kueue settings. O(dims x depth).
  [[nodiscard]] bool may_preempt_for(tenant_id t, const quota_vector& r) const {
    const auto* p = preemption_of(t);
    if (p == nullptr) return false;
    const auto q = tree_.queue_of(t);
    for (std::size_t d = 0; d < tree_.dims(); ++d) {
      if (!tree_.governed(d) || r[d] <= 0) continue;
      if (r[d] <= tree_.available(q, d)) continue;  // fits (Kueue's Fit mode): no gate
      if (r[d] > tree_.potential_available(q, d)) return false;
      if (r[d] <= tree_.nominal(q, d)) continue;
      if (p->borrow != borrow_within_cohort::never) continue;
      if (!sub_cohort_holds(q, d, r[d])) return false;
    }
    return true;
  }

  /// Kueue's `mayReclaimInHierarchy`: the lowest subtree above queue `q` that holds `amount`
  /// more of dimension `d` (beyond what lower nodes keep) is not the root's. O(depth).
  [[nodiscard]] bool sub_cohort_holds(std::int32_t q, std::size_t d, std::int64_t amount) const {
    if (tree_.at(q).parent < 0) return false;
    if (tree_.usage(q, d) + amount <= tree_.nominal(q, d)) return true;
    std::int64_t remaining = amount - local_available(q, d);
    for (std::int32_t n = tree_.at(q).parent; n >= 0; n = tree_.at(n).parent) {
      if (tree_.usage(n, d) + remaining <= tree_.subtree_quota(n, d)) {
        return tree_.at(n).parent >= 0;
      }
      remaining -= local_available(n, d);
    }
    return false;
  }

  /// What node `n` keeps of dimension `d` and does not use (Kueue's `LocalAvailable`). O(1).
  [[nodiscard]] std::int64_t local_available(std::int32_t n, std::size_t d) const noexcept {
    return std::max<std::int64_t>(0, tree_.guaranteed_quota(n, d) - tree_.usage(n, d));
  }

  /// Whether candidate usage row `c` uses a relevant dimension. O(dims).
  [[nodiscard]] bool uses_relevant(std::size_t c) const noexcept {
    const std::size_t dims = tree_.dims();
    for (std::size_t d = 0; d < dims; ++d) {
      if (relevant_[d] != 0 && cand_usage_[c * dims + d] > 0) return true;
    }
    return false;
  }

  /// `reclaim_for` for a queue with Kueue's settings `p` (file documentation, last section):
  /// always a scope (maybe without candidates), so the pipeline uses no other preemption for
  /// `j`. O(running jobs x (dims + depth) + running tasks).
  std::optional<reclaim_scope> kueue_scope(const schedule_context& ctx, const job_spec& j,
                                           const reason& why, const queue_preemption& p) {
    const std::size_t dims = tree_.dims();
    const auto q = tree_.queue_of(j.tenant);
    own_queue_ = q;
    cand_.clear();
    cand_queue_.clear();
    cand_usage_.clear();
    cand_group_.clear();
    cand_runs_.clear();
    run_borrow_.clear();
    borrowing_.self = this;
    setter_.self = this;
    const auto scope = [&] {
      return std::optional<reclaim_scope>(
          reclaim_scope(cand_, borrowing_)
              .with_runs(cand_group_, cand_runs_, run_borrow_.size(), setter_));
    };
    demand_lower_bound(j, dims, need_);
    if (why.code == reason_code::unschedulable) return scope();
    if (tree_.check(j.tenant, need_) && !tree_.within_nominal(j.tenant, need_) &&
        !may_preempt_for(j.tenant, need_)) {
      return scope();
    }
    // dimensions needing preemption: those short for `j`; all of its dimensions when only the
    // GPUs are short
    relevant_.assign(dims, 0);
    bool any_short = false;
    for (std::size_t d = 0; d < dims; ++d) {
      relevant_[d] = tree_.governed(d) && (need_[d] > 0 || (d >= 3 && need_[2] > 0)) ? 1 : 0;
      any_short = any_short || (relevant_[d] != 0 && need_[d] > tree_.available(q, d));
    }
    if (any_short) {
      for (std::size_t d = 0; d < dims; ++d) {
        if (need_[d] <= tree_.available(q, d)) relevant_[d] = 0;
      }
    }
    // hierarchical advantage along the path q -> root (Kueue's QuantitiesFitInQuota walk)
    path_.clear();
    adv_.clear();
    quota_vector remaining = need_;
    bool adv = false;
    for (std::int32_t n = q; n >= 0; n = tree_.at(n).parent) {
      bool fits = true;
      for (std::size_t d = 0; d < dims; ++d) {
        if (!tree_.governed(d) || need_[d] <= 0) continue;
        if (tree_.subtree_quota(n, d) < tree_.usage(n, d) + remaining[d]) fits = false;
        remaining[d] = std::max<std::int64_t>(0, remaining[d] - local_available(n, d));
      }
      adv = adv || fits;
      path_.push_back(n);
      adv_.push_back(adv ? 1 : 0);
    }
    const auto advantage_over = [&](std::int32_t other) {
      // the lowest cohort on the path that is an ancestor of `other`
      for (std::size_t k = 1; k < path_.size(); ++k) {
        for (std::int32_t a = other; a >= 0; a = tree_.at(a).parent) {
          if (a == path_[k]) return adv_[k - 1] != 0;
        }
      }
      return false;
    };
    constexpr std::uint8_t while_borrowing = 1, without_borrowing = 2;  // kinds (scratch)
    std::vector<std::uint8_t>& kind = kind_;
    kind.clear();
    const auto root = root_of(q);
    bool any_hier = false, any_other = false;
    for (const auto& r : ctx.book().running()) {
      if (r.spec.id == j.id || !r.spec.preemptible) continue;
      const auto qr = tree_.queue_of(r.spec.tenant);
      if (qr < 0) continue;
      std::uint8_t group = 0, k = while_borrowing;
      if (qr == q) {
        if (p.within == within_cluster_queue::never) continue;
        const bool lower = r.spec.priority < j.priority;
        const bool newer_equal = r.spec.priority == j.priority && j.submit < r.spec.submit;
        if (!lower &&
            !(p.within == within_cluster_queue::lower_or_newer_equal_priority && newer_equal)) {
          continue;
        }
        group = 2;
      } else {
        if (p.reclaim == reclaim_within_cohort::never || root_of(qr) != root) continue;
        if (p.reclaim == reclaim_within_cohort::lower_priority && r.spec.priority >= j.priority) {
          continue;
        }
        if (!borrows(qr, {})) continue;
        if (advantage_over(qr)) {
          group = 0;
        } else {
          group = 1;
          const bool below_threshold =
              r.spec.priority < j.priority &&
              (!p.max_priority_threshold || r.spec.priority <= *p.max_priority_threshold);
          if (p.borrow == borrow_within_cohort::never || !below_threshold) k = without_borrowing;
        }
      }
      cand_usage_.resize(cand_usage_.size() + dims, 0);
      add_usage(ctx.state(), r.tasks,
                std::span<std::int64_t>(cand_usage_).subspan(cand_usage_.size() - dims, dims));
      if (!uses_relevant(cand_.size())) {
        cand_usage_.resize(cand_usage_.size() - dims);
        continue;
      }
      cand_.push_back(&r);
      cand_queue_.push_back(qr);
      cand_group_.push_back(group);
      kind.push_back(k);
      any_hier = any_hier || (qr != q && group == 0);
      any_other = any_other || qr != q;
    }
    const bool forbidden = p.borrow == borrow_within_cohort::never;
    bool under_nominal = true;
    for (std::size_t d = 0; d < dims; ++d) {
      if (relevant_[d] != 0 && tree_.usage(q, d) >= tree_.nominal(q, d)) under_nominal = false;
    }
    // runs: 1 = borrowing allowed, 0 = not (Kueue's attempt order)
    if (!any_other || (forbidden && !under_nominal)) {
      run_borrow_ = {1};
    } else if (forbidden && !any_hier) {
      run_borrow_ = {0, 1};
    } else {
      run_borrow_ = {1, 0};
    }
    cand_runs_.assign(cand_.size(), 0);
    for (std::size_t i = 0; i < cand_.size(); ++i) {
      for (std::size_t run = 0; run < run_borrow_.size(); ++run) {
        if (run_borrow_[run] != 0 && kind[i] == without_borrowing) continue;
        cand_runs_[i] = static_cast<std::uint8_t>(cand_runs_[i] | (1U << run));
      }
    }
    return scope();
  }

  /// Whether queue `q` borrows a relevant dimension after the candidates `taken` are evicted.
  /// O(dims x taken).
  [[nodiscard]] bool borrows(std::int32_t q, std::span<const std::uint32_t> taken) const {
    const std::size_t dims = tree_.dims();
    for (std::size_t d = 0; d < dims; ++d) {
      if (relevant_[d] == 0) continue;
      std::int64_t use = tree_.usage(q, d);
      for (const std::uint32_t t : taken) {
        if (cand_queue_[t] == q) use -= cand_usage_[std::size_t{t} * dims + d];
      }
      if (use > tree_.nominal(q, d)) return true;
    }
    return false;
  }

  [[nodiscard]] std::int32_t root_of(std::int32_t n) const noexcept {
    while (tree_.at(n).parent >= 0) n = tree_.at(n).parent;
    return n;
  }

  admission_verdict approve_impl(const schedule_context& ctx, const job_spec& j,
                                 ledger::transaction& tx, const admission_tools& tools,
                                 bool within_nominal) {
    for_victims(ctx, tx, -1);  // victims' usage is returned for the checks
    std::optional<quota_shortfall> s;
    {
      const hold_guard held(*this);
      s = placed_shortfall(j, tx);
      if (s && is_elastic(j)) s = shrink_to_quota(j, tx, tools, *s);
      if (!s && within_nominal) s = nominal_shortfall(j, tx);
    }
    for_victims(ctx, tx, +1);
    if (s) return {verdict::defer, over_quota_reason(*s)};
    if constexpr (declares_hook<Inner, hook::approve>) {
      return hook::approve::call(inner_, ctx, j, tx, tools);
    } else {
      return {verdict::admit, {}};
    }
  }

  /// The first governed dimension in which what `tx` placed takes `j`'s tenant above its own
  /// nominal quota, if any (the limiting node is the tenant's queue). O(grants + dims).
  std::optional<quota_shortfall> nominal_shortfall(const job_spec& j,
                                                   const ledger::transaction& tx) {
    const auto q = tree_.queue_of(j.tenant);
    if (q < 0) return std::nullopt;
    buffer_.assign(tree_.dims(), 0);
    add_usage(tx.state(), tx.placed(), buffer_);
    for (std::size_t d = 0; d < tree_.dims(); ++d) {
      if (!tree_.governed(d) || buffer_[d] <= 0) continue;
      const auto left = std::max<std::int64_t>(0, tree_.nominal(q, d) - tree_.usage(q, d));
      if (buffer_[d] > left) return quota_shortfall{tree_.resource_of(d), buffer_[d], left, q};
    }
    return std::nullopt;
  }

  static bool is_elastic(const job_spec& j) noexcept {
    for (const auto& g : j.groups) {
      if (g.elastic()) return true;
    }
    return false;
  }

  /// The quota shortfall of what `tx` placed, if any. O(grants + dims x depth).
  std::optional<quota_shortfall> placed_shortfall(const job_spec& j,
                                                  const ledger::transaction& tx) {
    buffer_.assign(tree_.dims(), 0);
    add_usage(tx.state(), tx.placed(), buffer_);
    return tree_.check(j.tenant, buffer_);
  }

  /// Replaces the over-quota placement of elastic `j` in `tx` by the largest size that fits the
  /// cluster and the quota; nullopt when one was placed, else the shortfall (at the minimum
  /// size when that places, otherwise the granted size's). Victims stay evicted.
  std::optional<quota_shortfall> shrink_to_quota(const job_spec& j, ledger::transaction& tx,
                                                 const admission_tools& tools,
                                                 const quota_shortfall& why) {
    std::int64_t slack = 0;
    for (const auto& g : j.groups) slack += g.count - g.minimum();
    // The placement holds only `j`'s tasks (evictions and shrinks come before it): undo to
    // here to try other sizes. `granted`: the reduction the placement chose, over quota.
    const auto granted =
        std::max<std::int64_t>(0, j.task_count() - static_cast<std::int64_t>(tx.placed().size()));
    if (granted >= slack) return why;
    const ledger::transaction::savepoint before{0, tx.shrunk().size(), tx.evicted().size(),
                                                tx.grown().size()};
    sized_ = j;
    auto try_reduction = [&](std::int64_t x) -> std::optional<quota_shortfall> {
      tx.rollback_to(before);
      const auto sizes = detail::reduced_sizes(j, x);
      for (std::size_t g = 0; g < sized_.groups.size(); ++g) {
        sized_.groups[g].count = sizes[g];
        sized_.groups[g].min_count = std::nullopt;  // exactly this size
      }
      if (!tools.place(sized_, tx).placed) {
        tx.rollback_to(before);
        return why;  // does not fit the cluster at this size: treated as too large
      }
      return placed_shortfall(j, tx);
    };
    if (auto at_min = try_reduction(slack)) return at_min;
    std::int64_t lo = granted;  // over quota (or not placeable)
    std::int64_t hi = slack;    // fits; `tx` holds this size
    bool holds_hi = true;
    while (hi - lo > 1) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (!try_reduction(mid)) {
        hi = mid;
        holds_hi = true;
      } else {
        lo = mid;
        holds_hi = false;
      }
    }
    if (!holds_hi && try_reduction(hi)) return why;  // not monotone after all: give up
    return std::nullopt;
  }

  void for_victims(const schedule_context& ctx, const ledger::transaction& tx, std::int64_t sign) {
    for (job_id id : tx.evicted()) {
      const auto* r = ctx.book().find(id);
      if (r == nullptr) continue;
      victim_.assign(tree_.dims(), 0);
      add_usage(ctx.state(), r->tasks, victim_);
      tree_.charge(r->spec.tenant, victim_, sign);
    }
  }

  quota_tree tree_;
  Inner inner_;
  quota_vector buffer_, victim_;  // reused: no allocation per check once warmed up
  job_spec sized_;                // an elastic gang at a trial size
  reclaim_within_cohort reclaim_ = reclaim_within_cohort::any;
  // reclaim scope (reused): candidates, their queues, their usage (dims per candidate)
  quota_vector need_;
  std::vector<std::uint8_t> relevant_;
  std::vector<const running_job*> cand_;
  std::vector<std::int32_t> cand_queue_;
  std::vector<std::int64_t> cand_usage_;
  borrowing_test borrowing_;
  // Kueue's preemption model: per-node settings (queues only; unset: not Kueue's model) and
  // the structure of the last Kueue scope (groups, runs per candidate, the runs' rule)
  std::vector<std::optional<queue_preemption>> prefs_;
  std::int32_t own_queue_ = -1;
  std::vector<std::uint8_t> cand_group_, cand_runs_, run_borrow_, kind_;
  std::vector<std::int32_t> path_;
  std::vector<std::uint8_t> adv_;
  run_setter setter_;
  std::vector<hold> holds_;      // this cycle's capacity holds
  job_id went_to_placement_;     // the last job `admit` let through to placement
  bool reclaim_nominal_ = true;  // approve_reclaim: the placement must stay within nominal
};

static_assert(admission_policy<quota_admission<>>);

GPUSCHED_END_NAMESPACE
