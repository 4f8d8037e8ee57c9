// SPDX-License-Identifier: Apache-2.0
// One set of rules per field in every loader: byte-order marks, CR-only line endings, calendar
// dates, directories, strict numbers, openb gpu_spec and shares, duplicate node names, UTF-8
// names, and the limits that keep cost proportional to the work.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include <gpusched/trace/gavel.hpp>
#include <gpusched/trace/openb.hpp>
#include <gpusched/trace/openb_reader.hpp>
#include <gpusched/trace/philly.hpp>
#include <gpusched/trace/tiresias.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace trace_rules_test {

namespace gs = gpusched;

namespace {
template <class F>
std::string error_of(F&& load) {
  try {
    load();
  } catch (const gs::error& e) {
    return e.what();
  }
  FAIL("no error thrown");
  return {};
}
gs::trace philly(const std::string& text) {
  std::istringstream in(text);
  return gs::load_philly(in, "p.csv");
}
gs::trace tiresias(const std::string& text) {
  std::istringstream in(text);
  return gs::load_tiresias(in, "t.csv");
}
gs::trace openb(const std::string& text) {
  std::istringstream in(text);
  return gs::load_openb(in, "o.csv");
}
std::vector<gs::openb_pod> pods(const std::string& text) {
  std::istringstream in(text);
  return gs::read_openb_pods(in, "pods.csv");
}
std::vector<gs::openb_node> nodes(const std::string& text) {
  std::istringstream in(text);
  return gs::read_openb_nodes(in, "nodes.csv");
}
const std::string philly_h = "timestamp,duration,num_gpus,gpu_time,cluster\n";
const std::string tiresias_h =
    "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n";
const std::string openb_h =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";
const std::string bom = "\xEF\xBB\xBF";
}  // namespace

