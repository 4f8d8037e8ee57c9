// SPDX-License-Identifier: Apache-2.0
/// @file
/// The six node-scoring policies of the FGD paper (Weng et al., "Beware of Fragmentation:
/// Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC'23) as its
/// simulator (`hkust-adsl/kubernetes-scheduler-simulator`) defines them, plus its
/// fragmentation measure over a target workload:
///
/// | policy          | node score (0..100, integer, higher wins)                 | GPU choice |
/// |-----------------|-----------------------------------------------------------|------------|
/// | Random          | a uniformly random feasible node                          | random fit |
/// | DotProd         | 100 x (1 - <node_free/max, pod/max> / 2) on (CPU, GPU)     | best fit   |
/// | GpuClustering   | bands by the node's pod "affinities", fuller nodes higher | best fit   |
/// | GpuPacking      | shared GPUs > free GPUs of used nodes > empty nodes       | best fit   |
/// | BestFit         | 100 x (1 - sum_i 0.5 (free_i - req_i) / max_i)            | best fit   |
/// | FGD             | 100 x sigmoid(-dF / 1000), dF the fragmentation increase  | min dF     |
///
/// Faithful details (from the simulator's source): scores are truncated to integers; every node
/// is scored (`percentageOfNodesToScore: 100`); equal scores go to the first node in node order
/// (stock Kubernetes would choose uniformly; the simulator takes the smallest node name after
/// prefixing the names with a seeded random permutation, which the experiment runner reproduces
/// as a per-run node order, see `benchmarks/experiment/fgd_experiment.hpp`); "best fit" GPU choice
/// takes the fitting GPU with the least free share (first index on ties) and whole-GPU pods
/// take the lowest-indexed idle GPUs; max specs are 128 cores and 8 GPUs (8000 milli).
///
/// The pure functions below work on `fgd_node` values so that the packing policies (over a
/// `cluster`) and the experiment runner (`benchmarks/experiment/fgd_experiment.hpp`) share one
/// definition.
#pragma once

#include <algorithm>  // std::sort, std::min
#include <array>
#include <cmath>  // std::exp
#include <cstdint>
#include <map>
#include <memory>  // std::shared_ptr
#include <optional>
#include <span>
#include <string_view>
#include <tuple>
#include <utility>  // std::pair
#include <vector>

#include "gpusched/cluster/allocation.hpp"
#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/core/random.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/packing/first_fit.hpp"
#include "gpusched/resource/request.hpp"

GPUSCHED_BEGIN_NAMESPACE

// ---- shapes and views ------------------------------------------------------------------------

/// @brief A pod as the FGD simulator sees it ("PodResource"): CPU, per-GPU milli, GPU count,
/// allowed models. Memory is not part of it (it only filters).
struct fgd_pod_shape {
  std::int64_t cpu = 0;    ///< milli-CPU
  std::int32_t milli = 0;  ///< per-GPU milli (1000 for whole GPUs, 0 for CPU-only)
  int gpus = 0;            ///< GPU count (1 for a share)
  gpu_model_set models;    ///< empty: any model
  friend bool operator==(const fgd_pod_shape&, const fgd_pod_shape&) noexcept = default;
  /// Total milli-GPU asked for.
  [[nodiscard]] std::int64_t total_milli() const noexcept {
    return static_cast<std::int64_t>(milli) * gpus;
  }
  /// True for a share of one GPU (below 1000 milli).
  [[nodiscard]] bool is_share() const noexcept { return gpus == 1 && milli < 1000; }
  /// The shape of a (non-MIG, non-replica) request; MIG and replica requests have none (the FGD
  /// policies pack them first-fit).
  [[nodiscard]] static std::optional<fgd_pod_shape> of(const task_request& r) noexcept {
    fgd_pod_shape s;
    s.cpu = r.cpu.value();
    s.models = r.allowed_models;
    using result = std::optional<fgd_pod_shape>;
    return r.gpu.visit([&](demand_none) -> result { return s; },
                       [&](demand_whole w) -> result {
                         s.milli = 1000;
                         s.gpus = w.count.value();
                         return s;
                       },
                       [&](demand_share sh) -> result {
                         s.milli = sh.share.value();
                         s.gpus = 1;
                         return s;
                       },
                       [](demand_mig) -> result { return std::nullopt; },
                       [](demand_replica) -> result { return std::nullopt; });
  }
};

