// SPDX-License-Identifier: Apache-2.0
/// @file
/// The five policy families, one concept each, with opt-in tags:
///
/// | family     | tag              | concept              | member                                |
/// |------------|------------------|----------------------|---------------------------------------|
/// | ordering   | `ordering_tag`   | `ordering_policy`    | `order(ctx, span<const job_spec*>)`   |
/// | admission  | `admission_tag`  | `admission_policy`   | `admit(ctx, job)`, `on_unplaced(...)` |
/// | packing    | `packing_tag`    | `packing_policy`     | `fit(ctx, node, req)`, `pack(ctx, req)` |
/// | placement  | `placement_tag`  | `placement_policy`   | `place(ctx, job, packing_ref, tx)`    |
/// | preemption | `preemption_tag` | `preemption_policy`  | `select(ctx, job, fit_probe)`         |
///
/// A policy opts in with `using policy_category = gpusched::packing_tag;` (or by specialising
/// `enable_packing_policy<P>` for a type it cannot change). Tags keep one callable from
/// satisfying several families by accident and let `make_pipeline` route arguments to slots.
/// Every policy also has `name() const` returning a `std::string_view`.
///
/// Optional hooks (called by the pipeline at fixed points of a cycle) are declared by the policy
/// and checked at compile time: `gpusched/policy/hooks.hpp`.
///
/// Policies never change the cluster: they read a `schedule_context` and return values. The
/// placement family works inside a ledger transaction that the pipeline opens, commits or rolls
/// back; the preemption family tests victim sets through a `fit_probe` the pipeline provides.
#pragma once

#include <concepts>  // std::same_as, std::copy_constructible
#include <memory>    // std::addressof
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>  // std::remove_cvref_t
#include <vector>

#include "gpusched/cluster/allocation.hpp"
#include "gpusched/config.hpp"
#include "gpusched/detail/function_ref.hpp"
#include "gpusched/policy/context.hpp"
#include "gpusched/policy/decision.hpp"
#include "gpusched/resource/request.hpp"
#include "gpusched/workload/job.hpp"
#include "gpusched/workload/ledger.hpp"

GPUSCHED_BEGIN_NAMESPACE

struct ordering_tag {};
struct admission_tag {};
struct packing_tag {};
struct placement_tag {};
struct preemption_tag {};

namespace detail {
template <class P, class Tag>
concept has_category =
    requires { typename P::policy_category; } && std::same_as<typename P::policy_category, Tag>;
template <class P>
concept named = requires(const P& p) {
  { p.name() } -> std::convertible_to<std::string_view>;
};
}  // namespace detail

/// Opt-in switches; specialise to `true` to adapt a type without a `policy_category`.
///@{
template <class P>
inline constexpr bool enable_ordering_policy = detail::has_category<P, ordering_tag>;
template <class P>
inline constexpr bool enable_admission_policy = detail::has_category<P, admission_tag>;
template <class P>
inline constexpr bool enable_packing_policy = detail::has_category<P, packing_tag>;
template <class P>
inline constexpr bool enable_placement_policy = detail::has_category<P, placement_tag>;
template <class P>
inline constexpr bool enable_preemption_policy = detail::has_category<P, preemption_tag>;
///@}

// ---- result vocabulary ---------------------------------------------------------------------

/// What the queue does after a job could not be placed.
enum class queue_action : std::uint8_t {
  skip,   ///< go on with the next job (best effort)
  block,  ///< defer every later job this cycle (strict FIFO)
};

/// An admission policy's answer before placement.
struct admission_verdict {
  verdict kind = verdict::admit;  ///< admit: go on to placement
  /// Why, when `kind` is not `admit` (a defer or a reject with its reason).
  reason why;
};

/// A placement policy's answer: placed (the transaction holds every task) or why not.
struct placement_outcome {
  /// True when every task of the job is placed in the transaction.
  bool placed = false;
  /// Why not, when `placed` is false.
  reason why;
};

