// SPDX-License-Identifier: Apache-2.0
/// @file
/// The FGD packing experiment (Weng et al., USENIX ATC'23, Sec. 6), reproduced from the
/// behaviour of its simulator: arrivals only (no pod ever finishes), a pod that fails is dropped,
/// the workload is inflated ("tuned") to a target share of cluster GPUs by seeded sampling with
/// replacement, pods are sorted by name and shuffled with the seed (the sampled extra pods come
/// after the shuffled ones), and the metrics are binned by the arrived workload %.
///
/// Metrics after every pod event (placed or failed):
/// - arrived % = GPU milli requested by all pods so far / cluster milli x 100 (binned: rounded
///   to an integer; a bin holds the mean of its events, or a neighbour's when it has none);
/// - allocation % = allocated GPU milli / cluster milli x 100 (unallocated % = 100 - it);
/// - fragmentation % = sum over nodes of F_n(M) / cluster milli x 100, and fragmentation ratio
///   % = the same over idle milli.
///
/// Speed: FGD needs F_n before and after every candidate placement on every node. The runner
/// keeps F_n per node and a per (node, pod shape) score cache stamped with the node's version,
/// so only the node a pod lands on is recomputed ("incremental fragmentation"); one FGD run on
/// the default openb trace (10,866 pods, 1,213 nodes) takes well under a second.
#pragma once

#include <algorithm>  // std::sort
#include <chrono>
#include <cmath>  // std::lround
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gpusched/config.hpp>
#include <gpusched/core/error.hpp>
#include <gpusched/core/random.hpp>
#include <gpusched/policy/packing/fgd.hpp>
#include <gpusched/resource/gpu_model.hpp>
#include <gpusched/trace/openb.hpp>

GPUSCHED_BEGIN_NAMESPACE

/// @brief One run's settings.
struct fgd_run_config {
  fgd_policy_kind policy = fgd_policy_kind::fgd;
  std::uint64_t seed = 42;   ///< shuffle, inflation and tie-break seed
  double tune = 1.3;         ///< target total GPU request as a share of cluster GPUs (<=0: none)
  double popularity = 95;    ///< target-workload coverage threshold, %
  bool cache_scores = true;  ///< FGD: reuse a node's score until the node changes (same result)
  /// Equal node scores: false (default) takes the first node in the run's node order (see
  /// `permute_nodes`), true a uniform choice per pod as stock Kubernetes `selectHost` does. The
  /// published results are reproduced only by first-node ties (see the project's FGD notes:
  /// random ties put GpuClustering and GpuPacking 3 points below their published allocation).
  bool random_ties = false;
  /// The node order that first-node ties follow: true (default) a seeded random permutation of
  /// the node list sorted by name, drawn after the workload and fixed for the whole run; false
  /// the name order itself. The permutation is what the simulator does: `syncClusterResourceList`
  /// (`pkg/simulator/simulator.go`) sorts the nodes by name and renames the i-th to
  /// `"%04d-" + name` with the i-th entry of `rand.Perm(len(nodes))`; its `selectHost` takes the
  /// smallest name among equal scores, so ties go to the first node of a random permutation.
  /// It matters most for CPU-only pods, which GpuClustering and GpuPacking score 0 everywhere
  /// and FGD 50 on many nodes, so the tie order decides where they land.
  bool permute_nodes = true;
};

/// @brief One run's results. Bins are 0..`bins()-1` arrived %.
struct fgd_run_result {
  fgd_policy_kind policy = fgd_policy_kind::fgd;
  std::uint64_t seed = 0;
  double tune = 0;
  std::int64_t total_gpus = 0;
  std::vector<double> alloc;       ///< allocation % per arrived-% bin
  std::vector<double> frag;        ///< fragmentation, % of cluster GPUs
  std::vector<double> frag_ratio;  ///< fragmentation, % of idle GPUs
  std::size_t pods = 0, placed = 0, failed = 0;
  double seconds = 0;  ///< wall time of the placement loop
  [[nodiscard]] std::size_t bins() const noexcept { return alloc.size(); }
  /// Unallocated GPU % at arrived bin `k` (clamped to the last bin).
  [[nodiscard]] double unallocated_at(std::size_t k) const noexcept {
    return alloc.empty() ? 100.0 : 100.0 - alloc[std::min(k, alloc.size() - 1)];
  }
};

