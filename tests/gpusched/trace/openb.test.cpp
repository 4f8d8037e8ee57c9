// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include <gpusched/trace/openb.hpp>
#include <gpusched/trace/philly.hpp>
#include <gpusched/trace/tiresias.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace trace_openb_test {

namespace gs = gpusched;

namespace {
auto pods(const std::string& text) {
  std::istringstream in(text);
  return gs::read_openb_pods(in, "pods.csv");
}
auto nodes(const std::string& text) {
  std::istringstream in(text);
  return gs::read_openb_nodes(in, "nodes.csv");
}
const std::string pod_header =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";
}  // namespace

TEST_SUITE("trace/openb") {
  TEST_CASE("pod lists load with and without the gpu_spec column, CRLF and blank lines") {
    const auto p = pods(pod_header +
                        "a,12000,16384,1,1000,,LS,Running,0,1,0\r\n"
                        "b,6000,12288,1,460,V100M16|G2,LS,Running,0,1,0\n\n"
                        "c,88000,100,8,1000,,LS,Running,0,1,0\n");
    REQUIRE(p.size() == 3);
    CHECK(p[0].name == "a");
    CHECK(p[0].gpu_request() == 1000);
    CHECK(p[1].gpu_milli == 460);
    CHECK(p[1].gpu_spec == std::vector<std::string>{"V100M16", "G2"});
    CHECK(p[2].gpu_request() == 8000);
    const auto m = pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\nx,1,2,0,0\n");
    REQUIRE(m.size() == 1);
    CHECK(m[0].gpu_spec.empty());
  }

  TEST_CASE("node lists load and a node with GPUs needs a model") {
    const auto n = nodes("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\nn1,8,8,0,\n");
    REQUIRE(n.size() == 2);
    CHECK(n[0].model == "P100");
    CHECK(n[1].gpus == 0);
    CHECK_THROWS_WITH_AS(nodes("sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,2,\n"),
                         "[gpusched.parse] nodes.csv:2: field 'model': column 5: a node with "
                         "GPUs needs a model",
                         gs::parse_error);
  }

  TEST_CASE("malformed pod lines name the file, the line, the field and the column") {
    CHECK_THROWS_WITH_AS(pods(pod_header + "a,12x00,1,1,1000,,LS,R,0,1,0\n"),
                         "[gpusched.parse] pods.csv:2: field 'cpu_milli': column 2: '12x00' is "
                         "not an integer",
                         gs::parse_error);
    CHECK_THROWS_WITH_AS(pods(pod_header + "a,1,1,1,1000,,LS,R,0,1,0\nb,-5,1,0,0,,LS,R,0,1,0\n"),
                         "[gpusched.parse] pods.csv:3: field 'cpu_milli': column 2: -5 is outside "
                         "0..1099511627776",
                         gs::parse_error);
    CHECK_THROWS_WITH_AS(pods(pod_header + "a,1,1,2,500,,LS,R,0,1,0\n"),
                         "[gpusched.parse] pods.csv:2: field 'gpu_milli': column 5: a multi-GPU "
                         "pod takes whole GPUs (1000 milli each)",
                         gs::parse_error);
    CHECK_THROWS_WITH_AS(pods(pod_header + "a,1,1,1,0,,LS,R,0,1,0\n"),
                         "[gpusched.parse] pods.csv:2: field 'gpu_milli': column 5: a pod with "
                         "GPUs needs a share",
                         gs::parse_error);
    CHECK_THROWS_WITH_AS(pods(pod_header + "a,1,1,17,1000,,LS,R,0,1,0\n"),
                         "[gpusched.parse] pods.csv:2: field 'num_gpu': column 4: 17 is outside "
                         "0..16",
                         gs::parse_error);
    CHECK_THROWS_WITH_AS(pods(pod_header + "a,1,1,1,1000,A||B,LS,R,0,1,0\n"),
                         "[gpusched.parse] pods.csv:2: field 'gpu_spec': column 6: empty model "
                         "name in 'A||B'",
                         gs::parse_error);
    CHECK_THROWS_WITH_AS(pods(pod_header + "a,1,1,1,1000\n"),
                         "[gpusched.parse] pods.csv:2: field '(line)': expected 11 columns as in "
                         "the header, found 5",
                         gs::parse_error);
    CHECK_THROWS_WITH_AS(pods("name,cpu_milli,num_gpu,gpu_milli\n"),
                         "[gpusched.parse] pods.csv:1: field 'memory_mib': missing column "
                         "(header is: name,cpu_milli,num_gpu,gpu_milli)",
                         gs::parse_error);
    CHECK_THROWS_AS(pods(""), gs::parse_error);
  }

  TEST_CASE("a missing file is a parse error naming it") {
    // The same message as every other loader's (core/parse.hpp open_input).
    CHECK_THROWS_WITH_AS(gs::load_openb_pods("/nonexistent/pods.csv"),
                         "[gpusched.parse] /nonexistent/pods.csv:0: field 'file': cannot open",
                         gs::parse_error);
  }
  TEST_CASE("a path holding a NUL byte is refused, not cut at the NUL and loaded") {
    // The part before the NUL names a file that exists: the system call would open it.
    const std::string dir = GPUSCHED_TEST_DATA_DIR;
    const std::string path = dir + "/trace/openb_pod_list_default_100.csv" + std::string(1, '\0') + "x";
    CHECK_THROWS_WITH_AS(gs::load_openb_pods(path),
                         doctest::Contains("openb_pod_list_default_100.csv\\0x:0: field 'file': "
                                           "the path holds a NUL byte"),
                         gs::parse_error);
    CHECK_THROWS_AS(static_cast<void>(gs::load_openb_nodes(path)), gs::parse_error);
    CHECK_THROWS_AS(static_cast<void>(gs::load_philly_file(path)), gs::parse_error);
    CHECK_THROWS_AS(static_cast<void>(gs::load_tiresias_file(path)), gs::parse_error);
  }
}

}  // namespace trace_openb_test
