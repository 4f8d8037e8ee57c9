// SPDX-License-Identifier: Apache-2.0
// Requests that can never be admitted are rejected with the true reason (issue 36): a gang over
// its queue's nominal quota plus borrowing limit (`exceeds_quota`), and MIG gangs that no MIG
// GPU of the cluster could ever hold (`unschedulable` on MIG instances); MIG gangs that only
// wait are deferred with the instances actually free; placements print MIG profiles.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <gpusched/pipeline/pipeline.hpp>
#include <gpusched/policy/admission/quota.hpp>
#include <gpusched/resource/mig_catalog.hpp>
#include <gpusched/workload/queue.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_never_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {
gs::job_spec gpu_gang(unsigned id, int tasks, int gpus, unsigned tenant) {
  gs::job_spec j;
  j.id = gs::job_id{id};
  j.name = "j" + std::to_string(id);
  j.tenant = gs::tenant_id{tenant};
  j.groups.push_back({.name = "worker",
                      .request = {.gpu = gs::gpu_demand::whole(gs::gpu_count{gpus}),
                                  .cpu = 1_cores,
                                  .memory = 1_gib},
                      .count = tasks});
  return j;
}
gs::job_spec mig_gang(unsigned id, int tasks, gs::gpu_demand d) {
  gs::job_spec j;
  j.id = gs::job_id{id};
  j.name = "m" + std::to_string(id);
  j.groups.push_back(
      {.name = "server", .request = {.gpu = d, .cpu = 1_cores, .memory = 1_gib}, .count = tasks});
  return j;
}
const gs::decision& of(const gs::cycle_result& r, unsigned id) {
  for (const auto& d : r.decisions) {
    if (d.job == gs::job_id{id}) return d;
  }
  FAIL("no decision for job " << id);
  return r.decisions.front();
}
/// `nodes` nodes of two A100-SXM4-40GB GPUs in MIG mode.
std::vector<gs::node_spec> mig_nodes(int nodes) {
  std::vector<gs::node_spec> out;
  for (int i = 0; i < nodes; ++i) {
    out.push_back({.id = gs::node_id{static_cast<gs::node_id::rep>(i + 1)},
                   .name = "mig" + std::to_string(i),
                   .gpu_model = "A100-SXM4-40GB",
                   .gpus = 2_gpus,
                   .mig_enabled = true,
                   .cpu = 64_cores,
                   .memory = 512_gib});
  }
  return out;
}
/// One cycle of `p` over `pending`.
gs::cycle_result run(auto& p, gs::ledger& book, std::vector<gs::job_spec> pending,
                     gs::random_engine& g) {
  return p.schedule(book, pending, {}, g);
}
std::string error_of(auto&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}
bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}
}  // namespace

