// Tokenizing text as protobuf's text parser does.
#include "sim/io/text_tokens.h"

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

namespace clustersim {
namespace {

namespace pb = google::protobuf;

class SilentCollector : public pb::io::ErrorCollector {
 public:
  void AddError(int, pb::io::ColumnNumber, const std::string&) override {}
};

}  // namespace

void for_each_token(std::string_view text,
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

}  // namespace clustersim
