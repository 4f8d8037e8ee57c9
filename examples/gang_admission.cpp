// SPDX-License-Identifier: Apache-2.0
// gang_admission: what the queue does behind a gang that does not fit. The same cluster and the
// same queue run under three queueing modes of `gang_admission` (strict FIFO, best effort, EASY
// backfill), in a small event loop that schedules a cycle whenever a job ends.
//
// The scenario (the seed's): 8 nodes x 8 GPUs, one 4-GPU job running, so 60 GPUs are free; at
// the head of the queue a 64-rank training gang, behind it three smaller jobs.
//
// What it shows:
//  - a gang is admitted whole or not at all: the 64-rank gang never holds any of the 60 GPUs
//    it could have grabbed;
//  - strict FIFO keeps the queue in order, but the small jobs wait behind the gang while up to
//    60 GPUs sit idle;
//  - best effort lets every small job that fits go ahead, and the big gang starves: each job
//    that starts pushes it further back (and a job without a duration estimate pushes it back
//    by an unknown amount);
//  - EASY backfill gives the head a reservation (the earliest time it fits once running jobs
//    end at their expected ends) and lets a job go ahead only if it does not delay that
//    reservation: the short sweep runs in the gap, the long fine-tune and the notebook without
//    an estimate are told exactly whose reservation they would delay;
//  - every decision says why, and the invariant checker confirms nothing is over-committed.
//
// Jobs run exactly as long as their estimates, except the notebook: it has no estimate (the
// scheduler treats it as running forever) and actually runs 4 hours.
#include <algorithm>  // std::min_element, std::erase_if
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>  // std::move
#include <vector>

#include <gpusched/gpusched.hpp>

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

constexpr int node_count = 8;
constexpr int gpus_per_node = 8;

gs::job_spec job(unsigned id, std::string name, int tasks, int gpus, std::optional<int> minutes) {
  return {.id = gs::job_id{id},
          .name = std::move(name),
          .expected_duration = minutes ? std::optional(gs::seconds(60LL * *minutes)) : std::nullopt,
          .groups = {{.name = "rank",
                      .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                  .cpu = 2_cores,
                                  .memory = 16_gib},
                      .count = tasks}}};
}

/// How long a job really runs: its estimate, or (the notebook) 4 hours.
gs::sim_duration true_duration(const gs::job_spec& j) {
  return j.expected_duration ? *j.expected_duration : gs::seconds(4 * 3600);
}

std::string t(gs::sim_time at) { return "t=" + gs::seconds_text(at); }

std::string label(const gs::job_spec& j) {
  return "job " + std::to_string(j.id.value()) + " '" + j.name + "'";
}

/// GPUs `id` holds in the ledger (0 when it is not running).
int gpus_held(const gs::ledger& book, gs::job_id id) {
  const auto* r = book.find(id);
  if (r == nullptr) return 0;
  int n = 0;
  for (const auto& a : r->tasks) n += static_cast<int>(a.gpus.size());
  return n;
}

/// `describe(d)`, with a large placement summarised as nodes x GPUs.
std::string line(const gs::decision& d, const gs::cluster& c, const gs::job_spec& spec) {
  if (d.kind != gs::verdict::admit || d.placement.size() <= 4) return gs::describe(d, c, &spec);
  std::map<gs::node_index, int> per_node;
  for (const auto& a : d.placement) per_node[a.node] += static_cast<int>(a.gpus.size());
  std::string nodes;
  for (const auto& [n, k] : per_node) {
    nodes += (nodes.empty() ? "" : " ") + c.name(n) + ":" + std::to_string(k);
  }
  return "admit " + label(spec) + ", " + std::to_string(d.placement.size()) + " tasks on " +
         std::to_string(per_node.size()) + " nodes (GPUs per node: " + nodes + ")";
}

gs::ledger initial_cluster(const gs::job_spec& running) {
  std::vector<gs::node_spec> nodes;
  for (unsigned i = 0; i < node_count; ++i) {
    nodes.push_back({.id = gs::node_id{i + 1},
                     .name = "n" + std::to_string(i),
                     .gpu_model = "H100-SXM5-80GB",
                     .gpus = gs::gpu_count{gpus_per_node},
                     .cpu = 64_cores,
                     .memory = 1024_gib});
  }
  gs::ledger book(gs::cluster(gs::basic_catalog(), nodes));
  auto setup = gs::make_pipeline(gs::gang_placement{});
  gs::random_engine g(0);
  const std::vector<gs::job_spec> first{running};
  setup.schedule(book, first, gs::at(gs::seconds(0)), g);
  return book;
}

struct outcome {
  std::map<gs::job_id, gs::sim_time> started;
  gs::sim_time all_done{};
  double idle_gpu_hours = 0;  ///< free GPUs x time, while some job was waiting
};