/// @brief A node as the FGD rules see it: free CPU and memory, its model, the free milli of
/// each GPU (in device order), and the set of pod "affinities" it hosts (GpuClustering).
struct fgd_node {
  /// Free CPU, in millicores.
  std::int64_t cpu_left = 0;
  /// Free memory, in MiB.
  std::int64_t memory_left = 0;
  /// The node's GPU model.
  gpu_model_id model;
  /// Number of GPUs.
  int gpus = 0;
  /// Free milli of each GPU, in device order (the first `gpus` entries).
  std::array<std::int32_t, max_gpus_per_node> left{};
  std::uint8_t affinity = 0;  ///< bit set of `fgd_affinity_bit` values present
  /// Free milli over all GPUs. O(GPUs).
  [[nodiscard]] std::int64_t total_left() const noexcept {
    std::int64_t t = 0;
    for (int i = 0; i < gpus; ++i) t += left[static_cast<std::size_t>(i)];
    return t;
  }
  /// GPUs with all 1000 milli free. O(GPUs).
  [[nodiscard]] int fully_free() const noexcept {
    int n = 0;
    for (int i = 0; i < gpus; ++i) n += left[static_cast<std::size_t>(i)] == 1000 ? 1 : 0;
    return n;
  }
  /// GPUs with at least `milli` free.
  [[nodiscard]] int count_at_least(std::int32_t milli) const noexcept {
    int n = 0;
    for (int i = 0; i < gpus; ++i) n += left[static_cast<std::size_t>(i)] >= milli ? 1 : 0;
    return n;
  }
};

/// The GpuClustering affinity class of a pod: bit 0 share, 1 one GPU, 2 two, 3 four, 4 eight,
/// 5 any other count; 0 (no bit) for CPU-only pods.
[[nodiscard]] inline std::uint8_t fgd_affinity_bit(const fgd_pod_shape& p) noexcept {
  if (p.gpus == 0 || p.milli == 0) return 0;
  if (p.is_share()) return 1u << 0;
  switch (p.gpus) {
    case 1:
      return 1u << 1;
    case 2:
      return 1u << 2;
    case 4:
      return 1u << 3;
    case 8:
      return 1u << 4;
    default:
      return 1u << 5;
  }
}

/// Filter: CPU, memory, model and GPU fit (the simulator's NodeResourcesFit + Open-Gpu-Share
/// filters). `memory` is the pod's memory. O(GPUs).
[[nodiscard]] inline bool fgd_fits(const fgd_node& n, const fgd_pod_shape& p,
                                   std::int64_t memory) noexcept {
  if (p.cpu > n.cpu_left || memory > n.memory_left) return false;
  if (p.gpus == 0 || p.milli == 0) return true;
  if (n.gpus == 0 || !p.models.admits(n.model)) return false;
  return n.count_at_least(p.milli) >= p.gpus;
}

/// Applies a placement to a node view: CPU, memory, the chosen GPUs and the affinity. O(gpus).
inline void fgd_apply(fgd_node& n, const fgd_pod_shape& p, std::int64_t memory,
                      std::span<const int> gpus) noexcept {
  n.cpu_left -= p.cpu;
  n.memory_left -= memory;
  for (int g : gpus) n.left[static_cast<std::size_t>(g)] -= p.milli;
  n.affinity = static_cast<std::uint8_t>(n.affinity | fgd_affinity_bit(p));
}

// ---- target workload and fragmentation ------------------------------------------------------

