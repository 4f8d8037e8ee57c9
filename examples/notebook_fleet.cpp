// SPDX-License-Identifier: Apache-2.0
// notebook_fleet: Jupyter notebooks on shared GPUs (NVIDIA device-plugin style time-slicing and
// MPS), next to an ordinary whole-GPU job.
//
// What it shows:
//  - a GPU advertised as N replicas (time-slicing or MPS) serves at most N notebooks at a time:
//    the oversubscription limit;
//  - MPS splits device memory evenly (each replica may use memory / N), time-slicing isolates
//    no memory, so a notebook asking for more than the MPS limit goes to a time-sliced GPU;
//  - whole-GPU and milli-share demands never land on a shared GPU, and replicas never on an
//    exclusive one;
//  - when replicas run out, notebooks wait (holding nothing) and start when one is released;
//  - a busy GPU's sharing mode cannot be changed; the error says why and nothing changes.
#include <cstdio>
#include <string>
#include <vector>

#include <gpusched/gpusched.hpp>

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

gs::job_spec notebook(unsigned id, const char* name, gs::memory_mib gpu_memory) {
  return {
      .id = gs::job_id{id},
      .name = name,
      .tenant = gs::tenant_id{1},
      .submit = gs::at(gs::seconds(id)),
      .groups = {gs::task_group{
          .name = "kernel",
          .request = {.gpu = gs::gpu_demand::replica(gpu_memory), .cpu = 2_cores, .memory = 8_gib},
          .count = 1}}};
}

/// Why a replica grant is allowed on its GPU: the GPU's mode and the memory check.
std::string why_here(const gs::cluster& c, const gs::job_spec& j, const gs::task_allocation& a) {
  if (a.gpus.empty() || !a.gpus[0].replica) return "";
  const auto& g = c.gpu(a.gpus[0].gpu);
  const auto ask = j.groups[0].request.gpu.gpu_memory.value();
  std::string s = g.sharing == gs::gpu_sharing::mps ? "an MPS GPU" : "a time-sliced GPU";
  s += " (" + std::to_string(g.replicas) + " replicas); ";
  if (g.sharing == gs::gpu_sharing::mps) {
    s += "asks " + std::to_string(ask) + " MiB <= MPS limit " +
         std::to_string(g.replica_memory.value()) + " MiB per replica";
  } else {
    s += "asks " + std::to_string(ask) + " MiB; time-slicing has no per-replica limit (device " +
         std::to_string(c.catalog()[g.model].memory.value()) + " MiB)";
  }
  return s;
}

/// Why a waiting notebook fits on no shared GPU: each one is full or its MPS limit is too small.
std::string why_not(const gs::cluster& c, const gs::job_spec& j) {
  const auto& r = j.groups[0].request;
  if (r.gpu.kind != gs::gpu_demand_kind::replica) return "";
  std::string s;
  for (gs::node_index n : c.nodes()) {
    const auto gpus = c.gpus(n);
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      const auto& g = gpus[k];
      if (!g.replicated()) continue;
      s += s.empty() ? "" : "; ";
      s += c.name(n) + " gpu" + std::to_string(k) + " ";
      const bool over_limit =
          g.sharing == gs::gpu_sharing::mps && r.gpu.gpu_memory > g.replica_memory;
      s += g.free_replicas() == 0 ? "full" : "has a free replica";
      if (over_limit) {
        s += (g.free_replicas() == 0 ? " (and" : " but") + std::string(" its MPS limit ") +
             std::to_string(g.replica_memory.value()) + " MiB < " +
             std::to_string(r.gpu.gpu_memory.value()) + " MiB asked" +
             (g.free_replicas() == 0 ? ")" : "");
      }
    }
  }
  return s;
}

void print_gpus(const gs::cluster& c) {
  for (gs::node_index n : c.nodes()) {
    const auto gpus = c.gpus(n);
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      const auto& g = gpus[k];
      std::printf("    %s gpu%zu %-12s ", c.name(n).c_str(), k,
                  std::string(gs::to_string(g.sharing)).c_str());
      if (g.replicated()) {
        std::printf("%d of %d replicas used\n", static_cast<int>(g.replicas_used),
                    static_cast<int>(g.replicas));
      } else {
        std::printf("%s\n", g.whole_free() ? "idle" : "busy");
      }
    }
  }
}

void print_cycle(const char* title, const gs::cycle_result& res, const gs::job_queue& queue,
                 const gs::ledger& book) {
  std::printf("== %s\n", title);
  for (const auto& d : res.decisions) {
    const gs::job_spec* spec = nullptr;
    for (const auto& j : queue.jobs()) {
      if (j.id == d.job) spec = &j;
    }
    std::printf("  %s\n", gs::describe(d, book.state(), spec).c_str());
    if (d.kind == gs::verdict::admit && spec != nullptr && !d.placement.empty()) {
      const auto why = why_here(book.state(), *spec, d.placement[0]);
      if (!why.empty())
        std::printf("      why: first node with a free replica that fits: %s\n", why.c_str());
    }
    if (d.kind == gs::verdict::defer && spec != nullptr) {
      const auto why = why_not(book.state(), *spec);
      if (!why.empty()) std::printf("      waits: %s\n", why.c_str());
    }
  }
  const auto& c = book.state();
  std::printf("  -> %lld of %lld replicas free; invariants %s\n",
              static_cast<long long>(c.total_free_replicas()),
              static_cast<long long>(c.total_replicas()),
              gs::check_invariants(book).ok() ? "hold" : "VIOLATED");
  print_gpus(c);
}

}  // namespace

