// SPDX-License-Identifier: Apache-2.0
// Helpers for the law suites (tests/gpusched/policy/<family>/laws.test.cpp): named builders for
// nodes, groups and jobs, seeded random clusters with every kind of GPU (exclusive, MIG,
// time-sliced, MPS, nodes out of service, failed GPUs, node types for topology), an independent
// oracle for "an allocation grants exactly its request", and a snapshot of a ledger's state for
// "nothing changed" checks.
//
// Every positional node_spec / task_group / job_spec construction of the law suites lives here,
// so that a change of those structs is fixed in one place.
#pragma once

#include <bit>  // std::popcount
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gpusched/gpusched.hpp>

#include "generators.hpp"
#include "preemption_fixtures.hpp"

namespace gpusched::testing {

// ---- builders -------------------------------------------------------------------------------

/// A node `id` (position id - 1 when ids are dense from 1) of `gpus` GPUs of `model`.
inline node_spec node_of(unsigned id, const std::string& model, int gpus,
                         cpu_millis cpu = cpu_millis{64000},
                         memory_mib memory = memory_mib{512 * 1024}) {
  node_spec s;
  s.id = node_id{id};
  s.name = "n" + std::to_string(id);
  s.gpu_model = model;
  s.gpus = gpu_count{gpus};
  s.cpu = cpu;
  s.memory = memory;
  return s;
}

/// A task group `name` of `count` tasks of `r`; no `min_count`: not elastic.
inline task_group group_of(const std::string& name, const task_request& r, int count,
                           std::optional<std::int32_t> min_count = std::nullopt) {
  task_group t;
  t.name = name;
  t.request = r;
  t.count = count;
  t.min_count = min_count;
  return t;
}

/// A request of `d` with `cpu` and `memory`, on any model.
inline task_request request_of(gpu_demand d, cpu_millis cpu = cpu_millis{1000},
                               memory_mib memory = memory_mib{1024}) {
  task_request r;
  r.gpu = d;
  r.cpu = cpu;
  r.memory = memory;
  return r;
}

/// Job `id` of the given groups.
inline job_spec job_of(unsigned id, std::vector<task_group> groups, int priority = 0,
                       unsigned tenant = 0) {
  job_spec j;
  j.id = job_id{id};
  j.name = "j" + std::to_string(id);
  j.priority = priority;
  j.tenant = tenant_id{tenant};
  j.groups = std::move(groups);
  return j;
}

// ---- random clusters ------------------------------------------------------------------------

/// `random_nodes`, with some exclusive non-MIG GPU nodes switched to time-slicing or MPS (2..7
/// replicas) and, when `topology_handle` is not 0, every 8-GPU node of that node type.
inline std::vector<node_spec> law_nodes(random_engine& g, std::size_t nodes,
                                        std::uint32_t topology_handle = 0) {
  auto out = random_nodes(g, nodes);
  for (auto& s : out) {
    if (s.gpus > gpu_count{0} && !s.mig_enabled && uniform_index(g, 5) == 0) {
      s.sharing = uniform_index(g, 2) == 0 ? gpu_sharing::time_slicing : gpu_sharing::mps;
      s.replicas = 2 + static_cast<int>(uniform_index(g, 6));
    }
    if (topology_handle != 0 && s.gpus == gpu_count{8} && !s.mig_enabled &&
        s.sharing == gpu_sharing::exclusive)
      s.topology = topology_handle;
  }
  return out;
}

/// A random request of any kind, replicas included (a replica asks for 0..24 GiB of device
/// memory, so that some do not fit an MPS replica's limit).
inline task_request law_request(random_engine& g, const gpu_catalog& cat) {
  if (uniform_index(g, 6) == 0) {
    task_request r;
    r.gpu = gpu_demand::replica(memory_mib{static_cast<std::int64_t>(uniform_index(g, 25)) * 1024});
    r.cpu = cpu_millis{static_cast<std::int64_t>(uniform_index(g, 8000))};
    r.memory = memory_mib{static_cast<std::int64_t>(uniform_index(g, 16 * 1024))};
    return r;
  }
  return random_request(g, cat);
}

/// Takes about one node in ten out of service and fails about one GPU in thirty of the others.
/// @pre nothing runs yet.
inline void take_some_out(random_engine& g, ledger& book) {
  const cluster& c = book.state();
  for (node_index n : c.nodes()) {
    if (uniform_index(g, 10) == 0) {
      book.set_available(n, false);
      continue;
    }
    for (std::size_t i = 0; i < c.gpus(n).size(); ++i) {
      if (uniform_index(g, 30) == 0)
        book.set_gpu_available(gpu_index{static_cast<gpu_index::rep>(c.first_gpu(n).value() + i)},
                               false);
    }
  }
}

/// Runs up to `jobs` random one-group jobs (ids from `first_id`) wherever first fit puts them,
/// so that the cluster is partly used in every way (shares, MIG slots, replicas, whole GPUs).
inline void fill_randomly(random_engine& g, ledger& book, const gpu_catalog& cat,
                          std::size_t jobs, unsigned first_id = 10000) {
  for (std::size_t k = 0; k < jobs; ++k) {
    const auto r = law_request(g, cat);
    const int count = 1 + static_cast<int>(uniform_index(g, 2));
    auto j = job_of(first_id + static_cast<unsigned>(k), {group_of("fill", r, count)},
                    static_cast<int>(uniform_index(g, 3)),
                    static_cast<unsigned>(uniform_index(g, 4)));
    (void)run_anywhere(book, j, sim_time{});
  }
}

/// A random job for the placement and admission suites: 1..3 groups of 1..`max_tasks` tasks of
/// `law_request`s, some elastic (min 1..count-1).
inline job_spec law_job(random_engine& g, const gpu_catalog& cat, unsigned id, sim_time submit,
                        int max_tasks = 3) {
  std::vector<task_group> groups;
  const auto n = 1 + uniform_index(g, 3);
  for (std::size_t k = 0; k < n; ++k) {
    const auto r = law_request(g, cat);
    const int count = 1 + static_cast<int>(uniform_index(g, static_cast<std::uint64_t>(max_tasks)));
    std::optional<std::int32_t> min;
    if (count > 1 && uniform_index(g, 3) == 0)
      min = 1 + static_cast<int>(uniform_index(g, static_cast<std::uint64_t>(count - 1)));
    groups.push_back(group_of("g" + std::to_string(k), r, count, min));
  }
  auto j = job_of(id, std::move(groups), static_cast<int>(uniform_index(g, 3)),
                  static_cast<unsigned>(uniform_index(g, 4)));
  j.submit = submit;
  j.preemptible = uniform_index(g, 4) != 0;
  if (uniform_index(g, 2) == 0)
    j.expected_duration = seconds(static_cast<std::int64_t>(60 + uniform_index(g, 600)));
  return j;
}

/// Runs up to `jobs` random jobs (ids from `first_id`) on `book` wherever first fit puts them,
/// started 60 s .. 2 h before `now`: `law_job`s when `any_kind`, else 1..2 tasks of 1, 2, 4 or
/// 8 whole GPUs (some elastic); random priority 0..3, tenant, preemptibility, checkpoints, and
/// an expected duration for most (some already overdue).
inline void law_running(random_engine& g, ledger& book, const gpu_catalog& cat, std::size_t jobs,
                        sim_time now, bool any_kind, unsigned first_id = 1) {
  static constexpr int sizes[] = {1, 2, 4, 8};
  unsigned id = first_id;
  for (std::size_t tries = 0; book.running().size() < jobs && tries < jobs * 4; ++tries) {
    job_spec j;
    if (any_kind) {
      j = law_job(g, cat, id, sim_time{}, 2);
    } else {
      const int tasks = 1 + static_cast<int>(uniform_index(g, 2));
      const int gpus = sizes[uniform_index(g, 4)];
      const auto min = tasks == 2 && uniform_index(g, 3) == 0 ? std::optional<std::int32_t>{1}
                                                              : std::optional<std::int32_t>{};
      j = job_of(id,
                 {group_of("w", request_of(gpu_demand::whole(gpu_count{gpus})), tasks, min)});
    }
    j.priority = static_cast<int>(uniform_index(g, 4));
    j.tenant = tenant_id{static_cast<tenant_id::rep>(uniform_index(g, 3))};
    j.preemptible = uniform_index(g, 5) != 0;
    const auto age = seconds(static_cast<std::int64_t>(60 + uniform_index(g, 7200)));
    const sim_time start = now - age;
    j.submit = start;
    if (uniform_index(g, 4) != 0) {
      j.expected_duration = seconds(static_cast<std::int64_t>(60 + uniform_index(g, 14400)));
    } else {
      j.expected_duration.reset();
    }
    if (uniform_index(g, 4) != 0) {
      j.checkpoint.last = start + seconds(static_cast<std::int64_t>(uniform_index(
                                      g, static_cast<std::uint64_t>(age.count() / 1000))));
    }
    j.checkpoint.restore_cost = seconds(static_cast<std::int64_t>(uniform_index(g, 120)));
    if (run_anywhere(book, j, start)) ++id;
  }
}

// ---- oracles --------------------------------------------------------------------------------

/// Empty when `a` grants exactly `r` on `c` (before `a` is applied): CPU and memory equal; no
/// GPU for a CPU-only request; `count` distinct whole (1000-milli) GPUs of exclusive non-MIG
/// kind; one share of exactly the asked milli on an exclusive non-MIG GPU; one MIG instance of
/// the asked compute/memory geometry at a legal start on a MIG GPU; one replica on a replicated
/// GPU whose per-replica memory covers the ask; and every GPU of a model the request allows.
/// Otherwise what is wrong. Independent of the library's own checks.
inline std::string grant_error(const cluster& c, const task_request& r, const task_allocation& a) {
  if (a.cpu != r.cpu) return "cpu differs from the request";
  if (a.memory != r.memory) return "memory differs from the request";
  if (r.gpu.kind == gpu_demand_kind::none) return a.gpus.empty() ? "" : "GPUs for a CPU-only task";
  if (!r.allowed_models.admits(c.model(a.node))) return "a GPU model the request does not allow";
  for (const auto& gr : a.gpus) {
    if (c.gpu(gr.gpu).node != a.node) return "a GPU of another node";
    if (c.gpu(gr.gpu).model != c.model(a.node)) return "a GPU of another model";
  }
  switch (r.gpu.kind) {
    case gpu_demand_kind::none:
      break;
    case gpu_demand_kind::whole:
      if (a.gpus.size() != static_cast<std::size_t>(r.gpu.count.value())) return "wrong GPU count";
      for (std::size_t i = 0; i < a.gpus.size(); ++i) {
        const auto& gr = a.gpus[i];
        const auto& s = c.gpu(gr.gpu);
        if (gr.milli != whole_gpu_milli || gr.mig_slots != 0 || gr.replica || gr.media)
          return "a whole GPU granted as something else";
        if (s.mig_enabled || s.replicated()) return "a whole GPU on a MIG or replicated GPU";
        for (std::size_t k = 0; k < i; ++k)
          if (a.gpus[k].gpu == gr.gpu) return "the same GPU twice";
      }
      break;
    case gpu_demand_kind::share: {
      if (a.gpus.size() != 1) return "a share on other than one GPU";
      const auto& gr = a.gpus[0];
      const auto& s = c.gpu(gr.gpu);
      if (gr.milli != r.gpu.share || gr.mig_slots != 0 || gr.replica)
        return "a share of another size or kind";
      if (s.mig_enabled || s.replicated()) return "a share on a MIG or replicated GPU";
      break;
    }
    case gpu_demand_kind::mig: {
      if (a.gpus.size() != 1) return "a MIG instance on other than one GPU";
      const auto& gr = a.gpus[0];
      const auto& s = c.gpu(gr.gpu);
      if (!s.mig_enabled || gr.milli != milli_gpu{0} || gr.replica)
        return "a MIG instance on a non-MIG GPU or with a share";
      const mig_profile* p =
          c.catalog()[s.model].mig.find(r.gpu.mig_compute, r.gpu.mig_memory, gr.media);
      if (p == nullptr) return "no MIG profile of that geometry";
      if (std::popcount(static_cast<unsigned>(gr.mig_slots)) != r.gpu.mig_memory)
        return "MIG memory slices differ from the request";
      bool legal = false;
      for (unsigned st = 0; st < 8; ++st) {
        if (((p->placement_starts >> st) & 1u) != 0 && p->slots_at(st) == gr.mig_slots)
          legal = true;
      }
      if (!legal) return "a MIG instance at an illegal start slot";
      break;
    }
    case gpu_demand_kind::replica: {
      if (a.gpus.size() != 1) return "a replica on other than one GPU";
      const auto& gr = a.gpus[0];
      const auto& s = c.gpu(gr.gpu);
      if (!gr.replica || gr.milli != milli_gpu{0} || gr.mig_slots != 0)
        return "a replica granted as something else";
      if (!s.replicated()) return "a replica of an exclusive GPU";
      const memory_mib limit =
          s.sharing == gpu_sharing::mps ? s.replica_memory : c.catalog()[s.model].memory;
      if (r.gpu.gpu_memory > limit) return "a replica whose memory limit is below the ask";
      break;
    }
  }
  return "";
}

/// Everything observable about a ledger's state: per node CPU and memory free and availability,
/// per GPU its state, and the running jobs with their tasks. Equal snapshots: nothing changed.
struct ledger_snapshot {
  struct gpu {
    milli_gpu free;
    mig_slot_mask mig_used;
    std::uint8_t mig_instances;
    bool media;
    std::uint8_t replicas_used;
    bool failed;
    friend bool operator==(const gpu&, const gpu&) = default;
  };
  std::vector<std::int64_t> cpu, memory;
  std::vector<bool> up;
  std::vector<gpu> gpus;
  std::vector<std::pair<job_id, std::vector<task_allocation>>> running;
  friend bool operator==(const ledger_snapshot&, const ledger_snapshot&) = default;

