// The draft's passes, memory and the tokens a verification keeps.
#include "sim/serve/speculative_decoding.h"

#include <algorithm>
#include <cmath>

#include "sim/util/check.h"
#include "sim/util/splitmix64.h"
#include "sim/workload/moe_layer.h"

namespace clustersim {
namespace {

namespace s = schema;

// The layers one draft pass runs, as a transformer: the draft model; one multi-token-prediction
// module (a layer of the target's last kind); or N dense layers of the target's shape.
s::Transformer draft_pass_layers(const s::Transformer& target, const s::SpeculativeDecoding& spec,
                                 const s::Transformer* draft_model) {
  s::Transformer t = draft_model ? *draft_model : target;
  t.clear_multi_token_prediction_layers();
  t.clear_multi_token_prediction_pattern();
  t.clear_multi_token_prediction_shared();
  t.clear_multi_token_prediction_sixteen_bit();
  t.clear_sliding_window();
  if (spec.multi_token_prediction()) {
    t.set_num_layers(1);
    if (has_experts(target, target.num_layers() - 1)) {
      t.mutable_moe()->set_first_dense_layers(0);
      t.mutable_moe()->clear_layer_interval();
    } else {
      t.clear_moe();
    }
  } else if (spec.has_draft_head_layers()) {
    t.set_num_layers(spec.draft_head_layers());
    t.clear_moe();
  }
  return t;
}

}  // namespace

SpeculativeDecoder::SpeculativeDecoder(const IterationInputs& target,
                                       const s::SpeculativeDecoding& spec,
                                       const s::Transformer* draft_model, int draft_tokens,
                                       uint64_t seed)
    : transformer_(draft_pass_layers(*target.model, spec, draft_model)),
      projection_compute_(ComputeModel::serving(
          *target.gpu, target.formats.activations, *target.runtime, target.fit.compute_fraction(),
          target.fit.memory_fraction(), target.fit.fp8_matmul_fraction())),
      projection_weight_bytes_(bytes_per_element(target.formats.weights)),
      k_(draft_tokens),
      alpha_(spec.acceptance_rate()),
      seed_(seed) {
  CLUSTERSIM_CHECK(k_ >= 1 && alpha_ > 0 && alpha_ < 1, "unchecked speculative decoding");
  IterationInputs in = target;
  in.model = &transformer_;
  in.pipeline_parallel = 1;
  in.fake_weights = false;
  // Experts split over ranks as the target's only in its own MTP modules: draft heads are dense,
  // and a draft model runs its experts (if any) by tensor parallelism.
  if (!spec.multi_token_prediction() || !transformer_.has_moe()) in.expert_parallel = 1;
  if (draft_model != nullptr && spec.has_draft_tensor_parallel()) {
    in.tensor_parallel = spec.draft_tensor_parallel();
  }
  model_ = std::make_unique<IterationModel>(in);
  const InferenceShape& shape = model_->largest_stage();
  if (draft_model != nullptr) {
    weight_bytes_ = shape.weight_bytes;
    kv_bytes_per_token_ = shape.kv_bytes_per_token;
    return;
  }
  // Heads and MTP modules: their layers and the 2h x h projection of [hidden state; embedding]
  // (column-split over the ranks), the embedding and output head the target's.
  const int64_t h = target.model->hidden_size();
  projection_n_ = h / target.tensor_parallel;
  projection_k_ = 2 * h;
  const double module = shape.weight_bytes - shape.embedding_and_head_bytes +
                        static_cast<double>(projection_n_ * projection_k_) *
                            projection_weight_bytes_;
  // MTP: every module of the checkpoint loaded with its own KV cache (one when they share
  // weights); heads: one set.
  const int t = target.model->multi_token_prediction_layers();
  const int modules =
      spec.multi_token_prediction() && !target.model->multi_token_prediction_shared() ? t : 1;
  weight_bytes_ = module * modules;
  kv_bytes_per_token_ = shape.kv_bytes_per_token * modules;
}

int SpeculativeDecoder::accepted(int32_t request, int32_t round) const {
  const uint64_t word =
      splitmix64(splitmix64(seed_ ^ splitmix64(static_cast<uint64_t>(request))) ^
                 static_cast<uint64_t>(round));
  const double u = (static_cast<double>(word >> 11) + 1) * 0x1.0p-53;  // (0, 1]
  // Drafts accepted before the first rejection: P(>= j) = P(u <= alpha^j) = alpha^j.
  const double run = std::floor(std::log(u) / std::log(alpha_));
  return 1 + static_cast<int>(std::min<double>(run, k_));
}

double SpeculativeDecoder::expected_accepted() const {
  return (1 - std::pow(alpha_, k_ + 1)) / (1 - alpha_);
}

void SpeculativeDecoder::add_verification(IterationWork* work, DraftWork* draft, int64_t cached,
                                          int accepted, int window, bool chunked_window) const {
  // The target: k + 1 queries, the last at context cached + k + 1, each attending to the cache
  // and the drafts before it (per query its causal keys; summed as k + 1 times the last's, the
  // few causal pairs among the drafts over-counted).
  const int64_t context = cached + k_ + 1;
  const int64_t windowed = window <= 0       ? context
                           : chunked_window ? (context - 1) % window + 1
                                            : std::min<int64_t>(context, window);
  work->tokens += k_ + 1;
  work->logits += k_ + 1;
  work->decode_context += static_cast<double>(context);
  work->window_decode_context += static_cast<double>(windowed);
  draft->verification.pairs += static_cast<double>(k_) * static_cast<double>(context);
  draft->verification.window_pairs += static_cast<double>(k_) * static_cast<double>(windowed);
  // The draft's first pass: the accepted tokens, ending at cached + accepted.
  const int64_t drafted = cached + accepted;
  IterationWork& first = draft->first;
  first.tokens += accepted;
  ++first.logits;
  first.decode_context += static_cast<double>(drafted);
  first.window_decode_context += static_cast<double>(drafted);
  const double extra = static_cast<double>(accepted - 1) * static_cast<double>(drafted);
  draft->first_queries.pairs += extra;
  draft->first_queries.window_pairs += extra;
  ++draft->drafting;
  draft->drafting_context += static_cast<double>(drafted);
}

void SpeculativeDecoder::add_prompt_chunk(DraftWork* draft, int64_t past, int64_t chunk,
                                          bool finishes) const {
  draft->first.tokens += chunk;
  clustersim::add_prompt_chunk(&draft->first, past, chunk);
  if (!finishes) return;
  ++draft->first.logits;
  ++draft->drafting;
  draft->drafting_context += static_cast<double>(past + chunk);
}

Picoseconds SpeculativeDecoder::pass(const IterationWork& work,
                                     const ExtraDecodeQueries& extra) const {
  Picoseconds t = model_->forward(work, extra);
  if (projection_n_ > 0) {
    t += projection_compute_.matmul(work.tokens, projection_n_, projection_k_, 1.0,
                                    projection_weight_bytes_, serving_row_tile(work.tokens));
  }
  return t;
}

Picoseconds SpeculativeDecoder::draft_time(const DraftWork& draft) const {
  if (draft.first.tokens == 0) return Picoseconds();
  Picoseconds total = pass(draft.first, draft.first_queries);
  if (draft.drafting == 0) return total;
  IterationWork step;
  step.tokens = step.logits = draft.drafting;
  for (int j = 1; j < k_; ++j) {  // each pass appends one draft token per sequence
    step.decode_context = step.window_decode_context =
        draft.drafting_context + static_cast<double>(j * draft.drafting);
    total += pass(step, {});
  }
  return total;
}

}  // namespace clustersim
