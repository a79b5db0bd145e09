// Rewrites protobuf text-format parser errors as located diagnostics with the user's field path.
//
// protobuf 3.21 (Debian 12's) offers no hook that tells an error's place in the message tree: its
// Finder only resolves extensions and Any types, and the ParseInfoTree gets a field's location only
// once the field is complete. So the text up to the error is tokenized again with protobuf's own
// tokenizer, tracking which messages are open, and the parser's message is translated.
#include "sim/io/parse_error.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "sim/io/hex_byte.h"
#include "sim/io/schema/catalog.pb.h"
#include "sim/io/schema/cost.pb.h"
#include "sim/io/schema/scenario.pb.h"
#include "sim/io/schema/serving.pb.h"
#include "sim/io/text_tokens.h"
#include "sim/util/closest_name.h"

namespace clustersim {
namespace {

namespace pb = google::protobuf;

// protobuf's tokenizer advances a tab to the next multiple of 8 columns (its private kTabWidth).
constexpr int kTabWidth = 8;

// A tokenizer position: 0-based line, and column with tabs expanded as protobuf counts them.
struct TokenPosition {
  int line = 0;
  int column = 0;
  auto operator<=>(const TokenPosition&) const = default;
};

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
    bool in_list = false;                        // between a field's "[" and its "]"
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
    } else if (token.text == "[" || token.text == "]") {
      frame.in_list = token.text == "[";
    }
    return true;
  });
  Nesting nesting = frames.back().at;
  nesting.reading_value =
      last_token == ":" || last_token == "[" || (last_token == "," && frames.back().in_list);
  // A name just before the stop is the field being read, with or without its ':' ("job 5").
  if (!last_token.empty() && (std::isalpha(static_cast<unsigned char>(last_token[0])) ||
                              last_token[0] == '_')) {
    nesting.field = last_token;
  }
  return nesting;
}

// The position of the last token `name` at or before `reported` (of the "-" of a negative number
// such as "-1", which is two tokens); `reported` if none.
TokenPosition locate_identifier(const std::string& text, const std::string& name,
                                TokenPosition reported) {
  TokenPosition found = reported;
  for_each_token(text,
                 [&](const pb::io::Tokenizer::Token& token, const pb::io::Tokenizer::Token& next) {
                   if (position_of(token) > reported) return false;
                   if (token.text == name || (token.text == "-" && "-" + next.text == name)) {
                     found = position_of(token);
                   }
                   return true;
                 });
  return found;
}

// The start of the last token starting before `at` (or at it, with `inclusive`); `at` if none.
// The tokenizer reports a malformed number at its end, where the next token may start.
TokenPosition token_start(const std::string& text, TokenPosition at, bool inclusive = true) {
  TokenPosition start = at;
  for_each_token(text, [&](const pb::io::Tokenizer::Token& token, const pb::io::Tokenizer::Token&) {
    if (inclusive ? position_of(token) > at : position_of(token) >= at) return false;
    start = position_of(token);
    return true;
  });
  return start;
}

// The byte offset in `text` of a tokenizer position (tabs advance to the next multiple of
// kTabWidth columns, as the tokenizer counts them); text.size() past the end.
size_t offset_of(const std::string& text, TokenPosition at) {
  size_t offset = 0;
  for (int line = 0; line < at.line && offset < text.size(); ++offset) {
    if (text[offset] == '\n') ++line;
  }
  for (int column = 0; offset < text.size() && text[offset] != '\n'; ++offset) {
    if (column >= at.column) break;
    column += text[offset] == '\t' ? kTabWidth - column % kTabWidth : 1;
  }
  return offset;
}

