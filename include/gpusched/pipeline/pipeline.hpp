// SPDX-License-Identifier: Apache-2.0
/// @file
/// The composition point: `pipeline<Order, Admit, Pack, Place, Preempt>` runs one scheduling
/// cycle (order -> admit -> place in a transaction -> on failure, preempt and re-place in one
/// transaction -> on a quota refusal, reclaim quota from borrowers in one transaction -> commit),
/// and `make_pipeline(policies...)` builds one, routing each policy to its slot by its tag and
/// filling the other slots with the defaults.
#pragma once

#include <algorithm>  // std::sort, std::adjacent_find, std::find
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>  // std::move, std::forward
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/random.hpp"
#include "gpusched/core/time.hpp"
#include "gpusched/policy/admission/gang.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/diagnose.hpp"
#include "gpusched/policy/hooks.hpp"
#include "gpusched/policy/ordering/fifo.hpp"
#include "gpusched/policy/packing/first_fit.hpp"
#include "gpusched/policy/placement/first_fit.hpp"
#include "gpusched/policy/preemption/priority.hpp"
#include "gpusched/policy/preemption/reclaim.hpp"
#include "gpusched/workload/job.hpp"
#include "gpusched/workload/ledger.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// The default policy of each slot.
///@{
using default_ordering = fifo_ordering;
using default_admission = gang_admission;
using default_packing = first_fit_packing;
using default_placement = first_fit_placement;
using default_preemption = priority_preemption;
///@}

/// @brief Options of a pipeline that are not policies.
struct pipeline_options {
  /// Grow running elastic jobs back toward their maximum with what is free after the queue
  /// was served (the growth step; see `pipeline`). On by default.
  bool grow = true;
  /// At most this many tasks added per cycle over all jobs (negative: no cap). A cap bounds the
  /// growth step's cost and how much free capacity one cycle hands to running jobs.
  std::int32_t max_grown_tasks = -1;
  /// Grow even while a pending job of this cycle waits for room (deferred as `insufficient`,
  /// `no_fit`, `topology` or `no_victims`). Off by default: freed GPUs would go to growth in
  /// small pieces, cycle after cycle, and a large waiting gang could starve behind them.
  bool grow_while_waiting = false;
};

/// @brief The decisions of one cycle, one per pending job, in the order the jobs were considered,
/// and the growths of running elastic jobs (the growth step), in the order they were made.
struct cycle_result {
  /// One decision per pending job, in the order the jobs were considered.
  std::vector<decision> decisions;
  /// The growths of running elastic jobs, in the order they were made.
  std::vector<growth> grown{};
  friend bool operator==(const cycle_result&, const cycle_result&) noexcept = default;
  /// Number of decisions of verdict `v`. O(decisions).
  [[nodiscard]] std::size_t count(verdict v) const noexcept {
    return static_cast<std::size_t>(std::count_if(decisions.begin(), decisions.end(),
                                                  [v](const decision& d) { return d.kind == v; }));
  }
};

namespace detail {
/// @brief A copy of policy `P` taken at the start of a cycle, put back if the cycle throws (the
/// pipeline's strong guarantee). Nothing for an empty type (it has no state). The copy is
/// assigned into the one kept from the previous cycle, so its buffers are reused (no allocation
/// once warmed up for policies whose members reuse capacity on assignment).
template <class P, bool Stateless = std::is_empty_v<P>>
class cycle_copy {
 public:
  void save(const P& p) {
    if constexpr (std::is_copy_assignable_v<P>) {
      if (copy_) {
        *copy_ = p;
        return;
      }
    }
    copy_.reset();
    copy_.emplace(p);
  }
  /// @pre `save` was called since the last `restore`.
  void restore(P& p) noexcept {
    static_assert(std::is_move_assignable_v<P>,
                  "gpusched: a stateful policy must be move-assignable (the pipeline restores it "
                  "from a copy when a cycle throws)");
    p = std::move(*copy_);
  }

 private:
  std::optional<P> copy_;
};
/// An empty policy has no state: nothing to keep (and no room taken).
template <class P>
class cycle_copy<P, true> {
 public:
  void save(const P&) noexcept {}
  void restore(P&) noexcept {}
};
}  // namespace detail

