// Checks of serving a compressed sparse attention model.
#include "sim/serve/compressed_attention_checks.h"

#include <string>

#include "sim/serve/beam_search.h"
#include "sim/serve/serving_checks.h"

namespace clustersim {

namespace s = schema;

void check_compressed_attention_serving(const FieldChecker& root,
                                        const LoadedServingScenario& loaded) {
  if (!loaded.model->transformer().has_compressed_sparse_attention()) return;
  const std::string model = "\"" + loaded.model->name() + "\"";
  const std::string unsimulated = " is not simulated for " + model +
                                  " (compressed sparse attention): continuous batching on "
                                  "colocated replicas, one beam, attention tensor-parallel";
  const s::ServingScenario& m = loaded.scenario();
  refuse_static_batching(root, ("static batching" + unsimulated).c_str());
  if (m.benchmark_size() > 0) {
    root.error("benchmark", "a benchmark run (a static batch)" + unsimulated, 0);
  }
  if (m.has_traffic() && beam_width(m.traffic()) > 1) {
    root.child("traffic").error("beam_width", "beam search" + unsimulated);
  }
  const s::Deployment& d = m.deployment();
  const FieldChecker deployment = root.child("deployment");
  if (d.has_speculative_decoding()) {
    deployment.error("speculative_decoding",
                     "speculative decoding (its multi-token-prediction layer)" + unsimulated);
  }
  const auto& drafts = m.sweep().draft_tokens();
  for (int i = 0; i < drafts.size(); ++i) {
    if (drafts[i] > 0) {
      root.child("sweep").error("draft_tokens", "speculative decoding" + unsimulated, i);
    }
  }
  if (d.has_disaggregation() || m.sweep().prefill_replicas_size() > 0 ||
      m.sweep().decode_replicas_size() > 0) {
    const bool deployed = d.has_disaggregation();
    (deployed ? deployment : root.child("sweep"))
        .error(deployed ? "disaggregation"
                        : (m.sweep().prefill_replicas_size() > 0 ? "prefill_replicas"
                                                                 : "decode_replicas"),
               "disaggregated prefill (the compressed cache's transfer)" + unsimulated);
  }
  if (d.attention_data_parallel()) {
    deployment.error("attention_data_parallel", "attention data parallelism" + unsimulated);
  }
  const auto& adp = m.sweep().attention_data_parallel();
  for (int i = 0; i < adp.size(); ++i) {
    if (adp[i]) {
      root.child("sweep").error("attention_data_parallel",
                                "attention data parallelism" + unsimulated, i);
    }
  }
}

}  // namespace clustersim
