// SPDX-License-Identifier: Apache-2.0
/// @file
/// Communication-aware job speed: how fast a data-parallel job progresses where its ranks
/// landed. Off by default (`comm_config::enabled`); the simulator then runs every job at its
/// trace speed wherever it is placed.
///
/// Model. A job iterates: `compute_ms` of computation per iteration, then a ring all-reduce of
/// `sync_bytes` (its gradients) over its `n` ranks (one rank per GPU it holds), which takes
/// `2 (n - 1) / n x sync_bytes / B` for the ring's bottleneck bandwidth B (the standard ring
/// all-reduce cost: every byte is sent 2(n-1)/n times per rank; Patarasuk and Yuan, 2009; the
/// bound NCCL's ring reaches). The trace's duration is taken as the job's time with its ring
/// at `reference_gbps`, so the job progresses at
///
///     rate = (compute + allreduce(reference)) / (compute + allreduce(B)), at most 1,
///
/// times its elastic share (held / requested GPUs). One GPU: no all-reduce, rate 1.
///
/// The bottleneck B of a placement (GB/s per direction, hardware-facts 2.2 and 2.6):
/// - inside a node: for each node holding two or more of the job's GPUs, the best ring over
///   those GPUs in the node type's bandwidth tables (`node_distances::ring_mbps`: the widest
///   ring whose every hop has that direct NVLink or PCIe bandwidth; NCCL's rings are bounded
///   by their slowest hop, hardware-facts 3.5), or `intra_node_gbps` for a node without a type;
/// - between nodes (a job on two or more nodes): each node's network interface (`nic_gbps`),
///   and, at each fabric level where the job spans two or more domains, the uplink of each of
///   those domains. A domain's uplink is its level's `fabric_level::uplink_gbps` (read as GB/s
///   per direction) or, when that is 0 (unknown), the sum of its members' bandwidth (NICs for a
///   leaf) divided by the level's `oversubscription`: a 2:1 leaf of 8 nodes at 12.5 GB/s has a
///   50 GB/s uplink. A ring ordered by node and domain enters and leaves each node and each
///   crossed domain once, so each carries one flow of the job.
///
/// Sharing (`share_links`): the jobs whose rings cross a NIC or an uplink share its bandwidth
/// max-min fairly (progressive filling, each job's flow capped by its own intra-node
/// bottleneck), recomputed at every start, end and resize of a job that spans nodes; a job
/// whose share changes has its rate changed from that instant (`progress_state::change_rate`).
/// Without sharing each job sees every link's full bandwidth.
///
/// Per-job figures come with the job (`sim_job::comm`); a job without them gets one of
/// `default_comm_mix` (drawn from its id, so the same job gets the same model in every run).
#pragma once

#include <algorithm>  // std::min
#include <array>
#include <bit>    // std::popcount
#include <cmath>  // std::llround
#include <cstdint>
#include <limits>
#include <memory>  // std::shared_ptr
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/cluster/allocation.hpp"
#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/ids.hpp"
#include "gpusched/sim/records.hpp"
#include "gpusched/topology/distances.hpp"
#include "gpusched/topology/fabric.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief One model of the default mix, with where its figures come from.
struct comm_model_entry {
  std::string_view model;   ///< the model's name as Gavel gives it
  double compute_ms;        ///< 1000 / (Gavel's measured V100 steps/s at one GPU)
  double gradient_mb;       ///< parameters x 4 bytes (fp32 gradients), 10^6 bytes
  std::string_view source;  ///< where the figures come from
};

