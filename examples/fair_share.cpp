// SPDX-License-Identifier: Apache-2.0
// fair_share: three teams compete for a 16-GPU, 128-core cluster under weighted DRF.
//
// What it shows:
//  - Dominant Resource Fairness: each team's share is its largest fraction of any resource. The
//    "etl" team asks for few GPUs but many CPU cores, so its dominant resource is CPU;
//  - weights: "vision" has weight 2, so it may hold twice the dominant share of the others;
//  - progressive filling: the ordering gives the next job to the team with the lowest weighted
//    dominant share, then charges that job's demand to the team before choosing again;
//  - ties (equal weighted shares) go to the smaller tenant id, then FIFO inside a team;
//  - after jobs finish, the freed capacity goes to whoever is furthest below its fair share.
#include <cstdio>
#include <string>
#include <vector>

#include <gpusched/gpusched.hpp>

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

const char* team_name(gs::tenant_id t) {
  switch (t.value()) {
    case 1:
      return "vision";
    case 2:
      return "nlp";
    case 3:
      return "etl";
    default:
      return "?";
  }
}

gs::job_spec job(unsigned id, unsigned team, const char* name, int gpus, int cores, int submit) {
  return {.id = gs::job_id{id},
          .name = name,
          .tenant = gs::tenant_id{team},
          .submit = gs::at(gs::seconds(submit)),
          .groups = {{.name = "worker",
                      .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                  .cpu = gs::cpu_millis{cores * 1000},
                                  .memory = 64_gib},
                      .count = 1}}};
}

// Each team's current allocation as shares of the cluster, and its dominant share.
void print_shares(const gs::ledger& book, const gs::tenant_tree& teams) {
  const gs::resource_basis basis(book.state());
  for (const auto& t : teams.tenants()) {
    gs::share_vector u = basis.zero();
    int jobs = 0;
    for (const auto& r : book.running()) {
      if (r.spec.tenant != t.id) continue;
      basis.add_running(u, book.state(), r);
      ++jobs;
    }
    const gs::share_vector s = basis.shares(u);
    std::printf(
        "    %-7s %d jobs  gpu %.3f  cpu %.3f  mem %.3f  -> dominant %.3f, / weight %g = %.3f\n",
        t.name.c_str(), jobs, s[0], s[1], s[2], basis.dominant_share(u), t.weight,
        basis.dominant_share(u) / t.weight);
  }
}

template <class Pipeline>
void run_cycle(const char* title, Pipeline& pipe, gs::ledger& book,
               std::vector<gs::job_spec>& queue, gs::sim_time now, gs::random_engine& rng,
               const gs::tenant_tree& teams) {
  std::printf("== %s: %zu jobs pending\n", title, queue.size());
  const auto res = pipe.schedule(book, queue, now, rng);
  const auto& drf = pipe.ordering();
  std::printf("  order (lowest weighted dominant share first; each pick charges its demand):\n");
  for (std::size_t i = 0; i < drf.picks().size(); ++i) {
    const auto& p = drf.picks()[i];
    const gs::job_spec* j = nullptr;
    for (const auto& q : queue) {
      if (q.id == p.job) j = &q;
    }
    const std::string dim = p.dominant_dimension < 0 || p.dominant_share == 0
                                ? "-"
                                : drf.basis().name(static_cast<std::size_t>(p.dominant_dimension));
    std::printf("  %2zu. job %u %-10s team %-7s share %.3f (%s) weighted %.3f\n", i + 1,
                p.job.value(), j->name.c_str(), team_name(p.tenant), p.dominant_share, dim.c_str(),
                p.weighted_share);
  }
  std::printf("  decisions:\n");
  for (const auto& d : res.decisions) {
    const gs::job_spec* j = nullptr;
    for (const auto& q : queue) {
      if (q.id == d.job) j = &q;
    }
    std::printf("    %s\n", gs::describe(d, book.state(), j).c_str());
  }
  std::printf("  shares after the cycle (invariants %s):\n",
              gs::check_invariants(book).ok() ? "hold" : "VIOLATED");
  print_shares(book, teams);
  std::erase_if(queue, [&](const gs::job_spec& j) { return book.is_running(j.id); });
}

}  // namespace

int main() {
  const gs::gpu_catalog catalog = gs::basic_catalog();
  const std::vector<gs::node_spec> nodes = {
      {.id = gs::node_id{1},
       .name = "dgx-a",
       .gpu_model = "H100-SXM5-80GB",
       .gpus = 8_gpus,
       .cpu = 64_cores,
       .memory = 1024_gib},
      {.id = gs::node_id{2},
       .name = "dgx-b",
       .gpu_model = "H100-SXM5-80GB",
       .gpus = 8_gpus,
       .cpu = 64_cores,
       .memory = 1024_gib},
  };
  gs::ledger book(gs::cluster(catalog, nodes));
  const gs::tenant_tree teams({{.id = gs::tenant_id{1}, .name = "vision", .weight = 2.0},
                               {.id = gs::tenant_id{2}, .name = "nlp"},
                               {.id = gs::tenant_id{3}, .name = "etl"}});

  std::vector<gs::job_spec> queue;
  // vision: five 2-GPU jobs; nlp: four 4-GPU jobs; etl: five 1-GPU jobs with 24 cores each
  for (unsigned i = 0; i < 5; ++i) {
    queue.push_back(
        job(100 + i, 1, ("resnet-" + std::to_string(i)).c_str(), 2, 8, static_cast<int>(i)));
  }
  for (unsigned i = 0; i < 4; ++i) {
    queue.push_back(
        job(200 + i, 2, ("bert-" + std::to_string(i)).c_str(), 4, 8, static_cast<int>(i)));
  }
  for (unsigned i = 0; i < 5; ++i) {
    queue.push_back(
        job(300 + i, 3, ("etl-" + std::to_string(i)).c_str(), 1, 24, static_cast<int>(i)));
  }
  for (auto& j : queue) gs::validate(j, catalog);

  auto pipe = gs::make_pipeline(gs::drf_ordering(teams), gs::no_preemption{});
  gs::random_engine rng(7);
  std::printf(
      "cluster: 16 H100 GPUs, 128 cores, 2 TiB; teams vision (weight 2), nlp (1), etl (1)\n");
  run_cycle("cycle 1 at t=10s", pipe, book, queue, gs::at(gs::seconds(10)), rng, teams);

  // Two of vision's jobs and one nlp job finish; who gets the freed GPUs?
  std::printf("-- resnet-0, resnet-1 and bert-0 finish\n");
  for (unsigned id : {100u, 101u, 200u}) {
    if (book.is_running(gs::job_id{id})) book.release(gs::job_id{id});
  }
  run_cycle("cycle 2 at t=3600s", pipe, book, queue, gs::at(gs::seconds(3600)), rng, teams);
  return 0;
}
