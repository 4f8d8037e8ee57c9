// SPDX-License-Identifier: Apache-2.0
/// @file
/// Type-erased policies (`any_ordering_policy`, `any_admission_policy`, `any_packing_policy`,
/// `any_placement_policy`, `any_preemption_policy`) and a registry that makes them by name, for
/// choosing a composition at run time (command lines, config files). Each `any_*` models its
/// family's concept, so `pipeline<any_ordering_policy, ...>` is an ordinary pipeline.
/// Cost: one virtual call per policy call; copying clones the held policy.
#pragma once

#include <memory>  // std::unique_ptr, std::make_unique
#include <span>
#include <string>
#include <string_view>
#include <utility>  // std::move
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/pipeline/pipeline.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/ordering/drf.hpp"
#include "gpusched/policy/ordering/las.hpp"
#include "gpusched/policy/ordering/multifactor.hpp"
#include "gpusched/policy/ordering/themis.hpp"
#include "gpusched/policy/packing/best_fit.hpp"
#include "gpusched/policy/packing/fgd.hpp"
#include "gpusched/policy/packing/mig_aware.hpp"
#include "gpusched/policy/packing/topology_aware.hpp"
#include "gpusched/policy/placement/gang.hpp"
#include "gpusched/policy/placement/topology_aware.hpp"
#include "gpusched/policy/preemption/checkpoint_aware.hpp"
#include "gpusched/policy/preemption/kube_default.hpp"

GPUSCHED_BEGIN_NAMESPACE
namespace detail {

/// A copyable owner of a polymorphic `Iface` (which has `clone()`); moved-from holds nothing.
template <class Iface>
class poly {
 public:
  explicit poly(std::unique_ptr<Iface> p) noexcept : p_(std::move(p)) {}
  poly(const poly& o) : p_(o.p_ ? o.p_->clone() : nullptr) {}
  poly(poly&&) noexcept = default;
  poly& operator=(const poly& o) {
    if (this != &o) p_ = o.p_ ? o.p_->clone() : nullptr;
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

/// The shared part of every family's model: holds `P`, clones, names.
template <class Iface, class P, class Derived>
struct model_base : Iface {
  explicit model_base(P x) : p(std::move(x)) {}
  std::unique_ptr<Iface> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
  [[nodiscard]] std::string_view name() const override { return p.name(); }
  P p;
};

struct named_iface {
  virtual ~named_iface() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
};
}  // namespace detail

/// @brief Any ordering policy.
class any_ordering_policy {
  struct iface : detail::named_iface {
    [[nodiscard]] virtual std::unique_ptr<iface> clone() const = 0;
    virtual void order(const schedule_context&, std::span<const job_spec*>) = 0;
    virtual void on_admitted(const schedule_context&, const job_spec&,
                             std::span<const task_allocation>) = 0;
    virtual void on_released(const schedule_context&, const job_spec&,
                             std::span<const task_allocation>) = 0;
  };
  template <class P>
  struct model final : detail::model_base<iface, P, model<P>> {
    using detail::model_base<iface, P, model<P>>::model_base;
    void order(const schedule_context& c, std::span<const job_spec*> j) override {
      this->p.order(c, j);
    }
    void on_admitted([[maybe_unused]] const schedule_context& c, [[maybe_unused]] const job_spec& j,
                     [[maybe_unused]] std::span<const task_allocation> g) override {
      if constexpr (incremental_ordering_policy<P>) this->p.on_admitted(c, j, g);
    }
    void on_released([[maybe_unused]] const schedule_context& c, [[maybe_unused]] const job_spec& j,
                     [[maybe_unused]] std::span<const task_allocation> g) override {
      if constexpr (incremental_ordering_policy<P>) this->p.on_released(c, j, g);
    }
  };

