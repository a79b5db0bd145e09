// Tests that a file which does not parse is reported as file:line:col with a useful message.
#include "sim/io/text_file.h"

#include <catch2/catch.hpp>

#include "sim/io/schema/catalog.pb.h"
#include "sim/io/schema/scenario.pb.h"

namespace clustersim {
namespace {

// The single diagnostic of parsing `text` as a CatalogFile named "f.textproto".
std::string parse_error(const std::string& text) {
  schema::CatalogFile message;
  google::protobuf::TextFormat::ParseInfoTree tree;
  Diagnostics diagnostics;
  CHECK_FALSE(parse_text("f.textproto", text, &message, &tree, &diagnostics));
  REQUIRE(diagnostics.all().size() == 1);
  return diagnostics.all()[0].to_string();
}

TEST_CASE("a syntax error names file, line and column") {
  // Line 2 lacks the closing brace's partner: the error is at the end of line 3.
  CHECK(parse_error("gpu {\n  name: \"x\"\n  memory_gib: \n") ==
        "f.textproto:4:1: gpu[0].memory_gib: expected a number, got the end of the file");
}

// The wording of each kind of parser error: parse_error_test.cpp.

TEST_CASE("a field given twice is an error, not a silent overwrite") {
  CHECK(parse_error("gpu {\n  name: \"a\"\n  name: \"b\"\n}\n").find("f.textproto:3:") == 0);
}

TEST_CASE("an integer out of range is an error") {
  schema::Scenario message;
  google::protobuf::TextFormat::ParseInfoTree tree;
  Diagnostics diagnostics;
  CHECK_FALSE(
      parse_text("s.textproto", "cluster { nodes: 99999999999 }", &message, &tree, &diagnostics));
  REQUIRE(diagnostics.error_count() == 1);
  CHECK(diagnostics.all()[0].where.line == 1);
}

// protobuf's tokenizer read the mark an editor saved as "Interpreting non ascii codepoint 239" at
// 1:1; it is skipped, and line 1's columns are counted as the editor shows them.
TEST_CASE("a UTF-8 byte-order mark at the start of a file is read as without it") {
  schema::Scenario message;
  google::protobuf::TextFormat::ParseInfoTree tree;
  Diagnostics diagnostics;
  CHECK(parse_text("s.textproto", "\xEF\xBB\xBFmodel: \"llama3-8b\"\n", &message, &tree,
                   &diagnostics));
  CHECK(diagnostics.all().empty());
  CHECK(message.model() == "llama3-8b");
  CHECK(parse_error("\xEF\xBB\xBFgpu { nme: \"x\" }\n") ==
        "f.textproto:1:7: gpu[0]: no field named \"nme\" (did you mean \"name\"?)");
}

TEST_CASE("a file that cannot be opened is reported by name") {
  Diagnostics diagnostics;
  CHECK(read_text_file<schema::CatalogFile>("/nonexistent/x.textproto", &diagnostics) == nullptr);
  CHECK(diagnostics.to_string() == "/nonexistent/x.textproto: no such file\n");
}

}  // namespace
}  // namespace clustersim