/// @brief A scheduling pipeline over five policies.
///
/// `schedule(book, pending, now, rng)` runs one cycle:
/// 1. checks that pending ids are distinct and not running (@throws invalid_value_error before
///    any change otherwise);
/// 2. orders the pending jobs with `Order`;
/// 3. for each job: `Admit::admit`; if admitted, `Place::place` in a transaction, committed
///    when the whole gang is placed; otherwise the transaction is rolled back and `Preempt`
///    may propose victims (and shrinks of elastic jobs); the pipeline evicts and shrinks them
///    and re-places the job in *one* transaction, committing all of it together or nothing;
///    after a commit it calls `Preempt::on_preempted(ctx, job, plan)` when the policy has it;
/// 4. a job that still does not fit, or that admission deferred, is deferred with the reason,
///    and `Admit::on_unplaced` says whether later jobs wait (strict FIFO) or go on (after
///    step 5 for a job refused over quota);
/// 5. free-quota preemption (Kueue `reclaimWithinCohort` with free resources): when `approve`
///    refused the placed job (step 3, with or without GPU victims) and the admission policy
///    offers a `reclaim_scope` for that refusal (`reclaim_for(ctx, job, why) ->
///    std::optional<reclaim_scope>`, e.g. `quota_admission`: the job is within its tenant's
///    nominal quota and cohort peers borrow), the preemption policy's optional
///    `select_reclaim(ctx, job, scope, probe)` chooses victims among the scope's borrowers with
///    a probe that places the job *and* asks `approve_reclaim(ctx, job, tx, tools)` (victims are
///    counted by the quota they return); the pipeline evicts them and re-places the job in one
///    transaction, committed all together or not at all (no victim set suffices: nothing
///    changes, the refusal stands and `decision::preemption` says why). Without either hook the
///    refusal stands, as before. The same path serves a job that does not fit on free resources
///    when the admission policy offers a scope for that placement failure (it then owns the
///    job's victim choice, e.g. `quota_admission` for a queue with Kueue preemption settings):
///    it is tried before, and instead of, `Preempt::select` for that job.
///
/// Optional hooks are called when the policy declares them (`using hooks = hook_list<...>`,
/// `gpusched/policy/hooks.hpp`, checked at compile time against each hook's signature).
/// Admission hooks: `begin_cycle(ctx)`
/// before ordering; `approve(ctx, job, tx[, tools]) -> admission_verdict` after a successful
/// tentative placement and before commit (quota checks on the exact placement, backfill reservation
/// checks; a refusal rolls the transaction back; only the free-quota path of step 5 preempts
/// after it); `reclaim_for` and `approve_reclaim` (step 5); `on_committed(ctx, decision)` and
/// `on_admitted(ctx, job)` after a commit. Optional preemption hook: `begin_cycle(ctx)` before
/// ordering (a policy may keep state derived from the ledger for the rest of the cycle, e.g.
/// `las_preemption`'s ranked running jobs, keyed on `ledger::version()`).
///
/// An `incremental_ordering_policy` is told of every change the pipeline makes: `on_released`
/// for each victim and the old size of each shrunk job just before the commit, `on_admitted`
/// for the new sizes and the admitted job just after it; `release(book, id, now, rng)` reports
/// a finished job and releases it.
///
/// 6. growth (`pipeline_options::grow`, on by default): with what is free after every pending
///    job was tried, running elastic jobs below their maximum grow back toward it (a job shrunk
///    by a preemption decision, or started smaller than its maximum). Pending work goes first
///    and growth never preempts. Skipped when a strict queue is blocked (`on_unplaced` said
///    `block`): the head waits for capacity and growth would take it; and, unless
///    `pipeline_options::grow_while_waiting`, when any pending job was deferred for lack of
///    room (`insufficient`, `no_fit`, `topology`, `no_victims`): growth would take the GPUs it
///    waits for as they free up, a few at a time. Candidates: running
///    jobs with an elastic group below its `count`, except those admitted or shrunk in this
///    cycle (they were just sized; the next cycle may grow them). They grow in order of the
///    fraction of their full size they run (tasks / `task_count()`, smallest first: max-min
///    over elastic jobs), then earlier start, then smaller id: deterministic, and without a
///    second `Order::order` call, which would overwrite per-call diagnostics (`drf_ordering::
///    picks`) and was meant for pending jobs (pending work, ordered by `Order`, goes first
///    anyway). Each job grows in its own transaction, group by group, one task at a
///    time: the packing policy's `fit` on the nodes the job already uses (in its task order:
///    locality, NVLink and fabric peers of its workers), else its `pack` anywhere; a group stops
///    at its maximum or at the first task that fits nowhere. The admission policy's optional
///    `approve_growth(ctx, running_job, added_tasks) -> admission_verdict` judges the added
///    tasks (tentatively applied); on a refusal the newest task is dropped until it approves
///    (quota: the largest growth within quota; backfill: no growth while a reservation is
///    held). The commit is reported like a shrink to an incremental ordering (`on_released`
///    with the old tasks just before, `on_admitted` with the new ones just after) and to the
///    admission policy's optional `on_grown(ctx, running_job, added_tasks)` (quota usage).
///    Each growth is a `growth` record in `cycle_result::grown`; the caller resizes the job
///    (the simulator pauses it and raises its rate). Known limit: the placement policy is not
///    consulted (added tasks are independent tasks of an already-running gang), so a
///    topology-aware placement's domain requirement is not enforced on grown tasks beyond the
///    preference for the job's nodes.
///
/// Admitted jobs are committed into `book` (so later jobs in the cycle see them) and reported
/// with their placement and victims; the caller starts them, stops the victims, and removes
/// admitted jobs from its queue. Invariant: no gang is ever left half-placed in `book`. A cycle
/// that throws leaves nothing of itself (the strong guarantee, see `schedule`).
/// Complexity: O(n log n) ordering plus, per job, the policies' costs; the growth step
/// O(running tasks) to find candidates plus, per candidate, O(c log c) ordering and per added
/// task O(nodes the job uses) `fit` calls and at most one `pack`; no allocation per job beyond
/// the returned decisions and growths once warmed up.
template <ordering_policy Order = default_ordering, admission_policy Admit = default_admission,
          packing_policy Pack = default_packing, placement_policy Place = default_placement,
          preemption_policy Preempt = default_preemption>