TEST_SUITE("policy/never/quota") {
  TEST_CASE("a gang over its queue's nominal quota, with no cohort to borrow from, is rejected") {
    const auto cat = gs::basic_catalog();
    const auto d = gs::quota_resource::gpus(cat.id("H100-SXM5-80GB"));
    gs::quota_tree::builder b(cat);
    b.queue("team-a", gs::tenant_id{1}).nominal(d, 8);
    auto p = gs::make_pipeline(gs::quota_admission<>(b.build()));
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(4, 8)));
    gs::random_engine g(1);
    // 16 GPUs in a queue that can never have more than 8; 8 fit
    const auto res = run(p, book, {gpu_gang(1, 2, 8, 1), gpu_gang(2, 1, 8, 1)}, g);
    const auto& never = of(res, 1);
    CHECK(never.kind == gs::verdict::reject);
    CHECK(never.why.code == gs::reason_code::exceeds_quota);
    CHECK(never.why.resource == gs::resource_kind::gpu);
    CHECK(never.why.needed == 16);
    CHECK(never.why.available == 8);
    CHECK(never.why.model == cat.id("H100-SXM5-80GB"));
    REQUIRE(never.why.scope.has_value());
    CHECK(p.admission().quotas().at(*never.why.scope).name == "team-a");
    CHECK(gs::describe_quota(never.why, p.admission().quotas(), cat) ==
          "never admissible by quota: needs 16 GPUs of H100-SXM5-80GB, more than queue 'team-a' "
          "can ever be given (at most 8: nominal quota 8, no borrowing limit, no cohort)");
    CHECK(gs::describe(never.why) ==
          "never admissible by quota: needs 16 GPUs of model #7, more than its queue can ever be "
          "given (at most 8: nominal quota plus borrowing limit, quota node #0)");
    CHECK(gs::to_string(never.why.code) == "exceeds_quota");
    CHECK(of(res, 2).kind == gs::verdict::admit);
  }

  TEST_CASE("the limit is nominal plus borrowing limit, and within it a gang waits (defer)") {
    const auto cat = gs::basic_catalog();
    const auto d = gs::quota_resource::gpus(cat.id("H100-SXM5-80GB"));
    gs::quota_tree::builder b(cat);
    b.cohort("lab");
    b.queue("team-a", gs::tenant_id{1}, "lab").nominal(d, 8).borrowing_limit(d, 4);
    b.queue("team-b", gs::tenant_id{2}, "lab").nominal(d, 16);
    auto p = gs::make_pipeline(gs::quota_admission<>(b.build()));
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(4, 8)));
    gs::random_engine g(1);
    // team-b takes 16 first; team-a's 12 (= 8 + 4) could run some day: deferred over quota;
    // team-a's 16 never: rejected naming the borrowing limit
    const auto res =
        run(p, book, {gpu_gang(1, 2, 8, 2), gpu_gang(2, 3, 4, 1), gpu_gang(3, 2, 8, 1)}, g);
    CHECK(of(res, 1).kind == gs::verdict::admit);
    CHECK(of(res, 2).kind == gs::verdict::defer);
    CHECK(of(res, 2).why.code == gs::reason_code::over_quota);
    CHECK(of(res, 3).kind == gs::verdict::reject);
    CHECK(of(res, 3).why.code == gs::reason_code::exceeds_quota);
    CHECK(of(res, 3).why.available == 12);
    CHECK(gs::describe_quota(of(res, 3).why, p.admission().quotas(), cat) ==
          "never admissible by quota: needs 16 GPUs of H100-SXM5-80GB, more than queue 'team-a' "
          "can ever be given (at most 12: nominal quota 8, borrowing limit 4)");
  }

  TEST_CASE("without a borrowing limit, the cohort's total binds and is named") {
    const auto cat = gs::basic_catalog();
    const auto d = gs::quota_resource::gpus(cat.id("H100-SXM5-80GB"));
    gs::quota_tree::builder b(cat);
    b.cohort("lab");
    b.queue("team-a", gs::tenant_id{1}, "lab").nominal(d, 8);
    b.queue("team-b", gs::tenant_id{2}, "lab").nominal(d, 4);
    auto p = gs::make_pipeline(gs::quota_admission<>(b.build()));
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(4, 8)));
    gs::random_engine g(1);
    const auto res = run(p, book, {gpu_gang(1, 2, 8, 1), gpu_gang(2, 3, 4, 1)}, g);
    CHECK(of(res, 1).kind == gs::verdict::reject);
    CHECK(of(res, 1).why.available == 12);
    CHECK(gs::describe_quota(of(res, 1).why, p.admission().quotas(), cat) ==
          "never admissible by quota: needs 16 GPUs of H100-SXM5-80GB, more than queue 'team-a' "
          "can ever be given (at most 12: nominal quota 8, no borrowing limit); cohort 'lab' "
          "holds 12 in all");
    CHECK(of(res, 2).kind == gs::verdict::admit);  // 12 borrows 4 of team-b's idle quota
  }

  TEST_CASE("an elastic gang is judged at its minimum size") {
    const auto cat = gs::basic_catalog();
    const auto d = gs::quota_resource::gpus(cat.id("H100-SXM5-80GB"));
    gs::quota_tree::builder b(cat);
    b.queue("team-a", gs::tenant_id{1}).nominal(d, 8);
    auto p = gs::make_pipeline(gs::quota_admission<>(b.build()));
    gs::ledger book(gs::cluster(cat, gs::testing::uniform_nodes(4, 8)));
    gs::random_engine g(1);
    auto elastic = gpu_gang(1, 4, 4, 1);  // 16 GPUs at full size, 8 at its minimum
    elastic.groups[0].min_count = 2;
    auto rigid = gpu_gang(2, 3, 4, 1);  // 12 GPUs, always
    const auto res = run(p, book, {elastic, rigid}, g);
    CHECK(of(res, 1).kind == gs::verdict::admit);
    CHECK(of(res, 2).kind == gs::verdict::reject);
    CHECK(of(res, 2).why.code == gs::reason_code::exceeds_quota);
    CHECK(of(res, 2).why.needed == 12);
  }
}

