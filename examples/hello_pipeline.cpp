// SPDX-License-Identifier: Apache-2.0
// hello_pipeline: a 4-node cluster, a handful of jobs, three scheduling cycles.
//
// What it shows:
//  - a gang is placed whole or not at all: "finetune" needs 3 x 4 GPUs while only 4 are free,
//    so it is deferred and holds nothing, and the jobs behind it still start (best effort);
//  - a job that can never fit is rejected with the cause;
//  - shares of one GPU and MIG instances are packed next to whole-GPU gangs;
//  - an urgent job preempts lower-priority work, evictions and placement committing together;
//  - every decision says why, and the invariant checker confirms nothing is over-committed.
#include <cstdio>
#include <iterator>  // std::ssize
#include <string>
#include <vector>

#include <gpusched/gpusched.hpp>

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

void print_cycle(const char* title, const gs::cycle_result& res, const gs::job_queue& queue,
                 const gs::ledger& book) {
  std::printf("== %s\n", title);
  for (const auto& d : res.decisions) {
    const gs::job_spec* spec = nullptr;
    for (const auto& j : queue.jobs()) {
      if (j.id == d.job) spec = &j;
    }
    std::printf("  %s\n", gs::describe(d, book.state(), spec).c_str());
  }
  const auto& c = book.state();
  long long whole_capable = 0;  // GPUs not in MIG mode
  for (gs::node_index n : c.nodes()) whole_capable += c.has_mig(n) ? 0 : std::ssize(c.gpus(n));
  std::printf("  -> %lld of %lld whole GPUs idle, %zu jobs running; invariants %s\n",
              static_cast<long long>(c.total_free_whole_gpus()), whole_capable,
              book.running().size(), gs::check_invariants(book).ok() ? "hold" : "VIOLATED");
}

/// GPUs (whole or shared) that `id` holds: 0 for any job that was not admitted.
int gpus_held(const gs::ledger& book, gs::job_id id) {
  const auto* r = book.find(id);
  if (r == nullptr) return 0;
  int n = 0;
  for (const auto& t : r->tasks) n += static_cast<int>(t.gpus.size());
  return n;
}

}  // namespace

