// SPDX-License-Identifier: Apache-2.0
/// @file
/// Type-erased policies (`any_ordering_policy`, `any_admission_policy`, `any_packing_policy`,
/// `any_placement_policy`, `any_preemption_policy`), for choosing a composition at run time
/// (command lines, config files; the by-name registry is `pipeline/registry.hpp`). Each `any_*`
/// models its family's concept and declares every hook of its family, so
/// `pipeline<any_ordering_policy, ...>` is an ordinary pipeline that behaves as the policies it
/// holds (tested against the static pipeline over every registry composition).
/// Cost: one virtual call per policy call; copying clones the held policy.
#pragma once

#include <cstdint>
#include <memory>  // std::unique_ptr, std::make_unique
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>  // std::is_copy_assignable_v
#include <utility>      // std::move
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/pipeline/pipeline.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/diagnose.hpp"
#include "gpusched/policy/hooks.hpp"
#include "gpusched/policy/preemption/reclaim.hpp"

/// Mutation testing only; never set it otherwise. A value `N` from 1 to 13 makes the type-erased
/// wrappers drop the forwarded hook member number `N` of `detail::forwarded` (as if the held
/// policy did not have it), to show that the static-vs-erased property test
/// (`tests/gpusched/pipeline/any_policy.test.cpp`) fails then (the CMake option
/// `GPUSCHED_MUTATION_TESTS`). 0, the default: every hook is forwarded. Set it for a whole
/// program or not at all (two values in one program break the one-definition rule).
#ifndef GPUSCHED_MUTATE_ANY_POLICY
#define GPUSCHED_MUTATE_ANY_POLICY 0
#endif

GPUSCHED_BEGIN_NAMESPACE
namespace detail {

/// The hook members the `any_*` wrappers forward, numbered for `GPUSCHED_MUTATE_ANY_POLICY`.
enum class forwarded : int {
  none = 0,                     ///< nothing dropped
  ordering_on_admitted = 1,     ///< ordering `on_admitted` (hook `incremental`)
  ordering_on_released = 2,     ///< ordering `on_released` (hook `incremental`)
  admission_begin_cycle = 3,    ///< admission `begin_cycle`
  approve = 4,                  ///< admission `approve`
  reclaim_for = 5,              ///< admission `reclaim_for` (hook `reclaim`)
  approve_reclaim = 6,          ///< admission `approve_reclaim` (hook `reclaim`)
  on_committed = 7,             ///< admission `on_committed`
  admission_on_admitted = 8,    ///< admission `on_admitted`
  approve_growth = 9,           ///< admission `approve_growth`
  on_grown = 10,                ///< admission `on_grown`
  preemption_begin_cycle = 11,  ///< preemption `begin_cycle`
  on_preempted = 12,            ///< preemption `on_preempted`
  select_reclaim = 13,          ///< preemption `select_reclaim`
};
/// False only for the member `GPUSCHED_MUTATE_ANY_POLICY` drops (mutation testing). O(1).
[[nodiscard]] constexpr bool forwards(forwarded f) noexcept {
  return static_cast<int>(f) != GPUSCHED_MUTATE_ANY_POLICY;
}

/// A copyable owner of a polymorphic `Iface` (which has `clone()`); moved-from holds nothing.
template <class Iface>
class poly {
 public:
  explicit poly(std::unique_ptr<Iface> p) noexcept : p_(std::move(p)) {}
  poly(const poly& o) : p_(o.p_ ? o.p_->clone() : nullptr) {}
  poly(poly&&) noexcept = default;
  /// Assigns the held policy in place when both hold the same type (no allocation: the
  /// pipeline copies its policies before every cycle), else clones.
  poly& operator=(const poly& o) {
    if (this == &o) return *this;
    if (p_ && o.p_ && p_->assign_from(*o.p_)) return *this;
    p_ = o.p_ ? o.p_->clone() : nullptr;
    return *this;
  }
  poly& operator=(poly&&) noexcept = default;
  ~poly() = default;
  Iface* operator->() const noexcept {
    GPUSCHED_EXPECTS(p_ != nullptr);
    return p_.get();
  }

