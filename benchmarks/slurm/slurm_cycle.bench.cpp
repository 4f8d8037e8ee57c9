// SPDX-License-Identifier: Apache-2.0
// One gpusched-slurm cycle on a Slurm 22.05-style snapshot of 1,000 nodes (8 GPUs each, 20 per
// leaf switch) and 10,000 held jobs (plus 2,000 running ones holding about half the GPUs):
// read `squeue --json` and `sinfo --json`, build the model, run one pipeline cycle, plan the
// commands. The JSON is generated in the shape recorded in tests/data/slurm/ (same fields,
// same data version). Target: under 1 s of CPU per cycle.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include <gpusched/core/random.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/slurm/commands.hpp>
#include <gpusched/slurm/model.hpp>
#include <gpusched/slurm/snapshot.hpp>

namespace gs = gpusched;
namespace sl = gpusched::slurm;
using json = nlohmann::json;

namespace {

constexpr int kNodes = 1000;
constexpr int kPending = 10000;
constexpr int kRunning = 2000;
constexpr std::int64_t kNow = 1796417600;

json meta() {
  return {{"plugin", {{"type", "openapi/v0.0.38"}, {"name", "Slurm OpenAPI v0.0.38"}}},
          {"Slurm", {{"version", {{"major", 22}, {"micro", 8}, {"minor", 5}}}, {"release", "22.05.8"}}}};
}

std::string sinfo_json() {
  json nodes = json::array();
  for (int i = 1; i <= kNodes; ++i) {
    nodes.push_back({{"name", "gpu" + std::to_string(i)},
                     {"cpus", 64},
                     {"real_memory", 512000},
                     {"gres", "gpu:a100:8"},
                     {"gres_used", "gpu:a100:0(IDX:N/A)"},
                     {"state", "idle"},
                     {"state_flags", json::array()},
                     {"partitions", {"gpu"}},
                     {"active_features", "a100,ib"},
                     {"reason", ""}});
  }
  return json{{"meta", meta()}, {"errors", json::array()}, {"nodes", nodes}}.dump();
}

json job(int id, std::uint64_t& s) {
  const auto next = [&s]() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((s >> 33) % 1000);
  };
  static const int gpus[] = {1, 2, 4, 8};
  const int r = next();
  const int nodes = r < 800 ? 1 : r < 950 ? 2 : 4;
  const int g = nodes > 1 ? 8 : gpus[next() % 4];
  return {{"job_id", id},
          {"name", "job" + std::to_string(id)},
          {"account", "acct" + std::to_string(next() % 20)},
          {"qos", ""},
          {"partition", "gpu"},
          {"job_state", "PENDING"},
          {"state_reason", "JobHeldUser"},
          {"priority", 0},
          {"nice", nullptr},
          {"nodes", ""},
          {"required_nodes", ""},
          {"node_count", nodes},
          {"max_nodes", nodes},
          {"tasks", nodes},
          {"tasks_per_node", 1},
          {"cpus", nodes * 8},
          {"cpus_per_task", 8},
          {"memory_per_node", 64000},
          {"memory_per_cpu", nullptr},
          {"tres_per_node", "gres:gpu:a100:" + std::to_string(g)},
          {"tres_per_task", ""},
          {"tres_per_job", ""},
          {"tres_per_socket", ""},
          {"shared", nullptr},
          {"time_limit", 30 + next() % 600},
          {"submit_time", kNow - 86400 + id},
          {"start_time", 0},
          {"requeue", true},
          {"restart_cnt", 0},
          {"het_job_id", 0},
          {"array_job_id", 0},
          {"array_task_string", ""},
          {"dependency", ""},
          {"gres_detail", json::array()}};
}

