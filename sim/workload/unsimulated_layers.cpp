// The parts of a transformer that are described in the catalog but not simulated in serving.
#include "sim/workload/unsimulated_layers.h"

namespace clustersim {

std::string unsimulated_layers(const schema::Transformer& t) {
  std::string out;
  const auto add = [&out](const char* part) {
    out += (out.empty() ? "" : " and ") + std::string(part);
  };
  if (t.has_compressed_sparse_attention()) {
    add("compressed sparse attention (DeepSeek V4's windows, compressed keys and indexer)");
  }
  if (t.has_hyper_connections()) add("hyper-connections (several residual streams)");
  return out;
}

}  // namespace clustersim
