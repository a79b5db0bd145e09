// Tests of hybrid Mamba-Transformer models: the shipped Nemotron 3 parameter counts, a Mamba-2
// layer's kernels (FLOPs against the closed form, the SSD scan's bytes and backward kernel by
// kernel, their SM-bound rate, the tensor-parallel split), its stored activations and the checks
// of hybrid patterns.
#include "sim/workload/mamba_layer.h"

#include <array>
#include <cmath>
#include <catch2/catch.hpp>

#include "sim/hw/compute_model.h"
#include "sim/io/degree_checks.h"
#include "sim/parallel/activation_memory.h"
#include "sim/workload/parameter_count.h"
#include "tests/testing/parse_message.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

using testing::shipped_model;

double all_matmul_flops(const std::vector<LayerOp>& ops) {
  double flops = 0;
  for (const LayerOp& op : ops) {
    if (op.kind == LayerOp::Kind::kMatmul) flops += 2.0 * op.m * op.n * op.k * op.count;
  }
  return flops;
}

const LayerOp& mamba_op(const std::vector<LayerOp>& ops, const std::string& name) {
  for (const LayerOp& op : ops) {
    if (op.name == name) return op;
  }
  FAIL("no op " << name);
  return ops.front();
}

TEST_CASE("Nemotron 3 Nano, Super and Ultra count their published parameters, layer by layer") {
  // Nano: Mamba 2688 + 2688 x 10304 + 6144 x 5 + 3 x 64 + 4096 + 4096 x 2688 = 39,782,592 (23
  // layers); attention 2688 + 2688 x 36 x 128 + 4096 x 2688 = 23,395,968 (6); MoE 2688 + 2688 x
  // 128 + 128 x 2 x 2688 x 1856 + 2 x 2688 x 3712 = 1,297,436,160 of which 6 routed experts use
  // 59,867,136 (23; the router's expert bias is a buffer, not a parameter); embedding and output
  // 2 x 131072 x 2688, final norm 2688.
  const schema::Model& nano = shipped_model("nemotron3-nano-30b-a3b");
  CHECK(parameter_count(nano) == 31577937344);
  CHECK(active_parameter_count(nano, false) == 3227751872);
  // Super: LatentMoE experts of 1024 x 2688 x 2 each, the 2 x 4096 x 1024 latent projections.
  const schema::Model& super = shipped_model("nemotron3-super-120b-a12b");
  CHECK(parameter_count(super) == 120668687360);
  CHECK(active_parameter_count(super, false) == 12233346048);
  // Ultra: Mamba 8192 + 8192 x 35072 + 18432 x 5 + 3 x 256 + 16384 + 16384 x 8192 = 421,645,056
  // (48 layers); attention 8192 + 8192 x 8704 + 8192 x 8192 = 138,420,224 (12); LatentMoE 8192 +
  // 8192 x 512 + 512 x 2 x 2048 x 5120 + 2 x 8192 x 10240 + 2 x 8192 x 2048 = 10,942,947,328 of
  // which 22 routed experts use 666,902,528 (48); embedding and output 2 x 131072 x 8192, final
  // norm 8192. The report's 550B total and 55B active (without the input embedding), within 0.5%.
  const schema::Model& ultra = shipped_model("nemotron3-ultra-550b-a55b");
  CHECK(parameter_count(ultra) == 549308968960);
  CHECK(active_parameter_count(ultra, false) == 54985076736);
  CHECK(std::abs(parameter_count(ultra) / 550e9 - 1) < 0.005);
  CHECK(std::abs(active_parameter_count(ultra, false) / 55e9 - 1) < 0.005);
  // Its one shared MTP module (an attention and a LatentMoE layer, three norms, the 2h x h
  // projection) is counted apart: with it 560.5B, the Hugging Face page's 561B.
  const auto ultra_parts = transformer_parameters(ultra.transformer());
  CHECK(ultra_parts.multi_token_prediction ==
        138420224.0 + 10942947328.0 + 3 * 8192 + 2.0 * 8192 * 8192);
  CHECK(std::abs((parameter_count(ultra) + ultra_parts.multi_token_prediction) / 561e9 - 1) <
        0.005);
  // The layers' parameters split into the routed experts and the rest.
  const LayerParameters layers = layer_parameters(nano.transformer(), 0, 52);
  CHECK(layers.routed == 23.0 * 128 * 2 * 2688 * 1856);
  CHECK(layers.all + 2.0 * 131072 * 2688 + 2688 == 31577937344.0);
}

