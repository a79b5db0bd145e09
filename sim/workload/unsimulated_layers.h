// The parts of a transformer the catalog describes (and the training step simulates) but serving
// does not yet: a serving scenario naming such a model is refused.
#pragma once

#include <string>

#include "sim/io/schema/model.pb.h"

namespace clustersim {

// What of `t` is not simulated, as a phrase ("DeepSeek V4's compressed sparse attention"); empty
// when everything is.
std::string unsimulated_layers(const schema::Transformer& t);

}  // namespace clustersim
