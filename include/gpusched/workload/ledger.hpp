// SPDX-License-Identifier: Apache-2.0
/// @file
/// The allocation ledger: the only way cluster state changes. It records which running job holds
/// which task allocations, and offers transactions (an undo log) to place a gang, or evict
/// victims and place a preemptor, tentatively, then commit or roll back in time proportional to
/// what was touched, never to the cluster size. An undo journal (`begin_undo`, `undo`,
/// `end_undo`) records the transactions committed in between so that a caller (the pipeline's
/// cycle) can restore the ledger exactly as it was, in time proportional to what changed.
///
/// The ledger sits above `workload/` rather than in `cluster/` because it binds jobs to
/// allocations: it stores the running jobs' specs so that policies (preemption, fair share) can
/// read priorities, tenants and checkpoint state of what runs.
#pragma once

#include <algorithm>  // std::find, std::any_of, std::all_of
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>  // std::move, std::exchange
#include <vector>

#include "gpusched/cluster/allocation.hpp"
#include "gpusched/cluster/cluster.hpp"
#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/ids.hpp"
#include "gpusched/core/time.hpp"
#include "gpusched/workload/job.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief A job that holds resources.
struct running_job {
  /// The job as it was admitted (its groups, tenant, priority, checkpoint state).
  job_spec spec;
  /// When it started holding resources (its current stint).
  sim_time start{};
  /// The tasks it holds, one allocation each (a group's tasks in allocation order).
  std::vector<task_allocation> tasks;

  /// Tasks of group `g` that this job runs (its chosen size, for elastic groups).
  [[nodiscard]] std::int32_t tasks_in_group(std::size_t g) const noexcept {
    std::int32_t n = 0;
    for (const auto& t : tasks) n += t.group == g ? 1 : 0;
    return n;
  }
  /// Milli-GPUs held: the sum of the grants' `milli` (1000 per whole GPU); MIG instances and
  /// replicas count 0.
  [[nodiscard]] std::int64_t milli_gpus() const noexcept {
    std::int64_t m = 0;
    for (const auto& t : tasks) {
      for (const auto& g : t.gpus) m += g.milli.value();
    }
    return m;
  }
};

/// @brief An order to shrink an elastic job: group `group` of running job `job` keeps its first
/// `to` tasks (in allocation order) and releases the rest. `to` must be at least the group's
/// minimum and below the tasks the group runs.
struct shrink_order {
  /// The running job to shrink.
  job_id job{};
  /// The index of the group to shrink in the job's `groups`.
  std::uint16_t group = 0;
  /// Tasks the group keeps.
  std::int32_t to = 0;
  friend bool operator==(const shrink_order&, const shrink_order&) noexcept = default;
};

/// @brief A task added to a running elastic job by `ledger::transaction::grow`: `task` (its
/// `group` names the group) joins running job `job`.
struct grown_task {
  /// The running job the task joins.
  job_id job;
  /// The task's allocation (its `group` names the group).
  task_allocation task;
  friend bool operator==(const grown_task&, const grown_task&) noexcept = default;
};

/// @brief The cluster plus who holds what. Single writer; not thread-safe.
class ledger {
 public:
  class transaction;

  ledger() = default;
  /// A ledger over `c`, with no job running.
  explicit ledger(cluster c) : cluster_(std::move(c)) {}

  /// The cluster and its free capacity (an open transaction's tentative changes included).
  [[nodiscard]] const cluster& state() const noexcept { return cluster_; }
  /// Running jobs in an unspecified but deterministic order.
  [[nodiscard]] std::span<const running_job> running() const noexcept { return running_; }
  /// The running job `id`, or null. O(1) expected.
  [[nodiscard]] const running_job* find(job_id id) const noexcept {
    const auto it = index_.find(id);
    return it == index_.end() ? nullptr : &running_[it->second];
  }
  /// True when job `id` holds resources. O(1) expected.
  [[nodiscard]] bool is_running(job_id id) const noexcept { return index_.contains(id); }
  /// @brief A generation counter: bumped by one by every committed mutation (`release`,
  /// `set_available`, `configure_sharing`, a transaction `commit` that placed, evicted,
  /// shrunk or grew anything); unchanged by queries, by a rolled-back transaction and by an empty
  /// commit. Lets a policy that mirrors the ledger (an incremental ordering) tell whether the
  /// ledger changed since it last looked. Copies keep the version. O(1).
  [[nodiscard]] std::uint64_t version() const noexcept { return version_; }