/// @brief The target workload M of the FGD measure: the most popular pod shapes with their
/// frequencies (summing to 1).
///
/// Built like the simulator's `GetTypicalPods` (popularity threshold 95%, step 1, CPU-only pods
/// included, no GPU weighting): count shapes, sort by decreasing count (ties: the larger shape
/// first by CPU, milli, GPUs, then model set), keep shapes one at a time until they cover the
/// threshold share of pods, renormalise. O(pods log shapes).
class target_workload {
 public:
  /// One typical pod shape and its weight.
  struct entry {
    /// A pod shape of the workload.
    fgd_pod_shape shape;
    /// Its share of the pods (the weights sum to 1 when built from pods).
    double weight = 0;
  };
  target_workload() = default;
  /// The typical shapes of `pods`: the most frequent ones covering `threshold_percent` of the pods
  /// (see the class). O(pods log shapes).
  explicit target_workload(std::span<const fgd_pod_shape> pods, double threshold_percent = 95) {
    std::map<std::tuple<std::int64_t, std::int32_t, int, std::uint64_t>, double> count;
    for (const auto& p : pods) count[{p.cpu, p.milli, p.gpus, p.models.bits()}] += 1;
    std::vector<std::pair<std::tuple<std::int64_t, std::int32_t, int, std::uint64_t>, double>>
        sorted(count.begin(), count.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      if (a.second != b.second) return a.second > b.second;
      return a.first > b.first;
    });
    const double total = static_cast<double>(pods.size());
    const double expected = threshold_percent * total / 100.0;
    double cum = 0;
    std::size_t i = 0;
    while (cum < expected && i < sorted.size()) {
      cum += sorted[i].second;
      ++i;
    }
    for (std::size_t k = 0; k < i; ++k) {
      const auto& [key, n] = sorted[k];
      entry e;
      e.shape.cpu = std::get<0>(key);
      e.shape.milli = std::get<1>(key);
      e.shape.gpus = std::get<2>(key);
      for (std::size_t b = 0; b < gpu_model_set::max_models; ++b) {
        if (((std::get<3>(key) >> b) & 1u) != 0) {
          e.shape.models.insert(gpu_model_id{static_cast<gpu_model_id::rep>(b)});
        }
      }
      e.weight = (n / total) / (cum / total);
      entries_.push_back(e);
    }
  }
  /// Builds M from explicit (shape, weight) entries; weights are used as given.
  static target_workload from_entries(std::vector<entry> e) {
    target_workload t;
    t.entries_ = std::move(e);
    return t;
  }
  /// The shapes and their weights, most frequent first.
  [[nodiscard]] std::span<const entry> entries() const noexcept { return entries_; }
  /// True when the workload has no shape.
  [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }

 private:
  std::vector<entry> entries_;
};

/// @brief The FGD fragmentation F_n(M) of one node, in milli-GPU (paper Sec. 4; simulator
/// `NodeGpuShareFragAmountScore`).
///
/// For each target shape m with weight p_m: if m fits the node (model, CPU, and `gpus` GPUs with
/// at least `milli` free each), the GPUs with less than `milli` free count as fragment;
/// otherwise (no access, lack of GPU, lack of CPU, or m is CPU-only) all free GPU milli counts.
/// Summed per category in the simulator's order so that float results match. O(|M| x GPUs).
[[nodiscard]] inline double fgd_fragmentation(const fgd_node& n,
                                              const target_workload& m) noexcept {
  const std::int64_t total = n.total_left();
  if (total == 0) return 0;
  // categories: q1 lack both, q2 lack GPU (and the fragment part of q3), q4 lack CPU,
  // xl / xr CPU-only fits / not, no access (q3's satisfied part is not fragment).
  double q1 = 0, q2 = 0, q4 = 0, xl = 0, xr = 0, na = 0;
  const auto t = static_cast<double>(total);
  for (const auto& e : m.entries()) {
    const auto& s = e.shape;
    if (s.milli == 0) {
      (n.cpu_left >= s.cpu ? xl : xr) += e.weight * t;
      continue;
    }
    if (!s.models.admits(n.model)) {
      na += e.weight * t;
      continue;
    }
    int fit = 0;
    std::int64_t small = 0;
    for (int i = 0; i < n.gpus; ++i) {
      const auto l = n.left[static_cast<std::size_t>(i)];
      if (l >= s.milli) {
        ++fit;
      } else {
        small += l;
      }
    }
    const bool cpu_ok = n.cpu_left >= s.cpu;
    if (fit >= s.gpus) {
      if (cpu_ok) {
        q2 += e.weight * static_cast<double>(small);
      } else {
        q4 += e.weight * t;
      }
    } else {
      (cpu_ok ? q2 : q1) += e.weight * t;
    }
  }
  return q1 + q2 + q4 + xl + xr + na;
}

