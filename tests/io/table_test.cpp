// Tests of result tables: alignment, CSV quoting, JSON escaping and typed cells.
#include "sim/io/table.h"

#include <catch2/catch.hpp>
#include <sstream>

namespace clustersim {
namespace {

Table sample() {
  Table t;
  t.add_column("name", "name");
  t.add_column("price_usd_per_hour", "USD/h", 2);
  t.add_column("shared", "shared");
  t.add_row({std::string("a,\"b\""), 1.5, true});
  t.add_row({std::string("long name"), Table::Cell(), false});
  return t;
}

std::string print(const Table& t, OutputFormat f) {
  std::ostringstream out;
  t.print(out, f);
  return out.str();
}

TEST_CASE("the aligned table pads text left and numbers right, '-' for unknown") {
  CHECK(print(sample(), OutputFormat::kTable) ==
        "name       USD/h  shared\n"
        "a,\"b\"       1.50  yes\n"
        "long name      -  no\n");
}

TEST_CASE("CSV quotes fields with commas or quotes and keeps full precision") {
  CHECK(print(sample(), OutputFormat::kCsv) ==
        "name,price_usd_per_hour,shared\n"
        "\"a,\"\"b\"\"\",1.5,true\n"
        "long name,,false\n");
}

TEST_CASE("JSON is an array of objects keyed by schema names, null for unknown") {
  CHECK(print(sample(), OutputFormat::kJson) ==
        "[\n {\"name\": \"a,\\\"b\\\"\", \"price_usd_per_hour\": 1.5, \"shared\": true},\n"
        " {\"name\": \"long name\", \"price_usd_per_hour\": null, \"shared\": false}\n]\n");
}

TEST_CASE("json_quote escapes control characters") {
  CHECK(json_quote("a\nb\x01") == "\"a\\nb\\u0001\"");
}

TEST_CASE("output formats parse by name only") {
  CHECK(parse_output_format("csv") == OutputFormat::kCsv);
  CHECK_FALSE(parse_output_format("xml").has_value());
}

}  // namespace
}  // namespace clustersim
