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
#pragma once

#include <algorithm>  // std::fill
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>  // std::move
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/policy/admission/gang.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/detail/fit.hpp"  // detail::reduced_sizes
#include "gpusched/policy/hooks.hpp"
#include "gpusched/workload/quota.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// The over-quota reason for a shortfall in tenant's queue.
[[nodiscard]] inline reason over_quota_reason(const quota_shortfall& s) {
  resource_kind kind = resource_kind::none;
  gpu_model_id model;
  switch (s.resource.what) {
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
      model = s.resource.model;
      break;
  }
  return reason::over_quota(kind, s.needed, s.available, model,
                            s.limiting_node >= 0 ? std::optional(s.limiting_node) : std::nullopt);
}

/// Renders an over-quota reason with the names of the quota node and GPU model, e.g.
/// `over quota: needs 16 GPUs of H100-SXM5-80GB, 8 left under cohort 'research'`.
[[nodiscard]] inline std::string describe_quota(const reason& r, const quota_tree& q,
                                                const gpu_catalog& catalog) {
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
      : tree_(std::move(tree)), inner_(std::move(inner)) {}

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

  /// Hook `begin_cycle`: called once per cycle, before the pending jobs are ordered.
  void begin_cycle(const schedule_context& ctx) {
    if constexpr (declares_hook<Inner, hook::begin_cycle>) inner_.begin_cycle(ctx);
    tree_.recompute(ctx.book());
  }

  /// The verdict on `j` before placement (admit, defer or reject, with the reason).
  [[nodiscard]] admission_verdict admit(const schedule_context& ctx, const job_spec& j) {
    admission_verdict v = inner_.admit(ctx, j);
    if (v.kind != verdict::admit) return v;
    demand_lower_bound(j, tree_.dims(), buffer_);
    if (const auto s = tree_.check(j.tenant, buffer_)) {
      // within its own nominal quota: reclaimable from borrowers, so placement and preemption
      // are tried; approve() checks exactly with the victims' usage returned
      if (!tree_.within_nominal(j.tenant, buffer_)) return {verdict::defer, over_quota_reason(*s)};
    }
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
    return approve_impl(ctx, j, tx, tools, true);
  }

  /// The scope of a quota reclaim for `j`, refused by `approve` for `why`, when reclaim applies
  /// (see the file documentation): `why` is over quota, `j`'s tenant has a queue, `j`'s lower
  /// bound is within that queue's nominal quota, and some candidate exists; nullopt otherwise.
  /// The scope points into this policy and the ledger: valid until either changes.
  /// O(running jobs x (dims + depth) + running tasks).
  [[nodiscard]] std::optional<reclaim_scope> reclaim_for(const schedule_context& ctx,
                                                         const job_spec& j, const reason& why) {
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
    if (const auto s = tree_.check(r.spec.tenant, buffer_)) {
      return {verdict::defer, over_quota_reason(*s)};
    }
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
  [[nodiscard]] queue_action on_unplaced(const schedule_context& ctx, const job_spec& j,
                                         const reason& why, const admission_tools& tools) {
    if constexpr (requires { inner_.on_unplaced(ctx, j, why, tools); }) {
      return inner_.on_unplaced(ctx, j, why, tools);
    } else {
      return inner_.on_unplaced(ctx, j, why);
    }
  }

 private:
  /// `borrowing(i, taken)` of the reclaim scope: candidate `i`'s queue still uses more than its
  /// nominal quota of a relevant dimension once the candidates `taken` are gone.
  struct borrowing_test {
    const quota_admission* self = nullptr;
    bool operator()(std::size_t i, std::span<const std::uint32_t> taken) const {
      return self->borrows(self->cand_queue_[i], taken);
    }
  };

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
    auto s = placed_shortfall(j, tx);
    if (s && is_elastic(j)) s = shrink_to_quota(j, tx, tools, *s);
    if (!s && within_nominal) s = nominal_shortfall(j, tx);
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
};

static_assert(admission_policy<quota_admission<>>);

GPUSCHED_END_NAMESPACE