  /// Returns every resource `id` holds and forgets the job. O(tasks of the job + log nodes).
  /// @throws invalid_value_error (unknown_id) if `id` is not running; nothing changes then.
  void release(job_id id) {
    GPUSCHED_EXPECTS(!tx_open_ && !undo_.open);
    const auto it = index_.find(id);
    if (it == index_.end()) {
      throw invalid_value_error(error_id::unknown_id, "ledger", "job", std::to_string(id.value()),
                                "not running");
    }
    for (const auto& t : running_[it->second].tasks) cluster_.apply(t, -1);
    erase_running(it->second);
    ++version_;
  }

  /// The running jobs holding anything on node `n`, in `running()` order. O(running tasks).
  [[nodiscard]] std::vector<job_id> jobs_on(node_index n) const {
    std::vector<job_id> out;
    for (const auto& r : running_) {
      for (const auto& t : r.tasks) {
        if (t.node == n) {
          out.push_back(r.spec.id);
          break;
        }
      }
    }
    return out;
  }

  /// Takes node `n` out of service (`up == false`, e.g. a failure) or returns it (`true`).
  /// A node out of service offers no capacity (see `cluster::available`). Idempotent.
  /// @throws invalid_value_error (unknown_id) if `n` is not a node position, (inconsistent) if
  /// taking it out while a running job holds resources on it (release those jobs first); the
  /// ledger is unchanged then. O(running tasks) when taking out, O(GPUs of node + log n) else.
  void set_available(node_index n, bool up) {
    GPUSCHED_EXPECTS(!tx_open_ && !undo_.open);
    if (n.value() >= cluster_.node_count()) {
      throw invalid_value_error(error_id::unknown_id, "ledger", "node", std::to_string(n.value()),
                                "no such node position");
    }
    if (!up) {
      if (const auto held = jobs_on(n); !held.empty()) {
        throw invalid_value_error(error_id::inconsistent, "ledger", "node", cluster_.name(n),
                                  "job " + std::to_string(held.front().value()) +
                                      " still holds resources on it; release it first");
      }
    }
    cluster_.set_available(n, up);
    ++version_;
  }

  /// The running jobs holding a grant (share, MIG slots or replica) on GPU `g`, in `running()`
  /// order. O(running tasks x grants).
  [[nodiscard]] std::vector<job_id> jobs_on_gpu(gpu_index g) const {
    std::vector<job_id> out;
    for (const auto& r : running_) {
      const bool holds = std::any_of(r.tasks.begin(), r.tasks.end(), [&](const auto& t) {
        return std::any_of(t.gpus.begin(), t.gpus.end(),
                           [&](const auto& gr) { return gr.gpu == g; });
      });
      if (holds) out.push_back(r.spec.id);
    }
    return out;
  }

  /// Marks GPU `g` failed (`up == false`) or repaired (`true`), independently of its node's
  /// availability. A failed GPU offers nothing (see `gpu_state::failed`) and counts in
  /// `cluster::unavailable_gpus`. Idempotent. @throws invalid_value_error (unknown_id) if `g`
  /// is not a GPU index, (inconsistent) if failing it while a running job holds a grant on it
  /// (release those jobs first); the ledger is unchanged then. O(running tasks) when failing,
  /// O(GPUs of node + log n) else.
  void set_gpu_available(gpu_index g, bool up) {
    GPUSCHED_EXPECTS(!tx_open_ && !undo_.open);
    if (g.value() >= cluster_.gpu_count()) {
      throw invalid_value_error(error_id::unknown_id, "ledger", "gpu", std::to_string(g.value()),
                                "no such GPU index");
    }
    if (!up) {
      if (const auto held = jobs_on_gpu(g); !held.empty()) {
        throw invalid_value_error(
            error_id::inconsistent, "ledger", "gpu", std::to_string(g.value()),
            "job " + std::to_string(held.front().value()) + " still holds it; release it first");
      }
    }
    cluster_.set_gpu_available(g, up);
  }