namespace detail {
inline double fgd_sigmoid(double x) noexcept { return 1.0 / (1.0 + std::exp(-x)); }
/// The simulator's score of a fragmentation change: int(sigmoid((before - after)/1000) * 100).
inline int fgd_delta_score(double before, double after) noexcept {
  return static_cast<int>(fgd_sigmoid((before - after) / 1000.0) * 100.0);
}
/// The node after the simulator's `Sub`: CPU taken, and for GPU pods the least-sufficient GPUs
/// (ascending free, stable) each lose `milli`.
inline fgd_node fgd_sub(const fgd_node& n, const fgd_pod_shape& p) noexcept {
  fgd_node out = n;
  out.cpu_left -= p.cpu;
  if (p.gpus == 0) return out;
  std::array<int, max_gpus_per_node> idx{};
  for (int i = 0; i < n.gpus; ++i) idx[static_cast<std::size_t>(i)] = i;
  std::sort(idx.begin(), idx.begin() + n.gpus, [&](int a, int b) {
    const auto la = n.left[static_cast<std::size_t>(a)];
    const auto lb = n.left[static_cast<std::size_t>(b)];
    return la != lb ? la < lb : a < b;  // ascending free, device order on ties
  });
  int need = p.gpus;
  for (int k = 0; k < n.gpus && need > 0; ++k) {
    auto& l = out.left[static_cast<std::size_t>(idx[static_cast<std::size_t>(k)])];
    if (p.milli <= l) {
      l -= p.milli;
      --need;
    }
  }
  return out;
}
}  // namespace detail

/// @brief The GPUs a placement takes on one node (device indices, in order).
struct fgd_gpu_choice {
  /// The chosen device indices (the first `count` entries).
  std::array<int, max_gpus_per_node> gpu{};
  /// Number of GPUs chosen.
  int count = 0;
  /// The chosen device indices.
  [[nodiscard]] std::span<const int> gpus() const noexcept {
    return {gpu.data(), static_cast<std::size_t>(count)};
  }
};

/// Whole-GPU pods: the lowest-indexed idle GPUs (`AllocateExclusiveGpuId`). @pre they exist.
[[nodiscard]] inline fgd_gpu_choice fgd_exclusive_gpus(const fgd_node& n,
                                                       const fgd_pod_shape& p) noexcept {
  fgd_gpu_choice c;
  for (int i = 0; i < n.gpus && c.count < p.gpus; ++i) {
    if (n.left[static_cast<std::size_t>(i)] == 1000) c.gpu[static_cast<std::size_t>(c.count++)] = i;
  }
  return c;
}

/// "Best" GPU choice: a share goes to the fitting GPU with the least free milli (first on
/// ties); whole GPUs to the lowest idle ones; CPU-only pods take none.
[[nodiscard]] inline fgd_gpu_choice fgd_best_fit_gpus(const fgd_node& n,
                                                      const fgd_pod_shape& p) noexcept {
  if (p.gpus == 0 || p.milli == 0) return {};
  if (!p.is_share()) return fgd_exclusive_gpus(n, p);
  fgd_gpu_choice c;
  int best = -1;
  for (int i = 0; i < n.gpus; ++i) {
    const auto l = n.left[static_cast<std::size_t>(i)];
    if (l >= p.milli && (best < 0 || l < n.left[static_cast<std::size_t>(best)])) best = i;
  }
  if (best >= 0) c.gpu[static_cast<std::size_t>(c.count++)] = best;
  return c;
}

