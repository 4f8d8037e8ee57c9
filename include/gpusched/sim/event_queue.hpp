// SPDX-License-Identifier: Apache-2.0
/// @file
/// The simulator's typed events and their queue. An event is a time, a sequence number and a
/// payload, one of the `sim_events::` structs held in a `std::variant`; each payload names what
/// its fields are (a job's state index and epoch, a node position, a GPU index), where the
/// simulator once had one overloaded `job` field.
///
/// Order: by time; at one time by kind, in the order of the variant's alternatives
/// (completions, checkpoints, node failures, GPU failures, node repairs, GPU repairs,
/// arrivals, ticks); events of one kind at one time in the order they were pushed (the
/// sequence number). `push` and `pop` are O(log events), `top` O(1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <queue>
#include <variant>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/time.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// The payloads of simulator events.
namespace sim_events {
/// A running job's completion. Stale (ignored) when the job's epoch has moved on.
struct completion {
  std::uint32_t job = 0;    ///< state index (arrival order)
  std::uint32_t epoch = 0;  ///< the job's epoch when the event was scheduled
};
/// A running job finishes writing a periodic checkpoint. Stale like `completion`.
struct checkpoint {
  std::uint32_t job = 0;    ///< state index (arrival order)
  std::uint32_t epoch = 0;  ///< the job's epoch when the event was scheduled
};
/// Node `node` (a node position) fails.
struct node_failure {
  std::uint32_t node = 0;  ///< node position
  bool injected = false;   ///< given by `inject_node_failure` (draws no next random failure)
};
/// GPU `gpu` (a GPU index) fails.
struct gpu_failure {
  std::uint32_t gpu = 0;  ///< GPU index
  bool injected = false;  ///< given by `inject_gpu_failure` (draws no next random failure)
};
/// Node `node` is back in service.
struct node_repair {
  std::uint32_t node = 0;  ///< node position
};
/// GPU `gpu` is back in service.
struct gpu_repair {
  std::uint32_t gpu = 0;  ///< GPU index
};
/// Job `job` (state index) is submitted.
struct arrival {
  std::uint32_t job = 0;  ///< state index (arrival order)
};
/// A periodic scheduling tick (`cycle_trigger::interval`).
struct tick {};
}  // namespace sim_events

/// What an event is; the alternatives' order is the order of events at one time.
using sim_event_payload =
    std::variant<sim_events::completion, sim_events::checkpoint, sim_events::node_failure,
                 sim_events::gpu_failure, sim_events::node_repair, sim_events::gpu_repair,
                 sim_events::arrival, sim_events::tick>;

/// @brief One scheduled event.
struct sim_event {
  sim_time t{};              ///< when it happens
  std::uint64_t seq = 0;     ///< push order: breaks ties between events of one kind at one time
  sim_event_payload what{};  ///< what happens
};

/// @brief A priority queue of events, earliest first (see the file comment for ties).
class event_queue {
 public:
  /// Adds an event at `t`. O(log size).
  void push(sim_time t, sim_event_payload what) { q_.push(sim_event{t, seq_++, what}); }
  /// Whether no event is left. O(1).
  [[nodiscard]] bool empty() const noexcept { return q_.empty(); }
  /// The number of events queued. O(1).
  [[nodiscard]] std::size_t size() const noexcept { return q_.size(); }
  /// The earliest event. @pre `!empty()`.
  [[nodiscard]] const sim_event& top() const { return q_.top(); }
  /// Removes the earliest event. @pre `!empty()`.
  void pop() { q_.pop(); }

 private:
  struct later {
    bool operator()(const sim_event& a, const sim_event& b) const noexcept {
      if (a.t != b.t) return a.t > b.t;
      if (a.what.index() != b.what.index()) return a.what.index() > b.what.index();
      return a.seq > b.seq;
    }
  };
  std::priority_queue<sim_event, std::vector<sim_event>, later> q_;
  std::uint64_t seq_ = 0;
};

GPUSCHED_END_NAMESPACE