 public:
  using policy_category = ordering_tag;
  template <class P>
    requires(!std::same_as<P, any_ordering_policy> && ordering_policy<P>)
  any_ordering_policy(P p)  // NOLINT(google-explicit-constructor): erasure is the point
      : self_(std::make_unique<model<P>>(std::move(p))) {}
  [[nodiscard]] std::string_view name() const { return self_->name(); }
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
  detail::poly<iface> self_;
};

/// @brief Any admission policy. The optional hooks of the held policy are forwarded.
class any_admission_policy {
  struct iface : detail::named_iface {
    [[nodiscard]] virtual std::unique_ptr<iface> clone() const = 0;
    virtual admission_verdict admit(const schedule_context&, const job_spec&) = 0;
    virtual queue_action on_unplaced(const schedule_context&, const job_spec&, const reason&,
                                     const admission_tools&) = 0;
    virtual void begin_cycle(const schedule_context&) = 0;
    virtual admission_verdict approve(const schedule_context&, const job_spec&,
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
    void begin_cycle(const schedule_context& c) override {
      if constexpr (requires { this->p.begin_cycle(c); }) this->p.begin_cycle(c);
    }
    admission_verdict approve(const schedule_context& c, const job_spec& j, ledger::transaction& tx,
                              const admission_tools& t) override {
      if constexpr (requires { this->p.approve(c, j, tx, t); }) {
        return this->p.approve(c, j, tx, t);
      } else if constexpr (requires { this->p.approve(c, j, tx); }) {
        return this->p.approve(c, j, tx);
      } else {
        return {verdict::admit, {}};
      }
    }
    void on_committed(const schedule_context& c, const decision& d) override {
      if constexpr (requires { this->p.on_committed(c, d); }) this->p.on_committed(c, d);
    }
    void on_admitted(const schedule_context& c, const job_spec& j) override {
      if constexpr (requires { this->p.on_admitted(c, j); }) this->p.on_admitted(c, j);
    }
    admission_verdict approve_growth(const schedule_context& c, const running_job& r,
                                     std::span<const task_allocation> added) override {
      if constexpr (requires { this->p.approve_growth(c, r, added); }) {
        return this->p.approve_growth(c, r, added);
      } else {
        return {verdict::admit, {}};
      }
    }
    void on_grown(const schedule_context& c, const running_job& r,
                  std::span<const task_allocation> added) override {
      if constexpr (requires { this->p.on_grown(c, r, added); }) this->p.on_grown(c, r, added);
    }
  };

 public:
  using policy_category = admission_tag;
  template <class P>
    requires(!std::same_as<P, any_admission_policy> && admission_policy<P>)
  any_admission_policy(P p)  // NOLINT(google-explicit-constructor)
      : self_(std::make_unique<model<P>>(std::move(p))) {}
  [[nodiscard]] std::string_view name() const { return self_->name(); }
  admission_verdict admit(const schedule_context& c, const job_spec& j) {
    return self_->admit(c, j);
  }
  queue_action on_unplaced(const schedule_context& c, const job_spec& j, const reason& r,
                           const admission_tools& t) {
    return self_->on_unplaced(c, j, r, t);
  }
  void begin_cycle(const schedule_context& c) { self_->begin_cycle(c); }
  admission_verdict approve(const schedule_context& c, const job_spec& j, ledger::transaction& tx,
                            const admission_tools& t) {
    return self_->approve(c, j, tx, t);
  }
  void on_committed(const schedule_context& c, const decision& d) { self_->on_committed(c, d); }
  void on_admitted(const schedule_context& c, const job_spec& j) { self_->on_admitted(c, j); }
  admission_verdict approve_growth(const schedule_context& c, const running_job& r,
                                   std::span<const task_allocation> added) {
    return self_->approve_growth(c, r, added);
  }
  void on_grown(const schedule_context& c, const running_job& r,
                std::span<const task_allocation> added) {
    self_->on_grown(c, r, added);
  }

 private:
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
  using policy_category = packing_tag;
  template <class P>
    requires(!std::same_as<P, any_packing_policy> && packing_policy<P>)
  any_packing_policy(P p)  // NOLINT(google-explicit-constructor)
      : self_(std::make_unique<model<P>>(std::move(p))) {}
  [[nodiscard]] std::string_view name() const { return self_->name(); }
  [[nodiscard]] std::optional<task_allocation> fit(const schedule_context& c, node_index n,
                                                   const task_request& r) const {
    return self_->fit(c, n, r);
  }
  [[nodiscard]] std::optional<task_allocation> pack(const schedule_context& c,
                                                    const task_request& r) const {
    return self_->pack(c, r);
  }

 private:
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
  using policy_category = placement_tag;
  template <class P>
    requires(!std::same_as<P, any_placement_policy> && placement_policy<P>)
  any_placement_policy(P p)  // NOLINT(google-explicit-constructor)
      : self_(std::make_unique<model<P>>(std::move(p))) {}
  [[nodiscard]] std::string_view name() const { return self_->name(); }
  placement_outcome place(const schedule_context& c, const job_spec& j, packing_ref pk,
                          ledger::transaction& tx) {
    return self_->place(c, j, pk, tx);
  }

