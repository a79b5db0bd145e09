// Checks of a serving scenario whose model has compressed sparse attention (DeepSeek V4): what its
// serving simulates is continuous batching on colocated replicas, one beam, one token per
// sequence and iteration, attention tensor-parallel (compressed_attention_time.h,
// compressed_kv_cache.h). Static batching and benchmark runs (static batches), beam search,
// speculative decoding (its MTP layer), disaggregated prefill (the compressed cache's transfer)
// and attention data parallelism are not simulated for it: each is an error at its field.
#pragma once

#include "sim/io/field_checker.h"
#include "sim/serve/serving_scenario.h"

namespace clustersim {

// Requires: loaded.model is set.
void check_compressed_attention_serving(const FieldChecker& root,
                                        const LoadedServingScenario& loaded);

}  // namespace clustersim
