// SPDX-License-Identifier: Apache-2.0
/// @file
/// Decisions as values: a verdict (admit, defer, reject) with a structured `reason` saying why
/// (which resource, how much was needed and available, which group, which job blocks, until
/// when), the placement of an admitted gang, and the victims evicted for it; and
/// `reclaim_scope`, what an admission policy hands a preemption policy for a quota reclaim.
#pragma once

#include <bit>  // std::countr_zero, std::countl_zero, std::popcount
#include <cstddef>
#include <cstdint>
#include <memory>  // std::addressof
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "gpusched/cluster/allocation.hpp"
#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/core/ids.hpp"
#include "gpusched/core/time.hpp"
#include "gpusched/workload/job.hpp"
#include "gpusched/workload/ledger.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// What happened to a pending job in a cycle.
enum class verdict : std::uint8_t {
  admit,   ///< placed; the caller starts its tasks (after evicting any victims)
  defer,   ///< stays pending; try again later
  reject,  ///< can never run as specified; the caller should drop or fix it
};

/// Why. Stable codes; `describe` renders them as text.
enum class reason_code : std::uint8_t {
  none,
  placed,                ///< admitted on free resources
  placed_by_preemption,  ///< admitted after evicting `victims`
  insufficient,          ///< not enough free `resource` in the whole cluster
  no_fit,                ///< enough in total, but no node can host a task of `group`
  unschedulable,         ///< a task of `group` exceeds every node, or the gang the cluster's total
  blocked_by_head,       ///< a job ahead (`related`) did not fit and the queue is strict FIFO
  over_quota,            ///< the tenant's quota would be exceeded
  reservation,           ///< would delay `related`'s reservation (backfill)
  backoff,               ///< retried too often; waits until `until`
  no_victims,            ///< no admissible victim set frees enough
  topology,              ///< no network domain at the required level can host the gang
  /// Never admissible: the gang at its minimum size needs more of `resource` than its queue
  /// could ever be given, its nominal quota plus borrowing limit with nothing else in use
  /// (Kueue's potential available; `scope` is the quota node whose limit binds). Waiting
  /// cannot help; comes with `verdict::reject`.
  exceeds_quota,
};

/// The resource a reason is about.
enum class resource_kind : std::uint8_t {
  none,
  gpu,
  gpu_share,
  mig_slot,
  cpu,
  memory,
  gpu_replica,  ///< a replica of a time-sliced / MPS GPU
  /// MIG instances of the profile a task group asks for (`gpu_demand::mig`)
  mig_instance,
};

/// The verdict's name: `admit`, `defer` or `reject`.
constexpr std::string_view to_string(verdict v) noexcept {
  switch (v) {
    case verdict::admit:
      return "admit";
    case verdict::defer:
      return "defer";
    case verdict::reject:
      return "reject";
  }
  return "?";
}
/// The code's name, as in `describe()` and the JSON outputs (`no_fit`, `over_quota`).
constexpr std::string_view to_string(reason_code c) noexcept {
  switch (c) {
    case reason_code::none:
      return "none";
    case reason_code::placed:
      return "placed";
    case reason_code::placed_by_preemption:
      return "placed_by_preemption";
    case reason_code::insufficient:
      return "insufficient";
    case reason_code::no_fit:
      return "no_fit";
    case reason_code::unschedulable:
      return "unschedulable";
    case reason_code::blocked_by_head:
      return "blocked_by_head";
    case reason_code::over_quota:
      return "over_quota";
    case reason_code::reservation:
      return "reservation";
    case reason_code::backoff:
      return "backoff";
    case reason_code::no_victims:
      return "no_victims";
    case reason_code::topology:
      return "topology";
    case reason_code::exceeds_quota:
      return "exceeds_quota";
  }
  return "?";
}
/// The unit's name as `describe()` prints amounts (`GPUs`, `milli-GPU`, `MiB memory`).
constexpr std::string_view to_string(resource_kind r) noexcept {
  switch (r) {
    case resource_kind::none:
      return "none";
    case resource_kind::gpu:
      return "GPUs";
    case resource_kind::gpu_share:
      return "milli-GPU";
    case resource_kind::mig_slot:
      return "MIG slots";
    case resource_kind::cpu:
      return "CPU millicores";
    case resource_kind::memory:
      return "MiB memory";
    case resource_kind::gpu_replica:
      return "GPU replicas";
    case resource_kind::mig_instance:
      return "MIG instances";
  }
  return "?";
}