TEST_CASE("a Mamba-2 layer's FLOPs are its projections plus the SSD scan's closed form") {
  const schema::Transformer& t = shipped_model("nemotron3-nano-30b-a3b").transformer();
  REQUIRE(layer_kind(t, 0) == LayerKind::kMamba);
  const LayerShape shape{8192, 2, 1, false, true};
  const std::vector<LayerOp> ops = layer_forward_ops(t, shape, LayerKind::kMamba);
  const double tokens = 8192.0 * 2, h = 2688, inner = 4096, conv = 4096 + 2 * 8 * 128, heads = 64;
  // SSD, Q = 128, N = 128, P = 64, G = 8: tokens (2 Q N G + heads (2 Q P + 4 N P)).
  const double scan = tokens * (2 * 128 * 128 * 8 + heads * (2 * 128 * 64 + 4 * 128 * 64));
  CHECK(all_matmul_flops(ops) ==
        tokens * 2 * h * (inner + conv + heads) + tokens * 2 * inner * h + scan);
  CHECK(all_matmul_flops(ssd_scan_ops(t, 2, 8192, 64, true)) == scan);
  // The scan's chunk states: 64 chunks a sequence, read in fp32 and written in 16 bits; the
  // backward reruns the passing in fp32 and its gradient reads both fp32, writes both 16-bit.
  const double states = 2 * 64 * 64.0 * 128 * 64;
  CHECK(mamba_op(ops, "ssd state passing").bytes == 6 * states);
  CHECK(*mamba_op(ops, "ssd state passing").backward_bytes == 20 * states);
  // One block: a norm, the mixer, the residual; no communication without tensor parallelism.
  for (const LayerOp& op : ops) {
    CHECK((op.kind == LayerOp::Kind::kMatmul || op.kind == LayerOp::Kind::kMemory));
  }
}

TEST_CASE("the SSD scan's kernels move their tensors' bytes and rerun their matmuls backward") {
  // Nano's rank at TP 1: 2 sequences of 8192 tokens, 64 heads of P = 64, 8 groups of N = 128,
  // chunks of Q = 128. Elements: x (heads P a token), B (G N), dt (heads), chunk states (chunks
  // heads N P), C B^T (chunks G Q Q). Bytes kernel by kernel (16-bit x z B C y, fp32 dt, cumsum,
  // states and C B^T): forward cumsum 10 dt, chunk_state 2x + 2B + 8dt + 4S, state_passing 6S,
  // bmm 4B + 4CB, chunk_scan 8x + 2B + 2S + 8dt + 4CB; backward the first four rerun, then the
  // cumsum's 12 dt, db 2x + 2S + 14B + 12dt, passing 12S, two bmm 16B + 8CB, dz 12x, dstates 2B +
  // 2x + 4dt + 4S, dx 6x + 4CB + 2B + 2S + 12dt, dC 2S + 2x + 14B + 4dt, dcb 4x + 8dt + 12CB,
  // ddA 4x + 4CB + 12dt.
  const schema::Transformer& t = shipped_model("nemotron3-nano-30b-a3b").transformer();
  const std::vector<LayerOp> ops = ssd_scan_ops(t, 2, 8192, 64, true);
  const double tokens = 2 * 8192.0, x = tokens * 64 * 64, b = tokens * 8 * 128, dt = tokens * 64;
  const double states = 128 * 64 * 128 * 64.0, cb = 128 * 8 * 128 * 128.0;
  double forward = 0, backward = 0, backward_flops = 0;
  for (const LayerOp& op : ops) {
    if (op.kind == LayerOp::Kind::kMemory) {
      forward += op.bytes;
      backward += *op.backward_bytes;
    } else {
      CHECK(op.sixteen_bit);
      backward_flops += 2.0 * op.m * op.n * op.k * op.count * *op.backward_runs;
    }
  }
  CHECK(forward == 10 * x + 8 * b + 26 * dt + 12 * states + 8 * cb);
  CHECK(backward == 34 * x + 54 * b + 82 * dt + 34 * states + 32 * cb);
  // Backward FLOPs: the chunk states and C B^T 3 times, the states' output twice, the masked
  // product 3 times: tokens (6 Q N G + heads (6 Q P + 10 N P)).
  CHECK(backward_flops == tokens * (6 * 128 * 128 * 8 + 64 * (6 * 128 * 64 + 10 * 128 * 64)));
  // The mixer around the scan: a micro-batch of 2 sequences copies in_proj's output (z x B C dt)
  // to batch-major order and back for its gradient, and the scan's output forward only; the
  // conv1d is rerun in the backward; a single sequence copies nothing.
  const std::vector<LayerOp> two =
      layer_forward_ops(t, LayerShape{8192, 2, 1, false, true}, LayerKind::kMamba);
  const double projected = 4096 + 6144 + 64;
  CHECK(mamba_op(two, "mamba layout copy").bytes == 4 * tokens * projected);
  CHECK(*mamba_op(two, "mamba layout copy").backward_bytes == 4 * tokens * projected);
  CHECK(mamba_op(two, "mamba output layout copy").bytes == 4 * tokens * 4096);
  CHECK(*mamba_op(two, "mamba output layout copy").backward_bytes == 0);
  CHECK(*mamba_op(two, "mamba conv1d").backward_bytes == 10 * tokens * 6144);
  for (const LayerOp& op :
       layer_forward_ops(t, LayerShape{8192, 1, 1, false, true}, LayerKind::kMamba)) {
    CHECK(op.name.find("layout copy") == std::string::npos);
  }
}

