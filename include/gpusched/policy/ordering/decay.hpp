// SPDX-License-Identifier: Apache-2.0
/// @file
/// `decayed_usage`: per-tenant resource usage with exponential decay of configurable half-life
/// (Slurm `PriorityDecayHalfLife` semantics): usage recorded `dt` ago counts `2^(-dt / h)`.
/// Fair share computed on it remembers history, not only the current allocation.
///
/// Units: a usage vector is resource x seconds over the dimensions of a `resource_basis`
/// (milli-GPU-seconds, millicore-seconds, MiB-seconds). `equivalent_allocation` divides by the
/// mean lifetime `tau = h / ln 2`, so a tenant that held allocation `A` for ever has usage
/// `A x tau` and an equivalent allocation of exactly `A`: decayed DRF agrees with plain DRF on a
/// steady state.
#pragma once

#include <algorithm>  // std::max
#include <cmath>      // std::exp2, std::log
#include <limits>
#include <string>
#include <unordered_map>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/ids.hpp"
#include "gpusched/core/time.hpp"
#include "gpusched/policy/ordering/share.hpp"
#include "gpusched/workload/ledger.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Decayed usage per tenant. Values are decayed lazily on access, so `add` and `usage`
/// are O(dimensions) (plus O(1) expected hashing); `accrue` is O(running tasks).
/// Laws: `usage(t, now + h) == usage(t, now) / 2` when nothing is added; adding is linear.
class decayed_usage {
 public:
  /// @throws invalid_value_error (field `half_life`) unless `half_life > 0`, or (field
  /// `dimensions`) when `dimensions == 0`.
  decayed_usage(sim_duration half_life, std::size_t dimensions)
      : half_life_s_(to_seconds(half_life)), dims_(dimensions) {
    if (half_life <= sim_duration{0}) {
      throw invalid_value_error(error_id::invalid_value, "decayed usage", "half_life",
                                std::to_string(half_life.count()) + "ms", "must be positive");
    }
    if (dimensions == 0) {
      throw invalid_value_error(error_id::invalid_value, "decayed usage", "dimensions", "0",
                                "need at least one resource dimension");
    }
  }

  /// Number of resource dimensions tracked.
  [[nodiscard]] std::size_t dimensions() const noexcept { return dims_; }
  /// The half-life, in seconds.
  [[nodiscard]] double half_life_seconds() const noexcept { return half_life_s_; }
  /// Mean lifetime `tau = h / ln 2` in seconds: the integral of the decay kernel.
  [[nodiscard]] double mean_lifetime_seconds() const noexcept {
    return half_life_s_ / std::log(2.0);
  }
  /// `2^(-dt / h)`; 1 for `dt <= 0`.
  [[nodiscard]] double decay_factor(sim_duration dt) const noexcept {
    return dt <= sim_duration{0} ? 1.0 : std::exp2(-to_seconds(dt) / half_life_s_);
  }

  /// Records `amount` (resource x seconds) used by `tenant` at time `at`.
  /// @throws invalid_value_error naming the tenant and field `usage` when a component is
  /// negative or not finite, or field `dimensions` on a size mismatch; nothing changes then.
  /// @pre `at` is not before the tenant's last update.
  void add(tenant_id tenant, const share_vector& amount, sim_time at) {
    check(tenant, amount);
    entry& e = at_time(tenant, at);
    e.value += amount;
    add_total(amount, at);
  }

  /// Charges every running job of `book` for the time since the last `accrue` (or since its
  /// start, if later), integrating the decay exactly: a constant allocation `A` over `[t0, t1]`
  /// adds `A x tau x (1 - 2^(-(t1 - t0) / h))` as of `t1`. O(running tasks x grants).
  void accrue(const ledger& book, const resource_basis& basis, sim_time now) {
    GPUSCHED_EXPECTS(basis.size() == dims_);
    if (scratch_.size() != static_cast<Eigen::Index>(dims_))
      scratch_ = share_vector::Zero(static_cast<Eigen::Index>(dims_));
    for (const auto& r : book.running()) {
      const sim_time from = std::max(r.start, last_accrual_);
      if (now <= from) continue;
      scratch_.setZero();
      basis.add_running(scratch_, book.state(), r);
      scratch_ *= mean_lifetime_seconds() * (1.0 - decay_factor(now - from));
      entry& e = at_time(r.spec.tenant, now);
      e.value += scratch_;
      add_total(scratch_, now);  // scratch_ in place: no temporary vector per running job
    }
    last_accrual_ = std::max(last_accrual_, now);
  }