/// An amount with its unit, singular where English needs it: `1 GPU`, `8 GPUs`, `1 MIG slot`,
/// `500 milli-GPU`, `1 MIG instance`.
inline std::string amount_text(std::int64_t n, resource_kind r) {
  std::string unit(to_string(r));
  if (n == 1 && (r == resource_kind::gpu || r == resource_kind::mig_slot ||
                 r == resource_kind::gpu_replica || r == resource_kind::mig_instance))
    unit.pop_back();
  return std::to_string(n) + " " + unit;
}

/// What happens to one victim of a preemption.
enum class victim_action : std::uint8_t {
  requeue,           ///< stopped now, requeued; restarts from its last checkpoint (or from start)
  suspend,           ///< paused with its state kept by the runtime; resumes later
  shrink,            ///< elastic job releases tasks down to `victim_detail::shrink_to`
  signal_then_wait,  ///< signalled to checkpoint; stopped after `victim_detail::wait`
};

/// The action as a phrase (`requeue from checkpoint`, `signal then wait`).
constexpr std::string_view to_string(victim_action a) noexcept {
  switch (a) {
    case victim_action::requeue:
      return "requeue from checkpoint";
    case victim_action::suspend:
      return "suspend";
    case victim_action::shrink:
      return "shrink";
    case victim_action::signal_then_wait:
      return "signal then wait";
  }
  return "?";
}

/// @brief One victim of a preemption plan, with what is done to it and what it costs.
struct victim_detail {
  /// The victim.
  job_id job{};
  /// What is done to it.
  victim_action action = victim_action::requeue;
  std::int32_t group = -1;      ///< shrink: the group shrunk (-1: every elastic group)
  std::int32_t shrink_to = -1;  ///< shrink: tasks the group keeps
  double gpus = 0;              ///< GPU-equivalents released
  double lost_gpu_seconds = 0;  ///< expected work lost (see policy/preemption/cost.hpp)
  sim_duration wait{0};         ///< signal_then_wait: how long the preemptor waits
  friend bool operator==(const victim_detail&, const victim_detail&) noexcept = default;
};

/// @brief A structured reason. Only the fields that the code uses are set.
///
/// Build one with the factory named after its code (`reason::insufficient(...)`,
/// `reason::no_fit(...)`, `reason::backoff(...)`, ...): each fills exactly the fields that
/// `describe` renders for that code and leaves the others at their defaults. Comparable with
/// `==`; a default-constructed reason has code `none`.
struct reason {
  /// What kind of reason; decides which other fields are set.
  reason_code code = reason_code::none;
  /// The resource the reason is about (`none` when it is not about one).
  resource_kind resource = resource_kind::none;
  std::int64_t needed = 0;     ///< amount needed, in `resource` units (backoff: failed attempts)
  std::int64_t available = 0;  ///< amount available, in `resource` units (no_victims without a
                               ///< resource: candidates tried; backoff by cycles: the cycle)
  std::optional<std::int32_t> group{};  ///< task group concerned, if one
  job_id related{};                     ///< blocking job or reservation holder
  std::optional<sim_time> until{};      ///< reservation start, end of a backoff
  gpu_model_id model{};                 ///< the GPU model, when `resource` is per-model GPUs
  std::optional<std::int32_t> scope{};  ///< the quota node (queue or cohort) that limits, if known
  std::optional<std::int32_t> tasks_placed{};  ///< no_fit: tasks of the gang the best attempt
                                               ///< placed, when known
  friend bool operator==(const reason&, const reason&) noexcept = default;

