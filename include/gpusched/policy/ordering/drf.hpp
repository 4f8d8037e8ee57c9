// SPDX-License-Identifier: Apache-2.0
/// @file
/// Dominant Resource Fairness (Ghodsi et al., NSDI'11): weighted, hierarchical and decayed.
///
/// - `progressive_filling(basis, demands, weights)`: the paper's algorithm on abstract users
///   with one task shape each, over any number of dimensions: repeatedly give one task to the
///   user with the lowest weighted dominant share whose next task still fits; a user whose next
///   task does not fit is saturated and gets nothing more. Returns tasks, shares and the picks.
/// - `drf_ordering`: the ordering policy. Tenants (flat, or a `tenant_tree` org -> team ->
///   user with weights at every level) are kept in one indexed min-heap per tree node, keyed by
///   the weighted dominant share of the node's subtree usage. The next job is the head job of
///   the leaf reached by descending from the root through the lowest-keyed child at every level;
///   with `progressive` (the default) that job's demand is then charged to its tenant and every
///   ancestor, and their keys updated in O(depth x (dimensions + log fanout)) - progressive
///   filling over the queue, exact when every job in the order is admitted. For flat tenant
///   sets (no tree, or one level) `order` takes an equivalent flat path: each tenant's shares
///   along its queue are monotone, so the heap merge equals one radix sort of the keys
///   (share at the job's turn, tenant id, queue position); same order and picks.
/// - Incremental (`drf_options::incremental`): tenant usage is kept across cycles and updated
///   by `on_admitted` / `on_released` in O(D + log T) (an ordered set of tenants by weighted
///   share gives who is served next); the pipeline calls them on admission, eviction, shrink
///   and `pipeline::release` (`incremental_ordering_policy`).
///
/// Tie-break (deterministic, documented, pinned by tests): equal weighted dominant shares (equal
/// to 2^-36) go to the smaller tenant id; within a tenant, jobs go by submit time, then job id.
/// In the paper's weighted example (weights A:2, B:1) the tie at 1/3 therefore goes to A.
///
/// Where usage comes from: by default each tenant's current allocation (`ctx.book().running()`);
/// with `drf_options::history` set, the tenant's decayed usage as an equivalent allocation (see
/// `decay.hpp`), so history counts. Jobs whose tenant is not in the tree are top-level tenants
/// of weight 1; jobs of an inner tenant are queued at a hidden leaf under it with weight 1.
#pragma once

#include <Eigen/Core>

#include <algorithm>  // std::sort
#include <array>
#include <bit>    // std::bit_width
#include <cmath>  // std::isfinite
#include <cstdint>
#include <limits>
#include <memory>  // std::shared_ptr
#include <optional>
#include <set>
#include <span>
#include <string_view>
#include <unordered_map>
#include <utility>  // std::move, std::swap
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/hooks.hpp"
#include "gpusched/policy/ordering/decay.hpp"
#include "gpusched/policy/ordering/share.hpp"
#include "gpusched/workload/tenant.hpp"

GPUSCHED_BEGIN_NAMESPACE

namespace detail {
/// A share quantised to 2^-36 so that equal shares compare equal regardless of rounding noise
/// and the order stays a strict weak order. Shares are clamped to [0, 2^26].
[[nodiscard]] inline std::int64_t share_key(double s) noexcept {
  constexpr double scale = 68719476736.0;  // 2^36
  if (!(s > 0)) return 0;
  if (s > 67108864.0) s = 67108864.0;
  // std::llround for x in [0, 2^62], inline: truncation is exact floor, x - floor(x) is exact
  const double x = s * scale;
  const auto t = static_cast<std::int64_t>(x);
  return t + (x - static_cast<double>(t) >= 0.5 ? 1 : 0);
}
inline constexpr int radix_digit = 11;  ///< bits per digit of `radix_sort`
/// `radix_sort` with a fixed number of passes (so the counting loop unrolls).
template <int Passes>
inline void radix_sort_passes(std::vector<std::uint64_t>& v, std::vector<std::uint64_t>& spare,
                              int shift) {
  constexpr std::size_t radix = std::size_t{1} << radix_digit;
  std::array<std::array<std::uint32_t, radix>, static_cast<std::size_t>(Passes)>
      count{};  // counts of each pass
  for (const auto x : v) {
    const auto y = x >> shift;
    for (int d = 0; d < Passes; ++d)
      ++count[static_cast<std::size_t>(d)][(y >> (d * radix_digit)) & (radix - 1)];
  }
  spare.resize(v.size());
  for (int d = 0; d < Passes; ++d) {
    auto& c = count[static_cast<std::size_t>(d)];
    const int at = shift + d * radix_digit;
    if (c[(v.front() >> at) & (radix - 1)] == v.size()) continue;  // one digit value
    std::uint32_t sum = 0;
    for (auto& slot : c) {
      const auto k = slot;
      slot = sum;
      sum += k;
    }
    for (const auto x : v) spare[c[(x >> at) & (radix - 1)]++] = x;
    v.swap(spare);
  }
}
/// Stable LSD radix sort of `v` (11-bit digits) on bits [`shift`, `shift + bits`) of its
/// elements; bits at and above `shift + bits` must be zero. Elements equal on those bits keep
/// their input order (so low bits below `shift`, e.g. a position, need no pass of their own
/// when the input is already in that order). `spare` is a reusable buffer. Digits that are equal
/// in every element are skipped. O(n x ceil(bits / 11) + 2^11 x passes).
/// @pre `0 <= shift`, `shift + bits <= 64`.
inline void radix_sort(std::vector<std::uint64_t>& v, std::vector<std::uint64_t>& spare, int bits,
                       int shift = 0) {
  if (v.size() < 2) return;
  switch ((bits + radix_digit - 1) / radix_digit) {
    case 0:
      return;
    case 1:
      return radix_sort_passes<1>(v, spare, shift);
    case 2:
      return radix_sort_passes<2>(v, spare, shift);
    case 3:
      return radix_sort_passes<3>(v, spare, shift);
    case 4:
      return radix_sort_passes<4>(v, spare, shift);
    case 5:
      return radix_sort_passes<5>(v, spare, shift);
    default:
      return radix_sort_passes<6>(v, spare, shift);
  }
}
}  // namespace detail