TEST_SUITE("policy/never/mig") {
  TEST_CASE("five 3g.20gb tasks on a node with room for four are rejected, four are placed") {
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, mig_nodes(1)));  // 2 GPUs x 2 instances of 3g.20gb
    auto p = gs::make_pipeline();
    gs::random_engine g(1);
    const auto five = mig_gang(1, 5, gs::gpu_demand::mig(3, 4));
    const auto res = run(p, book, {five}, g);
    const auto& d = of(res, 1);
    CHECK(d.kind == gs::verdict::reject);
    CHECK(d.why.code == gs::reason_code::unschedulable);
    CHECK(d.why.resource == gs::resource_kind::mig_instance);
    CHECK(d.why.needed == 5);
    CHECK(d.why.available == 4);
    CHECK(gs::describe(d, book.state(), &five) ==
          "reject job 1 'm1': group 'server': needs 5 MIG instances of 3 compute and 4 memory "
          "slices in all, more than the cluster's MIG GPUs it may use can hold even when empty "
          "(4)");

    const auto four = mig_gang(2, 4, gs::gpu_demand::mig(3, 4));
    const auto ok = run(p, book, {four}, g);
    CHECK(of(ok, 2).kind == gs::verdict::admit);
    CHECK(gs::describe(of(ok, 2), book.state(), &four) ==
          "admit job 2 'm2' on mig0[gpu0:3g.20gb@0], mig0[gpu0:3g.20gb@4], mig0[gpu1:3g.20gb@0], "
          "mig0[gpu1:3g.20gb@4]");
  }

  TEST_CASE("eight 1g.5gb tasks do not fit one A100 (seven do): instances, not slices, count") {
    const auto cat = gs::basic_catalog();
    auto one_gpu = mig_nodes(1);
    one_gpu[0].gpus = 1_gpus;
    gs::ledger book(gs::cluster(cat, one_gpu));
    auto p = gs::make_pipeline();
    gs::random_engine g(1);
    const auto res = run(
        p, book,
        {mig_gang(1, 8, gs::gpu_demand::mig(1, 1)), mig_gang(2, 7, gs::gpu_demand::mig(1, 1))}, g);
    CHECK(of(res, 1).kind == gs::verdict::reject);
    CHECK(of(res, 1).why.available == 7);
    CHECK(of(res, 2).kind == gs::verdict::admit);
  }

  TEST_CASE(
      "a MIG shape no GPU offers is rejected by the pipeline, not deferred as 'most free 0'") {
    // validation (below) refuses it on submission; a pipeline given it anyway says why
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, mig_nodes(2)));
    auto p = gs::make_pipeline();
    gs::random_engine g(1);
    const auto bad = mig_gang(1, 1, gs::gpu_demand::mig(5, 4));
    const auto res = run(p, book, {bad}, g);
    CHECK(of(res, 1).kind == gs::verdict::reject);
    CHECK(of(res, 1).why.resource == gs::resource_kind::mig_instance);
    CHECK(of(res, 1).why.available == 0);
    CHECK_FALSE(has(gs::describe(of(res, 1), book.state(), &bad), "most free on one node"));
  }

  TEST_CASE("no GPU in MIG mode: a MIG gang is rejected, the cluster holds no instance") {
    const auto cat = gs::basic_catalog();
    auto nodes = mig_nodes(1);
    nodes[0].mig_enabled = false;
    gs::ledger book(gs::cluster(cat, nodes));
    auto p = gs::make_pipeline();
    gs::random_engine g(1);
    const auto res = run(p, book, {mig_gang(1, 1, gs::gpu_demand::mig(3, 4))}, g);
    CHECK(of(res, 1).kind == gs::verdict::reject);
    CHECK(of(res, 1).why.resource == gs::resource_kind::mig_instance);
    CHECK(of(res, 1).why.available == 0);
  }

  TEST_CASE("a MIG gang that only waits is deferred with the instances free in the cluster") {
    const auto cat = gs::basic_catalog();
    gs::ledger book(gs::cluster(cat, mig_nodes(1)));
    auto p = gs::make_pipeline();
    gs::random_engine g(1);
    // one 7g.40gb takes a whole GPU; three 3g.20gb then find room for two
    const auto r1 = run(p, book, {mig_gang(1, 1, gs::gpu_demand::mig(7, 8))}, g);
    REQUIRE(of(r1, 1).kind == gs::verdict::admit);
    CHECK(gs::describe_placement(of(r1, 1).placement, book.state()) == "mig0[gpu0:7g.40gb@0]");
    const auto three = mig_gang(2, 3, gs::gpu_demand::mig(3, 4));
    const auto r2 = run(p, book, {three}, g);
    const auto& d = of(r2, 2);
    CHECK(d.kind == gs::verdict::defer);
    CHECK(d.why.code == gs::reason_code::insufficient);
    CHECK(d.why.resource == gs::resource_kind::mig_instance);
    CHECK(d.why.needed == 3);
    CHECK(d.why.available == 2);
    CHECK(gs::describe(d, book.state(), &three) ==
          "defer job 2 'm2': group 'server': needs 3 MIG instances of 3 compute and 4 memory "
          "slices in all, only 2 free in the cluster");
  }

  TEST_CASE("a MIG task whose CPU fits no node with room is deferred naming 'together'") {
    const auto cat = gs::basic_catalog();
    auto nodes = mig_nodes(2);
    nodes[1].cpu = 2_cores;  // mig1: room for instances, no CPU for the task below
    gs::ledger book(gs::cluster(cat, nodes));
    auto p = gs::make_pipeline();
    gs::random_engine g(1);
    // fill mig0's GPUs (first fit), so only mig1 has MIG room
    const auto r1 = run(p, book, {mig_gang(1, 2, gs::gpu_demand::mig(7, 8))}, g);
    REQUIRE(of(r1, 1).kind == gs::verdict::admit);
    auto big_cpu = mig_gang(2, 1, gs::gpu_demand::mig(1, 1));
    big_cpu.groups[0].request.cpu = 8_cores;
    const auto r2 = run(p, book, {big_cpu}, g);
    const auto& d = of(r2, 2);
    CHECK(d.kind == gs::verdict::defer);
    CHECK(d.why.code == gs::reason_code::no_fit);
    CHECK(d.why.resource == gs::resource_kind::mig_instance);
    CHECK(d.why.available == 14);  // 7 per GPU of mig1
    CHECK(has(gs::describe(d, book.state(), &big_cpu), "together with the rest of its request"));
  }

  TEST_CASE("placements name 1g.10gb and 2g.10gb apart although both take two slices") {
    const auto cat = gs::basic_catalog();
    auto one_gpu = mig_nodes(1);
    one_gpu[0].gpus = 1_gpus;
    gs::ledger book(gs::cluster(cat, one_gpu));
    auto p = gs::make_pipeline();
    gs::random_engine g(1);
    const auto res = run(
        p, book,
        {mig_gang(1, 1, gs::gpu_demand::mig(1, 2)), mig_gang(2, 1, gs::gpu_demand::mig(2, 2))}, g);
    REQUIRE(of(res, 1).kind == gs::verdict::admit);
    REQUIRE(of(res, 2).kind == gs::verdict::admit);
    CHECK(gs::describe_placement(of(res, 1).placement, book.state()) == "mig0[gpu0:1g.10gb@0]");
    CHECK(gs::describe_placement(of(res, 2).placement, book.state()) == "mig0[gpu0:2g.10gb@2]");
    // a grant that does not say its compute slices: named when one profile matches, else slices
    auto a = of(res, 2).placement;
    a[0].gpus[0].mig_compute = 0;
    CHECK(gs::describe_placement(a, book.state()) == "mig0[gpu0:mig2-3]");
    a[0].gpus[0].mig_slots = 0b1111'0000;  // 4 slices at 4: only 3g.20gb starts there
    CHECK(gs::describe_placement(a, book.state()) == "mig0[gpu0:3g.20gb@4]");
  }
}

