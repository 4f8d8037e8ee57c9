// SPDX-License-Identifier: Apache-2.0
// gpusched-slurm's command line (include/gpusched/slurm/options.hpp): strict numbers within
// documented ranges, options given twice or excluding each other, policy slots given twice,
// directories given as files, control characters in values written into gres.conf.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <gpusched/core/error.hpp>
#include <gpusched/topology/node_topology.hpp>
#include <gpusched/slurm/gres_links.hpp>
#include <gpusched/slurm/options.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace slurm_options_test {

namespace gs = gpusched;
namespace sl = gpusched::slurm;

namespace {
sl::bridge_options bridge(std::vector<std::string> args) { return sl::parse_bridge_options(args); }
sl::gres_links_options links(std::vector<std::string> args) {
  return sl::parse_gres_links_options(args);
}
const std::string kDir = GPUSCHED_TEST_DATA_DIR "/slurm";  // a directory
}  // namespace

TEST_CASE("options: the defaults and good values") {
  const auto d = bridge({});
  CHECK(d.once);
  CHECK(d.grace == 10);
  CHECK(d.timeout == 20);
  CHECK(d.signal == "USR1");
  const auto o = bridge({"--interval", "0.1", "--grace", "0", "--timeout", "3600", "--policy",
                         "ordering=drf,admission=gang-easy", "--dry-run", "--json"});
  CHECK_FALSE(o.once);
  CHECK(o.interval == doctest::Approx(0.1));
  CHECK(o.grace == 0);
  CHECK(o.timeout == 3600);
  CHECK(o.policy.ordering == "drf");
  CHECK(o.policy.admission == "gang-easy");
  CHECK(o.dry_run);
  CHECK(o.json);
  CHECK(bridge({"--interval", "86400"}).interval == 86400);
  CHECK(bridge({"--policy", ""}).policy.ordering == "fifo");  // empty: the defaults
  CHECK(bridge({"-h"}).help);
}

