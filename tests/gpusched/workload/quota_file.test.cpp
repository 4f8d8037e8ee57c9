// SPDX-License-Identifier: Apache-2.0
// read_quota_file: the quota tree and the tenant tree of one file, and every error naming the
// source, the line and the field.
#include <doctest/doctest.h>

#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <gpusched/workload/quota_file.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace workload_quota_file_test {

namespace gs = gpusched;

namespace {
gs::run_trees read(const std::string& text, const gs::tenant_resolver& resolve = {}) {
  std::istringstream in(text);
  return gs::read_quota_file(in, "q.txt", gs::basic_catalog(), resolve);
}

/// The message of the parse_error `text` raises (empty when it raises none).
std::string error_of(const std::string& text, const gs::tenant_resolver& resolve = {}) {
  try {
    (void)read(text, resolve);
  } catch (const gs::parse_error& e) {
    std::string what = e.what();
    const std::string id = "[gpusched.parse] ";  // the error id, before the message
    if (what.starts_with(id)) what = what.substr(id.size());
    return std::to_string(e.line()) + " " + e.field() + ": " + what;
  }
  return "";
}
}  // namespace

TEST_SUITE("workload/quota_file") {
  TEST_CASE("a file gives the quota tree and the same hierarchy as a tenant tree") {
    const auto cat = gs::basic_catalog();
    const auto t = read(
        "# a comment line\n"
        "\n"
        "queue  b tenant=2 cohort=all nominal.gpu=8 lending-limit.gpu=4   # after a word\n"
        "cohort all weight=3\n"
        "queue  a tenant=1 cohort=all nominal.gpus:H100-SXM5-80GB=2 nominal.cpu=16 "
        "nominal.memory-gib=2 borrowing-limit.gpu-milli=500 weight=2.5\n");
    const auto& q = t.quotas;
    REQUIRE(q.nodes().size() == 3);
    const auto a = q.queue_of(gs::tenant_id{1});
    const auto b = q.queue_of(gs::tenant_id{2});
    REQUIRE(a >= 0);
    REQUIRE(b >= 0);
    CHECK(q.at(b).parent == q.find("all"));  // named before its definition
    CHECK(q.at(a).parent == q.find("all"));
    const auto milli = gs::quota_resource::gpu_milli().index();
    CHECK(q.nominal(b, milli) == 8000);
    CHECK(q.at(b).per_dim[milli].lending_limit == 4000);
    CHECK(q.nominal(a, gs::quota_resource::gpus(cat.id("H100-SXM5-80GB")).index()) == 2);
    CHECK(q.nominal(a, gs::quota_resource::cpu().index()) == 16000);
    CHECK(q.nominal(a, gs::quota_resource::memory().index()) == 2048);
    CHECK(q.at(a).per_dim[milli].borrowing_limit == 500);
    // the tenant tree: queues are their tenants, under the cohort's synthesised account
    const auto& tt = t.tenants;
    REQUIRE(tt.size() == 3);
    const auto pa = tt.find(gs::tenant_id{1});
    const auto pb = tt.find(gs::tenant_id{2});
    REQUIRE(pa);
    REQUIRE(pb);
    CHECK(tt[*pa].weight == 2.5);
    CHECK(tt[*pb].weight == 1.0);
    CHECK(tt.parent(*pa) == tt.parent(*pb));
    REQUIRE(tt.parent(*pa) != gs::tenant_tree::npos);
    const auto& all = tt[tt.parent(*pa)];
    CHECK(all.name == "all");
    CHECK(all.weight == 3.0);
    CHECK(all.id == gs::tenant_id{gs::tenant_id::invalid().value() - 1});
    CHECK(tt.is_leaf(*pa));
  }

  TEST_CASE("tenant names go through the caller's resolver") {
    const auto resolve = [](std::string_view n) -> std::optional<gs::tenant_id> {
      if (n == "vc-a") return gs::tenant_id{7};
      return std::nullopt;
    };
    const auto t = read("queue a tenant=vc-a nominal.gpu=1\n", resolve);
    CHECK(t.quotas.queue_of(gs::tenant_id{7}) == 0);
    CHECK(error_of("queue a tenant=vc-b\n", resolve) ==
          "1 tenant: q.txt:1: field 'tenant': 'vc-b' is not a tenant of the run");
    // without a resolver, ids are decimal numbers
    CHECK(error_of("queue a tenant=vc-a\n") ==
          "1 tenant: q.txt:1: field 'tenant': 'vc-a' is not a tenant id (a decimal number)");
  }

  TEST_CASE("every bad line is named by its line and field") {
    CHECK(error_of("\nnode x\n") ==
          "2 kind: q.txt:2: field 'kind': 'node' is not a node kind (cohort or queue)");
    CHECK(error_of("cohort\n") ==
          "1 name: q.txt:1: field 'name': a cohort needs a name after its kind");
    CHECK(error_of("queue a cohort=c\ncohort c\n") ==
          "1 tenant: q.txt:1: field 'tenant': a queue needs tenant=TENANT");
    CHECK(error_of("queue a tenant=1 nominal.gpu=1 nominal.gpu=2\n") ==
          "1 nominal.gpu: q.txt:1: field 'nominal.gpu': given twice on the line");
    CHECK(error_of("queue a tenant=1 nominal.gpu=-1\n").starts_with("1 nominal.gpu: "));
    CHECK(error_of("queue a tenant=1 nominal.gpu=1.5\n") ==
          "1 nominal.gpu: q.txt:1: field 'nominal.gpu': '1.5' is not a whole number");
    CHECK(error_of("queue a tenant=1 nominal.tpu=1\n")
              .starts_with("1 nominal.tpu: q.txt:1: field 'nominal.tpu': unknown resource 'tpu'"));
    CHECK(
        error_of("queue a tenant=1 nominal.gpus:B200=1\n")
            .starts_with(
                "1 nominal.gpus:B200: q.txt:1: field 'nominal.gpus:B200': unknown GPU model 'B200' "
                "(known: "));
    CHECK(error_of("queue a tenant=1 quota=1\n")
              .starts_with("1 quota: q.txt:1: field 'quota': unknown key"));
    CHECK(error_of("queue a tenant=1 weight=0\n") ==
          "1 weight: q.txt:1: field 'weight': '0' is not above 0");
    CHECK(error_of("queue a tenant=1 oops\n") ==
          "1 key: q.txt:1: field 'key': 'oops' is not key=value");
    CHECK(error_of("cohort c\nqueue a tenant=1 cohort=c\ncohort c\n") ==
          "3 name: q.txt:3: field 'name': 'c' is defined twice (first on line 1)");
    CHECK(error_of("cohort c\nqueue a tenant=1 cohort=d\n") ==
          "2 cohort: q.txt:2: field 'cohort': no line defines cohort 'd'");
    CHECK(error_of("queue a tenant=1\nqueue b tenant=2 cohort=a\n") ==
          "2 cohort: q.txt:2: field 'cohort': 'a' is a queue (line 1), not a cohort");
    // the tree's own rules, at the line of the node
    CHECK(error_of("cohort c\n\nqueue a tenant=1 cohort=c nominal.gpu=1 lending-limit.gpu=2\n")
              .starts_with("3 lending_limit[gpu_milli]: q.txt:3: "));
    CHECK(error_of("cohort x parent=y\ncohort y parent=x\n").starts_with("1 parent: q.txt:1: "));
    CHECK(error_of("queue a tenant=1\nqueue b tenant=1\n").starts_with("2 tenant: q.txt:2: "));
  }
}

}  // namespace workload_quota_file_test