  /// Switches GPU `gpu` (0-based on node `n`) to sharing `mode` with `replicas` replicas (0 for
  /// `exclusive`); see `gpu_sharing`. Allowed only on an idle GPU: nothing granted on it (no
  /// share, no replica). @throws invalid_value_error naming the field: (unknown_id) `n` not a
  /// node position or `gpu` not a GPU of it; (inconsistent) the GPU is busy or in MIG mode, or
  /// `replicas` is not 0 for `exclusive`; (invalid_value) `replicas` outside
  /// 1..max_gpu_replicas. Nothing changes then. O(GPUs of node + log n).
  void configure_sharing(node_index n, int gpu, gpu_sharing mode, int replicas) {
    GPUSCHED_EXPECTS(!tx_open_ && !undo_.open);
    if (n.value() >= cluster_.node_count()) {
      throw invalid_value_error(error_id::unknown_id, "ledger", "node", std::to_string(n.value()),
                                "no such node position");
    }
    const std::string where = "node " + cluster_.name(n) + " gpu " + std::to_string(gpu);
    const auto gpus = cluster_.gpus(n);
    if (gpu < 0 || static_cast<std::size_t>(gpu) >= gpus.size()) {
      throw invalid_value_error(error_id::unknown_id, "node " + cluster_.name(n), "gpu",
                                std::to_string(gpu),
                                "the node has " + std::to_string(gpus.size()) + " GPUs");
    }
    const gpu_state& g = gpus[static_cast<std::size_t>(gpu)];
    if (g.mig_enabled) {
      throw invalid_value_error(error_id::inconsistent, where, "sharing",
                                std::string(to_string(mode)),
                                "the GPU is in MIG mode; its sharing mode cannot change");
    }
    if (g.failed) {
      throw invalid_value_error(error_id::inconsistent, where, "sharing",
                                std::string(to_string(mode)),
                                "the GPU has failed; its sharing mode changes after repair");
    }
    cluster::check_sharing(where, mode, replicas, true, false);
    const bool busy = g.replicated() ? g.replicas_used != 0 : g.free != whole_gpu_milli;
    if (busy) {
      const std::string held =
          g.replicated()
              ? std::to_string(g.replicas_used) + " of " + std::to_string(g.replicas) +
                    " replicas in use"
              : std::to_string(whole_gpu_milli.value() - g.free.value()) + " milli-GPU in use";
      throw invalid_value_error(
          error_id::inconsistent, where, "sharing", std::string(to_string(mode)),
          "the GPU is busy (" + held + "); its sharing mode changes only while idle");
    }
    cluster_.set_sharing(
        gpu_index{cluster_.first_gpu(n).value() + static_cast<gpu_index::rep>(gpu)}, mode,
        replicas);
    ++version_;
  }

  /// Opens a transaction. @pre no other transaction of this ledger is open.
  [[nodiscard]] transaction begin() noexcept;

  /// @brief Starts the undo journal: from now on every committed transaction is recorded so
  /// that `undo()` can restore the ledger as it is now (the running jobs in the same order, the
  /// cluster's free resources, `version()`). `release`, `set_available`, `set_gpu_available` and
  /// `configure_sharing` are not allowed while it is open. O(1); the journal's buffer is reused.
  /// @pre no journal and no transaction is open.
  void begin_undo() noexcept {
    GPUSCHED_EXPECTS(!undo_.open && !tx_open_);
    undo_.open = true;
    undo_.version = version_;
    undo_.entries.clear();
  }
  /// Whether the undo journal is open. O(1).
  [[nodiscard]] bool undo_open() const noexcept { return undo_.open; }
  /// @brief Undoes every transaction committed since `begin_undo()`, newest first, and closes
  /// the journal: the ledger then equals its state at `begin_undo()` (running jobs, their order
  /// and tasks, the cluster, `version()`). Allocates nothing. Pointers and references into
  /// `running()` taken before may be invalidated, as by any commit (key caches on job ids).
  /// O(tasks the recorded commits touched). @pre the journal is open, no transaction is open.
  void undo() noexcept {
    GPUSCHED_EXPECTS(undo_.open && !tx_open_);
    while (!undo_.entries.empty()) {
      undo_one(undo_.entries.back());
      undo_.entries.pop_back();
    }
    version_ = undo_.version;
    undo_.open = false;
  }
  /// Keeps every change since `begin_undo()` and closes the journal. O(recorded commits).
  /// @pre the journal is open.
  void end_undo() noexcept {
    GPUSCHED_EXPECTS(undo_.open);
    undo_.entries.clear();
    undo_.open = false;
  }

 private:
  using index_node = std::unordered_map<job_id, std::size_t>::node_type;
  /// One committed change, recorded by a journaled commit (see `begin_undo`).
  struct undo_entry {
    enum class kind : std::uint8_t { grown, shrunk, evicted, admitted };
    kind what = kind::admitted;
    job_id job;
    std::size_t pos = 0;     // evicted: the position the job had in running_
    shrink_order order{};    // shrunk: the order applied
    running_job saved{};     // evicted: the job; shrunk: its tasks before (in saved.tasks)
    index_node node{};       // evicted: its index entry (re-inserted without allocating)
  };