int main() {
  const gs::gpu_catalog catalog = gs::basic_catalog();
  const auto h100 = catalog.id("H100-SXM5-80GB");

  const std::vector<gs::node_spec> nodes = {
      {.id = gs::node_id{1},
       .name = "dgx-a",
       .gpu_model = "H100-SXM5-80GB",
       .gpus = 8_gpus,
       .cpu = 112_cores,
       .memory = 2048_gib},
      {.id = gs::node_id{2},
       .name = "dgx-b",
       .gpu_model = "H100-SXM5-80GB",
       .gpus = 8_gpus,
       .cpu = 112_cores,
       .memory = 2048_gib},
      {.id = gs::node_id{3},
       .name = "t4-box",
       .gpu_model = "T4",
       .gpus = 4_gpus,
       .cpu = 32_cores,
       .memory = 256_gib},
      {.id = gs::node_id{4},
       .name = "mig-box",
       .gpu_model = "A100-SXM4-40GB",
       .gpus = 2_gpus,
       .mig_enabled = true,
       .cpu = 64_cores,
       .memory = 512_gib},
  };
  gs::ledger book(gs::cluster(catalog, nodes));

  gs::gpu_model_set only_h100;
  only_h100.insert(h100);
  const gs::task_request launcher{.gpu = gs::gpu_demand::none(), .cpu = 4_cores, .memory = 16_gib};
  const gs::task_request h100x8{.gpu = gs::gpu_demand::whole(8_gpus),
                                .cpu = 48_cores,
                                .memory = 512_gib,
                                .allowed_models = only_h100};
  const gs::task_request any_x4{
      .gpu = gs::gpu_demand::whole(4_gpus), .cpu = 16_cores, .memory = 128_gib};

  gs::job_queue queue;
  auto submit = [&](gs::job_spec j) { queue.push(std::move(j), catalog); };
  submit({.id = gs::job_id{1},
          .name = "pretrain",
          .tenant = gs::tenant_id{1},
          .submit = gs::at(gs::seconds(0)),
          .groups = {{.name = "launcher", .request = launcher, .count = 1},
                     {.name = "worker", .request = h100x8, .count = 2}}});
  submit({.id = gs::job_id{2},
          .name = "finetune",
          .tenant = gs::tenant_id{2},
          .submit = gs::at(gs::seconds(1)),
          .groups = {{.name = "worker", .request = any_x4, .count = 3}}});
  submit(
      {.id = gs::job_id{3},
       .name = "notebook",
       .tenant = gs::tenant_id{3},
       .submit = gs::at(gs::seconds(2)),
       .groups = {
           {.name = "kernel",
            .request = {.gpu = gs::gpu_demand::fraction(250_mgpu), .cpu = 2_cores, .memory = 8_gib},
            .count = 1}}});
  submit(
      {.id = gs::job_id{4},
       .name = "inference",
       .tenant = gs::tenant_id{3},
       .submit = gs::at(gs::seconds(3)),
       .groups = {{.name = "server",
                   .request = {.gpu = gs::gpu_demand::mig(3, 4), .cpu = 8_cores, .memory = 32_gib},
                   .count = 2}}});
  submit({.id = gs::job_id{5},
          .name = "too-wide",
          .tenant = gs::tenant_id{2},
          .submit = gs::at(gs::seconds(4)),
          .groups = {
              {.name = "worker",
               .request = {.gpu = gs::gpu_demand::whole(16_gpus), .cpu = 8_cores, .memory = 64_gib},
               .count = 1}}});

  auto pipe = gs::make_pipeline();  // FIFO, gang admission, first fit, priority preemption
  gs::random_engine rng(42);
  auto forget_decided = [&](const gs::cycle_result& res) {
    queue.erase_if([&](const gs::job_spec& j) {
      for (const auto& d : res.decisions) {
        if (d.job == j.id && d.kind != gs::verdict::defer) return true;
      }
      return false;
    });
  };

  // Cycle 1: five jobs arrive.
  auto res = pipe.schedule(book, queue.jobs(), gs::at(gs::seconds(5)), rng);
  print_cycle("cycle 1 at t=5s", res, queue, book);
  std::printf("  finetune holds %d GPUs while it waits (all or nothing)\n",
              gpus_held(book, gs::job_id{2}));
  forget_decided(res);

  // Cycle 2: pretrain finishes and releases its 16 GPUs; the waiting gang now fits whole.
  book.release(gs::job_id{1});
  res = pipe.schedule(book, queue.jobs(), gs::at(gs::seconds(3600)), rng);
  print_cycle("cycle 2 at t=3600s, after pretrain finished", res, queue, book);
  forget_decided(res);

  // Cycle 3: an urgent evaluation with higher priority needs two full H100 nodes.
  submit({.id = gs::job_id{6},
          .name = "urgent-eval",
          .tenant = gs::tenant_id{1},
          .priority = 10,
          .submit = gs::at(gs::seconds(3700)),
          .preemptible = false,
          .groups = {{.name = "worker", .request = h100x8, .count = 2}}});
  res = pipe.schedule(book, queue.jobs(), gs::at(gs::seconds(3700)), rng);
  print_cycle("cycle 3 at t=3700s, urgent job (priority 10) arrives", res, queue, book);
  forget_decided(res);

  // Cycle 4: the caller stopped the victim and requeues it; it restarts from its checkpoint
  // once the GPUs are back. Nobody of lower priority is left to preempt for it.
  for (const auto& d : res.decisions) {
    for (gs::job_id v : d.victims) {
      std::printf("  requeue job %u (victim of job %u)\n", v.value(), d.job.value());
      submit({.id = v,
              .name = "finetune",
              .tenant = gs::tenant_id{2},
              .submit = gs::at(gs::seconds(3700)),
              .groups = {{.name = "worker", .request = any_x4, .count = 3}}});
    }
  }
  res = pipe.schedule(book, queue.jobs(), gs::at(gs::seconds(3701)), rng);
  print_cycle("cycle 4 at t=3701s", res, queue, book);
  return 0;
}