// The length of the UTF-8 sequence at `offset` (1 for ASCII), or 0 where the bytes there are not
// UTF-8: a stray continuation byte, a truncated, overlong or surrogate sequence, past U+10FFFF.
size_t utf8_length(const std::string& text, size_t offset) {
  const auto byte = [&](size_t i) {
    return i < text.size() ? static_cast<unsigned char>(text[i]) : 0u;
  };
  const unsigned lead = byte(offset);
  if (lead < 0x80) return 1;
  const size_t length = lead >= 0xC2 && lead <= 0xDF   ? 2
                        : lead >= 0xE0 && lead <= 0xEF ? 3
                        : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                       : 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(offset + i) & 0xC0) != 0x80) return 0;
  }
  const unsigned second = byte(offset + 1);
  if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F) ||
      (lead == 0xF0 && second < 0x90) || (lead == 0xF4 && second > 0x8F)) {
    return 0;
  }
  return length;
}

// The word written at `offset`: up to the next space or delimiter ("1.2.3", "089", "-1").
std::string word_at(const std::string& text, size_t offset) {
  size_t end = offset;
  while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end])) &&
         std::string_view(",;:{}[]<>#\"'").find(text[end]) == std::string_view::npos) {
    ++end;
  }
  return text.substr(offset, end - offset);
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

// Where `type` is the top level of one kind of input file and `field` a top-level field of
// another kind (a serving scenario given to `sweep`, a training one to `serve`, a price file given
// as a scenario, a scenario as --prices or in a --catalog directory), which kind and what reads
// it; else "".
std::string other_file_kind(const pb::Descriptor* type, const std::string& field) {
  static const std::vector<std::pair<const pb::Descriptor*, const char*>> kinds = {
      {schema::Scenario::descriptor(),
       " (a training scenario's field: run, sweep, cost, memory, plan and input read training "
       "scenarios)"},
      {schema::ServingScenario::descriptor(),
       " (a serving scenario's field: clustersim serve reads serving scenarios)"},
      {schema::PriceFile::descriptor(), " (a price file's field: give the file with --prices)"},
      {schema::CatalogFile::descriptor(),
       " (a catalog file's field: models/, topologies/ and --catalog directories hold them)"}};
  const bool top_level = std::any_of(kinds.begin(), kinds.end(),
                                     [&](const auto& kind) { return kind.first == type; });
  if (!top_level) return "";
  for (const auto& [kind, hint] : kinds) {
    if (kind != type && kind->FindFieldByName(field)) return hint;
  }
  return "";
}