/// "Random" GPU choice: a share goes to a uniformly random fitting GPU (reservoir sampling in
/// device order, as the simulator draws); whole GPUs to the lowest idle ones.
[[nodiscard]] inline fgd_gpu_choice fgd_random_gpus(const fgd_node& n, const fgd_pod_shape& p,
                                                    random_engine& rng) noexcept {
  if (p.gpus == 0 || p.milli == 0) return {};
  if (!p.is_share()) return fgd_exclusive_gpus(n, p);
  fgd_gpu_choice c;
  std::uint64_t seen = 0;
  for (int i = 0; i < n.gpus; ++i) {
    if (n.left[static_cast<std::size_t>(i)] >= p.milli) {
      ++seen;
      if (uniform_index(rng, seen) == 0) {
        c.gpu[0] = i;
        c.count = 1;
      }
    }
  }
  return c;
}

// ---- node scores -------------------------------------------------------------------------------

inline constexpr double fgd_max_spec_cpu = 128000;  ///< 128 cores
inline constexpr double fgd_max_spec_gpu = 8000;    ///< 8 GPUs

/// DotProd (Tetris, "merge" dimensions, normalised by the max spec). @pre the pod fits.
[[nodiscard]] inline int fgd_dotprod_score(const fgd_node& n, const fgd_pod_shape& p) noexcept {
  const double node_cpu = static_cast<double>(n.cpu_left) / fgd_max_spec_cpu;
  const double node_gpu = static_cast<double>(n.total_left()) / fgd_max_spec_gpu;
  const double pod_cpu = static_cast<double>(p.cpu) / fgd_max_spec_cpu;
  const double pod_gpu = static_cast<double>(p.total_milli()) / fgd_max_spec_gpu;
  const double dot = (node_cpu * pod_cpu + node_gpu * pod_gpu) / 2.0;
  return static_cast<int>(100.0 * (1.0 - dot));
}

/// GpuClustering: (75,100] the node hosts only this pod's affinity, (50,75] it hosts it among
/// others, (25,50] it hosts no GPU pod, (0,25] otherwise; fuller nodes higher inside a band.
/// CPU-only pods score 0 everywhere. Integer arithmetic as in the simulator.
[[nodiscard]] inline int fgd_clustering_score(const fgd_node& n, const fgd_pod_shape& p) noexcept {
  const std::uint8_t mine = fgd_affinity_bit(p);
  if (mine == 0) return 0;
  const auto fill = static_cast<int>(25 * (8000 - n.total_left()) / 8000);
  if ((n.affinity & mine) != 0) return fill + (n.affinity == mine ? 75 : 50);
  return fill + (n.affinity == 0 ? 25 : 0);
}

/// GpuPacking: shared GPUs [50,100] (less free space on them is better), else a used node
/// [33,50] (fewer idle GPUs consumed is better), else an empty node [0,33]. CPU-only pods 0.
[[nodiscard]] inline int fgd_gpu_packing_score(const fgd_node& n, const fgd_pod_shape& p) noexcept {
  if (p.total_milli() <= 0) return 0;
  const int free = n.fully_free();
  if (free == n.gpus) return std::max(33 - free, free);
  std::array<int, max_gpus_per_node> idx{};
  for (int i = 0; i < n.gpus; ++i) idx[static_cast<std::size_t>(i)] = i;
  std::sort(idx.begin(), idx.begin() + n.gpus, [&](int a, int b) {
    const auto la = n.left[static_cast<std::size_t>(a)];
    const auto lb = n.left[static_cast<std::size_t>(b)];
    return la != lb ? la < lb : a < b;  // ascending free, device order on ties
  });
  int need = p.gpus, free_used = 0;
  std::int64_t ratio = 0;
  for (int k = 0; k < n.gpus && need > 0; ++k) {
    const auto l = n.left[static_cast<std::size_t>(idx[static_cast<std::size_t>(k)])];
    if (p.milli <= l) {
      --need;
      ratio += l * 100 / 1000;
      if (l == 1000) ++free_used;
    }
  }
  if (need != 0) return 0;
  if (free_used > 0) return std::max(50 - free_used, 33);
  return static_cast<int>(std::max<std::int64_t>(100 - ratio / 10, 50));
}

