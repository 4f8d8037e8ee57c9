// SPDX-License-Identifier: Apache-2.0
// Job arrays and dependencies in the Slurm bridge (include/gpusched/slurm/arrays.hpp): array
// tasks split in the model and named <array>_<task> in every command, the %N limit, and
// afterok/afterany/afternotok/after decided by the bridge, on the snapshot recorded from a live
// Slurm 22.05 (tests/data/slurm/*-partitions.*: array 21 = sweep 1-6%2, task 3 split off as job
// 24, merge 22 afterok:21) and on records made here.
#include <doctest/doctest.h>

#include "slurm_data.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <gpusched/core/error.hpp>
#include <gpusched/core/random.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/slurm/arrays.hpp>
#include <gpusched/slurm/commands.hpp>
#include <gpusched/slurm/cycle.hpp>
#include <gpusched/slurm/model.hpp>
#include <gpusched/slurm/partitions.hpp>
#include <gpusched/slurm/snapshot.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace slurm_arrays_test {

namespace gs = gpusched;
namespace sl = gpusched::slurm;

namespace {
using gpusched::testing::read_slurm_data;

/// The recorded jobs, without the other held jobs of pb (b-pb, c-both): pb's held jobs are the
/// array and its merge.
std::vector<sl::job_record> recorded_pb_jobs() {
  auto jobs = sl::parse_squeue(read_slurm_data("squeue-partitions.json"));
  std::erase_if(jobs,
                [](const sl::job_record& j) { return j.name == "b-pb" || j.name == "c-both"; });
  return jobs;
}

/// One FIFO-gang cycle of partition pb over `jobs` on the recorded nodes.
sl::cycle_outcome pb_cycle(std::vector<sl::job_record> jobs) {
  const auto nodes = sl::parse_sinfo(read_slurm_data("sinfo-partitions.json"));
  const auto parts = sl::parse_partitions(read_slurm_data("scontrol-partitions.txt"));
  gs::policy_registry reg;
  return sl::schedule_cycle(nodes, std::move(jobs), parts,
                            {.partitions = "pb", .now_unix = 1796420000}, [&](sl::model& m) {
                              auto pipe =
                                  reg.make_pipeline({.ordering = "fifo", .admission = "gang"});
                              gs::random_engine rng(1);
                              return pipe.schedule(m.book, m.pending, m.now, rng);
                            });
}

/// The commands of a plan as text.
std::vector<std::string> texts(const std::vector<sl::command>& cs) {
  std::vector<std::string> out;
  for (const auto& c : cs) out.push_back(c.text());
  return out;
}

/// The issue of the job Slurm names `name` ("22", "21_5"), or nullptr.
const sl::job_issue* issue_of(const sl::cycle_outcome& o, const std::string& name) {
  for (const auto& i : o.issues) {
    if ((i.slurm_job.empty() ? std::to_string(i.job) : i.slurm_job) == name) return &i;
  }
  return nullptr;
}

/// A finished or running record of task `task` of array `array` (job id `id`).
sl::job_record task_record(std::int64_t id, std::int64_t array, std::int64_t task,
                           const std::string& state) {
  sl::job_record r;
  r.id = id;
  r.array_job_id = array;
  r.array_task_id = task;
  r.state = state;
  r.priority = 1;
  return r;
}

/// A held record with dependency `dep`.
sl::job_record held_with(std::int64_t id, const std::string& dep) {
  sl::job_record r;
  r.id = id;
  r.state = "PENDING";
  r.state_reason = "JobHeldAdmin";
  r.dependency = dep;
  return r;
}

using kind = sl::dependency_verdict::kind;
kind verdict_of(const std::string& dep, const std::vector<sl::job_record>& others) {
  return sl::evaluate_dependency(held_with(99, dep), others).what;
}
}  // namespace

