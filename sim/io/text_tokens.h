// Tokenizes text-format text as protobuf's text parser does (its tokenizer, `#` comments, a float
// written with an `f`), for the code that reads a file's text again after parsing it.
#pragma once

#include <google/protobuf/io/tokenizer.h>

#include <functional>
#include <string_view>

namespace clustersim {

// Calls `visit(token, next)` for each token of `text`, `next` being the token after it (TYPE_END
// at the end), until `visit` returns false. Lines and columns are counted from `text`'s start, as
// the tokenizer counts them (0-based, a tab advancing to the next multiple of 8 columns). Errors
// of the tokenizer are ignored: the parser, which read the same text, has reported them.
void for_each_token(
    std::string_view text,
    const std::function<bool(const google::protobuf::io::Tokenizer::Token&,
                             const google::protobuf::io::Tokenizer::Token&)>& visit);

}  // namespace clustersim
