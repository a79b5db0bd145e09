// Tests that the text-format parser's errors name file:line:column, the field path as the user
// wrote it (as the semantic checks print it) and a plain message, for every kind of input file.
#include "sim/io/parse_error.h"

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/io/catalog.h"
#include "sim/io/schema/catalog.pb.h"
#include "sim/io/schema/cost.pb.h"
#include "sim/io/schema/scenario.pb.h"
#include "sim/io/schema/serving.pb.h"
#include "sim/io/text_file.h"
#include "sim/serve/serving_scenario.h"
#include "tests/testing/scenario_text.h"
#include "tests/testing/shipped_catalog.h"
#include "tests/testing/temp_dir.h"

namespace clustersim {
namespace {

using testing::TempDir;

// The single diagnostic of parsing `text` as a `Message` in file "f.textproto".
template <class Message>
std::string parse_error(const std::string& text) {
  Message message;
  google::protobuf::TextFormat::ParseInfoTree tree;
  Diagnostics diagnostics;
  CHECK_FALSE(parse_text("f.textproto", text, &message, &tree, &diagnostics));
  REQUIRE(diagnostics.all().size() == 1);
  return diagnostics.all()[0].to_string();
}

using schema::CatalogFile;
using schema::Scenario;
using schema::ServingScenario;

TEST_CASE("an unknown field names the message it is in, not protobuf's type") {
  CHECK(parse_error<Scenario>("job {\n  global_batch_sise: 1024\n}\n") ==
        "f.textproto:2:3: job: no field named \"global_batch_sise\" (did you mean "
        "\"global_batch_size\"?)");
  // Nested: the path of every enclosing message.
  CHECK(parse_error<Scenario>("sweep {\n  auto_parallelism { max_pipeline_paralel: 4 }\n}\n") ==
        "f.textproto:2:22: sweep.auto_parallelism: no field named \"max_pipeline_paralel\" (did "
        "you mean \"max_pipeline_parallel\"?)");
  // At the top level: no path; the other kind of scenario's field says which command reads it.
  CHECK(parse_error<Scenario>("name: \"x\"\ndeployment { }\n") ==
        "f.textproto:2:1: no field named \"deployment\" (a serving scenario's field: clustersim "
        "serve reads serving scenarios)");
  // A price file given as a scenario, and a scenario given as --prices.
  CHECK(parse_error<Scenario>("price { instance: \"aws.p5.48xlarge\" }\n") ==
        "f.textproto:1:1: no field named \"price\" (a price file's field: give the file with "
        "--prices)");
  CHECK(parse_error<schema::PriceFile>("name: \"quickstart\"\n") ==
        "f.textproto:1:1: no field named \"name\" (a training scenario's field: run, sweep, cost, "
        "memory, plan and input read training scenarios)");
  // A scenario in a --catalog directory, a catalog entry in a scenario.
  CHECK(parse_error<CatalogFile>("name: \"quickstart\"\n") ==
        "f.textproto:1:1: no field named \"name\" (a training scenario's field: run, sweep, cost, "
        "memory, plan and input read training scenarios)");
  CHECK(parse_error<Scenario>("gpu { name: \"X\" }\n") ==
        "f.textproto:1:1: no field named \"gpu\" (a catalog file's field: models/, topologies/ "
        "and --catalog directories hold them)");
}

TEST_CASE("a path inside a repeated message counts the elements before it from 0") {
  const std::string models =
      "model { name: \"a\" }\n"
      "model { name: \"b\" transformer { num_layers: 2 } }\n"
      "model {\n"
      "  name: \"c\"  # a comment with a { brace\n"
      "  description: \"a string with a } brace\"\n"
      "  transformer {\n"
      "    moe { num_expert: 8 }\n"
      "  }\n"
      "}\n";
  CHECK(parse_error<CatalogFile>(models) ==
        "f.textproto:7:11: model[2].transformer.moe: no field named \"num_expert\" (did you mean "
        "\"num_experts\"?)");
  // Elements of a list written `field: [{...}, {...}]` are counted too.
  CHECK(parse_error<ServingScenario>(
            "sweep {\n  quantization: [{ weights: FP8 }, { weights: FP9 }]\n}\n") ==
        "f.textproto:2:47: sweep.quantization[1].weights: unknown value \"FP9\" (did you mean "
        "\"FP8\"?)");
}

TEST_CASE("an unknown enum value names its field and the nearest or all valid values") {
  CHECK(parse_error<CatalogFile>("gpu {\n  form_factor: SMX\n}\n") ==
        "f.textproto:2:16: gpu[0].form_factor: unknown value \"SMX\" (did you mean \"SXM\"?)");
  CHECK(parse_error<CatalogFile>("gpu { name: \"a\" }\ngpu {\n  form_factor: BLADE\n}\n") ==
        "f.textproto:3:16: gpu[1].form_factor: unknown value \"BLADE\" (valid values: SXM, PCIE, "
        "CONSUMER)");
  CHECK(parse_error<CatalogFile>("gpu { form_factor: 7 }\n") ==
        "f.textproto:1:20: gpu[0].form_factor: unknown value \"7\" (valid values: SXM, PCIE, "
        "CONSUMER)");
}

TEST_CASE("a value of the wrong type names its field and what was expected") {
  CHECK(parse_error<Scenario>("job {\n  global_batch_size: \"big\"\n}\n") ==
        "f.textproto:2:22: job.global_batch_size: expected an integer, got \"big\"");
  CHECK(parse_error<Scenario>("job { token_budget: lots }\n") ==
        "f.textproto:1:21: job.token_budget: expected a number, got \"lots\"");
  CHECK(parse_error<CatalogFile>("gpu { name: 12 }\n") ==
        "f.textproto:1:13: gpu[0].name: expected a quoted string, got \"12\"");
  CHECK(parse_error<Scenario>("parallelism { distributed_optimizer: yes }\n") ==
        "f.textproto:1:38: parallelism.distributed_optimizer: expected true or false, got "
        "\"yes\"");
  CHECK(parse_error<Scenario>("parallelism { distributed_optimizer: \"yes\" }\n") ==
        "f.textproto:1:38: parallelism.distributed_optimizer: expected true or false, got "
        "\"yes\"");
  CHECK(parse_error<Scenario>("job { precision: \"BF16\" }\n") ==
        "f.textproto:1:18: job.precision: expected a value name (without quotes), got \"BF16\" "
        "(write BF16 without the quotes)");
  CHECK(parse_error<Scenario>("job { precision: 1.5 }\n") ==
        "f.textproto:1:18: job.precision: expected a value name (without quotes), got \"1.5\" "
        "(valid values: FP32, TF32, FP16, BF16, FP8, INT8, FP4, INT4)");
  CHECK(parse_error<Scenario>("sweep { nodes: [1, 2, x] }\n") ==
        "f.textproto:1:23: sweep.nodes: expected an integer, got \"x\"");
  CHECK(parse_error<Scenario>("cluster { nodes: 99999999999 }") ==
        "f.textproto:1:18: cluster.nodes: 99999999999 is out of range (a 32-bit integer)");
  CHECK(parse_error<Scenario>("job 5\n") == "f.textproto:1:5: job: expected \"{\", got \"5\"");
  CHECK(parse_error<Scenario>("job {\n  sequence_length 4096\n}\n") ==
        "f.textproto:2:19: job.sequence_length: expected \":\" after the field name, got "
        "\"4096\"");
}

TEST_CASE("a missing closing brace names the message left open and where it opened") {
  CHECK(parse_error<Scenario>("name: \"x\"\njob {\n  sequence_length: 4096\n") ==
        "f.textproto:4:1: job: the file ends before the \"}\" that closes this message (opened "
        "at line 2)");
  CHECK(parse_error<CatalogFile>("model { name: \"a\" }\nmodel {\n  transformer {\n  }\n") ==
        "f.textproto:5:1: model[1]: the file ends before the \"}\" that closes this message "
        "(opened at line 2)");
  CHECK(parse_error<Scenario>("job < precision: BF16\n") ==
        "f.textproto:2:1: job: the file ends before the \">\" that closes this message (opened "
        "at line 1)");
  CHECK(parse_error<Scenario>("job { }\n}\n") ==
        "f.textproto:2:1: unexpected \"}\": no message is open here");
  CHECK(parse_error<Scenario>("job {\n  sequence_length: \n") ==
        "f.textproto:3:1: job.sequence_length: expected an integer, got the end of the file");
}

TEST_CASE("two fields of one oneof name the one given second") {
  CHECK(parse_error<CatalogFile>("model {\n  transformer { }\n  cnn { }\n}\n") ==
        "f.textproto:3:3: model[0].cnn: cannot be given together with \"transformer\": give one "
        "or the other");
}

TEST_CASE("a top-level field inside a message asks whether its closing brace is missing") {
  CHECK(parse_error<Scenario>("job {\n  sequence_length: 4096\ncluster { nodes: 1 }\n") ==
        "f.textproto:3:1: job: no field named \"cluster\" (a top-level field: is the \"}\" of "
        "this message, opened at line 1, missing?)");
}

TEST_CASE("a field that holds one value given twice names it") {
  CHECK(parse_error<Scenario>("job {\n  sequence_length: 1\n  sequence_length: 2\n}\n") ==
        "f.textproto:3:3: job.sequence_length: given a second time: this field holds one value, "
        "not a list");
  CHECK(parse_error<Scenario>("job { }\njob { }\n") ==
        "f.textproto:2:1: job: given a second time: this field holds one value, not a list");
}

// A malformed number, string or character stops protobuf's tokenizer, whose words ("Numbers
// starting with leading zero must be in octal.", "Interpreting non ascii codepoint 195.") reached
// the user, often followed by a second error about the token's remains.
TEST_CASE("a malformed number, string or character is one error at its field, in plain words") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"name: \"x\n",
       "1:7: name: the string opened here has no closing \" on its line (a string "
       "cannot continue onto the next line)"},
      {"name: 'x",
       "1:7: name: the string opened here has no closing ' on its line (a string "
       "cannot continue onto the next line)"},
      {"name: \"a\\qb\"",
       "1:9: name: \"\\q\" in a string is not an escape sequence (a backslash "
       "is written \\\\)"},
      {"name: \"a\\x\"", "1:9: name: \"\\x\" in a string must be followed by hex digits"},
      {"job { global_batch_size: 089 }",
       "1:26: job.global_batch_size: expected an integer, got \"089\" (a number starting with 0 "
       "is octal, of digits 0-7: leave out the leading zero)"},
      {"job { token_budget: 1e }",
       "1:21: job.token_budget: expected a number, got \"1e\" (an "
       "\"e\" must be followed by an exponent, as in 1e11)"},
      {"sweep { nodes: [1, 2.5.1] }",
       "1:20: sweep.nodes: expected an integer, got \"2.5.1\" (a "
       "number has at most one decimal point and one exponent)"},
      {"job {\n  sequence_length: 4k\n}\n",
       "2:20: job.sequence_length: expected an integer, got "
       "\"4k\" (a number is written without a unit or suffix)"},
      {"name: 0x", "1:7: name: expected a quoted string, got \"0x\""},
      {"name: \"x\"\x01\n", "1:10: control character 0x01 is not text (is this a text file?)"},
      {"job \xC3\xA9 { }",
       "1:5: unexpected character \"\xC3\xA9\": outside quoted strings and # "
       "comments a file holds ASCII only"},
      {"job { token_budget: 1,5 }",
       "1:23: job: expected a field name, got \"5\" (a field holds "
       "one number, and its decimal point is \".\", not \",\")"},
      {"job { global_batch_size: 10 24 }",
       "1:29: job: expected a field name, got \"24\" (a field "
       "holds one number, written without spaces)"},
      {"// a comment\nname: \"x\"\n",
       "1:1: expected a field name, got \"/\" (a comment starts "
       "with #)"},
      {"parallelism {\n  schedule: -1\n}\n",
       "2:13: parallelism.schedule: unknown value \"-1\" (valid values: GPIPE, ONE_F_ONE_B, "
       "INTERLEAVED_ONE_F_ONE_B, DUALPIPE, DUALPIPE_V)"},
  };
  for (const auto& [text, expected] : cases) {
    INFO(text);
    CHECK(parse_error<Scenario>(text) == "f.textproto:" + expected);
  }
  CHECK(parse_error<ServingScenario>("traffic { seed: -1 }") ==
        "f.textproto:1:17: traffic.seed: expected an integer >= 0, got \"-1\"");
}

