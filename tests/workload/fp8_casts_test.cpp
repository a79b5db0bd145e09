// Tests of Transformer Engine's FP8 and FP4 cast bytes per recipe and GPU: the bytes per element
// of each cast (NVFP4's before and with the fused Hadamard cast), a GEMM's casts under sequence
// parallelism, an FP8 attention's input casts, and the per-step weight casts with FP8, MXFP8 and
// NVFP4 weights; torchao's tensorwise Float8 (its own recipe) beside them.
#include "sim/workload/fp8_casts.h"

#include <catch2/catch.hpp>

namespace clustersim {
namespace {

namespace s = schema;

constexpr bool kHopper = false;    // TN-only FP8 GEMMs
constexpr bool kBlackwell = true;  // FP8 GEMMs in any layout

TEST_CASE("a cast reads 16 bits, current scaling once more, and writes its FP8 copies") {
  // Per-tensor on Hopper: read 2, write 1 + 1 (the transpose); current scaling + 2 (amax).
  CHECK(fp8_cast_bytes_per_element(s::DELAYED_SCALING, kHopper) == 4);
  CHECK(fp8_cast_bytes_per_element(s::CURRENT_SCALING, kHopper) == 6);
  // Per-tensor on Blackwell: one copy serves every GEMM.
  CHECK(fp8_copies(s::CURRENT_SCALING, kBlackwell) == 1);
  CHECK(fp8_cast_bytes_per_element(s::DELAYED_SCALING, kBlackwell) == 3);
  CHECK(fp8_cast_bytes_per_element(s::CURRENT_SCALING, kBlackwell) == 5);
  // Block scaling: row-wise and column-wise copies on any GPU, each with a scale byte per 32.
  for (bool any_layout : {kHopper, kBlackwell}) {
    CHECK(fp8_copies(s::MXFP8, any_layout) == 2);
    CHECK(fp8_cast_bytes_per_element(s::MXFP8, any_layout) == Approx(2 + 2 * (1 + 1.0 / 32)));
    CHECK(fp8_cast_bytes_per_element(s::BLOCKWISE, any_layout) == Approx(2 + 2 * (1 + 1.0 / 32)));
  }
}

TEST_CASE("an NVFP4 cast reads 16 bits twice and writes two 4-bit copies with E4M3 scales") {
  // The amax pass (before and after the Hadamard transform) and the fused cast each read 2 bytes;
  // row-wise and transformed column-wise copies of 0.5 byte plus 1/16 scale byte each.
  for (bool any_layout : {kHopper, kBlackwell}) {
    CHECK(fp8_copies(s::NVFP4, any_layout) == 2);
    CHECK(fp8_cast_bytes_per_element(s::NVFP4, any_layout) == Approx(2 + 2 + 2 * (0.5 + 1.0 / 16)));
  }
  CHECK(narrow_copy_bytes(s::NVFP4) == 0.5625);
  CHECK(narrow_copy_bytes(s::MXFP8) == Approx(1 + 1.0 / 32));
  CHECK(narrow_copy_bytes(s::CURRENT_SCALING) == 1);
  // The job's GEMM recipe and input bytes: FP4 is NVFP4 whatever fp8_recipe says.
  s::TrainingJob job;
  job.set_precision(s::FP4);
  CHECK(gemm_recipe(job) == s::NVFP4);
  CHECK(gemm_input_bytes(job) == 0.5625);
  job.set_precision(s::FP8);
  job.set_fp8_recipe(s::MXFP8);
  CHECK(gemm_recipe(job) == s::MXFP8);
  CHECK(gemm_input_bytes(job) == 1);
  job.set_precision(s::BF16);
  CHECK(gemm_input_bytes(job) == 2);
}

TEST_CASE("an output gradient is all-gathered in both block-scaled copies, per-tensor FP8's one") {
  // Transformer Engine's gather_along_first_dim: MXFP8 and NVFP4 gather their row-wise and
  // column-wise copies with scales, per-tensor FP8 the row-wise one (its transpose made after).
  s::TrainingJob job;
  job.set_precision(s::FP8);
  job.set_fp8_recipe(s::MXFP8);
  CHECK(gathered_gradient_bytes(job) == Approx(2 * (1 + 1.0 / 32)));
  job.set_fp8_recipe(s::CURRENT_SCALING);
  CHECK(gathered_gradient_bytes(job) == 1);
  job.set_precision(s::FP4);
  CHECK(gathered_gradient_bytes(job) == Approx(2 * 0.5625));
  job.set_precision(s::BF16);
  CHECK(gathered_gradient_bytes(job) == 2);
}

TEST_CASE("before the fused NVFP4 cast, the transformed column-wise copy reads the tensor again") {
  // Transformer Engine 2.12: amax 2, row-wise cast 2 + 0.5625, column-wise (Hadamard) cast 2 +
  // 0.5625 = 7.125 bytes per element against the fused kernel's 5.125.
  CHECK(fp8_cast_bytes_per_element(s::NVFP4, kBlackwell, true) == Approx(7.125));
  CHECK(fp8_cast_bytes_per_element(s::NVFP4, kBlackwell, false) == Approx(5.125));
  // No other recipe has a Hadamard copy: the flag moves nothing there.
  CHECK(fp8_cast_bytes_per_element(s::MXFP8, kBlackwell, true) ==
        fp8_cast_bytes_per_element(s::MXFP8, kBlackwell));
  CHECK(fp8_cast_bytes_per_element(s::CURRENT_SCALING, kHopper, true) == 6);
  // A GEMM of m x k . k x n on one rank: its input (m x k) and output gradient (m x n) each cast
  // once; a frozen weight's GEMM writes only the row-wise copy, one kernel, one read (2 + 2 +
  // 0.5625 with or without the fused kernel).
  const int64_t m = 4096, k = 8192, n = 1024;
  LayerOp gemm{LayerOp::Kind::kMatmul, "gemm"};
  gemm.m = m, gemm.k = k, gemm.n = n;
  const Fp8CastBytes unfused = fp8_cast_bytes({gemm}, s::NVFP4, kBlackwell, 1, true);
  const Fp8CastBytes fused = fp8_cast_bytes({gemm}, s::NVFP4, kBlackwell, 1, false);
  CHECK(unfused.forward - fused.forward == Approx(2.0 * m * k));
  CHECK(unfused.backward - fused.backward == Approx(2.0 * m * n));
  gemm.frozen = true;
  const Fp8CastBytes frozen = fp8_cast_bytes({gemm}, s::NVFP4, kBlackwell, 1, true);
  CHECK(frozen.forward == Approx(4.5625 * m * k));
  CHECK(frozen.forward == fp8_cast_bytes({gemm}, s::NVFP4, kBlackwell, 1, false).forward);
}

// A (m x k) . (k x n) GEMM between a sequence-parallel all-gather and a reduce-scatter.
std::vector<LayerOp> gathered_gemm(int64_t m, int64_t k, int64_t n) {
  LayerOp gemm{LayerOp::Kind::kMatmul, "gemm"};
  gemm.m = m, gemm.k = k, gemm.n = n;
  return {{LayerOp::Kind::kTensorAllGather, "gather"}, gemm,
          {LayerOp::Kind::kTensorReduceScatter, "scatter"}};
}

TEST_CASE("a GEMM casts its input in the forward and its output gradient in the backward") {
  // (m x k) . (k x n) after a sequence-parallel all-gather over 4 ranks and before a
  // reduce-scatter: the input cast on the rank's m / 4 rows, the gradient likewise.
  const int64_t m = 8192, k = 4096, n = 1024;
  std::vector<LayerOp> ops = gathered_gemm(m, k, n);
  const Fp8CastBytes bytes = fp8_cast_bytes(ops, s::MXFP8, kBlackwell, 4);
  const double per_element = fp8_cast_bytes_per_element(s::MXFP8, kBlackwell);
  CHECK(bytes.forward == Approx(per_element * m / 4 * k));
  CHECK(bytes.backward == Approx(per_element * m / 4 * n));
  // A GEMM kept in 16 bits casts nothing.
  ops[1].sixteen_bit = true;
  CHECK(fp8_cast_bytes(ops, s::MXFP8, kBlackwell, 4).forward == 0);
}

TEST_CASE("per-tensor FP8 on Hopper transposes a gathered tensor whole on every rank") {
  // The same GEMM under current scaling on a TN-only GPU: each shard cast row-wise only (read 2,
  // amax 2, write 1), and in the backward the gathered input and the gathered output gradient
  // transposed whole (read 1, write 1 of all m rows), not on the shard.
  const int64_t m = 8192, k = 4096, n = 1024;
  std::vector<LayerOp> ops = gathered_gemm(m, k, n);
  const Fp8CastBytes hopper = fp8_cast_bytes(ops, s::CURRENT_SCALING, kHopper, 4);
  CHECK(hopper.forward == Approx(5.0 * m / 4 * k));
  CHECK(hopper.backward == Approx(2.0 * m * k + (5.0 / 4 + 2) * m * n));
  // At 8 ranks the shard's share halves; the transposes stay: more bytes per GEMM FLOP.
  const Fp8CastBytes eight = fp8_cast_bytes(ops, s::CURRENT_SCALING, kHopper, 8);
  CHECK(eight.backward == Approx(2.0 * m * k + (5.0 / 8 + 2) * m * n));
  // Delayed scaling: no amax pass, the same transposes.
  CHECK(fp8_cast_bytes(ops, s::DELAYED_SCALING, kHopper, 4).forward == Approx(3.0 * m / 4 * k));
  // Blackwell needs no transpose: the one copy cast on the shard.
  const Fp8CastBytes blackwell = fp8_cast_bytes(ops, s::CURRENT_SCALING, kBlackwell, 4);
  CHECK(blackwell.forward == Approx(5.0 * m / 4 * k));
  CHECK(blackwell.backward == Approx(5.0 * m / 4 * n));
  // A frozen GEMM (no weight gradient) needs no transposed copy at all.
  ops[1].frozen = true;
  const Fp8CastBytes frozen = fp8_cast_bytes(ops, s::CURRENT_SCALING, kHopper, 4);
  CHECK(frozen.forward == Approx(5.0 * m / 4 * k));
  CHECK(frozen.backward == Approx(5.0 * m / 4 * n));
  // Without a gather (TP 1) both copies are cast on the whole tensor, as before.
  const Fp8CastBytes alone = fp8_cast_bytes({gathered_gemm(m, k, n)[1]}, s::CURRENT_SCALING, kHopper, 1);
  CHECK(alone.forward == Approx(6.0 * m * k));
  CHECK(alone.backward == Approx(6.0 * m * n));
}

TEST_CASE("an FP8 attention casts Q, K and V in the forward and the output's gradient backward") {
  // 2 sequences x 32 query heads of 128 over 4096 queries; K and V of 4 heads (GQA).
  LayerOp attention{LayerOp::Kind::kAttention, "attention", 4096, 4096, 128, 2 * 32};
  attention.key_value_elements = 2.0 * 2 * 4096 * 4 * 128;
  const double queries = 2.0 * 32 * 4096 * 128;
  const double per_element = fp8_cast_bytes_per_element(s::MXFP8, kBlackwell);
  CHECK(fp8_cast_bytes({attention}, s::MXFP8, kBlackwell, 1).forward == 0);  // 16-bit inputs
  attention.fp8 = true;
  const Fp8CastBytes bytes = fp8_cast_bytes({attention}, s::MXFP8, kBlackwell, 1);
  CHECK(bytes.forward == Approx(per_element * (queries + attention.key_value_elements)));
  CHECK(bytes.backward == Approx(per_element * queries));
}

TEST_CASE("beside NVFP4 GEMMs an FP8 attention casts its inputs under its own per-tensor recipe") {
  // NVTE_DPA_FP8_RECIPE Float8CurrentScaling: the amax pass, the read and one FP8 copy on
  // Blackwell (2 + 2 + 1 bytes an element), not NVFP4's two copies of 0.5 + 1/16 bytes.
  LayerOp attention{LayerOp::Kind::kAttention, "attention", 8192, 8192, 128, 32};
  attention.key_value_elements = 2.0 * 8192 * 8 * 128;
  attention.fp8 = true;
  const double queries = 32.0 * 8192 * 128;
  const Fp8CastBytes current =
      fp8_cast_bytes({attention}, s::NVFP4, kBlackwell, 1, false, false, s::CURRENT_SCALING);
  CHECK(current.forward == Approx(5 * (queries + attention.key_value_elements)));
  CHECK(current.backward == Approx(5 * queries));
  // Delayed scaling has no amax pass: read 2, write 1.
  CHECK(fp8_cast_bytes({attention}, s::NVFP4, kBlackwell, 1, false, false, s::DELAYED_SCALING)
            .backward == Approx(3 * queries));
  // Unspecified: the GEMMs' recipe (the MXFP8 rows' attention).
  CHECK(fp8_cast_bytes({attention}, s::NVFP4, kBlackwell, 1).backward ==
        Approx(fp8_cast_bytes_per_element(s::NVFP4, kBlackwell) * queries));
}

TEST_CASE(
    "FP8 weights gather in FP8 and transpose where the GPU needs it, MXFP8 weights in 16 bits") {
  const double p = 1e9;
  // 16-bit weights: a whole cast per step.
  CHECK(fp8_weight_cast_bytes(p, s::CURRENT_SCALING, kHopper, false, false) == 6 * p);
  CHECK(fp8_weight_cast_bytes(p, s::CURRENT_SCALING, kBlackwell, false, false) == 5 * p);
  // Per-tensor FP8 weights: gathered in FP8; Hopper transposes them (read 1, write 1), Blackwell
  // uses them as gathered.
  CHECK(fp8_weights_gathered_in_fp8(s::CURRENT_SCALING, true));
  CHECK(fp8_weight_cast_bytes(p, s::CURRENT_SCALING, kHopper, true, false) == 2 * p);
  CHECK(fp8_weight_cast_bytes(p, s::CURRENT_SCALING, kBlackwell, true, false) == 0);
  // MXFP8 weights: gathered in 16 bits and re-quantized whole into both copies with their
  // scales: read 2, write 2 (1 + 1/32).
  CHECK_FALSE(fp8_weights_gathered_in_fp8(s::MXFP8, true));
  CHECK(fp8_weight_cast_bytes(p, s::MXFP8, kBlackwell, true, false) ==
        Approx((2 + 2 * (1 + 1.0 / 32)) * p));
  CHECK_FALSE(fp8_weights_gathered_in_fp8(s::DELAYED_SCALING, false));
}

TEST_CASE("NVFP4 weights gather in FP4 and transpose their 16 x 16 blocks, BF16 ones are cast") {
  const double p = 1e9;
  const double copy = 0.5 + 1.0 / 16;
  // 16-bit weights: a whole cast per step, amax pass included.
  CHECK_FALSE(fp8_weights_gathered_in_fp8(s::NVFP4, false));
  CHECK(fp8_weight_cast_bytes(p, s::NVFP4, kBlackwell, false, false) ==
        Approx((2 + 2 + 2 * copy) * p));
  // FP4 weights (fp4_param_gather): the column-wise copy from the row-wise one.
  CHECK(fp8_weights_gathered_in_fp8(s::NVFP4, true));
  CHECK(narrow_weight_bytes(s::NVFP4) == copy);
  CHECK(narrow_weight_bytes(s::CURRENT_SCALING) == 1);
  CHECK(fp8_weight_cast_bytes(p, s::NVFP4, kBlackwell, true, false) == Approx(2 * copy * p));
}

TEST_CASE("torchao casts each input once, row-wise, and transposes inputs and weights backward") {
  // torchtitan's attention input as three GEMMs reading one input (q of 4096, k and v of 1024
  // columns) on 8192 tokens, TP 1: one amax pass and cast of the input (read 2, amax 2, write 1),
  // its saved copy transposed in the backward (counted apart); each output gradient cast into
  // both layouts (6 bytes); the 16-bit weights cast each micro-batch (5 bytes) and their FP8 copy
  // transposed for the data gradient (2 bytes).
  const int64_t m = 8192, h = 4096;
  std::vector<LayerOp> ops = {{LayerOp::Kind::kMatmul, "q", m, 4096, h},
                              {LayerOp::Kind::kMatmul, "k", m, 1024, h},
                              {LayerOp::Kind::kMatmul, "v", m, 1024, h}};
  ops[1].shares_input = true;
  ops[2].shares_input = true;
  const double weights = 6144.0 * h;
  for (bool any_layout : {kHopper, kBlackwell}) {  // _scaled_mm's layouts on every GPU
    const Fp8CastBytes bytes = fp8_cast_bytes(ops, s::TORCHAO_TENSORWISE, any_layout, 1);
    CHECK(bytes.forward == Approx(5.0 * m * h + 5 * weights));
    CHECK(bytes.saved_input_transposes == Approx(1.0 * m * h));
    CHECK(bytes.backward == Approx(6.0 * m * 6144 + 2 * weights));
  }
  // Transformer Engine's current scaling casts each GEMM's input into both copies.
  CHECK(fp8_cast_bytes(ops, s::CURRENT_SCALING, kHopper, 1).forward == Approx(3 * 6.0 * m * h));
  CHECK(fp8_cast_bytes(ops, s::CURRENT_SCALING, kHopper, 1).saved_input_transposes == 0);
  // FP8 weights from torchao's Float8 all-gather: no cast in the layer, the transpose stays.
  const Fp8CastBytes gathered = fp8_cast_bytes(ops, s::TORCHAO_TENSORWISE, kHopper, 1, false, true);
  CHECK(gathered.forward == Approx(5.0 * m * h));
  CHECK(gathered.backward == Approx(6.0 * m * 6144 + 2 * weights));
  // Under sequence parallelism (4 ranks) the shard is cast and the gathered tensors transposed,
  // as Transformer Engine's per-tensor recipes on Hopper; plus the weights.
  const int64_t n = 1024;
  const std::vector<LayerOp> sp = gathered_gemm(m, h, n);
  const Fp8CastBytes shard = fp8_cast_bytes(sp, s::TORCHAO_TENSORWISE, kHopper, 4, false, true);
  CHECK(shard.forward == Approx(5.0 * m / 4 * h));
  CHECK(shard.backward == Approx(2.0 * m * h + (5.0 / 4 + 2) * m * n + 2.0 * h * n));
  CHECK(shard.saved_input_transposes == 0);
  // Once per step: only the scale precompute's amax pass over the (shard's) FP8 weights.
  CHECK(fp8_weight_cast_bytes(1e9, s::TORCHAO_TENSORWISE, kHopper, true, false) == 2e9);
  CHECK(fp8_weight_cast_bytes(1e9, s::TORCHAO_TENSORWISE, kHopper, false, false) == 0);
}

}  // namespace
}  // namespace clustersim