// " (did you mean ...?)" for a near miss of a field of `type`, else the other file kind's hint.
std::string field_suggestion(const pb::Descriptor* type, const std::string& field) {
  if (type == nullptr) return "";
  std::vector<std::string> names;
  for (int i = 0; i < type->field_count(); ++i) names.push_back(type->field(i)->name());
  const std::string suggestion = did_you_mean(field, names);
  return suggestion.empty() ? other_file_kind(type, field) : suggestion;
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

// What the tokenizer found wrong with a number, from its message; "" for other messages.
std::string number_problem(const std::string& message) {
  static const std::map<std::string, std::string> problems = {
      {"Numbers starting with leading zero must be in octal.",
       "a number starting with 0 is octal, of digits 0-7: leave out the leading zero"},
      {"\"e\" must be followed by exponent.",
       "an \"e\" must be followed by an exponent, as in 1e11"},
      {"\"0x\" must be followed by hex digits.", "\"0x\" must be followed by hex digits"},
      {"Already saw decimal point or exponent; can't have another one.",
       "a number has at most one decimal point and one exponent"},
      {"Hex and octal numbers must be integers.",
       "a hex number (0x...) or octal one (0...) is an integer"},
      {"Need space between number and identifier.", "a number is written without a unit or suffix"},
  };
  const auto found = problems.find(message);
  return found == problems.end() ? "" : found->second;
}

// What the tokenizer found wrong with a string's escape sequence, from its message; "" for others.
std::string escape_problem(const std::string& message) {
  static const std::map<std::string, std::string> problems = {
      {"Invalid escape sequence in string literal.",
       "is not an escape sequence (a backslash is written \\\\)"},
      {"Expected hex digits for escape sequence.", "must be followed by hex digits"},
      {"Expected four hex digits for \\u escape sequence.", "must be followed by four hex digits"},
      {"Expected eight hex digits up to 10ffff for \\U escape sequence",
       "must be followed by eight hex digits, at most 0010ffff"},
  };
  const auto found = problems.find(message);
  return found == problems.end() ? "" : found->second;
}

// The kind of value `field` holds, in words ("an integer"); "" for a message.
std::string value_kind(const pb::FieldDescriptor* field) {
  switch (field->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
    case pb::FieldDescriptor::CPPTYPE_INT64:
    case pb::FieldDescriptor::CPPTYPE_UINT32:
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      return "an integer";
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
      return "a number";
    case pb::FieldDescriptor::CPPTYPE_STRING:
      return "a quoted string";
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      return "";
    default:
      return expected_value("", field);
  }
}

// A hint for a token found where a field name was due, from the text before it: a number after a
// number is a decimal comma ("1,5") or a space inside a number; a "/" starts a C-style comment.
std::string misplaced_hint(const std::string& text, TokenPosition at, const std::string& got) {
  if (got == "/") return " (a comment starts with #)";
  if (got.empty() || !std::isdigit(static_cast<unsigned char>(got[0]))) return "";
  size_t before = offset_of(text, at);
  const auto skip_blanks = [&] {
    while (before > 0 && (text[before - 1] == ' ' || text[before - 1] == '\t')) --before;
  };
  skip_blanks();
  const bool after_comma = before > 0 && text[before - 1] == ',';
  if (after_comma) --before, skip_blanks();
  if (before == 0 || !std::isdigit(static_cast<unsigned char>(text[before - 1]))) return "";
  return after_comma ? " (a field holds one number, and its decimal point is \".\", not \",\")"
                     : " (a field holds one number, written without spaces)";
}

// A tokenizer error (a malformed number or string, a character that is no token) worded as the
// parser's are: where it was written, the field path and what is wrong there.
struct Worded {
  TokenPosition at;
  std::string field_path;
  std::string message;
};

std::optional<Worded> tokenizer_error(const std::string& text, const pb::Descriptor* root,
                                      TokenPosition reported, const std::string& message) {
  // The field whose value is being read at `at`, or the enclosing message's path.
  const auto path_at = [&](TokenPosition at) {
    const Nesting nesting = nesting_before(text, root, at);
    return nesting.reading_value ? join_path(nesting.path, nesting.field) : nesting.path;
  };
  const size_t offset = offset_of(text, reported);
  if (const std::string problem = number_problem(message); !problem.empty()) {
    const TokenPosition at = token_start(text, reported, /*inclusive=*/false);
    const Nesting nesting = nesting_before(text, root, at);
    const pb::FieldDescriptor* field = nesting.reading_value && nesting.type
                                           ? nesting.type->FindFieldByName(nesting.field)
                                           : nullptr;
    const std::string kind = field ? value_kind(field) : "";
    const std::string word = found_token(word_at(text, offset_of(text, at)));
    return Worded{
        at, path_at(at),
        kind.empty()
            ? word + " is not a number (" + problem + ")"
            : "expected " + kind + ", got " + word +
                  (kind == "an integer" || kind == "a number" ? " (" + problem + ")" : "")};
  }
  if (const std::string problem = escape_problem(message); !problem.empty()) {
    const size_t backslash = std::min(text.rfind('\\', offset), offset);
    const TokenPosition at{reported.line, reported.column - static_cast<int>(offset - backslash)};
    return Worded{at, path_at(token_start(text, at)),
                  "\"" + text.substr(backslash, 2) + "\" in a string " + problem};
  }
  if (message == "String literals cannot cross line boundaries." ||
      message == "Unexpected end of string.") {
    const TokenPosition at = token_start(text, reported);
    const char quote = text[offset_of(text, at)];
    return Worded{at, path_at(at),
                  std::string("the string opened here has no closing ") + quote +
                      " on its line (a string cannot continue onto the next line)"};
  }
  if (message == "Invalid control characters encountered in text.") {
    return Worded{reported, path_at(reported),
                  "control character " + hex_byte(static_cast<unsigned char>(text[offset])) +
                      " is not text (is this a text file?)"};
  }
  if (message.starts_with("Interpreting non ascii codepoint ")) {
    const std::string character =
        text.substr(offset, std::max<size_t>(1, utf8_length(text, offset)));
    return Worded{reported, path_at(reported),
                  "unexpected character \"" + character +
                      "\": outside quoted strings and # comments a file holds ASCII only"};
  }
  if (message == "Need space between identifier and decimal point.") {
    return Worded{reported, path_at(reported), "a name needs a space before a decimal point"};
  }
  return std::nullopt;
}

}  // namespace