  /// Inverts one recorded change. Allocates nothing (capacities are kept from the change).
  void undo_one(undo_entry& e) noexcept {
    switch (e.what) {
      case undo_entry::kind::grown: {
        auto& tasks = running_[index_.find(e.job)->second].tasks;
        cluster_.apply(tasks.back(), -1);
        tasks.pop_back();
        break;
      }
      case undo_entry::kind::shrunk: {
        auto& tasks = running_[index_.find(e.job)->second].tasks;
        std::int32_t seen = 0;
        for (const auto& t : e.saved.tasks) {
          if (t.group == e.order.group && seen++ >= e.order.to) cluster_.apply(t, +1);
        }
        tasks.swap(e.saved.tasks);
        break;
      }
      case undo_entry::kind::evicted: {
        // the inverse of erase_running(pos): the job that filled the hole goes back to the end
        for (const auto& t : e.saved.tasks) cluster_.apply(t, +1);
        if (e.pos != running_.size()) {
          running_.push_back(std::move(running_[e.pos]));  // within capacity: no allocation
          index_.find(running_.back().spec.id)->second = running_.size() - 1;
          running_[e.pos] = std::move(e.saved);
        } else {
          running_.push_back(std::move(e.saved));
        }
        e.node.mapped() = e.pos;
        index_.insert(std::move(e.node));  // the node it had: no allocation
        break;
      }
      case undo_entry::kind::admitted: {
        GPUSCHED_ASSERT(!running_.empty() && running_.back().spec.id == e.job);
        for (const auto& t : running_.back().tasks) cluster_.apply(t, -1);
        index_.erase(e.job);
        running_.pop_back();
        break;
      }
    }
  }

  void erase_running(std::size_t pos) {
    const job_id id = running_[pos].spec.id;
    index_.erase(id);
    fill_hole(pos);
  }
  /// Moves the last running job into position `pos` (whose job is gone from the index) and
  /// drops the last slot. Allocates nothing.
  void fill_hole(std::size_t pos) noexcept {
    if (pos + 1 != running_.size()) {
      running_[pos] = std::move(running_.back());
      index_.find(running_[pos].spec.id)->second = pos;
    }
    running_.pop_back();
  }

  /// Whether the running job at position `pos` is evicted in the open transaction. All false
  /// outside a transaction (positions move only then).
  [[nodiscard]] bool evicted_flag(std::size_t pos) const noexcept {
    return pos < tx_evicted_flag_.size() && tx_evicted_flag_[pos] != 0;
  }
  void set_evicted_flag(std::size_t pos, bool on) {
    if (tx_evicted_flag_.size() < running_.size()) tx_evicted_flag_.resize(running_.size(), 0);
    tx_evicted_flag_[pos] = on ? 1 : 0;
  }

  cluster cluster_;
  std::vector<running_job> running_;
  std::unordered_map<job_id, std::size_t> index_;
  std::vector<std::uint8_t> tx_evicted_flag_;  // by running_ position: evicted in the open tx
  // transaction scratch, reused so that transactions do not allocate once warmed up
  std::vector<task_allocation> tx_placed_;
  std::vector<job_id> tx_evicted_;
  std::vector<shrink_order> tx_shrunk_;
  std::vector<grown_task> tx_grown_;
  bool tx_open_ = false;
  std::uint64_t version_ = 0;  // see version()
  /// The undo journal (`begin_undo`, `undo`, `end_undo`). Not part of the ledger's value: a
  /// copy of a ledger starts with no journal open.
  struct undo_log {
    std::vector<undo_entry> entries;
    std::uint64_t version = 0;  // version() at begin_undo
    bool open = false;
    undo_log() = default;
    undo_log(const undo_log&) noexcept {}
    undo_log(undo_log&&) noexcept = default;
    undo_log& operator=(const undo_log&) noexcept {
      entries.clear();
      open = false;
      return *this;
    }
    undo_log& operator=(undo_log&&) noexcept = default;
    ~undo_log() = default;
  };
  undo_log undo_;
};

/// @brief Tentative changes to a ledger: evictions and placements, applied to the cluster at
/// once (so later queries see them) and undone on `rollback()` or destruction unless committed.
///
/// Laws: after `rollback()` the ledger equals its state before `begin()`; `commit` makes the
/// evictions, shrinks and grows final and registers the placed tasks as one running job. Every
/// operation is O(what it touches); rollback is O(placed + grown + evicted + shrunk jobs' tasks).
class ledger::transaction {
 public:
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;
  /// Moves the transaction; `o` is left empty (no rollback on its destruction).
  transaction(transaction&& o) noexcept : l_(std::exchange(o.l_, nullptr)) {}
  transaction& operator=(transaction&&) = delete;
  ~transaction() {
    if (l_ != nullptr) rollback();
  }

  /// The cluster as changed so far.
  [[nodiscard]] const cluster& state() const noexcept { return l_->cluster_; }
  /// The ledger the transaction changes.
  [[nodiscard]] const ledger& owner() const noexcept { return *l_; }

