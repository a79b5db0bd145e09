// A serving stage's layer groups by compress ratio, from the training step's op builders.
#include "sim/workload/compressed_attention_groups.h"

#include <array>

#include "sim/util/check.h"
#include "sim/workload/compressed_sparse_attention.h"
#include "sim/workload/layer_ops.h"
#include "sim/workload/moe_layer.h"

namespace clustersim {
namespace {

constexpr std::array<int, 3> kRatios = {0, 4, 128};

// The weight GEMMs and per-token memory traffic of `ops` built for one token: matmuls (a count of
// GEMMs as one of their summed width) but 16-bit ones of activations (`keep_sixteen_bit` false),
// and memory passes.
void add_per_token(const std::vector<LayerOp>& ops, bool keep_sixteen_bit, int repeats,
                   LayerGroup* group) {
  for (int r = 0; r < repeats; ++r) {
    for (const LayerOp& op : ops) {
      if (op.kind == LayerOp::Kind::kMatmul && (keep_sixteen_bit || !op.sixteen_bit)) {
        group->matmuls.push_back({op.n * op.count, op.k, false});
      } else if (op.kind == LayerOp::Kind::kMemory) {
        group->memory_bytes_per_token += op.bytes;
      }
    }
  }
}

// One layer of compress ratio `ratio` of `base`'s kind.
LayerGroup ratio_group(const schema::Transformer& t, int tensor_parallel, int ratio,
                       const LayerGroup& base, int layers) {
  LayerGroup group;
  group.layers = layers;
  group.compress_ratio = ratio;
  LayerShape one_token;
  one_token.sequence_length = 1;
  one_token.micro_batch_size = 1;
  one_token.tensor_parallel = tensor_parallel;
  one_token.compress_ratio = ratio;
  one_token.inference = true;
  std::vector<LayerOp> attention;
  compressed_sparse_attention_ops(t, one_token, ratio, &attention);
  // The only 16-bit matmul the block builds is the indexer's scoring of queries against keys.
  add_per_token(attention, false, 1, &group);
  std::vector<LayerOp> hyper;
  hyper_connection_mix_ops(t, 1, &hyper);
  hyper.push_back(hyper_connection_update_op(t, 1));
  add_per_token(hyper, true, 2, &group);  // around the attention block and around the MLP
  group.matmuls.insert(group.matmuls.end(), base.matmuls.begin(), base.matmuls.end());
  group.memory_bytes_per_token += base.memory_bytes_per_token;
  return group;
}

}  // namespace

std::vector<LayerGroup> compressed_attention_groups(const schema::Transformer& t,
                                                    int tensor_parallel, int first, int count,
                                                    const std::vector<LayerGroup>& groups) {
  CLUSTERSIM_CHECK(!groups.empty() && groups.size() <= 2, "a stage of one or two layer kinds");
  // Layers per [kind][ratio]: kind 0 the first group's (dense, or experts when all are), 1 the
  // expert group after dense layers.
  std::array<std::array<int, kRatios.size()>, 2> layers{};
  for (int layer = first; layer < first + count; ++layer) {
    const size_t kind = groups.size() == 2 && has_experts(t, layer) ? 1 : 0;
    const int ratio = compress_ratio(t, layer);
    for (size_t r = 0; r < kRatios.size(); ++r) {
      if (kRatios[r] == ratio) ++layers[kind][r];
    }
  }
  std::vector<LayerGroup> split;
  for (size_t kind = 0; kind < groups.size(); ++kind) {
    for (size_t r = 0; r < kRatios.size(); ++r) {
      if (layers[kind][r] == 0) continue;
      split.push_back(ratio_group(t, tensor_parallel, kRatios[r], groups[kind], layers[kind][r]));
    }
  }
  return split;
}

}  // namespace clustersim
