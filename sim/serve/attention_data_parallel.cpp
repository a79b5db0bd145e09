// The lockstep iteration and per-GPU memory of an attention-data-parallel replica.
#include "sim/serve/attention_data_parallel.h"

#include <algorithm>
#include <utility>

#include "sim/util/check.h"
#include "sim/workload/element_size.h"

namespace clustersim {
namespace {

// Routed-expert times are memoized up to this many gathered tokens.
constexpr int64_t kGatheredMemoTokens = 1 << 17;
constexpr double kCombineElementBytes = 2;
constexpr int kNvfp4BlockElements = 16;           // NVFP4: one 8-bit scale per 16 elements
constexpr double kRoutingBytesPerExpert = 4 + 4;  // an int32 expert id and an FP32 weight

IterationInputs rank_inputs(IterationInputs in) {
  in.tensor_parallel = 1;
  in.expert_parallel = 1;
  in.routed_experts_apart = true;
  in.topology = nullptr;
  return in;
}

IterationInputs expert_inputs(IterationInputs in) {
  in.max_tokens *= in.tensor_parallel;  // the gathered tokens
  return in;
}

// Bytes a token sends to the experts: its activations in the matmul precision, FP4's block
// scales, and its k expert ids and weights.
double token_dispatch_bytes(const IterationInputs& in, const InferenceShape& whole) {
  const auto h = static_cast<double>(whole.hidden);
  return h * bytes_per_element(in.formats.activations) +
         (in.formats.activations == schema::FP4 ? h / kNvfp4BlockElements : 0) +
         whole.experts_per_token * kRoutingBytesPerExpert;
}

MoeTokenExchangeInputs token_exchange_inputs(const IterationInputs& in,
                                             const InferenceShape& whole,
                                             schema::MoeTokenExchange kind) {
  MoeTokenExchangeInputs x;
  x.kind = kind;
  x.topology = in.topology;
  x.ranks = in.tensor_parallel;
  x.dispatch_bytes_per_token = token_dispatch_bytes(in, whole);
  x.combine_bytes_per_token = static_cast<double>(whole.hidden) * kCombineElementBytes;
  x.experts = whole.num_experts;
  x.experts_per_token = whole.experts_per_token;
  x.fake_weights = in.fake_weights;
  x.overhead = Picoseconds::from_microseconds(in.serving->allreduce_overhead_us());
  x.most_tokens_per_gpu = in.max_tokens;
  return x;
}

}  // namespace

AttentionDataParallelModel::AttentionDataParallelModel(const IterationInputs& in,
                                                       std::vector<int64_t> graph_batch_sizes,
                                                       schema::MoeTokenExchange exchange)
    : ranks_(in.tensor_parallel),
      rank_(rank_inputs(in)),
      experts_(expert_inputs(in)),
      exchange_(token_exchange_inputs(in, rank_.largest_stage(), exchange)),
      graphs_(std::move(graph_batch_sizes)) {
  CLUSTERSIM_CHECK(in.tensor_parallel >= 2 && in.expert_parallel == in.tensor_parallel &&
                       in.pipeline_parallel == 1 && in.model->has_moe() && in.topology != nullptr,
                   "attention data parallelism outside a one-stage expert-parallel replica");
  const InferenceShape& whole = rank_.largest_stage();
  const double weight = bytes_per_element(in.formats.weights);
  double routed_bytes = 0;
  for (const LayerGroup& g : whole.groups) {
    double per_layer = 0;
    for (const LayerMatmul& mm : g.matmuls) {
      if (mm.expert) per_layer += static_cast<double>(mm.n) * static_cast<double>(mm.k);
    }
    if (per_layer > 0) expert_layers_ += g.layers;
    routed_bytes += g.layers * per_layer * whole.num_experts * weight;
  }
  weight_bytes_ = whole.weight_bytes - routed_bytes + routed_bytes / ranks_;
}

Picoseconds AttentionDataParallelModel::routed_experts(int64_t tokens) const {
  if (tokens > kGatheredMemoTokens) return experts_.routed_experts(tokens);
  if (experts_memo_.empty()) experts_memo_.assign(kGatheredMemoTokens + 1, -1);
  int64_t& memo = experts_memo_[tokens];
  if (memo < 0) memo = experts_.routed_experts(tokens).count();
  return Picoseconds(memo);
}

int64_t AttentionDataParallelModel::graph_batch(const std::vector<IterationWork>& works) const {
  if (!graphs_.captured()) return 0;
  int64_t largest = 1;  // an idle GPU's dummy request
  for (const IterationWork& w : works) {
    if (!CudaGraphPadding::decode_only(w)) return 0;  // a prompt anywhere: every GPU runs eagerly
    largest = std::max(largest, w.tokens);
  }
  return graphs_.graph_batch(largest);
}

Picoseconds AttentionDataParallelModel::iteration(const std::vector<IterationWork>& works) const {
  CLUSTERSIM_CHECK(static_cast<int>(works.size()) == ranks_, "a work per GPU");
  // A GPU with no request this iteration runs TensorRT-LLM's dummy generation request, the same
  // one-token sequence over a context of one that pads a CUDA graph.
  static const IterationWork dummy = CudaGraphPadding::padded(IterationWork{}, 1);
  const int64_t graph = graph_batch(works);
  Picoseconds slowest;
  std::vector<int64_t> tokens;  // each GPU's, as run
  int64_t gathered = 0;
  bool any = false;
  for (const IterationWork& w : works) {
    any = any || w.tokens > 0;
    const IterationWork& own = w.tokens > 0 ? w : dummy;
    const IterationWork run = graph > 0 ? CudaGraphPadding::padded(own, graph) : own;
    slowest = std::max(slowest, rank_.iteration(run));
    tokens.push_back(run.tokens);
    gathered += run.tokens;
  }
  CLUSTERSIM_CHECK(any, "a lockstep iteration with no GPU's request");
  return slowest +
         Picoseconds((dispatch(tokens) + combine(tokens)).count() * expert_layers_) +
         routed_experts(gathered);
}

}  // namespace clustersim
