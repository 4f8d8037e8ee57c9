// SPDX-License-Identifier: Apache-2.0
// core/error.hpp: the exception hierarchy and its messages.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include <gpusched/core/error.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace core_error_test {

namespace gs = gpusched;

TEST_SUITE("core/error") {
  TEST_CASE("an invalid value names the object, the field, the value and the problem") {
    const gs::invalid_value_error e(gs::error_id::invalid_value, "job 7 group 'w'", "count", "0",
                                    "must be positive");
    CHECK(e.id() == gs::error_id::invalid_value);
    CHECK(e.where() == "job 7 group 'w'");
    CHECK(e.field() == "count");
    CHECK(e.value() == "0");
    const std::string what = e.what();
    CHECK(what.rfind("[gpusched.invalid_value] ", 0) == 0);
    CHECK(what.find("job 7 group 'w': field 'count' = 0: must be positive") != std::string::npos);
  }

  TEST_CASE("a parse error names the file, the line and the field") {
    const gs::parse_error e("trace.csv", 12, "gpus", "not a number");
    CHECK(e.id() == gs::error_id::parse);
    CHECK(e.file() == "trace.csv");
    CHECK(e.line() == 12u);
    CHECK(e.field() == "gpus");
    CHECK(std::string(e.what()).find("trace.csv:12: field 'gpus': not a number") !=
          std::string::npos);
  }

  TEST_CASE("a message quoting a NUL or a control byte is printed whole, the bytes escaped") {
    using namespace std::string_literals;
    const gs::parse_error e("t.csv", 2, "num_gpu", "'1\0' is not an integer"s);
    const std::string what = e.what();  // a C string: a raw NUL would end it
    CHECK(what == "[gpusched.parse] t.csv:2: field 'num_gpu': '1\\0' is not an integer");
    const gs::parse_error k("c.cfg", 1, "se\0ed"s, "unknown option");
    CHECK(std::string(k.what()).find("field 'se\\0ed': unknown option") != std::string::npos);
    const gs::invalid_value_error v(gs::error_id::invalid_value, "x", "f", "a\rb\x1b\x7f", "bad");
    CHECK(std::string(v.what()).find("= a\\x0db\\x1b\\x7f: bad") != std::string::npos);
    const gs::parse_error keep("t.csv", 1, "f", "tab\tand\nnew line, caf\xC3\xA9");
    CHECK(std::string(keep.what()).find("tab\tand\nnew line, caf\xC3\xA9") != std::string::npos);
  }

  TEST_CASE("every error is a gpusched::error and a std::runtime_error with a stable id name") {
    try {
      throw gs::invalid_value_error(gs::error_id::unknown_name, "catalog", "model", "X", "unknown");
    } catch (const std::runtime_error& e) {
      const auto* g = dynamic_cast<const gs::error*>(&e);
      REQUIRE(g != nullptr);
      CHECK(g->id() == gs::error_id::unknown_name);
    }
    CHECK(gs::to_string(gs::error_id::duplicate_id) == "duplicate_id");
    CHECK(gs::to_string(gs::error_id::inconsistent) == "inconsistent");
    CHECK(gs::to_string(gs::error_id::unknown_id) == "unknown_id");
  }
}

}  // namespace core_error_test