/// BestFit: 100 x (1 - sum over CPU and GPU of 0.5 (free - request) / max spec).
[[nodiscard]] inline int fgd_best_fit_score(const fgd_node& n, const fgd_pod_shape& p) noexcept {
  const double cpu = static_cast<double>(n.cpu_left - p.cpu) / fgd_max_spec_cpu * 0.5;
  const double gpu = static_cast<double>(n.total_left() - p.total_milli()) / fgd_max_spec_gpu * 0.5;
  return static_cast<int>((1.0 - (cpu + gpu)) * 100.0);
}

/// FGD: the score of the placement that increases F_n least, and its GPUs. A share is tried on
/// every fitting GPU (first GPU with the strictly highest integer score wins); other pods go to
/// the lowest idle GPUs, F after the simulator's `Sub`. `before` is F_n of `n`.
/// O(GPUs x |M| x GPUs).
[[nodiscard]] inline std::pair<int, fgd_gpu_choice> fgd_score(const fgd_node& n,
                                                              const fgd_pod_shape& p,
                                                              const target_workload& m,
                                                              double before) noexcept {
  if (p.is_share()) {
    int best = -1;
    fgd_gpu_choice c;
    std::int32_t tried_left = -1;
    int tried_score = 0;
    for (int i = 0; i < n.gpus; ++i) {
      const auto l = n.left[static_cast<std::size_t>(i)];
      if (l < p.milli) continue;
      int s = 0;
      if (l == tried_left) {
        s = tried_score;  // same free amount, same node state up to a permutation
      } else {
        fgd_node after = n;
        after.cpu_left -= p.cpu;
        after.left[static_cast<std::size_t>(i)] -= p.milli;
        s = detail::fgd_delta_score(before, fgd_fragmentation(after, m));
        tried_left = l;
        tried_score = s;
      }
      if (best < 0 || s > best) {
        best = s;
        c.gpu[0] = i;
        c.count = 1;
      }
    }
    return {best < 0 ? 0 : best, c};
  }
  const fgd_node after = detail::fgd_sub(n, p);
  const int s = detail::fgd_delta_score(before, fgd_fragmentation(after, m));
  if (p.gpus == 0 || p.milli == 0) return {s, {}};
  return {s, fgd_exclusive_gpus(n, p)};
}

// ---- the policies over a cluster --------------------------------------------------------------

/// The six policies of the FGD paper.
enum class fgd_policy_kind : std::uint8_t { random, dotprod, clustering, packing, bestfit, fgd };

/// The published label of a policy (`01-Random` ... `06-FGD`).
[[nodiscard]] constexpr std::string_view fgd_policy_label(fgd_policy_kind k) noexcept {
  switch (k) {
    case fgd_policy_kind::random:
      return "01-Random";
    case fgd_policy_kind::dotprod:
      return "02-DotProd";
    case fgd_policy_kind::clustering:
      return "03-GpuClustering";
    case fgd_policy_kind::packing:
      return "04-GpuPacking";
    case fgd_policy_kind::bestfit:
      return "05-BestFit";
    case fgd_policy_kind::fgd:
      return "06-FGD";
  }
  return "?";
}

/// @brief A view of node `n` of `c` in FGD terms (MIG GPUs count as having nothing free).
/// `affinity` is left 0; see `fgd_affinities`. O(GPUs).
[[nodiscard]] inline fgd_node fgd_view(const cluster& c, node_index n) noexcept {
  fgd_node v;
  v.cpu_left = c.cpu_free(n).value();
  v.memory_left = c.memory_free(n).value();
  v.model = c.model(n);
  const auto gs = c.gpus(n);
  v.gpus = static_cast<int>(gs.size());
  for (std::size_t i = 0; i < gs.size(); ++i)
    v.left[i] = gs[i].mig_enabled ? 0 : gs[i].free.value();
  return v;
}