/// The default mix for jobs without figures: the four distributed-capable models of Gavel's
/// workload (Narayanan et al., OSDI'20; its Philly-derived traces draw the model of a
/// multi-GPU job among them), one in four each. Compute per iteration is 1000 / the steps per
/// second Gavel measured on one V100 (`simulation_throughputs.json`, stored in
/// shared/data/gavel-philly-msr, verified); gradient sizes are the models' parameter counts x 4
/// bytes, from the model papers and reference code (not re-measured here).
inline constexpr std::array<comm_model_entry, 4> default_comm_mix{{
    {"ResNet-50 (ImageNet, batch 64)", 227.54, 102.2,
     "Gavel v100 ('ResNet-50 (batch size 64)', 1) = 4.3948 steps/s; 25.56 M parameters "
     "(He et al. 2016; torchvision resnet50)"},
    {"ResNet-18 (CIFAR-10, batch 128)", 55.57, 44.7,
     "Gavel v100 ('ResNet-18 (batch size 128)', 1) = 17.995 steps/s; 11.17 M parameters "
     "(CIFAR ResNet-18)"},
    {"Transformer (Multi30k, batch 64)", 116.04, 260.0,
     "Gavel v100 ('Transformer (batch size 64)', 1) = 8.6178 steps/s; 65 M parameters "
     "(Transformer base, Vaswani et al. 2017, Table 3)"},
    {"LSTM LM (Wikitext-2, batch 20)", 15.45, 55.8,
     "Gavel v100 ('LM (batch size 20)', 1) = 64.742 steps/s; 13.9 M parameters (PyTorch "
     "word_language_model defaults: 2 x 200 LSTM, 33,278-word vocabulary)"},
}};

/// The default profile of job `id`: entry `splitmix64(id) mod 4` of `default_comm_mix`. O(1).
[[nodiscard]] inline comm_profile default_comm_profile(job_id id) noexcept {
  std::uint64_t z = id.value() + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const auto& e = default_comm_mix[z % default_comm_mix.size()];
  return {e.compute_ms, e.gradient_mb * 1e6};
}

/// Ring all-reduce time, ms: `2 (n - 1) / n x bytes / (gbps x 10^9)` x 1000; 0 for fewer than
/// two ranks or no bytes. @pre gbps > 0 when ranks > 1 and bytes > 0. O(1).
[[nodiscard]] inline double ring_allreduce_ms(int ranks, double bytes, double gbps) noexcept {
  if (ranks < 2 || bytes <= 0) return 0.0;
  const double n = ranks;
  return 2.0 * (n - 1.0) / n * bytes / (gbps * 1e9) * 1e3;
}

/// The speed factor of a job: `(compute + allreduce(reference)) / (compute + allreduce(gbps))`,
/// at most 1, as parts per million (an integer, so that rates stay exact rationals). O(1).
[[nodiscard]] inline std::int64_t comm_factor_ppm(const comm_profile& p, int ranks, double gbps,
                                                  double reference_gbps) noexcept {
  if (ranks < 2 || p.sync_bytes <= 0) return 1'000'000;
  const double ideal = p.compute_ms + ring_allreduce_ms(ranks, p.sync_bytes, reference_gbps);
  const double actual = p.compute_ms + ring_allreduce_ms(ranks, p.sync_bytes, gbps);
  if (!(actual > ideal)) return 1'000'000;
  const auto f = std::llround(ideal / actual * 1e6);
  return std::clamp<std::int64_t>(f, 1, 1'000'000);
}

/// @brief The communication model's settings (see the file comment). Off by default.
struct comm_config {
  /// Whether placement changes job speed at all (off: every job runs at its elastic rate).
  bool enabled = false;
  /// Node types (for `node_spec::topology` handles) and the fabric; none: no node has a type
  /// and there is no switch level (every multi-node job crosses only its nodes' NICs).
  std::shared_ptr<const topology_model> topology{};
  /// A node without a node type: the ring bandwidth among its GPUs, GB/s per direction
  /// (default: one NVLink 2 link, 25 GB/s, hardware-facts 2.2).
  double intra_node_gbps = 25.0;
  /// A node's network bandwidth, GB/s per direction (default: one EDR InfiniBand port,
  /// 100 Gb/s = 12.5 GB/s, hardware-facts 2.6).
  double nic_gbps = 12.5;
  /// The ring bandwidth at which the trace's durations hold (default 25 GB/s: a ring inside
  /// one NVLink 2 node runs at trace speed).
  double reference_gbps = 25.0;
  /// Jobs crossing one NIC or uplink share its bandwidth max-min fairly.
  bool share_links = false;

