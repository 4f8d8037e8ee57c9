// SPDX-License-Identifier: Apache-2.0
/// @file
/// Resource vectors for fair share: `resource_basis` names the dimensions DRF measures (one per
/// GPU model present, in milli-GPU, or one pooled GPU dimension; CPU in millicores; memory in
/// MiB), holds their capacities, and turns allocations and job demands into share vectors
/// (Eigen arrays). `dominant_share` is `max_r usage_r / capacity_r` (Ghodsi et al. NSDI'11).
///
/// Accounting rules (documented because they decide who goes next):
/// - a whole GPU is 1000 milli of its model; a share is its milli;
/// - a MIG instance counts `1000 x memory slices / slices of the model` milli of its model;
/// - one replica of a time-sliced or MPS GPU advertised as N replicas counts `1000 / N` milli of
///   its model (N replicas of one GPU count one GPU); a pending replica demand is charged
///   `1000 / N_max`, with N_max the most replicas any GPU of the charged model advertises (the
///   least it can be charged once placed; 0 when that model has no shared GPU);
/// - a pending job's GPU demand is charged to its only allowed model, or, when it allows several
///   models (or any), to the allowed model present with the largest capacity (lowest model id
///   on equal capacity); MIG demands are charged `1000 x memory slices / slices` of that model.
#pragma once

#include <Eigen/Core>

#include <algorithm>  // std::max
#include <bit>        // std::popcount
#include <cmath>      // std::isfinite
#include <cstdint>
#include <string>
#include <utility>  // std::move
#include <vector>

#include "gpusched/cluster/allocation.hpp"
#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/workload/job.hpp"
#include "gpusched/workload/ledger.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// A share (or usage) vector over the dimensions of a `resource_basis`.
using share_vector = Eigen::ArrayXd;

/// @brief The dimensions fair share is measured in, with their capacities.
/// Laws: every capacity is finite and > 0 (dimensions a cluster has none of are left out).
class resource_basis {
 public:
  /// Whether each GPU model is its own dimension (DRF over GPU types) or all GPUs are pooled.
  enum class gpu_dimensions : std::uint8_t { per_model, pooled };

  resource_basis() = default;

  /// The basis of a cluster's total capacity: GPU dimension(s), CPU, memory; a dimension whose
  /// capacity is 0 in this cluster is left out. O(nodes + GPUs).
  explicit resource_basis(const cluster& c, gpu_dimensions g = gpu_dimensions::per_model)
      : pooled_(g == gpu_dimensions::pooled) {
    model_dim_.assign(c.catalog().size(), -1);
    for (const auto& m : c.catalog().models()) mig_slices_.push_back(m.mig.memory_slices);
    std::vector<double> per_model(c.catalog().size(), 0.0);
    std::vector<int> most_replicas(c.catalog().size(), 0);
    double cpu = 0, mem = 0;
    for (node_index n : c.nodes()) {
      cpu += static_cast<double>(c.cpu_capacity(n).value());
      mem += static_cast<double>(c.memory_capacity(n).value());
      if (c.model(n).valid()) {
        per_model[c.model(n).value()] += 1000.0 * static_cast<double>(c.gpus(n).size());
        for (const auto& gs : c.gpus(n)) {
          int& r = most_replicas[c.model(n).value()];
          r = std::max(r, static_cast<int>(gs.replicas));
        }
      }
    }
    replica_demand_milli_.assign(most_replicas.size(), 0.0);
    for (std::size_t m = 0; m < most_replicas.size(); ++m) {
      if (most_replicas[m] > 0) replica_demand_milli_[m] = 1000.0 / most_replicas[m];
    }
    std::vector<double> caps;
    if (pooled_) {
      double all = 0;
      for (double v : per_model) all += v;
      if (all > 0) {
        for (std::size_t m = 0; m < per_model.size(); ++m) {
          if (per_model[m] > 0) model_dim_[m] = 0;
        }
        names_.emplace_back("gpu");
        caps.push_back(all);
      }
    } else {
      for (std::size_t m = 0; m < per_model.size(); ++m) {
        if (per_model[m] <= 0) continue;
        model_dim_[m] = static_cast<int>(caps.size());
        names_.push_back("gpu:" +
                         c.catalog()[gpu_model_id{static_cast<gpu_model_id::rep>(m)}].name);
        caps.push_back(per_model[m]);
      }
    }
    if (cpu > 0) {
      cpu_dim_ = static_cast<int>(caps.size());
      names_.emplace_back("cpu");
      caps.push_back(cpu);
    }
    if (mem > 0) {
      mem_dim_ = static_cast<int>(caps.size());
      names_.emplace_back("memory");
      caps.push_back(mem);
    }
    set_capacity(caps);
  }