int main() {
  const gs::gpu_catalog catalog = gs::basic_catalog();
  // lab-a: two exclusive A100s at first; lab-b: one A100 shared by MPS as 3 replicas.
  std::vector<gs::node_spec> nodes = {
      {.id = gs::node_id{1},
       .name = "lab-a",
       .gpu_model = "A100-SXM4-40GB",
       .gpus = 2_gpus,
       .cpu = 32_cores,
       .memory = 256_gib},
      {.id = gs::node_id{2},
       .name = "lab-b",
       .gpu_model = "A100-SXM4-40GB",
       .gpus = 1_gpus,
       .cpu = 32_cores,
       .memory = 256_gib},
  };
  nodes[1].sharing = gs::gpu_sharing::mps;
  nodes[1].replicas = 3;
  gs::ledger book(gs::cluster(catalog, nodes));
  const gs::node_index lab_a{0};

  // The operator time-slices lab-a's gpu0 as 4 replicas while it is idle.
  book.configure_sharing(lab_a, 0, gs::gpu_sharing::time_slicing, 4);
  std::printf("== fleet: lab-a gpu0 time-sliced x4, lab-a gpu1 exclusive, lab-b gpu0 MPS x3\n");
  print_gpus(book.state());

  gs::job_queue queue;
  auto submit = [&](gs::job_spec j) { queue.push(std::move(j), catalog); };
  auto forget_decided = [&](const gs::cycle_result& res) {
    queue.erase_if([&](const gs::job_spec& j) {
      for (const auto& d : res.decisions) {
        if (d.job == j.id && d.kind != gs::verdict::defer) return true;
      }
      return false;
    });
  };
  submit(notebook(1, "nb-alice", 0_mib));
  submit(notebook(2, "nb-bob", 30_gib));  // more than the MPS limit of 20 GiB
  submit(notebook(3, "nb-carol", 16_gib));
  submit({.id = gs::job_id{4},
          .name = "train-1gpu",
          .tenant = gs::tenant_id{2},
          .submit = gs::at(gs::seconds(4)),
          .groups = {gs::task_group{
              .name = "worker",
              .request = {.gpu = gs::gpu_demand::whole(1_gpus), .cpu = 8_cores, .memory = 64_gib},
              .count = 1}}});
  submit(notebook(5, "nb-dave", 8_gib));

  auto pipe = gs::make_pipeline();  // FIFO, gang admission, first fit, priority preemption
  gs::random_engine rng(7);
  auto res = pipe.schedule(book, queue.jobs(), gs::at(gs::seconds(10)), rng);
  print_cycle("cycle 1 at t=10s: four notebooks and a 1-GPU training job", res, queue, book);
  forget_decided(res);

  submit(notebook(6, "nb-erin", 8_gib));
  submit(notebook(7, "nb-frank", 24_gib));  // over the MPS limit; the time-sliced GPU is full
  submit(
      {.id = gs::job_id{8},
       .name = "half-gpu",
       .tenant = gs::tenant_id{2},
       .submit = gs::at(gs::seconds(10)),
       .groups = {gs::task_group{
           .name = "worker",
           .request = {.gpu = gs::gpu_demand::fraction(500_mgpu), .cpu = 4_cores, .memory = 16_gib},
           .count = 1}}});
  res = pipe.schedule(book, queue.jobs(), gs::at(gs::seconds(20)), rng);
  print_cycle("cycle 2 at t=20s: two notebooks and a half-GPU job", res, queue, book);
  forget_decided(res);

  submit(notebook(9, "nb-grace", 0_mib));
  submit(notebook(10, "nb-heidi", 4_gib));
  submit(notebook(11, "nb-ivan", 0_mib));
  res = pipe.schedule(book, queue.jobs(), gs::at(gs::seconds(30)), rng);
  print_cycle("cycle 3 at t=30s: three more notebooks; replicas run out", res, queue, book);
  forget_decided(res);

  // A busy GPU cannot be switched back to exclusive; nothing changes.
  try {
    book.configure_sharing(lab_a, 0, gs::gpu_sharing::exclusive, 0);
    std::printf("  reconfigured (unexpected)\n");
  } catch (const gs::invalid_value_error& e) {
    std::printf("  configure_sharing refused: %s\n", e.what());
  }

  // nb-alice and nb-bob close: two time-sliced replicas come back.
  book.release(gs::job_id{1});
  book.release(gs::job_id{2});
  res = pipe.schedule(book, queue.jobs(), gs::at(gs::seconds(600)), rng);
  print_cycle("cycle 4 at t=600s: nb-alice and nb-bob closed", res, queue, book);
  return 0;
}
