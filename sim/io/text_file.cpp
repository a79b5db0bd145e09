// Text-format parsing with located, suggestion-bearing error messages.
#include "sim/io/text_file.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/tokenizer.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "sim/io/schema/scenario.pb.h"
#include "sim/io/schema/serving.pb.h"
#include "sim/util/closest_name.h"

namespace clustersim {
namespace {

namespace pb = google::protobuf;

// Collects the first parse error (the parser stops there) as a diagnostic. For an unknown name the
// parser reports the position after it (for an enum value, the next token's, often on the next
// line); the diagnostic points at the name itself instead.
class CollectingErrorCollector : public pb::io::ErrorCollector {
 public:
  CollectingErrorCollector(const std::string& path, const std::string& text,
                           const pb::Descriptor* root, Diagnostics* diagnostics)
      : path_(path), text_(text), root_(root), diagnostics_(diagnostics) {}

  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    std::string suggestion;
    std::string name = unknown_name(message, &suggestion);
    diagnostics_->add_error(locate_name_before(name, line, column), "", message + suggestion);
  }
  void AddWarning(int line, pb::io::ColumnNumber column, const std::string& message) override {
    diagnostics_->add_warning({path_, line + 1, column + 1}, "", message);
  }

 private:
  // The unknown field or enum name in `message` ("" if none), setting its suggestion.
  std::string unknown_name(const std::string& message, std::string* suggestion) const;
  // 1-based location of the last whole-word `name` at or before the 0-based (line, column);
  // the given position itself when `name` is empty or not found.
  SourceLocation locate_name_before(const std::string& name, int line, int column) const;

  std::string path_;
  const std::string& text_;
  const pb::Descriptor* root_;
  Diagnostics* diagnostics_;
};

// Every message type reachable from `root`, each once, in a fixed order.
void collect_types(const pb::Descriptor* type, std::set<const pb::Descriptor*>* seen,
                   std::vector<const pb::Descriptor*>* order) {
  if (!seen->insert(type).second) return;
  order->push_back(type);
  for (int i = 0; i < type->field_count(); ++i) {
    if (const pb::Descriptor* nested = type->field(i)->message_type()) {
      collect_types(nested, seen, order);
    }
  }
}

// Enum value names that a field called `field_name` accepts anywhere under `root`.
std::vector<std::string> enum_values_of_field(const pb::Descriptor* root,
                                              const std::string& field_name) {
  std::set<const pb::Descriptor*> seen;
  std::vector<const pb::Descriptor*> types;
  collect_types(root, &seen, &types);
  std::vector<std::string> values;
  for (const pb::Descriptor* type : types) {
    const pb::FieldDescriptor* field = type->FindFieldByName(field_name);
    if (field == nullptr || field->enum_type() == nullptr) continue;
    for (int i = 0; i < field->enum_type()->value_count(); ++i) {
      values.push_back(field->enum_type()->value(i)->name());
    }
  }
  return values;
}

SourceLocation CollectingErrorCollector::locate_name_before(const std::string& name, int line,
                                                            int column) const {
  const SourceLocation reported{path_, line + 1, column + 1};
  if (name.empty()) return reported;
  size_t offset = 0;
  for (int l = 0; l < line; ++l) {
    offset = text_.find('\n', offset);
    if (offset == std::string::npos) return reported;
    ++offset;
  }
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  size_t search_from = std::min(text_.size(), offset + static_cast<size_t>(column));
  while (true) {
    const size_t at = text_.rfind(name, search_from);
    if (at == std::string::npos) return reported;
    const bool starts = at == 0 || !is_word(text_[at - 1]);
    const bool ends = at + name.size() >= text_.size() || !is_word(text_[at + name.size()]);
    if (starts && ends) {
      const auto before = text_.begin() + static_cast<std::ptrdiff_t>(at);
      const int found_line = 1 + static_cast<int>(std::count(text_.begin(), before, '\n'));
      const size_t newline = at == 0 ? std::string::npos : text_.rfind('\n', at - 1);
      const size_t line_start = newline == std::string::npos ? 0 : newline + 1;
      return {path_, found_line, static_cast<int>(at - line_start) + 1};
    }
    if (at == 0) return reported;
    search_from = at - 1;
  }
}

// The text between `marker` (which ends with an opening quote) and the next quote; "" if absent.
std::string quoted_after(const std::string& text, const std::string& marker) {
  const size_t start = text.find(marker);
  if (start == std::string::npos) return "";
  const size_t begin = start + marker.size();
  const size_t end = text.find('"', begin);
  return end == std::string::npos ? "" : text.substr(begin, end - begin);
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

// Recognizes the parser's "Message type "T" has no field named "F"." and "Unknown enumeration
// value of "V" for field "F"." messages.
std::string CollectingErrorCollector::unknown_name(const std::string& message,
                                                   std::string* suggestion) const {
  const std::string field = quoted_after(message, "has no field named \"");
  if (!field.empty()) {
    const pb::Descriptor* type = pb::DescriptorPool::generated_pool()->FindMessageTypeByName(
        quoted_after(message, "Message type \""));
    std::vector<std::string> names;
    for (int i = 0; type != nullptr && i < type->field_count(); ++i) {
      names.push_back(type->field(i)->name());
    }
    *suggestion = did_you_mean(field, names);
    if (suggestion->empty()) *suggestion = other_scenario_kind(type, field);
    return field;
  }
  const std::string value = quoted_after(message, "Unknown enumeration value of \"");
  if (!value.empty()) {
    const std::string enum_field = quoted_after(message, "for field \"");
    *suggestion = did_you_mean(value, enum_values_of_field(root_, enum_field));
    return value;
  }
  return "";
}

}  // namespace

bool read_whole_file(const std::string& path, std::string* contents, Diagnostics* diagnostics) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) {
    diagnostics->add_error({path, 0, 0}, "", "is a directory, not a file");
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int why = errno;
    diagnostics->add_error({path, 0, 0}, "",
                           why == ENOENT ? "no such file" : std::string("cannot open file: ") +
                                                                std::strerror(why));
    return false;
  }
  contents->clear();
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    if (contents->size() + in.gcount() > kMaxInputFileBytes) {
      diagnostics->add_error({path, 0, 0}, "",
                             "is larger than the " + std::to_string(kMaxInputFileBytes >> 20) +
                                 " MiB an input file may have");
      return false;
    }
    contents->append(chunk, in.gcount());
  }
  if (in.bad()) {
    diagnostics->add_error({path, 0, 0}, "", "cannot read file");
    return false;
  }
  return true;
}

