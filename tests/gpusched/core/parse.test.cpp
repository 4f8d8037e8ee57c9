// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>

#include <gpusched/core/parse.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace core_parse_test {

namespace gs = gpusched;

TEST_SUITE("core/parse") {
  TEST_CASE("parse_real reads decimal numbers only: no hex, sign +, inf, nan or spaces") {
    CHECK(gs::parse_real("12").value == 12.0);
    CHECK(gs::parse_real("-0.5").value == -0.5);
    CHECK(gs::parse_real("1e3").value == 1000.0);
    CHECK(gs::parse_real("2.5E-3").value == 0.0025);
    for (const char* bad : {"0x10", "0X1p3", "+1", "inf", "-inf", "nan", "infinity", " 1", "1 ", "",
                            "1,5", "1e", "--1", "1.2.3"}) {
      CAPTURE(bad);
      CHECK(gs::parse_real(bad).status == gs::number_status::malformed);
    }
  }

  TEST_CASE("parse_real calls a huge value out of range and a subnormal too close to 0") {
    CHECK(gs::parse_real("1e400").status == gs::number_status::out_of_range);
    CHECK(gs::parse_real("-1e400").status == gs::number_status::out_of_range);
    CHECK(gs::parse_real("1e-320").status == gs::number_status::subnormal);
    CHECK(gs::number_problem("1e-320", gs::number_status::subnormal) ==
          "'1e-320' is too close to 0 (below the smallest normal double)");
    CHECK(gs::number_problem("0x10", gs::number_status::malformed) == "'0x10' is not a number");
    CHECK(gs::parse_real("0").ok());
    CHECK(gs::parse_real("0.0e-400").ok());  // zero written with a small exponent is zero
  }

  TEST_CASE("parse_integer reads decimal integers and reports overflow as out of range") {
    CHECK(gs::parse_integer("-12").value == -12);
    CHECK(gs::parse_integer("9223372036854775807").value ==
          std::numeric_limits<std::int64_t>::max());
    CHECK(gs::parse_integer("9223372036854775808").status == gs::number_status::out_of_range);
    CHECK(gs::parse_integer<std::uint64_t>("18446744073709551616").status ==
          gs::number_status::out_of_range);
    for (const char* bad : {"0x10", "+1", "1.0", "1e3", "", " 1", "١"}) {
      CAPTURE(bad);
      CHECK(gs::parse_integer(bad).status == gs::number_status::malformed);
    }
  }

  TEST_CASE("is_utf8 accepts well-formed UTF-8 and refuses stray, overlong and surrogate bytes") {
    CHECK(gs::is_utf8("plain"));
    CHECK(gs::is_utf8("caf\xC3\xA9"));
    CHECK(gs::is_utf8("\xE2\x82\xAC"));      // euro sign
    CHECK(gs::is_utf8("\xF0\x9F\x98\x80"));  // emoji
    CHECK_FALSE(gs::is_utf8("\xFF"));
    CHECK_FALSE(gs::is_utf8("caf\xE9"));           // Latin-1
    CHECK_FALSE(gs::is_utf8("\xC0\xAF"));          // overlong '/'
    CHECK_FALSE(gs::is_utf8("\xED\xA0\x80"));      // surrogate
    CHECK_FALSE(gs::is_utf8("\xE2\x82"));          // truncated
    CHECK_FALSE(gs::is_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  }

  TEST_CASE("strip_bom removes one UTF-8 byte-order mark") {
    CHECK(gs::strip_bom("\xEF\xBB\xBFname") == "name");
    CHECK(gs::strip_bom("name") == "name");
  }

  TEST_CASE("open_input calls a directory a directory") {
    const auto dir = std::filesystem::temp_directory_path().string();
    CHECK_THROWS_WITH_AS(
        (void)gs::open_input(dir),
        ("[gpusched.parse] " + dir + ":0: field 'file': is a directory, not a file").c_str(),
        gs::parse_error);
    CHECK_THROWS_WITH_AS((void)gs::open_input("/nonexistent/x.csv"),
                         "[gpusched.parse] /nonexistent/x.csv:0: field 'file': cannot open",
                         gs::parse_error);
  }

  TEST_CASE("open_input calls a device a device, and read_bounded stops at its bound") {
    CHECK(gs::is_device_input("/dev/zero"));
    CHECK_FALSE(gs::is_device_input(std::filesystem::temp_directory_path().string()));
    CHECK_FALSE(gs::is_device_input("/nonexistent/x.csv"));
    CHECK_THROWS_WITH_AS((void)gs::open_input("/dev/zero"),
                         "[gpusched.parse] /dev/zero:0: field 'file': is a device, not a file or a "
                         "pipe",
                         gs::parse_error);
    std::istringstream exact(std::string(100, 'a'));
    CHECK(gs::read_bounded(exact, "s", 100) == std::string(100, 'a'));
    std::istringstream over(std::string(101, 'a'));
    CHECK_THROWS_WITH_AS((void)gs::read_bounded(over, "s", 100),
                         "[gpusched.parse] s:0: field 'file': holds more than 100 bytes, the most "
                         "read from one input; not read further",
                         gs::parse_error);
  }

  TEST_CASE("checked arithmetic reports overflow instead of wrapping") {
    constexpr auto max = std::numeric_limits<std::int64_t>::max();
    CHECK(gs::checked_add<std::int64_t>(max, 1) == std::nullopt);
    CHECK(gs::checked_add<std::int64_t>(max - 1, 1) == max);
    CHECK(gs::checked_mul<std::int64_t>(max / 2 + 1, 2) == std::nullopt);
    CHECK(gs::to_millis(1.5) == 1500);
    CHECK(gs::to_millis(std::numeric_limits<double>::infinity()) == std::nullopt);
    CHECK(gs::to_millis(1e300) == std::nullopt);
    CHECK(gs::to_millis(std::numeric_limits<double>::quiet_NaN()) == std::nullopt);
  }
}

}  // namespace core_parse_test