  /// Applies `a` if it fits (`cluster::can_apply`); returns false and changes nothing otherwise.
  bool place(const task_allocation& a) {
    GPUSCHED_EXPECTS(l_ != nullptr);
    if (!l_->cluster_.can_apply(a)) return false;
    l_->tx_placed_.push_back(a);
    l_->cluster_.apply(a, +1);
    return true;
  }
  /// Tentatively returns everything `id` holds. O(tasks of the job + shrinks here).
  /// @throws invalid_value_error (unknown_id) if `id` is not running or already evicted here.
  void evict(job_id id) {
    GPUSCHED_EXPECTS(l_ != nullptr);
    const auto it = l_->index_.find(id);
    if (it == l_->index_.end() || l_->evicted_flag(it->second)) {
      throw invalid_value_error(error_id::unknown_id, "transaction", "evict",
                                std::to_string(id.value()), "not running (or evicted twice)");
    }
    if (shrunk_here(id) || grown_here(id)) {
      throw invalid_value_error(error_id::inconsistent, "transaction", "evict",
                                std::to_string(id.value()),
                                "job was shrunk or grown in this transaction");
    }
    // what allocates first (a throw then changes nothing), then the flag and the cluster
    if (l_->tx_evicted_flag_.size() < l_->running_.size()) {
      l_->tx_evicted_flag_.resize(l_->running_.size(), 0);
    }
    l_->tx_evicted_.push_back(id);
    l_->set_evicted_flag(it->second, true);
    for (const auto& t : l_->running_[it->second].tasks) l_->cluster_.apply(t, -1);
  }
  /// Tentatively releases the tasks of group `s.group` of elastic job `s.job` beyond its first
  /// `s.to` (in allocation order); `commit` removes them from the job, `rollback` restores them.
  /// O(tasks of the job). @throws invalid_value_error, changing nothing, when the job is not
  /// running or is evicted here (unknown_id), the group does not exist or `s.to` is below the
  /// group's minimum or not below the tasks it runs (invalid_value), or the same group is
  /// shrunk twice in this transaction (duplicate_id), or the job was grown in this transaction
  /// (inconsistent).
  void shrink(const shrink_order& s) {
    GPUSCHED_EXPECTS(l_ != nullptr);
    const std::string who = std::to_string(s.job.value());
    const auto* r = l_->find(s.job);
    if (r == nullptr || is_evicted(s.job)) {
      throw invalid_value_error(error_id::unknown_id, "transaction", "shrink", who,
                                "not running (or evicted in this transaction)");
    }
    if (s.group >= r->spec.groups.size()) {
      throw invalid_value_error(error_id::invalid_value, "transaction shrink of job " + who,
                                "group", std::to_string(s.group), "no such group");
    }
    const auto& g = r->spec.groups[s.group];
    const std::int32_t runs = r->tasks_in_group(s.group);
    if (s.to < g.minimum() || s.to >= runs) {
      throw invalid_value_error(error_id::invalid_value, "transaction shrink of job " + who, "to",
                                std::to_string(s.to),
                                "must be in " + std::to_string(g.minimum()) + ".." +
                                    std::to_string(runs - 1) + " (minimum..running-1)");
    }
    for (const auto& o : l_->tx_shrunk_) {
      if (o.job == s.job && o.group == s.group) {
        throw invalid_value_error(error_id::duplicate_id, "transaction shrink of job " + who,
                                  "group", std::to_string(s.group), "shrunk twice");
      }
    }
    if (grown_here(s.job)) {
      throw invalid_value_error(error_id::inconsistent, "transaction shrink of job " + who, "group",
                                std::to_string(s.group), "the job was grown in this transaction");
    }
    l_->tx_shrunk_.push_back(s);
    apply_shrink(*r, s, -1);
  }