 private:
  std::unique_ptr<Iface> p_;
};

struct named_iface {
  virtual ~named_iface() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  /// Copy-assigns the held policy from `o` when `o` holds the same type; false otherwise.
  virtual bool assign_from(const named_iface& o) = 0;
};

/// The shared part of every family's model: holds `P`, clones, names.
template <class Iface, class P, class Derived>
struct model_base : Iface {
  explicit model_base(P x) : p(std::move(x)) {}
  std::unique_ptr<Iface> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
  [[nodiscard]] std::string_view name() const override { return p.name(); }
  bool assign_from(const named_iface& o) override {
    if constexpr (std::is_copy_assignable_v<P>) {
      if (const auto* m = dynamic_cast<const Derived*>(&o)) {
        p = m->p;
        return true;
      }
    }
    return false;
  }
  P p;
};
}  // namespace detail

/// @brief Any ordering policy. Declares every ordering hook (`ordering_hooks`) and forwards
/// each to the held policy when it declares it (else a no-op).
class any_ordering_policy {
  struct iface : detail::named_iface {
    [[nodiscard]] virtual std::unique_ptr<iface> clone() const = 0;
    [[nodiscard]] virtual std::uint32_t held_hooks() const noexcept = 0;
    virtual void order(const schedule_context&, std::span<const job_spec*>) = 0;
    virtual void on_admitted(const schedule_context&, const job_spec&,
                             std::span<const task_allocation>) = 0;
    virtual void on_released(const schedule_context&, const job_spec&,
                             std::span<const task_allocation>) = 0;
  };
  template <class P>
  struct model final : detail::model_base<iface, P, model<P>> {
    using detail::model_base<iface, P, model<P>>::model_base;
    [[nodiscard]] std::uint32_t held_hooks() const noexcept override {
      return declared_hook_mask<P>;
    }
    void order(const schedule_context& c, std::span<const job_spec*> j) override {
      this->p.order(c, j);
    }
    void on_admitted([[maybe_unused]] const schedule_context& c, [[maybe_unused]] const job_spec& j,
                     [[maybe_unused]] std::span<const task_allocation> g) override {
      if constexpr (declares_hook<P, hook::incremental> &&
                    detail::forwards(detail::forwarded::ordering_on_admitted)) {
        this->p.on_admitted(c, j, g);
      }
    }
    void on_released([[maybe_unused]] const schedule_context& c, [[maybe_unused]] const job_spec& j,
                     [[maybe_unused]] std::span<const task_allocation> g) override {
      if constexpr (declares_hook<P, hook::incremental> &&
                    detail::forwards(detail::forwarded::ordering_on_released)) {
        this->p.on_released(c, j, g);
      }
    }
  };

 public:
  /// The family: ordering.
  using policy_category = ordering_tag;
  /// Every ordering hook, forwarded when the held policy declares it.
  using hooks = ordering_hooks;
  /// Holds `p`. @pre (checked at compile time, with a message per mistake) `P` models
  /// `ordering_policy` and its hooks match its declaration.
  template <class P>
    requires(!std::same_as<P, any_ordering_policy> && enable_ordering_policy<P>)
  any_ordering_policy(P p)  // NOLINT(google-explicit-constructor): erasure is the point
      : self_(make<P>(std::move(p))) {}
  /// The held policy's name.
  [[nodiscard]] std::string_view name() const { return self_->name(); }
  /// The hooks the held policy declares (`hook::X::bit`); see `hook_active`.
  [[nodiscard]] std::uint32_t held_hooks() const noexcept { return self_->held_hooks(); }
  /// The held policy's `order`.
  void order(const schedule_context& c, std::span<const job_spec*> j) { self_->order(c, j); }
  /// Forwarded to the held policy when it is an `incremental_ordering_policy` (else no-op).
  void on_admitted(const schedule_context& c, const job_spec& j,
                   std::span<const task_allocation> g) {
    self_->on_admitted(c, j, g);
  }
  /// Forwarded to the held policy when it is an `incremental_ordering_policy` (else no-op).
  void on_released(const schedule_context& c, const job_spec& j,
                   std::span<const task_allocation> g) {
    self_->on_released(c, j, g);
  }

 private:
  template <class P>
  static std::unique_ptr<iface> make(P p) {
    if constexpr (detail::diagnose_policy<P>()) {
      return std::make_unique<model<P>>(std::move(p));
    } else {
      return nullptr;
    }
  }
  detail::poly<iface> self_;
};