  /// @throws invalid_value_error naming the field for a non-positive or non-finite bandwidth.
  void validate() const {
    const auto check = [](double v, const char* field) {
      if (!(v > 0) || v > 1e12) {
        throw invalid_value_error(error_id::invalid_value, "comm_config", field, std::to_string(v),
                                  "must be a positive bandwidth (GB/s)");
      }
    };
    check(intra_node_gbps, "intra_node_gbps");
    check(nic_gbps, "nic_gbps");
    check(reference_gbps, "reference_gbps");
  }
};

/// @brief Where a placement's ring runs: its ranks, its intra-node bottleneck and the network
/// links it crosses (ids of `comm_network`).
struct comm_path {
  int ranks = 0;  ///< workers in the ring (GPUs of the placement)
  double intra_gbps = std::numeric_limits<double>::infinity();  ///< inf: no intra-node hop
  std::vector<std::uint32_t> links{};                           ///< NICs and uplinks crossed
};

/// @brief The links of one cluster's network and their capacities: link `i < nodes` is node
/// `i`'s NIC; then, level by level, one uplink per fabric domain.
class comm_network {
 public:
  comm_network() = default;
  /// Builds the links of `c` under `cfg`. @throws invalid_value_error for a bad config, or a
  /// topology model that does not fit `c` (`topology_model::check`). O(nodes x levels).
  comm_network(const cluster& c, const comm_config& cfg) : cfg_(cfg) {
    cfg_.validate();
    if (cfg_.topology) cfg_.topology->check(c);
    nodes_ = c.node_count();
    cap_.assign(nodes_, cfg_.nic_gbps);
    const fabric* f = cfg_.topology ? &cfg_.topology->network() : nullptr;
    const int levels = f != nullptr ? f->level_count() : 0;
    level_base_.assign(static_cast<std::size_t>(levels) + 1, 0);
    for (int l = 1; l <= levels; ++l) {
      const auto base = static_cast<std::uint32_t>(cap_.size());
      level_base_[static_cast<std::size_t>(l)] = base;
      const fabric_level& lv = f->level(l);
      for (std::uint32_t d = 0; d < f->domain_count(l); ++d) {
        double up = lv.uplink_gbps;
        if (!(up > 0)) {
          double members = 0;
          for (const auto m : f->children(l, d)) {
            members += l == 1 ? cap_[m] : cap_[level_base_[static_cast<std::size_t>(l - 1)] + m];
          }
          up = members / (lv.oversubscription > 0 ? lv.oversubscription : 1.0);
        }
        cap_.push_back(up);
      }
    }
    levels_ = levels;
  }

  /// The settings the network was built with.
  [[nodiscard]] const comm_config& config() const noexcept { return cfg_; }
  /// The number of links (NICs and fabric uplinks). O(1).
  [[nodiscard]] std::size_t link_count() const noexcept { return cap_.size(); }
  /// Capacity of link `i`, GB/s per direction.
  [[nodiscard]] double capacity(std::uint32_t i) const noexcept { return cap_[i]; }