  static ledger_snapshot of(const ledger& book) {
    ledger_snapshot s;
    const cluster& c = book.state();
    for (node_index n : c.nodes()) {
      s.cpu.push_back(c.cpu_free(n).value());
      s.memory.push_back(c.memory_free(n).value());
      s.up.push_back(c.available(n));
      for (const auto& x : c.gpus(n)) {
        s.gpus.push_back(
            {x.free, x.mig_used, x.mig_instances, x.mig_media_used, x.replicas_used, x.failed});
      }
    }
    for (const auto& r : book.running()) s.running.emplace_back(r.spec.id, r.tasks);
    return s;
  }
};

/// Empty when every running job is whole: each group runs between its minimum and its count
/// tasks, and every task has a valid group index. Otherwise the first job that is not.
inline std::string half_placed(const ledger& book) {
  for (const auto& r : book.running()) {
    for (const auto& t : r.tasks) {
      if (t.group >= r.spec.groups.size())
        return "job " + std::to_string(r.spec.id.value()) + ": task of unknown group";
    }
    for (std::size_t gi = 0; gi < r.spec.groups.size(); ++gi) {
      const auto n = r.tasks_in_group(gi);
      if (n < r.spec.groups[gi].minimum() || n > r.spec.groups[gi].count)
        return "job " + std::to_string(r.spec.id.value()) + " group " + std::to_string(gi) +
               " runs " + std::to_string(n) + " tasks";
    }
  }
  return "";
}

}  // namespace gpusched::testing
