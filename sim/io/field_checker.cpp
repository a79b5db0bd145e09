// Field-level checks with located diagnostics.
#include "sim/io/field_checker.h"

#include <cmath>
#include <set>

#include "sim/io/list_elements.h"
#include "sim/util/check.h"
#include "sim/util/number_format.h"

namespace clustersim {

namespace pb = google::protobuf;

const pb::FieldDescriptor* FieldChecker::descriptor(std::string_view field) const {
  const pb::FieldDescriptor* d = message_->GetDescriptor()->FindFieldByName(std::string(field));
  CLUSTERSIM_CHECK(d != nullptr, "FieldChecker: no such field in the schema");
  return d;
}

FieldChecker FieldChecker::child(std::string_view field, int index) const {
  const pb::FieldDescriptor* d = descriptor(field);
  const pb::Reflection* r = message_->GetReflection();
  const pb::Message& nested =
      d->is_repeated() ? r->GetRepeatedMessage(*message_, d, index) : r->GetMessage(*message_, d);
  const Tree* nested_tree =
      tree_ ? tree_->GetTreeForNested(d, d->is_repeated() ? index : -1) : nullptr;
  return FieldChecker(file_, *text_, nested, nested_tree, path(field, index),
                      location(field, index), diagnostics_);
}

SourceLocation FieldChecker::location(std::string_view field, int index) const {
  if (tree_ == nullptr) return self_;
  const pb::FieldDescriptor* d = descriptor(field);
  const pb::TextFormat::ParseLocation where =
      d->is_repeated() ? element_location(d, index) : tree_->GetLocation(d, -1);
  if (where.line < 0) return self_;
  return {file_, where.line + 1, where.column + 1};
}

// The tree records one location per statement of a repeated field, at its name: each element's
// own for `field: a field: b`, one shared by all elements of `field: [a, b]` (list_elements.h).
// While there are as many statements as elements, each is its element's; otherwise the statements
// are read from the text in order and each element of a list of several is located at its start.
// (A list of one keeps its name's location, as a statement of one value does.)
pb::TextFormat::ParseLocation FieldChecker::element_location(const pb::FieldDescriptor* d,
                                                             int index) const {
  const int elements = message_->GetReflection()->FieldSize(*message_, d);
  if (index < 0 || index >= elements) return tree_->GetLocation(d, 0);
  if (tree_->GetLocation(d, elements - 1).line >= 0) return tree_->GetLocation(d, index);
  int first = 0;  // the index of the statement's first element
  for (int statement = 0;; ++statement) {
    const pb::TextFormat::ParseLocation at = tree_->GetLocation(d, statement);
    if (at.line < 0) return tree_->GetLocation(d, 0);
    const std::vector<TextPosition> values = statement_values(*text_, at);
    const int count = static_cast<int>(values.size());
    if (index < first + count) return count > 1 ? values[index - first] : at;
    first += count;
  }
}

std::string FieldChecker::path(std::string_view field, int index) const {
  std::string text = path_.empty() ? std::string(field) : path_ + "." + std::string(field);
  if (index >= 0) text += "[" + std::to_string(index) + "]";
  return text;
}

void FieldChecker::error(std::string_view field, const std::string& message, int index) const {
  diagnostics_->add_error(location(field, index), path(field, index), message);
}

void FieldChecker::warning(std::string_view field, const std::string& message, int index) const {
  diagnostics_->add_warning(location(field, index), path(field, index), message);
}

void FieldChecker::error_here(const std::string& message) const {
  diagnostics_->add_error(self_, path_, message);
}

bool FieldChecker::has(std::string_view field) const {
  const pb::FieldDescriptor* d = descriptor(field);
  const pb::Reflection* r = message_->GetReflection();
  return d->is_repeated() ? r->FieldSize(*message_, d) > 0 : r->HasField(*message_, d);
}

int FieldChecker::size(std::string_view field) const {
  return message_->GetReflection()->FieldSize(*message_, descriptor(field));
}

double FieldChecker::number(std::string_view field, int index) const {
  const pb::FieldDescriptor* d = descriptor(field);
  const pb::Reflection* r = message_->GetReflection();
  const pb::Message& m = *message_;
  const bool rep = d->is_repeated();
  switch (d->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      return rep ? r->GetRepeatedDouble(m, d, index) : r->GetDouble(m, d);
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
      return rep ? r->GetRepeatedFloat(m, d, index) : r->GetFloat(m, d);
    case pb::FieldDescriptor::CPPTYPE_INT32:
      return rep ? r->GetRepeatedInt32(m, d, index) : r->GetInt32(m, d);
    case pb::FieldDescriptor::CPPTYPE_INT64:
      return static_cast<double>(rep ? r->GetRepeatedInt64(m, d, index) : r->GetInt64(m, d));
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      return rep ? r->GetRepeatedUInt32(m, d, index) : r->GetUInt32(m, d);
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      return static_cast<double>(rep ? r->GetRepeatedUInt64(m, d, index) : r->GetUInt64(m, d));
    default:
      CLUSTERSIM_CHECK(false, "FieldChecker::number on a non-numeric field");
      return 0;
  }
}

bool FieldChecker::require(std::string_view field) const {
  if (has(field)) return non_empty(field);
  error(field, "is required");
  return false;
}

bool FieldChecker::non_empty(std::string_view field) const {
  const pb::FieldDescriptor* d = descriptor(field);
  if (d->is_repeated() || d->cpp_type() != pb::FieldDescriptor::CPPTYPE_STRING || !has(field) ||
      !message_->GetReflection()->GetString(*message_, d).empty()) {
    return true;
  }
  error(field, "is empty");
  return false;
}

bool FieldChecker::require_enum(std::string_view field) const {
  if (!require(field)) return false;
  const pb::EnumValueDescriptor* value =
      message_->GetReflection()->GetEnum(*message_, descriptor(field));
  if (value->number() != 0) return true;
  error(field, "must be set to a value other than " + value->name());
  return false;
}

template <class Predicate>
bool FieldChecker::check_values(std::string_view field, const std::string& expectation,
                                Predicate ok) const {
  const bool repeated = descriptor(field)->is_repeated();
  const int count = repeated ? size(field) : (has(field) ? 1 : 0);
  bool all_ok = true;
  for (int i = 0; i < count; ++i) {
    const int index = repeated ? i : -1;
    const double value = number(field, index);
    if (std::isfinite(value) && ok(value)) continue;
    const std::string finite = std::isfinite(value) ? "" : "a finite number ";
    error(field, "must be " + finite + expectation + ", got " + format_number(value), index);
    all_ok = false;
  }
  return all_ok;
}

bool FieldChecker::positive(std::string_view field) const {
  return check_values(field, "> 0", [](double v) { return v > 0; });
}

bool FieldChecker::non_negative(std::string_view field) const {
  return check_values(field, ">= 0", [](double v) { return v >= 0; });
}

bool FieldChecker::at_least(std::string_view field, double minimum) const {
  return check_values(field, ">= " + format_number(minimum),
                      [minimum](double v) { return v >= minimum; });
}

bool FieldChecker::distinct_lists(const pb::Descriptor* skip) const {
  const pb::Reflection& reflection = *message_->GetReflection();
  const pb::Descriptor* type = message_->GetDescriptor();
  bool distinct = true;
  for (int f = 0; f < type->field_count(); ++f) {
    const pb::FieldDescriptor* field = type->field(f);
    if (!field->is_repeated() || (skip != nullptr && field->message_type() == skip)) continue;
    std::set<std::string> seen;
    for (int i = 0; i < reflection.FieldSize(*message_, field); ++i) {
      std::string text;
      if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
        text = "{ " + reflection.GetRepeatedMessage(*message_, field, i).ShortDebugString() + " }";
      } else {
        pb::TextFormat::PrintFieldValueToString(*message_, field, i, &text);
      }
      if (!seen.insert(text).second) {
        error(field->name(), text + " is listed twice", i);
        distinct = false;
      }
    }
  }
  return distinct;
}

bool FieldChecker::in_range(std::string_view field, double low, double high) const {
  return check_values(field, "in [" + format_number(low) + ", " + format_number(high) + "]",
                      [low, high](double v) { return v >= low && v <= high; });
}

}  // namespace clustersim
