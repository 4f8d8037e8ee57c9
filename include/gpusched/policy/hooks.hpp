// SPDX-License-Identifier: Apache-2.0
/// @file
/// The optional hooks of the policy families, declared in one place.
///
/// Besides its family's required members (`policy/concepts.hpp`), a policy may implement
/// optional hooks that the pipeline calls at fixed points of a cycle. A policy *declares* the
/// hooks it implements:
/// @code
/// struct my_admission {
///   using policy_category = gpusched::admission_tag;
///   using hooks = gpusched::hook_list<gpusched::hook::approve, gpusched::hook::on_committed>;
///   ...
/// };
/// @endcode
/// and the pipeline calls exactly the declared hooks. Every pipeline, `make_pipeline` and
/// `any_*` wrapper checks at compile time, hook by hook, that
/// - a declared hook has a member of the hook's signature (a misspelt or mistyped hook is an
///   error naming the hook and its signature), and
/// - a member that has a hook's name or signature is declared (an undeclared hook would never
///   be called: an error too), and
/// - every declared hook belongs to the policy's family.
///
/// | family     | hooks (`<family>_hooks`)                                                |
/// |------------|-------------------------------------------------------------------------|
/// | ordering   | `incremental`                                                           |
/// | admission  | `begin_cycle`, `approve`, `reclaim`, `on_committed`, `on_admitted`,     |
/// |            | `approve_growth`, `on_grown`                                            |
/// | packing    | none                                                                    |
/// | placement  | none                                                                    |
/// | preemption | `begin_cycle`, `on_preempted`, `select_reclaim`                         |
///
/// These lists are the single source: the pipeline's calls and the forwarding of the type-erased
/// `any_*` wrappers (which declare every hook of their family) are both checked against them,
/// so a hook added here and forgotten in a wrapper does not compile.
///
/// Each hook also has a named refinement concept (`approving_admission_policy`, ...): a policy
/// models it when it declares the hook with the right signature.
#pragma once

#include <concepts>  // std::same_as
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

#include "gpusched/config.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/context.hpp"
#include "gpusched/policy/decision.hpp"
#include "gpusched/workload/job.hpp"
#include "gpusched/workload/ledger.hpp"

GPUSCHED_BEGIN_NAMESPACE

class reclaim_scope;  // policy/preemption/reclaim.hpp

/// @brief A list of hooks: what a policy declares as `using hooks = hook_list<...>;`.
template <class... Hooks>
struct hook_list {
  /// Number of hooks in the list.
  static constexpr std::size_t size = sizeof...(Hooks);
};

namespace detail {
template <class H, class List>
inline constexpr bool in_hook_list = false;
template <class H, class... Hs>
inline constexpr bool in_hook_list<H, hook_list<Hs...>> = (std::same_as<H, Hs> || ...);

template <class P>
struct declared_hooks {
  using type = hook_list<>;
};
template <class P>
  requires requires { typename P::hooks; }
struct declared_hooks<P> {
  using type = typename P::hooks;
};

template <class List, class Family>
inline constexpr bool all_in_family = false;
template <class... Hs, class Family>
inline constexpr bool all_in_family<hook_list<Hs...>, Family> =
    (in_hook_list<Hs, Family> && ...);
}  // namespace detail

/// True when policy `P` lists hook `H` in its `hooks`. Compile time, O(1) per query.
template <class P, class H>
inline constexpr bool declares_hook =
    detail::in_hook_list<H, typename detail::declared_hooks<std::remove_cvref_t<P>>::type>;