TEST_CASE("arrays: array_task_string ranges, %N limit and hex masks, bad text named") {
  using V = std::vector<std::int64_t>;
  CHECK(sl::parse_array_tasks("1-2,4-6%2", "job 21") == std::pair{V{1, 2, 4, 5, 6}, 2});
  CHECK(sl::parse_array_tasks("7", "job 1") == std::pair{V{7}, 0});
  CHECK(sl::parse_array_tasks("0x3E", "job 1") == std::pair{V{1, 2, 3, 4, 5}, 0});
  for (const std::string bad : {"", "1-", "3-1", "a", "1,,2", "1%", "0x", "0xZ", "1-2%x"}) {
    CAPTURE(bad);
    try {
      (void)sl::parse_array_tasks(bad, "job 21");
      FAIL("accepted");
    } catch (const gs::invalid_value_error& e) {
      CHECK(std::string(e.what()).find("job 21") != std::string::npos);
      CHECK(std::string(e.what()).find("array_task_string") != std::string::npos);
    }
  }
  CHECK_THROWS_AS((void)sl::parse_array_tasks("0-4000001", "job 1"), gs::invalid_value_error);
}

TEST_CASE("arrays: squeue --json's array fields of the recorded array and its split task") {
  const auto jobs = sl::parse_squeue(read_slurm_data("squeue-partitions.json"));
  const auto find = [&](std::int64_t id) {
    const auto it = std::find_if(jobs.begin(), jobs.end(), [&](auto& j) { return j.id == id; });
    REQUIRE(it != jobs.end());
    return *it;
  };
  const auto head = find(21);
  CHECK(head.array_job_id == 21);
  CHECK_FALSE(head.array_task_id.has_value());
  CHECK(head.array_tasks == "1-2,4-6%2");
  CHECK(head.array_max_tasks == 2);
  const auto split = find(24);
  CHECK(split.array_job_id == 21);
  CHECK(split.array_task_id == 3);
  CHECK(split.array_tasks.empty());
  CHECK(sl::slurm_name(split) == "21_3");
  CHECK(sl::slurm_name(head) == "21");  // the unsplit tasks' record: no one task
  // the last task of a completed array keeps the array's id: it is still named A_T
  const auto last = find(2);
  CHECK(last.array_task_id == 6);
  CHECK(sl::slurm_name(last) == "2_6");
  CHECK(find(22).dependency == "afterok:21_*(unfulfilled)");
}

TEST_CASE("arrays: expand_arrays makes one job per unsplit held task, %N holds the rest back") {
  auto jobs = recorded_pb_jobs();
  const auto before = jobs.size();
  const auto x = sl::expand_arrays(jobs);
  CHECK(jobs.size() == before - 1 + 5);  // record 21 replaced by tasks 1, 2, 4, 5, 6
  std::set<std::int64_t> tasks;
  std::set<std::int64_t> ids;
  for (const auto& j : jobs) {
    ids.insert(j.id);
    if (j.array_job_id != 21) continue;
    REQUIRE(j.array_task_id.has_value());
    tasks.insert(*j.array_task_id);
    CHECK(j.array_tasks.empty());
    CHECK(j.partition == "pb");
    CHECK(j.tres_per_node == "gres:gpu:1");
    if (j.id != 24) CHECK(j.id >= sl::first_task_model_id);
  }
  CHECK(tasks == std::set<std::int64_t>{1, 2, 3, 4, 5, 6});
  CHECK(ids.size() == jobs.size());  // model ids distinct
  // %2, none running: tasks 1 and 2 are offered, 3 (job 24), 4, 5, 6 wait
  std::set<std::string> waiting;
  for (const auto& [id, why] : x.waiting) {
    const auto it = std::find_if(jobs.begin(), jobs.end(), [&](auto& j) { return j.id == id; });
    REQUIRE(it != jobs.end());
    waiting.insert(sl::slurm_name(*it));
    CHECK(why == "array 21 runs at most 2 of its tasks at once (%2), 0 run now");
  }
  CHECK(waiting == std::set<std::string>{"21_3", "21_4", "21_5", "21_6"});
}

