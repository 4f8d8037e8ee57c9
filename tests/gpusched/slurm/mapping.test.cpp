// SPDX-License-Identifier: Apache-2.0
// The Slurm bridge's mapping on JSON recorded from a live Slurm 22.05 (tests/data/slurm/).
#include <doctest/doctest.h>

#include "slurm_data.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gpusched/core/random.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/topology/node_topology.hpp>
#include <gpusched/topology/topo_text.hpp>
#include <gpusched/slurm/commands.hpp>
#include <gpusched/slurm/gres_links.hpp>
#include <gpusched/slurm/hostlist.hpp>
#include <gpusched/slurm/model.hpp>
#include <gpusched/slurm/snapshot.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace slurm_mapping_test {

namespace gs = gpusched;
namespace sl = gpusched::slurm;

namespace {
using gpusched::testing::read_slurm_data;

const gs::job_spec* pending(const sl::model& m, std::uint32_t id) {
  for (const auto& j : m.pending) {
    if (j.id == gs::job_id{id}) return &j;
  }
  return nullptr;
}

const sl::job_issue* issue(const sl::model& m, std::int64_t id) {
  for (const auto& i : m.issues) {
    if (i.job == id) return &i;
  }
  return nullptr;
}

gs::node_index node(const sl::model& m, const std::string& name) {
  for (gs::node_index n : m.book.state().nodes()) {
    if (m.book.state().name(n) == name) return n;
  }
  FAIL("no node " << name);
  return {};
}

// squeue-mixed.json with job 2 (a 2-node gang of 4 GPUs per node, running in the recording)
// turned back into a held job, and job 1 removed: a queue over four idle nodes.
std::string held_gang_queue() {
  auto doc = nlohmann::json::parse(read_slurm_data("squeue-mixed.json"));
  auto& jobs = doc["jobs"];
  for (auto it = jobs.begin(); it != jobs.end();) {
    if ((*it)["job_id"] == 1) {
      it = jobs.erase(it);
      continue;
    }
    if ((*it)["job_id"] == 2) {
      (*it)["job_state"] = "PENDING";
      (*it)["priority"] = 0;
      (*it)["state_reason"] = "JobHeldUser";
      (*it)["nodes"] = "";
      (*it)["required_nodes"] = "";
      (*it)["gres_detail"] = nlohmann::json::array();
      it->erase("job_resources");
    }
    ++it;
  }
  return doc.dump();
}
}  // namespace

TEST_CASE("hostlist: expand ranges, padding and plain names, join writes commas") {
  CHECK(sl::expand_hostlist("n[1-3,7],gpu01") ==
        std::vector<std::string>{"n1", "n2", "n3", "n7", "gpu01"});
  CHECK(sl::expand_hostlist("n[08-10]") == std::vector<std::string>{"n08", "n09", "n10"});
  CHECK(sl::expand_hostlist("").empty());
  CHECK_THROWS_AS((void)sl::expand_hostlist("n[1-"), gs::invalid_value_error);
  CHECK_THROWS_AS((void)sl::expand_hostlist("n[3-1]"), gs::invalid_value_error);
  CHECK(sl::join_hostlist({"n1", "n3"}) == "n1,n3");
}

TEST_CASE("sinfo: nodes, GRES, state flags and partitions of the recorded cluster") {
  sl::data_version v;
  const auto nodes = sl::parse_sinfo(read_slurm_data("sinfo-drained.json"), &v);
  CHECK(v.plugin == "openapi/v0.0.38");
  CHECK(v.slurm_release == "22.05.8");
  REQUIRE(nodes.size() == 4);
  CHECK(nodes[0].name == "n1");
  CHECK(nodes[0].cpus == 2);
  CHECK(nodes[0].real_memory_mib == 1000);
  CHECK(nodes[0].gres == "gpu:a100:8");
  CHECK(nodes[0].partitions == std::vector<std::string>{"gpu"});
  CHECK(nodes[3].state_flags == std::vector<std::string>{"DRAIN"});
  CHECK(sl::node_gpus("gpu:a100:8")->first == 8);
  CHECK(sl::node_gpus("gpu:a100:8")->second == "a100");
  CHECK(sl::node_gpus("gpu:4(S:0-1)")->first == 4);
  CHECK_FALSE(sl::node_gpus("gpu:a100:4,gpu:v100:4").has_value());
}

