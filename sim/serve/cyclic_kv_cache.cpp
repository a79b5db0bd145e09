// A sliding-window model's KV cache per sequence in a cyclic paged pool.
#include "sim/serve/cyclic_kv_cache.h"

namespace clustersim {

int cyclic_kv_window_tokens(bool runtime_cyclic, const InferenceShape& shape) {
  const bool every_layer_windowed =
      shape.layers > 0 && shape.windowed_layers == shape.layers && !shape.window_chunked;
  return runtime_cyclic && every_layer_windowed ? shape.window_tokens : 0;
}

}  // namespace clustersim
