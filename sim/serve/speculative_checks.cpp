// Checking speculative decoding's fields against the model, the catalog and the deployment.
#include "sim/serve/speculative_checks.h"

#include <string>

#include "sim/io/catalog_reference.h"
#include "sim/serve/serving_checks.h"
#include "sim/util/number_format.h"
#include "sim/workload/inference_shape.h"

namespace clustersim {
namespace {

namespace s = schema;

// The draft model must be a decoder transformer of the target's vocabulary that every tensor
// parallel degree of the deployment splits.
void check_draft_model(const FieldChecker& spec, const Catalog& catalog,
                       LoadedServingScenario* loaded) {
  const s::ServingScenario& m = loaded->scenario();
  const std::string& name = m.deployment().speculative_decoding().draft_model();
  const s::Model* draft =
      resolve_reference(spec, "draft_model", -1, name, catalog.models(), "model");
  if (draft == nullptr) return;
  if (!draft->has_transformer() || draft->transformer().kind() != s::DECODER ||
      draft->transformer().has_hybrid_layer_pattern()) {
    spec.error("draft_model", "\"" + name + "\" is not a decoder transformer (hybrid models are "
                              "not simulated): it cannot draft tokens");
    return;
  }
  if (loaded->model == nullptr) return;
  const s::Transformer& d = draft->transformer();
  const s::Transformer& t = loaded->model->transformer();
  if (d.vocab_size() != t.vocab_size()) {
    spec.error("draft_model", "\"" + name + "\" has a vocabulary of " +
                                  std::to_string(d.vocab_size()) + " tokens, \"" + m.model() +
                                  "\" of " + std::to_string(t.vocab_size()) +
                                  ": the target cannot verify its tokens");
    return;
  }
  std::vector<int> degrees(m.sweep().tensor_parallel().begin(), m.sweep().tensor_parallel().end());
  if (degrees.empty()) {
    degrees.push_back(m.deployment().has_tensor_parallel() ? m.deployment().tensor_parallel() : 1);
  }
  const s::SpeculativeDecoding& sd = m.deployment().speculative_decoding();
  if (sd.has_draft_tensor_parallel()) {
    const int own = sd.draft_tensor_parallel();
    for (int tp : degrees) {
      if (own == 1 || own == tp || tp < 1) continue;
      spec.error("draft_tensor_parallel", "must be 1 or the target's tensor_parallel (" +
                                              std::to_string(tp) + "), got " +
                                              std::to_string(own));
      return;
    }
    degrees = {own};
  }
  for (int tp : degrees) {
    if (tp < 1) continue;  // reported by the degree checks
    const std::string why = serving_tensor_parallel_problem(d, tp);
    if (why.empty()) continue;
    spec.error("draft_model", "\"" + name + "\" cannot run at tensor parallelism " +
                                  std::to_string(tp) + ": " + why);
    return;
  }
  loaded->draft_model = draft;
}

// Where speculative decoding is simulated: continuous batching, a colocated replica of one
// pipeline stage.
void check_deployment_kind(const FieldChecker& root) {
  const auto& m = static_cast<const s::ServingScenario&>(root.message());
  const FieldChecker deployment = root.child("deployment");
  const FieldChecker sweep = root.child("sweep");
  const char* batching = "speculative decoding is simulated with CONTINUOUS batching only (a "
                         "static batch steps together, each sequence keeping its own number of "
                         "tokens: not modelled)";
  refuse_static_batching(root, batching);
  const char* stages = "speculative decoding is simulated on replicas of one pipeline stage (the "
                       "draft beside a pipeline is not modelled): pipeline_parallel 1";
  if (m.deployment().pipeline_parallel() > 1) deployment.error("pipeline_parallel", stages);
  for (int i = 0; i < m.sweep().pipeline_parallel_size(); ++i) {
    if (m.sweep().pipeline_parallel(i) > 1) sweep.error("pipeline_parallel", stages, i);
  }
  if (m.deployment().has_disaggregation()) {
    deployment.error("disaggregation", "speculative decoding is simulated on colocated replicas "
                                       "only: remove disaggregation or speculative_decoding");
  }
}

}  // namespace

void check_speculative_decoding(const FieldChecker& root, const Catalog& catalog,
                                LoadedServingScenario* loaded) {
  const s::ServingScenario& m = loaded->scenario();
  const FieldChecker sweep = root.child("sweep");
  if (!m.deployment().has_speculative_decoding()) {
    if (m.sweep().draft_tokens_size() > 0) {
      sweep.error("draft_tokens", "sets speculative decoding's draft tokens: give "
                                  "deployment.speculative_decoding");
    }
    return;
  }
  const FieldChecker spec = root.child("deployment").child("speculative_decoding");
  const s::SpeculativeDecoding& sd = m.deployment().speculative_decoding();
  switch (sd.draft_case()) {
    case s::SpeculativeDecoding::DRAFT_NOT_SET:
      spec.error_here("needs a draft: draft_model, multi_token_prediction or draft_head_layers");
      break;
    case s::SpeculativeDecoding::kDraftModel:
      check_draft_model(spec, catalog, loaded);
      break;
    case s::SpeculativeDecoding::kMultiTokenPrediction:
      if (!sd.multi_token_prediction()) {
        spec.error("multi_token_prediction", "false drafts nothing: set true (the model's "
                                             "multi-token-prediction modules draft) or give "
                                             "another draft");
      } else if (loaded->model != nullptr &&
                 loaded->model->transformer().multi_token_prediction_layers() < 1) {
        spec.error("multi_token_prediction",
                   "\"" + m.model() + "\" has no multi-token-prediction modules (its model's "
                   "multi_token_prediction_layers): give draft_model or draft_head_layers");
      }
      break;
    case s::SpeculativeDecoding::kDraftHeadLayers:
      spec.in_range("draft_head_layers", 1,
                    loaded->model ? loaded->model->transformer().num_layers() : 1e9);
      break;
  }
  if (sd.has_draft_tensor_parallel() && !sd.has_draft_model()) {
    spec.error("draft_tensor_parallel", "sets a draft model's tensor parallelism: MTP modules "
                                        "and draft heads run inside the target's");
  }
  if (m.sweep().draft_tokens_size() == 0) spec.require("draft_tokens");
  spec.in_range("draft_tokens", 1, kMaxDraftTokens);
  sweep.in_range("draft_tokens", 0, kMaxDraftTokens);  // 0: the deployment without it
  if (spec.require("acceptance_rate")) {
    const double alpha = sd.acceptance_rate();
    if (!(alpha > 0 && alpha < 1)) {
      spec.error("acceptance_rate", "must be above 0 and below 1 (the probability that a draft "
                                    "token is accepted after those before it), got " +
                                        format_number(alpha));
    }
  }
  check_deployment_kind(root);
}

}  // namespace clustersim
