// Reads input files and parses them as text format; parse_error.cpp words the parser's errors.
#include "sim/io/text_file.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "sim/io/parse_error.h"

namespace clustersim {

namespace pb = google::protobuf;

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
  if (report_invalid_utf8(path, text, diagnostics)) return false;
  const int errors_before = diagnostics->error_count();
  ParseErrorCollector collector(path, text, message->GetDescriptor(), diagnostics);
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  parser.WriteLocationsTo(tree);
  parser.AllowPartialMessage(true);  // missing fields are reported by the checks, with context
  if (parser.ParseFromString(text, message)) {
    report_octal_integers(path, text, message->GetDescriptor(), diagnostics);
    report_empty_lists(path, text, diagnostics);
    return diagnostics->error_count() == errors_before;
  }
  if (diagnostics->error_count() == errors_before)
    diagnostics->add_error({path, 0, 0}, "", "does not parse");
  return false;
}

}  // namespace clustersim