class pipeline {
  // Every declared hook has its signature, every hook-like member is declared (messages name
  // the hook; gpusched/policy/hooks.hpp).
  static_assert(check_hooks<Order>() && check_hooks<Admit>() && check_hooks<Preempt>(),
                "gpusched: a policy's hooks do not match its declaration (see the error above)");

 public:
  /// The policy type of each slot.
  ///@{
  using ordering_type = Order;
  using admission_type = Admit;
  using packing_type = Pack;
  using placement_type = Place;
  using preemption_type = Preempt;
  ///@}

  pipeline() = default;
  /// A pipeline of these five policies (see `make_pipeline` to give only some, by family).
  pipeline(Order o, Admit a, Pack pk, Place pl, Preempt pr)
      : order_(std::move(o)),
        admit_(std::move(a)),
        pack_(std::move(pk)),
        place_(std::move(pl)),
        preempt_(std::move(pr)) {}

  /// The policy of each slot, to inspect its state (DRF usage, reservations, fair share).
  ///@{
  [[nodiscard]] const Order& ordering() const noexcept { return order_; }
  [[nodiscard]] const Admit& admission() const noexcept { return admit_; }
  [[nodiscard]] const Pack& packing() const noexcept { return pack_; }
  [[nodiscard]] const Place& placement() const noexcept { return place_; }
  [[nodiscard]] const Preempt& preemption() const noexcept { return preempt_; }
  ///@}
  /// The policy of each slot, to change its settings between cycles.
  ///@{
  [[nodiscard]] Order& ordering() noexcept { return order_; }
  [[nodiscard]] Admit& admission() noexcept { return admit_; }
  [[nodiscard]] Pack& packing() noexcept { return pack_; }
  [[nodiscard]] Place& placement() noexcept { return place_; }
  [[nodiscard]] Preempt& preemption() noexcept { return preempt_; }
  ///@}
  /// The non-policy options (growth).
  [[nodiscard]] const pipeline_options& options() const noexcept { return options_; }
  /// The jobs' history (attained service, last placements) the policies read through
  /// `schedule_context::history()`. The driver of the cycles keeps it up to date: the simulator
  /// does so by itself; a host scheduler credits each job's service when it stops and records
  /// where it ran.
  ///@{
  [[nodiscard]] const job_history& history() const noexcept { return env_.history; }
  [[nodiscard]] job_history& history() noexcept { return env_.history; }
  ///@}
  /// The environment the policies read through the context besides the ledger: the history
  /// above and the run's quota and tenant trees (`policy_environment`; `ctx.quotas()`,
  /// `ctx.tenants()`). The registry's `make_pipeline` installs the trees of its inputs; a
  /// pipeline built from policies gets them here (`environment().quotas = tree`), before its
  /// first cycle. A cycle does not change the environment.
  ///@{
  [[nodiscard]] const policy_environment& environment() const noexcept { return env_; }
  [[nodiscard]] policy_environment& environment() noexcept { return env_; }
  ///@}
  /// Sets the non-policy options (growth). Takes effect from the next cycle.
  void set_options(pipeline_options o) noexcept { options_ = o; }

  /// @brief Releases running job `id` from `book` (it finished or was stopped), first telling an
  /// incremental ordering policy (`incremental_ordering_policy`) so that its tenant state
  /// follows. Use it instead of `ledger::release` when the ordering is incremental.
  /// @throws invalid_value_error (unknown_id) if `id` is not running; nothing changes then.
  /// O(tasks of the job + the hook).
  void release(ledger& book, job_id id, sim_time now, random_engine& rng) {
    if constexpr (incremental_ordering_policy<Order>) {
      if (const running_job* r = book.find(id)) {
        const schedule_context ctx(book, now, rng, env_);
        order_.on_released(ctx, r->spec, r->tasks);
      }
    }
    book.release(id);
  }

  /// Runs one cycle; see the class documentation.
  cycle_result schedule(ledger& book, std::span<const job_spec> pending, sim_time now,
                        random_engine& rng) {
    cycle_result out;
    schedule(book, pending, now, rng, out);
    return out;
  }