  /// Admitted on free resources.
  [[nodiscard]] static reason placed() { return {.code = reason_code::placed}; }
  /// Admitted after evicting (or shrinking) other jobs.
  [[nodiscard]] static reason placed_by_preemption() {
    return {.code = reason_code::placed_by_preemption};
  }
  /// Not enough free `r` in the whole cluster: `needed` in all, `available` free.
  [[nodiscard]] static reason insufficient(resource_kind r, std::int64_t needed,
                                           std::int64_t available) {
    return {
        .code = reason_code::insufficient, .resource = r, .needed = needed, .available = available};
  }
  /// Enough in total, but no node can host a task of group `group` needing `needed` of `r`;
  /// `most_free` is the most of `r` free on one node. `tasks_placed`: how far the best attempt
  /// at the gang got, when known.
  [[nodiscard]] static reason no_fit(std::int32_t group, resource_kind r, std::int64_t needed,
                                     std::int64_t most_free,
                                     std::optional<std::int32_t> tasks_placed = std::nullopt) {
    return {.code = reason_code::no_fit,
            .resource = r,
            .needed = needed,
            .available = most_free,
            .group = group,
            .tasks_placed = tasks_placed};
  }
  /// The gang needs `needed` of `r` in all (at its minimum size), more than the whole cluster
  /// has (`cluster_has`).
  [[nodiscard]] static reason unschedulable(resource_kind r, std::int64_t needed,
                                            std::int64_t cluster_has) {
    return {.code = reason_code::unschedulable,
            .resource = r,
            .needed = needed,
            .available = cluster_has};
  }
  /// A task of group `group` needs `needed` of `r`, more than any node has (at most
  /// `most_on_a_node`).
  [[nodiscard]] static reason unschedulable_task(std::int32_t group, resource_kind r,
                                                 std::int64_t needed, std::int64_t most_on_a_node) {
    return {.code = reason_code::unschedulable,
            .resource = r,
            .needed = needed,
            .available = most_on_a_node,
            .group = group};
  }
  /// Task group `group` needs `needed` MIG instances of its profile (at its minimum size), more
  /// than every MIG GPU of the cluster that its request allows could hold together, empty
  /// (`cluster_holds`).
  [[nodiscard]] static reason unschedulable_mig(std::int32_t group, std::int64_t needed,
                                                std::int64_t cluster_holds) {
    return {.code = reason_code::unschedulable,
            .resource = resource_kind::mig_instance,
            .needed = needed,
            .available = cluster_holds,
            .group = group};
  }
  /// Waits behind `head`, the first job of a strict FIFO queue, which did not fit.
  [[nodiscard]] static reason blocked_by(job_id head) {
    return {.code = reason_code::blocked_by_head, .related = head};
  }
  /// The quota would be exceeded: `needed` of `r` (of GPU model `model`, when the quota is per
  /// model), `left` remaining under quota node `scope` (when known).
  [[nodiscard]] static reason over_quota(resource_kind r, std::int64_t needed, std::int64_t left,
                                         gpu_model_id model = {},
                                         std::optional<std::int32_t> scope = std::nullopt) {
    return {.code = reason_code::over_quota,
            .resource = r,
            .needed = needed,
            .available = left,
            .model = model,
            .scope = scope};
  }
  /// Never admissible by quota: needs `needed` of `r` (of GPU model `model`, when the quota is per
  /// model), more than `at_most`, what its queue could ever be given (nominal quota plus
  /// borrowing limit, Kueue's potential available); `scope` is the quota node whose limit binds.
  [[nodiscard]] static reason exceeds_quota(resource_kind r, std::int64_t needed,
                                            std::int64_t at_most, gpu_model_id model = {},
                                            std::optional<std::int32_t> scope = std::nullopt) {
    return {.code = reason_code::exceeds_quota,
            .resource = r,
            .needed = needed,
            .available = at_most,
            .model = model,
            .scope = scope};
  }
  /// Would delay the backfill reservation of `holder` (which starts at `start`, when known).
  [[nodiscard]] static reason reservation(job_id holder,
                                          std::optional<sim_time> start = std::nullopt) {
    return {.code = reason_code::reservation, .related = holder, .until = start};
  }
  /// Retried too often: `failures` failed attempts; waits until `until` (none: for good, or
  /// see `backoff_cycles`).
  [[nodiscard]] static reason backoff(std::int64_t failures,
                                      std::optional<sim_time> until = std::nullopt) {
    return {.code = reason_code::backoff, .needed = failures, .until = until};
  }
  /// Retried too often: `failures` failed attempts; waits until scheduling cycle `cycle`
  /// (kept in `available`; `describe` prints no time).
  [[nodiscard]] static reason backoff_cycles(std::int64_t failures, std::int64_t cycle) {
    return {.code = reason_code::backoff, .needed = failures, .available = cycle};
  }
  /// No admissible victim set frees enough room; `candidates` victims were considered.
  [[nodiscard]] static reason no_victims(std::int64_t candidates = 0) {
    return {.code = reason_code::no_victims, .available = candidates};
  }
  /// No admissible victim set frees enough room: the preemptor needs `needed` of `r`, and at
  /// most `at_most` is free after evicting every admissible candidate.
  [[nodiscard]] static reason no_victims(resource_kind r, std::int64_t needed,
                                         std::int64_t at_most) {
    return {.code = reason_code::no_victims, .resource = r, .needed = needed, .available = at_most};
  }
  /// No network domain at the required level can host group `group`'s gang of `needed` of `r`;
  /// `most_in_a_domain` is the most one such domain can take.
  [[nodiscard]] static reason topology(std::int32_t group, resource_kind r, std::int64_t needed,
                                       std::int64_t most_in_a_domain) {
    return {.code = reason_code::topology,
            .resource = r,
            .needed = needed,
            .available = most_in_a_domain,
            .group = group};
  }
};