 private:
  detail::poly<iface> self_;
};

/// @brief Any preemption policy.
class any_preemption_policy {
  struct iface : detail::named_iface {
    [[nodiscard]] virtual std::unique_ptr<iface> clone() const = 0;
    virtual void begin_cycle(const schedule_context&) = 0;
    virtual preemption_plan select(const schedule_context&, const job_spec&, fit_probe) = 0;
    virtual void on_preempted(const schedule_context&, const job_spec&, const preemption_plan&) = 0;
  };
  template <class P>
  struct model final : detail::model_base<iface, P, model<P>> {
    using detail::model_base<iface, P, model<P>>::model_base;
    void begin_cycle(const schedule_context& c) override {
      if constexpr (requires { this->p.begin_cycle(c); }) this->p.begin_cycle(c);
    }
    preemption_plan select(const schedule_context& c, const job_spec& j, fit_probe f) override {
      return this->p.select(c, j, f);
    }
    void on_preempted(const schedule_context& c, const job_spec& j,
                      const preemption_plan& pl) override {
      if constexpr (requires { this->p.on_preempted(c, j, pl); }) this->p.on_preempted(c, j, pl);
    }
  };

 public:
  using policy_category = preemption_tag;
  template <class P>
    requires(!std::same_as<P, any_preemption_policy> && preemption_policy<P>)
  any_preemption_policy(P p)  // NOLINT(google-explicit-constructor)
      : self_(std::make_unique<model<P>>(std::move(p))) {}
  [[nodiscard]] std::string_view name() const { return self_->name(); }
  /// Forwards the optional `begin_cycle(ctx)` hook (a no-op for a policy without one).
  void begin_cycle(const schedule_context& c) { self_->begin_cycle(c); }
  preemption_plan select(const schedule_context& c, const job_spec& j, fit_probe f) {
    return self_->select(c, j, f);
  }
  void on_preempted(const schedule_context& c, const job_spec& j, const preemption_plan& pl) {
    self_->on_preempted(c, j, pl);
  }