// ---- progressive filling on abstract users ----------------------------------------------------

/// @brief The outcome of `progressive_filling`.
struct drf_result {
  std::vector<std::int64_t> tasks;  ///< tasks per user
  std::vector<double> dominant;     ///< final (unweighted) dominant share per user
  std::vector<std::size_t> picks;   ///< user of each grant, in order
  share_vector used;                ///< total used per dimension
};

/// @brief DRF progressive filling (Algorithm 1 of the paper, continuing past saturated users).
/// `demands[i]` is user i's per-task demand (non-negative, not all zero); `weights` (optional,
/// default 1) divide the dominant share. Ties: smaller user index.
/// @throws invalid_value_error naming the user and field (`demand`, `weight`) on a size
/// mismatch, a negative or non-finite component, an all-zero demand or a non-positive weight.
/// Complexity O(T x (D + log n)) for T tasks granted, D dimensions, n users.
inline drf_result progressive_filling(const resource_basis& basis,
                                      std::span<const share_vector> demands,
                                      std::span<const double> weights = {}) {
  const std::size_t n = demands.size();
  const auto D = static_cast<Eigen::Index>(basis.size());
  if (!weights.empty() && weights.size() != n) {
    throw invalid_value_error(error_id::inconsistent, "progressive filling", "weights",
                              std::to_string(weights.size()),
                              "expected one per user (" + std::to_string(n) + ")");
  }
  std::vector<double> w(n, 1.0), per_task(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string where = "user " + std::to_string(i);
    if (demands[i].size() != D) {
      throw invalid_value_error(error_id::inconsistent, where, "demand",
                                std::to_string(demands[i].size()) + " dimensions",
                                "expected " + std::to_string(D));
    }
    if (!demands[i].isFinite().all() || (demands[i] < 0).any() || (demands[i] == 0).all()) {
      throw invalid_value_error(error_id::invalid_value, where, "demand", "vector",
                                "components must be finite, not negative, and not all zero");
    }
    if (!weights.empty()) {
      if (!std::isfinite(weights[i]) || weights[i] <= 0) {
        throw invalid_value_error(error_id::invalid_value, where, "weight",
                                  std::to_string(weights[i]), "must be finite and greater than 0");
      }
      w[i] = weights[i];
    }
    per_task[i] = basis.dominant_share(demands[i]);
  }
  drf_result out;
  out.tasks.assign(n, 0);
  out.dominant.assign(n, 0.0);
  out.used = basis.zero();
  using item = std::pair<std::int64_t, std::size_t>;  // (key, user): min first
  std::vector<item> heap;
  for (std::size_t i = 0; i < n; ++i) heap.emplace_back(0, i);
  const auto cmp = [](const item& a, const item& b) { return a > b; };
  std::make_heap(heap.begin(), heap.end(), cmp);
  const auto& cap = basis.capacity();
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), cmp);
    const std::size_t i = heap.back().second;
    heap.pop_back();
    if (((out.used + demands[i]) > cap * (1 + 1e-12)).any()) continue;  // saturated
    out.used += demands[i];
    ++out.tasks[i];
    out.picks.push_back(i);
    out.dominant[i] = per_task[i] * static_cast<double>(out.tasks[i]);
    heap.emplace_back(detail::share_key(out.dominant[i] / w[i]), i);
    std::push_heap(heap.begin(), heap.end(), cmp);
  }
  return out;
}

// ---- the ordering policy -------------------------------------------------------------------