/// @brief Metric samples binned by arrived workload %, as the FGD analysis bins them.
///
/// Bins are 0..`round(tune x 100)` (0..100 without tuning). `add` records one event's sample
/// of every metric in the bin of its arrived % (rounded to an integer; events past the last bin
/// are ignored); `finish` gives each bin the mean of its events, or when it has none a
/// neighbour's mean (the bin before, else the bin after: the published analysis's rule), else the
/// value carried over from the bin before (`initial` for bin 0: the cluster does not change
/// between events). Shared by every packing-experiment runner. O(1) per `add`, O(bins x
/// metrics) for `finish`.
class arrived_bins {
 public:
  arrived_bins(double tune, std::size_t metrics)
      : bins_(static_cast<std::size_t>(std::lround(tune > 0 ? tune * 100 : 100)) + 1),
        sum_(metrics, std::vector<double>(bins_, 0.0)),
        count_(bins_, 0) {}

  [[nodiscard]] std::size_t bins() const noexcept { return bins_; }
  /// Records one event at `arrived_pct` with one value per metric. @pre values.size() == metrics
  void add(double arrived_pct, std::initializer_list<double> values) {
    const auto bin = static_cast<std::size_t>(std::lround(arrived_pct));
    if (bin >= bins_) return;
    std::size_t m = 0;
    for (const double v : values) sum_[m++][bin] += v;
    ++count_[bin];
  }
  /// The binned series of metric `m`; `initial` stands before the first event.
  [[nodiscard]] std::vector<double> finish(std::size_t m, double initial) const {
    std::vector<double> out(bins_, 0.0);
    for (std::size_t k = 0; k < bins_; ++k) {
      std::size_t src = k;
      if (count_[k] == 0) {
        if (k > 0 && count_[k - 1] > 0) {
          src = k - 1;
        } else if (k + 1 < bins_ && count_[k + 1] > 0) {
          src = k + 1;
        } else {
          out[k] = k > 0 ? out[k - 1] : initial;
          continue;
        }
      }
      out[k] = sum_[m][src] / static_cast<double>(count_[src]);
    }
    return out;
  }

 private:
  std::size_t bins_;
  std::vector<std::vector<double>> sum_;
  std::vector<std::size_t> count_;
};

/// @brief The experiment over one node list and one pod list.
///
/// Construction builds a catalog of the trace's GPU model names (node models plus any model a
/// pod's `gpu_spec` names but no node has, so that such pods stay unplaceable rather than
/// unconstrained). @throws invalid_value_error when the cluster has no GPU.
class fgd_experiment {
 public:
  /// Most pods a tuned workload may sample (the default openb trace needs about 14,000).
  static constexpr std::size_t max_workload_pods = 10'000'000;

  fgd_experiment(std::vector<openb_node> nodes, std::vector<openb_pod> pods)
      : nodes_(std::move(nodes)), pods_(std::move(pods)) {
    for (const auto& n : nodes_) {
      if (n.gpus > 0) model_of(n.model);
      total_gpus_ += n.gpus;
    }
    if (total_gpus_ == 0) {
      throw invalid_value_error(error_id::invalid_value, "fgd experiment", "nodes", "0 GPUs",
                                "the cluster needs at least one GPU");
    }
    shapes_.reserve(pods_.size());
    for (const auto& p : pods_) {
      fgd_pod_shape s;
      s.cpu = p.cpu_milli;
      s.milli = p.num_gpu == 0 ? 0 : p.gpu_milli;
      s.gpus = p.num_gpu;
      for (const auto& m : p.gpu_spec) s.models.insert(model_of(m));
      shapes_.push_back(s);
    }
  }

  [[nodiscard]] std::int64_t total_gpus() const noexcept { return total_gpus_; }
  [[nodiscard]] std::size_t pod_count() const noexcept { return pods_.size(); }
  [[nodiscard]] std::size_t node_count() const noexcept { return nodes_.size(); }