  /// As above, writing into `out` (cleared first) so its capacity is reused across cycles.
  ///
  /// Strong exception guarantee: a cycle is all or nothing. When anything throws during
  /// the cycle (a hook of any policy, a user's own included: ordering, admission with its
  /// `approve`, `reclaim_for`, `approve_reclaim`, `on_committed`, `on_admitted`,
  /// `approve_growth`, `on_grown`, packing, placement, preemption with `select`,
  /// `select_reclaim`, `on_preempted`; an allocation, in the ledger or elsewhere), the exception
  /// propagates and everything is as before the call: `book` (running jobs, their order and
  /// tasks, the cluster, `ledger::version()`; undone with its journal, `ledger::begin_undo`),
  /// the five policies (restored from copies taken at the start of the cycle: DRF and quota
  /// usage, reservations, backoff, fair-share state, caches), `rng`, and the pipeline's history
  /// and options (which a cycle does not change); `out` is left empty. Calling the cycle again
  /// with the same arguments then gives what a fresh copy of the pipeline taken before the call
  /// would give. What a policy may assume: its hooks run on the live policy object and see the
  /// cycle's tentative state (earlier commits of the cycle included); if the cycle fails, the
  /// object is replaced by its copy from the start of the cycle (by move assignment, which must
  /// not throw), so a policy needs no rollback code of its own, but it must not keep
  /// references into `running()` keyed on `ledger::version()` across a failed cycle (key on
  /// job ids) nor hold state outside itself that a hook changes (e.g. through a pointer to a
  /// shared object; such state is not restored).
  /// Cost: per cycle, one copy (an assignment into the copy kept from the last cycle) of each
  /// non-empty policy and one of `rng` (on the stack); one journal entry per change committed;
  /// nothing per call of a hook.
  /// @pre no transaction and no undo journal of `book` is open (the cycle opens its own).
  /// @throws invalid_value_error when a pending id repeats or is running (before any change);
  /// whatever a policy or an allocation throws (with the guarantee above).
  void schedule(ledger& book, std::span<const job_spec> pending, sim_time now, random_engine& rng,
                cycle_result& out) {
    out.decisions.clear();
    out.grown.clear();
    check_ids(book, pending);
    save_policies();  // may throw: nothing changed yet
    const random_engine rng_before = rng;
    book.begin_undo();
    try {
      run_cycle(book, pending, now, rng, out);
    } catch (...) {
      // the cycle's open transactions were rolled back by their destructors on the way here
      book.undo();
      restore_policies();
      rng = rng_before;
      out.decisions.clear();
      out.grown.clear();
      throw;
    }
    book.end_undo();
  }

 private:
  /// The body of `schedule` (steps 2 to 6 of the class documentation).
  void run_cycle(ledger& book, std::span<const job_spec> pending, sim_time now, random_engine& rng,
                 cycle_result& out) {
    const schedule_context ctx(book, now, rng, env_);
    if constexpr (declares_hook<Admit, hook::begin_cycle>) admit_.begin_cycle(ctx);
    if constexpr (declares_hook<Preempt, hook::begin_cycle>) preempt_.begin_cycle(ctx);

    queue_.clear();
    for (const auto& j : pending) queue_.push_back(&j);
    order_.order(ctx, std::span<const job_spec*>(queue_));

    const auto placer = [&](const job_spec& job, ledger::transaction& tx) {
      return place_.place(ctx, job, packing_ref(pack_), tx);
    };
    const admission_tools tools(book, admission_tools::placer(placer));

    const job_spec* head = nullptr;  // set when a strict queue blocked
    for (const job_spec* j : queue_) {
      decision& d = out.decisions.emplace_back();
      d.job = j->id;
      if (head != nullptr) {
        d.why = reason::blocked_by(head->id);
        continue;
      }
      const admission_verdict av = admit_.admit(ctx, *j);
      if (av.kind != verdict::admit) {
        d.kind = av.kind;
        d.why = av.why;
        if (av.kind == verdict::defer && unplaced(ctx, *j, d.why, tools) == queue_action::block) {
          head = j;
        }
        continue;
      }
      attempt first = try_place(ctx, book, *j, now, {}, {}, d, tools);
      if (first == attempt::placed) continue;
      // An admission policy that owns the victim choice for this job (a reclaim scope offered
      // for a placement failure, e.g. a queue with Kueue preemption settings): only its path.
      bool owned = false;
      if (first == attempt::unplaced) {
        const reclaimed r = reclaim(ctx, book, *j, now, d, tools);
        if (r == reclaimed::placed) continue;
        owned = r == reclaimed::not_placed;
      }
      if (first == attempt::unplaced && !owned) {
        // Does not fit on free resources: ask the preemption policy, then re-place with victims.
        const auto probe = [&](std::span<const job_id> victims,
                               std::span<const shrink_order> shrinks,
                               std::vector<task_allocation>* placed) {
          auto tx = book.begin();
          for (job_id v : victims) tx.evict(v);
          for (const auto& sh : shrinks) tx.shrink(sh);
          const bool ok = place_.place(ctx, *j, packing_ref(pack_), tx).placed;
          if (ok && placed != nullptr) placed->assign(tx.placed().begin(), tx.placed().end());
          return ok;  // rolled back by ~tx
        };
        preemption_plan plan = preempt_.select(ctx, *j, fit_probe(probe));
        if (!plan.empty()) {
          const attempt second =
              try_place(ctx, book, *j, now, plan.victims, plan.shrinks, d, tools);
          if (second == attempt::placed) {
            preempted(ctx, *j, plan, d);
            continue;
          }
          if (second == attempt::refused) first = attempt::refused;  // placed, over quota
        }
        d.preemption = plan.why;
      }
      if (first == attempt::refused && reclaim(ctx, book, *j, now, d, tools) == reclaimed::placed) {
        continue;
      }
      if (d.kind == verdict::reject) continue;
      if (unplaced(ctx, *j, d.why, tools) == queue_action::block) head = j;
    }
    if (options_.grow && head == nullptr && (options_.grow_while_waiting || !waits_for_room(out))) {
      grow_running(ctx, book, out);
    }
  }

