// SPDX-License-Identifier: Apache-2.0
// A strict consumer: gpusched's headers taken with a plain -I (not as system headers, as with
// add_subdirectory, FetchContent or vendoring) and compiled with
//   -std=c++20 -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
//   -Wold-style-cast -Werror
// by g++ and clang++-19 (see tests/CMakeLists.txt, tests "package.strict.*"). It instantiates the
// templates a user touches, so that a warning in any of them fails the build. Values are built
// the way the README builds them: designated initializers, omitted fields left at defaults.
#include <gpusched/gpusched.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

std::vector<gs::node_spec> nodes(unsigned n) {
  std::vector<gs::node_spec> out;
  for (unsigned i = 1; i <= n; ++i) {
    out.push_back({.id = gs::node_id{i},
                   .name = "node-" + std::to_string(i),
                   .gpu_model = "H100-SXM5-80GB",
                   .gpus = 8_gpus,
                   .cpu = 112_cores,
                   .memory = 2048_gib});
  }
  return out;
}

gs::job_spec job(unsigned id, unsigned tenant, int workers, std::int32_t priority = 0) {
  return {
      .id = gs::job_id{id},
      .name = "job-" + std::to_string(id),
      .tenant = gs::tenant_id{tenant},
      .priority = priority,
      .submit = gs::at(gs::seconds(id)),
      .expected_duration = gs::seconds(600),
      .groups = {
          {.name = "worker",
           .request = {.gpu = gs::gpu_demand::whole(8_gpus), .cpu = 32_cores, .memory = 256_gib},
           .count = workers}}};
}

gs::job_spec elastic_job(unsigned id, unsigned tenant) {
  return {.id = gs::job_id{id},
          .name = "elastic-" + std::to_string(id),
          .tenant = gs::tenant_id{tenant},
          .submit = gs::at(gs::seconds(id)),
          .groups = {gs::task_group::elastic(
              "worker", {.gpu = gs::gpu_demand::whole(4_gpus), .cpu = 8_cores, .memory = 64_gib}, 1,
              4)}};
}

/// One scheduling cycle of `pipe` over `jobs` on a fresh 4-node cluster; prints each decision
/// and returns how many were admitted.
template <class Pipeline>
int cycle(const char* label, Pipeline pipe, const std::vector<gs::job_spec>& jobs) {
  gs::ledger book(gs::cluster(gs::basic_catalog(), nodes(4)));
  gs::random_engine rng(7);
  const auto res = pipe.schedule(book, jobs, gs::at(gs::seconds(100)), rng);
  int admitted = 0;
  for (const auto& d : res.decisions) {
    const gs::job_spec* spec = nullptr;
    for (const auto& j : jobs) {
      if (j.id == d.job) spec = &j;
    }
    std::printf("%s: %s\n", label, gs::describe(d, book.state(), spec).c_str());
    admitted += d.kind == gs::verdict::admit ? 1 : 0;
  }
  if (!gs::check_invariants(book).ok()) std::printf("%s: invariants VIOLATED\n", label);
  return admitted;
}

}  // namespace

int main() {
  const std::vector<gs::job_spec> jobs = {job(1, 1, 3), job(2, 2, 2), job(3, 1, 1, 5),
                                          elastic_job(4, 2)};
  int admitted = 0;

  // Fair share: weighted DRF ordering.
  admitted += cycle("drf", gs::make_pipeline(gs::drf_ordering{}), jobs);
  // Gang admission with EASY backfill and gang placement.
  admitted += cycle(
      "easy",
      gs::make_pipeline(gs::gang_admission{gs::queueing::easy_backfill}, gs::gang_placement{}),
      jobs);
  // Topology-aware placement on a fat tree, two nodes per leaf.
  auto model = std::make_shared<gs::topology_model>(gs::fabric::fat_tree(4, 2));
  admitted += cycle("topology",
                    gs::make_pipeline(gs::topology_aware_placement(
                        model, gs::domain_constraint{.required_level = 1})),
                    jobs);
  // Checkpoint-aware preemption.
  admitted += cycle("checkpoint",
                    gs::make_pipeline(gs::checkpoint_aware_preemption(
                        gs::checkpoint_aware_options{.min_runtime = gs::seconds(60)})),
                    jobs);
  // Quota admission: two teams in one cohort.
  {
    const auto cat = gs::basic_catalog();
    const auto gpus = gs::quota_resource::gpus(cat.id("H100-SXM5-80GB"));
    gs::quota_tree::builder b(cat);
    b.cohort("lab");
    b.queue("team-a", gs::tenant_id{1}, "lab").nominal(gpus, 16);
    b.queue("team-b", gs::tenant_id{2}, "lab").nominal(gpus, 16);
    admitted += cycle("quota", gs::make_pipeline(gs::quota_admission<>(b.build())), jobs);
  }
  // Every slot chosen by name at run time.
  admitted += cycle("any", gs::make_pipeline(gs::pipeline_config{}), jobs);
  admitted += cycle("any-named",
                    gs::make_pipeline(gs::pipeline_config{.ordering = "drf",
                                                          .admission = "gang-easy",
                                                          .placement = "gang",
                                                          .preemption = "checkpoint-aware"}),
                    jobs);

  // The simulator on a small synthetic trace.
  std::vector<gs::sim_job> trace;
  for (unsigned i = 1; i <= 6; ++i) {
    trace.push_back({.spec = job(10 + i, 1 + i % 2, 1 + static_cast<int>(i % 3)),
                     .work = gs::seconds(300 * i)});
  }
  gs::simulator<> sim(gs::cluster(gs::basic_catalog(), nodes(4)), gs::make_pipeline(),
                      gs::sim_config{.check_invariants = true});
  sim.run(gs::source_from(trace));
  std::printf("simulated %zu jobs\n", sim.records().size());

  const gs::reason r = gs::reason::no_fit(0, gs::resource_kind::gpu, 8, 4);
  std::printf("%s\n", gs::describe(r).c_str());
  std::printf("admitted %d\nstrict consumer: done\n", admitted);
  return 0;
}