TEST_CASE("the SSD scan's kernels move their bytes at the SMs' FP32 rate where HBM is faster") {
  // Nano at TP 1, 2 sequences of 8192 tokens. The scan's memory-bound kernels issue 35 FP32
  // FLOP-equivalents a byte; the conv1d, layout copies and norm stay HBM-bound.
  const schema::Transformer& t = shipped_model("nemotron3-nano-30b-a3b").transformer();
  const std::vector<LayerOp> ops =
      layer_forward_ops(t, LayerShape{8192, 2, 1, false, true}, LayerKind::kMamba);
  for (const LayerOp& op : ops) {
    if (op.kind != LayerOp::Kind::kMemory) continue;
    CHECK(op.fp32_flops_per_byte == (op.name.rfind("ssd ", 0) == 0 ? 35 : 0));
  }
  // chunk_scan's forward on a B200 (80 FP32 TFLOP/s) and an H100 (67): bytes x 35 / the peak,
  // slower than their HBM (8 TB/s and 3.35 TB/s at their memory shares) moves them.
  const Catalog& c = testing::shipped_catalog();
  const schema::Runtime& runtime = *c.runtimes().find("default")->value;
  const LayerOp& scan = mamba_op(ops, "ssd chunk scan");
  for (const auto& [gpu, fp32] : {std::pair{"B200-SXM-180GB", 80e12}, {"H100-SXM5-80GB", 67e12}}) {
    const ComputeModel m(*c.gpus().find(gpu)->value, schema::FP8, runtime,
                         KernelSetting::kTrainingStep);
    CHECK(m.memory_bound(scan.bytes, scan.fp32_flops_per_byte).seconds() ==
          Approx(scan.bytes * 35 / fp32));
    CHECK(m.memory_bound(scan.bytes, scan.fp32_flops_per_byte) > m.memory_bound(scan.bytes));
  }
}