/// Options of `drf_ordering`.
struct drf_options {
  /// Each GPU model its own dimension (DRF over GPU types) or one pooled GPU dimension.
  resource_basis::gpu_dimensions gpus = resource_basis::gpu_dimensions::per_model;
  /// Charge each ordered job's demand to its tenant while ordering (progressive filling); when
  /// false, tenants keep the share they had at the start of the cycle (Volcano-style snapshot).
  bool progressive = true;
  /// Decayed usage to use instead of the current allocation (shared, read-only); see decay.hpp.
  std::shared_ptr<const decayed_usage> history{};
  /// Keep each tenant's usage across cycles, updated in O(D + log T) by `on_admitted` and
  /// `on_released` (which the pipeline calls), instead of summing the running jobs in every
  /// `order`. The state mirrors one ledger at one `ledger::version()`; a hook accepts the one
  /// version bump of the change it reports, and `order` rebuilds the state from the ledger when
  /// it sees another ledger or a version not accounted for (a change made behind its back,
  /// e.g. `ledger::release` instead of `pipeline::release`: correct, but not incremental; a
  /// ledger assigned over the mirrored one with an equal version is not detected). Sums are
  /// exact, hence equal to the from-scratch ones, when allocations are whole units (GPUs,
  /// milli-GPUs, CPU, memory); MIG fractions may differ in the last bit. Ignored with `history`.
  bool incremental = false;
};

/// @brief Why a job was placed where it is in the last order: the state at its pick.
struct drf_pick {
  /// The job picked.
  job_id job;
  /// Its tenant (the leaf of the tenant tree it was queued at).
  tenant_id tenant;
  double dominant_share = 0;  ///< the tenant's unweighted dominant share when picked
  double weighted_share = 0;  ///< dominant share / weight (the key that won)
  /// The dimension of that dominant share (`resource_basis::name`), or -1 when the share is 0.
  int dominant_dimension = -1;
};

/// @brief Weighted, hierarchical (and optionally decayed) DRF ordering. See the file comment.
/// Not a comparison ordering: the position of a job depends on the jobs before it.
/// Complexity of `order`: O(R + n log n + n x depth x (D + log T)) for R running tasks, n
/// pending jobs, T tenants, D dimensions; buffers are reused across calls.
class drf_ordering {
 public:
  /// Opts into the ordering family.
  using policy_category = ordering_tag;
  /// The optional hooks it implements, called by the pipeline (`policy/hooks.hpp`).
  using hooks = hook_list<hook::incremental>;

  drf_ordering() = default;
  /// Flat tenants (each job's tenant, weight 1) with options `o`.
  explicit drf_ordering(drf_options o) : opts_(std::move(o)) {}
  /// The tenants and weights of `tenants` (flat or a tree) with options `o`.
  explicit drf_ordering(tenant_tree tenants, drf_options o = {})
      : tree_(std::move(tenants)), opts_(std::move(o)) {}

  /// The policy's name: `drf`, `hdrf` for a tenant tree of several levels, `drf-decayed` with a
  /// usage history.
  [[nodiscard]] std::string_view name() const noexcept {
    if (opts_.history) return "drf-decayed";
    return tree_.height() > 1 ? "hdrf" : "drf";
  }
  /// The tenant tree (empty for flat tenants).
  [[nodiscard]] const tenant_tree& tenants() const noexcept { return tree_; }
  /// The options it was made with.
  [[nodiscard]] const drf_options& options() const noexcept { return opts_; }
  /// The basis of the last `order` call.
  [[nodiscard]] const resource_basis& basis() const noexcept { return basis_; }
  /// One entry per job of the last `order` call, in the order produced: why each went next.
  [[nodiscard]] std::span<const drf_pick> picks() const noexcept { return picks_; }

  /// @brief Incremental hook (`drf_options::incremental`): `j` started holding `grant`. Charges
  /// it to the tenant's tracked usage. O(grant x D + log T). No effect when not incremental or
  /// before the first `order` on this ledger (which builds the state from the ledger).
  void on_admitted(const schedule_context& ctx, const job_spec& j,
                   std::span<const task_allocation> grant) {
    if (!tracking(ctx)) return;
    if (!inc_synced(ctx.book())) {
      // the commit that started `j` bumped the version once; anything else is a change that
      // was not reported: drop the state (the next `order` rebuilds it from the ledger)
      if (inc_expect_ || ctx.book().version() != inc_version_ + 1) {
        inc_book_ = nullptr;
        return;
      }
      inc_version_ = ctx.book().version();
    }
    track(ctx, j, grant, 1.0);
  }
  /// @brief Incremental hook: `j` is about to give back `grant` (release, eviction, or the old
  /// size of a shrink). O(grant x D + log T).
  void on_released(const schedule_context& ctx, const job_spec& j,
                   std::span<const task_allocation> grant) {
    if (!tracking(ctx)) return;
    if (!inc_synced(ctx.book())) {  // a change was not reported: rebuild at the next order
      inc_book_ = nullptr;
      return;
    }
    track(ctx, j, grant, -1.0);
    inc_expect_ = true;  // the release (or commit) that follows bumps the version once
  }
  /// Calls of `order` that read the tracked usage instead of summing the ledger's running jobs.
  [[nodiscard]] std::size_t incremental_cycles() const noexcept { return inc_cycles_; }
  /// The tenant holding resources with the lowest weighted dominant share (ties: smaller
  /// tenant id), from the incremental state (empty before it is built); O(1). Weights are the
  /// tenant's own (meant for one-level trees).
  [[nodiscard]] std::optional<tenant_id> lowest_share_tenant() const {
    if (inc_order_.empty()) return std::nullopt;
    return tenant_id{inc_order_.begin()->second};
  }

