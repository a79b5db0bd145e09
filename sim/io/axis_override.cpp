// The warning for a fixed value that its sweep axis replaces without ever simulating it.
#include "sim/io/axis_override.h"

#include <google/protobuf/text_format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace clustersim {
namespace {

namespace pb = google::protobuf;

// A field's value (element `index` when repeated) as a scenario writes it: 4, "aws.p5.48xlarge",
// INT8, true, or { weights: INT8 } for a message.
std::string value_text(const pb::Message& message, std::string_view field, int index) {
  const pb::FieldDescriptor* d = message.GetDescriptor()->FindFieldByName(std::string(field));
  pb::TextFormat::Printer printer;
  printer.SetSingleLineMode(true);
  std::string text;
  printer.PrintFieldValueToString(message, d, index, &text);
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return d->message_type() != nullptr ? "{ " + text + " }" : text;
}

}  // namespace

void warn_if_replaced_by_axis(const FieldChecker& owner, std::string_view field,
                              const FieldChecker& sweep, std::string_view axis) {
  if (!owner.has(field) || sweep.size(axis) == 0) return;
  const std::string fixed = value_text(owner.message(), field, -1);
  std::vector<std::string> values;
  for (int i = 0; i < sweep.size(axis); ++i) values.push_back(value_text(sweep.message(), axis, i));
  if (std::find(values.begin(), values.end(), fixed) != values.end()) return;
  // An axis a range fills may hold thousands of values: the first few say which.
  constexpr size_t kListed = 8;
  std::string listed;
  for (size_t i = 0; i < std::min(values.size(), kListed); ++i) {
    listed += (i == 0 ? "" : ", ") + values[i];
  }
  if (values.size() > kListed) listed += ", ... (" + std::to_string(values.size()) + " values)";
  owner.warning(field, fixed + " is never simulated: " + sweep.path(axis) + " (" + listed +
                           ") replaces it in every configuration");
}

}  // namespace clustersim