TEST_CASE("AutoModel's Mamba mixer: batch-major, the scan ungated, the norm gating by z") {
  // Without z the scan's chunk_scan reads no z and writes the ungated output alone (4x bytes
  // fewer forward) and no chunk_scan_bwd_dz runs (12x fewer backward); its matmuls are the same.
  const schema::Transformer& t = shipped_model("nemotron3-nano-30b-a3b").transformer();
  const double tokens = 2 * 8192.0, x = tokens * 64 * 64, inner = 4096;
  const auto bytes = [](const std::vector<LayerOp>& ops) {
    double forward = 0, backward = 0, flops = 0;
    for (const LayerOp& op : ops) {
      if (op.kind == LayerOp::Kind::kMemory) {
        forward += op.bytes;
        backward += op.backward_bytes.value_or(2 * op.bytes);
      } else if (op.kind == LayerOp::Kind::kMatmul) {
        flops += 2.0 * op.m * op.n * op.k * op.count;
      }
    }
    return std::array<double, 3>{forward, backward, flops};
  };
  const auto gated = bytes(ssd_scan_ops(t, 2, 8192, 64, true));
  const auto ungated = bytes(ssd_scan_ops(t, 2, 8192, 64, false));
  CHECK(gated[0] - ungated[0] == 4 * x);
  CHECK(gated[1] - ungated[1] == 12 * x);
  CHECK(gated[2] == ungated[2]);
  // The whole mixer of 2 sequences: no layout copies (batch-major), the gated norm reading x and
  // z and writing its output forward (6 T inner), its backward reading them and the gradient,
  // writing dx, dz and the normed output again for out_proj's weight gradient (12 T inner).
  LayerShape shape{8192, 2, 1, false, true};
  shape.mamba_fused_norm_projection = true;
  const std::vector<LayerOp> fused = layer_forward_ops(t, shape, LayerKind::kMamba);
  for (const LayerOp& op : fused) {
    CHECK(op.name.find("layout copy") == std::string::npos);
    CHECK(op.name != "mamba norm");
  }
  CHECK(mamba_op(fused, "mamba gated norm").bytes == 6 * tokens * inner);
  CHECK(*mamba_op(fused, "mamba gated norm").backward_bytes == 12 * tokens * inner);
  // Against Megatron-Core's mixer: the same GEMMs; forward the two layout copies (4 T (10304 +
  // 4096)), 4x of the scan and the plain norm's 4 T inner fewer, the gated norm's 6 T inner more.
  const auto megatron = bytes(layer_forward_ops(t, LayerShape{8192, 2, 1, false, true},
                                                LayerKind::kMamba));
  const auto automodel = bytes(fused);
  CHECK(megatron[2] == automodel[2]);
  CHECK(megatron[0] - automodel[0] ==
        Approx(4 * tokens * (10304 + 4096) + 4 * x + 4 * tokens * inner - 6 * tokens * inner));
  // Backward: the input copy's gradient (4 T 10304), bwd_dz's 12x and the plain norm's 6 T inner
  // fewer, the gated norm's 12 T inner more.
  CHECK(megatron[1] - automodel[1] ==
        Approx(4 * tokens * 10304 + 12 * x + 6 * tokens * inner - 12 * tokens * inner));
}

TEST_CASE("a Mamba layer stores what its conv1d-scan function, norm and out_proj keep") {
  // Nano at TP 1, 8192 tokens in 16 bits: the norm and in_proj inputs (2 + 2) T h, the z x B C dt
  // projection 2T (4096 + 6144 + 64), the ungated scan output and the norm input 2 x 2T 4096,
  // out_proj's input 2T 4096; no conv1d output (rerun) and no chunk states.
  const schema::Transformer& t = shipped_model("nemotron3-nano-30b-a3b").transformer();
  LayerActivationSpec spec{8192, 1, 1, false, schema::RECOMPUTE_NONE, true};
  spec.hybrid = true;
  spec.block = HybridBlock::kMamba;
  const double tokens = 8192;
  CHECK(layer_activation_bytes(t, spec) ==
        tokens * (4 * 2688 + 2 * (4096 + 6144 + 64) + 4 * 4096 + 2 * 4096));
}

