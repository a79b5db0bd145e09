// Reads one protobuf text-format file into a message and remembers where each field was written,
// so that later checks can point at file:line:column.
#pragma once

#include <google/protobuf/message.h>
#include <google/protobuf/text_format.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "sim/util/diagnostics.h"

namespace clustersim {

// A parsed file. Immutable after parse(); the tree stays valid as long as the object lives.
template <class Message>
struct TextFile {
  std::string path;
  std::string text;  // as parsed: the file's contents less a leading kUtf8ByteOrderMark
  Message message;
  std::unique_ptr<google::protobuf::TextFormat::ParseInfoTree> tree =
      std::make_unique<google::protobuf::TextFormat::ParseInfoTree>();
};

// Parses `text` (the contents of `path`, less a leading kUtf8ByteOrderMark) into `message`,
// recording field locations in `tree`.
// A syntax error, an unknown field or enum value, a field given twice, a byte that is not UTF-8
// or an integer with a leading zero is reported as "path:line:col: field.path: message" (with a
// "did you mean" for near misses; see parse_error.h) and returns false.
bool parse_text(const std::string& path, const std::string& text,
                google::protobuf::Message* message,
                google::protobuf::TextFormat::ParseInfoTree* tree, Diagnostics* diagnostics);

// Reads and parses the file at `path`. Returns nullptr (with a diagnostic) when the file cannot
// be read or does not parse.
template <class Message>
std::unique_ptr<TextFile<Message>> read_text_file(const std::string& path,
                                                  Diagnostics* diagnostics);

// The largest input file: protobuf's text parser reads at most 2^31 bytes; the longest trace
// (kMaxRequests lines) at up to 32 bytes a line.
inline constexpr size_t kMaxInputFileBytes = size_t{1} << 29;

// The UTF-8 byte-order mark some editors and spreadsheets write at a file's start. Input files are
// read as if it were absent: it is invisible where the file is edited.
inline constexpr std::string_view kUtf8ByteOrderMark = "\xEF\xBB\xBF";

// Reads a whole file. Returns false (with a diagnostic naming the file) when it cannot, or when
// it holds more than kMaxInputFileBytes (a device such as /dev/zero never ends).
bool read_whole_file(const std::string& path, std::string* contents, Diagnostics* diagnostics);

template <class Message>
std::unique_ptr<TextFile<Message>> read_text_file(const std::string& path,
                                                  Diagnostics* diagnostics) {
  auto file = std::make_unique<TextFile<Message>>();
  if (!read_whole_file(path, &file->text, diagnostics)) return nullptr;
  if (file->text.starts_with(kUtf8ByteOrderMark)) file->text.erase(0, kUtf8ByteOrderMark.size());
  file->path = path;
  if (!parse_text(path, file->text, &file->message, file->tree.get(), diagnostics)) return nullptr;
  return file;
}

}  // namespace clustersim