/// `t` as seconds since the epoch with at most 3 decimals, e.g. `12s`, `0.5s`.
inline std::string seconds_text(sim_time t) {
  const auto ms = t.time_since_epoch().count();
  std::string s = std::to_string(ms / 1000);
  if (const auto frac = ms % 1000; frac != 0) {
    std::string f = std::to_string(frac < 0 ? -frac : frac);
    f.insert(0, 3 - f.size(), '0');
    while (f.back() == '0') f.pop_back();
    s += "." + f;
  }
  return s + "s";
}

/// Renders a reason as one line of English; names the group when `job` is given.
inline std::string describe(const reason& r, const job_spec* job = nullptr) {
  const auto group = [&]() -> std::string {
    if (!r.group || *r.group < 0) return "";
    if (job != nullptr && static_cast<std::size_t>(*r.group) < job->groups.size()) {
      return "group '" + job->groups[static_cast<std::size_t>(*r.group)].name + "': ";
    }
    return "group #" + std::to_string(*r.group) + ": ";
  };
  // MIG instances name their shape when the job's group says it: "of 3 compute and 4 memory
  // slices" (profile names are per GPU model; a reason carries no model)
  const auto mig_shape = [&]() -> std::string {
    if (r.resource != resource_kind::mig_instance || job == nullptr || !r.group || *r.group < 0 ||
        static_cast<std::size_t>(*r.group) >= job->groups.size()) {
      return "";
    }
    const gpu_demand& d = job->groups[static_cast<std::size_t>(*r.group)].request.gpu;
    if (d.kind != gpu_demand_kind::mig) return "";
    return " of " + std::to_string(d.mig_compute) + " compute and " + std::to_string(d.mig_memory) +
           " memory slices";
  };
  const auto amounts = [&] { return amount_text(r.needed, r.resource) + mig_shape(); };
  const auto tasks_placed = [&]() -> std::string {
    if (!r.tasks_placed || *r.tasks_placed < 0) return "";
    return "; the best attempt placed " + std::to_string(*r.tasks_placed) +
           (*r.tasks_placed == 1 ? " task" : " tasks");
  };
  switch (r.code) {
    case reason_code::none:
      return "no reason";
    case reason_code::placed:
      return "placed on free resources";
    case reason_code::placed_by_preemption:
      return "placed after preempting lower-priority jobs";
    case reason_code::insufficient:
      return group() + "needs " + amounts() + " in all, only " + std::to_string(r.available) +
             " free in the cluster";
    case reason_code::no_fit:
      if (r.available >= r.needed && r.needed > 0) {
        return group() + "no node has a task's " + amounts() +
               " together with the rest of its request (GPU model, CPU, memory; the most " +
               std::string(to_string(r.resource)) +
               " free on one node: " + std::to_string(r.available) + ")" + tasks_placed();
      }
      return group() + "no node can host a task needing " + amounts() +
             " (the most free on one node: " + std::to_string(r.available) + ")" + tasks_placed();
    case reason_code::unschedulable:
      if (r.resource == resource_kind::mig_instance) {
        return group() + "needs " + amounts() +
               " in all, more than the cluster's MIG GPUs it may use can hold even when empty (" +
               std::to_string(r.available) + ")";
      }
      if (r.group && *r.group >= 0) {
        return group() + "a task needs " + amounts() + ", more than any node has (at most " +
               std::to_string(r.available) + ")";
      }
      return "needs " + amounts() + " in all, more than the whole cluster has (" +
             std::to_string(r.available) + ")";
    case reason_code::blocked_by_head:
      return "blocked behind job " + std::to_string(r.related.value()) +
             ", which is first in the strict queue and does not fit";
    case reason_code::over_quota:
      return "over quota: needs " + amounts() +
             (r.model.valid() ? " of model #" + std::to_string(r.model.value()) : std::string()) +
             ", " + std::to_string(r.available) + " left" +
             (r.scope && *r.scope >= 0 ? " (quota node #" + std::to_string(*r.scope) + ")"
                                       : std::string());
    case reason_code::reservation:
      return "would delay the reservation of job " + std::to_string(r.related.value()) +
             (r.until ? " (starting at t=" + seconds_text(*r.until) + ")" : std::string());
    case reason_code::backoff:
      return "backing off after " + std::to_string(r.needed) +
             " failed attempts, until t=" + (r.until ? seconds_text(*r.until) : std::string("?"));
    case reason_code::no_victims:
      if (r.resource != resource_kind::none) {
        return "no admissible victim set frees enough room: needs " + amounts() + ", at most " +
               std::to_string(r.available) + " after evicting every admissible candidate";
      }
      return "no set of preemptible lower-priority jobs frees enough room";
    case reason_code::exceeds_quota:
      return "never admissible by quota: needs " + amounts() +
             (r.model.valid() ? " of model #" + std::to_string(r.model.value()) : std::string()) +
             ", more than its queue can ever be given (at most " + std::to_string(r.available) +
             ": nominal quota plus borrowing limit" +
             (r.scope && *r.scope >= 0 ? ", quota node #" + std::to_string(*r.scope)
                                       : std::string()) +
             ")";
    case reason_code::topology:
      return group() + "no network domain at the required level can host the gang's " + amounts() +
             " (the most one such domain can take: " + std::to_string(r.available) + ")";
  }
  return "?";
}