  /// The pod order of a run: indexes into the pod list (sorted by name, shuffled, then the
  /// tuned extra pods sampled with replacement, or random pods removed). O(pods log pods).
  [[nodiscard]] std::vector<std::size_t> workload(const fgd_run_config& cfg,
                                                  random_engine& rng) const {
    std::vector<std::size_t> order(pods_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      if (pods_[a].name != pods_[b].name) return pods_[a].name < pods_[b].name;
      return a < b;  // equal names keep file order
    });
    for (std::size_t i = order.size(); i > 1; --i) {
      std::swap(order[i - 1], order[uniform_index(rng, i)]);
    }
    if (cfg.tune > 0 && !pods_.empty()) {
      const auto target =
          static_cast<std::int64_t>(cfg.tune * static_cast<double>(total_gpus_) * 1000.0);
      std::int64_t total = 0;
      for (auto i : order) total += pods_[i].gpu_request();
      if (total < target) {
        // Sampling with replacement adds about (target - total) / mean request pods: bounded
        // before the loop (pods asking for no GPU never reach a GPU target), and checked in it.
        if (total == 0) {
          throw invalid_value_error(error_id::invalid_value, "fgd experiment", "tune",
                                    std::to_string(cfg.tune),
                                    "no pod asks for a GPU, so the workload cannot be inflated "
                                    "to a share of the cluster's GPUs");
        }
        const double mean = static_cast<double>(total) / static_cast<double>(pods_.size());
        const double expected = static_cast<double>(target - total) / mean;
        if (expected > static_cast<double>(max_workload_pods)) {
          throw invalid_value_error(
              error_id::invalid_value, "fgd experiment", "tune", std::to_string(cfg.tune),
              "inflating the workload would take about " +
                  std::to_string(static_cast<std::int64_t>(expected)) + " pods (at most " +
                  std::to_string(max_workload_pods) + ")");
        }
        while (total < target) {
          if (order.size() >= 2 * max_workload_pods) {
            throw invalid_value_error(
                error_id::invalid_value, "fgd experiment", "tune", std::to_string(cfg.tune),
                "the inflated workload passed " + std::to_string(2 * max_workload_pods) + " pods");
          }
          const auto i = uniform_index(rng, pods_.size());
          order.push_back(i);
          total += pods_[i].gpu_request();
        }
      } else {
        while (total > target && !order.empty()) {
          const auto k = uniform_index(rng, order.size());
          total -= pods_[order[k]].gpu_request();
          order.erase(order.begin() + static_cast<std::ptrdiff_t>(k));
        }
      }
    }
    return order;
  }

  /// The order in which a run scans the nodes (equal scores: the first scanned node wins): node
  /// indexes sorted by name (equal names: file order), then, with `cfg.permute_nodes`, shuffled
  /// with `rng` (Fisher-Yates). O(nodes log nodes).
  [[nodiscard]] std::vector<std::size_t> node_order(const fgd_run_config& cfg,
                                                    random_engine& rng) const {
    std::vector<std::size_t> order(nodes_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      if (nodes_[a].name != nodes_[b].name) return nodes_[a].name < nodes_[b].name;
      return a < b;
    });
    if (cfg.permute_nodes) {
      for (std::size_t i = order.size(); i > 1; --i) {
        std::swap(order[i - 1], order[uniform_index(rng, i)]);
      }
    }
    return order;
  }

  /// Runs one (policy, seed, tune) cell. Deterministic for equal inputs. O(pods x nodes) plus
  /// the scoring (see the file comment).
  [[nodiscard]] fgd_run_result run(const fgd_run_config& cfg) const {
    random_engine rng(cfg.seed);
    const auto order = workload(cfg, rng);
    const auto scan = node_order(cfg, rng);
    // The target workload comes from the original pod list, before tuning (as the simulator's
    // SetTypicalPods runs before TunePodsByNodeTotalResource).
    const target_workload m(shapes_, cfg.popularity);

    // Shape ids for the score cache.
    std::map<std::tuple<std::int64_t, std::int32_t, int, std::uint64_t>, std::size_t> ids;
    std::vector<std::size_t> shape_id(shapes_.size());
    for (std::size_t i = 0; i < shapes_.size(); ++i) {
      const auto& s = shapes_[i];
      shape_id[i] = ids.emplace(std::tuple{s.cpu, s.milli, s.gpus, s.models.bits()}, ids.size())
                        .first->second;
    }
    const std::size_t nshapes = ids.size();

    std::vector<fgd_node> state(nodes_.size());
    for (std::size_t n = 0; n < nodes_.size(); ++n) {
      auto& v = state[n];
      v.cpu_left = nodes_[n].cpu_milli;
      v.memory_left = nodes_[n].memory_mib;
      v.gpus = nodes_[n].gpus;
      v.model = nodes_[n].gpus > 0 ? *find_model(nodes_[n].model) : gpu_model_id{};
      for (int g = 0; g < v.gpus; ++g) v.left[static_cast<std::size_t>(g)] = 1000;
    }
    const bool fgd = cfg.policy == fgd_policy_kind::fgd;
    std::vector<double> frag(nodes_.size(), 0.0);
    double frag_sum = 0;
    for (std::size_t n = 0; n < nodes_.size(); ++n) {
      frag[n] = fgd_fragmentation(state[n], m);
      frag_sum += frag[n];
    }
    const double frag_sum_initial = frag_sum;
    std::vector<std::uint32_t> version(nodes_.size(), 1);
    std::vector<std::uint32_t> stamp(fgd ? nodes_.size() * nshapes : 0, 0);
    std::vector<std::int16_t> cached(fgd ? nodes_.size() * nshapes : 0, 0);

    const double capacity = static_cast<double>(total_gpus_) * 1000.0;
    arrived_bins binned(cfg.tune, 3);  // allocation, fragmentation, fragmentation ratio

    fgd_run_result res;
    res.policy = cfg.policy;
    res.seed = cfg.seed;
    res.tune = cfg.tune;
    res.total_gpus = total_gpus_;
    res.pods = order.size();
    std::int64_t arrived = 0, allocated = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto pi : order) {
      const auto& pod = pods_[pi];
      const auto& shape = shapes_[pi];
      const auto sid = shape_id[pi];
      arrived += pod.gpu_request();
      int best = -1;
      std::uint64_t ties = 0;
      std::size_t chosen = 0;
      for (const std::size_t n : scan) {
        const auto& v = state[n];
        if (!fgd_fits(v, shape, pod.memory_mib)) continue;
        int s = 0;
        switch (cfg.policy) {
          case fgd_policy_kind::random:
            s = 0;
            break;
          case fgd_policy_kind::dotprod:
            s = fgd_dotprod_score(v, shape);
            break;
          case fgd_policy_kind::clustering:
            s = fgd_clustering_score(v, shape);
            break;
          case fgd_policy_kind::packing:
            s = fgd_gpu_packing_score(v, shape);
            break;
          case fgd_policy_kind::bestfit:
            s = fgd_best_fit_score(v, shape);
            break;
          case fgd_policy_kind::fgd: {
            const auto k = n * nshapes + sid;
            if (!cfg.cache_scores || stamp[k] != version[n]) {
              cached[k] = static_cast<std::int16_t>(fgd_score(v, shape, m, frag[n]).first);
              stamp[k] = version[n];
            }
            s = cached[k];
            break;
          }
        }
        if (s > best) {
          best = s;
          ties = 1;
          chosen = n;
        } else if (s == best && (cfg.random_ties || cfg.policy == fgd_policy_kind::random)) {
          ++ties;
          if (uniform_index(rng, ties) == 0) chosen = n;
        }
      }
      if (best < 0) {
        ++res.failed;
      } else {
        ++res.placed;
        auto& v = state[chosen];
        fgd_gpu_choice ch;
        switch (cfg.policy) {
          case fgd_policy_kind::random:
            ch = fgd_random_gpus(v, shape, rng);
            break;
          case fgd_policy_kind::fgd:
            ch = fgd_score(v, shape, m, frag[chosen]).second;
            break;
          default:
            ch = fgd_best_fit_gpus(v, shape);
            break;
        }
        fgd_apply(v, shape, pod.memory_mib, ch.gpus());
        allocated += shape.total_milli();
        ++version[chosen];
        frag_sum -= frag[chosen];
        frag[chosen] = fgd_fragmentation(v, m);
        frag_sum += frag[chosen];
      }
      const double idle = capacity - static_cast<double>(allocated);
      binned.add(static_cast<double>(arrived) / capacity * 100.0,
                 {static_cast<double>(allocated) / capacity * 100.0, frag_sum / capacity * 100.0,
                  idle > 0 ? frag_sum / idle * 100.0 : 0.0});
    }
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double frag0 = frag_sum_initial / capacity * 100.0;
    res.alloc = binned.finish(0, 0.0);
    res.frag = binned.finish(1, frag0);
    res.frag_ratio = binned.finish(2, frag0);
    return res;
  }

 private:
  gpu_model_id model_of(const std::string& name) {
    if (auto id = find_model(name)) return *id;
    if (model_names_.size() >= gpu_model_set::max_models) {
      throw invalid_value_error(error_id::invalid_value, "fgd experiment", "gpu models", name,
                                "more than 64 distinct GPU model names");
    }
    model_names_.push_back(name);
    return gpu_model_id{static_cast<gpu_model_id::rep>(model_names_.size() - 1)};
  }
  [[nodiscard]] std::optional<gpu_model_id> find_model(const std::string& name) const {
    for (std::size_t i = 0; i < model_names_.size(); ++i) {
      if (model_names_[i] == name) return gpu_model_id{static_cast<gpu_model_id::rep>(i)};
    }
    return std::nullopt;
  }

  std::vector<openb_node> nodes_;
  std::vector<openb_pod> pods_;
  std::vector<fgd_pod_shape> shapes_;
  std::vector<std::string> model_names_;
  std::int64_t total_gpus_ = 0;
};

GPUSCHED_END_NAMESPACE
