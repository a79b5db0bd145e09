// Checks of deployment.scheduler.cuda_graph_batch_sizes.
#include "sim/serve/cuda_graph_checks.h"

#include "sim/io/schema/serving.pb.h"
#include "sim/serve/beam_search.h"
#include "sim/serve/serving_checks.h"

namespace clustersim {

namespace s = schema;

void check_cuda_graph_batch_sizes(const FieldChecker& root) {
  const auto& m = static_cast<const s::ServingScenario&>(root.message());
  const s::Deployment& d = m.deployment();
  const auto& sizes = d.scheduler().cuda_graph_batch_sizes();
  if (sizes.empty()) return;
  const FieldChecker scheduler = root.child("deployment").child("scheduler");
  for (int i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 1 || (i > 0 && sizes[i] <= sizes[i - 1])) {
      scheduler.error("cuda_graph_batch_sizes",
                      "must be positive and strictly increasing (TensorRT-LLM's "
                      "cuda_graph_config.batch_sizes, sorted)",
                      i);
    }
  }
  refuse_static_batching(
      root,
      "CUDA-graph padding (scheduler.cuda_graph_batch_sizes) applies to "
      "CONTINUOUS batching: it is the in-flight batching runtime's (TensorRT-LLM "
      "PyTorch backend's _get_padded_batch); a static batch decodes its own "
      "batch size from its prefill to its last token, unpadded");
  if (d.has_speculative_decoding()) {
    // NVIDIA/TensorRT-LLM cuda_graph_runner.py _get_padded_batch gives each dummy request the
    // runtime's draft length, and a graph is captured per (batch, draft length).
    scheduler.error("cuda_graph_batch_sizes",
                    "CUDA-graph padding with speculative decoding is not simulated (TensorRT-LLM "
                    "pads a verification batch with dummy requests of k draft tokens each, "
                    "which the drafter runs too): drop one",
                    0);
  }
  if (m.has_traffic() && beam_width(m.traffic()) > 1) {  // benchmark runs are static batches
    scheduler.error("cuda_graph_batch_sizes",
                    "CUDA-graph padding with beam search is not simulated (a graph's batch counts "
                    "requests of max_beam_width beams each): drop one",
                    0);
  }
}

}  // namespace clustersim