TEST_CASE("arrays: a running task counts against %N, finished ones do not") {
  std::vector<sl::job_record> jobs;
  jobs.push_back(task_record(31, 30, 1, "COMPLETED"));
  jobs.push_back(task_record(32, 30, 2, "RUNNING"));
  auto head = held_with(30, "");
  head.array_job_id = 30;
  head.array_tasks = "3-5%2";
  head.array_max_tasks = 2;
  jobs[0].array_max_tasks = jobs[1].array_max_tasks = 2;
  jobs.push_back(head);
  const auto x = sl::expand_arrays(jobs);
  REQUIRE(jobs.size() == 5);
  std::set<std::int64_t> waiting_tasks;
  for (const auto& j : jobs) {
    if (x.waiting.contains(j.id)) waiting_tasks.insert(*j.array_task_id);
  }
  CHECK(waiting_tasks == std::set<std::int64_t>{4, 5});  // 1 of 2 runs: task 3 is offered
  CHECK(x.waiting.begin()->second.find("1 run now") != std::string::npos);
}

TEST_CASE("arrays: the cycle starts tasks 21_1 and 21_2, naming them A_T in every command") {
  const auto o = pb_cycle(recorded_pb_jobs());
  REQUIRE(o.runs.size() == 1);
  const auto& m = o.runs[0].m;
  const auto starts = texts(o.plan.starts);
  REQUIRE(starts.size() == 4);
  CHECK(starts[0].rfind("scontrol update JobId=21_1 NodeList=n", 0) == 0);
  CHECK(starts[1] == "scontrol release 21_1");
  CHECK(starts[2].rfind("scontrol update JobId=21_2 NodeList=n", 0) == 0);
  CHECK(starts[3] == "scontrol release 21_2");
  for (const auto& c : o.plan.all()) {
    // never the bare array id, never a model id
    CHECK((c.target == "21_1" || c.target == "21_2"));
    CHECK(c.argv[2] == (c.what == sl::command::action::set_nodes ? "JobId=" + c.target : c.target));
  }
  // decisions name the tasks as Slurm does, in text and JSON
  std::set<std::string> admitted;
  for (std::size_t k = 0; k < o.reported.size(); ++k) {
    const auto [dm, d] = o.decision_at(k);
    if (d->kind != gs::verdict::admit) continue;
    admitted.insert(dm->address(d->job));
    const auto text = sl::decision_text(*dm, *d);
    CHECK(text.find("job 21_") != std::string::npos);
    CHECK(sl::decision_json(*dm, *d)["job"].get<std::string>() == dm->address(d->job));
  }
  CHECK(admitted == std::set<std::string>{"21_1", "21_2"});
  // the tasks beyond %2 and the merge job: left held, each named, each once
  for (const std::string t : {"21_3", "21_4", "21_5", "21_6"}) {
    CAPTURE(t);
    const auto* i = issue_of(o, t);
    REQUIRE(i != nullptr);
    CHECK(i->field == "array_max_tasks");
    CHECK(i->message.rfind(
              "job " + t + " 'sweep': field 'array_max_tasks': array 21 runs at most 2", 0) == 0);
    CHECK(sl::issue_json(*i)["job"].get<std::string>() == t);
  }
  const auto* merge = issue_of(o, "22");
  REQUIRE(merge != nullptr);
  CHECK(merge->field == "dependency");
  CHECK(merge->message.find("waits for its dependency, afterok:21_* (job 21_") !=
        std::string::npos);
  CHECK(std::count_if(o.issues.begin(), o.issues.end(), [](auto& i) { return i.job == 22; }) == 1);
  for (const auto& c : o.plan.all()) CHECK(c.job != 22);
  CHECK(m.address(gs::job_id{24}) == "21_3");
}

