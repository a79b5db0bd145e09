// Where each element of a repeated field written in list syntax (`axis: [8, 3, 0]`) starts.
//
// protobuf's ParseInfoTree records one location per statement of a repeated field, at the field's
// name: `axis: 8 axis: 3` gives each element its own, but every element of `axis: [8, 3, 0]`
// shares the list's. The elements' own places are read from the file's text, which the parser
// has accepted, with the parser's own tokenizer (so strings, comments and nested messages are
// read as it read them).
#pragma once

#include <google/protobuf/text_format.h>

#include <string_view>
#include <vector>

namespace clustersim {

// A place in a file as protobuf's parser records it: 0-based line, and 0-based column with a tab
// advancing to the next multiple of 8.
using TextPosition = google::protobuf::TextFormat::ParseLocation;

// The start of each value written by the statement of a repeated field that begins at
// `statement` (where the parser recorded it: the field's name) in `text`: for `name: [a, b]` the
// first token of each element (the `{` or `<` of a message, the `-` of a negative number); for
// `name: a` or `name { ... }`, `statement` alone; for `name: []`, none.
// Requires: `text` parsed, and `statement` is a location the parser recorded in it.
std::vector<TextPosition> statement_values(std::string_view text, TextPosition statement);

}  // namespace clustersim