  /// Tentatively adds task `a` to group `a.group` of running elastic job `id` (growing it back
  /// toward its maximum): applied at once if it fits (`cluster::can_apply`), false and nothing
  /// changed otherwise, like `place`. `commit` appends it to the job's tasks (after the ones it
  /// holds, so a later shrink releases grown tasks first); `rollback` returns it.
  /// O(tasks of the job + grows here). @throws invalid_value_error naming the job, group and
  /// field, changing nothing: the job is not running or is evicted here (unknown_id); the group
  /// does not exist, is not elastic, or would run more than its `count` tasks (invalid_value);
  /// `a` does not match the group's request (CPU, memory, GPU grants; invalid_value); the job
  /// was shrunk in this transaction (inconsistent).
  bool grow(job_id id, const task_allocation& a) {
    GPUSCHED_EXPECTS(l_ != nullptr);
    const std::string who = std::to_string(id.value());
    const auto* r = l_->find(id);
    if (r == nullptr || is_evicted(id)) {
      throw invalid_value_error(error_id::unknown_id, "transaction", "grow", who,
                                "not running (or evicted in this transaction)");
    }
    const std::string where = "transaction grow of job " + who;
    if (a.group >= r->spec.groups.size()) {
      throw invalid_value_error(
          error_id::invalid_value, where, "group", std::to_string(a.group),
          "no such group (the job has " + std::to_string(r->spec.groups.size()) + ")");
    }
    const auto& g = r->spec.groups[a.group];
    const std::string gw = where + " group '" + g.name + "'";
    if (!g.elastic()) {
      throw invalid_value_error(error_id::invalid_value, gw, "group", std::to_string(a.group),
                                "not elastic (minimum = count = " + std::to_string(g.count) + ")");
    }
    if (shrunk_here(id)) {
      throw invalid_value_error(error_id::inconsistent, gw, "group", std::to_string(a.group),
                                "the job was shrunk in this transaction");
    }
    const std::int32_t runs = r->tasks_in_group(a.group) + grown_here(id, a.group);
    if (runs >= g.count) {
      throw invalid_value_error(error_id::invalid_value, gw, "tasks", std::to_string(runs + 1),
                                "above the group's maximum count " + std::to_string(g.count));
    }
    if (!matches_request(g.request, a)) {
      throw invalid_value_error(error_id::invalid_value, gw, "allocation",
                                "node " + std::to_string(a.node.value()),
                                "does not match the group's request (CPU, memory or GPUs)");
    }
    if (!l_->cluster_.can_apply(a)) return false;
    l_->tx_grown_.push_back({id, a});
    l_->cluster_.apply(a, +1);
    return true;
  }
  /// Tasks added to running elastic jobs so far (`grow`).
  [[nodiscard]] std::span<const grown_task> grown() const noexcept { return l_->tx_grown_; }
  /// Shrink orders applied so far (`shrink`).
  [[nodiscard]] std::span<const shrink_order> shrunk() const noexcept { return l_->tx_shrunk_; }
  /// Tasks placed so far for the job this transaction admits (`place`).
  [[nodiscard]] std::span<const task_allocation> placed() const noexcept { return l_->tx_placed_; }
  /// Running jobs evicted so far (`evict`).
  [[nodiscard]] std::span<const job_id> evicted() const noexcept { return l_->tx_evicted_; }

  /// A point inside the transaction to roll back to (nested what-if searches).
  struct savepoint {
    /// Tasks placed when the point was taken.
    std::size_t placed = 0;
    /// Shrink orders applied when the point was taken.
    std::size_t shrunk = 0;
    /// Jobs evicted when the point was taken.
    std::size_t evicted = 0;
    /// Tasks grown when the point was taken.
    std::size_t grown = 0;
  };
  /// The current point. O(1).
  [[nodiscard]] savepoint mark() const noexcept {
    GPUSCHED_EXPECTS(l_ != nullptr);
    return {l_->tx_placed_.size(), l_->tx_shrunk_.size(), l_->tx_evicted_.size(),
            l_->tx_grown_.size()};
  }
  /// Undoes, newest first, every placement, grow, shrink and eviction made after `sp`; the
  /// transaction stays open. @pre `sp` was taken from this transaction and not rolled past.
  /// O(placements + grown, shrunk and evicted tasks undone).
  void rollback_to(savepoint sp) noexcept {
    GPUSCHED_EXPECTS(l_ != nullptr && sp.placed <= l_->tx_placed_.size() &&
                     sp.shrunk <= l_->tx_shrunk_.size() && sp.evicted <= l_->tx_evicted_.size() &&
                     sp.grown <= l_->tx_grown_.size());
    auto& grown = l_->tx_grown_;
    while (grown.size() > sp.grown) {
      l_->cluster_.apply(grown.back().task, -1);
      grown.pop_back();
    }
    auto& placed = l_->tx_placed_;
    while (placed.size() > sp.placed) {
      l_->cluster_.apply(placed.back(), -1);
      placed.pop_back();
    }
    auto& shrunk = l_->tx_shrunk_;
    while (shrunk.size() > sp.shrunk) {
      apply_shrink(*l_->find(shrunk.back().job), shrunk.back(), +1);
      shrunk.pop_back();
    }
    auto& evicted = l_->tx_evicted_;
    while (evicted.size() > sp.evicted) {
      const auto pos = l_->index_.find(evicted.back())->second;
      for (const auto& t : l_->running_[pos].tasks) l_->cluster_.apply(t, +1);
      l_->set_evicted_flag(pos, false);
      evicted.pop_back();
    }
  }
  /// True when `id` was evicted in this transaction. O(1) expected.
  [[nodiscard]] bool is_evicted(job_id id) const noexcept {
    const auto it = l_->index_.find(id);
    return it != l_->index_.end() && l_->evicted_flag(it->second);
  }