  /// Copies the policies (non-empty ones) before a cycle (see `schedule`).
  void save_policies() {
    saved_order_.save(order_);
    saved_admit_.save(admit_);
    saved_pack_.save(pack_);
    saved_place_.save(place_);
    saved_preempt_.save(preempt_);
  }
  /// Puts back what `save_policies` copied.
  void restore_policies() noexcept {
    saved_order_.restore(order_);
    saved_admit_.restore(admit_);
    saved_pack_.restore(pack_);
    saved_place_.restore(place_);
    saved_preempt_.restore(preempt_);
  }

  enum class attempt : std::uint8_t { placed, unplaced, refused };

  queue_action unplaced(const schedule_context& ctx, const job_spec& j, const reason& why,
                        const admission_tools& tools) {
    if constexpr (requires { admit_.on_unplaced(ctx, j, why, tools); }) {
      return admit_.on_unplaced(ctx, j, why, tools);
    } else {
      return admit_.on_unplaced(ctx, j, why);
    }
  }

  /// Fills `d` with the richer output of a committed `plan` and calls the preemption policy's
  /// optional `on_preempted(ctx, job, plan)` hook.
  void preempted(const schedule_context& ctx, const job_spec& j, const preemption_plan& plan,
                 decision& d) {
    d.victim_details = plan.details;
    d.lost_gpu_seconds = plan.lost_gpu_seconds;
    if constexpr (declares_hook<Preempt, hook::on_preempted>) preempt_.on_preempted(ctx, j, plan);
  }

  /// The admission policy's verdict on the tentative placement in `tx`: its optional
  /// `approve(ctx, job, tx[, tools])`, or on the reclaim path (`reclaiming`) its
  /// `approve_reclaim(ctx, job, tx, tools)`; admit when it has none.
  admission_verdict approval(const schedule_context& ctx, const job_spec& j,
                             ledger::transaction& tx, const admission_tools& tools,
                             bool reclaiming) {
    if constexpr (declares_hook<Admit, hook::reclaim>) {
      if (reclaiming) return admit_.approve_reclaim(ctx, j, tx, tools);
    }
    if constexpr (declares_hook<Admit, hook::approve>) {
      return hook::approve::call(admit_, ctx, j, tx, tools);
    } else {
      (void)reclaiming;
      return {verdict::admit, {}};
    }
  }

  /// What the reclaim path did: no scope offered, a scope offered without a commit, committed.
  enum class reclaimed : std::uint8_t { not_offered, not_placed, placed };

  /// The reclaim path (see the class documentation): `j` was placed but refused over quota
  /// (`d.why`), or did not fit on free resources (`d.why` the placement's reason; an admission
  /// policy offers a scope for that only when it owns the job's victim choice, e.g. a queue
  /// with Kueue preemption settings, and then the preemption policy's `select` is not asked).
  /// When the admission policy offers a reclaim scope (`reclaim_for`) and the preemption policy
  /// can choose in it (`select_reclaim`), the chosen victims are evicted and `j` placed and
  /// approved (`approve_reclaim`) in one transaction, committed all together or not at all.
  /// `placed` when committed; otherwise `d` keeps the refusal and, if a scope was offered
  /// (`not_placed`), `d.preemption` says why no victim set sufficed.
  reclaimed reclaim(const schedule_context& ctx, ledger& book, const job_spec& j, sim_time now,
                    decision& d, const admission_tools& tools) {
    if constexpr (declares_hook<Admit, hook::reclaim> &&
                  declares_hook<Preempt, hook::select_reclaim>) {
      // a type-erased wrapper declares both; its held policies may not have them
      if (!hook_active<hook::reclaim>(admit_) || !hook_active<hook::select_reclaim>(preempt_)) {
        return reclaimed::not_offered;
      }
      const std::optional<reclaim_scope> scope = admit_.reclaim_for(ctx, j, d.why);
      if (!scope) return reclaimed::not_offered;
      const auto probe = [&](std::span<const job_id> victims, std::span<const shrink_order> shrinks,
                             std::vector<task_allocation>* placed) {
        auto tx = book.begin();
        for (job_id v : victims) tx.evict(v);
        for (const auto& sh : shrinks) tx.shrink(sh);
        if (!place_.place(ctx, j, packing_ref(pack_), tx).placed) return false;
        if (approval(ctx, j, tx, tools, true).kind != verdict::admit) return false;
        if (placed != nullptr) placed->assign(tx.placed().begin(), tx.placed().end());
        return true;  // rolled back by ~tx
      };
      const preemption_plan plan = preempt_.select_reclaim(ctx, j, *scope, fit_probe(probe));
      if (!plan.empty() && try_place(ctx, book, j, now, plan.victims, plan.shrinks, d, tools,
                                     true) == attempt::placed) {
        preempted(ctx, j, plan, d);
        return reclaimed::placed;
      }
      d.preemption = plan.why;
      return reclaimed::not_placed;
    } else {
      (void)ctx, (void)book, (void)j, (void)now, (void)d, (void)tools;
      return reclaimed::not_offered;
    }
  }

