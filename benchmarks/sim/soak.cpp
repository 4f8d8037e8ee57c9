// SPDX-License-Identifier: Apache-2.0
// gpusched-soak: long seeded workloads through the pipeline with node and GPU failures, elastic
// jobs (shrunk by preemption, grown back by the growth step), tenant quotas with free-quota
// reclaim, and preemption, over several registry compositions. After every cycle it checks the
// ledger's invariants (check_invariants), that no gang is half-placed, that no pending job is
// running, and that every decision names a pending job once. A plain program (not a unit test):
//
//   gpusched-soak [--cycles N] [--seed S] [--nodes N]
//
// prints one line per composition (cycles, seconds, admissions, preemptions, failures,
// violations) and exits 1 when any invariant was violated. Figures: benchmarks/README.md.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <gpusched/check/invariants.hpp>
#include <gpusched/gpusched.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/policy/admission/quota.hpp>

#include "generators.hpp"

namespace gs = gpusched;

namespace {

struct options {
  long cycles = 20000;
  std::uint64_t seed = 1;
  std::size_t nodes = 48;
};

struct figures {
  long cycles = 0, admitted = 0, preempted = 0, shrunk = 0, grown = 0, finished = 0;
  long node_failures = 0, gpu_failures = 0, requeued = 0, violations = 0;
  double seconds = 0;
};

/// Eight tenants in two cohorts, 12 whole GPUs of nominal quota each (so some borrow).
gs::quota_tree teams(const gs::gpu_catalog& cat) {
  gs::quota_tree::builder b(cat);
  b.cohort("a");
  b.cohort("b");
  for (unsigned t = 0; t < 8; ++t) {
    b.queue("team-" + std::to_string(t), gs::tenant_id{t}, t < 4 ? "a" : "b")
        .nominal(gs::quota_resource::gpu_milli(), 12000);
  }
  return b.build();
}

struct composition {
  std::string_view ordering, admission, packing, placement, preemption;
};

gs::any_pipeline make(const composition& c, const gs::gpu_catalog& cat) {
  gs::policy_inputs in;
  in.prior = std::make_shared<const gs::gpu_time_prior>(
      std::vector<double>{30, 120, 600, 3600, 7200, 36000, 86400});
  gs::any_admission_policy adm = c.admission == "quota"
                                     ? gs::any_admission_policy(gs::quota_admission<>(teams(cat)))
                                     : gs::make_admission_policy(c.admission, in);
  gs::any_preemption_policy pre = gs::make_preemption_policy(c.preemption, in);
  if (c.preemption == "checkpoint-aware") {
    gs::checkpoint_aware_options o;
    o.reclaim = true;  // free-quota reclaim with quota admission
    pre = gs::any_preemption_policy(gs::checkpoint_aware_preemption{o});
  }
  return gs::any_pipeline(gs::make_ordering_policy(c.ordering, in), std::move(adm),
                          gs::make_packing_policy(c.packing, in),
                          gs::make_placement_policy(c.placement, in), std::move(pre));
}

/// A job: 1..2 groups of 1..4 tasks (whole GPUs, shares, MIG, CPU-only), a third elastic,
/// half checkpointing, eight tenants, priorities 0..3, 2..60 cycles of work.
gs::job_spec make_job(gs::random_engine& g, const gs::gpu_catalog& cat, unsigned id,
                      gs::sim_time now) {
  auto j = gs::testing::random_job(g, cat, gs::job_id{id}, now);
  j.tenant = gs::tenant_id{static_cast<gs::tenant_id::rep>(gs::uniform_index(g, 8))};
  j.priority = static_cast<std::int32_t>(gs::uniform_index(g, 4));
  if (gs::uniform_index(g, 3) == 0) {
    for (auto& grp : j.groups) {
      if (grp.count > 1) grp.min_count = 1;
    }
  }
  if (gs::uniform_index(g, 2) == 0) {
    j.checkpoint.interval = gs::seconds(60);
    j.checkpoint.last = now;
    j.checkpoint.checkpoint_cost = gs::seconds(5);
    j.checkpoint.restore_cost = gs::seconds(10);
  }
  j.expected_duration = gs::seconds(static_cast<std::int64_t>(20 + 10 * gs::uniform_index(g, 59)));
  return j;
}

void violation(figures& f, const std::string& label, long cycle, const std::string& what) {
  if (f.violations < 5) {
    std::fprintf(stderr, "%s cycle %ld: %s\n", label.c_str(), cycle, what.c_str());
  }
  ++f.violations;
}

figures soak(const composition& c, const options& o) {
  const auto label = std::string(c.ordering) + "/" + std::string(c.admission) + "/" +
                     std::string(c.packing) + "/" + std::string(c.placement) + "/" +
                     std::string(c.preemption);
  const auto cat = gs::basic_catalog();
  gs::random_engine g(o.seed);
  gs::random_engine rng(o.seed + 1);
  gs::ledger book(gs::cluster(cat, gs::testing::random_nodes(g, o.nodes)));
  auto pipe = make(c, cat);
  // growth also while jobs wait, so that shrunk elastic jobs grow back under a steady queue
  pipe.set_options({.grow = true, .max_grown_tasks = -1, .grow_while_waiting = true});
  std::vector<gs::job_spec> pending;
  std::unordered_map<gs::job_id, gs::sim_time> ends;  // running job -> when it finishes
  std::unordered_map<gs::job_id, gs::job_spec> specs;  // running job -> its spec (to requeue)
  std::vector<std::pair<gs::node_index, long>> down;   // node -> cycle it comes back
  std::vector<std::pair<gs::gpu_index, long>> failed;  // GPU -> cycle it is repaired
  unsigned next_id = 1;
  figures f;
  gs::cycle_result res;
  std::unordered_set<gs::job_id> seen;
  const auto start = std::chrono::steady_clock::now();
  const auto requeue = [&](gs::job_id id, gs::sim_time now) {
    const gs::running_job* r = book.find(id);
    gs::job_spec spec = r->spec;
    spec.submit = now;
    pipe.release(book, id, now, rng);
    ends.erase(id);
    specs.erase(id);
    pending.push_back(std::move(spec));
    ++f.requeued;
  };
  for (long cyc = 0; cyc < o.cycles; ++cyc) {
    const auto now = gs::at(gs::seconds(10 * cyc));
    // repairs, then finished jobs
    std::erase_if(down, [&](const auto& d) {
      if (d.second > cyc) return false;
      book.set_available(d.first, true);
      return true;
    });
    std::erase_if(failed, [&](const auto& d) {
      if (d.second > cyc) return false;
      book.set_gpu_available(d.first, true);
      return true;
    });
    std::vector<gs::job_id> done;
    for (const auto& r : book.running()) {
      pipe.history().service.add(r.spec.id, static_cast<double>(r.milli_gpus()) / 100.0,
                                 gs::seconds(10));
      if (ends.at(r.spec.id) <= now) done.push_back(r.spec.id);
    }
    for (const auto id : done) {
      pipe.release(book, id, now, rng);
      ends.erase(id);
      specs.erase(id);
      pipe.history().forget(id);
      ++f.finished;
    }
    // a node fails now and then (its jobs are requeued), as does a single GPU
    if (gs::uniform_index(g, 40) == 0) {
      const gs::node_index n{static_cast<gs::node_index::rep>(gs::uniform_index(g, o.nodes))};
      if (book.state().available(n)) {
        for (const auto id : book.jobs_on(n)) requeue(id, now);
        book.set_available(n, false);
        down.emplace_back(n, cyc + 20 + static_cast<long>(gs::uniform_index(g, 200)));
        ++f.node_failures;
      }
    }
    if (book.state().gpu_count() > 0 && gs::uniform_index(g, 60) == 0) {
      const gs::gpu_index x{
          static_cast<gs::gpu_index::rep>(gs::uniform_index(g, book.state().gpu_count()))};
      if (!book.state().gpu(x).failed) {
        for (const auto id : book.jobs_on_gpu(x)) requeue(id, now);
        book.set_gpu_available(x, false);
        failed.emplace_back(x, cyc + 10 + static_cast<long>(gs::uniform_index(g, 100)));
        ++f.gpu_failures;
      }
    }
    // arrivals, bounded queue
    for (auto k = gs::uniform_index(g, 4); k > 0; --k) {
      pending.push_back(make_job(g, cat, next_id++, now));
    }
    if (pending.size() > 200) pending.erase(pending.begin(), pending.begin() + 50);

    pipe.schedule(book, pending, now, rng, res);
    ++f.cycles;

    // checks
    if (const auto rep = gs::check_invariants(book); !rep.ok()) {
      violation(f, label, cyc, rep.to_string());
    }
    if (res.decisions.size() != pending.size()) violation(f, label, cyc, "a decision per job");
    seen.clear();
    for (const auto& d : res.decisions) {
      if (!seen.insert(d.job).second) violation(f, label, cyc, "a job decided twice");
    }
    for (const auto& r : book.running()) {
      for (std::size_t gi = 0; gi < r.spec.groups.size(); ++gi) {
        const auto n = r.tasks_in_group(gi);
        if (n < r.spec.groups[gi].minimum() || n > r.spec.groups[gi].count) {
          violation(f, label, cyc, "job " + std::to_string(r.spec.id.value()) + " half-placed");
        }
      }
    }
    // apply the decisions: victims requeued, admitted jobs start (a job admitted early in the
    // cycle may be the victim of a later one)
    std::unordered_set<gs::job_id> victims;
    for (const auto& d : res.decisions) victims.insert(d.victims.begin(), d.victims.end());
    std::unordered_set<gs::job_id> leave;
    std::vector<gs::job_spec> requeued_specs;
    for (const auto& d : res.decisions) {
      for (const auto v : d.victims) {
        if (book.is_running(v)) violation(f, label, cyc, "a victim still runs");
        const auto it = specs.find(v);
        if (it == specs.end()) continue;
        it->second.submit = now;
        requeued_specs.push_back(std::move(it->second));
        specs.erase(it);
        ends.erase(v);
        ++f.preempted;
        ++f.requeued;
      }
      f.shrunk += static_cast<long>(d.shrinks.size());
      if (d.kind == gs::verdict::admit) {
        if (!book.is_running(d.job) && !victims.contains(d.job)) {
          violation(f, label, cyc, "an admitted job does not run");
        }
        ++f.admitted;
      }
      if (d.kind != gs::verdict::defer) leave.insert(d.job);
    }
    f.grown += static_cast<long>(res.grown.size());
        std::vector<gs::job_spec> next;
    for (auto& j : pending) {
      if (leave.contains(j.id) && !victims.contains(j.id)) {
        if (book.is_running(j.id)) {
          ends[j.id] = now + *j.expected_duration;
          specs[j.id] = j;
        }
        continue;
      }
      next.push_back(std::move(j));
    }
    pending = std::move(next);
    for (auto& j : requeued_specs) pending.push_back(std::move(j));
    for (const auto& r : book.running()) {
      if (!ends.contains(r.spec.id)) violation(f, label, cyc, "a running job nobody started");
    }
  }
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "%-58s cycles %7ld  %7.2f s  admitted %6ld  preempted %5ld  shrunk %4ld  grown %5ld  "
      "node-failures %4ld  gpu-failures %4ld  violations %ld\n",
      label.c_str(), f.cycles, f.seconds, f.admitted, f.preempted, f.shrunk, f.grown,
      f.node_failures, f.gpu_failures, f.violations);
  std::fflush(stdout);
  return f;
}

