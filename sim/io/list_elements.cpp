// Finding the elements of a list-syntax statement in a file's text.
#include "sim/io/list_elements.h"

#include "sim/io/text_tokens.h"

namespace clustersim {

namespace pb = google::protobuf;

std::vector<TextPosition> statement_values(std::string_view text, TextPosition statement) {
  // A token never spans lines, so the statement's line is tokenized from its first byte; the
  // tokens before the statement on that line are skipped.
  size_t line_start = 0;
  for (int line = 0; line < statement.line && line_start < text.size(); ++line_start) {
    if (text[line_start] == '\n') ++line;
  }
  enum class Reading { kBefore, kName, kList, kElement };
  Reading reading = Reading::kBefore;
  int depth = 0;  // brackets and braces open inside the element being read
  std::vector<TextPosition> values;
  const auto visit = [&](const pb::io::Tokenizer::Token& token, const pb::io::Tokenizer::Token&) {
    const TextPosition at(statement.line + token.line, token.column);
    const auto is = [&](const char* symbol) {
      return token.type == pb::io::Tokenizer::TYPE_SYMBOL && token.text == symbol;
    };
    switch (reading) {
      case Reading::kBefore:  // this token is the field's name unless it is before it
        if (at.line == statement.line && at.column < statement.column) return true;
        reading = Reading::kName;
        return true;
      case Reading::kName:  // after the name: ":", then "[" for a list
        if (is(":")) return true;
        if (!is("[")) {
          values.push_back(statement);  // one value: `name: a`, `name { ... }`
          return false;
        }
        reading = Reading::kList;
        return true;
      case Reading::kList:  // after "[" or a top-level ",": an element starts (none in `[]`)
        if (is("]")) return false;
        values.push_back(at);
        reading = Reading::kElement;
        break;
      case Reading::kElement:
        break;
    }
    if (is("{") || is("<") || is("[")) {
      ++depth;
    } else if (is("}") || is(">") || is("]")) {
      if (depth == 0) return false;  // the list's own "]"
      --depth;
    } else if (depth == 0 && is(",")) {
      reading = Reading::kList;
    }
    return true;
  };
  for_each_token(text.substr(line_start), visit);
  return values;
}

}  // namespace clustersim