TEST_CASE("recomputed expert modules free what their rerun makes again") {
  // Nano's expert layer at TP 1, 8192 tokens, MXFP8 (1-byte GEMM inputs), balanced: 6 routed copies
  // a token of 1856-wide squared-ReLU experts. "moe_act" frees the down projections' inputs,
  // 1 x 6 x 1856 bytes a token; "moe" keeps the layer's input alone: every expert term goes.
  const schema::Transformer& t = shipped_model("nemotron3-nano-30b-a3b").transformer();
  LayerActivationSpec spec{8192, 1, 1, false, schema::RECOMPUTE_NONE, true};
  spec.gemm_inputs = {1, 1, 1, 1};
  spec.hybrid = true;
  spec.block = HybridBlock::kExperts;
  const double kept = layer_activation_bytes(t, spec);
  spec.recompute_expert_activation = true;
  CHECK(kept - layer_activation_bytes(t, spec) == 8192.0 * 6 * 1856);
  spec.recompute_experts = true;
  // The norm input and the MLP input (the layer's boundary, 2 + 1 bytes of h a token) alone.
  CHECK(layer_activation_bytes(t, spec) == 8192.0 * (2 + 1) * 2688);
}

TEST_CASE("tensor parallelism splits a Mamba layer's heads and groups and reduces its output") {
  const schema::Transformer& t = shipped_model("nemotron3-nano-30b-a3b").transformer();
  const LayerShape one{8192, 1, 1, false, true};
  const LayerShape two{8192, 1, 2, true, true};
  const std::vector<LayerOp> whole = layer_forward_ops(t, one, LayerKind::kMamba);
  const std::vector<LayerOp> half = layer_forward_ops(t, two, LayerKind::kMamba);
  CHECK(all_matmul_flops(half) == all_matmul_flops(whole) / 2);
  CHECK(mamba_op(half, "mamba in_proj").n == (4096 + 6144 + 64) / 2);
  CHECK(mamba_op(half, "mamba out_proj").k == 2048);
  CHECK(mamba_op(half, "ssd C B").count == 64 * 4);  // chunks x the rank's 4 groups
  // Sequence parallelism: gather the hidden states before, reduce-scatter the output after.
  CHECK(mamba_op(half, "mamba all-gather").kind == LayerOp::Kind::kTensorAllGather);
  CHECK(mamba_op(half, "mamba all-reduce").kind == LayerOp::Kind::kTensorReduceScatter);
  CHECK(mamba_op(half, "mamba all-reduce").bytes == 2.0 * 8192 * 2688);
  // Heads (and groups) that tensor parallelism cannot split are refused.
  schema::Model odd = shipped_model("nemotron3-nano-30b-a3b");
  odd.mutable_transformer()->set_num_kv_heads(8);
  odd.mutable_transformer()->mutable_mamba()->set_num_heads(60);
  odd.mutable_transformer()->mutable_mamba()->set_num_groups(4);
  CHECK(tensor_parallel_problem(2, &odd).empty());
  CHECK(tensor_parallel_problem(8, &odd) == "8 does not divide the model's mamba.num_heads (60)");
  odd.mutable_transformer()->mutable_mamba()->set_num_heads(64);
  CHECK(tensor_parallel_problem(8, &odd) == "8 does not divide the model's mamba.num_groups (4)");
}

TEST_CASE("a hybrid model's layers are each of their pattern letter's kind") {
  const schema::Transformer& t = shipped_model("nemotron3-super-120b-a12b").transformer();
  CHECK(hybrid_blocks_in(t, 0, 88, HybridBlock::kMamba) == 40);
  CHECK(hybrid_blocks_in(t, 0, 88, HybridBlock::kExperts) == 40);
  CHECK(hybrid_blocks_in(t, 0, 88, HybridBlock::kAttention) == 8);
  CHECK(layer_kind(t, 7) == LayerKind::kAttention);
  CHECK(layer_kind(t, 1) == LayerKind::kHybridExperts);
  CHECK(routes_to_experts(LayerKind::kHybridExperts));
  // LatentMoE: the experts read and write the latent, and the dispatch moves it.
  const LayerShape shape{8192, 1, 1, false, true, 1, schema::P2P, 2, 64};
  const std::vector<LayerOp> ops = layer_forward_ops(t, shape, LayerKind::kHybridExperts);
  CHECK(mamba_op(ops, "latent down").n == 1024);
  CHECK(mamba_op(ops, "expert up").k == 1024);
  CHECK(mamba_op(ops, "dispatch").bytes == 2.0 * 8192 * 22 * 1024);
}