  /// Places `j` after evicting `victims` and applying `shrinks`, in one transaction; asks the
  /// admission policy's optional `approve(ctx, job, tx[, tools])` (`approve_reclaim` when
  /// `reclaiming`; both see the tentative placement) before committing. On success commits,
  /// fills `d` and calls the optional `on_committed(ctx, d)` and `on_admitted(ctx, job)` hooks.
  /// `refused`: placed but not approved (`d` holds the verdict).
  attempt try_place(const schedule_context& ctx, ledger& book, const job_spec& j, sim_time now,
                    std::span<const job_id> victims, std::span<const shrink_order> shrinks,
                    decision& d, const admission_tools& tools, bool reclaiming = false) {
    auto tx = book.begin();
    for (job_id v : victims) tx.evict(v);
    for (const auto& s : shrinks) tx.shrink(s);
    const placement_outcome o = place_.place(ctx, j, packing_ref(pack_), tx);
    if (!o.placed) {
      if (victims.empty() && shrinks.empty()) d.why = o.why;
      return attempt::unplaced;  // ~tx rolls back
    }
    if (const admission_verdict v = approval(ctx, j, tx, tools, reclaiming);
        v.kind != verdict::admit) {
      d.kind = v.kind;
      d.why = v.why;
      return attempt::refused;  // ~tx rolls back
    }
    d.kind = verdict::admit;
    d.why = victims.empty() && shrinks.empty() ? o.why : reason::placed_by_preemption();
    d.placement.assign(tx.placed().begin(), tx.placed().end());
    d.victims.assign(victims.begin(), victims.end());
    d.shrinks.assign(shrinks.begin(), shrinks.end());
    if constexpr (incremental_ordering_policy<Order>) {
      // the ordering's tenant state follows the allocation: victims and the old size of
      // shrunk jobs are given back, then the new sizes and the admitted job are charged
      for (job_id v : victims) {
        if (const running_job* r = book.find(v)) order_.on_released(ctx, r->spec, r->tasks);
      }
      for_each_shrunk(book, shrinks,
                      [&](const running_job& r) { order_.on_released(ctx, r.spec, r.tasks); });
    }
    tx.commit(j, now);
    if constexpr (incremental_ordering_policy<Order>) {
      for_each_shrunk(book, shrinks,
                      [&](const running_job& r) { order_.on_admitted(ctx, r.spec, r.tasks); });
      if (const running_job* r = book.find(j.id)) order_.on_admitted(ctx, r->spec, r->tasks);
    }
    if constexpr (declares_hook<Admit, hook::on_committed>) admit_.on_committed(ctx, d);
    if constexpr (declares_hook<Admit, hook::on_admitted>) admit_.on_admitted(ctx, j);
    return attempt::placed;
  }

  /// Calls `f` once per distinct running job among `shrinks`.
  template <class F>
  static void for_each_shrunk(const ledger& book, std::span<const shrink_order> shrinks, F&& f) {
    for (std::size_t i = 0; i < shrinks.size(); ++i) {
      bool seen = false;
      for (std::size_t k = 0; k < i; ++k) seen = seen || shrinks[k].job == shrinks[i].job;
      if (seen) continue;
      if (const running_job* r = book.find(shrinks[i].job)) f(*r);
    }
  }

  /// Whether a pending job of this cycle was deferred for lack of room (see
  /// `pipeline_options::grow_while_waiting`). O(decisions).
  static bool waits_for_room(const cycle_result& out) noexcept {
    return std::any_of(out.decisions.begin(), out.decisions.end(), [](const decision& d) {
      if (d.kind != verdict::defer) return false;
      switch (d.why.code) {
        case reason_code::insufficient:
        case reason_code::no_fit:
        case reason_code::topology:
        case reason_code::no_victims:
          return true;
        default:
          return false;
      }
    });
  }

  /// The growth step (step 6 of the class documentation).
  void grow_running(const schedule_context& ctx, ledger& book, cycle_result& out) {
    grow_candidates_.clear();
    grow_sized_.clear();
    for (const decision& d : out.decisions) {
      if (d.kind == verdict::admit) grow_sized_.push_back(d.job);
      for (const shrink_order& sh : d.shrinks) grow_sized_.push_back(sh.job);
    }
    std::sort(grow_sized_.begin(), grow_sized_.end());
    for (const running_job& r : book.running()) {
      if (growable(r) && !std::binary_search(grow_sized_.begin(), grow_sized_.end(), r.spec.id)) {
        grow_candidates_.push_back(&r);
      }
    }
    if (grow_candidates_.empty()) return;
    // smallest fraction of its full size first (exact: cross-multiplied task counts), then
    // earlier start, then smaller id
    std::sort(grow_candidates_.begin(), grow_candidates_.end(),
              [](const running_job* a, const running_job* b) {
                const auto fa = static_cast<std::int64_t>(a->tasks.size()) * b->spec.task_count();
                const auto fb = static_cast<std::int64_t>(b->tasks.size()) * a->spec.task_count();
                if (fa != fb) return fa < fb;
                return a->start != b->start ? a->start < b->start : a->spec.id < b->spec.id;
              });
    std::int32_t budget = options_.max_grown_tasks;
    for (const running_job* r : grow_candidates_) {
      if (budget == 0) break;
      grow_one(ctx, book, *r, budget, out);  // a grow-only commit moves no running job
    }
  }

  /// Whether `r` has an elastic group below its maximum. O(groups + tasks).
  static bool growable(const running_job& r) noexcept {
    for (std::size_t g = 0; g < r.spec.groups.size(); ++g) {
      if (r.spec.groups[g].elastic() && r.tasks_in_group(g) < r.spec.groups[g].count) return true;
    }
    return false;
  }