/// @brief The outcome for one pending job in one cycle.
struct decision {
  /// The job decided on.
  job_id job;
  /// Admit, defer (try again in a later cycle) or reject (never fits).
  verdict kind = verdict::defer;
  /// Why: the structured reason `describe()` renders.
  reason why;
  std::vector<task_allocation> placement;       ///< admit: one allocation per task
  std::vector<job_id> victims;                  ///< admit by preemption: jobs evicted (whole)
  reason preemption;                            ///< defer after a failed preemption attempt
  std::vector<shrink_order> shrinks{};          ///< admit by preemption: elastic jobs shrunk
  std::vector<victim_detail> victim_details{};  ///< per victim: action and cost, when the
                                                ///< preemption policy gives them
  double lost_gpu_seconds = 0;                  ///< sum of the details' lost work
  friend bool operator==(const decision&, const decision&) noexcept = default;
};

/// @brief A running elastic job grown by the pipeline's growth step (see `pipeline`): group
/// `group` of `job` went from `from` to `to` tasks; `placement` holds the added tasks.
struct growth {
  /// The running job grown.
  job_id job;
  /// The index of the grown group in the job's `groups`.
  std::uint16_t group = 0;
  /// Tasks the group ran before.
  std::int32_t from = 0;
  /// Tasks it runs now.
  std::int32_t to = 0;
  std::int32_t maximum = 0;                ///< the group's `count`
  std::vector<task_allocation> placement;  ///< the added tasks, in the order they were placed
  std::int64_t free_gpus = 0;  ///< whole GPUs free in the cluster before this job grew (after
                               ///< the pending jobs were served and earlier jobs grew)
  /// Why it stopped below its maximum (static text; empty when it reached it): "no room for
  /// more", "the admission policy refused more (...)", "the growth cap of the cycle".
  std::string_view stopped{};
  friend bool operator==(const growth&, const growth&) noexcept = default;
};

