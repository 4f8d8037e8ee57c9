// SPDX-License-Identifier: Apache-2.0
/// @file
/// The MIG variant of the FGD packing experiment: the same openb pod list, the same seeded
/// workload (`fgd_experiment::workload`: sorted, shuffled, tuned) and the same arrived-% bins
/// (`arrived_bins`), packed onto a copy of the openb cluster whose GPUs are all MIG-partitioned
/// GPUs of one model (node list kept: names, CPU, memory and GPU counts; the model replaced).
///
/// Mapping of a pod to MIG instances (`mig_pod_profile`):
/// - a fractional pod (one GPU, share s < 1) asks for the smallest profile of the model that
///   covers s: with `mig_cover::compute`, compute slices >= s x (the model's compute slices, 7);
///   with `mig_cover::memory`, memory slices >= s x (the model's memory slices, 8). "Smallest"
///   is the fewest slices of the covering kind, then of the other kind; `+me` profiles are never
///   chosen. A share above 4/7 (compute) or 1/2 (memory) needs the full 7g profile.
/// - a whole-GPU pod (k GPUs, share 1) takes one full-GPU profile (7g, all 8 memory slices) on
///   each of k GPUs of one node. MIG stays enabled on every GPU: the full profile occupies the
///   GPU exactly as a whole-GPU grant would, so no GPU has to leave MIG mode and a GPU freed by
///   a whole pod can be re-cut for small instances (mixed MIG/non-MIG nodes would need a static
///   split the trace does not give).
/// - a CPU-only pod asks for CPU and memory only. `gpu_spec` constraints are dropped: every GPU
///   of the MIG cluster is the same model.
///
/// Placement goes through the library: a `ledger` over a `cluster` built from `mig_catalog()`,
/// the packers `first_fit_packing` or `mig_aware_packing`, and one ledger transaction per pod
/// (a k-GPU pod is a gang: group 0 holds one instance plus the pod's CPU and memory, group 1
/// the other k-1 instances, all on one node), so MIG slot geometry (placements, one `+me`) is
/// exactly the catalog's and `check_invariants` can audit every step.
/// - One-instance pods: the packer's choice over all nodes. By default the runner reuses each
///   node's per-profile GPU choice (`first_fit_packing::fit` / `mig_aware_packing::best_on_node`)
///   until the node changes and compares nodes as `pack` does; the result equals calling
///   `pack` (`mig_run_config::cache_choices = false` does that; tested equal).
/// - Gangs (whole multi-GPU pods): the first node in position order on which the packer's `fit`
///   places all k instances. For full-GPU instances every empty GPU loses the same option value,
///   so this is also the MIG-aware packer's choice (its ties go to the lowest GPU).
/// - CPU-only pods: `first_fit_packing::pack` under both policies.
///
/// Metrics after every pod event (placed or failed), binned by arrived % (the GPU request of
/// all pods so far over cluster GPUs, as in the FGD experiment):
/// - allocation % = compute slices held by MIG instances / cluster compute slices x 100
///   (a 7g instance holds a whole GPU; unallocated % = 100 - it);
/// - used % = GPU share requested by the placed pods / cluster GPUs x 100 (what the pods asked
///   for; allocation minus used is the rounding to MIG profiles).
#pragma once

#include <algorithm>  // std::min
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gpusched/check/invariants.hpp>
#include <gpusched/cluster/cluster.hpp>
#include <gpusched/config.hpp>
#include <gpusched/core/error.hpp>
#include <gpusched/core/random.hpp>
#include <gpusched/policy/context.hpp>
#include <gpusched/policy/packing/first_fit.hpp>
#include <gpusched/policy/packing/mig_aware.hpp>
#include <gpusched/resource/mig_catalog.hpp>
#include <gpusched/trace/openb.hpp>
#include <gpusched/workload/ledger.hpp>

#include "fgd_experiment.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// How a fractional GPU share is covered by a MIG profile.
enum class mig_cover : std::uint8_t {
  compute,  ///< compute slices >= share x compute slices of the GPU
  memory,   ///< memory slices >= share x memory slices of the GPU
};