  /// The path of a placement (one allocation per task). O(GPUs x levels + distinct nodes^2).
  [[nodiscard]] comm_path path(const cluster& c, std::span<const task_allocation> tasks) const {
    comm_path p;
    // distinct nodes and, per node, the mask of local GPUs (a GPU shared by two tasks of the
    // job is one rank)
    std::vector<std::pair<node_index, gpu_mask>> per_node;
    for (const auto& t : tasks) {
      if (t.gpus.empty()) continue;
      auto it = std::find_if(per_node.begin(), per_node.end(),
                             [&](const auto& e) { return e.first == t.node; });
      if (it == per_node.end()) {
        per_node.emplace_back(t.node, gpu_mask{0});
        it = per_node.end() - 1;
      }
      const auto first = c.first_gpu(t.node).value();
      for (const auto& g : t.gpus) {
        const auto local = g.gpu.value() - first;
        if (local < 32) it->second |= gpu_mask{1} << local;
      }
    }
    for (const auto& [n, m] : per_node) {
      const int k = std::popcount(m);
      p.ranks += k;
      if (k < 2) continue;
      const node_distances* d = cfg_.topology ? cfg_.topology->node_type(c.topology(n)) : nullptr;
      const double bw =
          d != nullptr ? static_cast<double>(d->ring_mbps(m)) / 1000.0 : cfg_.intra_node_gbps;
      // a typed node whose tables give no ring (bandwidth 0) falls back to the default
      p.intra_gbps = std::min(p.intra_gbps, bw > 0 ? bw : cfg_.intra_node_gbps);
    }
    if (per_node.size() < 2) return p;
    for (const auto& e : per_node) p.links.push_back(e.first.value());
    if (levels_ > 0) {
      const fabric& f = cfg_.topology->network();
      std::vector<std::uint32_t> doms;
      for (int l = 1; l <= levels_; ++l) {
        doms.clear();
        for (const auto& e : per_node) {
          const auto d = f.domain(e.first, l);
          if (std::find(doms.begin(), doms.end(), d) == doms.end()) doms.push_back(d);
        }
        if (doms.size() < 2) break;  // one domain here, and so at every level above
        for (const auto d : doms) p.links.push_back(level_base_[static_cast<std::size_t>(l)] + d);
      }
    }
    return p;
  }

  /// The bottleneck of `p` alone (no sharing): the least of its intra-node bottleneck and every
  /// crossed link's capacity (infinity for a path with neither). O(links).
  [[nodiscard]] double bandwidth(const comm_path& p) const noexcept {
    double bw = p.intra_gbps;
    for (const auto l : p.links) bw = std::min(bw, cap_[l]);
    return bw;
  }

  /// Max-min fair shares of the flows `paths` (one flow per path, capped by its intra-node
  /// bottleneck) over the links' capacities, by progressive filling: raise every unfrozen
  /// flow together; a flow freezes at its cap, or when a link it crosses is full. Writes one
  /// bandwidth per path into `out`. O(iterations x (paths + links crossed)), at most
  /// `paths` iterations.
  void max_min(std::span<const comm_path* const> paths, std::vector<double>& out) const {
    const std::size_t n = paths.size();
    out.assign(n, 0.0);
    std::vector<double> left(cap_);
    std::vector<std::uint32_t> users(cap_.size(), 0);
    std::vector<char> frozen(n, 0);
    for (std::size_t j = 0; j < n; ++j) {
      for (const auto l : paths[j]->links) ++users[l];
    }
    std::size_t active = n;
    double level = 0;  // the common bandwidth of unfrozen flows
    while (active > 0) {
      // the next level at which a flow or a link stops the filling
      double next = std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < n; ++j) {
        if (!frozen[j]) next = std::min(next, paths[j]->intra_gbps);
      }
      for (std::size_t l = 0; l < cap_.size(); ++l) {
        if (users[l] > 0) next = std::min(next, level + left[l] / users[l]);
      }
      if (!(next < std::numeric_limits<double>::infinity())) {
        next = level;  // unbounded flows (no link, no intra-node hop): leave them at inf
        for (std::size_t j = 0; j < n; ++j) {
          if (!frozen[j]) out[j] = std::numeric_limits<double>::infinity();
        }
        break;
      }
      const double step = next - level;
      for (std::size_t l = 0; l < cap_.size(); ++l) {
        if (users[l] > 0) left[l] -= step * users[l];
      }
      level = next;
      // freeze the flows at their cap and those crossing a full link
      for (std::size_t j = 0; j < n; ++j) {
        if (frozen[j]) continue;
        bool stop = !(paths[j]->intra_gbps > level);
        for (const auto l : paths[j]->links) stop = stop || left[l] <= 1e-9 * cap_[l];
        if (!stop) continue;
        frozen[j] = 1;
        out[j] = level;
        --active;
        for (const auto l : paths[j]->links) --users[l];
      }
    }
  }

 private:
  comm_config cfg_{};
  std::size_t nodes_ = 0;
  int levels_ = 0;
  std::vector<double> cap_;                // per link, GB/s
  std::vector<std::uint32_t> level_base_;  // first link id of each level's uplinks
};

GPUSCHED_END_NAMESPACE
