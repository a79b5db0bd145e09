// Rewrites protobuf text-format parser errors as located diagnostics with the user's field path.
//
// protobuf 3.21 (Debian 12's) offers no hook that tells an error's place in the message tree: its
// Finder only resolves extensions and Any types, and the ParseInfoTree gets a field's location only
// once the field is complete. So the text up to the error is tokenized again with protobuf's own
// tokenizer, tracking which messages are open, and the parser's message is translated.
#include "sim/io/parse_error.h"

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cctype>
#include <functional>
#include <map>
#include <vector>

#include "sim/io/schema/scenario.pb.h"
#include "sim/io/schema/serving.pb.h"
#include "sim/util/closest_name.h"

namespace clustersim {
namespace {

namespace pb = google::protobuf;

// A tokenizer position: 0-based line, and column with tabs expanded as protobuf counts them.
struct TokenPosition {
  int line = 0;
  int column = 0;
  auto operator<=>(const TokenPosition&) const = default;
};

// Tokenizer errors were already reported by the parser, which read the same text.
class SilentCollector : public pb::io::ErrorCollector {
 public:
  void AddError(int, pb::io::ColumnNumber, const std::string&) override {}
};

// Calls `visit(token, next)` for each token of `text` as the text-format parser tokenizes it,
// `next` being the token after it (TYPE_END at the end), until `visit` returns false.
void for_each_token(const std::string& text,
                    const std::function<bool(const pb::io::Tokenizer::Token&,
                                             const pb::io::Tokenizer::Token&)>& visit) {
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  SilentCollector silent;
  pb::io::Tokenizer tokenizer(&input, &silent);
  tokenizer.set_comment_style(pb::io::Tokenizer::SH_COMMENT_STYLE);
  tokenizer.set_allow_f_after_float(true);
  tokenizer.Next();
  while (tokenizer.current().type != pb::io::Tokenizer::TYPE_END) {
    const pb::io::Tokenizer::Token token = tokenizer.current();
    tokenizer.Next();
    if (!visit(token, tokenizer.current())) return;
  }
}

TokenPosition position_of(const pb::io::Tokenizer::Token& token) {
  return {token.line, token.column};
}

// Where the parser was when it stopped: the messages open there and the field being read.
struct Nesting {
  std::string path;                   // of the innermost open message; "" at the top level
  const pb::Descriptor* type = nullptr;  // its type; nullptr where the schema lost track
  std::string field;                  // the field being read in it ("" if none yet)
  int opened_line = 0;                // 1-based line of its "{"; 0 at the top level
  std::string closer = "}";           // the delimiter that closes it
  bool reading_value = false;         // the stop follows a ':' or '[': a value is due there
};

// The nesting of `text` (a message of type `root`) just before the token at `stop`.
Nesting nesting_before(const std::string& text, const pb::Descriptor* root, TokenPosition stop) {
  struct Frame {
    Nesting at;
    std::map<std::string, int> elements_opened;  // per repeated message field
  };
  Nesting top;
  top.type = root;
  std::vector<Frame> frames{{top, {}}};
  std::string last_token;
  for_each_token(text, [&](const pb::io::Tokenizer::Token& token,
                           const pb::io::Tokenizer::Token& next) {
    if (position_of(token) >= stop) return false;
    last_token = token.text;
    Frame& frame = frames.back();
    if (token.type == pb::io::Tokenizer::TYPE_IDENTIFIER &&
        (next.text == ":" || next.text == "{" || next.text == "<" || next.text == "[")) {
      frame.at.field = token.text;
    } else if (token.text == "{" || token.text == "<") {
      const pb::FieldDescriptor* field =
          frame.at.type ? frame.at.type->FindFieldByName(frame.at.field) : nullptr;
      std::string element = frame.at.field;
      if (field != nullptr && field->is_repeated()) {
        element += "[" + std::to_string(frame.elements_opened[frame.at.field]++) + "]";
      }
      Nesting inner;
      inner.path = frame.at.path.empty() ? element : frame.at.path + "." + element;
      inner.type = field ? field->message_type() : nullptr;
      inner.opened_line = token.line + 1;
      inner.closer = token.text == "{" ? "}" : ">";
      frames.push_back({inner, {}});
    } else if ((token.text == "}" || token.text == ">") && frames.size() > 1) {
      frames.pop_back();
    }
    return true;
  });
  Nesting nesting = frames.back().at;
  nesting.reading_value = last_token == ":" || last_token == "[";
  // A name just before the stop is the field being read, with or without its ':' ("job 5").
  if (!last_token.empty() && (std::isalpha(static_cast<unsigned char>(last_token[0])) ||
                              last_token[0] == '_')) {
    nesting.field = last_token;
  }
  return nesting;
}

// The position of the last token `name` at or before `reported`; `reported` if none.
TokenPosition locate_identifier(const std::string& text, const std::string& name,
                                TokenPosition reported) {
  TokenPosition found = reported;
  for_each_token(text, [&](const pb::io::Tokenizer::Token& token, const pb::io::Tokenizer::Token&) {
    if (position_of(token) > reported) return false;
    if (token.text == name) found = position_of(token);
    return true;
  });
  return found;
}

std::string join_path(const std::string& path, const std::string& field) {
  if (field.empty()) return path;
  return path.empty() ? field : path + "." + field;
}

// The text between `marker` (which ends with an opening quote) and the next quote; "" if absent.
std::string quoted_after(const std::string& text, const std::string& marker) {
  const size_t start = text.find(marker);
  if (start == std::string::npos) return "";
  const size_t begin = start + marker.size();
  const size_t end = text.find('"', begin);
  return end == std::string::npos ? "" : text.substr(begin, end - begin);
}

// The Y of the parser's 'Expected "X", found "Y".' (Y may hold quotes: found ""a"").
std::string found_part(const std::string& message) {
  const std::string marker = ", found \"";
  const size_t start = message.rfind(marker);
  if (start == std::string::npos || !message.ends_with("\".")) return "";
  const size_t begin = start + marker.size();
  return message.substr(begin, message.size() - 2 - begin);
}

// What the parser found instead of what it expected, as the user wrote it.
std::string found_token(const std::string& token) {
  if (token.empty()) return "the end of the file";
  if (token.front() == '"' || token.front() == '\'') return token;
  return "\"" + token + "\"";
}

// A token without the quotes around a string.
std::string unquoted(const std::string& token) {
  const bool quoted = token.size() >= 2 && (token.front() == '"' || token.front() == '\'') &&
                      token.back() == token.front();
  return quoted ? token.substr(1, token.size() - 2) : token;
}

// What the parser expected for `field` ("double", "integer", "identifier") in words.
std::string expected_value(const std::string& expected, const pb::FieldDescriptor* field) {
  if (field != nullptr && field->cpp_type() == pb::FieldDescriptor::CPPTYPE_BOOL) {
    return "true or false";
  }
  if (field != nullptr && field->enum_type() != nullptr) return "a value name (without quotes)";
  if (expected == "double" || expected == "float") return "a number";
  if (expected == "integer") return "an integer";
  if (expected == "string") return "a quoted string";
  if (expected == "identifier") return "a name";
  return expected;
}

// Where `type` is one kind of scenario and `field` a top-level field of the other (a serving
// scenario given to `sweep`, a training one to `serve`), the command that reads it; else "".
std::string other_scenario_kind(const pb::Descriptor* type, const std::string& field) {
  const pb::Descriptor* training = schema::Scenario::descriptor();
  const pb::Descriptor* serving = schema::ServingScenario::descriptor();
  if (type == training && serving->FindFieldByName(field)) {
    return " (a serving scenario's field: clustersim serve reads serving scenarios)";
  }
  if (type == serving && training->FindFieldByName(field)) {
    return " (a training scenario's field: run, sweep, cost, memory, plan and input read "
           "training scenarios)";
  }
  return "";
}

// " (did you mean ...?)" for a near miss of a field of `type`, else the other scenario kind's hint.
std::string field_suggestion(const pb::Descriptor* type, const std::string& field) {
  if (type == nullptr) return "";
  std::vector<std::string> names;
  for (int i = 0; i < type->field_count(); ++i) names.push_back(type->field(i)->name());
  const std::string suggestion = did_you_mean(field, names);
  return suggestion.empty() ? other_scenario_kind(type, field) : suggestion;
}

// " (did you mean ...?)" for a near miss of a value of `field`, else the list of its values (less
// the unset *_UNSPECIFIED one).
std::string enum_suggestion(const pb::FieldDescriptor* field, const std::string& value) {
  if (field == nullptr || field->enum_type() == nullptr) return "";
  std::vector<std::string> names;
  for (int i = 0; i < field->enum_type()->value_count(); ++i) {
    const pb::EnumValueDescriptor* v = field->enum_type()->value(i);
    if (v->number() == 0 && v->name().ends_with("_UNSPECIFIED")) continue;
    names.push_back(v->name());
  }
  const std::string suggestion = did_you_mean(value, names);
  if (!suggestion.empty() || names.empty()) return suggestion;
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
  return " (valid values: " + list + ")";
}

// The width of an integer field, for "out of range".
std::string integer_kind(const pb::FieldDescriptor* field) {
  if (field == nullptr) return "";
  switch (field->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32: return " (a 32-bit integer)";
    case pb::FieldDescriptor::CPPTYPE_UINT32: return " (a 32-bit unsigned integer)";
    case pb::FieldDescriptor::CPPTYPE_INT64: return " (a 64-bit integer)";
    case pb::FieldDescriptor::CPPTYPE_UINT64: return " (a 64-bit unsigned integer)";
    default: return "";
  }
}

}  // namespace

void ParseErrorCollector::AddError(int line, pb::io::ColumnNumber column,
                                   const std::string& message) {
  const TokenPosition reported{line, column};
  auto add = [&](TokenPosition at, const std::string& field_path, const std::string& text) {
    diagnostics_->add_error({path_, at.line + 1, at.column + 1}, field_path, text);
  };
  // An unknown name is reported after it (for an enum value, at the next token, often on the next
  // line); the diagnostic points at the name itself.
  auto at_name = [&](const std::string& name) { return locate_identifier(text_, name, reported); };

  if (const std::string field = quoted_after(message, "has no field named \""); !field.empty()) {
    const TokenPosition at = at_name(field);
    const Nesting nesting = nesting_before(text_, root_, at);
    const pb::Descriptor* type =
        nesting.type ? nesting.type
                     : pb::DescriptorPool::generated_pool()->FindMessageTypeByName(
                           quoted_after(message, "Message type \""));
    std::string suggestion = field_suggestion(type, field);
    if (suggestion.empty() && nesting.opened_line > 0 && root_->FindFieldByName(field)) {
      suggestion = " (a top-level field: is the \"" + nesting.closer +
                   "\" of this message, opened at line " + std::to_string(nesting.opened_line) +
                   ", missing?)";
    }
    add(at, nesting.path, "no field named \"" + field + "\"" + suggestion);
    return;
  }
  if (const std::string value = quoted_after(message, "Unknown enumeration value of \"");
      !value.empty()) {
    const std::string field = quoted_after(message, "for field \"");
    const TokenPosition at = at_name(value);
    const Nesting nesting = nesting_before(text_, root_, at);
    add(at, join_path(nesting.path, field),
        "unknown value \"" + value + "\"" +
            enum_suggestion(nesting.type ? nesting.type->FindFieldByName(field) : nullptr, value));
    return;
  }
  if (const std::string field = quoted_after(message, "Non-repeated field \""); !field.empty()) {
    const TokenPosition at = at_name(field);
    add(at, join_path(nesting_before(text_, root_, at).path, field),
        "given a second time: this field holds one value, not a list");
    return;
  }
  if (const std::string field = quoted_after(message, "Field \"");
      message.find("another member of oneof") != std::string::npos) {
    const TokenPosition at = at_name(field);
    add(at, join_path(nesting_before(text_, root_, at).path, field),
        "cannot be given together with \"" + quoted_after(message, "along with field \"") +
            "\": give one or the other");
    return;
  }
  if (const std::string field = quoted_after(message, "Invalid value for boolean field \"");
      !field.empty()) {
    const std::string value = quoted_after(message, "Value: \"");
    const TokenPosition at = at_name(value);
    add(at, join_path(nesting_before(text_, root_, at).path, field),
        "expected true or false, got " + found_token(value));
    return;
  }
  const Nesting nesting = nesting_before(text_, root_, reported);
  const pb::FieldDescriptor* field =
      nesting.type ? nesting.type->FindFieldByName(nesting.field) : nullptr;
  const std::string field_path = join_path(nesting.path, nesting.field);
  if (message.starts_with("Expected \":\", found ")) {  // after a field name
    add(reported, field_path,
        "expected \":\" after the field name, got " + found_token(found_part(message)));
    return;
  }
  if (message.starts_with("Expected \"")) {  // Expected "{", found "5".
    add(reported, field_path,
        "expected \"" + quoted_after(message, "Expected \"") + "\", got " +
            found_token(found_part(message)));
    return;
  }
  if (const size_t got_at = message.find(", got: ");
      message.starts_with("Expected ") && got_at != std::string::npos) {
    const std::string expected = message.substr(9, got_at - 9);  // "double", "identifier"
    const std::string got = message.substr(got_at + 7);
    if (expected != "identifier" || nesting.reading_value) {
      const bool quoted_value_name = got != unquoted(got) && field && field->enum_type() &&
                                     field->enum_type()->FindValueByName(unquoted(got));
      add(reported, field_path,
          "expected " + expected_value(expected, field) + ", got " + found_token(got) +
              (quoted_value_name ? " (write " + unquoted(got) + " without the quotes)"
                                 : enum_suggestion(field, unquoted(got))));
    } else if (got.empty() && nesting.opened_line > 0) {  // a field name was expected
      add(reported, nesting.path,
          "the file ends before the \"" + nesting.closer +
              "\" that closes this message (opened at line " +
              std::to_string(nesting.opened_line) + ")");
    } else if ((got == "}" || got == ">") && nesting.opened_line == 0) {
      add(reported, "", "unexpected \"" + got + "\": no message is open here");
    } else {
      add(reported, nesting.path, "expected a field name, got " + found_token(got));
    }
    return;
  }
  if (message.starts_with("Integer out of range (")) {
    const std::string value = message.substr(22, message.size() - 23);
    add(reported, field_path,
        field && field->cpp_type() == pb::FieldDescriptor::CPPTYPE_BOOL
            ? "expected true or false, got \"" + value + "\""
            : value + " is out of range" + integer_kind(field));
    return;
  }
  if (message.starts_with("Extension \"")) {  // [name]: the schema declares no extensions
    add(reported, nesting.path,
        "no field named \"[" + quoted_after(message, "Extension \"") + "]\"");
    return;
  }

  add(reported, nesting.path, message);
}

void ParseErrorCollector::AddWarning(int line, pb::io::ColumnNumber column,
                                     const std::string& message) {
  diagnostics_->add_warning({path_, line + 1, column + 1}, "", message);
}

}  // namespace clustersim