/// @brief Any admission policy. Declares every admission hook (`admission_hooks`) and forwards
/// each to the held policy when it declares it; a hook the held policy lacks behaves as if
/// absent (`approve`: admit; the reclaim path: not taken, see `hook_active`).
class any_admission_policy {
  struct iface : detail::named_iface {
    [[nodiscard]] virtual std::unique_ptr<iface> clone() const = 0;
    [[nodiscard]] virtual std::uint32_t held_hooks() const noexcept = 0;
    virtual admission_verdict admit(const schedule_context&, const job_spec&) = 0;
    virtual queue_action on_unplaced(const schedule_context&, const job_spec&, const reason&,
                                     const admission_tools&) = 0;
    virtual void begin_cycle(const schedule_context&) = 0;
    virtual admission_verdict approve(const schedule_context&, const job_spec&,
                                      ledger::transaction&, const admission_tools&) = 0;
    virtual std::optional<reclaim_scope> reclaim_for(const schedule_context&, const job_spec&,
                                                     const reason&) = 0;
    virtual admission_verdict approve_reclaim(const schedule_context&, const job_spec&,
                                              ledger::transaction&, const admission_tools&) = 0;
    virtual void on_committed(const schedule_context&, const decision&) = 0;
    virtual void on_admitted(const schedule_context&, const job_spec&) = 0;
    virtual admission_verdict approve_growth(const schedule_context&, const running_job&,
                                             std::span<const task_allocation>) = 0;
    virtual void on_grown(const schedule_context&, const running_job&,
                          std::span<const task_allocation>) = 0;
  };
  template <class P>
  struct model final : detail::model_base<iface, P, model<P>> {
    using detail::model_base<iface, P, model<P>>::model_base;
    [[nodiscard]] std::uint32_t held_hooks() const noexcept override {
      return declared_hook_mask<P>;
    }
    admission_verdict admit(const schedule_context& c, const job_spec& j) override {
      return this->p.admit(c, j);
    }
    queue_action on_unplaced(const schedule_context& c, const job_spec& j, const reason& r,
                             const admission_tools& t) override {
      if constexpr (requires { this->p.on_unplaced(c, j, r, t); }) {
        return this->p.on_unplaced(c, j, r, t);
      } else {
        return this->p.on_unplaced(c, j, r);
      }
    }
    void begin_cycle([[maybe_unused]] const schedule_context& c) override {
      if constexpr (declares_hook<P, hook::begin_cycle> &&
                    detail::forwards(detail::forwarded::admission_begin_cycle)) {
        this->p.begin_cycle(c);
      }
    }
    admission_verdict approve([[maybe_unused]] const schedule_context& c,
                              [[maybe_unused]] const job_spec& j,
                              [[maybe_unused]] ledger::transaction& tx,
                              [[maybe_unused]] const admission_tools& t) override {
      if constexpr (declares_hook<P, hook::approve> &&
                    detail::forwards(detail::forwarded::approve)) {
        return hook::approve::call(this->p, c, j, tx, t);
      } else {
        return admission_verdict{};
      }
    }
    std::optional<reclaim_scope> reclaim_for([[maybe_unused]] const schedule_context& c,
                                             [[maybe_unused]] const job_spec& j,
                                             [[maybe_unused]] const reason& why) override {
      if constexpr (declares_hook<P, hook::reclaim> &&
                    detail::forwards(detail::forwarded::reclaim_for)) {
        return this->p.reclaim_for(c, j, why);
      } else {
        return std::nullopt;
      }
    }
    admission_verdict approve_reclaim(const schedule_context& c, const job_spec& j,
                                      ledger::transaction& tx, const admission_tools& t) override {
      if constexpr (declares_hook<P, hook::reclaim> &&
                    detail::forwards(detail::forwarded::approve_reclaim)) {
        return this->p.approve_reclaim(c, j, tx, t);
      } else {
        return approve(c, j, tx, t);
      }
    }
    void on_committed([[maybe_unused]] const schedule_context& c,
                      [[maybe_unused]] const decision& d) override {
      if constexpr (declares_hook<P, hook::on_committed> &&
                    detail::forwards(detail::forwarded::on_committed)) {
        this->p.on_committed(c, d);
      }
    }
    void on_admitted([[maybe_unused]] const schedule_context& c,
                     [[maybe_unused]] const job_spec& j) override {
      if constexpr (declares_hook<P, hook::on_admitted> &&
                    detail::forwards(detail::forwarded::admission_on_admitted)) {
        this->p.on_admitted(c, j);
      }
    }
    admission_verdict approve_growth(
        [[maybe_unused]] const schedule_context& c, [[maybe_unused]] const running_job& r,
        [[maybe_unused]] std::span<const task_allocation> added) override {
      if constexpr (declares_hook<P, hook::approve_growth> &&
                    detail::forwards(detail::forwarded::approve_growth)) {
        return this->p.approve_growth(c, r, added);
      } else {
        return admission_verdict{};
      }
    }
    void on_grown([[maybe_unused]] const schedule_context& c, [[maybe_unused]] const running_job& r,
                  [[maybe_unused]] std::span<const task_allocation> added) override {
      if constexpr (declares_hook<P, hook::on_grown> &&
                    detail::forwards(detail::forwarded::on_grown)) {
        this->p.on_grown(c, r, added);
      }
    }
  };

