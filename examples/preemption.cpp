// SPDX-License-Identifier: Apache-2.0
// preemption: checkpoint-aware victim selection against kube-scheduler's default, on the same
// cluster, for three urgent jobs. Each policy runs in the same pipeline on a fresh copy of the
// cluster; both plans are priced with the same cost model (lost GPU-seconds = GPUs x time since
// the last checkpoint + restore; see include/gpusched/policy/preemption/cost.hpp).
//
// What it shows:
//  - kube-scheduler picks victims by priority and start time only: among equal priorities it
//    evicts the most recently started job, whatever its checkpoint age;
//  - checkpoint-aware selection evicts the job that loses the least work, lets a job that can
//    checkpoint within the grace period do so first (signal then wait), and shrinks an elastic
//    job instead of evicting it;
//  - a gang preemptor gets whole gangs as victims, evictions and placement commit together,
//    and the invariant checker confirms the cluster stays consistent.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <gpusched/gpusched.hpp>

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

const gs::sim_time now = gs::at(gs::seconds(6 * 3600));  // 06:00 into the day

gs::sim_time ago(int minutes) { return now - gs::seconds(60LL * minutes); }

/// `tasks` workers of `gpus` GPUs each; elastic down to `min_tasks` workers when given.
gs::job_spec job(unsigned id, std::string name, int tasks, int gpus,
                 std::optional<std::int32_t> min_tasks = std::nullopt) {
  const gs::task_request worker{
      .gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}), .cpu = 4_cores, .memory = 32_gib};
  return {
      .id = gs::job_id{id},
      .name = std::move(name),
      .groups = {min_tasks ? gs::task_group::elastic("worker", worker, *min_tasks, tasks)
                           : gs::task_group{.name = "worker", .request = worker, .count = tasks}}};
}

void run(gs::ledger& book, const gs::job_spec& j, std::vector<unsigned> nodes, gs::sim_time start) {
  gs::random_engine g(0);
  const gs::schedule_context ctx(book, start, g);
  auto tx = book.begin();
  std::size_t k = 0;
  for (std::int32_t t = 0; t < j.groups[0].count; ++t, ++k) {
    auto a = gs::first_fit_packing{}.fit(ctx, gs::node_index{nodes[k]}, j.groups[0].request);
    a->group = 0;
    tx.place(*a);
  }
  tx.commit(j, start);
}

gs::ledger initial_cluster() {
  std::vector<gs::node_spec> nodes;
  for (unsigned i = 0; i < 4; ++i) {
    nodes.push_back({.id = gs::node_id{i + 1},
                     .name = "n" + std::to_string(i),
                     .gpu_model = "H100-SXM5-80GB",
                     .gpus = 8_gpus,
                     .cpu = 64_cores,
                     .memory = 1024_gib});
  }
  gs::ledger book(gs::cluster(gs::basic_catalog(), nodes));
  auto a = job(1, "exp-a", 1, 8);  // checkpointed 2 minutes ago
  a.checkpoint = {gs::seconds(1800), ago(2), gs::seconds(60), gs::seconds(0)};
  run(book, a, {0}, ago(180));
  auto b = job(2, "exp-b", 1, 8);  // checkpointed 55 minutes ago, can checkpoint in 45 s
  b.checkpoint = {gs::seconds(3600), ago(55), gs::seconds(45), gs::seconds(0)};
  run(book, b, {1}, ago(120));
  auto c = job(3, "exp-c", 1, 4);  // never checkpointed: all work since start is lost
  run(book, c, {2}, ago(20));
  auto d = job(4, "exp-d", 4, 1, 2);  // elastic 2..4 workers; re-forming takes 30 s
  d.checkpoint = {gs::seconds(600), ago(5), gs::seconds(10), gs::seconds(30)};
  run(book, d, {2, 2, 2, 2}, ago(10));
  auto e = job(5, "exp-e", 1, 8);  // checkpointed 40 minutes ago; a checkpoint takes 90 s
  e.checkpoint = {gs::seconds(3600), ago(40), gs::seconds(90), gs::seconds(0)};
  run(book, e, {3}, ago(60));
  return book;
}

std::string name_of(const gs::ledger& book, gs::job_id id) {
  const auto* r = book.find(id);
  return (r != nullptr ? r->spec.name : std::string("?")) + " (job " + std::to_string(id.value()) +
         ")";
}

