// SPDX-License-Identifier: Apache-2.0
// Partitions: `scontrol show partition` read, and one cycle over several partitions on the
// snapshot recorded from a live Slurm 22.05 (tests/data/slurm/*-partitions.*).
#include <doctest/doctest.h>

#include "slurm_data.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gpusched/core/random.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/slurm/commands.hpp>
#include <gpusched/slurm/cycle.hpp>
#include <gpusched/slurm/model.hpp>
#include <gpusched/slurm/partitions.hpp>
#include <gpusched/slurm/snapshot.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace slurm_partitions_test {

namespace gs = gpusched;
namespace sl = gpusched::slurm;

namespace {
using gpusched::testing::read_slurm_data;

/// The recorded snapshot's job of this name (the first one).
const sl::job_record& named(const std::vector<sl::job_record>& jobs, const std::string& name) {
  const auto it = std::find_if(jobs.begin(), jobs.end(),
                               [&](const sl::job_record& j) { return j.name == name; });
  REQUIRE(it != jobs.end());
  return *it;
}

/// One cycle over the recorded snapshot with FIFO gangs.
sl::cycle_outcome recorded_cycle(const std::vector<sl::partition_record>& parts,
                                 const std::string& wanted = "") {
  const auto nodes = sl::parse_sinfo(read_slurm_data("sinfo-partitions.json"));
  gs::policy_registry reg;
  return sl::schedule_cycle(nodes, sl::parse_squeue(read_slurm_data("squeue-partitions.json")), parts,
                            {.partitions = wanted, .now_unix = 1796420000},
                            [&](sl::model& m) {
                              auto pipe = reg.make_pipeline(
                                  {.ordering = "fifo", .admission = "gang"});
                              gs::random_engine rng(1);
                              return pipe.schedule(m.book, m.pending, m.now, rng);
                            });
}

const gs::decision* reported(const sl::cycle_outcome& o, std::int64_t job,
                             const sl::model** where = nullptr) {
  for (std::size_t k = 0; k < o.reported.size(); ++k) {
    const auto [m, d] = o.decision_at(k);
    if (static_cast<std::int64_t>(d->job.value()) == job) {
      if (where != nullptr) *where = m;
      return d;
    }
  }
  return nullptr;
}

const sl::job_issue* issue(const sl::cycle_outcome& o, std::int64_t job) {
  for (const auto& i : o.issues) {
    if (i.job == job) return &i;
  }
  return nullptr;
}
}  // namespace

TEST_CASE("scontrol show partition: nodes, limits, state of the recorded partitions") {
  const auto parts = sl::parse_partitions(read_slurm_data("scontrol-partitions.txt"));
  REQUIRE(parts.size() == 4);
  CHECK(parts[0].name == "gpu");
  CHECK(parts[0].is_default);
  CHECK(parts[0].nodes == std::vector<std::string>{"n1", "n2", "n3", "n4"});
  CHECK_FALSE(parts[0].max_nodes.has_value());
  CHECK_FALSE(parts[0].max_time_minutes.has_value());
  CHECK(parts[1].name == "pa");
  CHECK(parts[1].nodes == std::vector<std::string>{"n1", "n2"});
  CHECK(parts[1].max_nodes == 1);
  CHECK(parts[1].min_nodes == 1);
  CHECK(parts[1].max_time_minutes == 30);
  CHECK_FALSE(parts[1].default_time_minutes.has_value());
  CHECK(parts[2].nodes == std::vector<std::string>{"n3", "n4"});
  CHECK(parts[3].name == "pdown");
  CHECK(parts[3].state == "DOWN");
  CHECK_FALSE(parts[3].starts_jobs());
  CHECK(parts[1].starts_jobs());
}