  /// Orders `jobs` (see the file comment). Flat tenant sets (no tree, or a tree of one level)
  /// take the flat path, which gives the same order and picks as `order_general`.
  void order(const schedule_context& ctx, std::span<const job_spec*> jobs) {
    if (tree_.height() <= 1) {
      order_flat(ctx, jobs);
    } else {
      order_general(ctx, jobs);
    }
  }

  /// @brief The flat path of `order` (any tree is treated as one level: use only when
  /// `tenants().height() <= 1`). Every tenant's dominant share only grows along its own queue,
  /// so the indexed-heap merge of the general algorithm equals one sort of the keys
  /// (weighted share at the job's turn, tenant id, position in the tenant's queue): each
  /// tenant's keys are computed in one pass over its queue, packed into 64-bit integers and
  /// radix sorted. O(R + n x D + T log T + n x passes), passes <= 6 (a comparison sort of
  /// n log n when the keys do not fit 64 bits).
  void order_flat(const schedule_context& ctx, std::span<const job_spec*> jobs) {
    begin_cycle(ctx);
    const auto D = static_cast<Eigen::Index>(basis_.size());
    const auto uD = static_cast<std::size_t>(D);
    const std::size_t n = jobs.size();
    const bool progressive = opts_.progressive;
    // one sequential pass over the jobs, in input order (the jobs are usually contiguous in
    // memory in that order): queue node, FIFO keys, and the demand in column i of `demand_`
    pending_.resize(n);
    if (progressive) demand_.resize(D, static_cast<Eigen::Index>(n));
    for (std::size_t i = 0; i < n; ++i) {
      const job_spec* j = jobs[i];
      const auto v = j->tenant.value();  // queue_node, its fast path inline
      std::uint32_t k = v < direct_.size() ? direct_[v] : none;
      if (k == none) k = new_queue_node(j->tenant);
      pending_[i] = {k, j->id.value(), static_cast<std::uint32_t>(i),
                     j->submit.time_since_epoch().count(), j};
      if (progressive) {
        auto c = demand_.col(static_cast<Eigen::Index>(i));
        c.setZero();
        basis_.add_demand(c, *j);
      }
    }
    const auto N = static_cast<std::uint32_t>(nodes_.size());
    load_usage(ctx, N);
    // tenants with pending jobs, by tie-break (tenant id): their queues are laid out in this
    // order, so the position of a job in the queues orders (tenant id, queue position)
    end_.assign(N, 0);
    for (const auto& e : pending_) ++end_[e.node];
    by_tie_.clear();
    bool in_order = true;
    for (std::uint32_t k = 0; k < N; ++k) {
      if (end_[k] == 0) continue;
      const std::uint64_t x = (std::uint64_t{nodes_[k].tie} << 32) | k;
      if (!by_tie_.empty() && x < by_tie_.back()) in_order = false;
      by_tie_.push_back(x);
    }
    if (!in_order) std::sort(by_tie_.begin(), by_tie_.end());
    live_.resize(by_tie_.size());
    head_.assign(N, 0);
    std::uint32_t at = 0;
    for (std::size_t i = 0; i < live_.size(); ++i) {
      const auto k = static_cast<std::uint32_t>(by_tie_[i]);
      live_[i] = k;
      head_[k] = at;
      at += end_[k];
      end_[k] = head_[k];
    }
    // scatter compact FIFO records (16 bytes) into queue order, then FIFO inside each queue
    queue_.resize(n);
    for (const auto& e : pending_) queue_[end_[e.node]++] = {e.submit, e.id, e.index};
    for (const auto k : live_) {
      if (end_[k] - head_[k] > 1) {
        std::sort(queue_.begin() + head_[k], queue_.begin() + end_[k],
                  [](const fifo_rec& x, const fifo_rec& y) {
                    if (x.submit != y.submit) return x.submit < y.submit;
                    return x.id < y.id;
                  });
      }
    }
    // each tenant's keys along its queue: the share it has when its next job is picked (its
    // usage plus the demands of the jobs before it in its queue)
    flat_.resize(n);
    packed_.resize(n);
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = 0;
    const double* inv = basis_.inverse_capacity().data();
    const double* dem = demand_.data();
    constexpr std::uint32_t ahead = 8;  // prefetch distance (demand columns are read randomly)
    for (const auto k : live_) {
      scratch_ = usage_.col(k);
      double* u = scratch_.data();
      const double w = nodes_[k].weight;
      for (std::uint32_t p = head_[k]; p < end_[k]; ++p) {
        if (progressive && p + ahead < n) prefetch(dem + uD * queue_[p + ahead].index);
        double best = 0;
        int dim = -1;
        for (Eigen::Index d = 0; d < D; ++d) {
          const double v = u[d] * inv[d];
          if (d == 0 || v > best) {
            best = v;
            dim = static_cast<int>(d);
          }
        }
        if (!(best > 0)) dim = -1;
        flat_[p] = {best, queue_[p].index, k, dim};
        const std::int64_t key = detail::share_key(best / w);
        packed_[p] = static_cast<std::uint64_t>(key);
        lo = std::min(lo, key);
        hi = std::max(hi, key);
        if (progressive && p + 1 < end_[k]) {
          const double* c = dem + uD * queue_[p].index;
          for (Eigen::Index d = 0; d < D; ++d) u[d] += c[d];
        }
      }
    }
    // sort (key, position): packed into 64 bits and radix sorted on the key bits only when it
    // fits (the radix sort is stable and `packed_` is in position order)
    if (n == 0) {
      picks_.clear();
      return;
    }
    picks_.resize(n);
    const int pbits = static_cast<int>(std::bit_width(n - 1));
    const int kbits = static_cast<int>(std::bit_width(static_cast<std::uint64_t>(hi - lo)));
    if (kbits + pbits <= 64) {
      for (std::uint32_t p = 0; p < n; ++p) {
        packed_[p] = ((packed_[p] - static_cast<std::uint64_t>(lo)) << pbits) | p;
      }
      detail::radix_sort(packed_, spare_, kbits, pbits);
      const std::uint64_t mask = (std::uint64_t{1} << pbits) - 1;
      for (std::size_t i = 0; i < n; ++i) {
        if (i + ahead < n) prefetch(&flat_[packed_[i + ahead] & mask]);
        emit(jobs, i, static_cast<std::uint32_t>(packed_[i] & mask));
      }
    } else {
      wide_.resize(n);
      for (std::uint32_t p = 0; p < n; ++p) wide_[p] = {static_cast<std::int64_t>(packed_[p]), p};
      std::sort(wide_.begin(), wide_.end());
      for (std::size_t i = 0; i < n; ++i) emit(jobs, i, wide_[i].second);
    }
  }

