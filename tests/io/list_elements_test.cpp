// Tests that each element of a list written `field: [a, b]` is located at its own place in the
// file, and that elements written one statement each keep the places the parser recorded.
#include "sim/io/list_elements.h"

#include <catch2/catch.hpp>

#include "sim/io/field_checker.h"
#include "sim/io/schema/catalog.pb.h"
#include "sim/io/schema/scenario.pb.h"
#include "tests/testing/temp_dir.h"

namespace clustersim {
namespace {

// A parsed file held in memory, as read_text_file holds one.
template <class Message>
std::unique_ptr<TextFile<Message>> parsed(const std::string& text) {
  auto file = std::make_unique<TextFile<Message>>();
  file->path = "f.textproto";
  file->text = text;
  Diagnostics diagnostics;
  REQUIRE(parse_text(file->path, file->text, &file->message, file->tree.get(), &diagnostics));
  return file;
}

using Places = std::vector<std::string>;

// "line:column" (1-based, as diagnostics print them) of every element of `field` of `owner`.
Places element_places(const FieldChecker& owner, std::string_view field) {
  Places places;
  for (int i = 0; i < owner.size(field); ++i) {
    const SourceLocation at = owner.location(field, i);
    places.push_back(std::to_string(at.line) + ":" + std::to_string(at.column));
  }
  return places;
}

Places sweep_places(const std::string& text, std::string_view field) {
  const auto file = parsed<schema::Scenario>(text);
  Diagnostics diagnostics;
  return element_places(FieldChecker::root(*file, &diagnostics).child("sweep"), field);
}

TEST_CASE("each element of a list on several lines is at its own line and column") {
  // [2] at 3:5 and [1] at 2:24, no longer all three at the name (2:3).
  CHECK(sweep_places("sweep {\n  expert_parallel: [8, 3,\n    0]\n}\n", "expert_parallel") ==
        Places{"2:21", "2:24", "3:5"});
  CHECK(sweep_places("sweep { nodes: [\n  1,\n  -2 ,4] }", "nodes") == Places{"2:3", "3:3", "3:7"});
}

TEST_CASE("commas and brackets inside strings do not split a list") {
  CHECK(sweep_places("sweep { instance: [\"a,b]\", 'c\\',[d', \"\\\"],\" ,'e'] }", "instance") ==
        Places{"1:20", "1:28", "1:38", "1:46"});
}

TEST_CASE("a comment inside a list is skipped, commas and brackets in it too") {
  CHECK(sweep_places("sweep {\n  nodes: [1,  # 2, 3] not these\n   # ], 9\n  5]\n}", "nodes") ==
        Places{"2:11", "4:3"});
}

TEST_CASE("a tab advances the column to the next multiple of 8, as the parser counts") {
  CHECK(sweep_places("sweep {\n\tnodes: [1,\t2]\n}", "nodes") == Places{"2:17", "2:25"});
}

// The parser reads the file without its mark, so the text scanned for the elements is that too.
TEST_CASE("a list after a UTF-8 byte-order mark is located as an editor shows it") {
  testing::TempDir dir;
  Diagnostics diagnostics;
  const auto file = read_text_file<schema::Scenario>(
      dir.write("s.textproto", "\xEF\xBB\xBFsweep { nodes: [1, 2] }\n"), &diagnostics);
  REQUIRE(file != nullptr);
  CHECK(element_places(FieldChecker::root(*file, &diagnostics).child("sweep"), "nodes") ==
        Places{"1:17", "1:20"});
}

TEST_CASE("one value per statement keeps the place the parser recorded for each") {
  const std::string text = "sweep {\n  nodes: 1 nodes: 2\n  nodes:\n 3\n}";
  CHECK(sweep_places(text, "nodes") == Places{"2:3", "2:12", "3:3"});
  // The same, as the tree alone gave it.
  const auto file = parsed<schema::Scenario>(text);
  const auto* tree =
      file->tree->GetTreeForNested(schema::Scenario::descriptor()->FindFieldByName("sweep"), -1);
  const auto* nodes = schema::Sweep::descriptor()->FindFieldByName("nodes");
  for (int i = 0; i < 3; ++i) {
    const TextPosition at = tree->GetLocation(nodes, i);
    CHECK(std::to_string(at.line + 1) + ":" + std::to_string(at.column + 1) ==
          sweep_places(text, "nodes")[i]);
  }
}

TEST_CASE("lists and single statements mixed in one file are counted in order") {
  // A list of one shares its place with no other element: it keeps the name's, as before.
  CHECK(sweep_places("sweep {\n  nodes: 1\n  nodes: [2, 3]\n  nodes: 4 nodes: [5]\n"
                     "  nodes: [6,\n 7]\n}",
                     "nodes") == Places{"2:3", "3:11", "3:14", "4:3", "4:12", "5:11", "6:2"});
}

TEST_CASE("statement_values reads one statement, from where the parser recorded it") {
  const auto places = [](const std::vector<TextPosition>& values) {
    Places out;
    for (const TextPosition& at : values) {
      out.push_back(std::to_string(at.line + 1) + ":" + std::to_string(at.column + 1));
    }
    return out;
  };
  const std::string text = "a { x: 1 } nodes: [ {b: [1, 2]}, <c: \"}\"> ] y: 2\nnodes: []";
  CHECK(places(statement_values(text, TextPosition(0, 11))) == Places{"1:21", "1:34"});
  CHECK(places(statement_values(text, TextPosition(0, 4))) == Places{"1:5"});
  CHECK(statement_values(text, TextPosition(1, 0)).empty());
}

TEST_CASE("each message of a list of messages is at its opening brace, and so is its checker") {
  const auto file = parsed<schema::CatalogFile>(
      "gpu: [{ name: \"a\" },\n  # {, not a message\n  { name: \"b, {\" aliases: [\"x\", \"y\"] "
      "}]\n"
      "gpu { name: \"c\" }\n");
  Diagnostics diagnostics;
  const FieldChecker root = FieldChecker::root(*file, &diagnostics);
  CHECK(element_places(root, "gpu") == Places{"1:7", "3:3", "4:1"});
  const FieldChecker second = root.child("gpu", 1);
  CHECK(second.self_location().to_string() == "f.textproto:3:3");
  CHECK(second.location("name").to_string() == "f.textproto:3:5");
  CHECK(element_places(second, "aliases") == Places{"3:28", "3:33"});
  CHECK(root.child("gpu", 2).self_location().to_string() == "f.textproto:4:1");
}

TEST_CASE("a repeat in a list is reported at the repeat") {
  const auto file = parsed<schema::Scenario>("sweep {\n  nodes: [1, 2,\n    1]\n}\n");
  Diagnostics diagnostics;
  CHECK_FALSE(FieldChecker::root(*file, &diagnostics).child("sweep").distinct_lists());
  REQUIRE(diagnostics.all().size() == 1);
  CHECK(diagnostics.all()[0].to_string() == "f.textproto:3:5: sweep.nodes[2]: 1 is listed twice");
}

}  // namespace
}  // namespace clustersim