 public:
  /// The family: admission.
  using policy_category = admission_tag;
  /// Every admission hook, forwarded when the held policy declares it (else the pipeline's
  /// default).
  using hooks = admission_hooks;
  /// Holds `p`. @pre (checked at compile time, with a message per mistake) `P` models
  /// `admission_policy` and its hooks match its declaration.
  template <class P>
    requires(!std::same_as<P, any_admission_policy> && enable_admission_policy<P>)
  any_admission_policy(P p)  // NOLINT(google-explicit-constructor)
      : self_(make<P>(std::move(p))) {}
  /// The held policy's name.
  [[nodiscard]] std::string_view name() const { return self_->name(); }
  /// The hooks the held policy declares (`hook::X::bit`); see `hook_active`.
  [[nodiscard]] std::uint32_t held_hooks() const noexcept { return self_->held_hooks(); }
  /// The held policy's `admit`.
  admission_verdict admit(const schedule_context& c, const job_spec& j) {
    return self_->admit(c, j);
  }
  /// The held policy's `on_unplaced`.
  queue_action on_unplaced(const schedule_context& c, const job_spec& j, const reason& r,
                           const admission_tools& t) {
    return self_->on_unplaced(c, j, r, t);
  }
  /// The `begin_cycle` hook, forwarded (a no-op for a policy without one).
  void begin_cycle(const schedule_context& c) { self_->begin_cycle(c); }
  /// The `approve` hook, forwarded (admits for a policy without one).
  admission_verdict approve(const schedule_context& c, const job_spec& j, ledger::transaction& tx,
                            const admission_tools& t) {
    return self_->approve(c, j, tx, t);
  }
  /// The `reclaim` hook's `reclaim_for`, forwarded (no reclaim for a policy without one).
  std::optional<reclaim_scope> reclaim_for(const schedule_context& c, const job_spec& j,
                                           const reason& why) {
    return self_->reclaim_for(c, j, why);
  }
  /// The `reclaim` hook's `approve_reclaim`, forwarded (`approve` for a policy without one).
  admission_verdict approve_reclaim(const schedule_context& c, const job_spec& j,
                                    ledger::transaction& tx, const admission_tools& t) {
    return self_->approve_reclaim(c, j, tx, t);
  }
  /// The `on_committed` hook, forwarded (a no-op for a policy without one).
  void on_committed(const schedule_context& c, const decision& d) { self_->on_committed(c, d); }
  /// The `on_admitted` hook, forwarded (a no-op for a policy without one).
  void on_admitted(const schedule_context& c, const job_spec& j) { self_->on_admitted(c, j); }
  /// The `approve_growth` hook, forwarded (admits for a policy without one).
  admission_verdict approve_growth(const schedule_context& c, const running_job& r,
                                   std::span<const task_allocation> added) {
    return self_->approve_growth(c, r, added);
  }
  /// The `on_grown` hook, forwarded (a no-op for a policy without one).
  void on_grown(const schedule_context& c, const running_job& r,
                std::span<const task_allocation> added) {
    self_->on_grown(c, r, added);
  }

 private:
  template <class P>
  static std::unique_ptr<iface> make(P p) {
    if constexpr (detail::diagnose_policy<P>()) {
      return std::make_unique<model<P>>(std::move(p));
    } else {
      return nullptr;
    }
  }
  detail::poly<iface> self_;
};