/// The MIG profile of grant `g` on its GPU's model in `c`'s catalog: the one with the grant's
/// compute slices (`mig_compute`), memory slices and `+me` flag; when `mig_compute` is 0, the
/// only profile whose memory slices, flag and placements match, if just one does. Null when none
/// (or several) match. O(profiles).
[[nodiscard]] inline const mig_profile* grant_profile(const cluster& c,
                                                      const gpu_grant& g) noexcept {
  if (g.mig_slots == 0) return nullptr;
  const gpu_state& s = c.gpu(g.gpu);
  if (!s.model.valid() || !c.catalog().contains(s.model)) return nullptr;
  const mig_geometry& geo = c.catalog()[s.model].mig;
  const auto memory = static_cast<std::uint8_t>(std::popcount(static_cast<unsigned>(g.mig_slots)));
  const auto start = static_cast<unsigned>(std::countr_zero(static_cast<unsigned>(g.mig_slots)));
  const mig_profile* found = nullptr;
  for (const auto& p : geo.profiles) {
    if (p.memory_slices != memory || p.media_extension != g.media) continue;
    if (((p.placement_starts >> start) & 1u) == 0 || p.slots_at(start) != g.mig_slots) continue;
    if (g.mig_compute != 0) {
      if (p.compute_slices == g.mig_compute) return &p;
      continue;
    }
    if (found != nullptr) return nullptr;  // ambiguous (1g.10gb and 2g.10gb both take 2 slices)
    found = &p;
  }
  return found;
}

/// Renders a placement, one entry per task: `node` (CPU-only), `node[gpu0-3]` (whole GPUs,
/// node-local indices, runs compressed), `node[gpu1:250m]` (a share), `node[gpu0:3g.20gb@4]`
/// (a MIG instance: its profile's name on the GPU's model and its first memory slice, as
/// `nvidia-smi mig -lgi` lists placements; `node[gpu0:mig4-7]`, the memory slices, when the
/// catalog names no single profile for the grant, see `grant_profile`), `node[gpu0:replica]` (a
/// replica of a time-sliced / MPS GPU). O(grants x profiles).
inline std::string describe_placement(const std::vector<task_allocation>& p, const cluster& c) {
  std::string out;
  for (const auto& a : p) {
    if (!out.empty()) out += ", ";
    out += c.name(a.node);
    if (a.gpus.empty()) continue;
    out += "[";
    const auto base = c.first_gpu(a.node).value();
    for (std::size_t k = 0; k < a.gpus.size();) {
      const auto& g = a.gpus[k];
      const auto local = g.gpu.value() - base;
      if (k != 0) out += ',';
      out += "gpu";
      out += std::to_string(local);
      if (g.replica) {
        out += ":replica";
        ++k;
        continue;
      }
      if (g.mig_slots != 0) {
        const int lo = std::countr_zero(static_cast<unsigned>(g.mig_slots));
        const int hi = 31 - std::countl_zero(static_cast<unsigned>(g.mig_slots));
        if (const mig_profile* prof = grant_profile(c, g)) {
          out += ":" + prof->name + "@" + std::to_string(lo);
        } else {
          out += ":mig" + std::to_string(lo) + (hi > lo ? "-" + std::to_string(hi) : "");
        }
        ++k;
        continue;
      }
      if (g.milli < whole_gpu_milli) {
        out += ":" + std::to_string(g.milli.value()) + "m";
        ++k;
        continue;
      }
      std::size_t run = k + 1;  // compress consecutive whole GPUs
      while (run < a.gpus.size() && a.gpus[run].milli == whole_gpu_milli &&
             a.gpus[run].mig_slots == 0 && a.gpus[run].gpu.value() == g.gpu.value() + (run - k)) {
        ++run;
      }
      if (run - k > 1) out += "-" + std::to_string(local + (run - k - 1));
      k = run;
    }
    out += "]";
  }
  return out;
}

