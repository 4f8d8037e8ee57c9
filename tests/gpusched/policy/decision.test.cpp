// SPDX-License-Identifier: Apache-2.0
// policy/decision.hpp: verdicts, reasons and their English renderings.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <gpusched/policy/decision.hpp>

#include "law_fixtures.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_decision_test {

namespace gs = gpusched;
namespace gt = gpusched::testing;

namespace {
gs::reason why(gs::reason_code c, gs::resource_kind r = gs::resource_kind::none,
               std::int64_t needed = 0, std::int64_t available = 0, std::int32_t group = -1) {
  gs::reason x;
  x.code = c;
  x.resource = r;
  x.needed = needed;
  x.available = available;
  x.group = group;
  return x;
}
gs::cluster two_nodes() {
  const std::vector<gs::node_spec> nodes = {gt::node_of(1, "H100-SXM5-80GB", 8),
                                            gt::node_of(2, "H100-SXM5-80GB", 8)};
  return gs::cluster(gs::basic_catalog(), nodes);
}
}  // namespace

TEST_SUITE("policy/decision") {
  TEST_CASE("each verdict and reason code has a stable name") {
    CHECK(gs::to_string(gs::verdict::admit) == "admit");
    CHECK(gs::to_string(gs::verdict::defer) == "defer");
    CHECK(gs::to_string(gs::verdict::reject) == "reject");
    CHECK(gs::to_string(gs::victim_action::requeue) == "requeue from checkpoint");
    CHECK(gs::to_string(gs::victim_action::signal_then_wait) == "signal then wait");
  }

  TEST_CASE("amounts are singular for one GPU, MIG slot or replica") {
    CHECK(gs::amount_text(1, gs::resource_kind::gpu) == "1 GPU");
    CHECK(gs::amount_text(8, gs::resource_kind::gpu) == "8 GPUs");
    CHECK(gs::amount_text(1, gs::resource_kind::mig_slot).find("slots") == std::string::npos);
    CHECK(gs::seconds_text(gs::at(gs::sim_duration{12500})) == "12.5s");
    CHECK(gs::seconds_text(gs::at(gs::seconds(3))) == "3s");
  }

  TEST_CASE("every reason code renders to its own sentence, naming the group when the job is given") {
    const auto job = gt::job_of(
        7, {gt::group_of("worker", gt::request_of(gs::gpu_demand::whole(gs::gpu_count{4})), 2)});
    CHECK(gs::describe(why(gs::reason_code::placed)) == "placed on free resources");
    CHECK(gs::describe(why(gs::reason_code::insufficient, gs::resource_kind::gpu, 16, 8)) ==
          "needs 16 GPUs in all, only 8 free in the cluster");
    const auto nofit = gs::describe(why(gs::reason_code::no_fit, gs::resource_kind::gpu, 4, 2, 0), &job);
    CHECK(nofit == "group 'worker': no node can host a task needing 4 GPUs (the most free on one "
                   "node: 2)");
    CHECK(gs::describe(why(gs::reason_code::no_fit, gs::resource_kind::gpu, 4, 2, 0)).rfind(
              "group #0: ", 0) == 0);
    CHECK(gs::describe(why(gs::reason_code::unschedulable, gs::resource_kind::gpu, 32, 16)) ==
          "needs 32 GPUs in all, more than the whole cluster has (16)");
    auto head = why(gs::reason_code::blocked_by_head);
    head.related = gs::job_id{3};
    CHECK(gs::describe(head).find("blocked behind job 3") == 0);
    auto backoff = why(gs::reason_code::backoff, gs::resource_kind::none, 4);
    backoff.until = gs::at(gs::seconds(90));
    CHECK(gs::describe(backoff) == "backing off after 4 failed attempts, until t=90s");
    CHECK(gs::describe(why(gs::reason_code::no_victims)) ==
          "no set of preemptible lower-priority jobs frees enough room");
    CHECK(gs::describe(why(gs::reason_code::over_quota, gs::resource_kind::cpu, 4000, 1000))
              .rfind("over quota: needs 4000 ", 0) == 0);
    std::vector<std::string> all;
    for (int c = 0; c <= static_cast<int>(gs::reason_code::topology); ++c)
      all.push_back(gs::describe(why(static_cast<gs::reason_code>(c), gs::resource_kind::gpu, 2, 1)));
    for (std::size_t i = 0; i < all.size(); ++i) {
      CHECK(all[i] != "?");
      for (std::size_t k = 0; k < i; ++k) CHECK(all[i] != all[k]);
    }
  }

  TEST_CASE("describe(decision) renders admit with its placement and victims, defer with its reason") {
    const auto c = two_nodes();
    gs::decision d;
    d.job = gs::job_id{7};
    d.kind = gs::verdict::admit;
    gs::task_allocation a;
    a.node = gs::node_index{1};
    for (unsigned i = 8; i < 12; ++i)
      a.gpus.push_back({gs::gpu_index{i}, gs::whole_gpu_milli, 0, false, false});
    d.placement.push_back(a);
    d.victims.push_back(gs::job_id{3});
    CHECK(gs::describe(d, c) == "admit job 7 on n2[gpu0-3] after preempting job 3");
    gs::decision w;
    w.job = gs::job_id{8};
    w.kind = gs::verdict::defer;
    w.why = why(gs::reason_code::insufficient, gs::resource_kind::gpu, 32, 16);
    CHECK(gs::describe(w, c) == "defer job 8: needs 32 GPUs in all, only 16 free in the cluster");
    w.kind = gs::verdict::reject;
    CHECK(gs::describe(w, c).rfind("reject job 8: ", 0) == 0);
  }
}

}  // namespace policy_decision_test