std::string squeue_json() {
  json jobs = json::array();
  std::uint64_t s = 42;
  int node = 1;
  for (int id = 1; id <= kRunning; ++id) {  // 1-node 2-GPU jobs, two per node on 1,000 nodes
    json j = job(id, s);
    const std::string name = "gpu" + std::to_string(node);
    const int first = (id % 2) * 4;
    j["job_state"] = "RUNNING";
    j["state_reason"] = "None";
    j["priority"] = 4294901000LL;
    j["node_count"] = 1;
    j["max_nodes"] = 1;
    j["tasks"] = 1;
    j["cpus"] = 8;
    j["tres_per_node"] = "gres:gpu:a100:2";
    j["nodes"] = name;
    j["start_time"] = kNow - 600;
    j["gres_detail"] = {"gpu:a100:2(IDX:" + std::to_string(first) + "-" +
                        std::to_string(first + 1) + ")"};
    j["job_resources"] = {{"nodes", name}, {"allocated_nodes", {{{"nodename", name}}}}};
    jobs.push_back(j);
    if (id % 2 == 0) ++node;
  }
  for (int id = kRunning + 1; id <= kRunning + kPending; ++id) jobs.push_back(job(id, s));
  return json{{"meta", meta()}, {"errors", json::array()}, {"jobs", jobs}}.dump();
}

std::string topology_conf() {
  std::string out;
  for (int leaf = 0; leaf < kNodes / 20; ++leaf) {
    out += "SwitchName=leaf" + std::to_string(leaf + 1) + " Nodes=gpu[" +
           std::to_string(leaf * 20 + 1) + "-" + std::to_string(leaf * 20 + 20) + "]\n";
  }
  out += "SwitchName=spine Switches=leaf[1-" + std::to_string(kNodes / 20) + "]\n";
  return out;
}

void cycle(benchmark::State& state, gs::pipeline_config config, bool topology) {
  const std::string nodes_text = sinfo_json();
  const std::string jobs_text = squeue_json();
  const std::string topo_text = topology_conf();
  std::size_t admitted = 0, commands = 0;
  for (auto _ : state) {
    const auto jobs = sl::parse_squeue(jobs_text);
    const auto nodes = sl::parse_sinfo(nodes_text);
    auto m = sl::build_model(nodes, jobs, {.partition = "gpu", .now_unix = kNow});
    gs::policy_inputs in;
    if (topology) {
      in.topology = std::make_shared<const gs::topology_model>(
          sl::parse_topology_conf(topo_text, m.book.state()));
    }
    gs::policy_registry reg;
    auto pipe = reg.make_pipeline(config, in);
    gs::random_engine rng(1);
    const auto r = pipe.schedule(m.book, m.pending, m.now, rng);
    const auto plan = sl::plan_commands(m, r);
    admitted = r.count(gs::verdict::admit);
    commands = plan.all().size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["admitted"] = static_cast<double>(admitted);
  state.counters["commands"] = static_cast<double>(commands);
}

void BM_slurm_cycle_fifo_gang(benchmark::State& s) {
  cycle(s, {.ordering = "fifo", .admission = "gang"}, false);
}
void BM_slurm_cycle_drf_easy_topology(benchmark::State& s) {
  cycle(s, {.ordering = "drf", .admission = "gang-easy", .placement = "topology"}, true);
}
// The parts: reading the JSON alone, and reading plus building the model.
void BM_slurm_read_json(benchmark::State& state) {
  const std::string nodes_text = sinfo_json();
  const std::string jobs_text = squeue_json();
  for (auto _ : state) {
    auto jobs = sl::parse_squeue(jobs_text);
    auto nodes = sl::parse_sinfo(nodes_text);
    benchmark::DoNotOptimize(jobs);
    benchmark::DoNotOptimize(nodes);
  }
}
void BM_slurm_build_model(benchmark::State& state) {
  const auto jobs = sl::parse_squeue(squeue_json());
  const auto nodes = sl::parse_sinfo(sinfo_json());
  for (auto _ : state) {
    auto m = sl::build_model(nodes, jobs, {.partition = "gpu", .now_unix = kNow});
    benchmark::DoNotOptimize(m);
  }
}

}  // namespace

BENCHMARK(BM_slurm_read_json)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_slurm_build_model)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_slurm_cycle_fifo_gang)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_slurm_cycle_drf_easy_topology)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