  /// Grows running job `r` in one transaction (see the class documentation), appending one
  /// `growth` per grown group to `out`. `budget`: tasks left under the cap (negative: none).
  void grow_one(const schedule_context& ctx, ledger& book, const running_job& r,
                std::int32_t& budget, cycle_result& out) {
    const std::int64_t free_before = book.state().total_free_whole_gpus();
    grow_nodes_.clear();
    for (const auto& t : r.tasks) {
      if (std::find(grow_nodes_.begin(), grow_nodes_.end(), t.node) == grow_nodes_.end()) {
        grow_nodes_.push_back(t.node);
      }
    }
    std::string_view stopped;
    auto tx = book.begin();
    for (std::size_t g = 0; g < r.spec.groups.size(); ++g) {
      const task_group& grp = r.spec.groups[g];
      if (!grp.elastic()) continue;
      for (std::int32_t n = r.tasks_in_group(g) + tx_grown_in(tx, g); n < grp.count; ++n) {
        if (budget == 0) {
          stopped = "the growth cap of the cycle";
          break;
        }
        if (!grow_task(ctx, tx, r, static_cast<std::uint16_t>(g))) {
          stopped = "no room for more";
          break;
        }
        if (budget > 0) --budget;
      }
    }
    if (tx.grown().empty()) return;  // ~tx rolls back (nothing to undo)
    // the admission policy judges the added tasks; drop the newest until it approves
    if constexpr (declares_hook<Admit, hook::approve_growth>) {
      while (!tx.grown().empty()) {
        added_tasks(tx);
        if (admit_.approve_growth(ctx, r, std::span<const task_allocation>(grow_added_)).kind ==
            verdict::admit) {
          break;
        }
        stopped = "the admission policy refused more (quota or a backfill reservation)";
        if (budget >= 0) ++budget;
        tx.rollback_to(ledger::transaction::savepoint{0, 0, 0, tx.grown().size() - 1});
      }
      if (tx.grown().empty()) return;
    }
    added_tasks(tx);
    // one record per grown group, in group order
    const std::size_t first = out.grown.size();
    for (const task_allocation& a : grow_added_) {
      growth* rec = nullptr;
      for (std::size_t k = first; k < out.grown.size(); ++k) {
        if (out.grown[k].group == a.group) rec = &out.grown[k];
      }
      if (rec == nullptr) {
        rec = &out.grown.emplace_back();
        rec->job = r.spec.id;
        rec->group = a.group;
        rec->from = r.tasks_in_group(a.group);
        rec->to = rec->from;
        rec->maximum = r.spec.groups[a.group].count;
        rec->free_gpus = free_before;
      }
      ++rec->to;
      rec->placement.push_back(a);
    }
    for (std::size_t k = first; k < out.grown.size(); ++k) {
      if (out.grown[k].to < out.grown[k].maximum) out.grown[k].stopped = stopped;
    }
    if constexpr (incremental_ordering_policy<Order>) order_.on_released(ctx, r.spec, r.tasks);
    tx.commit();
    // `r` still points at the job: a grow-only commit moves no running job
    if constexpr (incremental_ordering_policy<Order>) order_.on_admitted(ctx, r.spec, r.tasks);
    if constexpr (declares_hook<Admit, hook::on_grown>) {
      admit_.on_grown(ctx, r, std::span<const task_allocation>(grow_added_));
    }
  }

  /// Places one more task of group `g` of `r` in `tx`: first on the nodes `r` uses, then
  /// wherever the packing policy puts it. False when it fits nowhere.
  bool grow_task(const schedule_context& ctx, ledger::transaction& tx, const running_job& r,
                 std::uint16_t g) {
    const task_request& req = r.spec.groups[g].request;
    const packing_ref pk(pack_);
    for (const node_index n : grow_nodes_) {
      if (auto a = pk.fit(ctx, n, req)) {
        a->group = g;
        if (tx.grow(r.spec.id, *a)) return true;
      }
    }
    if (auto a = pk.pack(ctx, req)) {
      a->group = g;
      if (tx.grow(r.spec.id, *a)) {
        if (std::find(grow_nodes_.begin(), grow_nodes_.end(), a->node) == grow_nodes_.end()) {
          grow_nodes_.push_back(a->node);
        }
        return true;
      }
    }
    return false;
  }

  static std::int32_t tx_grown_in(const ledger::transaction& tx, std::size_t g) noexcept {
    std::int32_t n = 0;
    for (const grown_task& t : tx.grown()) n += t.task.group == g ? 1 : 0;
    return n;
  }

  /// Copies the tasks grown in `tx` into `grow_added_`.
  void added_tasks(const ledger::transaction& tx) {
    grow_added_.clear();
    for (const grown_task& t : tx.grown()) grow_added_.push_back(t.task);
  }

  void check_ids(const ledger& book, std::span<const job_spec> pending) {
    ids_.clear();
    for (const auto& j : pending) {
      if (book.is_running(j.id)) {
        throw invalid_value_error(error_id::duplicate_id, "pending queue", "id",
                                  std::to_string(j.id.value()), "job is already running");
      }
      ids_.push_back(j.id);
    }
    std::sort(ids_.begin(), ids_.end());
    if (const auto it = std::adjacent_find(ids_.begin(), ids_.end()); it != ids_.end()) {
      throw invalid_value_error(error_id::duplicate_id, "pending queue", "id",
                                std::to_string(it->value()), "job id appears twice");
    }
  }

