// Expansion of a sweep's `range` entries into the values of the integer axes they name, checked
// first (an unknown or non-integer axis, an empty or endless range) so that every later check
// sees plain lists.
#pragma once

#include "sim/io/field_checker.h"
#include "sim/io/schema/scenario.pb.h"

namespace clustersim {

// Appends each range's values to its axis of `*sweep`, the message `checker` checks; reports
// problems at the range. Ranges with a problem add nothing.
void expand_axis_ranges(const FieldChecker& checker, schema::Sweep* sweep);

}  // namespace clustersim