  /// @brief The general algorithm of `order` (one indexed heap per tree node), for any tree.
  /// Public so that tests can check the flat path against it.
  void order_general(const schedule_context& ctx, std::span<const job_spec*> jobs) {
    begin_cycle(ctx);
    // one sequential pass over the jobs: queue node, inline sort keys, demand vector
    pending_.clear();
    const auto D = static_cast<Eigen::Index>(basis_.size());
    if (opts_.progressive) demand_.setZero(D, static_cast<Eigen::Index>(jobs.size()));
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const job_spec* j = jobs[i];
      pending_.push_back({queue_node(j->tenant), j->id.value(), static_cast<std::uint32_t>(i),
                          j->submit.time_since_epoch().count(), j});
      if (opts_.progressive) basis_.add_demand(demand_.col(static_cast<Eigen::Index>(i)), *j);
    }
    const auto N = static_cast<std::uint32_t>(nodes_.size());
    const std::uint32_t root = N;
    for (auto& nd : nodes_) {
      if (nd.parent == root_marker) nd.parent = root;
    }
    // bucket the pending jobs by queue node (counting sort), then FIFO inside each bucket; the
    // keys are stored inline so the sort does not chase job pointers
    head_.assign(N + 1, 0);
    end_.assign(N, 0);
    for (const auto& e : pending_) ++head_[e.node + 1];
    for (std::uint32_t k = 0; k < N; ++k) head_[k + 1] += head_[k];
    sorted_.resize(pending_.size());
    for (std::uint32_t k = 0; k < N; ++k) end_[k] = head_[k];
    for (const auto& e : pending_) sorted_[end_[e.node]++] = e;
    for (std::uint32_t k = 0; k < N; ++k) {
      if (end_[k] - head_[k] > 1) {
        std::sort(sorted_.begin() + head_[k], sorted_.begin() + end_[k], fifo_less);
      }
    }
    head_.resize(N);

    load_usage(ctx, N);

    key_.resize(N);
    for (std::uint32_t k = 0; k < N; ++k) key_[k] = key_of(k);
    if (heaps_.size() < N + 1) heaps_.resize(N + 1);
    for (std::uint32_t k = 0; k <= N; ++k) heaps_[k].clear();
    pos_.assign(N, 0);
    active_.assign(N, 0);
    for (std::uint32_t k = 0; k < N; ++k) {
      if (end_[k] > head_[k]) activate(k);
    }