/// The GpuClustering affinity bits of every node, from the ledger's running tasks.
/// O(running tasks + nodes).
[[nodiscard]] inline std::vector<std::uint8_t> fgd_affinities(const ledger& book) {
  std::vector<std::uint8_t> out(book.state().node_count(), 0);
  for (const auto& rj : book.running()) {
    for (const auto& a : rj.tasks) {
      const auto& req = rj.spec.groups[a.group].request;
      if (const auto s = fgd_pod_shape::of(req)) {
        out[a.node.value()] = static_cast<std::uint8_t>(out[a.node.value()] | fgd_affinity_bit(*s));
      }
    }
  }
  return out;
}

/// @brief One of the FGD paper's six policies as a `packing_policy`.
///
/// `pack` scores every feasible node in service (`cluster::available`) and takes the highest
/// integer score, the lowest node on ties (Random: a uniform feasible node drawn from
/// `ctx.rng()`); `fit` makes the policy's GPU choice on one node (none on a node out of
/// service). MIG requests are left to `first_fit_packing` (these policies know no
/// MIG). FGD needs a target workload (shared, immutable). Complexity of `pack`: O(nodes x GPUs)
/// per request, O(nodes x GPUs^2 x |M|) for FGD; GpuClustering also scans the running tasks.
template <fgd_policy_kind K>
class fgd_family_packing {
 public:
  /// Opts into the packing family.
  using policy_category = packing_tag;
  fgd_family_packing() = default;
  /// An FGD policy scoring against the target workload `m` (needed by `fgd`; the others ignore it).
  explicit fgd_family_packing(std::shared_ptr<const target_workload> m) : m_(std::move(m)) {}

  /// The policy's name: `random`, `dotprod`, `gpu-clustering`, `gpu-packing`, `fgd-best-fit` or
  /// `fgd`.
  [[nodiscard]] static constexpr std::string_view name() noexcept {
    switch (K) {
      case fgd_policy_kind::random:
        return "random";
      case fgd_policy_kind::dotprod:
        return "dotprod";
      case fgd_policy_kind::clustering:
        return "gpu-clustering";
      case fgd_policy_kind::packing:
        return "gpu-packing";
      case fgd_policy_kind::bestfit:
        return "fgd-best-fit";
      case fgd_policy_kind::fgd:
        return "fgd";
    }
    return "?";
  }
  /// The target workload, or null.
  [[nodiscard]] const target_workload* workload() const noexcept { return m_.get(); }

  /// The GPUs this policy picks for one task of `r` on node `n`, or `nullopt` when it does not
  /// fit there.
  [[nodiscard]] std::optional<task_allocation> fit(const schedule_context& ctx, node_index n,
                                                   const task_request& r) const {
    const auto shape = fgd_pod_shape::of(r);
    if (!shape) return first_fit_packing{}.fit(ctx, n, r);
    if (!ctx.state().available(n)) return std::nullopt;  // out of service: offers nothing
    fgd_node v = fgd_view(ctx.state(), n);
    if (!fgd_fits(v, *shape, r.memory.value())) return std::nullopt;
    return make(ctx, n, r, choose(ctx, v, *shape));
  }

  /// The node and GPUs this policy picks for one task of `r`, or `nullopt` when no node fits it.
  [[nodiscard]] std::optional<task_allocation> pack(const schedule_context& ctx,
                                                    const task_request& r) const {
    const auto shape = fgd_pod_shape::of(r);
    if (!shape) return first_fit_packing{}.pack(ctx, r);
    const cluster& c = ctx.state();
    std::vector<std::uint8_t> aff;
    if constexpr (K == fgd_policy_kind::clustering) aff = fgd_affinities(ctx.book());
    int best = -1;
    std::uint64_t ties = 0;
    std::optional<node_index> chosen;
    for (node_index n : c.nodes()) {
      if (!c.available(n)) continue;  // out of service: offers nothing
      fgd_node v = fgd_view(c, n);
      if (!fgd_fits(v, *shape, r.memory.value())) continue;
      if constexpr (K == fgd_policy_kind::clustering) v.affinity = aff[n.value()];
      const int s = score(v, *shape);
      if (s > best) {
        best = s;
        ties = 1;
        chosen = n;
      } else if (s == best && K == fgd_policy_kind::random) {
        ++ties;  // Random: a uniform choice among all feasible nodes
        if (uniform_index(ctx.rng(), ties) == 0) chosen = n;
      }
    }
    if (!chosen) return std::nullopt;
    return make(ctx, *chosen, r, choose(ctx, fgd_view(c, *chosen), *shape));
  }

