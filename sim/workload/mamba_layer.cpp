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

// The SSD scan's Triton kernels are bound by their SMs, not by HBM: each builds its chunks' decay
// factors exp(cumsum_i - cumsum_j), masks, scales and converts them on the CUDA cores between small
// tl.dot tiles, a few warps a block, so their bytes move at a rate that follows the SMs' count and
// clock (the FP32 peak), not the memory's. An effective figure (SM time a byte, their latency and
// occupancy limits with their arithmetic), one value for every GPU, fitted on the calibration
// file validation/megatron_bridge_nemo.csv's Nemotron 3 rows (the 29 bridge-hybrid scenarios: Nano
// and Super, DGX-H100 FP8 and DGX-B200, GB200 and GB300 MXFP8, Megatron-Bridge 26.02.01 to 26.08):
// the mean absolute step-time error over all of them is least at 34-35 (4.5%; 10.5% with the
// kernels HBM-bound; re-checked 2026-12-04 after the loss became Transformer Engine's cross
// entropy and the expert-layer sync refit: still least at 35, 4.35%, against 4.35 at 34, 4.37 at
// 36, 4.60 at 30 and 4.84 at 40). At 35 the kernels move 1.9 TB/s on an H100 (67 FP32 TFLOP/s; 3.0 TB/s
// HBM-bound) and 2.3 TB/s on a B200, GB200 or GB300 (80; 6.9 TB/s HBM-bound). The FP32 peak
// stands for the SMs' count x clock where an SM has 128 FP32 lanes (Hopper, Blackwell: the GPUs
// fitted); an Ampere or older SM has 64, so there the scan is timed up to 2x slower than its SMs'
// count x clock alone would give (no Mamba row of those GPUs to check it on).
constexpr double kSsdScanFp32FlopsPerByte = 35;

std::vector<LayerOp> ssd_scan_ops(const schema::Transformer& t, int64_t batch, int64_t sequence,
                                  int64_t heads, bool gated) {
  using K = LayerOp::Kind;
  const schema::Mamba2& m = t.mamba();
  const int64_t q = mamba_chunk_size(t), n = m.state_dim(), p = m.head_dim();
  const int64_t groups = int64_t{m.num_groups()} * heads / m.num_heads();
  const int64_t chunks = batch * ((sequence + q - 1) / q);
  const double tokens = static_cast<double>(batch * sequence);
  // Elements per pass: x (and z, y, their gradients), B (and C), dt (and its cumsum), the chunk
  // states and the chunks' C B^T.
  const double x = tokens * static_cast<double>(heads * p);
  const double bc = tokens * static_cast<double>(groups * n);
  const double dt = tokens * static_cast<double>(heads);
  const double states = static_cast<double>(chunks * heads * n * p);
  const double cb = static_cast<double>(chunks * groups * q * q);
  auto matmul = [](const char* name, int64_t rows, int64_t cols, int64_t inner, int64_t count,
                   int backward_runs) {
    LayerOp op{K::kMatmul, name, rows, cols, inner, count};
    op.sixteen_bit = true;
    op.backward_runs = backward_runs;
    return op;
  };
  auto memory = [](const char* name, double forward, double backward) {
    LayerOp op{K::kMemory, name, 0, 0, 0, 1, 0, forward};
    op.backward_bytes = backward;
    op.fp32_flops_per_byte = kSsdScanFp32FlopsPerByte;
    return op;
  };
  // chunk_cumsum: reads dt, writes dt after softplus and its cumsum (fp32); backward: rerun, then
  // chunk_cumsum_bwd reads ddA, ddt and dt, writes ddt.
  const double cumsum = 2 * dt + 8 * dt;
  // chunk_state: x, B, dt and cumsum in, fp32 states out; chunk_state_bwd_db: x, 16-bit dstates,
  // B, dt and cumsum in, fp32 dB and ddA out, dB summed over its one split (read, written).
  const double chunk_state = 2 * x + 2 * bc + 8 * dt + 4 * states;
  const double state_bwd_db = 2 * x + 2 * states + 2 * bc + 8 * dt + 4 * bc + 8 * bc + 4 * dt;
  // state_passing: fp32 states in, 16-bit out (fp32 out when rerun in the backward);
  // state_passing_bwd: fp32 states and dstates in, 16-bit dstates and states out.
  const double passing = 4 * states + 2 * states;
  const double passing_bwd = 8 * states + 2 * states + 2 * states;
  // bmm_chunk: B and C in, fp32 C B^T out; bmm_chunk_bwd (twice): B or C, dCB, fp32 residual in,
  // dB or dC out.
  const double bmm = 4 * bc + 4 * cb;
  const double bmm_bwd = 2 * (2 * bc + 4 * cb + 4 * bc + 2 * bc);
  // chunk_scan: C B^T, x, z, C, 16-bit states, dt and cumsum in; y and the ungated y out (without
  // z: the ungated y alone).
  const double z = gated ? x : 0;
  const double scan = 4 * cb + 2 * x + 2 * z + 2 * bc + 2 * states + 8 * dt + 2 * x + 2 * z;
  // bwd_dz (with z): x, z, y and dy in, dz and the ungated dy out; bwd_dstates: C and dy in, fp32
  // dstates out; bwd_dx: x, C B^T, dy, B, 16-bit dstates, dt and cumsum in, dx and fp32 ddt out;
  // bwd_dC: 16-bit states, dy, C and cumsum in, fp32 dC out, summed; bwd_dcb: x, dy, dt and
  // cumsum in, fp32 dCB out, summed; bwd_ddAcs_stable: x, dy, C B^T, dt and cumsum in, ddA out.
  const double scan_bwd = 12 * z + (2 * bc + 2 * x + 4 * dt + 4 * states) +
                          (2 * x + 4 * cb + 2 * x + 2 * bc + 2 * states + 8 * dt + 2 * x + 4 * dt) +
                          (2 * states + 2 * x + 2 * bc + 4 * dt + 4 * bc + 8 * bc) +
                          (2 * x + 2 * x + 8 * dt + 4 * cb + 8 * cb) +
                          (2 * x + 2 * x + 4 * cb + 8 * dt + 4 * dt);
  return {memory("ssd chunk cumsum", cumsum, cumsum + 12 * dt),
          matmul("ssd chunk states", n, p, q, chunks * heads, 3),
          memory("ssd chunk state", chunk_state, chunk_state + state_bwd_db),
          memory("ssd state passing", passing, 8 * states + passing_bwd),
          matmul("ssd C B", q, q, n, chunks * groups, 3),
          memory("ssd bmm chunk", bmm, bmm + bmm_bwd),
          matmul("ssd state output", q, p, n, chunks * heads, 2),
          matmul("ssd masked X", q, p, q, chunks * heads, 3),
          memory("ssd chunk scan", scan, scan_bwd)};
}

}  // namespace clustersim
