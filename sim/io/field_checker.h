// Checks the fields of one message from a parsed file and reports each problem at the line where
// the field was written (or where its message starts, when the field is missing), with the field's
// path from the file's root, e.g. "instance[3].network.total_gbit_per_s".
#pragma once

#include <google/protobuf/message.h>
#include <google/protobuf/text_format.h>

#include <string>
#include <string_view>

#include "sim/io/text_file.h"
#include "sim/util/diagnostics.h"

namespace clustersim {

// A cheap, copyable view. Lifetimes: the file's text, message and tree and the diagnostics must
// outlive it.
class FieldChecker {
 public:
  using Tree = google::protobuf::TextFormat::ParseInfoTree;

  template <class Message>
  static FieldChecker root(const TextFile<Message>& file, Diagnostics* diagnostics) {
    return FieldChecker(file.path, file.text, file.message, file.tree.get(), "", {file.path, 1, 1},
                        diagnostics);
  }

  // The checker of a set message field (element `index` when repeated).
  // Requires: `field` names a message field of this message.
  FieldChecker child(std::string_view field, int index = -1) const;

  // Where the field (element `index` when repeated) was written; this message's own location
  // when the field is absent. An element of a list (`field: [a, b]`) is where it starts (a
  // message's `{`); a repeated field as a whole (index -1) is where it is first named.
  SourceLocation location(std::string_view field, int index = -1) const;
  // "parent.field" or "parent.field[index]".
  std::string path(std::string_view field, int index = -1) const;

  void error(std::string_view field, const std::string& message, int index = -1) const;
  void warning(std::string_view field, const std::string& message, int index = -1) const;
  // A problem with the message as a whole.
  void error_here(const std::string& message) const;

  // Value of a numeric field (element `index` when repeated) as a double.
  // Requires: the field exists and is numeric.
  double number(std::string_view field, int index = -1) const;
  bool has(std::string_view field) const;
  int size(std::string_view field) const;  // elements of a repeated field

  // Common checks; each reports its own error and returns true when the check passes.
  // Present (non-empty when repeated) and, a string, not "": an empty name, group or reference
  // printed rows without a label and loaded a catalog entry no scenario can name.
  bool require(std::string_view field) const;
  // When present, a string other than "" (the optional labels: a scenario's name, a benchmark's
  // group).
  bool non_empty(std::string_view field) const;
  // When present: finite and inside the range. Each scalar element of a repeated field is checked.
  bool positive(std::string_view field) const;
  bool non_negative(std::string_view field) const;
  bool at_least(std::string_view field, double minimum) const;
  bool in_range(std::string_view field, double low, double high) const;
  bool require_positive(std::string_view field) const { return require(field) && positive(field); }
  // A rate of hardware (a bandwidth in GB/s, Gbit/s or MB/s, a peak in TFLOP/s): > 0 and from
  // kMinRate to kMaxRate of its unit. Slower than any link or chip built (a 1 Gbit/s NIC, a T4's 65
  // TFLOP/s), a rate near zero made one step outlast the 107 days the picosecond clock spans; a
  // rate of 1e300 GB/s made a transfer's time overflow to an event in the past. kMaxRate is
  // several thousand times the fastest catalog rate (147,600 GB/s, NVLink switch reduction operands).
  bool rate(std::string_view field) const {
    return positive(field) && in_range(field, kMinRate, kMaxRate);
  }
  bool require_rate(std::string_view field) const { return require(field) && rate(field); }
  // A published figure to score against (a step time, TFLOP/s, tokens/s, milliseconds, GB): > 0
  // and from kMinRate to kMaxRate of its unit. A published TFLOP/s of 1e-300 printed an error of
  // 2.7e302 % (300 digits), one of 1e300 a 300-digit figure.
  bool figure(std::string_view field) const { return rate(field); }
  // A latency in microseconds: >= 0 and at most kMaxLatency_us (a second), for the same reason.
  bool latency_us(std::string_view field) const { return in_range(field, 0, kMaxLatency_us); }
  // A memory size of a GPU, a host or a runtime's reserve, in GiB: from 0 to kMaxMemory_gib (a
  // PiB, thousands of times any GPU's or host's). A CUDA context of 1e300 GiB printed a step's
  // memory as inf and its shortfall as -9223372036854775808 GiB.
  bool memory_gib(std::string_view field) const { return in_range(field, 0, kMaxMemory_gib); }
  // A CPU clock in GHz: from kMinClock_ghz to kMaxClock_ghz (server CPUs run at 1.5 to 6). A
  // clock of 1e-300 GHz made a data-loading worker's sample outlast the clock the simulation spans.
  bool clock_ghz(std::string_view field) const {
    return positive(field) && in_range(field, kMinClock_ghz, kMaxClock_ghz);
  }
  static constexpr double kMinClock_ghz = 0.1;
  static constexpr double kMaxClock_ghz = 10;
  static constexpr double kMaxMemory_gib = 1 << 20;
  static constexpr double kMinRate = 1e-3;
  static constexpr double kMaxRate = 1e9;
  static constexpr double kMaxLatency_us = 1e6;
  // Each element of every repeated field of this message listed once (an axis or a list of
  // billing modes naming a value twice gives every row twice), but those of message type `skip`.
  // Reports each repeat at its element; true when there is none.
  bool distinct_lists(const google::protobuf::Descriptor* skip = nullptr) const;
  // An enum field that must be present and not its *_UNSPECIFIED zero value.
  bool require_enum(std::string_view field) const;

  const google::protobuf::Message& message() const { return *message_; }
  const std::string& file() const { return file_; }
  const std::string& path_prefix() const { return path_; }
  SourceLocation self_location() const { return self_; }
  Diagnostics* diagnostics() const { return diagnostics_; }

 private:
  FieldChecker(const std::string& file, const std::string& text,
               const google::protobuf::Message& message, const Tree* tree, std::string path,
               SourceLocation self, Diagnostics* diagnostics)
      : file_(file),
        text_(&text),
        message_(&message),
        tree_(tree),
        path_(std::move(path)),
        self_(self),
        diagnostics_(diagnostics) {}

  const google::protobuf::FieldDescriptor* descriptor(std::string_view field) const;
  // Where element `index` of repeated field `d` starts (line -1 when the tree lacks it).
  google::protobuf::TextFormat::ParseLocation element_location(
      const google::protobuf::FieldDescriptor* d, int index) const;
  // Checks every present value of `field` with `ok`; `expectation` completes "must be ...".
  template <class Predicate>
  bool check_values(std::string_view field, const std::string& expectation, Predicate ok) const;

  std::string file_;
  const std::string* text_;  // the file's text, as parsed
  const google::protobuf::Message* message_;
  const Tree* tree_;
  std::string path_;
  SourceLocation self_;
  Diagnostics* diagnostics_;
};

}  // namespace clustersim