TEST_SUITE("trace/rules") {
  TEST_CASE("a UTF-8 byte-order mark before the header is skipped by every loader") {
    CHECK(philly(bom + philly_h + "2017-10-01 00:00:00,10,1,10,a\n").jobs.size() == 1);
    CHECK(tiresias(bom + tiresias_h + "0,1,0,1,m,10,1\n").jobs.size() == 1);
    CHECK(openb(bom + openb_h + "p,1000,1000,1,500,,LS,Running,0,10,0\n").jobs.size() == 1);
    CHECK(pods(bom + "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,1,500\n").size() == 1);
    CHECK(nodes(bom + "sn,cpu_milli,memory_mib,gpu,model\nn,1,1,1,T4\n").size() == 1);
  }

  TEST_CASE("CR-only line endings are refused with a clear error, never read as zero jobs") {
    const std::string cr =
        "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\r"
        "0,1,0,1,m,10,1\r1,1,5,1,m,10,1\r";
    const auto e = error_of([&] { (void)tiresias(cr); });
    CHECK(e.find("t.csv:1: field '(line)': carriage return inside a line") != std::string::npos);
    CHECK(error_of([&] {
            (void)philly(
                "timestamp,duration,num_gpus,gpu_time,cluster\r2017-10-01 00:00:00,1,1,1,"
                "a\r");
          }).find("CR-only") != std::string::npos);
    CHECK(error_of([&] {
            (void)pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\rp,1,1,1,5\r");
          }).find("pods.csv:1: field '(line)': carriage return") != std::string::npos);
    // CRLF stays accepted.
    CHECK(tiresias(tiresias_h + "0,1,0,1,m,10,1\r\n1,1,5,1,m,10,1\r\n").jobs.size() == 2);
  }

  TEST_CASE("dates are calendar dates: February 30 and April 31 are refused, Feb 29 of 2016 read") {
    CHECK_THROWS_WITH_AS(
        (void)philly(philly_h + "2017-02-30 00:00:00,10,1,10,a\n"),
        "[gpusched.parse] p.csv:2: field 'timestamp': expected YYYY-MM-DD HH:MM:SS",
        gs::parse_error);
    CHECK_THROWS_AS((void)philly(philly_h + "2017-04-31 00:00:00,10,1,10,a\n"), gs::parse_error);
    CHECK_THROWS_AS((void)philly(philly_h + "2017-02-29 00:00:00,10,1,10,a\n"), gs::parse_error);
    CHECK_THROWS_AS((void)philly(philly_h + "1900-02-29 00:00:00,10,1,10,a\n"), gs::parse_error);
    CHECK(philly(philly_h + "2016-02-29 00:00:00,10,1,10,a\n").jobs.size() == 1);
    CHECK(philly(philly_h + "2000-02-29 00:00:00,10,1,10,a\n").jobs.size() == 1);
  }

  TEST_CASE("a directory given as a trace file is called a directory by every loader") {
    const auto dir = std::filesystem::temp_directory_path().string();
    for (const auto& e : {error_of([&] { (void)gs::load_philly_file(dir); }),
                          error_of([&] { (void)gs::load_tiresias_file(dir); }),
                          error_of([&] { (void)gs::load_openb_file(dir); }),
                          error_of([&] { (void)gs::load_openb_pods(dir); }),
                          error_of([&] { (void)gs::load_openb_nodes(dir); })}) {
      CAPTURE(e);
      CHECK(e.find("is a directory, not a file") != std::string::npos);
    }
  }

  TEST_CASE("numbers go through one strict parser: no hex, no sign +, subnormals named") {
    CHECK(error_of([&] {
            (void)tiresias(tiresias_h + "0,1,0x10,1,m,10,1\n");
          }).find("field 'submit_time': '0x10' is not a finite number") != std::string::npos);
    CHECK(error_of([&] {
            (void)tiresias(tiresias_h + "0,+1,0,1,m,10,1\n");
          }).find("field 'num_gpu': '+1' is not an integer") != std::string::npos);
    CHECK(error_of([&] {
            (void)tiresias(tiresias_h + "0,1,0,1,m,1e-320,1\n");
          }).find("field 'duration': '1e-320' is too close to 0") != std::string::npos);
    CHECK(error_of([&] {
            (void)tiresias(tiresias_h + "0,1,0,1,m,1e999,1\n");
          }).find("field 'duration': '1e999' is out of range") != std::string::npos);
    CHECK(error_of([&] {
            (void)pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,0x10,1,1,5\n");
          }).find("'0x10' is not an integer") != std::string::npos);
  }

  TEST_CASE("openb: an empty model name in gpu_spec is an error in both readers") {
    for (const char* spec : {"|", "T4|", "|T4", "T4||V100"}) {
      CAPTURE(spec);
      const auto a = error_of(
          [&] { (void)openb(openb_h + "p,1000,1000,1,500," + spec + ",LS,Running,0,10,0\n"); });
      CHECK(a.find("o.csv:2: field 'gpu_spec': empty model name in '" + std::string(spec) + "'") !=
            std::string::npos);
      const auto b = error_of([&] {
        (void)pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np,1,1,1,500," +
                   std::string(spec) + "\n");
      });
      CHECK(b.find("field 'gpu_spec': column 6: empty model name") != std::string::npos);
    }
    CHECK(openb(openb_h + "p,1000,1000,1,500,T4|V100,LS,Running,0,10,0\n").gpu_specs.at(1) ==
          "T4|V100");
  }

  TEST_CASE("openb: num_gpu 0 with a GPU share is an error in both readers") {
    CHECK(error_of([&] {
            (void)openb(openb_h + "p,1000,1000,0,500,,LS,Running,0,10,0\n");
          }).find("o.csv:2: field 'gpu_milli': a pod without GPUs has no share") !=
          std::string::npos);
    CHECK(error_of([&] {
            (void)pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,0,500\n");
          }).find("a pod without GPUs has no share") != std::string::npos);
  }

  TEST_CASE("openb: the same limits in both readers (CPU and memory up to 2^40, 16 GPUs)") {
    const std::string big = std::to_string((std::int64_t{1} << 40) + 1);
    CHECK(error_of([&] {
            (void)openb(openb_h + "p," + big + ",1000,1,500,,LS,Running,0,10,0\n");
          }).find("field 'cpu_milli'") != std::string::npos);
    CHECK(error_of([&] {
            (void)nodes("sn,cpu_milli,memory_mib,gpu,model\nn," + big + ",1,1,T4\n");
          }).find("field 'cpu_milli': column 2: " + big + " is outside 0..1099511627776") !=
          std::string::npos);
    CHECK(error_of([&] {
            (void)nodes("sn,cpu_milli,memory_mib,gpu,model\nn,9223372036854775807,1,1,T4\n");
          }).find("is outside 0..1099511627776") != std::string::npos);
    CHECK(error_of([&] {
            (void)openb(openb_h + "p,1,1,17,1000,,LS,Running,0,10,0\n");
          }).find("field 'num_gpu': 17 is outside 0..16") != std::string::npos);
  }

  TEST_CASE("openb: a node name given twice is refused with both lines") {
    CHECK_THROWS_WITH_AS((void)nodes("sn,cpu_milli,memory_mib,gpu,model\nn1,1,1,1,T4\nn2,1,1,1,T4\n"
                                     "n1,1,1,2,T4\n"),
                         "[gpusched.parse] nodes.csv:4: field 'sn': column 1: node name 'n1' given "
                         "twice (first on line 2)",
                         gs::parse_error);
  }

  TEST_CASE("tenant names that are not UTF-8 are refused at load with their line") {
    CHECK(error_of([&] {
            (void)philly(philly_h + "2017-10-01 00:00:00,10,1,10,caf\xE9\n");
          }).find("p.csv:2: field 'cluster': the virtual-cluster name is not UTF-8") !=
          std::string::npos);
    CHECK(error_of([&] {
            (void)openb(openb_h + "p,1,1,1,500,,L\xFFS,Running,0,10,0\n");
          }).find("o.csv:2: field 'qos': the tenant name is not UTF-8") != std::string::npos);
    CHECK(philly(philly_h + "2017-10-01 00:00:00,10,1,10,caf\xC3\xA9\n").tenants.at(0) ==
          "caf\xC3\xA9");
  }

  TEST_CASE("gavel: a tiny rate giving a duration beyond the clock is an error naming the row") {
    std::istringstream in("resnet\tcmd\t1\tfalse\t1000000\t0\t1\n");
    const auto e = error_of(
        [&] { (void)gs::load_gavel(in, [](std::string_view, int) { return 1e-300; }, "g.trace"); });
    CHECK(e.find("g.trace:1: field 'total_steps'") != std::string::npos);
    CHECK(e.find("beyond the simulated clock") != std::string::npos);
  }
}

}  // namespace trace_rules_test