/// The MIG packers the experiment compares.
enum class mig_policy_kind : std::uint8_t { first_fit, mig_aware };

/// The label of a policy in tables and CSVs.
[[nodiscard]] constexpr std::string_view mig_policy_label(mig_policy_kind k) noexcept {
  return k == mig_policy_kind::first_fit ? "MIG-FirstFit" : "MIG-Aware";
}

/// The catalog name of a MIG model given as `A100-40GB`, `H100-80GB` or any `mig_catalog()`
/// name. @throws invalid_value_error (unknown_name) naming `field` and listing the choices.
[[nodiscard]] inline std::string mig_model_name(std::string_view model,
                                                std::string_view field = "model") {
  if (model == "A100-40GB") return "A100-SXM4-40GB";
  if (model == "H100-80GB") return "H100-SXM5-80GB";
  std::string known = "A100-40GB, H100-80GB";
  for (const char* n : mig_model_names) {
    if (model == n) return n;
    known += std::string(", ") + n;
  }
  throw invalid_value_error(error_id::unknown_name, "mig experiment", std::string(field),
                            std::string(model),
                            "not a MIG-capable GPU model (known: " + known + ")");
}

/// The smallest profile of `g` covering a share of `milli` (1..1000) of one GPU under `cover`
/// (see the file comment), never a `+me` profile. O(profiles).
/// @throws invalid_value_error when `milli` is outside 1..1000 or no profile covers it.
[[nodiscard]] inline const mig_profile& mig_pod_profile(const mig_geometry& g, std::int32_t milli,
                                                        mig_cover cover) {
  if (milli <= 0 || milli > 1000) {
    throw invalid_value_error(error_id::invalid_value, "mig experiment", "gpu_milli",
                              std::to_string(milli), "a GPU share is 1..1000 milli");
  }
  const mig_profile* best = nullptr;
  const auto key = [&](const mig_profile& p) {
    return cover == mig_cover::compute ? std::pair{p.compute_slices, p.memory_slices}
                                       : std::pair{p.memory_slices, p.compute_slices};
  };
  for (const auto& p : g.profiles) {
    if (p.media_extension) continue;
    const bool covers =
        cover == mig_cover::compute
            ? std::int64_t{p.compute_slices} * 1000 >= std::int64_t{milli} * g.compute_slices
            : std::int64_t{p.memory_slices} * 1000 >= std::int64_t{milli} * g.memory_slices;
    if (covers && (best == nullptr || key(p) < key(*best))) best = &p;
  }
  if (best == nullptr) {
    throw invalid_value_error(error_id::invalid_value, "mig experiment", "gpu_milli",
                              std::to_string(milli), "no MIG profile of the model covers it");
  }
  return *best;
}

/// @brief One MIG run's settings.
struct mig_run_config {
  mig_policy_kind policy = mig_policy_kind::mig_aware;
  std::uint64_t seed = 42;  ///< shuffle and inflation seed (as `fgd_run_config::seed`)
  double tune = 1.3;        ///< as `fgd_run_config::tune`
  /// Reuse each node's per-profile choice until the node changes (same result as `pack`).
  bool cache_choices = true;
  /// Run `check_invariants` on the ledger after every pod (slow: O(cluster) per pod).
  bool check_invariants = false;
};

/// @brief One MIG run's results. Bins are 0..`bins()-1` arrived %.
struct mig_run_result {
  mig_policy_kind policy = mig_policy_kind::mig_aware;
  std::uint64_t seed = 0;
  double tune = 0;
  std::int64_t total_gpus = 0;
  std::vector<double> alloc;  ///< allocation % (compute slices held) per arrived-% bin
  std::vector<double> used;   ///< GPU share requested by placed pods, % of cluster GPUs
  std::size_t pods = 0, placed = 0, failed = 0;
  std::size_t invariant_checks = 0;     ///< how many times the checker ran
  std::vector<std::string> violations;  ///< what it found (empty: nothing)
  double seconds = 0;                   ///< wall time of the placement loop
  [[nodiscard]] std::size_t bins() const noexcept { return alloc.size(); }
  /// Unallocated GPU % (free compute slices) at arrived bin `k` (clamped to the last bin).
  [[nodiscard]] double unallocated_at(std::size_t k) const noexcept {
    return alloc.empty() ? 100.0 : 100.0 - alloc[std::min(k, alloc.size() - 1)];
  }
  /// Placed pods, % of the workload's pods.
  [[nodiscard]] double served_pct() const noexcept {
    return pods == 0 ? 100.0 : 100.0 * static_cast<double>(placed) / static_cast<double>(pods);
  }
};