/// A preemption policy's answer: the victims (empty: none admissible) and why. The fields
/// after `why` are optional richer output (a policy that does not fill them leaves them empty).
struct preemption_plan {
  std::vector<job_id> victims;  ///< jobs evicted whole
  /// Why, when no admissible victim set was found (or what the plan frees).
  reason why;
  std::vector<shrink_order> shrinks{};       ///< elastic jobs shrunk instead of evicted
  std::vector<victim_detail> details{};      ///< per victim (evicted or shrunk): action, cost
  double lost_gpu_seconds = 0;               ///< sum of `details[i].lost_gpu_seconds`
  std::vector<task_allocation> placement{};  ///< where the preemptor went in the verifying probe
  /// True when the plan evicts and shrinks nothing.
  [[nodiscard]] bool empty() const noexcept { return victims.empty() && shrinks.empty(); }
};

/// @brief Tests a victim set: true when evicting exactly `victims` (and applying `shrinks`)
/// lets the preemptor be placed. Provided by the pipeline; it uses a transaction and always
/// rolls it back. Non-owning, like `function_ref`.
///
/// It can be made from a callable taking the victims only (`bool(span<const job_id>)`; such a
/// probe answers false whenever `shrinks` is non-empty) or from one taking the victims, the
/// shrinks and an optional output for the placement found
/// (`bool(span<const job_id>, span<const shrink_order>, std::vector<task_allocation>*)`).
class fit_probe {
 public:
  /// A probe from a victims-only callable `bool(span<const job_id>)` (it answers false to any
  /// shrink); holds a reference to `f`, which must outlive the probe.
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, fit_probe> &&
             std::is_invocable_r_v<bool, F&, std::span<const job_id>> &&
             !std::is_invocable_r_v<bool, F&, std::span<const job_id>,
                                    std::span<const shrink_order>, std::vector<task_allocation>*>)
  fit_probe(F&& f) noexcept  // NOLINT(google-explicit-constructor): a reference wrapper
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* o, std::span<const job_id> v, std::span<const shrink_order> s,
                 std::vector<task_allocation>*) -> bool {
          if (!s.empty()) return false;
          return (*static_cast<std::remove_reference_t<F>*>(o))(v);
        }),
        shrinks_(false) {}
  /// A probe from a callable taking the victims, the shrinks and an optional output for the
  /// placement (`bool(span, span, std::vector<task_allocation>*)`);
  /// holds a reference to `f`, which must outlive the probe.
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, fit_probe> &&
             std::is_invocable_r_v<bool, F&, std::span<const job_id>, std::span<const shrink_order>,
                                   std::vector<task_allocation>*>)
  fit_probe(F&& f) noexcept  // NOLINT(google-explicit-constructor)
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* o, std::span<const job_id> v, std::span<const shrink_order> s,
                 std::vector<task_allocation>* out) -> bool {
          return (*static_cast<std::remove_reference_t<F>*>(o))(v, s, out);
        }),
        shrinks_(true) {}

  /// Evicting `victims` makes room.
  bool operator()(std::span<const job_id> victims) const {
    return call_(object_, victims, {}, nullptr);
  }
  /// Evicting `victims` and applying `shrinks` makes room; on success, and if `placement` is
  /// not null, it receives where the preemptor was placed.
  bool operator()(std::span<const job_id> victims, std::span<const shrink_order> shrinks,
                  std::vector<task_allocation>* placement = nullptr) const {
    return call_(object_, victims, shrinks, placement);
  }
  /// False when made from a victims-only callable (shrinks are then never verified).
  [[nodiscard]] bool supports_shrink() const noexcept { return shrinks_; }

 private:
  void* object_;
  bool (*call_)(void*, std::span<const job_id>, std::span<const shrink_order>,
                std::vector<task_allocation>*);
  bool shrinks_;
};

/// @brief What-if tools the pipeline lends to admission hooks that need them (backfill): open a
/// transaction on the ledger, and place any job inside a transaction with the pipeline's own
/// placement and packing policies. Valid during one cycle.
class admission_tools {
 public:
  /// Places a job in a transaction with the pipeline's placement and packing policies.
  using placer = detail::function_ref<placement_outcome(const job_spec&, ledger::transaction&)>;
  /// Tools over `book` that place with `place`; made by the pipeline for one cycle.
  admission_tools(ledger& book, placer place) noexcept : book_(&book), place_(place) {}
  /// A new transaction. @pre none is open (true in `on_unplaced`; in `approve` use its `tx`).
  [[nodiscard]] ledger::transaction begin() const noexcept { return book_->begin(); }
  /// Places `j` into `tx` as the pipeline would (the caller rolls back what it does not keep).
  [[nodiscard]] placement_outcome place(const job_spec& j, ledger::transaction& tx) const {
    return place_(j, tx);
  }