namespace hook {
// Each hook: `name` (for messages), `bit` (for `hook_active`), `matches<P>` (P has a member of
// the hook's signature), `named<P>` (P has a member of the hook's name, any signature: found by
// taking its address, so an overloaded or template member is seen through `matches` only) and
// `check<P>()` (the two compile-time checks of the file documentation, with messages).

#define GPUSCHED_DETAIL_HOOK_CHECK(HOOK, SIGNATURE)                                                \
  template <class P>                                                                               \
  static constexpr bool check() {                                                                  \
    static_assert(!declares_hook<P, HOOK> || matches<P>,                                           \
                  "gpusched: this policy lists gpusched::hook::" #HOOK                             \
                  " in `using hooks = gpusched::hook_list<...>` but has no member " SIGNATURE);    \
    static_assert(declares_hook<P, HOOK> || !(matches<P> || named<P>),                             \
                  "gpusched: this policy has a member named like gpusched::hook::" #HOOK           \
                  " (" SIGNATURE ") but does not list the hook in `using hooks = "                 \
                  "gpusched::hook_list<...>`: the pipeline would never call it");                  \
    return !declares_hook<P, HOOK> || matches<P>;                                                  \
  }

/// Ordering: `on_admitted(ctx, job, grant)` after `job` started holding the tasks `grant`, and
/// `on_released(ctx, job, grant)` before it gives them back (see `incremental_ordering_policy`).
struct incremental {
  /// The hook's name, as compile errors print it.
  static constexpr std::string_view name = "incremental";
  /// The hook's bit in a policy's mask of active hooks.
  static constexpr std::uint32_t bit = 1U << 0U;
  /// True when `P` has the hook's member(s) with the hook's signature.
  template <class P>
  static constexpr bool matches = requires(P& p, const schedule_context& c, const job_spec& j,
                                           std::span<const task_allocation> g) {
    p.on_admitted(c, j, g);
    p.on_released(c, j, g);
  };
  /// True when `P` has a member of the hook's name, of any signature (taken by address, so an
  /// overloaded or template member is seen through `matches` only).
  template <class P>
  static constexpr bool named = requires { &P::on_admitted; } || requires { &P::on_released; };
  GPUSCHED_DETAIL_HOOK_CHECK(
      incremental,
      "`void on_admitted(const schedule_context&, const job_spec&, std::span<const "
      "task_allocation>)` and `void on_released(...)` of the same parameters")
};

/// Admission and preemption: `begin_cycle(ctx)`, before the pending jobs are ordered.
struct begin_cycle {
  /// The hook's name, as compile errors print it.
  static constexpr std::string_view name = "begin_cycle";
  /// The hook's bit in a policy's mask of active hooks.
  static constexpr std::uint32_t bit = 1U << 1U;
  /// True when `P` has the hook's member(s) with the hook's signature.
  template <class P>
  static constexpr bool matches = requires(P& p, const schedule_context& c) { p.begin_cycle(c); };
  /// True when `P` has a member of the hook's name, of any signature (taken by address, so an
  /// overloaded or template member is seen through `matches` only).
  template <class P>
  static constexpr bool named = requires { &P::begin_cycle; };
  GPUSCHED_DETAIL_HOOK_CHECK(begin_cycle, "`void begin_cycle(const schedule_context&)`")
};

/// Admission: `approve(ctx, job, tx, tools) -> admission_verdict` (or without `tools`) after a
/// successful tentative placement in `tx` and before its commit; a refusal rolls it back.
struct approve {
  /// The hook's name, as compile errors print it.
  static constexpr std::string_view name = "approve";
  /// The hook's bit in a policy's mask of active hooks.
  static constexpr std::uint32_t bit = 1U << 2U;
  /// True when `P` has `approve(ctx, job, tx, tools)` returning `admission_verdict`.
  template <class P>
  static constexpr bool with_tools =
      requires(P& p, const schedule_context& c, const job_spec& j, ledger::transaction& tx,
               const admission_tools& t) {
        { p.approve(c, j, tx, t) } -> std::same_as<admission_verdict>;
      };
  /// True when `P` has `approve(ctx, job, tx)` returning `admission_verdict`.
  template <class P>
  static constexpr bool without_tools =
      requires(P& p, const schedule_context& c, const job_spec& j, ledger::transaction& tx) {
        { p.approve(c, j, tx) } -> std::same_as<admission_verdict>;
      };
  /// True when `P` has the hook's member(s) with the hook's signature.
  template <class P>
  static constexpr bool matches = with_tools<P> || without_tools<P>;
  /// True when `P` has a member of the hook's name, of any signature (taken by address, so an
  /// overloaded or template member is seen through `matches` only).
  template <class P>
  static constexpr bool named = requires { &P::approve; };
  /// Calls whichever form `p` has. @pre `matches<P>`.
  template <class P>
  static admission_verdict call(P& p, const schedule_context& c, const job_spec& j,
                                ledger::transaction& tx, const admission_tools& t) {
    if constexpr (with_tools<P>) {
      return p.approve(c, j, tx, t);
    } else {
      return p.approve(c, j, tx);
    }
  }
  GPUSCHED_DETAIL_HOOK_CHECK(approve,
                             "`admission_verdict approve(const schedule_context&, const "
                             "job_spec&, ledger::transaction&, const admission_tools&)` (or "
                             "without the last parameter)")
};

/// Admission: the free-quota reclaim pair (pipeline step 5): `reclaim_for(ctx, job, why) ->
/// std::optional<reclaim_scope>` and `approve_reclaim(ctx, job, tx, tools) -> admission_verdict`.
struct reclaim {
  /// The hook's name, as compile errors print it.
  static constexpr std::string_view name = "reclaim";
  /// The hook's bit in a policy's mask of active hooks.
  static constexpr std::uint32_t bit = 1U << 3U;
  /// True when `P` has the hook's member(s) with the hook's signature.
  template <class P>
  static constexpr bool matches = requires(P& p, const schedule_context& c, const job_spec& j,
                                           const reason& why, ledger::transaction& tx,
                                           const admission_tools& t) {
    { p.reclaim_for(c, j, why) } -> std::same_as<std::optional<reclaim_scope>>;
    { p.approve_reclaim(c, j, tx, t) } -> std::same_as<admission_verdict>;
  };
  /// True when `P` has a member of the hook's name, of any signature (taken by address, so an
  /// overloaded or template member is seen through `matches` only).
  template <class P>
  static constexpr bool named =
      requires { &P::reclaim_for; } || requires { &P::approve_reclaim; };
  GPUSCHED_DETAIL_HOOK_CHECK(
      reclaim,
      "`std::optional<reclaim_scope> reclaim_for(const schedule_context&, const job_spec&, const "
      "reason&)` and `admission_verdict approve_reclaim(const schedule_context&, const "
      "job_spec&, ledger::transaction&, const admission_tools&)`")
};

/// Admission: `on_committed(ctx, decision)` after an admitted job's commit.
struct on_committed {
  /// The hook's name, as compile errors print it.
  static constexpr std::string_view name = "on_committed";
  /// The hook's bit in a policy's mask of active hooks.
  static constexpr std::uint32_t bit = 1U << 4U;
  /// True when `P` has the hook's member(s) with the hook's signature.
  template <class P>
  static constexpr bool matches =
      requires(P& p, const schedule_context& c, const decision& d) { p.on_committed(c, d); };
  /// True when `P` has a member of the hook's name, of any signature (taken by address, so an
  /// overloaded or template member is seen through `matches` only).
  template <class P>
  static constexpr bool named = requires { &P::on_committed; };
  GPUSCHED_DETAIL_HOOK_CHECK(on_committed,
                             "`void on_committed(const schedule_context&, const decision&)`")
};

/// Admission: `on_admitted(ctx, job)` after an admitted job's commit (after `on_committed`).
struct on_admitted {
  /// The hook's name, as compile errors print it.
  static constexpr std::string_view name = "on_admitted";
  /// The hook's bit in a policy's mask of active hooks.
  static constexpr std::uint32_t bit = 1U << 5U;
  /// True when `P` has the hook's member(s) with the hook's signature.
  template <class P>
  static constexpr bool matches =
      requires(P& p, const schedule_context& c, const job_spec& j) { p.on_admitted(c, j); };
  /// True when `P` has a member of the hook's name, of any signature (taken by address, so an
  /// overloaded or template member is seen through `matches` only).
  template <class P>
  static constexpr bool named = requires { &P::on_admitted; };
  GPUSCHED_DETAIL_HOOK_CHECK(on_admitted,
                             "`void on_admitted(const schedule_context&, const job_spec&)`")
};

/// Admission: `approve_growth(ctx, running_job, added) -> admission_verdict`, the growth step's
/// check of the tasks `added` (tentatively applied).
struct approve_growth {
  /// The hook's name, as compile errors print it.
  static constexpr std::string_view name = "approve_growth";
  /// The hook's bit in a policy's mask of active hooks.
  static constexpr std::uint32_t bit = 1U << 6U;
  /// True when `P` has the hook's member(s) with the hook's signature.
  template <class P>
  static constexpr bool matches = requires(P& p, const schedule_context& c, const running_job& r,
                                           std::span<const task_allocation> a) {
    { p.approve_growth(c, r, a) } -> std::same_as<admission_verdict>;
  };
  /// True when `P` has a member of the hook's name, of any signature (taken by address, so an
  /// overloaded or template member is seen through `matches` only).
  template <class P>
  static constexpr bool named = requires { &P::approve_growth; };
  GPUSCHED_DETAIL_HOOK_CHECK(approve_growth,
                             "`admission_verdict approve_growth(const schedule_context&, const "
                             "running_job&, std::span<const task_allocation>)`")
};

/// Admission: `on_grown(ctx, running_job, added)` after a growth commit.
struct on_grown {
  /// The hook's name, as compile errors print it.
  static constexpr std::string_view name = "on_grown";
  /// The hook's bit in a policy's mask of active hooks.
  static constexpr std::uint32_t bit = 1U << 7U;
  /// True when `P` has the hook's member(s) with the hook's signature.
  template <class P>
  static constexpr bool matches = requires(P& p, const schedule_context& c, const running_job& r,
                                           std::span<const task_allocation> a) {
    p.on_grown(c, r, a);
  };
  /// True when `P` has a member of the hook's name, of any signature (taken by address, so an
  /// overloaded or template member is seen through `matches` only).
  template <class P>
  static constexpr bool named = requires { &P::on_grown; };
  GPUSCHED_DETAIL_HOOK_CHECK(on_grown,
                             "`void on_grown(const schedule_context&, const running_job&, "
                             "std::span<const task_allocation>)`")
};

/// Preemption: `on_preempted(ctx, job, plan)` after the pipeline committed `plan` for `job`.
struct on_preempted {
  /// The hook's name, as compile errors print it.
  static constexpr std::string_view name = "on_preempted";
  /// The hook's bit in a policy's mask of active hooks.
  static constexpr std::uint32_t bit = 1U << 8U;
  /// True when `P` has the hook's member(s) with the hook's signature.
  template <class P>
  static constexpr bool matches =
      requires(P& p, const schedule_context& c, const job_spec& j, const preemption_plan& pl) {
        p.on_preempted(c, j, pl);
      };
  /// True when `P` has a member of the hook's name, of any signature (taken by address, so an
  /// overloaded or template member is seen through `matches` only).
  template <class P>
  static constexpr bool named = requires { &P::on_preempted; };
  GPUSCHED_DETAIL_HOOK_CHECK(on_preempted,
                             "`void on_preempted(const schedule_context&, const job_spec&, const "
                             "preemption_plan&)`")
};

/// Preemption: `select_reclaim(ctx, job, scope, probe) -> preemption_plan`, victims among a
/// quota reclaim's candidates (pipeline step 5).
struct select_reclaim {
  /// The hook's name, as compile errors print it.
  static constexpr std::string_view name = "select_reclaim";
  /// The hook's bit in a policy's mask of active hooks.
  static constexpr std::uint32_t bit = 1U << 9U;
  /// True when `P` has the hook's member(s) with the hook's signature.
  template <class P>
  static constexpr bool matches = requires(P& p, const schedule_context& c, const job_spec& j,
                                           const reclaim_scope& s, fit_probe f) {
    { p.select_reclaim(c, j, s, f) } -> std::same_as<preemption_plan>;
  };
  /// True when `P` has a member of the hook's name, of any signature (taken by address, so an
  /// overloaded or template member is seen through `matches` only).
  template <class P>
  static constexpr bool named = requires { &P::select_reclaim; };
  GPUSCHED_DETAIL_HOOK_CHECK(select_reclaim,
                             "`preemption_plan select_reclaim(const schedule_context&, const "
                             "job_spec&, const reclaim_scope&, fit_probe)`")
};

#undef GPUSCHED_DETAIL_HOOK_CHECK
}  // namespace hook

