// Hybrid layer patterns and the Mamba-2 mixer's shape, parameters and scan cost.
#include "sim/workload/mamba_layer.h"

namespace clustersim {

HybridBlock hybrid_block_of(char letter) {
  switch (letter) {
    case 'M':
      return HybridBlock::kMamba;
    case '*':
      return HybridBlock::kAttention;
    case '-':
      return HybridBlock::kMlp;
    default:  // 'E': the catalog checks admit no other letter
      return HybridBlock::kExperts;
  }
}

HybridBlock hybrid_block(const schema::Transformer& t, int layer) {
  return hybrid_block_of(t.hybrid_layer_pattern()[layer]);
}

std::vector<HybridBlock> multi_token_prediction_blocks(const schema::Transformer& t) {
  std::vector<HybridBlock> blocks;
  for (char letter : t.multi_token_prediction_pattern()) blocks.push_back(hybrid_block_of(letter));
  return blocks;
}

int hybrid_blocks_in(const schema::Transformer& t, int first, int count, HybridBlock block) {
  int n = 0;
  for (int layer = first; layer < first + count; ++layer) n += hybrid_block(t, layer) == block;
  return n;
}

int64_t mamba_inner(const schema::Transformer& t) {
  return int64_t{t.mamba().num_heads()} * t.mamba().head_dim();
}

int64_t mamba_conv_channels(const schema::Transformer& t) {
  return mamba_inner(t) + 2 * int64_t{t.mamba().num_groups()} * t.mamba().state_dim();
}

int64_t mamba_conv_kernel(const schema::Transformer& t) {
  return t.mamba().has_conv_kernel() ? t.mamba().conv_kernel() : 4;
}

int64_t mamba_chunk_size(const schema::Transformer& t) {
  return t.mamba().has_chunk_size() ? t.mamba().chunk_size() : 128;
}

int64_t mamba_mixer_parameters(const schema::Transformer& t) {
  const int64_t h = t.hidden_size(), inner = mamba_inner(t), heads = t.mamba().num_heads();
  const int64_t conv = mamba_conv_channels(t);
  const int64_t in_proj = h * (inner + conv + heads);  // z, then x B C, then dt
  return in_proj + conv * (mamba_conv_kernel(t) + 1) + 3 * heads + inner + inner * h;
}

std::vector<LayerOp> ssd_scan_ops(const schema::Transformer& t, int64_t batch, int64_t sequence,
                                  int64_t heads) {
  using K = LayerOp::Kind;
  const schema::Mamba2& m = t.mamba();
  const int64_t q = mamba_chunk_size(t), n = m.state_dim(), p = m.head_dim();
  const int64_t groups = int64_t{m.num_groups()} * heads / m.num_heads();
  const int64_t chunks = batch * ((sequence + q - 1) / q);
  const double tokens = static_cast<double>(batch * sequence);
  const double io = 2.0 * (2 * heads * p + 2 * groups * n) + 4.0 * heads;  // x, y, B, C; fp32 dt
  const double states = 2 * 4.0 * static_cast<double>(heads * n * p * chunks);
  auto matmul = [](const char* name, int64_t rows, int64_t cols, int64_t inner, int64_t count) {
    LayerOp op{K::kMatmul, name, rows, cols, inner, count};
    op.sixteen_bit = true;
    return op;
  };
  return {matmul("ssd C B", q, q, n, chunks * groups),
          matmul("ssd masked X", q, p, q, chunks * heads),
          matmul("ssd chunk states", n, p, q, chunks * heads),
          matmul("ssd state output", q, p, n, chunks * heads),
          {K::kMemory, "ssd state passing", 0, 0, 0, 1, 0, tokens * io + states}};
}

}  // namespace clustersim