outcome run(const char* title, gs::queueing mode, const gs::job_spec& running,
            const std::vector<gs::job_spec>& queue) {
  std::printf("\n== %s\n", title);
  gs::ledger book = initial_cluster(running);
  auto pipe =
      gs::make_pipeline(gs::gang_admission{mode}, gs::gang_placement{}, gs::no_preemption{});
  gs::random_engine g(1);
  std::map<gs::job_id, gs::sim_time> ends{{running.id, gs::at(true_duration(running))}};
  std::map<gs::job_id, std::string> names{{running.id, running.name}};
  for (const auto& j : queue) names[j.id] = j.name;
  std::vector<gs::job_spec> pending = queue;
  outcome out;
  gs::sim_time now = queue.front().submit;
  while (true) {
    if (!pending.empty()) {
      std::printf("  cycle at %s, %lld GPUs free:\n", t(now).c_str(),
                  static_cast<long long>(book.state().total_free_whole_gpus()));
      const auto res = pipe.schedule(book, pending, now, g);
      for (const auto& d : res.decisions) {
        const auto& spec = *std::find_if(pending.begin(), pending.end(),
                                         [&](const gs::job_spec& j) { return j.id == d.job; });
        std::printf("    %s\n", line(d, book.state(), spec).c_str());
        if (d.kind == gs::verdict::admit) {
          out.started[d.job] = now;
          ends[d.job] = now + true_duration(spec);
        }
      }
      if (const auto& head = queue.front(); !out.started.contains(head.id)) {
        std::printf("    GPUs held by '%s' while it waits: %d (all or nothing)\n",
                    head.name.c_str(), gpus_held(book, head.id));
      }
      for (const auto& r : pipe.admission().reservations()) {
        std::printf("    reservation: job %u '%s' starts at %s%s\n", r.job.value(),
                    names[r.job].c_str(), t(r.start).c_str(),
                    r.end != gs::sim_time::max() ? (", ends by " + t(r.end)).c_str() : "");
      }
      std::printf("    invariants %s\n", gs::check_invariants(book).ok() ? "hold" : "VIOLATED");
      std::erase_if(pending, [&](const gs::job_spec& j) { return book.is_running(j.id); });
    }
    if (ends.empty()) break;
    const auto next = std::min_element(ends.begin(), ends.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second < b.second : a.first < b.first;
    });
    const gs::sim_time then = next->second;
    if (!pending.empty()) {
      out.idle_gpu_hours += static_cast<double>(book.state().total_free_whole_gpus()) *
                            gs::to_seconds(then - now) / 3600.0;
    }
    now = then;
    std::string ended;
    for (auto it = ends.begin(); it != ends.end();) {
      if (it->second > now) {
        ++it;
        continue;
      }
      ended += (ended.empty() ? "" : ", ") + names[it->first];
      book.release(it->first);
      it = ends.erase(it);
    }
    std::printf("  %s: %s ended\n", t(now).c_str(), ended.c_str());
    out.all_done = now;
  }
  return out;
}

}  // namespace

int main() {
  const auto running = job(1, "eval", 1, 4, 60);  // started at t=0, ends at t=3600s
  auto pretrain = job(2, "pretrain", 64, 1, 120);
  auto sweep = job(3, "sweep", 2, 4, 20);
  auto finetune = job(4, "finetune", 1, 8, 180);
  auto notebook = job(5, "notebook", 1, 1, std::nullopt);
  std::vector<gs::job_spec> queue{pretrain, sweep, finetune, notebook};
  for (auto& j : queue) j.submit = gs::at(gs::seconds(600));

  std::printf("Cluster: %d nodes x %d H100 = %d GPUs.\n", node_count, gpus_per_node,
              node_count * gpus_per_node);
  std::printf("Running: %s, 1 x 4 GPUs since t=0s, expected to end at t=3600s (60 GPUs free).\n",
              label(running).c_str());
  std::printf("Queue at t=600s, in FIFO order:\n");
  for (const auto& j : queue) {
    const auto& g = j.groups.front();
    std::printf("  %-20s %2d x %d GPU, ", label(j).c_str(), g.count, g.request.gpu.count.value());
    if (j.expected_duration) {
      std::printf("expected %3.0f min\n", gs::to_seconds(*j.expected_duration) / 60);
    } else {
      std::printf("no estimate (actually runs 240 min)\n");
    }
  }

  struct mode_run {
    const char* name;
    outcome result;
  };
  const std::vector<mode_run> runs{
      {"strict FIFO", run("strict FIFO (gang-strict): the head blocks everyone behind it",
                          gs::queueing::strict_fifo, running, queue)},
      {"best effort", run("best effort (gang): skip the head, start whatever fits",
                          gs::queueing::best_effort, running, queue)},
      {"EASY backfill",
       run("EASY backfill (gang-easy): reserve for the head, backfill only what does not delay it",
           gs::queueing::easy_backfill, running, queue)},
  };

  std::printf(
      "\nStart times (seconds), when everything is done, and GPU-hours left idle while "
      "jobs waited:\n");
  std::printf("  %-14s", "mode");
  for (const auto& j : queue) std::printf(" %9s", j.name.c_str());
  std::printf(" %9s %9s\n", "all done", "idle GPU-h");
  for (const auto& r : runs) {
    std::printf("  %-14s", r.name);
    for (const auto& j : queue) {
      std::printf(" %9s", gs::seconds_text(r.result.started.at(j.id)).c_str());
    }
    std::printf(" %9s %9.1f\n", gs::seconds_text(r.result.all_done).c_str(),
                r.result.idle_gpu_hours);
  }
  std::printf(
      "\nStrict FIFO starts the gang as soon as it fits, but the small jobs wait behind it while "
      "60 GPUs\nsit idle. Best effort starts the small jobs at once, and the 64-rank gang then "
      "waits until\nevery one of them has drained (the notebook's end was not even known), with "
      "most GPUs idle\nbecause nothing else in the queue can use them. EASY backfill starts the "
      "gang at its\nreservation and still runs the short sweep in the gap: the fewest idle "
      "GPU-hours.\n");
  return 0;
}