/// The hooks of each family, in the order the pipeline documents them.
using ordering_hooks = hook_list<hook::incremental>;
/// The hooks an admission policy may declare.
using admission_hooks =
    hook_list<hook::begin_cycle, hook::approve, hook::reclaim, hook::on_committed,
              hook::on_admitted, hook::approve_growth, hook::on_grown>;
/// A packing policy has no optional hooks.
using packing_hooks = hook_list<>;
/// A placement policy has no optional hooks.
using placement_hooks = hook_list<>;
/// The hooks a preemption policy may declare.
using preemption_hooks = hook_list<hook::begin_cycle, hook::on_preempted, hook::select_reclaim>;

namespace detail {
template <class P, class Family>
struct hook_checker;
template <class P, class... Hs>
struct hook_checker<P, hook_list<Hs...>> {
  static constexpr bool check() {
    static_assert(all_in_family<typename declared_hooks<P>::type, hook_list<Hs...>>,
                  "gpusched: this policy's `hooks` lists a hook that its family does not have "
                  "(see the family's list in gpusched/policy/hooks.hpp)");
    return (Hs::template check<P>() && ...) &&
           all_in_family<typename declared_hooks<P>::type, hook_list<Hs...>>;
  }
  /// The bits of the hooks `P` declares.
  static constexpr std::uint32_t mask() noexcept {
    return (0U | ... | (declares_hook<P, Hs> ? Hs::bit : 0U));
  }
};

/// The hook list of `P`'s family (the empty list for a type of no family).
template <class P>
using family_hooks_of = std::conditional_t<
    enable_ordering_policy<P>, ordering_hooks,
    std::conditional_t<
        enable_admission_policy<P>, admission_hooks,
        std::conditional_t<enable_preemption_policy<P>, preemption_hooks, hook_list<>>>>;
}  // namespace detail

