// SPDX-License-Identifier: Apache-2.0
/// @file
/// `detail::diagnose_policy<P>()`: checks a would-be policy against its family's requirements
/// and its hooks with one `static_assert` per requirement, so that a mistake is reported as a
/// sentence naming the missing or wrong member (GCC's own concept diagnostics only say that a
/// disjunction "evaluated to false"). Used by `make_pipeline` and the `any_*` constructors.
#pragma once

#include <concepts>  // std::same_as, std::copy_constructible
#include <optional>
#include <span>

#include "gpusched/config.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/hooks.hpp"

GPUSCHED_BEGIN_NAMESPACE
namespace detail {

/// @brief True when `P` is a policy of exactly one family whose required members and declared
/// hooks are all right; otherwise compilation fails with one message per mistake (and this
/// returns false, so that callers can stop before piling further errors on top). Compile time.
template <class P>
constexpr bool diagnose_policy() {
  constexpr int families = static_cast<int>(enable_ordering_policy<P>) +
                           static_cast<int>(enable_admission_policy<P>) +
                           static_cast<int>(enable_packing_policy<P>) +
                           static_cast<int>(enable_placement_policy<P>) +
                           static_cast<int>(enable_preemption_policy<P>);
  static_assert(families != 0,
                "gpusched: this type is not a policy: it has no `using policy_category = "
                "gpusched::ordering_tag;` (or admission_tag, packing_tag, placement_tag, "
                "preemption_tag) and no gpusched::enable_<family>_policy specialisation");
  static_assert(families <= 1,
                "gpusched: this type opts into two policy families; a policy belongs to one");
  if constexpr (families != 1) {
    return false;
  } else {
    static_assert(named<P>,
                  "gpusched: this policy has no `std::string_view name() const` (a static "
                  "constexpr member function is fine)");
    static_assert(std::copy_constructible<P>,
                  "gpusched: this policy is not copy constructible (policies are values; share "
                  "state through the schedule_context or a pointer)");
    if constexpr (enable_ordering_policy<P>) {
      static_assert(
          requires(P& p, const schedule_context& c, std::span<const job_spec*> jobs) {
            p.order(c, jobs);
          },
          "gpusched: this ordering policy has no member `void order(const schedule_context&, "
          "std::span<const job_spec*>)`");
    } else if constexpr (enable_admission_policy<P>) {
      static_assert(
          requires(P& p, const schedule_context& c, const job_spec& j) {
            { p.admit(c, j) } -> std::same_as<admission_verdict>;
          },
          "gpusched: this admission policy has no member `admission_verdict admit(const "
          "schedule_context&, const job_spec&)`");
      static_assert(
          requires(P& p, const schedule_context& c, const job_spec& j, const reason& r) {
            { p.on_unplaced(c, j, r) } -> std::same_as<queue_action>;
          } || requires(P& p, const schedule_context& c, const job_spec& j, const reason& r,
                        const admission_tools& t) {
            { p.on_unplaced(c, j, r, t) } -> std::same_as<queue_action>;
          },
          "gpusched: this admission policy has no member `queue_action on_unplaced(const "
          "schedule_context&, const job_spec&, const reason&)` (or with a last `const "
          "admission_tools&`)");
    } else if constexpr (enable_packing_policy<P>) {
      static_assert(
          requires(const P& p, const schedule_context& c, node_index n, const task_request& r) {
            { p.fit(c, n, r) } -> std::same_as<std::optional<task_allocation>>;
          },
          "gpusched: this packing policy has no const member `std::optional<task_allocation> "
          "fit(const schedule_context&, node_index, const task_request&) const`");
      static_assert(
          requires(const P& p, const schedule_context& c, const task_request& r) {
            { p.pack(c, r) } -> std::same_as<std::optional<task_allocation>>;
          },
          "gpusched: this packing policy has no const member `std::optional<task_allocation> "
          "pack(const schedule_context&, const task_request&) const`");
    } else if constexpr (enable_placement_policy<P>) {
      static_assert(
          requires(P& p, const schedule_context& c, const job_spec& j, packing_ref pk,
                   ledger::transaction& tx) {
            { p.place(c, j, pk, tx) } -> std::same_as<placement_outcome>;
          },
          "gpusched: this placement policy has no member `placement_outcome place(const "
          "schedule_context&, const job_spec&, packing_ref, ledger::transaction&)`");
    } else {
      static_assert(
          requires(P& p, const schedule_context& c, const job_spec& j, fit_probe f) {
            { p.select(c, j, f) } -> std::same_as<preemption_plan>;
          },
          "gpusched: this preemption policy has no member `preemption_plan select(const "
          "schedule_context&, const job_spec&, fit_probe)`");
    }
    const bool hooks_ok = check_hooks<P>();
    return hooks_ok && (ordering_policy<P> || admission_policy<P> || packing_policy<P> ||
                        placement_policy<P> || preemption_policy<P>);
  }
}

}  // namespace detail
GPUSCHED_END_NAMESPACE