void ParseErrorCollector::AddError(int line, pb::io::ColumnNumber column,
                                   const std::string& message) {
  // The parser stops at its first error; a tokenizer error before it (a malformed number) leaves
  // the parser reading what follows, and its errors there only repeat the first.
  if (reported_error_) return;
  reported_error_ = true;
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
  if (const std::optional<Worded> worded = tokenizer_error(text_, root_, reported, message)) {
    add(worded->at, worded->field_path, worded->message);
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
    const bool is_unsigned = field && (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_UINT32 ||
                                       field->cpp_type() == pb::FieldDescriptor::CPPTYPE_UINT64);
    if (got == "-" && is_unsigned) {
      add(reported, field_path,
          "expected an integer >= 0, got " +
              found_token(word_at(text_, offset_of(text_, reported))));
    } else if (expected != "identifier" || nesting.reading_value) {
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
      add(reported, nesting.path,
          "expected a field name, got " + found_token(got) + misplaced_hint(text_, reported, got));
    }
    return;
  }
  if (message.starts_with("Expect a decimal number, got: ")) {  // 010 or 0x10 for a double
    add(reported, field_path,
        "expected a decimal number, got \"" + message.substr(30) +
            "\" (a number starting with 0 or 0x is octal or hex: write it in decimal)");
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

bool report_invalid_utf8(const std::string& path, const std::string& text,
                         Diagnostics* diagnostics) {
  int line = 1, column = 1;
  for (size_t offset = 0; offset < text.size();) {
    const size_t length = utf8_length(text, offset);
    if (length == 0) {
      diagnostics->add_error(
          {path, line, column}, "",
          "byte " + hex_byte(static_cast<unsigned char>(text[offset])) +
              " is not UTF-8: save the file as UTF-8 (an editor's \"Save with encoding\")");
      return true;
    }
    if (text[offset] == '\n') {
      ++line;
      column = 1;
    } else {
      // Bytes, not characters, as the parser counts (so "é" is two columns).
      column +=
          text[offset] == '\t' ? kTabWidth - (column - 1) % kTabWidth : static_cast<int>(length);
    }
    offset += length;
  }
  return false;
}

bool report_octal_integers(const std::string& path, const std::string& text,
                           const pb::Descriptor* root, Diagnostics* diagnostics) {
  // The first one only, as the parser reports its first error only.
  std::optional<pb::io::Tokenizer::Token> octal;
  for_each_token(text, [&](const pb::io::Tokenizer::Token& token, const pb::io::Tokenizer::Token&) {
    if (token.type == pb::io::Tokenizer::TYPE_INTEGER && token.text.size() > 1 &&
        token.text[0] == '0' && std::isdigit(static_cast<unsigned char>(token.text[1]))) {
      octal = token;
    }
    return !octal;
  });
  if (!octal) return false;
  const Nesting nesting = nesting_before(text, root, position_of(*octal));
  uint64_t value = 0;
  for (const char digit : octal->text) value = value * 8 + (digit - '0');
  diagnostics->add_error(
      {path, octal->line + 1, octal->column + 1},
      nesting.reading_value ? join_path(nesting.path, nesting.field) : nesting.path,
      "expected a decimal integer, got \"" + octal->text +
          "\" (a number starting with 0 is octal: " + octal->text + " is " + std::to_string(value) +
          "; leave out the leading zero)");
  return true;
}

void ParseErrorCollector::AddWarning(int line, pb::io::ColumnNumber column,
                                     const std::string& message) {
  diagnostics_->add_warning({path_, line + 1, column + 1}, "", message);
}

}  // namespace clustersim
