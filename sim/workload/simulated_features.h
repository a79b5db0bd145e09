// Which features of a model's shape the training-step and serving models simulate. The schema can
// describe more (it is checked against published parameter counts first); a scenario that names a
// model using a feature not simulated yet is refused where it names it, rather than timed wrong.
#pragma once

#include <string>

#include "sim/io/schema/model.pb.h"

namespace clustersim {

enum class Simulator { kTrainingStep, kServing };

// Requires: a transformer that passed the catalog checks.
// Returns "" when every feature the shape uses is simulated by `simulator`, else the first that
// is not, as a sentence ending "... not simulated [in serving] yet".
std::string unsimulated_feature(const schema::Transformer& t, Simulator simulator);

}  // namespace clustersim
