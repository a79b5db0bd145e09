// The lockstep iteration and per-GPU memory of an attention-data-parallel replica.
#include "sim/serve/attention_data_parallel.h"

#include <algorithm>
#include <utility>

#include "sim/net/collective.h"
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

}  // namespace

AttentionDataParallelModel::AttentionDataParallelModel(const IterationInputs& in,
                                                       std::vector<int64_t> graph_batch_sizes)
    : ranks_(in.tensor_parallel),
      rank_(rank_inputs(in)),
      experts_(expert_inputs(in)),
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
  const double act = bytes_per_element(in.formats.activations);
  const auto h = static_cast<double>(whole.hidden);
  dispatch_bytes_ = h * act +
                    (in.formats.activations == schema::FP4 ? h / kNvfp4BlockElements : 0) +
                    whole.experts_per_token * kRoutingBytesPerExpert;
  combine_bytes_ = h * kCombineElementBytes;

  const Picoseconds overhead = Picoseconds::from_microseconds(in.serving->allreduce_overhead_us());
  Collective c;
  for (int g = 0; g < ranks_; ++g) c.gpus.push_back(g);
  const int64_t most = std::max<int64_t>(1, in.max_tokens) * ranks_;
  for (int64_t tokens = 1;; tokens *= 2) {
    c.op = CollectiveOp::kAllGather;
    c.bytes = static_cast<double>(tokens) * dispatch_bytes_;
    gather_.push_back(collective_time(*in.topology, c) + overhead);
    c.op = CollectiveOp::kReduceScatter;
    c.bytes = static_cast<double>(tokens) * combine_bytes_;
    scatter_.push_back(collective_time(*in.topology, c) + overhead);
    if (tokens >= most) break;
  }
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
  int64_t gathered = 0;
  bool any = false;
  for (const IterationWork& w : works) {
    any = any || w.tokens > 0;
    const IterationWork& own = w.tokens > 0 ? w : dummy;
    const IterationWork run = graph > 0 ? CudaGraphPadding::padded(own, graph) : own;
    slowest = std::max(slowest, rank_.iteration(run));
    gathered += run.tokens;
  }
  CLUSTERSIM_CHECK(any, "a lockstep iteration with no GPU's request");
  return slowest + Picoseconds((dispatch(gathered) + combine(gathered)).count() * expert_layers_) +
         routed_experts(gathered);
}

}  // namespace clustersim
