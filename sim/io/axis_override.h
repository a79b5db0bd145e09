// A value written beside the sweep axis that replaces it in every configuration: the value is
// still checked as if no axis were given (by the checks of its own field), and when the axis's
// values leave it out it is never simulated, which a located warning says. A value that is one of
// the axis's values is the configuration a reader sees first (the shipped DualPipe scenario's
// micro_batch_size, the speculative ones' draft_tokens, which their message requires): no warning.
#pragma once

#include <string_view>

#include "sim/io/field_checker.h"

namespace clustersim {

// Warns at `owner`'s `field` when it is set, `sweep`'s `axis` lists values and none of them is
// the field's value. Requires: `field` is a singular field of `owner`'s message and `axis` a
// repeated field of `sweep`'s of the same type.
void warn_if_replaced_by_axis(const FieldChecker& owner, std::string_view field,
                              const FieldChecker& sweep, std::string_view axis);

}  // namespace clustersim