TEST_CASE("arrays: once every task completed, the merge job (afterok) is started") {
  auto jobs = recorded_pb_jobs();
  std::erase_if(jobs, [](const sl::job_record& j) { return j.array_job_id == 21; });
  for (std::int64_t t = 1; t <= 6; ++t) jobs.push_back(task_record(40 + t, 21, t, "COMPLETED"));
  jobs.back().id = 21;  // the last task keeps the array's id
  auto o = pb_cycle(jobs);
  CHECK(issue_of(o, "22") == nullptr);
  const auto starts = texts(o.plan.starts);
  REQUIRE(starts.size() == 2);
  CHECK(starts[0].rfind("scontrol update JobId=22 NodeList=n", 0) == 0);
  CHECK(starts[1] == "scontrol release 22");
  // one task failed: afterok can never be satisfied, the merge is left held, said so
  jobs[jobs.size() - 3].state = "FAILED";
  o = pb_cycle(jobs);
  const auto* merge = issue_of(o, "22");
  REQUIRE(merge != nullptr);
  CHECK(merge->message.find("can never be satisfied, afterok:21_* (job 21_4 is FAILED)") !=
        std::string::npos);
  CHECK(o.plan.starts.empty());
}

TEST_CASE("arrays: the last task of a split array (job id = array id) is addressed A_T") {
  // the record left after the other tasks were split: job_id 21 = array_job_id, task 6
  auto jobs = recorded_pb_jobs();
  std::erase_if(jobs, [](const sl::job_record& j) { return j.array_job_id == 21 || j.id == 22; });
  auto last = held_with(21, "");
  last.name = "sweep";
  last.partition = "pb";
  last.priority = 0;
  last.array_job_id = 21;
  last.array_task_id = 6;
  last.tres_per_node = "gres:gpu:1";
  last.node_count = 1;
  last.tasks = 1;
  last.cpus = 1;
  jobs.push_back(last);
  const auto o = pb_cycle(jobs);
  const auto starts = texts(o.plan.starts);
  REQUIRE(starts.size() == 2);
  CHECK(starts[0].rfind("scontrol update JobId=21_6 NodeList=n", 0) == 0);
  CHECK(starts[1] == "scontrol release 21_6");
  CHECK(sl::clear_nodes(o.plan.starts[0]).text() == "scontrol update JobId=21_6 NodeList=");
}

TEST_CASE("arrays: a preempted array task is signalled and requeued as A_T") {
  // squeue-mixed.json: job 2 (the requeueable gang on n2, n3) made task 6 of array 2, the
  // record whose id is the array's; an urgent 8-GPU job preempts it
  auto doc = nlohmann::json::parse(read_slurm_data("squeue-mixed.json"));
  auto urgent = doc["jobs"][0];
  for (const auto& j : doc["jobs"]) {
    if (j["job_id"] == 8) urgent = j;
  }
  urgent["job_id"] = 10;
  urgent["nice"] = -100;
  urgent["tres_per_job"] = "gres:gpu:8";
  urgent["memory_per_node"] = nullptr;
  auto& jobs = doc["jobs"];
  for (auto it = jobs.begin(); it != jobs.end();) {
    const auto id = (*it)["job_id"].get<int>();
    it = (id == 1 || id == 2) ? it + 1 : jobs.erase(it);
  }
  for (auto& j : jobs) {
    if (j["job_id"] == 2) {
      j["array_job_id"] = 2;
      j["array_task_id"] = 6;
    }
  }
  jobs.push_back(urgent);
  auto m =
      sl::build_model(sl::parse_sinfo(read_slurm_data("sinfo-drained.json")), sl::parse_squeue(doc.dump()));
  CHECK(m.address(gs::job_id{2}) == "2_6");
  CHECK(m.address(gs::job_id{1}) == "1");
  gs::policy_registry reg;
  auto pipe =
      reg.make_pipeline({.ordering = "priority", .admission = "gang", .preemption = "priority"});
  gs::random_engine rng(1);
  const auto r = pipe.schedule(m.book, m.pending, m.now, rng);
  REQUIRE(r.decisions.size() == 1);
  REQUIRE(r.decisions[0].victims == std::vector<gs::job_id>{gs::job_id{2}});
  const auto plan = sl::plan_commands(m, r, {.signal = "USR1", .grace_seconds = 5});
  CHECK(texts(plan.signals) == std::vector<std::string>{"scancel --signal=USR1 --full 2_6"});
  CHECK(texts(plan.requeues) == std::vector<std::string>{"scontrol requeuehold 2_6"});
  CHECK(sl::decision_json(m, r.decisions[0])["victims"] == nlohmann::json::array({"2_6"}));
}