// protobuf reads an integer with a leading zero as octal: global_batch_size: 0100 trained with 64.
TEST_CASE("an integer with a leading zero is an error, not read as octal") {
  CHECK(parse_error<Scenario>("job { global_batch_size: 0100 }") ==
        "f.textproto:1:26: job.global_batch_size: expected a decimal integer, got \"0100\" (a "
        "number starting with 0 is octal: 0100 is 64; leave out the leading zero)");
  CHECK(parse_error<Scenario>("sweep { nodes: [1, 010] }") ==
        "f.textproto:1:20: sweep.nodes: expected a decimal integer, got \"010\" (a number "
        "starting with 0 is octal: 010 is 8; leave out the leading zero)");
  CHECK(parse_error<Scenario>("job { token_budget: 010 }") ==
        "f.textproto:1:21: job.token_budget: expected a decimal number, got \"010\" (a number "
        "starting with 0 or 0x is octal or hex: write it in decimal)");
}

// protobuf read a byte that is not UTF-8 inside a string as it was: an unknown model's name came
// out garbled, and a scenario's name went into the results file's UTF-8 attributes.
TEST_CASE("a byte that is not UTF-8 is an error at its line and column, and UTF-8 text is read") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"name: \"a\xFF\"", "1:9: byte 0xFF"},
      {"\n\tname: \"\xC3\x28\"", "2:16: byte 0xC3"},  // a lead byte without its continuation
      {"# caf\xC3\xA9\nname: \"\xC0\xAF\"", "2:8: byte 0xC0"},  // an overlong "/"
      {"name: \"\xED\xA0\x80\"", "1:8: byte 0xED"},             // a UTF-16 surrogate
  };
  for (const auto& [text, expected] : cases) {
    INFO(text);
    CHECK(parse_error<Scenario>(text) ==
          "f.textproto:" + expected +
              " is not UTF-8: save the file as UTF-8 (an editor's \"Save with encoding\")");
  }
  Scenario scenario;
  google::protobuf::TextFormat::ParseInfoTree tree;
  Diagnostics diagnostics;
  CHECK(parse_text("f.textproto",
                   "# caf\xC3\xA9\nname: \"Z\xC3\xBCrich \xE2\x80\x94 \xF0\x9F\x9A\x80\"\n",
                   &scenario, &tree, &diagnostics));
  CHECK(scenario.name() == "Z\xC3\xBCrich \xE2\x80\x94 \xF0\x9F\x9A\x80");
}