/// @brief Checks `P`'s hooks against its family's list (the three checks of the file
/// documentation), failing compilation with a message naming the hook; true when all pass.
/// Called by `pipeline`, `make_pipeline` and the `any_*` constructors.
template <class P>
constexpr bool check_hooks() {
  return detail::hook_checker<P, detail::family_hooks_of<P>>::check();
}

/// The bits (`hook::X::bit`) of the hooks `P` declares.
template <class P>
inline constexpr std::uint32_t declared_hook_mask =
    detail::hook_checker<P, detail::family_hooks_of<P>>::mask();

/// @brief Whether `p` implements hook `H` at run time: `P` declares it and, for a type-erased
/// wrapper (which declares every hook of its family), the held policy declares it too (the
/// wrapper's `held_hooks()` mask). The pipeline takes a path that only exists with a hook (the
/// free-quota reclaim) only when this is true, so a wrapper behaves as the policy it holds.
/// O(1).
template <class H, class P>
[[nodiscard]] constexpr bool hook_active(const P& p) noexcept {
  if constexpr (!declares_hook<P, H>) {
    return false;
  } else if constexpr (requires {
                         { p.held_hooks() } -> std::same_as<std::uint32_t>;
                       }) {
    return (p.held_hooks() & H::bit) != 0U;
  } else {
    return true;
  }
}

