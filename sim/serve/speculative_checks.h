// Checks of a serving scenario's speculative decoding (deployment.speculative_decoding and
// sweep.draft_tokens), each problem at its field's line: a draft that exists and can verify
// against the target, draft tokens and acceptance rate in range, and a deployment the simulation
// runs it on (continuous batching, colocated, one pipeline stage).
#pragma once

#include "sim/io/catalog.h"
#include "sim/io/field_checker.h"
#include "sim/serve/serving_scenario.h"

namespace clustersim {

// The most draft tokens per iteration: chains beyond a few tokens keep almost nothing more
// (alpha^k), and TensorRT-LLM's draft lengths are single digits.
inline constexpr int kMaxDraftTokens = 64;

// Checks `root`'s scenario; resolves loaded->draft_model (null without a draft model).
void check_speculative_decoding(const FieldChecker& root, const Catalog& catalog,
                                LoadedServingScenario* loaded);

}  // namespace clustersim
