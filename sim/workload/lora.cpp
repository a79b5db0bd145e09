// LoRA's frozen base and adapters: kernels, parameters and FLOPs.
#include "sim/workload/lora.h"

#include <algorithm>
#include <string>
#include <utility>

#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_dimensions.h"

namespace clustersim {

namespace {

namespace s = schema;
using K = LayerOp::Kind;

// The base matmuls of a dense layer (layer_ops.cpp) that LoRA can adapt, and whether each splits
// its output columns over tensor parallelism (QKV, FC1) rather than its input rows; with
// separate projections (LayerShape::separate_projections) "q", "k", "v" are QKV's and "mlp gate"
// and "mlp up" (then f wide) FC1's.
struct Adaptable {
  const char* name;
  s::LoraTarget target;
  bool column_parallel;
};
constexpr Adaptable kAdaptable[] = {{"qkv", s::LINEAR_QKV, true},
                                    {"q", s::LINEAR_QKV, true},
                                    {"k", s::LINEAR_QKV, true},
                                    {"v", s::LINEAR_QKV, true},
                                    {"attention out", s::LINEAR_PROJ, false},
                                    {"mlp gate", s::LINEAR_FC1, true},
                                    {"mlp up", s::LINEAR_FC1, true},
                                    {"mlp down", s::LINEAR_FC2, false}};

}  // namespace

bool lora_targets(const s::Lora& lora, s::LoraTarget target) {
  const auto& targets = lora.target_modules();
  return targets.empty() || std::find(targets.begin(), targets.end(), target) != targets.end();
}

std::vector<LayerOp> with_lora(const s::Lora& lora, std::vector<LayerOp> ops,
                               int sequence_shards) {
  const int64_t r = lora.rank();
  const bool dropout_before = lora.dropout_position() == s::LORA_DROPOUT_PRE;
  std::vector<LayerOp> out;
  out.reserve(ops.size() + 12);
  for (LayerOp& op : ops) {
    if (op.kind != K::kMatmul) {
      out.push_back(std::move(op));
      continue;
    }
    op.frozen = true;
    const Adaptable* base = nullptr;
    for (const Adaptable& a : kAdaptable) {
      if (op.name == a.name && lora_targets(lora, a.target)) base = &a;
    }
    if (base == nullptr) {
      out.push_back(std::move(op));
      continue;
    }
    const std::string name = op.name + " adapter";
    std::vector<LayerOp> adapter = {
        {K::kMatmul, name + " A", op.m, r, op.k, op.count, 0, 0, false, true},
        {K::kMatmul, name + " B", op.m, op.n, r, op.count, 0, 0, false, true}};
    if (lora.dropout() > 0) {
      // PyTorch's dropout kernel: read the 16-bit tensor, write it and a 1-byte mask; its
      // backward reads the gradient and the mask and writes the gradient. After the adapter, its
      // output (m x n); before it, its input (m x k), which a column-parallel adapter receives
      // as the rank's sequence-parallel shard, before its own gather.
      const double elements = dropout_before
                                  ? static_cast<double>(op.m) * op.k /
                                        (base->column_parallel ? sequence_shards : 1)
                                  : static_cast<double>(op.m) * op.n;
      LayerOp dropout{K::kMemory, name + " dropout", 0, 0, 0, 1, 0, 5.0 * elements * op.count};
      dropout.backward_bytes = dropout.bytes;
      adapter.insert(dropout_before ? adapter.begin() : adapter.end(), std::move(dropout));
    }
    // Forward: read the base's and the adapter's 16-bit outputs, write their sum. Backward: the
    // sum's gradient is both addends' as it is (no kernel); the base's and the adapter's input
    // gradients, two gradients of the one input they share, are summed instead (read both, write
    // one, m x k).
    LayerOp add{K::kMemory, name + " add", 0, 0, 0, 1, 0, 3.0 * 2 * op.m * op.n * op.count};
    add.backward_bytes = 3.0 * 2 * op.m * op.k * op.count;
    adapter.push_back(std::move(add));
    if (base->column_parallel) out.push_back(std::move(op));
    out.insert(out.end(), adapter.begin(), adapter.end());
    if (!base->column_parallel) out.push_back(std::move(op));
  }
  return out;
}

double lora_parameters_per_layer(const s::Transformer& t, const s::Lora& lora,
                                 bool separate_projections) {
  const auto sizes = linear_weight_shapes(t);  // k, n
  // The linear layers each weight of linear_weight_shapes is, each with its own A of k x r.
  const double gated = gated_mlp(t) ? 2 : 1;
  const double linears[] = {separate_projections ? 3.0 : 1.0, 1, separate_projections ? gated : 1,
                            1};
  const s::LoraTarget targets[] = {s::LINEAR_QKV, s::LINEAR_PROJ, s::LINEAR_FC1, s::LINEAR_FC2};
  double parameters = 0;
  for (size_t i = 0; i < std::size(targets); ++i) {
    if (lora_targets(lora, targets[i])) {
      parameters += static_cast<double>(lora.rank()) * (linears[i] * sizes[i][0] + sizes[i][1]);
    }
  }
  return parameters;
}

double peft_flops_scale(const s::Transformer& t, const s::TrainingJob& job) {
  const double adapters =
      lora_parameters_per_layer(t, job.lora(), job.separate_projections()) * t.num_layers();
  const double frozen = static_cast<double>(transformer_parameters(t).total());
  return (2 + adapters / frozen) / 3;
}

void add_lora_flops(const s::Transformer& t, const s::TrainingJob& job, TransformerFlops* flops) {
  flops->frozen_base = true;
  // Every adapter parameter is one multiply-add per token.
  flops->adapter_forward_per_token =
      2 * lora_parameters_per_layer(t, job.lora(), job.separate_projections());
}

}  // namespace clustersim