namespace {

// Reports every `name: []`: an empty list means the same as leaving the field out, which is never
// what someone who wrote the brackets meant (an empty sweep axis silently keeps the base value).
void report_empty_lists(const std::string& path, const std::string& text,
                        Diagnostics* diagnostics) {
  int line = 1, column = 1;
  std::string last_name;
  int name_line = 0, name_column = 0;
  for (size_t i = 0; i < text.size(); ++i, ++column) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      column = 0;
    } else if (c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      for (++i, ++column; i < text.size() && text[i] != c && text[i] != '\n'; ++i, ++column) {
        if (text[i] == '\\') ++i, ++column;
      }
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      if (i == 0 ||
          !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_')) {
        last_name.clear();
        name_line = line;
        name_column = column;
      }
      last_name += c;
    } else if (c == '[') {
      size_t j = i + 1;
      while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      if (j < text.size() && text[j] == ']' && !last_name.empty()) {
        diagnostics->add_error({path, name_line, name_column}, last_name,
                               "is an empty list: give at least one value or leave the field "
                               "out");
      }
    }
  }
}

}  // namespace

bool parse_text(const std::string& path, const std::string& text, pb::Message* message,
                pb::TextFormat::ParseInfoTree* tree, Diagnostics* diagnostics) {
  // protobuf's tokenizer reported the mark as an error at 1:1 ("Interpreting non ascii codepoint
  // 239"). Columns of line 1 are then counted from after it, as an editor shows them.
  if (text.starts_with(kUtf8ByteOrderMark)) {
    return parse_text(path, text.substr(kUtf8ByteOrderMark.size()), message, tree, diagnostics);
  }
  const int errors_before = diagnostics->error_count();
  CollectingErrorCollector collector(path, text, message->GetDescriptor(), diagnostics);
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  parser.WriteLocationsTo(tree);
  parser.AllowPartialMessage(true);  // missing fields are reported by the checks, with context
  if (parser.ParseFromString(text, message)) {
    report_empty_lists(path, text, diagnostics);
    return diagnostics->error_count() == errors_before;
  }
  if (diagnostics->error_count() == errors_before)
    diagnostics->add_error({path, 0, 0}, "", "does not parse");
  return false;
}

}  // namespace clustersim
