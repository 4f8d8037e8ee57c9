// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <string>

#include <gpusched/workload/job.hpp>
#include <gpusched/workload/queue.hpp>

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
gs::job_spec job(unsigned id, int count = 2, int min_count = -1) {
  gs::job_spec j;
  j.id = gs::job_id{id};
  j.name = "train";
  j.groups.push_back(
      {"worker", {gs::gpu_demand::whole(8_gpus), 8_cores, 64_gib, {}}, count, min_count});
  return j;
}
}  // namespace

TEST_SUITE("workload/job") {
  const auto cat = gs::basic_catalog();
  TEST_CASE("a job reports its size") {
    auto j = job(1, 4);
    j.groups.push_back({"launcher", {gs::gpu_demand::none(), 1_cores, 1_gib, {}}, 1, -1});
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
    zero_group.groups.push_back({"idle", {gs::gpu_demand::none(), 1_cores, 1_gib, {}}, 0, -1});
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
