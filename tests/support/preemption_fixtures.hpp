// SPDX-License-Identifier: Apache-2.0
// Helpers for preemption tests and benchmarks: placing running jobs, the pipeline's fit probe
// outside a pipeline, seeded random preemption instances, and a brute-force oracle.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <gpusched/gpusched.hpp>

#include "generators.hpp"

namespace gpusched::testing {

/// A job of `tasks` tasks with `gpus` whole GPUs each (1 core, 1 GiB per task).
inline job_spec whole_gpu_job(unsigned id, int tasks, int gpus, int priority = 0,
                              std::optional<std::int32_t> min_tasks = std::nullopt) {
  job_spec j;
  j.id = job_id{id};
  j.name = "j" + std::to_string(id);
  j.priority = priority;
  j.groups.push_back({.name = "w",
                      .request = {.gpu = gpu_demand::whole(gpu_count{gpus}),
                                  .cpu = cpu_millis{1000},
                                  .memory = memory_mib{1024}},
                      .count = tasks,
                      .min_count = min_tasks});
  return j;
}

/// Runs `j` with task k (in group order) on node position `nodes[k]`, started at `start`.
/// Returns false (and changes nothing) if a task does not fit there.
inline bool run_on(ledger& book, const job_spec& j, std::span<const unsigned> nodes,
                   sim_time start) {
  random_engine g(0);
  const schedule_context ctx(book, start, g);
  auto tx = book.begin();
  std::size_t k = 0;
  for (std::size_t gi = 0; gi < j.groups.size(); ++gi) {
    for (std::int32_t t = 0; t < j.groups[gi].count; ++t, ++k) {
      if (k >= nodes.size()) return false;
      auto a = first_fit_packing{}.fit(ctx, node_index{nodes[k]}, j.groups[gi].request);
      if (!a) return false;
      a->group = static_cast<std::uint16_t>(gi);
      if (!tx.place(*a)) return false;
    }
  }
  tx.commit(j, start);
  return true;
}
inline bool run_on(ledger& book, const job_spec& j, std::initializer_list<unsigned> nodes,
                   sim_time start) {
  return run_on(book, j, std::span<const unsigned>(nodes.begin(), nodes.size()), start);
}

/// Runs `j` wherever first-fit puts it. Returns false (nothing changes) if it does not fit.
inline bool run_anywhere(ledger& book, const job_spec& j, sim_time start) {
  random_engine g(0);
  const schedule_context ctx(book, start, g);
  auto tx = book.begin();
  if (!first_fit_placement{}.place(ctx, j, packing_ref(first_fit_packing{}), tx).placed) {
    return false;
  }
  tx.commit(j, start);
  return true;
}

/// The pipeline's fit probe (first-fit placement), usable outside a pipeline.
struct first_fit_probe {
  ledger* book;
  const job_spec* job;
  sim_time now;
  std::size_t calls = 0;
  bool operator()(std::span<const job_id> victims, std::span<const shrink_order> shrinks,
                  std::vector<task_allocation>* placed) {
    ++calls;
    random_engine g(0);
    const schedule_context ctx(*book, now, g);
    auto tx = book->begin();
    for (job_id v : victims) tx.evict(v);
    for (const auto& s : shrinks) tx.shrink(s);
    const first_fit_packing pack;
    const bool ok = first_fit_placement{}.place(ctx, *job, packing_ref(pack), tx).placed;
    if (ok && placed != nullptr) placed->assign(tx.placed().begin(), tx.placed().end());
    return ok;
  }
};

/// Commits `plan` for `j` like the pipeline does; returns whether the preemptor was placed.
inline bool apply_plan(ledger& book, const job_spec& j, const preemption_plan& plan, sim_time now) {
  random_engine g(0);
  const schedule_context ctx(book, now, g);
  auto tx = book.begin();
  for (job_id v : plan.victims) tx.evict(v);
  for (const auto& s : plan.shrinks) tx.shrink(s);
  const first_fit_packing pack;
  if (!first_fit_placement{}.place(ctx, j, packing_ref(pack), tx).placed) return false;
  tx.commit(j, now);
  return true;
}

/// A random instance on `nodes` uniform 8-GPU nodes: running jobs of whole-GPU tasks (1..2
/// tasks of 1, 2, 4 or 8 GPUs), random priority 0..3, random start and checkpoint ages, some
/// elastic, placed first-fit until `jobs` are running or nothing fits.
inline void random_running(random_engine& g, ledger& book, std::size_t jobs, sim_time now,
                           unsigned first_id = 1) {
  static constexpr int sizes[] = {1, 2, 4, 8};
  unsigned id = first_id;
  for (std::size_t tries = 0; book.running().size() < jobs && tries < jobs * 4; ++tries) {
    const int tasks = 1 + static_cast<int>(uniform_index(g, 2));
    const int gpus = sizes[uniform_index(g, 4)];
    const bool elastic = tasks == 2 && uniform_index(g, 3) == 0;
    job_spec j =
        whole_gpu_job(id, tasks, gpus, static_cast<int>(uniform_index(g, 4)), elastic ? 1 : -1);
    j.tenant = tenant_id{static_cast<tenant_id::rep>(uniform_index(g, 3))};
    const auto age = seconds(static_cast<std::int64_t>(60 + uniform_index(g, 7200)));
    const sim_time start = now - age;
    if (uniform_index(g, 4) != 0) {
      j.checkpoint.last = start + seconds(static_cast<std::int64_t>(uniform_index(
                                      g, static_cast<std::uint64_t>(age.count() / 1000))));
    }
    j.checkpoint.restore_cost = seconds(static_cast<std::int64_t>(uniform_index(g, 120)));
    j.checkpoint.checkpoint_cost = seconds(static_cast<std::int64_t>(uniform_index(g, 60)));
    if (run_anywhere(book, j, start)) ++id;
  }
}

/// Brute force: the minimum total cost over every subset of `options` per admissible job
/// (evict, or shrink every elastic group to its minimum when `shrink`), such that the
/// preemptor fits (probed). Admissible: preemptible, priority below the preemptor's, running
/// at least `min_runtime`. Empty when no subset works. Exponential: keep instances small.
inline std::optional<double> brute_force_cost(ledger& book, const job_spec& preemptor, sim_time now,
                                              const preemption_cost_model& model, bool shrink,
                                              sim_duration min_runtime = {}) {
  struct opt {
    job_id id;
    double evict = 0;
    std::optional<double> shrink;
    std::vector<shrink_order> orders;
  };
  std::vector<opt> opts;
  for (const auto& r : book.running()) {
    if (!r.spec.preemptible || r.spec.priority >= preemptor.priority) continue;
    if (now - r.start < min_runtime) continue;
    opt o;
    o.id = r.spec.id;
    o.evict = model.evict(book.state(), r, now).lost_gpu_seconds;
    if (shrink) {
      std::vector<task_allocation> released;
      for (std::size_t gi = 0; gi < r.spec.groups.size(); ++gi) {
        const auto& grp = r.spec.groups[gi];
        if (!grp.elastic() || r.tasks_in_group(gi) <= grp.minimum()) continue;
        o.orders.push_back({r.spec.id, static_cast<std::uint16_t>(gi), grp.minimum()});
        std::int32_t seen = 0;
        for (const auto& t : r.tasks) {
          if (t.group == gi && seen++ >= grp.minimum()) released.push_back(t);
        }
      }
      if (!o.orders.empty())
        o.shrink = model.shrink(book.state(), r, released, now).lost_gpu_seconds;
    }
    opts.push_back(std::move(o));
  }
  std::optional<double> best;
  first_fit_probe probe{&book, &preemptor, now};
  std::vector<job_id> victims;
  std::vector<shrink_order> shrinks;
  std::vector<int> choice(opts.size(), 0);  // 0 none, 1 evict, 2 shrink
  while (true) {
    victims.clear();
    shrinks.clear();
    double cost = 0;
    bool any = false;
    for (std::size_t k = 0; k < opts.size(); ++k) {
      if (choice[k] == 1) {
        victims.push_back(opts[k].id);
        cost += opts[k].evict;
        any = true;
      } else if (choice[k] == 2) {
        shrinks.insert(shrinks.end(), opts[k].orders.begin(), opts[k].orders.end());
        cost += *opts[k].shrink;
        any = true;
      }
    }
    if (any && (!best || cost < *best) && probe(victims, shrinks, nullptr)) best = cost;
    std::size_t k = 0;  // next choice vector (mixed radix)
    for (; k < opts.size(); ++k) {
      const int top = opts[k].shrink ? 2 : 1;
      if (choice[k] < top) {
        ++choice[k];
        break;
      }
      choice[k] = 0;
    }
    if (k == opts.size()) break;
  }
  return best;
}

}  // namespace gpusched::testing
