// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>  // std::move

#include <gpusched/workload/job.hpp>
#include <gpusched/workload/queue.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace workload_job_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {
std::string message_of(auto&& f) {
  try {
    f();
  } catch (const gs::error& e) {
    return e.what();
  }
  return "";
}
gs::job_spec job(unsigned id, int count = 2, std::optional<std::int32_t> min_count = std::nullopt) {
  gs::job_spec j;
  j.id = gs::job_id{id};
  j.name = "train";
  j.groups.push_back(
      {.name = "worker",
       .request = {.gpu = gs::gpu_demand::whole(8_gpus), .cpu = 8_cores, .memory = 64_gib},
       .count = count,
       .min_count = min_count});
  return j;
}
}  // namespace

TEST_SUITE("workload/job") {
  const auto cat = gs::basic_catalog();
  TEST_CASE("a job reports its size") {
    auto j = job(1, 4);
    j.groups.push_back({.name = "launcher",
                        .request = {.gpu = gs::gpu_demand::none(), .cpu = 1_cores, .memory = 1_gib},
                        .count = 1});
    CHECK(j.task_count() == 5);
    CHECK(j.whole_gpus() == 32_gpus);
    CHECK(j.milli_gpus() == 32000);
    CHECK_FALSE(j.groups[0].elastic());
    CHECK(job(1, 4, 2).groups[0].elastic());
    CHECK(job(1, 4, 2).groups[0].minimum() == 2);
  }
  TEST_CASE("invalid jobs are rejected naming job, group, field and value") {
    CHECK_NOTHROW(gs::validate(job(1), cat));
    auto empty = job(1);
    empty.groups.clear();
    CHECK(message_of([&] {
            gs::validate(empty, cat);
          }).find("job 1 'train': field 'groups' = 0 tasks") != std::string::npos);
    auto zero_group = job(2);
    zero_group.groups.push_back(
        {.name = "idle",
         .request = {.gpu = gs::gpu_demand::none(), .cpu = 1_cores, .memory = 1_gib},
         .count = 0});
    CHECK(message_of([&] {
            gs::validate(zero_group, cat);
          }).find("job 2 'train' group 'idle': field 'count' = 0") != std::string::npos);
    CHECK(message_of([&] {
            gs::validate(job(3, 2, 4), cat);
          }).find("field 'min_count' = 4: greater than count 2") != std::string::npos);
    CHECK(message_of([&] { gs::validate(job(3, 2, 0), cat); }).find("field 'min_count' = 0") !=
          std::string::npos);
    auto neg = job(4);
    neg.expected_duration = gs::seconds(-1);
    CHECK(message_of([&] { gs::validate(neg, cat); }).find("field 'expected_duration' = -1000ms") !=
          std::string::npos);
    auto ckpt = job(5);
    ckpt.checkpoint.restore_cost = gs::seconds(-2);
    CHECK(message_of([&] { gs::validate(ckpt, cat); }).find("field 'checkpoint'") !=
          std::string::npos);
    auto share = job(6);
    share.groups[0].request.gpu = gs::gpu_demand::fraction(gs::milli_gpu{2000});
    CHECK(message_of([&] {
            gs::validate(share, cat);
          }).find("group 'worker': field 'gpu.share' = 2000") != std::string::npos);
    auto noid = job(1);
    noid.id = gs::job_id{};
    CHECK(message_of([&] { gs::validate(noid, cat); }).find("field 'id'") != std::string::npos);
  }
  TEST_CASE("task_group::elastic names the range, and an absent min_count means count") {
    const gs::task_request r{.gpu = gs::gpu_demand::whole(2_gpus), .cpu = 1_cores, .memory = 1_gib};
    const auto e = gs::task_group::elastic("worker", r, 2, 8);
    CHECK(e.name == "worker");
    CHECK(e.request == r);
    CHECK(e.count == 8);
    CHECK(e.min_count == 2);
    CHECK(e.minimum() == 2);
    CHECK(e.elastic());
    const gs::task_group rigid{.name = "worker", .request = r, .count = 4};
    CHECK_FALSE(rigid.min_count.has_value());
    CHECK(rigid.minimum() == 4);
    CHECK_FALSE(rigid.elastic());
    CHECK_FALSE(gs::task_group::elastic("worker", r, 4, 4).elastic());  // min == max: rigid
    const auto with = [&](gs::task_group g) {
      return gs::job_spec{.id = gs::job_id{9}, .name = "e", .groups = {std::move(g)}};
    };
    CHECK_NOTHROW(gs::validate(with(e), cat));
    CHECK_NOTHROW(gs::validate(with(rigid), cat));
    CHECK(message_of([&] {
            gs::validate(with(gs::task_group::elastic("worker", r, 0, 4)), cat);
          }).find("field 'min_count' = 0: must be positive") != std::string::npos);
    CHECK(message_of([&] {
            gs::validate(with(gs::task_group::elastic("worker", r, -1, 4)), cat);
          }).find("field 'min_count' = -1: must be positive") != std::string::npos);
    CHECK(message_of([&] {
            gs::validate(with(gs::task_group::elastic("worker", r, 5, 4)), cat);
          }).find("field 'min_count' = 5: greater than count 4") != std::string::npos);
  }
}

TEST_SUITE("workload/queue") {
  const auto cat = gs::basic_catalog();
  TEST_CASE("the queue validates, refuses duplicate ids, and stays unchanged on error") {
    gs::job_queue q;
    q.push(job(1), cat);
    q.push(job(2), cat);
    CHECK_THROWS_AS(q.push(job(1), cat), gs::invalid_value_error);
    CHECK_THROWS_AS(q.push(job(3, 0), cat), gs::invalid_value_error);
    CHECK(q.size() == 2);
    CHECK_FALSE(q.contains(gs::job_id{3}));
    CHECK(q.erase_if([](const gs::job_spec& j) { return j.id == gs::job_id{1}; }) == 1);
    CHECK(q.jobs().front().id == gs::job_id{2});
    q.push(job(1), cat);  // the id is free again
    CHECK(q.size() == 2);
  }
}

}  // namespace workload_job_test