// Every kind of input file goes through parse_text: one error of each through its real loader.

TEST_CASE("a training scenario's parse error through its loader") {
  CHECK(testing::scenario_errors("name: \"t\"\njob {\n  optimiser: ADAM\n}\n") ==
        "s.textproto:3:3: job: no field named \"optimiser\" (did you mean \"optimizer\"?)\n");
}

TEST_CASE("a serving scenario's parse error through its loader") {
  TempDir dir;
  Diagnostics diagnostics;
  CHECK(load_serving_scenario(
            dir.write("v.textproto", "deployment {\n  quantization { weights: FP7 }\n}\n"),
            testing::shipped_catalog(), &diagnostics) == nullptr);
  CHECK(dir.relative(diagnostics.to_string()) ==
        "v.textproto:2:27: deployment.quantization.weights: unknown value \"FP7\" (did you mean "
        "\"FP8\"?)\n");
}

TEST_CASE("a catalog file's parse error (model, topology, runtime) through the catalog loader") {
  const auto errors = [](const std::string& file, const std::string& text) {
    TempDir dir;
    Diagnostics diagnostics;
    dir.write(file, text);
    Catalog::load({dir.path()}, &diagnostics);
    REQUIRE(diagnostics.error_count() >= 1);
    return dir.relative(diagnostics.all()[0].to_string());
  };
  CHECK(errors("models/m.textproto",
               "model {\n  name: \"m\"\n  transformer { num_layer: 2 }\n}\n") ==
        "models/m.textproto:3:17: model[0].transformer: no field named \"num_layer\" (did you "
        "mean \"num_layers\"?)");
  CHECK(errors("topologies/t.textproto", "gpu {\n  name: \"g\"\n  memory_gib: 80\n\n") ==
        "topologies/t.textproto:5:1: gpu[0]: the file ends before the \"}\" that closes this "
        "message (opened at line 1)");
  CHECK(errors("topologies/runtime.textproto", "runtime {\n  cuda_context_gib: one\n}\n") ==
        "topologies/runtime.textproto:2:21: runtime[0].cuda_context_gib: expected a number, got "
        "\"one\"");
}

TEST_CASE("a price file's parse error through its reader") {
  TempDir dir;
  Diagnostics diagnostics;
  CHECK(read_text_file<schema::PriceFile>(
            dir.write("p.textproto", "price {\n  instance: \"x\"\n  instance: \"y\"\n}\n"),
            &diagnostics) == nullptr);
  CHECK(dir.relative(diagnostics.to_string()) ==
        "p.textproto:3:3: price[0].instance: given a second time: this field holds one value, "
        "not a list\n");
}

}  // namespace
}  // namespace clustersim
