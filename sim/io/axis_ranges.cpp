// Arithmetic and geometric ranges appended to repeated int32 fields of Sweep by reflection.
#include "sim/io/axis_ranges.h"

#include <string>

#include "sim/util/closest_name.h"

namespace clustersim {
namespace {

namespace pb = google::protobuf;

constexpr int kMostValues = 100'000;  // per range: more is a typo, not a sweep

// The integer axes of Sweep, for the "did you mean" of an unknown name.
std::vector<std::string> integer_axes() {
  std::vector<std::string> names;
  const pb::Descriptor* d = schema::Sweep::descriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    if (f->is_repeated() && f->cpp_type() == pb::FieldDescriptor::CPPTYPE_INT32) {
      names.push_back(f->name());
    }
  }
  return names;
}

}  // namespace

void expand_axis_ranges(const FieldChecker& checker, schema::Sweep* sweep) {
  const int count = sweep->range_size();
  for (int i = 0; i < count; ++i) {
    const schema::AxisRange range = sweep->range(i);
    const FieldChecker r = checker.child("range", i);
    const bool bounded = r.require("from") && r.at_least("from", 1) && r.require("to") &&
                         r.at_least("to", range.from());
    const bool paced = r.at_least("step", 1) && r.at_least("factor", 2);
    if (range.has_step() && range.has_factor())
      r.error("factor", "and step both given: choose one");
    if (!r.require("axis")) continue;
    const pb::FieldDescriptor* axis = schema::Sweep::descriptor()->FindFieldByName(range.axis());
    if (axis == nullptr || !axis->is_repeated() ||
        axis->cpp_type() != pb::FieldDescriptor::CPPTYPE_INT32) {
      r.error("axis", "\"" + range.axis() + "\" is not an integer axis of the sweep" +
                          did_you_mean(range.axis(), integer_axes()));
      continue;
    }
    if (!bounded || !paced || (range.has_step() && range.has_factor())) continue;
    std::vector<int> values;
    for (int64_t v = range.from(); v <= range.to();
         v = range.has_factor() ? v * range.factor() : v + (range.has_step() ? range.step() : 1)) {
      if (values.size() == static_cast<size_t>(kMostValues)) {
        r.error("to", "gives more than " + std::to_string(kMostValues) + " values");
        values.clear();
        break;
      }
      values.push_back(static_cast<int>(v));
    }
    // A pace past `to` at once: the range is `from` alone, which no one writes as a range
    // (a factor of 2^31 - 1 from 1 to 4 swept 1 only; tools/input_audit.py).
    if (values.size() == 1 && range.to() > range.from()) {
      r.error(range.has_factor() ? "factor" : "step",
              "goes from " + std::to_string(range.from()) + " past to (" +
                  std::to_string(range.to()) + ") in one step: the range holds from alone");
      continue;
    }
    for (int v : values) sweep->GetReflection()->AddInt32(sweep, axis, v);
  }
}

}  // namespace clustersim