 private:
  ledger* book_;
  placer place_;
};

// ---- ordering ------------------------------------------------------------------------------

/// @brief Decides who goes next.
///
/// Requirements: `p.order(ctx, jobs)` permutes `jobs` in place (highest precedence first);
/// `p.name()`.
/// Laws: the result is a permutation of the input; deterministic for equal inputs and seed.
/// Complexity: expected O(n log n) for n jobs.
/// Models: `fifo_ordering`, `priority_ordering`, `drf_ordering`, `kueue_share_ordering`,
/// `multifactor_ordering`, `fair_tree_ordering`, `las_ordering`, `gittins_ordering`,
/// `srtf_ordering`, `finish_time_fairness_ordering` (the reference's ordering page).
template <class P>
concept ordering_policy =
    enable_ordering_policy<P> && std::copy_constructible<P> && detail::named<P> &&
    requires(P& p, const schedule_context& ctx, std::span<const job_spec*> jobs) {
      p.order(ctx, jobs);
    };

/// @brief An ordering defined by a comparison, so that laws can be tested pairwise.
/// Law: `before` is a strict weak order on jobs for a fixed context.
template <class P>
concept comparison_ordering_policy =
    ordering_policy<P> &&
    requires(const P& p, const schedule_context& ctx, const job_spec& a, const job_spec& b) {
      { p.before(ctx, a, b) } -> std::convertible_to<bool>;
    };

// ---- admission -----------------------------------------------------------------------------

/// @brief Decides whether a job may try to start (quota, gang feasibility, reservations) and
/// what the queue does when a job does not fit.
///
/// Requirements: `p.admit(ctx, job) -> admission_verdict`; `p.on_unplaced(ctx, job, reason) ->
/// queue_action` (or `p.on_unplaced(ctx, job, reason, tools)`); `p.name()`. Optional hooks,
/// declared with `using hooks = hook_list<...>` and called by the pipeline:
/// `gpusched/policy/hooks.hpp` (`admission_hooks`).
/// Laws: `admit` does not change the cluster; a `reject` is final for the job as specified.
/// Complexity: O(groups) per call for the baselines.
/// Models: `gang_admission`, `quota_admission`.
template <class P>
concept admission_policy =
    enable_admission_policy<P> && std::copy_constructible<P> && detail::named<P> &&
    requires(P& p, const schedule_context& ctx, const job_spec& j) {
      { p.admit(ctx, j) } -> std::same_as<admission_verdict>;
    } &&
    (requires(P& p, const schedule_context& ctx, const job_spec& j, const reason& r) {
      { p.on_unplaced(ctx, j, r) } -> std::same_as<queue_action>;
    } || requires(P& p, const schedule_context& ctx, const job_spec& j, const reason& r,
                  const admission_tools& t) {
      { p.on_unplaced(ctx, j, r, t) } -> std::same_as<queue_action>;
    });

// ---- packing -------------------------------------------------------------------------------

/// @brief Decides which node, GPUs and MIG slots one task goes to.
///
/// Requirements: `p.fit(ctx, node, request)` chooses GPUs on one given node;
/// `p.pack(ctx, request)` chooses the node too; both return `std::optional<task_allocation>`
/// (empty: does not fit); `p.name()`.
/// Laws: a returned allocation satisfies `ctx.state().can_apply(a)` (never over-commits), grants
/// exactly the request (CPU, memory, whole count, share or MIG geometry) on an allowed model;
/// `pack` returns nothing only if `fit` returns nothing on every node.
/// Complexity: `fit` O(GPUs of node); `pack` O(log nodes) per candidate node for the baselines.
/// Models: `first_fit_packing`, `best_fit_packing`, `worst_fit_packing`, `mig_aware_packing`,
/// `topology_packing`, the FGD paper's six (`fgd_family_packing`).
template <class P>
concept packing_policy =
    enable_packing_policy<P> && std::copy_constructible<P> && detail::named<P> &&
    requires(const P& p, const schedule_context& ctx, node_index n, const task_request& r) {
      { p.fit(ctx, n, r) } -> std::same_as<std::optional<task_allocation>>;
      { p.pack(ctx, r) } -> std::same_as<std::optional<task_allocation>>;
    };