  /// Undoes every grow and placement (newest first), every shrink, then every eviction, and
  /// closes the transaction.
  void rollback() noexcept {
    GPUSCHED_EXPECTS(l_ != nullptr);
    rollback_to({});
    close();
  }

  /// Makes evictions, shrinks and grows final and, if anything was placed, registers it as running
  /// job `spec` started at `start`. @pre `spec.id` is not running (unless it is among the evicted).
  /// Strong guarantee: everything that allocates (and so may throw) is done before the first
  /// change; on a throw the transaction stays open, unchanged (its destructor rolls it back).
  void commit(job_spec spec, sim_time start) {
    GPUSCHED_EXPECTS(l_ != nullptr);
    ledger& l = *l_;
    const job_id id = spec.id;
    const bool admits = !l.tx_placed_.empty();
    const bool self_evicted = l.is_running(id);  // only allowed when evicted here
    GPUSCHED_EXPECTS(!self_evicted || is_evicted(id));
    const std::size_t mark = l.undo_.entries.size();
    bool placeholder = false;
    running_job admitted;
    try {
      prepare(admits ? 1 : 0);
      if (admits) {
        admitted.spec = std::move(spec);
        admitted.start = start;
        admitted.tasks.assign(l.tx_placed_.begin(), l.tx_placed_.end());
        if (!self_evicted) placeholder = l.index_.emplace(id, 0).second;
        if (l.running_.size() == l.running_.capacity()) {
          l.running_.reserve(std::max<std::size_t>(4, 2 * l.running_.capacity()));
        }
        if (l.undo_.open) {
          auto& e = l.undo_.entries.emplace_back();  // reserved by prepare
          e.what = undo_entry::kind::admitted;
          e.job = id;
        }
      }
    } catch (...) {
      if (placeholder) l.index_.erase(id);
      l.undo_.entries.erase(l.undo_.entries.begin() + static_cast<std::ptrdiff_t>(mark), l.undo_.entries.end());
      throw;
    }
    // from here on nothing allocates (but the rare re-admission of a job evicted here)
    bump_if_changed();
    finish_evictions(mark);
    if (admits) {
      if (placeholder) {
        l.index_.find(id)->second = l.running_.size();
      } else {
        l.index_.emplace(id, l.running_.size());
      }
      l.running_.push_back(std::move(admitted));  // within the reserved capacity
    }
    close();
  }
  /// Makes evictions, shrinks and grows final. @pre nothing was placed. Strong guarantee, as
  /// above.
  void commit() {
    GPUSCHED_EXPECTS(l_ != nullptr && l_->tx_placed_.empty());
    const std::size_t mark = l_->undo_.entries.size();
    try {
      prepare(0);
    } catch (...) {
      l_->undo_.entries.erase(l_->undo_.entries.begin() + static_cast<std::ptrdiff_t>(mark),
                         l_->undo_.entries.end());
      throw;
    }
    bump_if_changed();
    finish_evictions(mark);
    close();
  }