    picks_.clear();
    std::size_t out = 0;
    while (!heaps_[root].empty()) {
      std::uint32_t k = heaps_[root].front().node;
      while (!heaps_[k].empty()) k = heaps_[k].front().node;
      const entry& e = sorted_[head_[k]++];
      jobs[out++] = e.job;
      const double dom = basis_.dominant_share(usage_.col(k));
      picks_.push_back({e.job->id, nodes_[k].tenant, dom, dom / nodes_[k].weight,
                        dom > 0 ? basis_.dominant_dimension(usage_.col(k)) : -1});
      if (opts_.progressive) {
        const auto d = demand_.col(e.index);
        for (std::uint32_t p = k; p != root; p = nodes_[p].parent) {
          usage_.col(p) += d;
          key_[p] = key_of(p);
          fix(p);
        }
      }
      if (head_[k] == end_[k]) deactivate(k);
    }
    GPUSCHED_ASSERT(out == jobs.size());
  }

 private:
  struct node {
    std::uint32_t parent;  // root: nodes_.size()
    double weight;
    std::uint32_t tie;  // tenant id value: smaller first
    tenant_id tenant;
  };
  struct entry {
    std::uint32_t node;
    std::uint32_t id;
    std::uint32_t index;  // position in the input (column of demand_)
    sim_duration::rep submit;
    const job_spec* job;
  };

  // flat path: a FIFO record in queue order, and the state at a job's turn
  struct fifo_rec {
    sim_duration::rep submit;
    std::uint32_t id;
    std::uint32_t index;  // position in the input (column of demand_, entry of pending_)
  };
  struct flat_pick {
    double share;  // unweighted dominant share at the job's turn
    std::uint32_t index;
    std::uint32_t node;
    int dim;
  };

  static bool fifo_less(const entry& a, const entry& b) noexcept {
    if (a.submit != b.submit) return a.submit < b.submit;
    return a.id < b.id;
  }

  /// Resets the per-cycle state: basis, tree nodes, queue nodes of running tenants.
  void begin_cycle(const schedule_context& ctx) {
    basis_ = resource_basis(ctx.state(), opts_.gpus);
    if (opts_.history) GPUSCHED_EXPECTS(opts_.history->dimensions() == basis_.size());
    nodes_.clear();
    extra_.clear();
    for (const auto v : touched_) direct_[v] = none;
    touched_.clear();
    for (std::uint32_t i = 0; i < tree_.size(); ++i) {
      nodes_.push_back({tree_.parent(i), tree_[i].weight, tree_[i].id.value(), tree_[i].id});
    }
    inc_live_ = tracking(ctx) && inc_synced(ctx.book()) &&
                inc_basis_.capacity().size() == basis_.capacity().size();
    if (inc_live_) {
      ++inc_cycles_;
      for (const auto t : inc_tenant_) (void)queue_node(t);
    } else {
      for (const auto& r : ctx.book().running()) (void)queue_node(r.spec.tenant);
    }
  }

  /// Usage of the `N` nodes: own usage at queue nodes, then added to every ancestor.
  /// @pre parents are resolved (the root is `N`; on the flat path every parent is a root).
  void load_usage(const schedule_context& ctx, std::uint32_t N) {
    const auto D = static_cast<Eigen::Index>(basis_.size());
    usage_.setZero(D, N);
    scratch_ = basis_.zero();
    if (opts_.history) {
      for (std::uint32_t k = 0; k < N; ++k) {
        if (k < tree_.size() && !tree_.is_leaf(k)) continue;
        scratch_ = opts_.history->equivalent_allocation(nodes_[k].tenant, ctx.now());
        add_up(k, N);
      }
    } else if (inc_live_) {
      for (std::size_t s = 0; s < inc_tenant_.size(); ++s) {
        scratch_ = inc_usage_[s];
        add_up(queue_node(inc_tenant_[s]), N);
      }
    } else {
      const bool sync = opts_.incremental;
      if (sync) reset_tracking(ctx);
      for (const auto& r : ctx.book().running()) {
        scratch_.setZero();
        basis_.add_running(scratch_, ctx.state(), r);
        add_up(queue_node(r.spec.tenant), N);
        if (sync) inc_usage_[track_slot(r.spec.tenant)] += scratch_;
      }
      if (sync) {
        for (std::uint32_t s = 0; s < inc_tenant_.size(); ++s) rekey(s);
      }
    }
  }

  // ---- incremental state ----
  void reset_tracking(const schedule_context& ctx) {
    inc_book_ = &ctx.book();
    inc_version_ = ctx.book().version();
    inc_expect_ = false;
    inc_basis_ = basis_;
    inc_slot_.clear();
    inc_tenant_.clear();
    inc_usage_.clear();
    inc_key_.clear();
    inc_order_.clear();
  }
  std::uint32_t track_slot(tenant_id t) {
    auto [it, fresh] = inc_slot_.try_emplace(t, static_cast<std::uint32_t>(inc_tenant_.size()));
    if (fresh) {
      inc_tenant_.push_back(t);
      inc_usage_.push_back(inc_basis_.zero());
      inc_key_.push_back(-1);  // not in inc_order_ yet
    }
    return it->second;
  }
  double tracked_weight(tenant_id t) const {
    const auto p = tree_.find(t);
    return p && tree_.is_leaf(*p) ? tree_[*p].weight : 1.0;
  }
  /// Re-sorts tenant slot `s` in `inc_order_` after its usage changed. O(D + log T).
  void rekey(std::uint32_t s) {
    const auto tie = inc_tenant_[s].value();
    if (inc_key_[s] >= 0) inc_order_.erase({inc_key_[s], tie});
    if ((inc_usage_[s] == 0).all()) {  // holds nothing: not ranked
      inc_key_[s] = -1;
      return;
    }
    inc_key_[s] = detail::share_key(inc_basis_.dominant_share(inc_usage_[s]) /
                                    tracked_weight(inc_tenant_[s]));
    inc_order_.insert({inc_key_[s], tie});
  }
  /// Whether the hooks update a tracked state of `ctx`'s ledger.
  [[nodiscard]] bool tracking(const schedule_context& ctx) const noexcept {
    return opts_.incremental && !opts_.history && inc_book_ == &ctx.book();
  }
  /// Whether the tracked state mirrors `book`: its version is the one last accounted for, or
  /// one more when a reported release (`on_released`) was pending. Accepts the pending bump.
  bool inc_synced(const ledger& book) noexcept {
    if (inc_book_ != &book) return false;
    const auto v = book.version();
    if (inc_expect_ && v == inc_version_ + 1) {
      inc_version_ = v;
      inc_expect_ = false;
    }
    return v == inc_version_;
  }
  void track(const schedule_context& ctx, const job_spec& j, std::span<const task_allocation> grant,
             double sign) {
    const auto s = track_slot(j.tenant);
    for (const auto& t : grant) inc_basis_.add_allocation(inc_usage_[s], ctx.state(), t, sign);
    rekey(s);
  }

  /// Writes the job at flat position `p` as the `i`-th of the order, with its pick.
  /// @pre `picks_.size() > i`.
  void emit(std::span<const job_spec*> jobs, std::size_t i, std::uint32_t p) {
    const flat_pick& f = flat_[p];
    const entry& e = pending_[f.index];
    jobs[i] = e.job;
    const node& nd = nodes_[f.node];
    picks_[i] = {job_id{e.id}, nd.tenant, f.share, f.share / nd.weight, f.dim};
  }
  /// A read hint (no effect on results).
  static void prefetch(const void* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
  }

  std::int64_t key_of(std::uint32_t k) const noexcept {
    return detail::share_key(basis_.dominant_share(usage_.col(k)) / nodes_[k].weight);
  }
  // A heap entry carries its node's sort key, so sifting compares without chasing key_ and
  // nodes_ (the hot loop of `order`: one sift per pick).
  struct heap_entry {
    std::int64_t key;
    std::uint32_t tie;
    std::uint32_t node;
  };
  heap_entry entry_of(std::uint32_t k) const noexcept { return {key_[k], nodes_[k].tie, k}; }
  static bool less(const heap_entry& a, const heap_entry& b) noexcept {
    if (a.key != b.key) return a.key < b.key;
    if (a.tie != b.tie) return a.tie < b.tie;
    return a.node < b.node;  // a hidden leaf ranks after its tenant's children of the same id
  }

  // ---- one indexed binary heap per node (its active children) ----
  // Hole-based sifts: the moving entry is written once, at its final place.
  void sift_up(std::vector<heap_entry>& h, std::size_t i) {
    const heap_entry e = h[i];
    while (i > 0) {
      const std::size_t p = (i - 1) / 2;
      if (!less(e, h[p])) break;
      h[i] = h[p];
      pos_[h[i].node] = static_cast<std::uint32_t>(i);
      i = p;
    }
    h[i] = e;
    pos_[e.node] = static_cast<std::uint32_t>(i);
  }
  void sift_down(std::vector<heap_entry>& h, std::size_t i) {
    const heap_entry e = h[i];
    const std::size_t n = h.size();
    for (;;) {
      const std::size_t l = 2 * i + 1;
      if (l >= n) break;
      std::size_t m = l;
      if (l + 1 < n && less(h[l + 1], h[l])) m = l + 1;
      if (!less(h[m], e)) break;
      h[i] = h[m];
      pos_[h[i].node] = static_cast<std::uint32_t>(i);
      i = m;
    }
    h[i] = e;
    pos_[e.node] = static_cast<std::uint32_t>(i);
  }
  void activate(std::uint32_t k) {
    for (;;) {
      if (active_[k]) return;
      active_[k] = 1;
      const auto p = nodes_[k].parent;
      auto& h = heaps_[p];
      const bool parent_was_idle = h.empty();
      pos_[k] = static_cast<std::uint32_t>(h.size());
      h.push_back(entry_of(k));
      sift_up(h, h.size() - 1);
      if (p == nodes_.size() || !parent_was_idle) return;
      k = p;
    }
  }
  void deactivate(std::uint32_t k) {
    for (;;) {
      active_[k] = 0;
      const auto p = nodes_[k].parent;
      auto& h = heaps_[p];
      const std::size_t i = pos_[k];
      h[i] = h.back();
      pos_[h[i].node] = static_cast<std::uint32_t>(i);
      h.pop_back();
      if (i < h.size()) {
        const auto moved = h[i].node;
        sift_up(h, i);
        sift_down(h, pos_[moved]);
      }
      if (p == nodes_.size() || !h.empty()) return;
      k = p;
    }
  }
  void fix(std::uint32_t k) {
    if (!active_[k]) return;
    auto& h = heaps_[nodes_[k].parent];
    h[pos_[k]].key = key_[k];
    sift_up(h, pos_[k]);
    sift_down(h, pos_[k]);
  }

  /// The queue node of a tenant: a tree leaf, the hidden leaf of an inner tenant, or an
  /// implicit top-level tenant. Creates nodes on first use within a cycle.
  std::uint32_t queue_node(tenant_id t) {
    // fast path: a direct table for small tenant ids (filled on first use in this call)
    const auto v = t.value();
    if (v < direct_.size() && direct_[v] != none) return direct_[v];
    return new_queue_node(t);
  }
  static constexpr std::uint32_t none = 0xFFFFFFFEu;
  static constexpr std::uint32_t direct_limit = 1u << 22;
  /// `queue_node` on a miss of the direct table: resolves the node and memoises it (in the
  /// direct table for small ids, else in `extra_`).
  std::uint32_t new_queue_node(tenant_id t) {
    const auto v = t.value();
    if (v >= direct_limit) return slow_queue_node(t, false);
    if (v >= direct_.size()) direct_.resize(std::max<std::size_t>(v + 1, direct_.size() * 2), none);
    const auto k = slow_queue_node(t, true);
    direct_[v] = k;
    touched_.push_back(v);
    return k;
  }
  /// The node of `t` when not memoised; `fresh_id` (the caller memoises it): create the node of a
  /// tenant outside the tree without looking in `extra_`.
  std::uint32_t slow_queue_node(tenant_id t, bool fresh_id) {
    if (const auto p = tree_.find(t)) {
      if (tree_.is_leaf(*p)) return *p;
      if (fresh_id) return add_node(*p, 1.0, t);  // hidden leaf of an inner tenant
      auto [it, fresh] = extra_.try_emplace(t, 0);
      if (fresh) it->second = add_node(*p, 1.0, t);
      return it->second;
    }
    if (fresh_id) return add_node(root_marker, 1.0, t);
    auto [it, fresh] = extra_.try_emplace(t, 0);
    if (fresh) it->second = add_node(root_marker, 1.0, t);
    return it->second;
  }
  static constexpr std::uint32_t root_marker = 0xFFFFFFFFu;
  std::uint32_t add_node(std::uint32_t parent, double w, tenant_id t) {
    const auto k = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back({parent, w, t.value(), t});
    return k;
  }

  void add_up(std::uint32_t k, std::uint32_t root) {
    for (std::uint32_t p = k; p != root && p != root_marker; p = nodes_[p].parent) {
      usage_.col(p) += scratch_;
    }
  }

  tenant_tree tree_;
  drf_options opts_;
  resource_basis basis_;
  std::vector<node> nodes_;
  std::unordered_map<tenant_id, std::uint32_t> extra_;
  Eigen::ArrayXXd usage_, demand_;
  share_vector scratch_;
  std::vector<std::int64_t> key_;
  std::vector<std::vector<heap_entry>> heaps_;
  std::vector<std::uint32_t> pos_, head_, end_;
  std::vector<std::uint8_t> active_;
  std::vector<entry> pending_, sorted_;
  std::vector<std::uint32_t> direct_, touched_;
  std::vector<drf_pick> picks_;
  // flat path
  std::vector<std::uint32_t> live_;
  std::vector<fifo_rec> queue_;
  std::vector<flat_pick> flat_;
  std::vector<std::uint64_t> packed_, spare_, by_tie_;
  std::vector<std::pair<std::int64_t, std::uint32_t>> wide_;
  // incremental state (drf_options::incremental)
  const ledger* inc_book_ = nullptr;  // the ledger mirrored (null: not built)
  std::uint64_t inc_version_ = 0;     // the ledger version the state reflects
  bool inc_expect_ = false;           // a reported release is pending: one more bump expected
  bool inc_live_ = false;             // this cycle reads the tracked usage
  std::size_t inc_cycles_ = 0;
  resource_basis inc_basis_;
  std::unordered_map<tenant_id, std::uint32_t> inc_slot_;
  std::vector<tenant_id> inc_tenant_;
  std::vector<share_vector> inc_usage_;
  std::vector<std::int64_t> inc_key_;
  std::set<std::pair<std::int64_t, tenant_id::rep>> inc_order_;  // (key, tenant id)
};

GPUSCHED_END_NAMESPACE