TEST_CASE("squeue: the recorded jobs and their fields") {
  const auto jobs = sl::parse_squeue(read_slurm_data("squeue-mixed.json"));
  REQUIRE(jobs.size() == 9);
  const auto& j2 = *std::find_if(jobs.begin(), jobs.end(), [](auto& j) { return j.id == 2; });
  CHECK(j2.state == "RUNNING");
  CHECK(j2.nodes == "n[2-3]");
  CHECK(j2.tres_per_node == "gres:gpu:a100:4");
  CHECK(j2.account == "teama");
  CHECK(j2.requeue);
  CHECK(j2.time_limit_minutes == 10);
  CHECK(j2.gres_detail == std::vector<std::string>{"gpu:a100:4(IDX:0-3)", "gpu:a100:4(IDX:0-3)"});
  CHECK(j2.allocated_nodes == std::vector<std::string>{"n2", "n3"});
  const auto& j4 = *std::find_if(jobs.begin(), jobs.end(), [](auto& j) { return j.id == 4; });
  CHECK(j4.nice == 10);
  // a negative nice comes as its unsigned 32-bit pattern
  auto doc = nlohmann::json::parse(read_slurm_data("squeue-mixed.json"));
  doc["jobs"][0]["nice"] = 4294967196LL;
  CHECK(sl::parse_squeue(doc.dump())[0].nice == -100);
  CHECK(j4.state_reason == "JobHeldUser");
  CHECK(j4.priority == 0);
}

TEST_CASE("model: running jobs hold their GPUs, held jobs pend, inexpressible ones are issues") {
  const auto nodes = sl::parse_sinfo(read_slurm_data("sinfo-drained.json"));
  const auto jobs = sl::parse_squeue(read_slurm_data("squeue-mixed.json"));
  const auto m = sl::build_model(nodes, jobs, {.partition = "gpu", .now_unix = 1796417610});
  const auto& c = m.book.state();
  REQUIRE(c.node_count() == 4);
  CHECK(c.catalog().find("a100").has_value());
  // running: job 1 on n1 GPUs 0-1 (Slurm's IDX), job 2 on n2 and n3 GPUs 0-3
  CHECK(m.running == std::vector<std::int64_t>{1, 2});
  const auto n1 = node(m, "n1");
  CHECK_FALSE(c.gpus(n1)[0].whole_free());
  CHECK_FALSE(c.gpus(n1)[1].whole_free());
  CHECK(c.gpus(n1)[2].whole_free());
  CHECK(c.free_whole_gpus(node(m, "n2")) == 4);
  CHECK(c.free_whole_gpus(node(m, "n3")) == 4);
  CHECK(m.book.find(gs::job_id{2})->spec.preemptible);
  // drained n4 offers nothing
  CHECK_FALSE(c.available(node(m, "n4")));

  // held jobs: per-node GPUs, type, tenant, priority, time limit
  const auto* pertask = pending(m, 3);  // -n2 --gpus-per-task=1 on one node
  REQUIRE(pertask != nullptr);
  CHECK(pertask->groups.size() == 1);
  CHECK(pertask->groups[0].count == 1);
  CHECK(pertask->groups[0].request.gpu.whole_gpus() == gs::gpu_count{2});
  CHECK(pertask->groups[0].request.cpu == gs::cpu_millis{2000});
  CHECK(pertask->expected_duration == gs::seconds(300));
  CHECK(m.tenant_name(pertask->tenant) == "teamb");
  const auto* untyped = pending(m, 4);  // --gres=gpu:2 --nice=10
  REQUIRE(untyped != nullptr);
  CHECK(untyped->priority == -10);
  CHECK(untyped->groups[0].request.allowed_models.empty());
  CHECK(m.tenant_name(untyped->tenant) == "teama");
  CHECK_FALSE(untyped->expected_duration.has_value());
  const auto* gang3 = pending(m, 7);  // -N3 --gpus-per-node=8
  REQUIRE(gang3 != nullptr);
  CHECK(gang3->groups[0].count == 3);
  CHECK(gang3->groups[0].request.gpu.whole_gpus() == gs::gpu_count{8});
  CHECK(gang3->expected_duration == gs::seconds(3600));
  const auto* gpus3 = pending(m, 8);  // --gpus=3 --mem=500 -c 2
  REQUIRE(gpus3 != nullptr);
  CHECK(gpus3->groups[0].request.gpu.whole_gpus() == gs::gpu_count{3});
  CHECK(gpus3->groups[0].request.memory == gs::memory_mib{500});
  // job 9: held with a node list (set, never released): taken for a user's -w, left alone
  const auto* listed = issue(m, 9);
  REQUIRE(listed != nullptr);
  CHECK(listed->field == "required_nodes");
  CHECK(listed->message.find("scontrol update JobId=9 NodeList=") != std::string::npos);

  // inexpressible: left alone with a message naming job and field
  // (a GPU type no node of the partition has: the job cannot start here, which
  // schedule_cycle reports as an issue when no other partition of the job can start it)
  const auto h100 = std::find_if(m.not_here.begin(), m.not_here.end(),
                                 [](const sl::job_issue& i) { return i.job == 5; });
  REQUIRE(h100 != m.not_here.end());
  CHECK(h100->field == "tres_per_node");
  CHECK(h100->message == "GPU type 'h100' is on no node (types: a100) in partition 'gpu'");
  CHECK(pending(m, 5) == nullptr);
  const auto* excl = issue(m, 6);
  REQUIRE(excl != nullptr);
  CHECK(excl->field == "shared");
  CHECK(pending(m, 6) == nullptr);
  CHECK(m.pending.size() == 4);
}