/// @brief The MIG experiment over one openb node list and pod list on one MIG model.
///
/// Construction maps every pod to its MIG demand and builds the MIG cluster once; `run` copies
/// it. @throws invalid_value_error for an unknown or non-MIG model, a cluster without GPUs, a
/// pod share outside 1..1000, or a multi-GPU pod whose share is not 1000 (what the FGD
/// experiment and `cluster` also reject: bad node values, duplicate node names).
class mig_experiment {
 public:
  mig_experiment(std::vector<openb_node> nodes, std::vector<openb_pod> pods,
                 std::string_view model = "A100-40GB", mig_cover cover = mig_cover::compute)
      : model_(mig_model_name(model)),
        cover_(cover),
        fractional_(with_model(nodes, model_), without_spec(pods)),
        pods_(std::move(pods)) {
    auto catalog = mig_catalog();
    const auto mid = catalog.id(model_, "mig experiment", "model");
    std::vector<node_spec> specs;
    specs.reserve(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const auto& n = nodes[i];
      specs.push_back({.id = node_id{static_cast<node_id::rep>(i + 1)},
                       .name = n.name,
                       .gpu_model = n.gpus > 0 ? model_ : std::string{},
                       .gpus = gpu_count{n.gpus},
                       .mig_enabled = n.gpus > 0,
                       .cpu = cpu_millis{n.cpu_milli},
                       .memory = memory_mib{n.memory_mib}});
    }
    const mig_geometry& geo = catalog[mid].mig;
    compute_slices_ = geo.compute_slices;
    demands_.reserve(pods_.size());
    for (const auto& p : pods_) {
      demand d;
      d.cpu = cpu_millis{p.cpu_milli};
      d.memory = memory_mib{p.memory_mib};
      if (p.num_gpu > 0) {
        if (p.num_gpu > 1 && p.gpu_milli != 1000) {
          throw invalid_value_error(error_id::invalid_value, "pod '" + p.name + "'", "gpu_milli",
                                    std::to_string(p.gpu_milli),
                                    "a multi-GPU pod takes whole GPUs (1000)");
        }
        const mig_profile& prof = mig_pod_profile(geo, p.gpu_milli, cover);
        d.instances = p.num_gpu;
        d.compute = prof.compute_slices;
        d.memory_slices = prof.memory_slices;
        d.profile = static_cast<std::uint8_t>(&prof - geo.profiles.data());
      }
      demands_.push_back(d);
    }
    cluster_ = cluster(std::move(catalog), specs);
  }

  [[nodiscard]] const std::string& model() const noexcept { return model_; }
  [[nodiscard]] mig_cover cover() const noexcept { return cover_; }
  [[nodiscard]] std::int64_t total_gpus() const noexcept { return fractional_.total_gpus(); }
  [[nodiscard]] std::size_t pod_count() const noexcept { return pods_.size(); }
  [[nodiscard]] std::size_t node_count() const noexcept { return cluster_.node_count(); }
  /// The MIG cluster before any pod (every GPU in MIG mode, all slots free).
  [[nodiscard]] const cluster& initial_state() const noexcept { return cluster_; }
  /// The profile pod `i` asks for per GPU, or nullptr for a CPU-only pod.
  [[nodiscard]] const mig_profile* profile_of(std::size_t i) const noexcept {
    const auto& d = demands_.at(i);
    if (d.instances == 0) return nullptr;
    const auto& geo = cluster_.catalog()[*cluster_.catalog().find(model_)].mig;
    return &geo.profiles[d.profile];
  }