TEST_CASE("options: --interval is a whole finite decimal number of 0.1 to 86400 s") {
  // cases 88 (5abc), 89 (0x10), 90 (inf), 91 (1e-9), 93 (abc), 94 (1e999)
  CHECK_THROWS_WITH_AS(bridge({"--interval", "5abc"}),
                       "--interval: '5abc' is not a number (a decimal number of seconds, 0.1 to "
                       "86400 s)",
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--interval", "0x10"}), doctest::Contains("--interval: '0x10'"),
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--interval", "inf"}), doctest::Contains("'inf' is not a number"),
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--interval", "nan"}), doctest::Contains("'nan' is not a number"),
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--interval", "1e-9"}),
                       "--interval: '1e-9' is below 0.1 s (0.1 to 86400 s)", sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--interval", "abc"}), doctest::Contains("--interval: 'abc'"),
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--interval", "1e999"}),
                       doctest::Contains("--interval: '1e999' is out of range"), sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--interval", "86400.5"}), doctest::Contains("is above 86400 s"),
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--interval", "+5"}), doctest::Contains("is not a number"),
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--interval"}), "--interval needs a value", sl::usage_error);
}

TEST_CASE("options: --timeout is 1 to 3600 s, --grace 0 to 3600 s, both finite") {
  // cases 96 (timeout nan), 97 (timeout -1), 98 (grace -5), 99 (grace inf), 118 (timeout inf)
  CHECK_THROWS_WITH_AS(bridge({"--timeout", "nan"}), doctest::Contains("--timeout: 'nan'"),
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--timeout", "inf"}), doctest::Contains("--timeout: 'inf'"),
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--timeout", "-1"}), "--timeout: '-1' is below 1 s (1 to 3600 s)",
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--timeout", "0"}), doctest::Contains("is below 1 s"),
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--grace", "-5"}), "--grace: '-5' is below 0 s (0 to 3600 s)",
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--grace", "inf"}), doctest::Contains("--grace: 'inf'"),
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--grace", "1e5"}), doctest::Contains("is above 3600 s"),
                       sl::usage_error);
}

TEST_CASE("options: options excluding each other or given twice are refused, naming both") {
  // cases 95 (--once --interval), 102 (--interval twice), 114 (gres-links --nodes twice)
  CHECK_THROWS_WITH_AS(bridge({"--once", "--interval", "5"}),
                       doctest::Contains("--once and --interval exclude each other"),
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--interval", "5", "--once"}),
                       doctest::Contains("--once and --interval exclude each other"),
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--interval", "5", "--interval", "7"}),
                       "--interval is given twice ('5', then '7'): give it once", sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--json", "--json"}), "--json is given twice: give it once",
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--partition", "a", "--partition", "b"}),
                       doctest::Contains("--partition is given twice"), sl::usage_error);
  CHECK_THROWS_WITH_AS(links({"--nodes", "a", "--nodes", "b", "--model", "pcie-8gpu"}),
                       "--nodes is given twice ('a', then 'b'): give it once", sl::usage_error);
  CHECK_THROWS_WITH_AS(links({"--nodes", "a", "--topo", "t.txt", "--model", "pcie-8gpu"}),
                       doctest::Contains("--topo and --model exclude each other"),
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--frobnicate"}), "unknown argument '--frobnicate'",
                       sl::usage_error);
}

TEST_CASE("options: a policy slot given twice is refused") {
  // case 100
  CHECK_THROWS_WITH_AS(bridge({"--policy", "ordering=fifo,ordering=drf"}),
                       "--policy: the slot 'ordering' is given twice ('ordering=fifo', then "
                       "'ordering=drf'): give it once",
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--policy", "ordering"}), doctest::Contains("slot=name pairs"),
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(bridge({"--policy", "colour=red"}), doctest::Contains("'colour=red'"),
                       sl::usage_error);
}

TEST_CASE("options: a directory given as a file is called a directory") {
  // cases 111 (gres-links --topo DIR), 115 (--topology DIR)
  CHECK_THROWS_WITH_AS(bridge({"--topology", kDir}),
                       ("--topology: '" + kDir + "' is a directory, not a file").c_str(),
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(links({"--nodes", "gpu1", "--topo", kDir}),
                       ("--topo: '" + kDir + "' is a directory, not a file").c_str(),
                       sl::usage_error);
  // a file that is missing is read (and reported) when the cycle needs it
  CHECK(bridge({"--topology", kDir + "/missing.conf"}).topology == kDir + "/missing.conf");
}

TEST_CASE("options: values written into gres.conf hold no control character") {
  // case 110
  CHECK_THROWS_WITH_AS(
      links({"--nodes", "gpu1", "--model", "pcie-8gpu", "--file-prefix",
             "/dev/nvidia\nNodeName=evil Name=gpu File=/dev/sda"}),
      "--file-prefix: the value holds a newline (at character 12); it is written into the "
      "generated gres.conf, one line each, so it is refused",
      sl::usage_error);
  CHECK_THROWS_WITH_AS(links({"--nodes", "gpu1\x1b", "--model", "pcie-8gpu"}),
                       doctest::Contains("--nodes: the value holds the control character 0x1b"),
                       sl::usage_error);
  CHECK_THROWS_WITH_AS(links({"--nodes", "gpu1", "--type", "a\t1", "--model", "pcie-8gpu"}),
                       doctest::Contains("--type: the value holds a tab"), sl::usage_error);
  CHECK_THROWS_WITH_AS(links({"--nodes", "gpu1", "--topo", "t\n.txt"}),
                       doctest::Contains("--topo: the value holds a newline"), sl::usage_error);
  const auto ok = links({"--nodes", "gpu[1-4]", "--type", "a100", "--model", "dgx-a100"});
  CHECK(ok.nodes == "gpu[1-4]");
  CHECK(ok.file_prefix == "/dev/nvidia");
  // the library function refuses them too, whoever calls it
  const auto t = gs::pcie_dual_socket_8gpu();
  CHECK_THROWS_WITH_AS((void)sl::gres_links(t, "gpu1", "", "/dev/nvidia\nNodeName=evil"),
                       doctest::Contains("field 'file_prefix'"), gs::invalid_value_error);
  CHECK_THROWS_AS((void)sl::gres_links(t, "gpu1\r", ""), gs::invalid_value_error);
  CHECK_THROWS_AS((void)sl::gres_links(t, "gpu1", "a\n"), gs::invalid_value_error);
  CHECK(sl::gres_links(t, "gpu1", "a100").find("Type=a100 File=/dev/nvidia0") !=
        std::string::npos);
}

TEST_CASE("options: --help gives every range") {
  const auto help = sl::options_help(sl::kBridgeOptions);
  CHECK(help.find("--interval SECONDS      run a cycle every SECONDS until SIGTERM, no default "
                  "(0.1 to 86400 s)") != std::string::npos);
  CHECK(help.find("(0 to 3600 s)") != std::string::npos);
  CHECK(help.find("(1 to 3600 s)") != std::string::npos);
}

}  // namespace slurm_options_test