/// @brief A non-owning, type-erased reference to a packing policy, handed to placement policies
/// so that any placement composes with any packing (statically or through `any_*` wrappers).
class packing_ref {
 public:
  /// A reference to `p`, which must outlive it.
  template <packing_policy P>
  packing_ref(const P& p) noexcept  // NOLINT(google-explicit-constructor): a reference wrapper
      : p_(&p),
        fit_([](const void* o, const schedule_context& c, node_index n, const task_request& r) {
          return static_cast<const P*>(o)->fit(c, n, r);
        }),
        pack_([](const void* o, const schedule_context& c, const task_request& r) {
          return static_cast<const P*>(o)->pack(c, r);
        }) {}
  /// `p.fit(c, n, r)` of the referenced policy.
  [[nodiscard]] std::optional<task_allocation> fit(const schedule_context& c, node_index n,
                                                   const task_request& r) const {
    return fit_(p_, c, n, r);
  }
  /// `p.pack(c, r)` of the referenced policy.
  [[nodiscard]] std::optional<task_allocation> pack(const schedule_context& c,
                                                    const task_request& r) const {
    return pack_(p_, c, r);
  }

 private:
  const void* p_;
  std::optional<task_allocation> (*fit_)(const void*, const schedule_context&, node_index,
                                         const task_request&);
  std::optional<task_allocation> (*pack_)(const void*, const schedule_context&,
                                          const task_request&);
};

// ---- placement -----------------------------------------------------------------------------

/// @brief Decides where a whole gang goes, task by task, inside a transaction.
///
/// Requirements: `p.place(ctx, job, packing, tx) -> placement_outcome`; `p.name()`.
/// Laws: when `placed`, `tx.placed()` holds exactly one allocation per task at the size chosen
/// (full size for non-elastic groups), each with its group index; when not placed, the pipeline
/// rolls `tx` back, so the policy may leave partial work in it. Never evicts.
/// Complexity: O(tasks x packing cost) for the baselines.
/// Models: `first_fit_placement`, `gang_placement`, `topology_aware_placement`.
template <class P>
concept placement_policy =
    enable_placement_policy<P> && std::copy_constructible<P> && detail::named<P> &&
    requires(P& p, const schedule_context& ctx, const job_spec& j, packing_ref pk,
             ledger::transaction& tx) {
      { p.place(ctx, j, pk, tx) } -> std::same_as<placement_outcome>;
    };

// ---- preemption ----------------------------------------------------------------------------

/// @brief Chooses running jobs to evict so that a preemptor fits.
///
/// Requirements: `p.select(ctx, job, probe) -> preemption_plan`; `p.name()`.
/// Laws: victims are distinct running jobs; when non-empty, `probe(victims)` is true (the
/// pipeline re-checks); a preemptor that cannot be satisfied evicts nobody (empty victims).
/// Optional: `shrinks` (elastic jobs, none also among `victims`), with `probe(victims, shrinks)`
/// true. Optional hooks, declared with `using hooks = hook_list<...>`: `on_preempted`,
/// `begin_cycle`, `select_reclaim` (`gpusched/policy/hooks.hpp`, `preemption_hooks`).
/// Complexity: policy-specific; document the number of probes.
/// Models: `priority_preemption`, `no_preemption`, `checkpoint_aware_preemption`,
/// `kube_default_preemption`, `las_preemption`, `srtf_preemption`.
template <class P>
concept preemption_policy =
    enable_preemption_policy<P> && std::copy_constructible<P> && detail::named<P> &&
    requires(P& p, const schedule_context& ctx, const job_spec& j, fit_probe probe) {
      { p.select(ctx, j, probe) } -> std::same_as<preemption_plan>;
    };

/// Any of the five families.
template <class P>
concept scheduling_policy = ordering_policy<P> || admission_policy<P> || packing_policy<P> ||
                            placement_policy<P> || preemption_policy<P>;

GPUSCHED_END_NAMESPACE