  /// The node score of this policy (Random: 0 everywhere, the choice is the tie-break).
  [[nodiscard]] int score(const fgd_node& v, const fgd_pod_shape& p) const noexcept {
    switch (K) {
      case fgd_policy_kind::random:
        return 0;
      case fgd_policy_kind::dotprod:
        return fgd_dotprod_score(v, p);
      case fgd_policy_kind::clustering:
        return fgd_clustering_score(v, p);
      case fgd_policy_kind::packing:
        return fgd_gpu_packing_score(v, p);
      case fgd_policy_kind::bestfit:
        return fgd_best_fit_score(v, p);
      case fgd_policy_kind::fgd:
        return m_ ? fgd_score(v, p, *m_, fgd_fragmentation(v, *m_)).first : 0;
    }
    return 0;
  }

 private:
  [[nodiscard]] fgd_gpu_choice choose(const schedule_context& ctx, const fgd_node& v,
                                      const fgd_pod_shape& p) const {
    if constexpr (K == fgd_policy_kind::random) return fgd_random_gpus(v, p, ctx.rng());
    if constexpr (K == fgd_policy_kind::fgd) {
      if (m_) return fgd_score(v, p, *m_, fgd_fragmentation(v, *m_)).second;
    }
    return fgd_best_fit_gpus(v, p);
  }
  static std::optional<task_allocation> make(const schedule_context& ctx, node_index n,
                                             const task_request& r, const fgd_gpu_choice& ch) {
    task_allocation a;
    a.node = n;
    a.cpu = r.cpu;
    a.memory = r.memory;
    const auto first = ctx.state().first_gpu(n).value();
    const milli_gpu m = r.gpu.kind == gpu_demand_kind::share ? r.gpu.share : whole_gpu_milli;
    for (int g : ch.gpus()) {
      a.gpus.push_back(
          {gpu_index{static_cast<gpu_index::rep>(first + static_cast<unsigned>(g))}, m, 0, false});
    }
    return a;
  }

  std::shared_ptr<const target_workload> m_;
};

/// Random: a uniformly random feasible node, random GPU fit (the table in the file comment).
using random_packing = fgd_family_packing<fgd_policy_kind::random>;
/// DotProd: `100 x (1 - <node_free/max, pod/max> / 2)` on (CPU, GPU), best-fit GPUs.
using dotprod_packing = fgd_family_packing<fgd_policy_kind::dotprod>;
/// GpuClustering: bands by the node's pod affinities, fuller nodes higher; best-fit GPUs.
using gpu_clustering_packing = fgd_family_packing<fgd_policy_kind::clustering>;
/// GpuPacking: shared GPUs, then free GPUs of used nodes, then empty nodes; best-fit GPUs.
using gpu_packing_packing = fgd_family_packing<fgd_policy_kind::packing>;
/// BestFit: `100 x (1 - sum_i 0.5 (free_i - req_i) / max_i)`, best-fit GPUs.
using fgd_best_fit_packing = fgd_family_packing<fgd_policy_kind::bestfit>;
/// FGD: `100 x sigmoid(-dF / 1000)`, dF the fragmentation increase against the target
/// workload; the GPUs of least dF.
using fgd_packing = fgd_family_packing<fgd_policy_kind::fgd>;

static_assert(packing_policy<random_packing>);
static_assert(packing_policy<fgd_packing>);

GPUSCHED_END_NAMESPACE