 private:
  friend class ledger;
  explicit transaction(ledger& l) noexcept : l_(&l) {}
  void bump_if_changed() noexcept {
    if (!l_->tx_placed_.empty() || !l_->tx_evicted_.empty() || !l_->tx_shrunk_.empty() ||
        !l_->tx_grown_.empty())
      ++l_->version_;
  }
  /// The allocating part of a commit, before any change: room for the grown tasks in their
  /// jobs and, when the undo journal is open, its entries (grown, shrunk with the tasks before,
  /// evicted, plus `extra` more), in the order `finish_evictions` makes the changes.
  void prepare(std::size_t extra) {
    ledger& l = *l_;
    for (const auto& g : l.tx_grown_) {
      auto& tasks = l.running_[l.index_.at(g.job)].tasks;
      const auto want = tasks.size() + static_cast<std::size_t>(grown_here(g.job));
      if (want > tasks.capacity()) tasks.reserve(std::max(want, 2 * tasks.capacity()));
    }
    if (!l.undo_.open) return;
    const std::size_t need = l.undo_.entries.size() + l.tx_grown_.size() + l.tx_shrunk_.size() +
                             l.tx_evicted_.size() + extra;
    if (need > l.undo_.entries.capacity()) l.undo_.entries.reserve(std::max(need, 2 * l.undo_.entries.capacity()));
    for (const auto& g : l.tx_grown_) {
      auto& e = l.undo_.entries.emplace_back();
      e.what = undo_entry::kind::grown;
      e.job = g.job;
    }
    for (const auto& sh : l.tx_shrunk_) {
      auto& e = l.undo_.entries.emplace_back();
      e.what = undo_entry::kind::shrunk;
      e.job = sh.job;
      e.order = sh;
      e.saved.tasks = l.running_[l.index_.at(sh.job)].tasks;  // may throw: nothing changed yet
    }
    for (const job_id v : l.tx_evicted_) {
      auto& e = l.undo_.entries.emplace_back();
      e.what = undo_entry::kind::evicted;
      e.job = v;
    }
  }
  /// The changes of a commit (after `prepare`); `entry`: the first journal entry of this
  /// commit (used when the journal is open). Allocates nothing.
  void finish_evictions(std::size_t entry) {
    // grown jobs are neither shrunk nor evicted here (grow/shrink/evict refuse the mix)
    for (const auto& g : l_->tx_grown_) {
      l_->running_[l_->index_.at(g.job)].tasks.push_back(g.task);  // reserved by prepare
    }
    for (const auto& s : l_->tx_shrunk_) {
      auto& tasks = l_->running_[l_->index_.at(s.job)].tasks;
      std::int32_t seen = 0;
      std::erase_if(tasks, [&](const task_allocation& t) {
        return t.group == s.group && seen++ >= s.to;  // remove_if visits in order
      });
    }
    // clear the flags first: erasing moves other jobs into the freed positions
    for (const job_id id : l_->tx_evicted_) l_->set_evicted_flag(l_->index_.at(id), false);
    if (!l_->undo_.open) {
      for (const job_id id : l_->tx_evicted_) l_->erase_running(l_->index_.at(id));
      return;
    }
    entry += l_->tx_grown_.size() + l_->tx_shrunk_.size();
    for (const job_id id : l_->tx_evicted_) {
      auto& e = l_->undo_.entries[entry++];
      e.pos = l_->index_.at(id);
      e.saved = std::move(l_->running_[e.pos]);
      e.node = l_->index_.extract(id);  // kept: `undo` re-inserts it without allocating
      l_->fill_hole(e.pos);
    }
  }
  /// Tasks grown here for `id` (in group `group`, or in any group when negative).
  [[nodiscard]] std::int32_t grown_here(job_id id, std::int32_t group = -1) const noexcept {
    std::int32_t n = 0;
    for (const auto& g : l_->tx_grown_) {
      n += g.job == id && (group < 0 || g.task.group == group) ? 1 : 0;
    }
    return n;
  }
  /// Whether `a`'s CPU, memory and GPU grants have the shape `r` asks (counts, share, MIG
  /// instance or replica; the exact MIG profile and replica memory are the packing policy's
  /// and the invariant checker's business). O(grants).
  [[nodiscard]] static bool matches_request(const task_request& r,
                                            const task_allocation& a) noexcept {
    if (a.cpu != r.cpu || a.memory != r.memory) return false;
    return r.gpu.visit(
        [&](demand_none) { return a.gpus.empty(); },
        [&](demand_whole w) {
          return a.gpus.size() == static_cast<std::size_t>(w.count.value()) &&
                 std::all_of(a.gpus.begin(), a.gpus.end(), [](const gpu_grant& g) {
                   return g.milli == whole_gpu_milli && g.mig_slots == 0 && !g.replica;
                 });
        },
        [&](demand_share s) {
          return a.gpus.size() == 1 && a.gpus[0].milli == s.share && a.gpus[0].mig_slots == 0;
        },
        [&](demand_mig) { return a.gpus.size() == 1 && a.gpus[0].mig_slots != 0; },
        [&](demand_replica) { return a.gpus.size() == 1 && a.gpus[0].replica; });
  }
  [[nodiscard]] bool shrunk_here(job_id id) const noexcept {
    return std::any_of(l_->tx_shrunk_.begin(), l_->tx_shrunk_.end(),
                       [&](const shrink_order& s) { return s.job == id; });
  }
  /// Returns (`sign = -1`) or re-applies (`+1`) the tasks `s` releases from `r`.
  void apply_shrink(const running_job& r, const shrink_order& s, int sign) noexcept {
    std::int32_t seen = 0;
    for (const auto& t : r.tasks) {
      if (t.group == s.group && seen++ >= s.to) l_->cluster_.apply(t, sign);
    }
  }
  void close() noexcept {
    l_->tx_placed_.clear();
    l_->tx_evicted_.clear();
    l_->tx_shrunk_.clear();
    l_->tx_grown_.clear();
    l_->tx_open_ = false;
    l_ = nullptr;
  }
  ledger* l_;
};

inline ledger::transaction ledger::begin() noexcept {
  GPUSCHED_EXPECTS(!tx_open_);
  tx_open_ = true;
  return transaction{*this};
}

GPUSCHED_END_NAMESPACE