template <class Policy>
double scenario(const char* label, Policy policy, const gs::job_spec& urgent) {
  gs::ledger book = initial_cluster();
  const gs::ledger before = book;
  auto pipe = gs::make_pipeline(std::move(policy));
  gs::random_engine g(1);
  const std::vector<gs::job_spec> pending{urgent};
  const auto res = pipe.schedule(book, pending, now, g);
  const auto& d = res.decisions.front();
  std::printf("  %-18s", label);
  if (d.kind != gs::verdict::admit) {
    std::printf("%s\n", gs::describe(d, book.state(), &urgent).c_str());
    return 0;
  }
  bool first = true;
  for (const auto& v : d.victim_details) {
    std::printf("%s%s: %s", first ? "" : "\n                    ", name_of(before, v.job).c_str(),
                std::string(gs::to_string(v.action)).c_str());
    if (v.action == gs::victim_action::shrink) std::printf(" to %d workers", v.shrink_to);
    if (v.action == gs::victim_action::signal_then_wait) {
      std::printf(" (%.0f s)", gs::to_seconds(v.wait));
    }
    std::printf(", frees %.0f GPUs, loses %.0f GPU-s", v.gpus, v.lost_gpu_seconds);
    first = false;
  }
  std::printf("\n                    total %.0f GPU-s lost; %s runs on %s; invariants %s\n",
              d.lost_gpu_seconds, urgent.name.c_str(),
              gs::describe_placement(d.placement, book.state()).c_str(),
              gs::check_invariants(book).ok() ? "hold" : "VIOLATED");
  return d.lost_gpu_seconds;
}

}  // namespace

int main() {
  gs::preemption_cost_model cost;
  cost.grace_period = gs::seconds(60);  // victims get 60 s after the signal
  gs::checkpoint_aware_options opts;
  opts.cost = cost;

  std::printf("Cluster: 4 nodes x 8 H100, full. Running (priority 0), at t=06:00:\n");
  const gs::ledger book = initial_cluster();
  for (const auto& r : book.running()) {
    const auto& ck = r.spec.checkpoint;
    std::printf("  %-6s %d x %d GPU, started %3.0f min ago, ", r.spec.name.c_str(),
                r.tasks_in_group(0), r.spec.groups[0].request.gpu.count.value(),
                gs::to_seconds(now - r.start) / 60);
    if (ck.last) {
      std::printf("last checkpoint %2.0f min ago", gs::to_seconds(now - *ck.last) / 60);
    } else {
      std::printf("no checkpoint                ");
    }
    if (ck.checkpoint_cost > gs::sim_duration{0}) {
      std::printf(", checkpoint takes %3.0f s", gs::to_seconds(ck.checkpoint_cost));
    } else {
      std::printf(", cannot checkpoint");
    }
    std::printf("%s\n", r.spec.groups[0].elastic() ? ", elastic (min 2 workers)" : "");
  }

  struct urgent_case {
    const char* title;
    gs::job_spec job;
  };
  auto retrain = job(100, "retrain", 1, 8);
  retrain.priority = 10;
  auto gang = job(101, "retrain-gang", 2, 8);
  gang.priority = 10;
  auto eval = job(102, "eval", 1, 2);
  eval.priority = 10;
  const urgent_case cases[] = {
      {"urgent 'retrain' needs 1 x 8 GPUs on one node", retrain},
      {"urgent 'retrain-gang' needs 2 x 8 GPUs (a gang)", gang},
      {"urgent 'eval' needs 1 x 2 GPUs", eval},
  };
  double kube_total = 0, ca_total = 0;
  for (const auto& c : cases) {
    std::printf("\n== %s\n", c.title);
    kube_total += scenario("kube-default:", gs::kube_default_preemption{cost}, c.job);
    ca_total += scenario("checkpoint-aware:", gs::checkpoint_aware_preemption(opts), c.job);
  }
  std::printf(
      "\nWork lost over the three preemptions: kube-default %.0f GPU-s, "
      "checkpoint-aware %.0f GPU-s (%.1fx less).\n",
      kube_total, ca_total, ca_total > 0 ? kube_total / ca_total : 0.0);
  return 0;
}