  [[no_unique_address]] Order order_{};
  [[no_unique_address]] Admit admit_{};
  [[no_unique_address]] Pack pack_{};
  [[no_unique_address]] Place place_{};
  [[no_unique_address]] Preempt preempt_{};
  std::vector<const job_spec*> queue_;  // reused buffers
  std::vector<job_id> ids_;
  std::vector<const running_job*> grow_candidates_;
  std::vector<node_index> grow_nodes_;
  std::vector<job_id> grow_sized_;  // admitted or shrunk in this cycle: not grown
  std::vector<task_allocation> grow_added_;
  pipeline_options options_{};
  policy_environment env_{};  // history and trees (see environment())
  // the state at the start of the running cycle, put back if it throws (see `schedule`)
  [[no_unique_address]] detail::cycle_copy<Order> saved_order_;
  [[no_unique_address]] detail::cycle_copy<Admit> saved_admit_;
  [[no_unique_address]] detail::cycle_copy<Pack> saved_pack_;
  [[no_unique_address]] detail::cycle_copy<Place> saved_place_;
  [[no_unique_address]] detail::cycle_copy<Preempt> saved_preempt_;
};

struct pipeline_config;  // pipeline/registry.hpp: names for each slot (make_pipeline(config))

/// The pipeline with every slot at its default.
using default_pipeline = pipeline<>;

namespace detail {
template <class Tag, class P>
inline constexpr bool in_family = (std::same_as<Tag, ordering_tag> && ordering_policy<P>) ||
                                  (std::same_as<Tag, admission_tag> && admission_policy<P>) ||
                                  (std::same_as<Tag, packing_tag> && packing_policy<P>) ||
                                  (std::same_as<Tag, placement_tag> && placement_policy<P>) ||
                                  (std::same_as<Tag, preemption_tag> && preemption_policy<P>);

template <class Tag, class... Ps>
inline constexpr int family_count = (0 + ... + (in_family<Tag, std::remove_cvref_t<Ps>> ? 1 : 0));

/// The argument of family `Tag`, or `Default{}` if none.
template <class Tag, class Default, class First, class... Rest>
decltype(auto) pick(First&& first, Rest&&... rest) {
  if constexpr (in_family<Tag, std::remove_cvref_t<First>>) {
    return std::remove_cvref_t<First>(std::forward<First>(first));
  } else if constexpr (sizeof...(Rest) == 0) {
    return Default{};
  } else {
    return pick<Tag, Default>(std::forward<Rest>(rest)...);
  }
}
template <class Tag, class Default>
Default pick() {
  return Default{};
}
}  // namespace detail

/// @brief Builds a pipeline from policies given in any order, each routed to its slot by its
/// family tag; missing slots get the defaults. Each argument must model exactly one family, and
/// each family may be given at most once (both checked at compile time, as are each policy's
/// required members and declared hooks: a mistake is reported as a sentence naming the member
/// or hook). Arguments are moved from when given as rvalues, copied otherwise.
/// @code
/// auto p = gpusched::make_pipeline(gpusched::gang_admission{gpusched::queueing::strict_fifo},
///                                  gpusched::priority_ordering{});
/// @endcode
template <class... Ps>
  requires(!(std::same_as<std::remove_cvref_t<Ps>, pipeline_config> || ...))
auto make_pipeline(Ps&&... ps) {
  // one diagnosis per argument (no short circuit: every wrong argument is reported)
  constexpr bool ok =
      (0 + ... + static_cast<int>(detail::diagnose_policy<std::remove_cvref_t<Ps>>())) ==
      static_cast<int>(sizeof...(Ps));
  if constexpr (ok) {
    static_assert(detail::family_count<ordering_tag, Ps...> <= 1, "two ordering policies given");
    static_assert(detail::family_count<admission_tag, Ps...> <= 1, "two admission policies given");
    static_assert(detail::family_count<packing_tag, Ps...> <= 1, "two packing policies given");
    static_assert(detail::family_count<placement_tag, Ps...> <= 1, "two placement policies given");
    static_assert(detail::family_count<preemption_tag, Ps...> <= 1,
                  "two preemption policies given");
    // each argument belongs to one family, so each is moved from at most once
    auto o = detail::pick<ordering_tag, default_ordering>(std::forward<Ps>(ps)...);
    auto a = detail::pick<admission_tag, default_admission>(std::forward<Ps>(ps)...);
    auto pk = detail::pick<packing_tag, default_packing>(std::forward<Ps>(ps)...);
    auto pl = detail::pick<placement_tag, default_placement>(std::forward<Ps>(ps)...);
    auto pr = detail::pick<preemption_tag, default_preemption>(std::forward<Ps>(ps)...);
    return pipeline<decltype(o), decltype(a), decltype(pk), decltype(pl), decltype(pr)>(
        std::move(o), std::move(a), std::move(pk), std::move(pl), std::move(pr));
  } else {
    return;  // the messages above say what is wrong
  }
}

GPUSCHED_END_NAMESPACE