TEST_SUITE("policy/never/mig validation") {
  TEST_CASE("a MIG shape that no model offers is refused on submission, naming the shapes") {
    const auto cat = gs::basic_catalog();
    gs::job_queue q;
    const auto e = error_of([&] { q.push(mig_gang(1, 1, gs::gpu_demand::mig(5, 4)), cat); });
    CHECK(has(e, "gpu.mig"));
    CHECK(has(e, "5c/4m"));
    CHECK(has(e, "no GPU model of the catalog has a MIG profile of 5 compute and 4 memory slices"));
    CHECK(has(e, "1c/1m, 1c/2m, 2c/2m, 3c/4m, 4c/4m, 7c/8m"));
    CHECK(has(e, "MIG models: A100-SXM4-40GB"));
    CHECK(q.size() == 0);
  }

  TEST_CASE("a MIG shape the allowed models lack names the models that have it") {
    const auto cat = gs::mig_catalog();
    auto j = mig_gang(1, 1, gs::gpu_demand::mig(2, 2));
    j.groups[0].request.allowed_models.insert(cat.id("A30-24GB"));  // A30 has 2g.12gb: fine
    gs::job_queue q;
    q.push(j, cat);
    auto k = mig_gang(2, 1, gs::gpu_demand::mig(3, 4));  // the A30 has no 3g
    k.groups[0].request.allowed_models.insert(cat.id("A30-24GB"));
    const auto e = error_of([&] { q.push(k, cat); });
    CHECK(has(e, "no allowed GPU model has a MIG profile of 3 compute and 4 memory slices"));
    CHECK(has(e, "models with it: A100-SXM4-40GB (3g.20gb), A100-SXM4-80GB (3g.40gb)"));
    CHECK(has(e, "H100-SXM5-80GB (3g.40gb)"));
  }

  TEST_CASE("a catalog without MIG points to mig_catalog()") {
    gs::gpu_catalog cat;
    cat.add({"T4", 16_gib, 40, {}});
    const gs::task_request r{.gpu = gs::gpu_demand::mig(1, 1)};
    const auto e = error_of([&] { gs::validate(r, cat, "job 1 group 'x'"); });
    CHECK(has(e, "job 1 group 'x'"));
    CHECK(has(e, "no GPU model of the catalog has MIG"));
    CHECK(has(e, "mig_catalog()"));
  }

  TEST_CASE("mig_enabled on a model basic_catalog() has without MIG points to mig_catalog()") {
    const std::vector<gs::node_spec> h100 = {{.id = gs::node_id{1},
                                              .name = "h",
                                              .gpu_model = "H100-SXM5-80GB",
                                              .gpus = 8_gpus,
                                              .mig_enabled = true,
                                              .cpu = 64_cores,
                                              .memory = 512_gib}};
    const auto e = error_of([&] { gs::cluster c(gs::basic_catalog(), h100); });
    CHECK(has(e, "mig_enabled"));
    CHECK(has(e, "GPU model 'H100-SXM5-80GB' has no MIG table in this catalog"));
    CHECK(has(e, "gpusched::mig_catalog() has its MIG table"));
    // with mig_catalog() the same node is fine, and a 3g.40gb lands on it
    gs::ledger book(gs::cluster(gs::mig_catalog(), h100));
    auto p = gs::make_pipeline();
    gs::random_engine g(1);
    const auto res =
        run(p, book, {mig_gang(1, 1, gs::gpu_demand::mig_profile("H100-SXM5-80GB", "3g.40gb"))}, g);
    CHECK(gs::describe_placement(of(res, 1).placement, book.state()) == "h[gpu0:3g.40gb@0]");
    // a model no catalog gives MIG says so
    const std::vector<gs::node_spec> t4 = {{.id = gs::node_id{1},
                                            .name = "t",
                                            .gpu_model = "T4",
                                            .gpus = 1_gpus,
                                            .mig_enabled = true,
                                            .cpu = 4_cores,
                                            .memory = 16_gib}};
    CHECK(has(error_of([&] { gs::cluster c(gs::basic_catalog(), t4); }),
              "gpusched::mig_catalog() has none for it either"));
  }
}

}  // namespace policy_never_test
