// Turns the errors of protobuf's text-format parser into the project's diagnostics: at the
// file:line:column of the offending token, the field path as the semantic checks print it
// ("parallelism.moe", "model[2].transformer") and a plain message instead of protobuf's internal
// type names ("job: no field named "global_batch_sise" (did you mean "global_batch_size"?)"); the
// tokenizer's errors too (a malformed number or string, a stray character), and two things the
// parser takes without a word: a byte that is not UTF-8, an integer with a leading zero (octal).
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/tokenizer.h>

#include <string>

#include "sim/util/diagnostics.h"

namespace clustersim {

// Collects the parser's first error (it stops there; a tokenizer error before it is the first) for
// the text `text` of file `path`, parsed as a message of type `root`. `text` must outlive the
// collector.
class ParseErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  ParseErrorCollector(const std::string& path, const std::string& text,
                      const google::protobuf::Descriptor* root, Diagnostics* diagnostics)
      : path_(path), text_(text), root_(root), diagnostics_(diagnostics) {}

  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override;
  void AddWarning(int line, google::protobuf::io::ColumnNumber column,
                  const std::string& message) override;

 private:
  std::string path_;
  const std::string& text_;
  const google::protobuf::Descriptor* root_;
  Diagnostics* diagnostics_;
  bool reported_error_ = false;
};

// Reports the first byte of `text` (the contents of `path`) that is not UTF-8, at its line and
// column (counted as the parser counts them); returns whether there was one. protobuf reads such
// a byte inside a string as it is, which printed garbled names and wrote invalid UTF-8 to results.
bool report_invalid_utf8(const std::string& path, const std::string& text,
                         Diagnostics* diagnostics);

// Reports the first integer written with a leading zero ("0100"), which the parser reads as octal
// (64) without a word, at its line and field; returns whether there was one. A double written so
// is the parser's error already.
bool report_octal_integers(const std::string& path, const std::string& text,
                           const google::protobuf::Descriptor* root, Diagnostics* diagnostics);

}  // namespace clustersim