TEST_CASE(
    "Nemotron 3 Super's one shared multi-token-prediction module counts apart from the total") {
  // mtp_hybrid_override_pattern "*E" once (mtp_use_repeated_layer): attention 4096 + 2 x 4096 x
  // 32 x 128 + 2 x 4096 x 2 x 128 = 35,655,680; LatentMoE 4096 + 512 x 2 x 1024 x 2688 + 2 x 2 x
  // 4096 x 2688 + 4096 x 512 + 2 x 4096 x 1024 = 2,873,102,336; hidden, embedding and final norms
  // 3 x 4096 and the 2h x h projection 2 x 4096^2.
  schema::Model super = shipped_model("nemotron3-super-120b-a12b");
  const schema::Transformer& t = super.transformer();
  const TransformerParameters p = transformer_parameters(t);
  CHECK(p.multi_token_prediction == 35655680 + 2873102336 + 3 * 4096 + 2 * 4096 * 4096);
  CHECK(p.total() == 120668687360);  // the published 120B stays without them
  const MultiTokenPredictionParameters mtp = multi_token_prediction_parameters(t, p);
  CHECK(mtp.layers.all == 35655680.0 + 2873102336.0);
  CHECK(mtp.layers.routed == 512.0 * 2 * 1024 * 2688);
  CHECK(mtp.other == 3.0 * 4096 + 2.0 * 4096 * 4096);
  // Unshared, each of the 2 passes has its own module: twice the weights.
  super.mutable_transformer()->set_multi_token_prediction_shared(false);
  CHECK(multi_token_prediction_weight_copies(super.transformer()) == 2);
  CHECK(transformer_parameters(super.transformer()).multi_token_prediction ==
        2 * p.multi_token_prediction);
}

TEST_CASE(
    "a hybrid multi-token-prediction pass costs its pattern's layers, projection and logits") {
  // Super at TP 1 and EP 1, 8192 tokens, one pass, forward GEMM FLOPs per token: projection 2 x
  // 2h x h; attention QKV and output 2 h (a + 2k) d + 2 a d h; router 2 h E; latent down and up
  // 2 x 2 h l; 22 routed experts 22 x 2 x 2 l f (squared ReLU: up and down); shared expert 2 x 2 h
  // x 5376; logits 2 h v. 512 experts receive 8192 x 22 / 512 = 352 rows each.
  const schema::Transformer& t = shipped_model("nemotron3-super-120b-a12b").transformer();
  const LayerShape shape{8192, 1, 1, false, true, 1, schema::P2P, 2, 1};
  const std::vector<LayerKind> kinds = multi_token_prediction_layer_kinds(t);
  REQUIRE(kinds == std::vector<LayerKind>{LayerKind::kAttention, LayerKind::kHybridExperts});
  double flops = all_matmul_flops(multi_token_prediction_ops(t, shape));
  for (LayerKind kind : kinds) flops += all_matmul_flops(layer_forward_ops(t, shape, kind));
  flops += all_matmul_flops(output_forward_ops(t, shape));
  const double h = 4096, a = 32, k = 2, d = 128, e = 512, l = 1024, f = 2688, v = 131072;
  const double per_token = 2 * 2 * h * h + 2 * h * (a + 2 * k) * d + 2 * a * d * h + 2 * h * e +
                           2 * 2 * h * l + 22 * 2 * 2 * l * f + 2 * 2 * h * 5376 + 2 * h * v;
  CHECK(flops == Approx(8192 * per_token).epsilon(1e-12));
  // keep_mtp_spec_in_bf16: every GEMM of the pass in 16 bits, nothing else changed.
  const std::vector<LayerOp> ops =
      with_sixteen_bit_gemms(layer_forward_ops(t, shape, LayerKind::kHybridExperts));
  for (const LayerOp& op : ops) CHECK(op.sixteen_bit == (op.kind == LayerOp::Kind::kMatmul));
  CHECK(all_matmul_flops(ops) ==
        all_matmul_flops(layer_forward_ops(t, shape, LayerKind::kHybridExperts)));
}

}  // namespace
}  // namespace clustersim