  /// A basis of named abstract dimensions (for textbook instances such as the DRF paper's
  /// <9 CPU, 18 GB>). @throws invalid_value_error naming the dimension when the sizes differ or
  /// a capacity is zero, negative or not finite.
  static resource_basis custom(std::vector<std::string> names, const std::vector<double>& caps) {
    if (names.size() != caps.size()) {
      throw invalid_value_error(
          error_id::inconsistent, "resource basis", "capacity",
          std::to_string(caps.size()) + " values",
          "expected one per dimension (" + std::to_string(names.size()) + ")");
    }
    for (std::size_t i = 0; i < caps.size(); ++i) {
      if (!std::isfinite(caps[i]) || caps[i] <= 0) {
        throw invalid_value_error(
            error_id::invalid_value, "resource basis dimension '" + names[i] + "'", "capacity",
            std::to_string(caps[i]), "a dimension's capacity must be finite and greater than 0");
      }
    }
    resource_basis b;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == "cpu") b.cpu_dim_ = static_cast<int>(i);
      if (names[i] == "memory") b.mem_dim_ = static_cast<int>(i);
    }
    b.names_ = std::move(names);
    b.set_capacity(caps);
    return b;
  }

  /// Number of dimensions.
  [[nodiscard]] std::size_t size() const noexcept { return names_.size(); }
  /// The name of dimension `d`: `cpu`, `memory`, `gpu` (models pooled) or `gpu:` and a model name.
  [[nodiscard]] const std::string& name(std::size_t d) const noexcept { return names_[d]; }
  /// The capacity of each dimension.
  [[nodiscard]] const share_vector& capacity() const noexcept { return capacity_; }
  /// `1 / capacity`, elementwise.
  [[nodiscard]] const share_vector& inverse_capacity() const noexcept { return inv_capacity_; }
  /// A zero vector of this basis.
  [[nodiscard]] share_vector zero() const {
    return share_vector::Zero(static_cast<Eigen::Index>(size()));
  }
  /// The dimension of a GPU model (-1 if the model has no capacity here).
  [[nodiscard]] int gpu_dimension(gpu_model_id m) const noexcept {
    return m.valid() && m.value() < model_dim_.size() ? model_dim_[m.value()] : -1;
  }
  /// The CPU dimension (-1 if CPU is not a dimension here).
  [[nodiscard]] int cpu_dimension() const noexcept { return cpu_dim_; }
  /// The memory dimension (-1 if memory is not a dimension here).
  [[nodiscard]] int memory_dimension() const noexcept { return mem_dim_; }

  /// `usage / capacity`, elementwise.
  [[nodiscard]] share_vector shares(const share_vector& usage) const {
    return usage * inv_capacity_;
  }
  /// `max_r usage_r / capacity_r` (0 for an empty basis). O(dimensions).
  [[nodiscard]] double dominant_share(Eigen::Ref<const share_vector> usage) const noexcept {
    return size() == 0 ? 0.0 : (usage * inv_capacity_).maxCoeff();
  }
  /// The dimension holding the dominant share (first on ties; -1 for an empty basis).
  [[nodiscard]] int dominant_dimension(Eigen::Ref<const share_vector> usage) const noexcept {
    if (size() == 0) return -1;
    Eigen::Index i = 0;
    (usage * inv_capacity_).maxCoeff(&i);
    return static_cast<int>(i);
  }

  /// Adds `sign x` what `a` holds on cluster `c` to `v`. O(grants).
  /// @pre `c` is the cluster this basis was built from (same catalog and nodes).
  void add_allocation(Eigen::Ref<share_vector> v, const cluster& c, const task_allocation& a,
                      double sign = 1.0) const noexcept {
    if (cpu_dim_ >= 0) v[cpu_dim_] += sign * static_cast<double>(a.cpu.value());
    if (mem_dim_ >= 0) v[mem_dim_] += sign * static_cast<double>(a.memory.value());
    for (const auto& g : a.gpus) {
      const auto& st = c.gpu(g.gpu);
      const gpu_model_id m = st.model;
      const int d = gpu_dimension(m);
      if (d < 0) continue;
      double milli = g.milli.value();
      if (g.replica) {
        milli = st.replicas == 0 ? 0.0 : 1000.0 / st.replicas;
      } else if (g.mig_slots != 0) {
        const auto slices = mig_slices_[m.value()];
        milli =
            slices == 0 ? 0.0 : 1000.0 * std::popcount(static_cast<unsigned>(g.mig_slots)) / slices;
      }
      v[d] += sign * milli;
    }
  }
  /// Adds `sign x` everything running job `r` holds. O(tasks x grants).
  void add_running(Eigen::Ref<share_vector> v, const cluster& c, const running_job& r,
                   double sign = 1.0) const noexcept {
    for (const auto& t : r.tasks) add_allocation(v, c, t, sign);
  }

  /// Adds `sign x` the full-size demand of `j` (see the accounting rules above). O(groups).
  /// With a custom basis only dimensions named "cpu" and "memory" are filled.
  void add_demand(Eigen::Ref<share_vector> v, const job_spec& j, double sign = 1.0) const noexcept {
    for (const auto& g : j.groups) {
      const double n = sign * g.count;
      const auto& r = g.request;
      if (cpu_dim_ >= 0) v[cpu_dim_] += n * static_cast<double>(r.cpu.value());
      if (mem_dim_ >= 0) v[mem_dim_] += n * static_cast<double>(r.memory.value());
      if (r.gpu.kind == gpu_demand_kind::none) continue;
      const gpu_model_id m = charged_model(r.allowed_models);
      const int d = gpu_dimension(m);
      if (d < 0) continue;
      double milli = r.gpu.milli().value();
      if (r.gpu.kind == gpu_demand_kind::mig) {
        const auto slices = mig_slices_[m.value()];
        milli = slices == 0 ? 0.0 : 1000.0 * r.gpu.mig_memory / slices;
      } else if (r.gpu.kind == gpu_demand_kind::replica) {
        milli = m.value() < replica_demand_milli_.size() ? replica_demand_milli_[m.value()] : 0.0;
      }
      v[d] += n * milli;
    }
  }
  /// The demand of `j` as a vector.
  [[nodiscard]] share_vector demand(const job_spec& j) const {
    share_vector v = zero();
    add_demand(v, j);
    return v;
  }

  /// The model a demand allowing `allowed` is charged to (see the accounting rules).
  [[nodiscard]] gpu_model_id charged_model(const gpu_model_set& allowed) const noexcept {
    if (allowed.empty()) return any_model_;  // precomputed: the common case
    return find_charged_model(allowed);
  }

 private:
  gpu_model_id find_charged_model(const gpu_model_set& allowed) const noexcept {
    gpu_model_id best = gpu_model_id::invalid();
    double best_cap = -1;
    for (std::size_t m = 0; m < model_dim_.size(); ++m) {
      const gpu_model_id id{static_cast<gpu_model_id::rep>(m)};
      if (model_dim_[m] < 0 || !allowed.admits(id)) continue;
      const double cap = model_capacity_.empty() ? 0.0 : model_capacity_[m];
      if (cap > best_cap) {
        best = id;
        best_cap = cap;
      }
    }
    return best;
  }

  void set_capacity(const std::vector<double>& caps) {
    capacity_ = Eigen::Map<const share_vector>(caps.data(), static_cast<Eigen::Index>(caps.size()));
    inv_capacity_ = capacity_.inverse();
    model_capacity_.assign(model_dim_.size(), 0.0);
    for (std::size_t m = 0; m < model_dim_.size(); ++m) {
      if (model_dim_[m] >= 0) model_capacity_[m] = capacity_[model_dim_[m]];
    }
    any_model_ = find_charged_model(gpu_model_set{});
  }

  std::vector<std::uint8_t> mig_slices_;      // per catalog model
  std::vector<double> replica_demand_milli_;  // per catalog model: 1000 / most replicas, or 0
  bool pooled_ = false;
  std::vector<std::string> names_;
  std::vector<int> model_dim_;
  std::vector<double> model_capacity_;
  int cpu_dim_ = -1, mem_dim_ = -1;
  share_vector capacity_, inv_capacity_;
  gpu_model_id any_model_ = gpu_model_id::invalid();  // charged_model of an empty (any) set
};

GPUSCHED_END_NAMESPACE
