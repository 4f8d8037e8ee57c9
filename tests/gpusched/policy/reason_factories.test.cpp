// SPDX-License-Identifier: Apache-2.0
// The reason factories: each sets exactly the fields its code uses, and describe() renders
// them as the positional forms it replaced did (the texts are pinned here byte for byte).
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include <gpusched/policy/decision.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_reason_factories_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

gs::job_spec one_group_job() {
  gs::job_spec j;
  j.id = gs::job_id{1};
  j.groups.push_back({.name = "worker",
                      .request = {.gpu = gs::gpu_demand::whole(8_gpus), .cpu = 1_cores},
                      .count = 2});
  return j;
}

}  // namespace

TEST_SUITE("policy/decision") {
  TEST_CASE("a default reason is code none with every optional field empty") {
    const gs::reason r;
    CHECK(r.code == gs::reason_code::none);
    CHECK(r.resource == gs::resource_kind::none);
    CHECK_FALSE(r.group.has_value());
    CHECK_FALSE(r.scope.has_value());
    CHECK_FALSE(r.tasks_placed.has_value());
    CHECK_FALSE(r.until.has_value());
    CHECK_FALSE(r.related.valid());
    CHECK_FALSE(r.model.valid());
    CHECK(gs::describe(r) == "no reason");
  }

  TEST_CASE("placed and placed_by_preemption carry only their code") {
    CHECK(gs::reason::placed() == gs::reason{.code = gs::reason_code::placed});
    CHECK(gs::reason::placed_by_preemption() ==
          gs::reason{.code = gs::reason_code::placed_by_preemption});
    CHECK(gs::describe(gs::reason::placed()) == "placed on free resources");
    CHECK(gs::describe(gs::reason::placed_by_preemption()) ==
          "placed after preempting lower-priority jobs");
  }

  TEST_CASE("insufficient: resource, needed and available, no group") {
    const auto r = gs::reason::insufficient(gs::resource_kind::gpu, 24, 16);
    CHECK(r.code == gs::reason_code::insufficient);
    CHECK(r.resource == gs::resource_kind::gpu);
    CHECK(r.needed == 24);
    CHECK(r.available == 16);
    CHECK_FALSE(r.group.has_value());
    CHECK(gs::describe(r) == "needs 24 GPUs in all, only 16 free in the cluster");
  }

  TEST_CASE("no_fit names the group, and the best attempt when known") {
    const auto job = one_group_job();
    const auto r = gs::reason::no_fit(0, gs::resource_kind::gpu, 8, 4);
    CHECK(r.code == gs::reason_code::no_fit);
    CHECK(r.group == 0);
    CHECK_FALSE(r.tasks_placed.has_value());
    CHECK(gs::describe(r) ==
          "group #0: no node can host a task needing 8 GPUs (the most free on one node: 4)");
    CHECK(gs::describe(r, &job) ==
          "group 'worker': no node can host a task needing 8 GPUs (the most free on one node: 4)");
    const auto best = gs::reason::no_fit(0, gs::resource_kind::gpu, 8, 8, 1);
    CHECK(best.tasks_placed == 1);
    CHECK(gs::describe(best, &job) ==
          "group 'worker': no node has a task's 8 GPUs together with the rest of its request (GPU "
          "model, CPU, memory; the most GPUs free on one node: 8); the best attempt placed 1 task");
    CHECK(gs::describe(gs::reason::no_fit(3, gs::resource_kind::cpu, 4000, 2000, 2)) ==
          "group #3: no node can host a task needing 4000 CPU millicores (the most free on one "
          "node: 2000); the best attempt placed 2 tasks");
  }

  TEST_CASE("unschedulable: the whole gang, or one task of a group") {
    const auto gang = gs::reason::unschedulable(gs::resource_kind::gpu, 64, 32);
    CHECK(gang.code == gs::reason_code::unschedulable);
    CHECK_FALSE(gang.group.has_value());
    CHECK(gs::describe(gang) == "needs 64 GPUs in all, more than the whole cluster has (32)");
    const auto task = gs::reason::unschedulable_task(1, gs::resource_kind::memory, 4096, 2048);
    CHECK(task.code == gs::reason_code::unschedulable);
    CHECK(task.group == 1);
    CHECK(gs::describe(task) ==
          "group #1: a task needs 4096 MiB memory, more than any node has (at most 2048)");
  }

  TEST_CASE("blocked_by and reservation name the other job") {
    const auto b = gs::reason::blocked_by(gs::job_id{7});
    CHECK(b.code == gs::reason_code::blocked_by_head);
    CHECK(b.related == gs::job_id{7});
    CHECK(gs::describe(b) ==
          "blocked behind job 7, which is first in the strict queue and does not fit");
    const auto r = gs::reason::reservation(gs::job_id{3}, gs::at(gs::seconds(12)));
    CHECK(r.code == gs::reason_code::reservation);
    CHECK(r.related == gs::job_id{3});
    CHECK(r.until == gs::at(gs::seconds(12)));
    CHECK(gs::describe(r) == "would delay the reservation of job 3 (starting at t=12s)");
    CHECK(gs::describe(gs::reason::reservation(gs::job_id{3})) ==
          "would delay the reservation of job 3");
  }

  TEST_CASE("over_quota: model and quota node only when given") {
    const auto r = gs::reason::over_quota(gs::resource_kind::gpu, 16, 8, gs::gpu_model_id{2}, 3);
    CHECK(r.code == gs::reason_code::over_quota);
    CHECK(r.model == gs::gpu_model_id{2});
    CHECK(r.scope == 3);
    CHECK(gs::describe(r) == "over quota: needs 16 GPUs of model #2, 8 left (quota node #3)");
    const auto cpu = gs::reason::over_quota(gs::resource_kind::cpu, 4000, 1000);
    CHECK_FALSE(cpu.scope.has_value());
    CHECK_FALSE(cpu.model.valid());
    CHECK(gs::describe(cpu) == "over quota: needs 4000 CPU millicores, 1000 left");
  }

  TEST_CASE("backoff: failed attempts in needed, until a time or a cycle in available") {
    const auto t = gs::reason::backoff(3, gs::at(gs::sim_duration{500}));
    CHECK(t.code == gs::reason_code::backoff);
    CHECK(t.needed == 3);
    CHECK(gs::describe(t) == "backing off after 3 failed attempts, until t=0.5s");
    const auto c = gs::reason::backoff_cycles(2, 9);
    CHECK(c.needed == 2);
    CHECK(c.available == 9);
    CHECK_FALSE(c.until.has_value());
    CHECK(gs::describe(c) == "backing off after 2 failed attempts, until t=?");
    CHECK(gs::reason::backoff(5) == gs::reason{.code = gs::reason_code::backoff, .needed = 5});
  }

  TEST_CASE("no_victims: candidates tried, or the shortfall in one resource") {
    const auto n = gs::reason::no_victims(4);
    CHECK(n.code == gs::reason_code::no_victims);
    CHECK(n.resource == gs::resource_kind::none);
    CHECK(n.available == 4);
    CHECK(gs::describe(n) == "no set of preemptible lower-priority jobs frees enough room");
    CHECK(gs::reason::no_victims() == gs::reason{.code = gs::reason_code::no_victims});
    const auto g = gs::reason::no_victims(gs::resource_kind::gpu, 16, 12);
    CHECK(gs::describe(g) ==
          "no admissible victim set frees enough room: needs 16 GPUs, at most 12 after evicting "
          "every admissible candidate");
  }

  TEST_CASE("topology names the group and the most one domain can take") {
    const auto r = gs::reason::topology(0, gs::resource_kind::gpu, 16, 8);
    CHECK(r.code == gs::reason_code::topology);
    CHECK(r.group == 0);
    CHECK(gs::describe(r) ==
          "group #0: no network domain at the required level can host the gang's 16 GPUs (the "
          "most one such domain can take: 8)");
  }
}

}  // namespace policy_reason_factories_test