  /// The same pods on the same nodes as a fractional (milli-share) FGD experiment: node model
  /// names replaced by this model's, `gpu_spec` dropped. Its `workload` is the pod order of a
  /// MIG run with equal seed and tune, and its `run` gives the fractional comparison.
  [[nodiscard]] const fgd_experiment& fractional() const noexcept { return fractional_; }

  /// Runs one (policy, seed, tune) cell on the seeded workload. Deterministic.
  [[nodiscard]] mig_run_result run(const mig_run_config& cfg) const {
    fgd_run_config f;
    f.seed = cfg.seed;
    f.tune = cfg.tune;
    random_engine rng(cfg.seed);
    return run_order(cfg, fractional_.workload(f, rng));
  }

  /// Runs the pods in `order` (indexes into the pod list; repeats allowed), binned with
  /// `cfg.tune`. Deterministic. O(pods x (MIG nodes + the changed node's GPUs x placements)).
  [[nodiscard]] mig_run_result run_order(const mig_run_config& cfg,
                                         const std::vector<std::size_t>& order) const {
    ledger book(cluster_);
    random_engine rng(cfg.seed);  // the packers draw nothing; the context needs an engine
    const schedule_context ctx(book, at(seconds(0)), rng);
    const cluster& c = book.state();
    const auto profiles = c.catalog()[*c.catalog().find(model_)].mig.profiles.size();
    // Per (node, profile) GPU choice, valid while the node's version equals its stamp.
    std::vector<std::uint32_t> version(c.node_count(), 1);
    std::vector<std::uint32_t> stamp(c.node_count() * profiles, 0);
    std::vector<std::optional<mig_choice>> choice(c.node_count() * profiles);

    const double capacity = static_cast<double>(total_gpus()) * compute_slices_;
    const double capacity_milli = static_cast<double>(total_gpus()) * 1000.0;
    arrived_bins binned(cfg.tune, 2);  // allocation, used
    mig_run_result res;
    res.policy = cfg.policy;
    res.seed = cfg.seed;
    res.tune = cfg.tune;
    res.total_gpus = total_gpus();
    res.pods = order.size();
    std::int64_t arrived = 0, used = 0, slices = 0;
    std::uint64_t next_job = 1;
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto pi : order) {
      const auto& pod = pods_.at(pi);
      const auto& d = demands_[pi];
      arrived += pod.gpu_request();
      task_request head{.gpu = gpu_demand::none(), .cpu = d.cpu, .memory = d.memory};
      if (d.instances > 0) head.gpu = gpu_demand::mig(d.compute, d.memory_slices);
      auto tx = book.begin();
      bool ok = false;
      if (d.instances == 0) {
        ok = place(tx, first_fit_packing{}.pack(ctx, head));
      } else if (d.instances == 1) {
        if (!cfg.cache_choices) {
          ok = place(tx, cfg.policy == mig_policy_kind::first_fit
                             ? first_fit_packing{}.pack(ctx, head)
                             : mig_aware_packing{}.pack(ctx, head));
        } else {
          std::optional<mig_choice> best;
          node_index best_node{};
          for (const node_index n : c.mig_nodes()) {
            if (!detail::host_fits(c, n, head)) continue;
            const auto k = n.value() * profiles + d.profile;
            if (stamp[k] != version[n.value()]) {
              choice[k] = gpu_choice(ctx, n, head.gpu, cfg.policy);
              stamp[k] = version[n.value()];
            }
            if (!choice[k]) continue;
            if (cfg.policy == mig_policy_kind::first_fit) {
              best = choice[k];
              best_node = n;
              break;
            }
            if (!best || choice[k]->better_than(*best)) {
              best = choice[k];
              best_node = n;
            }
          }
          if (best) {
            task_allocation a;
            a.node = best_node;
            a.cpu = d.cpu;
            a.memory = d.memory;
            a.gpus.push_back(best->grant);
            ok = place(tx, a);
          }
        }
      } else {
        ok = place_gang(tx, ctx, head, d.instances, cfg.policy);
      }
      if (ok) {
        for (const auto& a : tx.placed()) ++version[a.node.value()];
        tx.commit(
            pod_job(job_id{static_cast<job_id::rep>(next_job++)}, pod.name, head, d.instances),
            at(seconds(0)));
        ++res.placed;
        used += pod.gpu_request();
        slices += std::int64_t{d.compute} * d.instances;
      } else {
        tx.rollback();
        ++res.failed;
      }
      if (cfg.check_invariants) {
        ++res.invariant_checks;
        auto rep = check_invariants(book);
        for (auto& v : rep.violations) res.violations.push_back(std::move(v));
      }
      binned.add(static_cast<double>(arrived) / capacity_milli * 100.0,
                 {static_cast<double>(slices) / capacity * 100.0,
                  static_cast<double>(used) / capacity_milli * 100.0});
    }
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    res.alloc = binned.finish(0, 0.0);
    res.used = binned.finish(1, 0.0);
    return res;
  }

 private:
  struct demand {
    cpu_millis cpu{};
    memory_mib memory{};
    int instances = 0;  ///< MIG instances (one per GPU); 0: CPU-only
    std::uint8_t compute = 0, memory_slices = 0, profile = 0;
  };

  static std::vector<openb_node> with_model(std::vector<openb_node> nodes,
                                            const std::string& model) {
    for (auto& n : nodes) {
      if (n.gpus > 0) n.model = model;
    }
    return nodes;
  }
  static std::vector<openb_pod> without_spec(std::vector<openb_pod> pods) {
    for (auto& p : pods) p.gpu_spec.clear();
    return pods;
  }

  static bool place(ledger::transaction& tx, const std::optional<task_allocation>& a) {
    return a && tx.place(*a);
  }

  /// The packer's GPU choice on node `n` for one instance, CPU and memory aside.
  static std::optional<mig_choice> gpu_choice(const schedule_context& ctx, node_index n,
                                              const gpu_demand& d, mig_policy_kind k) {
    if (k == mig_policy_kind::mig_aware) return mig_aware_packing::best_on_node(ctx.state(), n, d);
    const auto a = first_fit_packing{}.fit(ctx, n, task_request{d, {}, {}, {}});
    if (!a) return std::nullopt;
    mig_choice ch;
    ch.grant = a->gpus[0];
    return ch;
  }

  /// A k-instance pod: the first node (position order) where the packer's `fit` places the head
  /// (instance + CPU + memory) and k-1 more instances, in the open transaction.
  static bool place_gang(ledger::transaction& tx, const schedule_context& ctx,
                         const task_request& head, int k, mig_policy_kind policy) {
    const cluster& c = ctx.state();
    task_request rest = head;
    rest.cpu = cpu_millis{0};
    rest.memory = memory_mib{0};
    const auto mark = tx.mark();
    for (const node_index n : c.mig_nodes()) {
      if (c.gpus(n).size() < static_cast<std::size_t>(k) || !detail::host_fits(c, n, head))
        continue;
      bool all = true;
      for (int t = 0; t < k && all; ++t) {
        auto a = policy == mig_policy_kind::first_fit
                     ? first_fit_packing{}.fit(ctx, n, t == 0 ? head : rest)
                     : mig_aware_packing{}.fit(ctx, n, t == 0 ? head : rest);
        if (a) a->group = t == 0 ? 0 : 1;
        all = place(tx, a);
      }
      if (all) return true;
      tx.rollback_to(mark);
    }
    return false;
  }

  /// The ledger's record of a pod: group 0 the head, group 1 the other instances.
  static job_spec pod_job(job_id id, const std::string& name, const task_request& head,
                          int instances) {
    job_spec s;
    s.id = id;
    s.name = name;
    s.groups.push_back({.name = "pod", .request = head, .count = 1});
    if (instances > 1) {
      task_request rest = head;
      rest.cpu = cpu_millis{0};
      rest.memory = memory_mib{0};
      s.groups.push_back({.name = "gpus", .request = rest, .count = instances - 1});
    }
    return s;
  }

  std::string model_;
  mig_cover cover_;
  fgd_experiment fractional_;
  std::vector<openb_pod> pods_;
  std::vector<demand> demands_;
  cluster cluster_;
  int compute_slices_ = 7;
};

GPUSCHED_END_NAMESPACE
