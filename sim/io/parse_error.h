// Turns the errors of protobuf's text-format parser into the project's diagnostics: at the
// file:line:column of the offending token, the field path as the semantic checks print it
// ("parallelism.moe", "model[2].transformer") and a plain message instead of protobuf's internal
// type names ("job: no field named "global_batch_sise" (did you mean "global_batch_size"?)").
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/tokenizer.h>

#include <string>

#include "sim/util/diagnostics.h"

namespace clustersim {

// Collects the parser's first error (it stops there) for the text `text` of file `path`, parsed as
// a message of type `root`. `text` must outlive the collector.
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
};

}  // namespace clustersim