int usage(const char* why) {
  std::fprintf(stderr, "gpusched-soak: %s\nusage: gpusched-soak [--cycles N] [--seed S] [--nodes N]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    options o;
    for (int i = 1; i < argc; ++i) {
      const std::string_view a = argv[i];
      if (i + 1 >= argc) return usage("missing value");
      const std::string v = argv[++i];
      char* end = nullptr;
      const auto n = std::strtoull(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0' || n == 0) return usage("not a positive number");
      if (a == "--cycles") {
        o.cycles = static_cast<long>(n);
      } else if (a == "--seed") {
        o.seed = n;
      } else if (a == "--nodes") {
        o.nodes = static_cast<std::size_t>(n);
      } else {
        return usage("unknown option");
      }
    }
    const composition comps[] = {
        {"drf", "quota", "best-fit", "gang", "checkpoint-aware"},
        {"multifactor", "gang-easy", "fgd-best-fit", "topology", "las"},
        {"las", "gang", "first-fit", "first-fit", "kube-default"},
        {"priority", "gang", "mig-aware", "gang", "priority"},
        {"themis", "quota", "first-fit", "gang", "srtf"},
        {"fifo", "gang-easy", "worst-fit", "first-fit", "none"},
        {"drf-snapshot", "gang-conservative", "first-fit", "gang", "priority"},
    };
    figures total;
    for (const auto& c : comps) {
      const figures f = soak(c, o);
      total.cycles += f.cycles;
      total.seconds += f.seconds;
      total.violations += f.violations;
    }
    std::printf("total: %ld cycles in %.1f s, %ld invariant violations\n", total.cycles,
                total.seconds, total.violations);
    return total.violations == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpusched-soak: %s\n", e.what());
    return 1;
  }
}