  /// The tenant's usage decayed to `now` (zero for a tenant never seen).
  [[nodiscard]] share_vector usage(tenant_id tenant, sim_time now) const {
    const auto it = entries_.find(tenant);
    if (it == entries_.end()) return share_vector::Zero(static_cast<Eigen::Index>(dims_));
    return it->second.value * decay_factor(now - it->second.when);
  }
  /// `usage / tau`: the allocation that, held for ever, would leave this usage.
  [[nodiscard]] share_vector equivalent_allocation(tenant_id tenant, sim_time now) const {
    return usage(tenant, now) / mean_lifetime_seconds();
  }
  /// The sum over all tenants, decayed to `now`. O(dimensions).
  [[nodiscard]] share_vector total(sim_time now) const {
    if (total_.size() == 0) return share_vector::Zero(static_cast<Eigen::Index>(dims_));
    return total_ * decay_factor(now - total_when_);
  }
  /// Slurm's normalised usage of a tenant, over several dimensions: `max_r usage_r / total_r`
  /// (dimensions nobody used are skipped; 0 when nothing was used). O(dimensions), no
  /// allocation (it is called once per pending job by fair-share factors).
  [[nodiscard]] double normalized_usage(tenant_id tenant, sim_time now) const {
    const auto it = entries_.find(tenant);
    if (it == entries_.end() || total_.size() == 0) return 0.0;
    const double du = decay_factor(now - it->second.when), dt = decay_factor(now - total_when_);
    const share_vector& v = it->second.value;
    double m = 0;
    for (Eigen::Index r = 0; r < v.size(); ++r) {
      const double u = v[r] * du, t = total_[r] * dt;
      if (t > 0) m = std::max(m, u / t);
    }
    return std::min(m, 1.0);
  }
  /// Forgets all usage (Slurm `PriorityUsageResetPeriod`).
  void reset() noexcept {
    entries_.clear();
    total_ = share_vector();
  }

 private:
  struct entry {
    share_vector value;
    sim_time when{};
  };
  void check(tenant_id tenant, const share_vector& amount) const {
    const std::string where = "tenant " + std::to_string(tenant.value());
    if (amount.size() != static_cast<Eigen::Index>(dims_)) {
      throw invalid_value_error(error_id::inconsistent, where, "dimensions",
                                std::to_string(amount.size()), "expected " + std::to_string(dims_));
    }
    for (Eigen::Index i = 0; i < amount.size(); ++i) {
      if (!std::isfinite(amount[i]) || amount[i] < 0) {
        throw invalid_value_error(
            error_id::invalid_value, where, "usage",
            std::to_string(amount[i]) + " (dimension " + std::to_string(i) + ")",
            "usage must be finite and not negative");
      }
    }
  }
  entry& at_time(tenant_id tenant, sim_time at) {
    auto [it, fresh] = entries_.try_emplace(tenant);
    entry& e = it->second;
    if (fresh) {
      e.value = share_vector::Zero(static_cast<Eigen::Index>(dims_));
      e.when = at;
    } else {
      GPUSCHED_EXPECTS(at >= e.when);
      e.value *= decay_factor(at - e.when);
      e.when = at;
    }
    return e;
  }

  // The total is decayed globally (decay is linear), so an amount added at an earlier time than
  // the total's is decayed to the total's time first.
  void add_total(const share_vector& amount, sim_time at) {
    if (total_.size() == 0) {
      total_ = share_vector::Zero(static_cast<Eigen::Index>(dims_));
      total_when_ = at;
    }
    if (at > total_when_) {
      total_ *= decay_factor(at - total_when_);
      total_when_ = at;
    }
    total_ += amount * decay_factor(total_when_ - at);
  }

  double half_life_s_;
  std::size_t dims_;
  std::unordered_map<tenant_id, entry> entries_;
  sim_time last_accrual_{sim_duration{std::numeric_limits<sim_duration::rep>::min()}};
  share_vector scratch_;
  share_vector total_;
  sim_time total_when_{};
};

GPUSCHED_END_NAMESPACE