/// Renders a decision as one line: verdict, job, placement or victims, and the reason.
/// `job` (the decided job's spec) is optional and names groups in reasons.
inline std::string describe(const decision& d, const cluster& c, const job_spec* job = nullptr) {
  std::string s = std::string(to_string(d.kind)) + " job " + std::to_string(d.job.value());
  if (job != nullptr && !job->name.empty()) s += " '" + job->name + "'";
  if (d.kind == verdict::admit) {
    s += " on " + describe_placement(d.placement, c);
    if (!d.victims.empty()) {
      s += " after preempting";
      for (auto v : d.victims) s += " job " + std::to_string(v.value());
    }
    if (!d.shrinks.empty()) {
      s += " after shrinking";
      for (const auto& o : d.shrinks) {
        s += " job " + std::to_string(o.job.value()) + " group #" + std::to_string(o.group) +
             " to " + std::to_string(o.to);
      }
    }
    return s;
  }
  s += ": " + describe(d.why, job);
  if (d.preemption.code == reason_code::no_victims && d.preemption.available > 0) {
    s += "; preemption: " + describe(d.preemption, job);
  }
  return s;
}

/// Renders a growth as one line (`job`, the grown job's spec, is optional and names it and its
/// group), here wrapped after `on n1[gpu0-3]:`
/// @code{.txt}
/// grow job 7 'train' group 'w' from 2 to 4 tasks (maximum 4) on n1[gpu0-3]:
///   4 GPUs free after the queue was served
/// @endcode
inline std::string describe(const growth& g, const cluster& c, const job_spec* job = nullptr) {
  std::string s = "grow job " + std::to_string(g.job.value());
  if (job != nullptr && !job->name.empty()) s += " '" + job->name + "'";
  if (job != nullptr && g.group < job->groups.size()) {
    s += " group '" + job->groups[g.group].name + "'";
  } else {
    s += " group #" + std::to_string(g.group);
  }
  s += " from " + std::to_string(g.from) + " to " + std::to_string(g.to) + " tasks (maximum " +
       std::to_string(g.maximum) + ") on " + describe_placement(g.placement, c) + ": " +
       amount_text(g.free_gpus, resource_kind::gpu) + " free after the queue was served";
  if (g.to < g.maximum && !g.stopped.empty()) s += "; stopped: " + std::string(g.stopped);
  return s;
}

