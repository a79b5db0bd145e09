// Tests of a layer's times in a training step: FP8 GEMMs against BF16 (the closed form of a
// GEMM-only layer, and the casts a real layer adds), a grouped GEMM run a kernel per matrix, and
// context parallelism splitting a rank's work.
#include "sim/parallel/layer_times.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "sim/net/collective.h"
#include "sim/workload/lora.h"
#include "tests/testing/cluster.h"

namespace clustersim {
namespace {

namespace s = schema;

ComputeModel in_step(s::Precision precision) {
  const Catalog& c = testing::shipped_catalog();
  return ComputeModel(*c.gpus().find("H100-SXM5-80GB")->value, precision,
                      *c.runtimes().find("default")->value, KernelSetting::kTrainingStep);
}

// The GEMM rate of `precision` in a training step: peak x fitted max fraction x sustained.
double gemm_rate(s::Precision precision) {
  const s::Gpu& gpu = *testing::shipped_catalog().gpus().find("H100-SXM5-80GB")->value;
  double peak = precision == s::FP8 ? gpu.peak_tflops().fp8() : gpu.peak_tflops().bf16();
  double fraction = 0, sustained = gpu.sustained_compute_fraction();
  for (const s::MatmulEfficiency& e : gpu.matmul_efficiency()) {
    if (e.precision() != precision) continue;
    fraction = e.max_fraction();
    if (e.has_sustained_fraction()) sustained = e.sustained_fraction();
  }
  return peak * fraction * sustained;
}

std::vector<LayerOp> llama70b_ops(bool narrow, int cp = 1) {
  const auto& t = testing::shipped_catalog().models().find("llama3-70b")->value->transformer();
  LayerShape shape{8192, 1, 8, true, true, cp, s::P2P, narrow ? 1.0 : 2.0};
  return layer_forward_ops(t, shape, LayerKind::kDense);
}

TEST_CASE("BF16 -> FP8 speed-up of a GEMM-only layer equals the ratio of the two GEMM rates") {
  // Llama 3 70B's four GEMMs at 8192 tokens on 8-way tensor parallelism: every dimension a
  // multiple of 128 (no tile waste) and compute-bound in both precisions. Forward and both
  // backward GEMMs each pay the launch overhead once (5.4 us in both fits). Hopper writes each
  // GEMM's 16-bit output after its main loop, the same bytes in both precisions: that pulls the
  // speed-up below the rates' ratio, by under 5% at these shapes.
  std::vector<LayerOp> gemms;
  for (const LayerOp& op : llama70b_ops(false)) {
    if (op.kind == LayerOp::Kind::kMatmul) gemms.push_back(op);
  }
  REQUIRE(gemms.size() == 4);
  const double overheads = 3 * 4 * 5.4e-6;
  const auto seconds = [&](s::Precision p) {
    const LayerTimes t = time_layer(gemms, in_step(p), {}, s::RECOMPUTE_NONE);
    return (t.forward.compute + t.backward.compute).seconds() - overheads;
  };
  const double speed_up = seconds(s::BF16) / seconds(s::FP8);
  CHECK(speed_up < gemm_rate(s::FP8) / gemm_rate(s::BF16));
  CHECK(speed_up > 0.95 * gemm_rate(s::FP8) / gemm_rate(s::BF16));
}

TEST_CASE("a Blackwell BF16 GEMM-only layer runs at the sustained fraction carried from FP8") {
  // The same four GEMMs on a B200 in BF16: 2 m n k FLOPs each forward, twice that backward, at
  // 2250 TFLOP/s x 0.828 x s, s = the B200's own FP8 fraction (gpus.textproto sustained_transfer
  // without a reference: 0.553), plus 3 x 4 launches of 6.4 us.
  const Catalog& c = testing::shipped_catalog();
  const s::Gpu& b200 = *c.gpus().find("B200-SXM-180GB")->value;
  double sustained = 0;
  for (const s::MatmulEfficiency& e : b200.matmul_efficiency()) {
    if (e.precision() == s::FP8) sustained = e.sustained_fraction();
  }
  REQUIRE(sustained == Approx(0.553).epsilon(0.002));
  double flops = 0;
  std::vector<LayerOp> gemms;
  for (const LayerOp& op : llama70b_ops(false)) {
    if (op.kind != LayerOp::Kind::kMatmul) continue;
    gemms.push_back(op);
    flops += 3 * 2.0 * static_cast<double>(op.m * op.n * op.k * op.count);
  }
  const ComputeModel bf16(b200, s::BF16, *c.runtimes().find("default")->value,
                          KernelSetting::kTrainingStep);
  const LayerTimes t = time_layer(gemms, bf16, {}, s::RECOMPUTE_NONE);
  CHECK((t.forward.compute + t.backward.compute).seconds() ==
        Approx(flops / (2250e12 * 0.828 * sustained) + 3 * 4 * 6.4e-6).epsilon(1e-9));
}

TEST_CASE("a grouped GEMM run as a kernel per matrix pays each kernel's overhead") {
  // 16 experts' GEMMs of 2048 x 1536 x 2048 on the H100 in FP8 (overhead 5.4 us): one batched
  // kernel pays it once a pass's GEMM, 16 kernels 16 times; the FLOPs are the same. Forward one
  // GEMM (15 more overheads), backward two (30 more).
  LayerOp op{LayerOp::Kind::kMatmul, "expert up", 2048, 1536, 2048, 16};
  const LayerTimes batched = time_layer({op}, in_step(s::FP8), {}, s::RECOMPUTE_NONE);
  op.kernel_per_matrix = true;
  const LayerTimes looped = time_layer({op}, in_step(s::FP8), {}, s::RECOMPUTE_NONE);
  CHECK((looped.forward.compute - batched.forward.compute).seconds() ==
        Approx(15 * 5.4e-6).margin(1e-11));
  CHECK((looped.backward.compute - batched.backward.compute).seconds() ==
        Approx(30 * 5.4e-6).margin(1e-11));
}

TEST_CASE("a matmul with backward runs takes its forward that many times backward") {
  // The SSD scan's batched matmuls (mamba_layer.h) rerun their forward shape in the backward
  // instead of a data and a weight gradient.
  LayerOp op{LayerOp::Kind::kMatmul, "ssd C B", 128, 128, 128, 1024};
  op.sixteen_bit = true;
  const LayerTimes plain = time_layer({op}, in_step(s::FP8), {}, s::RECOMPUTE_NONE);
  CHECK(plain.backward.compute == Picoseconds(2 * plain.forward.compute.count()));
  op.backward_runs = 3;
  const LayerTimes runs = time_layer({op}, in_step(s::FP8), {}, s::RECOMPUTE_NONE);
  CHECK(runs.forward.compute == plain.forward.compute);
  CHECK(runs.backward.compute == Picoseconds(3 * plain.forward.compute.count()));
}

TEST_CASE("MXFP8 -> NVFP4 speed-up of a GEMM-only layer equals the ratio of the two GEMM rates") {
  // The same four GEMMs on a GB200: FP8 under MXFP8 at peak 5000 x max x the MXFP8 sustained
  // fraction, FP4 at peak 10000 x max x the FP4 sustained fraction; compute-bound in both
  // (the 4-bit operands halve the bytes again), each GEMM paying one launch overhead per pass.
  const Catalog& c = testing::shipped_catalog();
  const s::Gpu& gpu = *c.gpus().find("GB200-186GB")->value;
  const s::Runtime& runtime = *c.runtimes().find("default")->value;
  double fp8_rate = 0, fp4_rate = 0, overhead_us = 0;
  for (const s::MatmulEfficiency& e : gpu.matmul_efficiency()) {
    if (e.precision() == s::FP8) {
      fp8_rate = gpu.peak_tflops().fp8() * e.max_fraction() * e.mxfp8_sustained_fraction();
    }
    if (e.precision() == s::FP4) {
      fp4_rate = gpu.peak_tflops().fp4() * e.max_fraction() * e.sustained_fraction();
      overhead_us = e.overhead_us();
    }
  }
  REQUIRE(fp8_rate > 0);
  REQUIRE(fp4_rate > 0);
  std::vector<LayerOp> gemms;
  for (const LayerOp& op : llama70b_ops(false)) {
    if (op.kind == LayerOp::Kind::kMatmul) gemms.push_back(op);
  }
  const auto seconds = [&](const ComputeModel& compute) {
    const LayerTimes t = time_layer(gemms, compute, {}, s::RECOMPUTE_NONE);
    return (t.forward.compute + t.backward.compute).seconds() - 3 * 4 * overhead_us * 1e-6;
  };
  const ComputeModel mxfp8(gpu, s::FP8, runtime, KernelSetting::kTrainingStep, s::MXFP8);
  const ComputeModel nvfp4(gpu, s::FP4, runtime, KernelSetting::kTrainingStep, s::NVFP4);
  CHECK(seconds(mxfp8) / seconds(nvfp4) == Approx(fp4_rate / fp8_rate).epsilon(1e-7));
}

TEST_CASE("sliding-window attention takes its first window's causal kernel plus the band's") {
  // gpt-oss-120b at 4096 tokens, window 128: the first 128 queries causally, the other 3968
  // against 128 keys each, 64 heads of 64.
  const auto& oss = testing::shipped_catalog().models().find("gpt-oss-120b")->value->transformer();
  LayerShape shape{4096, 1, 1, false, true};
  shape.sliding_window = true;
  std::vector<LayerOp> core;
  for (const LayerOp& op : layer_forward_ops(oss, shape, LayerKind::kExperts)) {
    if (op.kind == LayerOp::Kind::kAttention) core.push_back(op);
  }
  REQUIRE(core.size() == 1);
  const ComputeModel compute = in_step(s::BF16);
  const LayerTimes t = time_layer(core, compute, {}, s::RECOMPUTE_NONE);
  const AttentionKernel first{64, 128, 128, 64, true}, band{64, 3968, 128, 64, false};
  CHECK(t.forward.compute == compute.attention_forward(first) + compute.attention_forward(band));
  CHECK(t.backward.compute == compute.attention_backward(first) + compute.attention_backward(band));
  // Far cheaper than attending to the whole causal prefix.
  shape.sliding_window = false;
  std::vector<LayerOp> dense;
  for (const LayerOp& op : layer_forward_ops(oss, shape, LayerKind::kExperts)) {
    if (op.kind == LayerOp::Kind::kAttention) dense.push_back(op);
  }
  CHECK(time_layer(dense, compute, {}, s::RECOMPUTE_NONE).forward.compute.seconds() >
        4 * t.forward.compute.seconds());
}

TEST_CASE("FP8 attention's backward of a sliding window covers the whole causal square") {
  // cuDNN's FP8 backward (job.fp8_attention) skips no tile outside gpt-oss's 128-token window:
  // its backward is the causal kernel over all 4096 keys, its forward still the band's.
  const auto& oss = testing::shipped_catalog().models().find("gpt-oss-120b")->value->transformer();
  auto core = [&](bool windowed, bool fp8_attention) {
    LayerShape shape{4096, 1, 1, false, true};
    shape.sliding_window = windowed;
    shape.fp8_attention = fp8_attention;
    std::vector<LayerOp> ops;
    for (const LayerOp& op : layer_forward_ops(oss, shape, LayerKind::kExperts)) {
      if (op.kind == LayerOp::Kind::kAttention) ops.push_back(op);
    }
    REQUIRE(ops.size() == 1);
    return ops;
  };
  CHECK(core(true, true)[0].backward_unwindowed);
  CHECK_FALSE(core(true, false)[0].backward_unwindowed);
  CHECK_FALSE(core(false, true)[0].backward_unwindowed);
  const ComputeModel compute = in_step(s::FP8);
  const LayerTimes t = time_layer(core(true, true), compute, {}, s::RECOMPUTE_NONE);
  // Every kernel with FP8 inputs (the FP8 forward rates; the backward at the 16-bit ones).
  const AttentionKernel first{64, 128, 128, 64, true, true}, band{64, 3968, 128, 64, false, true},
      square{64, 4096, 4096, 64, true, true};
  CHECK(t.forward.compute == compute.attention_forward(first) + compute.attention_forward(band));
  CHECK(t.backward.compute == compute.attention_backward(square));
  // The dense layers' attention is unchanged: it covered the square already.
  CHECK(time_layer(core(false, true), compute, {}, s::RECOMPUTE_NONE).backward.compute ==
        t.backward.compute);
  // The causal square's 8.4M pairs against the band's 0.5M: the backward several times longer.
  const LayerTimes sixteen_bit = time_layer(core(true, false), compute, {}, s::RECOMPUTE_NONE);
  CHECK(t.backward.compute.seconds() > 4 * sixteen_bit.backward.compute.seconds());
}

TEST_CASE("chunked attention runs one causal kernel over the sequence padded to whole chunks") {
  // Llama 4 Scout at 20000 tokens, chunks of 8192: 3 chunks (the last padded, as NeMo's chunkify
  // does) of 8192 causal queries for each of 40 heads of 128.
  const auto& scout =
      testing::shipped_catalog().models().find("llama4-scout")->value->transformer();
  auto core = [&](int sequence, bool windowed) {
    LayerShape shape{sequence, 1, 1, false, true};
    shape.sliding_window = windowed;
    std::vector<LayerOp> ops;
    for (const LayerOp& op : layer_forward_ops(scout, shape, LayerKind::kExperts)) {
      if (op.kind == LayerOp::Kind::kAttention) ops.push_back(op);
    }
    REQUIRE(ops.size() == 1);
    return ops;
  };
  const ComputeModel compute = in_step(s::BF16);
  const LayerTimes t = time_layer(core(20000, true), compute, {}, s::RECOMPUTE_NONE);
  const AttentionKernel chunks{3 * 40, 8192, 8192, 128, true};
  CHECK(t.forward.compute == compute.attention_forward(chunks));
  CHECK(t.backward.compute == compute.attention_backward(chunks));
  // A chunk no shorter than the sequence: the plain causal kernel.
  CHECK(time_layer(core(8192, true), compute, {}, s::RECOMPUTE_NONE).forward.compute ==
        time_layer(core(8192, false), compute, {}, s::RECOMPUTE_NONE).forward.compute);
}

TEST_CASE("each recomputed expert module adds exactly its kernels' forward") {
  // Nemotron 3 Nano's expert layer at 8192 tokens, TP 1 (the H100 recipe's recompute_modules):
  // "moe" reruns the layer from the router to the shared expert, all-to-alls included (EP 1 here:
  // none); "moe_act" the routed experts' activation; "layernorm" the norm in front of the router.
  const schema::Transformer& t =
      testing::shipped_catalog().models().find("nemotron3-nano-30b-a3b")->value->transformer();
  const std::vector<LayerOp> ops =
      layer_forward_ops(t, {8192, 1, 1, false, true}, LayerKind::kHybridExperts);
  const ComputeModel compute = in_step(s::FP8);
  const auto forward_of = [&](const auto& pick) {
    Picoseconds sum{0};
    for (const LayerOp& op : ops) {
      if (pick(op)) sum += time_layer({op}, compute, {}, s::RECOMPUTE_NONE).forward.total();
    }
    return sum;
  };
  using R = LayerOp::Recomputable;
  const auto rerun = [&](RecomputedParts parts) {
    return time_layer(ops, compute, {}, s::RECOMPUTE_NONE, {}, parts).recompute.total();
  };
  const Picoseconds norm = forward_of([](const LayerOp& op) { return op.name == "norm"; });
  const Picoseconds activation =
      forward_of([](const LayerOp& op) { return op.name == "expert activation"; });
  const Picoseconds layer = forward_of([](const LayerOp& op) {
    return op.name != "norm" && op.name != "residual add";
  });
  CHECK(norm.count() > 0);
  CHECK(activation.count() > 0);
  CHECK(rerun({false, true}) == layer);
  CHECK(rerun({false, false, true}) == activation);
  CHECK(rerun({false, false, false, true}) == norm);
  CHECK(rerun({false, true, true, true}) == layer + norm);
  // The recipe's modules as the parallelism names them.
  s::Parallelism p;
  p.add_recompute_modules(s::RECOMPUTE_MOE_ACT);
  p.add_recompute_modules(s::RECOMPUTE_LAYERNORM);
  const RecomputedParts parts = recomputed_parts(p);
  CHECK((!parts.latent_up && !parts.expert_layer && parts.expert_activation && parts.expert_norm));
  for (const LayerOp& op : ops) {
    if (op.name == "router" || op.name == "expert up") CHECK(op.recomputable == R::kExpertLayer);
  }
}

TEST_CASE("recomputing latent attention's up projections reruns their two GEMMs' forwards only") {
  // DeepSeek-V3 at 4096 tokens, TP 1: "q up" 4096 x 128*192 x 1536 and "kv up" 4096 x
  // 128*(128+128) x 512 rerun before the backward (Megatron-Core's mla_up_proj); nothing else.
  const auto& ds = testing::shipped_catalog().models().find("deepseek-v3")->value->transformer();
  const std::vector<LayerOp> ops =
      layer_forward_ops(ds, {4096, 1, 1, false, true}, LayerKind::kExperts);
  const ComputeModel compute = in_step(s::BF16);
  const LayerTimes kept = time_layer(ops, compute, {}, s::RECOMPUTE_NONE);
  const LayerTimes rerun = time_layer(ops, compute, {}, s::RECOMPUTE_NONE, {}, {true});
  CHECK(kept.recompute.total().count() == 0);
  Picoseconds up{0};
  int found = 0;
  for (const LayerOp& op : ops) {
    if (op.name != "q up" && op.name != "kv up") continue;
    up += time_layer({op}, compute, {}, s::RECOMPUTE_NONE).forward.total();
    ++found;
  }
  REQUIRE(found == 2);
  CHECK(rerun.recompute.total() == up);
  CHECK(rerun.forward.total() == kept.forward.total());
  CHECK(rerun.backward.total() == kept.backward.total());
}

TEST_CASE("mla_up_proj under compressed sparse attention reruns q up, its head norm and kv") {
  // DeepSeek V4 Flash at 4096 tokens, TP 1 (DSv4HybridSelfAttention's checkpoint of
  // qkv_up_proj_and_rope_apply): the query's up projection and head norm, the key-value head's
  // projection and norm; not the query's down projection or its norm.
  const auto& v4 =
      testing::shipped_catalog().models().find("deepseek-v4-flash")->value->transformer();
  LayerShape shape{4096, 1, 1, false, true};
  shape.compress_ratio = 4;
  const std::vector<LayerOp> ops = layer_forward_ops(v4, shape, LayerKind::kExperts);
  const ComputeModel compute = in_step(s::BF16);
  const LayerTimes rerun = time_layer(ops, compute, {}, s::RECOMPUTE_NONE, {}, {true});
  Picoseconds checkpointed{0};
  int found = 0;
  for (const LayerOp& op : ops) {
    if (op.name != "q up" && op.name != "q head norm" && op.name != "kv" && op.name != "kv norm") {
      continue;
    }
    checkpointed += time_layer({op}, compute, {}, s::RECOMPUTE_NONE).forward.total();
    ++found;
  }
  REQUIRE(found == 4);
  CHECK(rerun.recompute.total() == checkpointed);
}

TEST_CASE("a compiled layer's recomputation reruns only what its backward reads") {
  // Llama 3 70B at 8192 tokens, TP 1, LoRA on all four projections with dropout: the whole
  // forward reruns under plain full recomputation; under compiled_recompute all but the norms,
  // the residual adds, the output projections and their adapters' B GEMM, dropout and add.
  const auto& t = testing::shipped_catalog().models().find("llama3-70b")->value->transformer();
  s::Lora lora;
  lora.set_rank(16);
  lora.set_dropout(0.1);
  const std::vector<LayerOp> ops =
      with_lora(lora, layer_forward_ops(t, {8192, 1, 1, false, true}, LayerKind::kDense), 1);
  const ComputeModel compute = in_step(s::BF16);
  s::Parallelism p;
  p.set_compiled_recompute(true);
  const RecomputedParts compiled = recomputed_parts(p);
  REQUIRE(compiled.backward_reads_only);
  const LayerTimes whole = time_layer(ops, compute, {}, s::RECOMPUTE_FULL);
  const LayerTimes rerun = time_layer(ops, compute, {}, s::RECOMPUTE_FULL, {}, compiled);
  Picoseconds read{0};
  std::vector<std::string> skipped;
  for (const LayerOp& op : ops) {
    if (backward_reads(op)) {
      read += time_layer({op}, compute, {}, s::RECOMPUTE_NONE).forward.total();
    } else {
      skipped.push_back(op.name);
    }
  }
  CHECK(skipped == std::vector<std::string>{
                       "norm1", "attention out adapter B", "attention out adapter dropout",
                       "attention out adapter add", "attention out", "residual add", "norm2",
                       "mlp down adapter B", "mlp down adapter dropout", "mlp down adapter add",
                       "mlp down", "residual add"});
  CHECK(whole.recompute.total() == whole.forward.total());
  CHECK(rerun.recompute.total() == read);
  CHECK(rerun.recompute.total() < whole.recompute.total());
  CHECK(rerun.forward.total() == whole.forward.total());
  CHECK(rerun.backward.total() == whole.backward.total());
  // The tensor-parallel reductions after the blocks are not read either; an all-gather is.
  CHECK_FALSE(backward_reads({LayerOp::Kind::kTensorAllReduce, "attention all-reduce"}));
  CHECK_FALSE(backward_reads({LayerOp::Kind::kTensorReduceScatter, "MLP all-reduce"}));
  CHECK(backward_reads({LayerOp::Kind::kTensorAllGather, "attention all-gather"}));
}

TEST_CASE("an FP8 layer gains less than its GEMMs: casts, 16-bit attention and norms remain") {
  auto topology = testing::shipped_cluster("onprem.dgx-h100", 1);
  GroupCollectives tensor(*topology, topology->first_gpus(8));
  const LayerGroups groups{&tensor, nullptr, s::P2P};
  const LayerTimes bf16 = time_layer(llama70b_ops(false), in_step(s::BF16), groups,
                                     s::RECOMPUTE_NONE);
  const LayerTimes fp8 =
      time_layer(llama70b_ops(true), in_step(s::FP8), groups, s::RECOMPUTE_NONE);
  const double speedup = (bf16.forward.compute + bf16.backward.compute).seconds() /
                         (fp8.forward.compute + fp8.backward.compute).seconds();
  CHECK(speedup > 1.2);
  CHECK(speedup < gemm_rate(s::FP8) / gemm_rate(s::BF16));
  // The all-gathers in front of FP8 GEMMs move 1-byte elements: cheaper than BF16's.
  CHECK(fp8.forward.tensor_comm < bf16.forward.tensor_comm);
}

TEST_CASE(
    "an FP8 all-gather's backward reduce-scatters the 16-bit gradient, a reduce-scatter's "
    "backward all-gathers the FP8 one") {
  // Llama 3 70B at TP 8 under sequence parallelism without overlap, per-tensor FP8: the forward
  // gathers each block's input in FP8 (1 byte an element) and reduce-scatters its output in 16
  // bits (2); the backward reduce-scatters the data gradient in 16 bits and all-gathers the
  // output gradient's row-wise FP8 copy (1): each collective's bytes swap between the passes.
  // With frozen weights (no weight gradient to hide behind, no input to re-gather) every
  // backward collective is exposed.
  auto topology = testing::shipped_cluster("onprem.dgx-h100", 1);
  GroupCollectives tensor(*topology, topology->first_gpus(8));
  const auto& t70 = testing::shipped_catalog().models().find("llama3-70b")->value->transformer();
  LayerShape shape{8192, 1, 8, true, true, 1, s::P2P, 1.0};
  shape.gathered_gradient_bytes = 1.0;
  std::vector<LayerOp> ops = layer_forward_ops(t70, shape, LayerKind::kDense);
  for (LayerOp& op : ops) op.frozen = op.kind == LayerOp::Kind::kMatmul;
  const LayerTimes t =
      time_layer(ops, in_step(s::FP8), {&tensor, nullptr, s::P2P}, s::RECOMPUTE_NONE);
  const double hidden = 2.0 * 8192 * 8192;
  const Picoseconds gather = tensor.time(CollectiveOp::kAllGather, hidden / 2);
  const Picoseconds scatter = tensor.time(CollectiveOp::kReduceScatter, hidden);
  REQUIRE(gather < scatter);
  CHECK(t.forward.tensor_comm == Picoseconds(2 * (gather + scatter).count()));
  CHECK(t.backward.tensor_comm == t.forward.tensor_comm);
  // In 16 bits every collective moves 2 bytes an element both ways.
  ops = llama70b_ops(false);
  for (LayerOp& op : ops) op.frozen = op.kind == LayerOp::Kind::kMatmul;
  const LayerTimes bf16 =
      time_layer(ops, in_step(s::BF16), {&tensor, nullptr, s::P2P}, s::RECOMPUTE_NONE);
  CHECK(bf16.backward.tensor_comm == Picoseconds(4 * scatter.count()));
}

TEST_CASE(
    "without userbuffers a column-parallel GEMM's backward hides its reduce-scatter behind the "
    "weight gradient and its input's re-gather behind the data gradient") {
  // Transformer Engine's LayerNormLinear backward under sequence parallelism: the input's
  // all-gather runs asynchronously beside the data-gradient GEMM, the data gradient's
  // reduce-scatter beside the weight-gradient GEMM; only what outlasts each GEMM is exposed. The
  // row-parallel GEMMs' output-gradient all-gathers stay exposed. Llama 3 70B, TP 8, BF16.
  auto topology = testing::shipped_cluster("onprem.dgx-h100", 1);
  GroupCollectives tensor(*topology, topology->first_gpus(8));
  const ComputeModel compute = in_step(s::BF16);
  const std::vector<LayerOp> ops = llama70b_ops(false);
  const LayerTimes t = time_layer(ops, compute, {&tensor, nullptr, s::P2P}, s::RECOMPUTE_NONE);
  const double hidden = 2.0 * 8192 * 8192;
  const Picoseconds gather = tensor.time(CollectiveOp::kAllGather, hidden);
  const Picoseconds scatter = tensor.time(CollectiveOp::kReduceScatter, hidden);
  Picoseconds expected = Picoseconds(2 * gather.count());  // proj's and fc2's output gradients
  int column_parallel = 0;
  for (size_t i = 0; i + 1 < ops.size(); ++i) {
    if (ops[i].kind != LayerOp::Kind::kTensorAllGather) continue;
    const LayerOp& m = ops[i + 1];
    REQUIRE(m.kind == LayerOp::Kind::kMatmul);
    const Picoseconds data_gradient = compute.matmul(m.m, m.k, m.n, m.count, false);
    const Picoseconds weight_gradient = compute.matmul(m.k, m.n, m.m, m.count, false);
    expected += std::max(Picoseconds(), scatter - weight_gradient) +
                std::max(Picoseconds(), gather - data_gradient);
    ++column_parallel;
  }
  CHECK(column_parallel == 2);  // qkv and fc1
  CHECK(t.backward.tensor_comm == expected);
  // Hidden at least in part: less than the same collectives exposed whole.
  CHECK(t.backward.tensor_comm < Picoseconds(4 * scatter.count()));
}

TEST_CASE("context parallel 2 halves a rank's GEMMs and its share of the causal attention") {
  auto topology = testing::shipped_cluster("onprem.dgx-h100", 2);
  GroupCollectives tensor(*topology, topology->first_gpus(8));
  GroupCollectives context(*topology, {0, 8});
  const ComputeModel compute = in_step(s::BF16);
  const LayerTimes whole =
      time_layer(llama70b_ops(false), compute, {&tensor, nullptr, s::P2P}, s::RECOMPUTE_NONE);
  const LayerTimes split =
      time_layer(llama70b_ops(false, 2), compute, {&tensor, &context, s::P2P}, s::RECOMPUTE_NONE);
  // Per rank: half the tokens of every GEMM, norm and all-reduce, a quarter of the square
  // (2 ranks x 2 steps) in the attention; its kernels on shorter keys run a little slower.
  const double ratio = split.forward.compute.seconds() / whole.forward.compute.seconds();
  CHECK(ratio > 0.45);
  CHECK(ratio < 0.55);
  CHECK(split.forward.context_comm >= Picoseconds(0));
  CHECK(whole.forward.context_comm == Picoseconds(0));
}

TEST_CASE("a FlashAttention-2 job's attention runs that library's kernels, in the ring too") {
  // Llama 3 70B at 8192 tokens, 8 heads per rank of 128: job.attention_library reaches the
  // attention op and every kernel of the context-parallel ring.
  const auto& t = testing::shipped_catalog().models().find("llama3-70b")->value->transformer();
  auto attention = [&](int cp, s::AttentionLibrary library) {
    LayerShape shape{8192, 1, 8, true, true, cp, s::P2P};
    shape.attention_library = library;
    std::vector<LayerOp> ops;
    for (const LayerOp& op : layer_forward_ops(t, shape, LayerKind::kDense)) {
      if (op.kind == LayerOp::Kind::kAttention) ops.push_back(op);
    }
    REQUIRE(ops.size() == 1);
    CHECK(ops[0].library == library);
    return ops;
  };
  const ComputeModel compute = in_step(s::BF16);
  AttentionKernel whole{8, 8192, 8192, 128, true};
  whole.library = s::FLASH_ATTENTION_2;
  const LayerTimes alone =
      time_layer(attention(1, s::FLASH_ATTENTION_2), compute, {}, s::RECOMPUTE_NONE);
  CHECK(alone.forward.compute == compute.attention_forward(whole));
  CHECK(alone.backward.compute == compute.attention_backward(whole));
  // Under CP 2 every ring step runs at FlashAttention-2's rates: about 1 / 0.6 of cuDNN's time
  // alone, in the step x the BF16 steps' 0.667 (cuDNN's) / FlashAttention-2's own 0.946.
  auto topology = testing::shipped_cluster("onprem.dgx-h100", 2);
  GroupCollectives context(*topology, {0, 8});
  const auto ring = [&](s::AttentionLibrary library) {
    const LayerTimes r =
        time_layer(attention(2, library), compute, {nullptr, &context, s::P2P}, s::RECOMPUTE_NONE);
    return (r.forward.compute + r.backward.compute).seconds();
  };
  CHECK(ring(s::FLASH_ATTENTION_2) / ring(s::ATTENTION_LIBRARY_UNSPECIFIED) ==
        Approx(1 / 0.61 * 0.667 / 0.946).epsilon(0.05));
}

TEST_CASE("PyTorch's all-gather ring: step kernels, FP32 merges, exposed gather and gradients") {
  // Llama 3 70B at 8192 tokens, 8 query heads of 128 on each of 8 tensor-parallel ranks, CP 2
  // across two DGX H100 nodes, the keys and values repeated to the query heads (torchtitan).
  const auto& t = testing::shipped_catalog().models().find("llama3-70b")->value->transformer();
  LayerShape shape{8192, 1, 8, true, true, 2, s::TORCH_ALL_GATHER};
  shape.attention_library = s::FLASH_ATTENTION_2;
  shape.repeated_kv = true;
  std::vector<LayerOp> ops;
  for (const LayerOp& op : layer_forward_ops(t, shape, LayerKind::kDense)) {
    CHECK(op.kind != LayerOp::Kind::kContextAllGather);  // the ring's own
    if (op.kind == LayerOp::Kind::kAttention) ops.push_back(op);
  }
  REQUIRE(ops.size() == 1);
  // A rank's 4096 tokens' keys and values, 8 heads (64 / 8; the KV heads alone would be 1).
  const double block = 2 * 2 * 4096.0 * 8 * 128;
  CHECK(ops[0].bytes == block);
  shape.repeated_kv = false;
  for (const LayerOp& op : layer_forward_ops(t, shape, LayerKind::kDense)) {
    if (op.kind == LayerOp::Kind::kAttention) CHECK(op.bytes == block / 8);
  }

  auto topology = testing::shipped_cluster("onprem.dgx-h100", 2);
  GroupCollectives context(*topology, {0, 8});
  const ComputeModel compute = in_step(s::BF16);
  const LayerTimes l =
      time_layer(ops, compute, {nullptr, &context, s::TORCH_ALL_GATHER}, s::RECOMPUTE_NONE);
  // Closed form, rank by rank: 2 chunks of c = 2048 tokens; step 0 the causal 4096 x 4096,
  // step 1 rank 0's later chunk against rank 1's block, rank 1's both chunks against rank 0's
  // first chunk. FP32 sums (torch_ring_sums.h) over a rank's 4096 tokens' 8 x 128 elements L:
  // forward step 1, the first and last merge, reads and writes the output 16-bit (2 + 2) and its
  // result (2 an element of its queries); backward, step 0 starts the three sums (read 2 of each
  // gradient, write 4), step 1 reads and writes them (4 + 4, the query sum's write 2, the last)
  // and its gradients (2), and casts the two key sums back from the last pass (2 x 6). The
  // gather hidden behind step 0 slows it by its time x 32 CTAs / 132 SMs.
  const auto kernel = [](int64_t q, int64_t k, bool causal) {
    AttentionKernel a{8, q, k, 128, causal};
    a.library = s::FLASH_ATTENTION_2;
    return a;
  };
  const Picoseconds gather = context.time(CollectiveOp::kAllGather, 2 * block);
  const Picoseconds pass = collective_time(*topology, {CollectiveOp::kSendRecv, {0, 8}, 2 * block});
  const auto zero_or = [](Picoseconds p) { return std::max(Picoseconds(0), p); };
  const auto beside = [&](Picoseconds kernel) {
    if (gather.count() * 100 >= kernel.count() * 132) return gather - kernel;  // outlasts it
    return Picoseconds(static_cast<int64_t>(std::llround(gather.count() * 32.0 / 132)));
  };
  const double local = 8.0 * 128 * 4096;
  const AttentionKernel first = kernel(4096, 4096, true);
  Picoseconds forward(0), forward_exposed(0), backward(0), backward_exposed(0);
  for (const AttentionKernel& second : {kernel(2048, 4096, false), kernel(4096, 2048, false)}) {
    const auto elements = [](const AttentionKernel& k) {
      return 8.0 * 128 * static_cast<double>(k.queries + 2 * k.keys);
    };
    const Picoseconds f = compute.attention_forward(first) + compute.attention_forward(second) +
                          compute.memory_bound(4 * local + 2 * 8.0 * 128 * second.queries);
    const Picoseconds fe = beside(compute.attention_forward(first));
    const Picoseconds b =
        compute.attention_backward(first) + compute.attention_backward(second) +
        compute.memory_bound(2 * elements(first) + 12 * local) +
        compute.memory_bound(12 * local + 2 * elements(second) + 10 * local + 12 * local);
    const Picoseconds be = beside(compute.attention_backward(first)) +
                           zero_or(pass - compute.attention_backward(second)) + pass;
    if (f + fe > forward + forward_exposed) forward = f, forward_exposed = fe;
    if (b + be > backward + backward_exposed) backward = b, backward_exposed = be;
  }
  CHECK(l.forward.compute == forward);
  CHECK(l.forward.context_comm == forward_exposed);
  CHECK(l.backward.compute == backward);
  CHECK(l.backward.context_comm == backward_exposed);
  // The last step's gradients always go back exposed: at least one pass of 2 x 8 MB over IB.
  CHECK(l.backward.context_comm >= pass);
  CHECK(pass > Picoseconds(0));
}

TEST_CASE("a memory-bound kernel's backward moves its own bytes where it counts them") {
  // Twice the forward's traffic by default; the eager expert kernels count their gradients.
  const ComputeModel compute = in_step(s::BF16);
  LayerOp eager{LayerOp::Kind::kMemory, "eager", 0, 0, 0, 1, 0, 1e9};
  LayerTimes t = time_layer({eager}, compute, {}, s::RECOMPUTE_NONE);
  CHECK(t.forward.compute == compute.memory_bound(1e9));
  CHECK(t.backward.compute == compute.memory_bound(2e9));
  eager.backward_bytes = 1.25e9;
  t = time_layer({eager}, compute, {}, s::RECOMPUTE_NONE);
  CHECK(t.backward.compute == compute.memory_bound(1.25e9));
  CHECK(t.forward.compute == compute.memory_bound(1e9));
}

}  // namespace
}  // namespace clustersim