TEST_CASE("scontrol show partition: Slurm's time formats, bad text named by line and key") {
  const auto t = [](const char* v) { return sl::detail::slurm_minutes(v, "test", "MaxTime"); };
  CHECK(t("1-00:00:00") == 1440);
  CHECK(t("00:30:00") == 30);
  CHECK(t("90") == 90);
  CHECK(t("1:30") == 2);  // minutes:seconds, seconds round up
  CHECK(t("2-12") == 3600);
  CHECK(t("1-02:03") == 1563);
  CHECK_FALSE(t("UNLIMITED").has_value());
  CHECK_FALSE(t("NONE").has_value());
  CHECK_THROWS_AS((void)t("1:2:3:4"), gs::invalid_value_error);
  CHECK_THROWS_AS((void)t("ten"), gs::invalid_value_error);
  CHECK_THROWS_AS((void)t("-5"), gs::invalid_value_error);

  const auto message = [](const std::string& text) -> std::string {
    try {
      (void)sl::parse_partitions(text);
    } catch (const gs::invalid_value_error& e) {
      return e.what();
    }
    return "(no error)";
  };
  CHECK(message("PartitionName=a Nodes=n1\nPartitionName=b Oops\n") ==
        "[gpusched.parse] scontrol show partition line 2: field 'word' = Oops: expected Key=Value");
  CHECK(message("Nodes=n1 State=UP\n").find("line 1: field 'PartitionName'") !=
        std::string::npos);
  CHECK(message("PartitionName=a\nPartitionName=a\n").find("two partitions of this name") !=
        std::string::npos);
  CHECK(message("PartitionName=a MaxNodes=lots\n").find("field 'MaxNodes' = lots") !=
        std::string::npos);
  CHECK(message("PartitionName=a MaxTime=soon\n").find("field 'MaxTime' = soon") !=
        std::string::npos);
  CHECK(message("PartitionName=a Nodes=n[1-\n").find("n[1-") != std::string::npos);
  CHECK(sl::parse_partitions("\n\nPartitionName=a Nodes=(null)\n\n").at(0).nodes.empty());
}

TEST_CASE("partitions: --partition names them (comma list), an unknown one is an error") {
  const auto parts = sl::parse_partitions(read_slurm_data("scontrol-partitions.txt"));
  CHECK(sl::select_partitions(parts, "").size() == 4);
  const auto two = sl::select_partitions(parts, "pb,pa");
  REQUIRE(two.size() == 2);
  CHECK(two[0]->name == "pb");
  CHECK(two[1]->name == "pa");
  try {
    (void)sl::select_partitions(parts, "pa,otehr");
    FAIL("no error for an unknown partition");
  } catch (const gs::invalid_value_error& e) {
    CHECK(e.id() == gs::error_id::unknown_name);
    CHECK(std::string(e.what()) ==
          "[gpusched.unknown_name] --partition: field 'partition' = otehr: no such partition in "
          "Slurm (partitions: gpu, pa, pb, pdown)");
  }
  // higher PriorityTier first
  auto tiered = parts;
  tiered[2].priority_tier = 5;
  CHECK(sl::select_partitions(tiered, "")[0]->name == "pb");
}