/// @brief Any packing policy.
class any_packing_policy {
  struct iface : detail::named_iface {
    [[nodiscard]] virtual std::unique_ptr<iface> clone() const = 0;
    [[nodiscard]] virtual std::optional<task_allocation> fit(const schedule_context&, node_index,
                                                             const task_request&) const = 0;
    [[nodiscard]] virtual std::optional<task_allocation> pack(const schedule_context&,
                                                              const task_request&) const = 0;
  };
  template <class P>
  struct model final : detail::model_base<iface, P, model<P>> {
    using detail::model_base<iface, P, model<P>>::model_base;
    [[nodiscard]] std::optional<task_allocation> fit(const schedule_context& c, node_index n,
                                                     const task_request& r) const override {
      return this->p.fit(c, n, r);
    }
    [[nodiscard]] std::optional<task_allocation> pack(const schedule_context& c,
                                                      const task_request& r) const override {
      return this->p.pack(c, r);
    }
  };

 public:
  /// The family: packing.
  using policy_category = packing_tag;
  /// Holds `p`. @pre (checked at compile time, with a message per mistake) `P` models
  /// `packing_policy`.
  template <class P>
    requires(!std::same_as<P, any_packing_policy> && enable_packing_policy<P>)
  any_packing_policy(P p)  // NOLINT(google-explicit-constructor)
      : self_(make<P>(std::move(p))) {}
  /// The held policy's name.
  [[nodiscard]] std::string_view name() const { return self_->name(); }
  /// The held policy's `fit` on node `n`.
  [[nodiscard]] std::optional<task_allocation> fit(const schedule_context& c, node_index n,
                                                   const task_request& r) const {
    return self_->fit(c, n, r);
  }
  /// The held policy's `pack` over the cluster.
  [[nodiscard]] std::optional<task_allocation> pack(const schedule_context& c,
                                                    const task_request& r) const {
    return self_->pack(c, r);
  }

 private:
  template <class P>
  static std::unique_ptr<iface> make(P p) {
    if constexpr (detail::diagnose_policy<P>()) {
      return std::make_unique<model<P>>(std::move(p));
    } else {
      return nullptr;
    }
  }
  detail::poly<iface> self_;
};

/// @brief Any placement policy.
class any_placement_policy {
  struct iface : detail::named_iface {
    [[nodiscard]] virtual std::unique_ptr<iface> clone() const = 0;
    virtual placement_outcome place(const schedule_context&, const job_spec&, packing_ref,
                                    ledger::transaction&) = 0;
  };
  template <class P>
  struct model final : detail::model_base<iface, P, model<P>> {
    using detail::model_base<iface, P, model<P>>::model_base;
    placement_outcome place(const schedule_context& c, const job_spec& j, packing_ref pk,
                            ledger::transaction& tx) override {
      return this->p.place(c, j, pk, tx);
    }
  };

 public:
  /// The family: placement.
  using policy_category = placement_tag;
  /// Holds `p`. @pre (checked at compile time, with a message per mistake) `P` models
  /// `placement_policy`.
  template <class P>
    requires(!std::same_as<P, any_placement_policy> && enable_placement_policy<P>)
  any_placement_policy(P p)  // NOLINT(google-explicit-constructor)
      : self_(make<P>(std::move(p))) {}
  /// The held policy's name.
  [[nodiscard]] std::string_view name() const { return self_->name(); }
  /// The held policy's `place`.
  placement_outcome place(const schedule_context& c, const job_spec& j, packing_ref pk,
                          ledger::transaction& tx) {
    return self_->place(c, j, pk, tx);
  }

 private:
  template <class P>
  static std::unique_ptr<iface> make(P p) {
    if constexpr (detail::diagnose_policy<P>()) {
      return std::make_unique<model<P>>(std::move(p));
    } else {
      return nullptr;
    }
  }
  detail::poly<iface> self_;
};