TEST_CASE("model: a heterogeneous job is an issue, the other jobs are still scheduled") {
  auto doc = nlohmann::json::parse(read_slurm_data("squeue-mixed.json"));
  for (auto& j : doc["jobs"]) {
    if (j["job_id"] == 3) j["het_job_id"] = 3;
  }
  const auto m = sl::build_model(sl::parse_sinfo(read_slurm_data("sinfo-drained.json")),
                                 sl::parse_squeue(doc.dump()));
  const auto* het = issue(m, 3);
  REQUIRE(het != nullptr);
  CHECK(het->field == "het_job_id");
  CHECK(het->message.find("job 3 'pertask'") != std::string::npos);
  CHECK(het->message.find("left held") != std::string::npos);
  CHECK(pending(m, 3) == nullptr);
  CHECK(pending(m, 4) != nullptr);
  CHECK(m.pending.size() == 3);
}

TEST_CASE("snapshot: an unexpected JSON version or text that is not JSON is a clear error") {
  auto doc = nlohmann::json::parse(read_slurm_data("squeue-mixed.json"));
  doc["meta"]["plugin"]["type"] = "openapi/v0.0.39";
  doc["meta"]["Slurm"]["release"] = "23.02.1";
  try {
    (void)sl::parse_squeue(doc.dump());
    FAIL("no error");
  } catch (const gs::invalid_value_error& e) {
    const std::string what = e.what();
    CHECK(what.find("squeue --json") != std::string::npos);
    CHECK(what.find("unsupported JSON data version 'openapi/v0.0.39' (Slurm 23.02.1)") !=
          std::string::npos);
  }
  // what 22.05 prints while slurmctld is down (exit status 0)
  auto down = nlohmann::json::parse(read_slurm_data("squeue-empty.json"));
  down["errors"].push_back({{"description", "Failed while looking for jobs"},
                            {"error_number", -1},
                            {"error", "Unspecified error"},
                            {"source", "slurm_load_jobs"}});
  CHECK_THROWS_WITH_AS((void)sl::parse_squeue(down.dump()),
                       doctest::Contains("the controller reported: Unspecified error (Failed "
                                         "while looking for jobs, slurm_load_jobs)"),
                       gs::invalid_value_error);
  CHECK_THROWS_AS((void)sl::parse_sinfo("slurm_load_partitions: Unable to contact slurm controller"),
                  gs::invalid_value_error);
  auto bad = nlohmann::json::parse(read_slurm_data("sinfo-idle.json"));
  bad["nodes"][0]["cpus"] = "two";
  CHECK_THROWS_WITH_AS((void)sl::parse_sinfo(bad.dump()),
                       doctest::Contains("node 'n1': field 'cpus'"), gs::invalid_value_error);
}