 private:
  detail::poly<iface> self_;
};

static_assert(ordering_policy<any_ordering_policy>);
static_assert(incremental_ordering_policy<any_ordering_policy>);
static_assert(admission_policy<any_admission_policy>);
static_assert(packing_policy<any_packing_policy>);
static_assert(placement_policy<any_placement_policy>);
static_assert(preemption_policy<any_preemption_policy>);

/// A pipeline whose every slot is chosen at run time.
using any_pipeline = pipeline<any_ordering_policy, any_admission_policy, any_packing_policy,
                              any_placement_policy, any_preemption_policy>;

/// @brief Names of the policies the registry knows, per family.
struct policy_names {
  std::vector<std::string_view> ordering{
      "fifo", "priority", "drf",         "drf-snapshot",    "las", "las-time", "srtf",
      "srsf", "themis",   "multifactor", "multifactor-nofs"};
  std::vector<std::string_view> admission{"gang", "gang-strict", "gang-easy", "gang-conservative"};
  std::vector<std::string_view> packing{"first-fit",   "topology",    "mig-aware", "best-fit",
                                        "worst-fit",   "random",      "dotprod",   "gpu-clustering",
                                        "gpu-packing", "fgd-best-fit"};
  std::vector<std::string_view> placement{"first-fit", "gang", "topology"};
  std::vector<std::string_view> preemption{"priority", "none", "checkpoint-aware", "kube-default",
                                           "lowest-priority-newest"};
};

namespace detail {
[[noreturn]] inline void unknown_policy(std::string_view family, std::string_view name,
                                        const std::vector<std::string_view>& known) {
  std::string list;
  for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
  throw invalid_value_error(error_id::unknown_name, "policy registry", std::string(family),
                            std::string(name), "unknown policy (known: " + list + ")");
}
}  // namespace detail

/// Makes a policy by name. @throws invalid_value_error (unknown_name) listing the known names.
inline any_ordering_policy make_ordering_policy(std::string_view name) {
  if (name == "fifo") return fifo_ordering{};
  if (name == "priority") return priority_ordering{};
  // Fair share (policy/ordering/): defaults that need no external state. Orderings that need
  // tenants, history, quotas or a prior (hdrf, drf-decayed, gittins, kueue-drs) are built in
  // code and wrapped in any_ordering_policy.
  if (name == "drf") return drf_ordering{};
  if (name == "drf-snapshot") return drf_ordering{drf_options{.progressive = false, .history = {}}};
  if (name == "las") return las_ordering{};
  if (name == "las-time") {
    return las_ordering{std::make_shared<service_record>(), {3600.0}, service_measure::time};
  }
  if (name == "srtf") return srtf_ordering{};
  if (name == "srsf") return srtf_ordering{std::make_shared<service_record>(), true};
  if (name == "themis") return finish_time_fairness_ordering{};
  // Slurm multifactor: classic fair share 2^(-U/S) on its own decayed usage (half-life 7 days,
  // equal shares per tenant) weighted 10000, as the QOS factor, over age 1000 (max age 7 days)
  // and job size 100: fair share decides between tenants, age and size within one.
  if (name == "multifactor") {
    return make_multifactor(weighted(decayed_fair_share_factor{}, 10000.0),
                            weighted(age_factor{}, 1000.0), weighted(job_size_factor{}, 100.0),
                            weighted(qos_factor{10}, 10000.0));
  }
  if (name == "multifactor-nofs") {  // the same without fair share: age, size, QOS
    return make_multifactor(weighted(age_factor{}, 1000.0), weighted(job_size_factor{}, 100.0),
                            weighted(qos_factor{10}, 10000.0));
  }
  detail::unknown_policy("ordering", name, policy_names{}.ordering);
}
inline any_admission_policy make_admission_policy(std::string_view name) {
  if (name == "gang") return gang_admission{};
  if (name == "gang-strict") return gang_admission{queueing::strict_fifo};
  if (name == "gang-easy") return gang_admission{queueing::easy_backfill};
  if (name == "gang-conservative") return gang_admission{queueing::conservative_backfill};
  detail::unknown_policy("admission", name, policy_names{}.admission);
}
inline any_packing_policy make_packing_policy(std::string_view name) {
  if (name == "first-fit") return first_fit_packing{};
  if (name == "topology") return topology_packing(std::make_shared<const topology_model>());
  if (name == "mig-aware") return mig_aware_packing{};
  if (name == "best-fit") return best_fit_packing{};
  if (name == "worst-fit") return worst_fit_packing{};
  if (name == "random") return random_packing{};
  if (name == "dotprod") return dotprod_packing{};
  if (name == "gpu-clustering") return gpu_clustering_packing{};
  if (name == "gpu-packing") return gpu_packing_packing{};
  if (name == "fgd-best-fit") return fgd_best_fit_packing{};
  detail::unknown_policy("packing", name, policy_names{}.packing);
}
inline any_placement_policy make_placement_policy(std::string_view name) {
  if (name == "first-fit") return first_fit_placement{};
  if (name == "gang") return gang_placement{};
  // without a topology model: fewest nodes, best fit; build topology_aware_placement(model)
  // for fabric and NVLink awareness
  if (name == "topology") {
    return topology_aware_placement(std::make_shared<const topology_model>());
  }
  detail::unknown_policy("placement", name, policy_names{}.placement);
}
inline any_preemption_policy make_preemption_policy(std::string_view name) {
  if (name == "priority") return priority_preemption{};
  if (name == "none") return no_preemption{};
  if (name == "checkpoint-aware") return checkpoint_aware_preemption{};
  if (name == "kube-default") return kube_default_preemption{};
  // "lowest priority, most recent start": exactly `priority_preemption`'s rule
  if (name == "lowest-priority-newest") return priority_preemption{};
  detail::unknown_policy("preemption", name, policy_names{}.preemption);
}

/// @brief Names for each slot of a run-time pipeline; defaults are the library defaults.
struct pipeline_config {
  std::string ordering = "fifo";
  std::string admission = "gang";
  std::string packing = "first-fit";
  std::string placement = "first-fit";
  std::string preemption = "priority";
};

/// Builds a pipeline from names. @throws invalid_value_error for an unknown name.
inline any_pipeline make_pipeline(const pipeline_config& c) {
  return any_pipeline(make_ordering_policy(c.ordering), make_admission_policy(c.admission),
                      make_packing_policy(c.packing), make_placement_policy(c.placement),
                      make_preemption_policy(c.preemption));
}

GPUSCHED_END_NAMESPACE