/// @brief The candidates of one quota reclaim, made by the admission policy's `reclaim_for` and
/// read by the preemption policy's `select_reclaim` (the free-quota preemption path, see
/// `policy/preemption/reclaim.hpp`); non-owning and valid during one `select_reclaim` call.
///
/// `candidates()`: running, preemptible jobs of *other* queues of the preemptor's cohort that
/// borrow (use more than their nominal quota of a resource the preemptor needs), and, in a
/// scope with Kueue's structure (below), jobs of the preemptor's own queue that its
/// `withinClusterQueue` setting allows.
/// `borrowing(i, taken)`: whether candidate `i` may still be taken once the candidates at the
/// indices `taken` are evicted: its queue still borrows (Kueue takes victims from another queue
/// only while it borrows); always true for a candidate of the preemptor's own queue.
///
/// Kueue's structure (optional, `with_runs`; a scope without it has one run holding every
/// candidate, all of group 0, so it reads exactly as before):
/// - `group(i)`: the rank of candidate `i` in Kueue's victim order, taken before priority and
///   start time: 0 another queue over which the preemptor has a hierarchical advantage (it
///   fits its own quota, or a subtree's below the common cohort), 1 another queue's borrower
///   taken by priority, 2 the preemptor's own queue (borrowers first, own queue last);
/// - `runs()` and `eligible(i, run)`: the attempts of Kueue's classical preemption, in order
///   (e.g. first allowing the preemptor to borrow, then not); a run takes victims only among
///   its eligible candidates;
/// - `begin_run(run)`: called by the preemption policy before it probes victim sets for `run`,
///   so that the admission policy's check (the probe's `approve_reclaim`) applies that run's
///   rule (whether the preemptor may borrow after the victims leave). The check of the run
///   whose victims were chosen stays in force for the commit that follows.
/// A preemption policy serves the structure by calling `reclaim_in_runs`
/// (`policy/preemption/reclaim.hpp`) with its candidates ordered by `group` first.
class reclaim_scope {
 public:
  /// `borrowing` is any callable `bool(std::size_t, std::span<const std::uint32_t>)`; it must
  /// outlive the scope.
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, reclaim_scope> &&
             std::is_invocable_r_v<bool, const F&, std::size_t, std::span<const std::uint32_t>>)
  reclaim_scope(std::span<const running_job* const> candidates, const F& borrowing) noexcept
      : candidates_(candidates),
        object_(static_cast<const void*>(std::addressof(borrowing))),
        call_([](const void* o, std::size_t i, std::span<const std::uint32_t> taken) -> bool {
          return (*static_cast<const F*>(o))(i, taken);
        }) {}

  /// The running jobs a reclaim may take victims from.
  [[nodiscard]] std::span<const running_job* const> candidates() const noexcept {
    return candidates_;
  }
  /// Whether candidate `i` may still be taken once the candidates at `taken` are evicted.
  [[nodiscard]] bool borrowing(std::size_t i, std::span<const std::uint32_t> taken) const {
    return call_(object_, i, taken);
  }

  /// Adds Kueue's structure (see the class documentation): `groups` and `eligible` (bit `k`:
  /// eligible in run `k`) hold one entry per candidate (empty: all 0 / all eligible), `runs`
  /// is at most 8; `begin_run` is any callable `void(std::size_t)` that must outlive the
  /// scope. Returns the scope.
  template <class F>
    requires std::is_invocable_v<const F&, std::size_t>
  reclaim_scope& with_runs(std::span<const std::uint8_t> groups,
                           std::span<const std::uint8_t> eligible, std::size_t runs,
                           const F& begin_run) noexcept {
    groups_ = groups;
    eligible_ = eligible;
    runs_ = runs;
    run_object_ = static_cast<const void*>(std::addressof(begin_run));
    run_call_ = [](const void* o, std::size_t r) { (*static_cast<const F*>(o))(r); };
    return *this;
  }
  /// True when the scope has Kueue's structure (`with_runs`).
  [[nodiscard]] bool structured() const noexcept { return run_call_ != nullptr; }
  /// Candidate `i`'s rank in Kueue's victim order (0 without the structure).
  [[nodiscard]] std::uint8_t group(std::size_t i) const noexcept {
    return i < groups_.size() ? groups_[i] : std::uint8_t{0};
  }
  /// Number of runs (1 without the structure).
  [[nodiscard]] std::size_t runs() const noexcept { return runs_; }
  /// Whether candidate `i` may be taken in run `run`.
  [[nodiscard]] bool eligible(std::size_t i, std::size_t run) const noexcept {
    return i >= eligible_.size() || ((eligible_[i] >> run) & 1U) != 0;
  }
  /// Tells the admission policy that victim sets of run `run` are probed next.
  void begin_run(std::size_t run) const {
    if (run_call_ != nullptr) run_call_(run_object_, run);
  }

 private:
  std::span<const running_job* const> candidates_;
  const void* object_;
  bool (*call_)(const void*, std::size_t, std::span<const std::uint32_t>);
  std::span<const std::uint8_t> groups_, eligible_;
  std::size_t runs_ = 1;
  const void* run_object_ = nullptr;
  void (*run_call_)(const void*, std::size_t) = nullptr;
};

GPUSCHED_END_NAMESPACE