TEST_CASE("cycle: a 2-node gang goes on two distinct nodes, commands set the list, then release") {
  const auto nodes = sl::parse_sinfo(read_slurm_data("sinfo-idle.json"));
  const auto jobs = sl::parse_squeue(held_gang_queue());
  auto m = sl::build_model(nodes, jobs);
  REQUIRE(pending(m, 2) != nullptr);
  CHECK(pending(m, 2)->groups[0].count == 2);
  // --gres=gpu:a100:4: only that model
  CHECK(pending(m, 2)->groups[0].request.allowed_models.contains(
      *m.book.state().catalog().find("a100")));
  gs::policy_registry reg;
  auto pipe = reg.make_pipeline({.ordering = "fifo", .admission = "gang", .placement = "first-fit"});
  gs::random_engine rng(1);
  const auto r = pipe.schedule(m.book, m.pending, m.now, rng);
  const auto d = std::find_if(r.decisions.begin(), r.decisions.end(),
                              [](const gs::decision& x) { return x.job == gs::job_id{2}; });
  REQUIRE(d != r.decisions.end());
  REQUIRE(d->kind == gs::verdict::admit);
  const auto list = sl::distinct_nodes(m, d->placement);
  CHECK(list.size() == 2);  // -N2: two nodes, never both tasks on one 8-GPU node
  const auto plan = sl::plan_commands(m, r);
  CHECK(plan.signals.empty());
  CHECK(plan.grace_seconds == 0.0);
  // job 2's node list is set before its release
  std::vector<std::string> texts;
  for (const auto& cmd : plan.all()) texts.push_back(cmd.text());
  const auto set = std::find(texts.begin(), texts.end(),
                             "scontrol update JobId=2 NodeList=" + sl::join_hostlist(list));
  const auto rel = std::find(texts.begin(), texts.end(), "scontrol release 2");
  REQUIRE(set != texts.end());
  REQUIRE(rel != texts.end());
  CHECK(set < rel);
  // decisions as JSON lines
  const auto js = sl::decision_json(m, *d);
  CHECK(js["event"] == "decision");
  CHECK(js["job"] == "2");
  CHECK(js["verdict"] == "admit");
  CHECK(js["nodes"].size() == 2);
  CHECK(js["tenant"] == "teama");
}

TEST_CASE("cycle: the 3-node gang waits whole on the recorded cluster, the drained node is unused") {
  auto m = sl::build_model(sl::parse_sinfo(read_slurm_data("sinfo-drained.json")),
                           sl::parse_squeue(read_slurm_data("squeue-mixed.json")));
  gs::policy_registry reg;
  auto pipe = reg.make_pipeline({.ordering = "fifo", .admission = "gang"});
  gs::random_engine rng(1);
  const auto r = pipe.schedule(m.book, m.pending, m.now, rng);
  for (const auto& d : r.decisions) {
    if (d.job == gs::job_id{7}) {
      CHECK(d.kind == gs::verdict::defer);
      CHECK(d.placement.empty());
    }
    for (const auto& name : sl::distinct_nodes(m, d.placement)) CHECK(name != "n4");
  }
  const auto plan = sl::plan_commands(m, r);
  for (const auto& cmd : plan.all()) CHECK(cmd.job != 7);
}

TEST_CASE("cycle: preemption signals the victim, waits the grace, requeues it held") {
  // job 1 (requeueable, 2 GPUs on n1) and job 2 (4+4 on n2, n3) run; n4 is drained. A held
  // 8-GPU job of high priority (nice -100) needs a whole node: only n1 can be freed cheaply.
  auto doc = nlohmann::json::parse(read_slurm_data("squeue-mixed.json"));
  auto urgent = doc["jobs"][0];
  for (const auto& j : doc["jobs"]) {
    if (j["job_id"] == 8) urgent = j;
  }
  urgent["job_id"] = 10;
  urgent["name"] = "urgent";
  urgent["nice"] = -100;
  urgent["tres_per_job"] = "gres:gpu:8";
  urgent["memory_per_node"] = nullptr;
  auto& jobs = doc["jobs"];
  for (auto it = jobs.begin(); it != jobs.end();) {
    const auto id = (*it)["job_id"].get<int>();
    it = (id == 1 || id == 2) ? it + 1 : jobs.erase(it);
  }
  jobs.push_back(urgent);
  auto m = sl::build_model(sl::parse_sinfo(read_slurm_data("sinfo-drained.json")), sl::parse_squeue(doc.dump()));
  gs::policy_registry reg;
  auto pipe = reg.make_pipeline({.ordering = "priority", .admission = "gang", .preemption = "priority"});
  gs::random_engine rng(1);
  const auto r = pipe.schedule(m.book, m.pending, m.now, rng);
  REQUIRE(r.decisions.size() == 1);
  REQUIRE(r.decisions[0].kind == gs::verdict::admit);
  REQUIRE(r.decisions[0].victims.size() == 1);
  const auto plan = sl::plan_commands(m, r, {.signal = "USR1", .grace_seconds = 5});
  CHECK(sl::clear_nodes(plan.starts[0]).text() == "scontrol update JobId=10 NodeList=");
  REQUIRE(plan.signals.size() == 1);
  const auto victim = plan.signals[0].job;
  CHECK(plan.signals[0].text() == "scancel --signal=USR1 --full " + std::to_string(victim));
  CHECK(plan.grace_seconds == 5.0);
  REQUIRE(plan.requeues.size() == 1);
  CHECK(plan.requeues[0].text() == "scontrol requeuehold " + std::to_string(victim));
  REQUIRE(plan.starts.size() == 2);
  // on a node the victim held (job 1: n1; job 2: n2 or n3), never on the drained n4
  const std::string set = plan.starts[0].text();
  CHECK(set.rfind("scontrol update JobId=10 NodeList=", 0) == 0);
  CHECK(set.find("n4") == std::string::npos);
  CHECK(plan.starts[1].text() == "scontrol release 10");
  // the victim, requeued, comes back: its start is not held back by Slurm's requeue delay
  for (auto& j : doc["jobs"]) {
    if (j["job_id"] == victim) {
      j["job_state"] = "PENDING";
      j["priority"] = 0;
      j["state_reason"] = "JobHeldUser";
      j["restart_cnt"] = 1;
      j["nodes"] = "";
      j["gres_detail"] = nlohmann::json::array();
      j.erase("job_resources");
    }
    if (j["job_id"] == 10) j["job_state"] = "CANCELLED";
  }
  auto back = sl::build_model(sl::parse_sinfo(read_slurm_data("sinfo-drained.json")), sl::parse_squeue(doc.dump()));
  const auto r2 = pipe.schedule(back.book, back.pending, back.now, rng);
  REQUIRE(r2.decisions.size() == 1);
  REQUIRE(r2.decisions[0].kind == gs::verdict::admit);
  const auto plan2 = sl::plan_commands(back, r2);
  REQUIRE_FALSE(plan2.starts.empty());
  CHECK(plan2.starts[0].argv.back() == "StartTime=now");
}