TEST_CASE("cycle: every job only on nodes of its partitions, limits and state honoured") {
  const auto parts = sl::parse_partitions(read_slurm_data("scontrol-partitions.txt"));
  const auto jobs = sl::parse_squeue(read_slurm_data("squeue-partitions.json"));
  const auto o = recorded_cycle(parts);
  REQUIRE(o.runs.size() == 4);
  const auto nodes_of = [&](const std::string& p) {
    const auto it = std::find_if(parts.begin(), parts.end(), [&](auto& x) { return x.name == p; });
    REQUIRE(it != parts.end());
    return std::set<std::string>(it->nodes.begin(), it->nodes.end());
  };
  // every admission lies in a partition the job names, and in the partition that decided it
  for (std::size_t k = 0; k < o.reported.size(); ++k) {
    const auto [m, d] = o.decision_at(k);
    if (d->kind != gs::verdict::admit) continue;
    const auto& rec = m->jobs.at(static_cast<std::int64_t>(d->job.value()));
    CHECK(sl::detail::in_partition(rec.partition, m->partition));
    for (const auto& n : sl::distinct_nodes(*m, d->placement)) {
      CHECK(nodes_of(m->partition).contains(n));
    }
  }
  const sl::model* where = nullptr;
  const auto* a = reported(o, named(jobs, "a-pa").id, &where);
  REQUIRE(a != nullptr);
  CHECK(a->kind == gs::verdict::admit);
  CHECK(where->partition == "pa");
  const auto* b = reported(o, named(jobs, "b-pb").id, &where);
  REQUIRE(b != nullptr);
  CHECK(b->kind == gs::verdict::admit);
  CHECK(sl::distinct_nodes(*where, b->placement) == std::vector<std::string>{"n3", "n4"});
  // the job naming both partitions: admitted once, moved to the partition that placed it
  const auto both = named(jobs, "c-both").id;
  const auto* c = reported(o, both, &where);
  REQUIRE(c != nullptr);
  CHECK(c->kind == gs::verdict::admit);
  CHECK(where->partition == "pa");  // pb's nodes are taken by b-pb
  std::size_t sets = 0;
  for (const auto& cmd : o.plan.starts) {
    if (cmd.job != both || cmd.what != sl::command::action::set_nodes) continue;
    ++sets;
    CHECK(cmd.text().rfind("scontrol update JobId=" + std::to_string(both) + " Partition=pa NodeList=", 0) == 0);
    CHECK(sl::clear_nodes(cmd).text() ==
          "scontrol update JobId=" + std::to_string(both) + " Partition=pa,pb NodeList=");
  }
  CHECK(sets == 1);
  // MaxNodes, MaxTime, a DOWN partition: left held, the reason named
  const auto* d = issue(o, named(jobs, "d-maxnodes").id);
  REQUIRE(d != nullptr);
  CHECK(d->message.find("2 nodes, above MaxNodes=1 in partition 'pa'") != std::string::npos);
  const auto* e = issue(o, named(jobs, "e-maxtime").id);
  REQUIRE(e != nullptr);
  CHECK(e->field == "time_limit");
  CHECK(e->message.find("a time limit of 60 min, above MaxTime=30 min in partition 'pa'") !=
        std::string::npos);
  const auto* f = issue(o, named(jobs, "f-down").id);
  REQUIRE(f != nullptr);
  CHECK(f->message.find("the partition is DOWN (it starts no jobs) in partition 'pdown'") !=
        std::string::npos);
  for (const auto& cmd : o.plan.all()) {
    CHECK(cmd.job != named(jobs, "d-maxnodes").id);
    CHECK(cmd.job != named(jobs, "f-down").id);
  }
}

TEST_CASE("cycle: --partition schedules only the partitions it names") {
  const auto parts = sl::parse_partitions(read_slurm_data("scontrol-partitions.txt"));
  const auto jobs = sl::parse_squeue(read_slurm_data("squeue-partitions.json"));
  const auto o = recorded_cycle(parts, "pb");
  REQUIRE(o.runs.size() == 1);
  CHECK(reported(o, named(jobs, "a-pa").id) == nullptr);
  CHECK(issue(o, named(jobs, "e-maxtime").id) == nullptr);  // pa's: not looked at
  const auto* c = reported(o, named(jobs, "c-both").id);
  REQUIRE(c != nullptr);
  CHECK(c->kind == gs::verdict::defer);  // pb's two nodes go to b-pb, pa is not scheduled
  CHECK_THROWS_AS((void)recorded_cycle(parts, "otehr"), gs::invalid_value_error);
}

TEST_CASE("model: a job without a time limit expects the partition's DefaultTime, else MaxTime") {
  auto jobs = sl::parse_squeue(read_slurm_data("squeue-partitions.json"));
  auto& a = *std::find_if(jobs.begin(), jobs.end(), [](auto& j) { return j.name == "a-pa"; });
  a.time_limit_minutes.reset();
  const auto nodes = sl::parse_sinfo(read_slurm_data("sinfo-partitions.json"));
  auto pa = sl::parse_partitions(read_slurm_data("scontrol-partitions.txt"))[1];
  const auto expected = [&]() {
    const auto m = sl::build_model(nodes, jobs, {.partition = "pa", .limits = &pa});
    for (const auto& p : m.pending) {
      if (static_cast<std::int64_t>(p.id.value()) == a.id) return p.expected_duration;
    }
    FAIL("a-pa is not pending");
    return std::optional<gs::sim_duration>{};
  };
  CHECK(expected() == gs::seconds(30 * 60));
  pa.default_time_minutes = 7;
  CHECK(expected() == gs::seconds(7 * 60));
}

}  // namespace slurm_partitions_test