TEST_CASE("dependencies: after, afterany, afterok, afternotok decided as Slurm does") {
  const std::vector<sl::job_record> done{task_record(41, 40, 1, "COMPLETED"),
                                         task_record(40, 40, 2, "COMPLETED")};
  const std::vector<sl::job_record> failed{task_record(41, 40, 1, "COMPLETED"),
                                           task_record(40, 40, 2, "FAILED")};
  const std::vector<sl::job_record> running{task_record(41, 40, 1, "COMPLETED"),
                                            task_record(40, 40, 2, "RUNNING")};
  auto pending = running;
  pending[1].state = "PENDING";
  CHECK(verdict_of("afterok:40_*(unfulfilled)", done) == kind::satisfied);
  CHECK(verdict_of("afterok:40", done) == kind::satisfied);  // an array's id: all its tasks
  CHECK(verdict_of("afterok:40_*", failed) == kind::never);
  CHECK(verdict_of("afterok:40_*", running) == kind::waiting);
  CHECK(verdict_of("afterany:40_*", failed) == kind::satisfied);
  CHECK(verdict_of("afterany:40_*", running) == kind::waiting);
  CHECK(verdict_of("afternotok:40_*", failed) == kind::never);  // task 1 completed
  CHECK(verdict_of("afternotok:40_2", failed) == kind::satisfied);
  CHECK(verdict_of("afternotok:40_2", done) == kind::never);
  CHECK(verdict_of("after:40_*", running) == kind::satisfied);
  CHECK(verdict_of("after:40_*", pending) == kind::waiting);
  // one task by name, by its own job id; several items all hold
  CHECK(verdict_of("afterok:40_1", failed) == kind::satisfied);
  CHECK(verdict_of("afterok:41", failed) == kind::satisfied);
  CHECK(verdict_of("afterok:40_1,afterok:40_2", failed) == kind::never);
  CHECK(verdict_of("afterok:40_1:40_2", running) == kind::waiting);
  // a job no longer in the queue lifts its dependency
  CHECK(verdict_of("afterok:77", done) == kind::satisfied);
  // kinds the bridge does not decide
  CHECK(verdict_of("afterok:40_1?afterok:40_2", done) == kind::unsupported);
  CHECK(verdict_of("singleton", done) == kind::unsupported);
  CHECK(verdict_of("after:40_1+5", done) == kind::unsupported);
  CHECK(verdict_of("aftercorr:40", done) == kind::unsupported);
  const auto v = sl::evaluate_dependency(held_with(99, "afterok:40_*"), running);
  CHECK(v.why == "afterok:40_* (job 40_2 is RUNNING)");
  CHECK(sl::dependency_problem(v) ==
        "waits for its dependency, afterok:40_* (job 40_2 is RUNNING)");
}

TEST_CASE("dependencies: build_model on its own decides them too") {
  std::vector<sl::job_record> jobs = recorded_pb_jobs();
  const auto nodes = sl::parse_sinfo(read_slurm_data("sinfo-partitions.json"));
  auto m = sl::build_model(nodes, jobs, {.partition = "pb"});
  const auto it =
      std::find_if(m.issues.begin(), m.issues.end(), [](auto& i) { return i.job == 22; });
  REQUIRE(it != m.issues.end());
  CHECK(it->message.find("waits for its dependency, afterok:21_* (job 21") != std::string::npos);
  // the unsplit record, not expanded: an issue, never scheduled as one job
  const auto head =
      std::find_if(m.issues.begin(), m.issues.end(), [](auto& i) { return i.job == 21; });
  REQUIRE(head != m.issues.end());
  CHECK(head->field == "array_task_string");
  for (const auto& p : m.pending) CHECK(p.id != gs::job_id{21});
}

}  // namespace slurm_arrays_test