TEST_CASE("topology.conf: leaf and spine levels over the model's nodes") {
  const auto m = sl::build_model(sl::parse_sinfo(read_slurm_data("sinfo-idle.json")), {});
  const auto f = sl::parse_topology_conf(
      "# two leaves\nSwitchName=leaf1 Nodes=n[1,3]\nSwitchName=leaf2 Nodes=n[2,4]\n"
      "SwitchName=spine Switches=leaf[1-2] LinkSpeed=100\n",
      m.book.state());
  CHECK(f.level_count() == 2);
  CHECK(f.level(1).name == "leaf");
  CHECK(f.level(2).name == "spine");
  const auto a = node(m, "n1"), b = node(m, "n2"), c = node(m, "n3");
  CHECK(f.common_level(a, c) == 1);
  CHECK(f.common_level(a, b) == 2);
  CHECK_THROWS_AS((void)sl::parse_topology_conf("Nodes=n1\n", m.book.state()),
                  gs::invalid_value_error);
}

TEST_CASE("gres-links: Links= counts NVLinks between GPUs, -1 for the GPU itself") {
  // a DGX-1 style matrix: GPU0 has 1 link to GPU1-2, 2 to GPU3-4, none to GPU5-7
  const std::string topo =
      "      GPU0 GPU1 GPU2 GPU3 GPU4 GPU5 GPU6 GPU7\n"
      "GPU0   X   NV1  NV1  NV2  NV2  SYS  SYS  SYS\n"
      "GPU1  NV1   X   NV2  NV1  SYS  NV2  SYS  SYS\n"
      "GPU2  NV1  NV2   X   NV2  SYS  SYS  NV1  SYS\n"
      "GPU3  NV2  NV1  NV2   X   SYS  SYS  SYS  NV1\n"
      "GPU4  NV2  SYS  SYS  SYS   X   NV1  NV1  NV2\n"
      "GPU5  SYS  NV2  SYS  SYS  NV1   X   NV2  NV1\n"
      "GPU6  SYS  SYS  NV1  SYS  NV1  NV2   X   NV2\n"
      "GPU7  SYS  SYS  SYS  NV1  NV2  NV1  NV2   X \n";
  const auto t = gs::parse_topo_matrix(topo).topology;
  const std::string out = sl::gres_links(t, "n[1-4]", "v100");
  CHECK(out.find("NodeName=n[1-4] Name=gpu Type=v100 File=/dev/nvidia0 Links=-1,1,1,2,2,0,0,0\n") !=
        std::string::npos);
  CHECK(out.find("File=/dev/nvidia7 Links=0,0,0,1,2,1,2,-1\n") != std::string::npos);
  // NVSwitch: every pair has the same links
  const std::string a100 = sl::gres_links(gs::dgx_a100(), "a[1-2]");
  const int n = gs::dgx_a100().nvlinks(0, 1);
  CHECK(n > 0);
  CHECK(a100.find("File=/dev/nvidia0 Links=-1," + std::to_string(n) + ",") != std::string::npos);
}

}  // namespace slurm_mapping_test