// ---- the named refinements -----------------------------------------------------------------

/// @brief An ordering that keeps per-tenant state across cycles and updates it as the allocation
/// changes, instead of rebuilding it from the ledger in every `order`.
///
/// Requirements: `ordering_policy<P>`; declares `hook::incremental`; `p.on_admitted(ctx, job,
/// grant)` after `job` started holding the tasks `grant`; `p.on_released(ctx, job, grant)` before
/// `job` gives back the tasks `grant` (a release, an eviction, or the old size of a shrink or a
/// growth, followed by `on_admitted` with the new size). The pipeline calls them on admission,
/// eviction, shrink, growth (its growth step) and `pipeline::release`.
/// Laws: after any sequence of changes each reported through the hooks, `order` gives the same
/// result as a fresh policy ordering from the ledger.
/// Complexity: each hook O(D + log T) for D dimensions and T tenants for `drf_ordering`.
/// Models: `drf_ordering`, `multifactor_ordering` with a fair-share factor,
/// `any_ordering_policy`.
template <class P>
concept incremental_ordering_policy =
    ordering_policy<P> && declares_hook<P, hook::incremental> && hook::incremental::matches<P>;

/// An admission policy with `begin_cycle(ctx)`, called before the pending jobs are ordered.
/// Models: `gang_admission`, `quota_admission`.
template <class P>
concept cycle_aware_admission_policy =
    admission_policy<P> && declares_hook<P, hook::begin_cycle> && hook::begin_cycle::matches<P>;