/// @brief Any preemption policy. Declares every preemption hook (`preemption_hooks`) and
/// forwards each to the held policy when it declares it (else a no-op; `select_reclaim`: the
/// reclaim path is not taken, see `hook_active`).
class any_preemption_policy {
  struct iface : detail::named_iface {
    [[nodiscard]] virtual std::unique_ptr<iface> clone() const = 0;
    [[nodiscard]] virtual std::uint32_t held_hooks() const noexcept = 0;
    virtual void begin_cycle(const schedule_context&) = 0;
    virtual preemption_plan select(const schedule_context&, const job_spec&, fit_probe) = 0;
    virtual void on_preempted(const schedule_context&, const job_spec&, const preemption_plan&) = 0;
    virtual preemption_plan select_reclaim(const schedule_context&, const job_spec&,
                                           const reclaim_scope&, fit_probe) = 0;
  };
  template <class P>
  struct model final : detail::model_base<iface, P, model<P>> {
    using detail::model_base<iface, P, model<P>>::model_base;
    [[nodiscard]] std::uint32_t held_hooks() const noexcept override {
      return declared_hook_mask<P>;
    }
    void begin_cycle([[maybe_unused]] const schedule_context& c) override {
      if constexpr (declares_hook<P, hook::begin_cycle> &&
                    detail::forwards(detail::forwarded::preemption_begin_cycle)) {
        this->p.begin_cycle(c);
      }
    }
    preemption_plan select(const schedule_context& c, const job_spec& j, fit_probe f) override {
      return this->p.select(c, j, f);
    }
    void on_preempted([[maybe_unused]] const schedule_context& c,
                      [[maybe_unused]] const job_spec& j,
                      [[maybe_unused]] const preemption_plan& pl) override {
      if constexpr (declares_hook<P, hook::on_preempted> &&
                    detail::forwards(detail::forwarded::on_preempted)) {
        this->p.on_preempted(c, j, pl);
      }
    }
    preemption_plan select_reclaim([[maybe_unused]] const schedule_context& c,
                                   [[maybe_unused]] const job_spec& j,
                                   [[maybe_unused]] const reclaim_scope& s,
                                   [[maybe_unused]] fit_probe f) override {
      if constexpr (declares_hook<P, hook::select_reclaim> &&
                    detail::forwards(detail::forwarded::select_reclaim)) {
        return this->p.select_reclaim(c, j, s, f);
      } else {
        return preemption_plan{};
      }
    }
  };

 public:
  /// The family: preemption.
  using policy_category = preemption_tag;
  /// Every preemption hook, forwarded when the held policy declares it.
  using hooks = preemption_hooks;
  /// Holds `p`. @pre (checked at compile time, with a message per mistake) `P` models
  /// `preemption_policy` and its hooks match its declaration.
  template <class P>
    requires(!std::same_as<P, any_preemption_policy> && enable_preemption_policy<P>)
  any_preemption_policy(P p)  // NOLINT(google-explicit-constructor)
      : self_(make<P>(std::move(p))) {}
  /// The held policy's name.
  [[nodiscard]] std::string_view name() const { return self_->name(); }
  /// The hooks the held policy declares (`hook::X::bit`); see `hook_active`.
  [[nodiscard]] std::uint32_t held_hooks() const noexcept { return self_->held_hooks(); }
  /// Forwards the optional `begin_cycle(ctx)` hook (a no-op for a policy without one).
  void begin_cycle(const schedule_context& c) { self_->begin_cycle(c); }
  /// The held policy's `select`.
  preemption_plan select(const schedule_context& c, const job_spec& j, fit_probe f) {
    return self_->select(c, j, f);
  }
  /// The `on_preempted` hook, forwarded (a no-op for a policy without one).
  void on_preempted(const schedule_context& c, const job_spec& j, const preemption_plan& pl) {
    self_->on_preempted(c, j, pl);
  }
  /// The `select_reclaim` hook, forwarded (for a policy without one the pipeline does not take the
  /// reclaim path: see `hook_active`).
  preemption_plan select_reclaim(const schedule_context& c, const job_spec& j,
                                 const reclaim_scope& s, fit_probe f) {
    return self_->select_reclaim(c, j, s, f);
  }

 private:
  template <class P>
  static std::unique_ptr<iface> make(P p) {
    if constexpr (detail::diagnose_policy<P>()) {
      return std::make_unique<model<P>>(std::move(p));
    } else {
      return nullptr;
    }
  }
  detail::poly<iface> self_;
};

static_assert(ordering_policy<any_ordering_policy>);
static_assert(incremental_ordering_policy<any_ordering_policy>);
static_assert(admission_policy<any_admission_policy>);
static_assert(packing_policy<any_packing_policy>);
static_assert(placement_policy<any_placement_policy>);
static_assert(preemption_policy<any_preemption_policy>);
// each wrapper declares, and implements, every hook of its family
static_assert(check_hooks<any_ordering_policy>() && check_hooks<any_admission_policy>() &&
              check_hooks<any_preemption_policy>());
static_assert(reclaiming_admission_policy<any_admission_policy>);
static_assert(reclaiming_preemption_policy<any_preemption_policy>);

/// A pipeline whose every slot is chosen at run time.
using any_pipeline = pipeline<any_ordering_policy, any_admission_policy, any_packing_policy,
                              any_placement_policy, any_preemption_policy>;

GPUSCHED_END_NAMESPACE