/// An admission policy with `approve(ctx, job, tx[, tools])`: judges the tentative placement
/// before its commit (quota on the exact placement, backfill reservations).
/// Models: `gang_admission`, `quota_admission`.
template <class P>
concept approving_admission_policy =
    admission_policy<P> && declares_hook<P, hook::approve> && hook::approve::matches<P>;

/// An admission policy that offers free-quota reclaim (`reclaim_for`, `approve_reclaim`).
/// Models: `quota_admission`.
template <class P>
concept reclaiming_admission_policy =
    admission_policy<P> && declares_hook<P, hook::reclaim> && hook::reclaim::matches<P>;

/// An admission policy told of each commit (`on_committed(ctx, decision)`).
template <class P>
concept commit_observing_admission_policy =
    admission_policy<P> && declares_hook<P, hook::on_committed> &&
    hook::on_committed::matches<P>;

/// An admission policy told of each admitted job (`on_admitted(ctx, job)`).
template <class P>
concept admit_observing_admission_policy =
    admission_policy<P> && declares_hook<P, hook::on_admitted> && hook::on_admitted::matches<P>;

/// An admission policy that judges the growth step's added tasks (`approve_growth`).
template <class P>
concept growth_approving_admission_policy =
    admission_policy<P> && declares_hook<P, hook::approve_growth> &&
    hook::approve_growth::matches<P>;

/// An admission policy told of each growth commit (`on_grown`).
template <class P>
concept growth_observing_admission_policy =
    admission_policy<P> && declares_hook<P, hook::on_grown> && hook::on_grown::matches<P>;

/// A preemption policy with `begin_cycle(ctx)` (state derived from the ledger kept for a cycle).
template <class P>
concept cycle_aware_preemption_policy =
    preemption_policy<P> && declares_hook<P, hook::begin_cycle> && hook::begin_cycle::matches<P>;

/// A preemption policy told of each committed plan (`on_preempted`; thrash protection).
template <class P>
concept plan_observing_preemption_policy =
    preemption_policy<P> && declares_hook<P, hook::on_preempted> &&
    hook::on_preempted::matches<P>;

/// A preemption policy that chooses victims for a quota reclaim (`select_reclaim`).
template <class P>
concept reclaiming_preemption_policy =
    preemption_policy<P> && declares_hook<P, hook::select_reclaim> &&
    hook::select_reclaim::matches<P>;

GPUSCHED_END_NAMESPACE
