// Tests of the kernel list of a transformer layer: what the unfused (2021 Megatron-LM) attention
// core reads and writes, and the fused core's dropout.
#include "sim/workload/layer_ops.h"

#include <catch2/catch.hpp>

#include "tests/testing/parse_message.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

double bytes_of(const std::vector<LayerOp>& ops, const std::string& name) {
  double bytes = 0;
  for (const LayerOp& op : ops) {
    if (op.name == name) bytes += op.bytes;
  }
  return bytes;
}

TEST_CASE("unfused attention: softmax and a separate dropout kernel over the s x s scores") {
  const auto& gpt = testing::shipped_catalog().models().find("gpt-18b")->value->transformer();
  REQUIRE(gpt.dropout());
  const LayerShape shape{2048, 1, 8, false, false};
  const std::vector<LayerOp> ops = layer_forward_ops(gpt, shape, LayerKind::kDense);
  const double scores = 48.0 / 8 * 2048 * 2048;  // heads per GPU x s^2 elements, 16-bit
  // Fused scale-mask-softmax reads and writes 2 bytes; dropout reads and writes 2 and writes a
  // 1-byte mask.
  CHECK(bytes_of(ops, "softmax") == Approx(4 * scores));
  CHECK(bytes_of(ops, "attention dropout") == Approx(5 * scores));
  // The scores are one batched matmul over the heads of the GPU.
  for (const LayerOp& op : ops) {
    if (op.name == "scores") CHECK(op.count == 6);
  }
  auto no_dropout = gpt;
  no_dropout.set_dropout(false);
  CHECK(bytes_of(layer_forward_ops(no_dropout, shape, LayerKind::kDense), "attention dropout") ==
        0);
}

TEST_CASE("fused attention keeps dropout in its kernel: no kernel of its own, the core marked") {
  // Megatron-Core r0.8.0's 1.7B (hidden 2048, 16 heads, dropout 0.1); 2 sequences of 4096 tokens.
  const auto& gpt =
      testing::shipped_catalog().models().find("mcore-gpt-1.7b")->value->transformer();
  REQUIRE(gpt.dropout());
  const LayerShape shape{4096, 2, 2, true};
  auto core_dropout = [&](const schema::Transformer& t) {
    const std::vector<LayerOp> ops = layer_forward_ops(t, shape, LayerKind::kDense);
    CHECK(bytes_of(ops, "attention dropout") == 0);
    int cores = 0;
    bool dropout = false;
    for (const LayerOp& op : ops) {
      if (op.kind != LayerOp::Kind::kAttention) continue;
      ++cores;
      dropout = op.dropout;
    }
    CHECK(cores == 1);
    return dropout;
  };
  CHECK(core_dropout(gpt));
  auto no_dropout = gpt;
  no_dropout.set_dropout(false);
  CHECK_FALSE(core_dropout(no_dropout));
}

TEST_CASE("attention's key and value elements: its rank's heads, one where TP exceeds them") {
  // Qwen3-30B-A3B: 4 key/value heads of 128; 2 sequences of 4096 tokens.
  const auto& qwen =
      testing::shipped_catalog().models().find("qwen3-30b-a3b")->value->transformer();
  REQUIRE(qwen.num_kv_heads() == 4);
  auto attention_of = [&](int tp) {
    const LayerShape shape{4096, 2, tp, tp > 1};
    for (const LayerOp& op : layer_forward_ops(qwen, shape, LayerKind::kExperts)) {
      if (op.kind == LayerOp::Kind::kAttention) return op;
    }
    FAIL("no attention op");
    return LayerOp{};
  };
  CHECK(attention_of(1).key_value_elements == 2.0 * 2 * 4096 * 4 * 128);
  CHECK(attention_of(2).key_value_elements == 2.0 * 2 * 4096 * 2 * 128);
  CHECK(attention_of(8).key_value_elements == 2.0 * 2 * 4096 * 1 * 128);  // replicated
}

TEST_CASE("an MXFP8 output layer runs its logit GEMM at the narrow precision, same shape") {
  // gpt-oss-120b: hidden 2880, 201,088 tokens of vocabulary; 4 sequences of 4096 tokens.
  const auto& oss = testing::shipped_catalog().models().find("gpt-oss-120b")->value->transformer();
  const LayerShape shape{4096, 4, 1, false};
  auto logits_of = [&](bool narrow) {
    for (const LayerOp& op : output_forward_ops(oss, shape, narrow)) {
      if (op.name == "logits") return op;
    }
    FAIL("no logits op");
    return LayerOp{};
  };
  CHECK(logits_of(false).sixteen_bit);
  CHECK_FALSE(logits_of(true).sixteen_bit);
  for (const bool narrow : {false, true}) {
    CHECK(logits_of(narrow).m == 16384);
    CHECK(logits_of(narrow).n == 201088);
    CHECK(logits_of(narrow).k == 2880);
  }
}

TEST_CASE("QK-norm reads and writes the rank's query and key heads, backward reads two, writes one") {
  // Qwen3-30B-A3B at TP 2: 16 query heads and 2 key heads of 128 a rank, 4096 tokens.
  const auto& qwen =
      testing::shipped_catalog().models().find("qwen3-30b-a3b")->value->transformer();
  REQUIRE(qwen.qk_norm());
  const LayerShape shape{4096, 1, 2, true};
  const double elements = 4096.0 * (16 + 2) * 128;
  int norms = 0;
  for (const LayerOp& op : layer_forward_ops(qwen, shape, LayerKind::kExperts)) {
    if (op.name != "qk norm") continue;
    ++norms;
    CHECK(op.bytes == Approx(4 * elements));
    REQUIRE(op.backward_bytes.has_value());
    CHECK(*op.backward_bytes == Approx(6 * elements));
  }
  CHECK(norms == 1);
  auto without = qwen;
  without.set_qk_norm(false);
  CHECK(bytes_of(layer_forward_ops(without, shape, LayerKind::kExperts), "qk norm") == 0);
}

TEST_CASE("the MLP activation's input kept in FP8: a cast each way, 3 bytes an element") {
  // Llama 3 8B at TP 2, 4096 tokens: SwiGLU's input is the gate and up outputs, 2 x 14336 / 2 a
  // token; the forward reads 2 bytes and writes 1 of each, the backward reads 1 and writes 2.
  const auto& llama = testing::shipped_catalog().models().find("llama3-8b")->value->transformer();
  LayerShape shape{4096, 1, 2, true};
  CHECK(bytes_of(layer_forward_ops(llama, shape, LayerKind::kDense),
                 "activation input FP8 store") == 0);
  shape.fp8_activation_input_store = true;
  int stores = 0;
  for (const LayerOp& op : layer_forward_ops(llama, shape, LayerKind::kDense)) {
    if (op.name != "activation input FP8 store") continue;
    ++stores;
    CHECK(op.bytes == Approx(3.0 * 4096 * 2 * 14336 / 2));
    REQUIRE(op.backward_bytes.has_value());
    CHECK(*op.backward_bytes == Approx(op.bytes));
  }
  CHECK(stores == 1);
}

// FLOPs of the layer's matmuls named `name` (all when empty).
double matmul_flops(const std::vector<LayerOp>& ops, const std::string& name = "") {
  double flops = 0;
  for (const LayerOp& op : ops) {
    if (op.kind == LayerOp::Kind::kMatmul && (name.empty() || op.name == name)) {
      flops += 2.0 * op.m * op.n * op.k * op.count;
    }
  }
  return flops;
}

TEST_CASE("perfectly balanced routing costs a dense layer of the active width plus the router") {
  // Mixtral 8x7B, top-2 of 8 experts of 14336, TP 2 with sequence parallelism, EP 4 (2 experts
  // per GPU), ETP 2: the grouped expert GEMMs equal a dense SwiGLU MLP of 2 x 14336 split over
  // TP 2; the router adds 2 x (tokens / 2) x h x 8 on each rank's shard of the tokens.
  const auto& mixtral =
      testing::shipped_catalog().models().find("mixtral-8x7b")->value->transformer();
  auto dense = mixtral;
  dense.clear_moe();
  dense.set_ffn_hidden_size(2 * 14336);
  LayerShape shape{4096, 1, 2, true, true};
  const std::vector<LayerOp> dense_ops = layer_forward_ops(dense, shape, LayerKind::kDense);
  shape.expert_parallel = 4;
  shape.expert_tensor_parallel = 2;
  const std::vector<LayerOp> moe_ops = layer_forward_ops(mixtral, shape, LayerKind::kExperts);
  const double tokens = 4096 / 2;  // per rank
  CHECK(matmul_flops(moe_ops, "router") == 2 * tokens * 4096 * 8);
  CHECK(matmul_flops(moe_ops) - matmul_flops(moe_ops, "router") ==
        Approx(matmul_flops(dense_ops)).epsilon(1e-12));
  for (const LayerOp& op : moe_ops) {
    if (op.name == "expert up") {
      CHECK(op.count == 2);             // local experts
      CHECK(op.m == 2048 * 2 * 2 / 2);  // routed copies x ETP over the local experts
      CHECK(op.n == 2 * 14336 / 2);
    }
  }
  // Permute and unpermute each move the token once and its 2 copies, 16-bit; dispatch and
  // combine send the copies; the ETP all-gather and reduce-scatter move both ETP ranks' copies.
  CHECK(bytes_of(moe_ops, "permute") == 2 * tokens * 4096 * 3);
  CHECK(bytes_of(moe_ops, "unpermute") == 2 * tokens * 4096 * 3);
  CHECK(bytes_of(moe_ops, "dispatch") == 2 * tokens * 2 * 4096);
  CHECK(bytes_of(moe_ops, "combine") == 2 * tokens * 2 * 4096);
  CHECK(bytes_of(moe_ops, "expert all-gather") == 2 * 2 * tokens * 2 * 4096);
  CHECK(bytes_of(moe_ops, "expert reduce-scatter") == 2 * 2 * tokens * 2 * 4096);
  CHECK(bytes_of(dense_ops, "permute") == 0);
}

TEST_CASE("the routed experts' GEMMs run a kernel per expert unless the grouped MLP is fused") {
  // Mixtral 8x7B at EP 4: 2 local experts. Transformer Engine's GroupedLinear issues one GEMM per
  // expert; the fused grouped MLP is one kernel. No other matmul (router, attention) is split.
  const auto& mixtral =
      testing::shipped_catalog().models().find("mixtral-8x7b")->value->transformer();
  LayerShape shape{4096, 1, 1, false, true};
  shape.expert_parallel = 4;
  const auto split = [&](bool fused) {
    shape.fused_expert_mlp = fused;
    std::vector<std::string> names;
    for (const LayerOp& op : layer_forward_ops(mixtral, shape, LayerKind::kExperts)) {
      if (op.kernel_per_matrix) names.push_back(op.name);
    }
    return names;
  };
  CHECK(split(false) == std::vector<std::string>{"expert up", "expert down"});
  CHECK(split(true).empty());
}

TEST_CASE("shared experts run as a dense MLP and the first dense layers have no router") {
  // DeepSeek-V3's shape: 1 shared expert of 2048 beside 8 routed ones; 3 dense first layers.
  const auto& ds = testing::shipped_catalog().models().find("deepseek-v3")->value->transformer();
  REQUIRE(ds.moe().num_shared_experts() == 1);
  CHECK(layer_kind(ds, 2) == LayerKind::kDense);
  CHECK(layer_kind(ds, 3) == LayerKind::kExperts);
  const LayerShape shape{4096, 1, 1, false, true};
  const std::vector<LayerOp> moe_ops = layer_forward_ops(ds, shape, LayerKind::kExperts);
  CHECK(matmul_flops(moe_ops, "shared expert up") == 2.0 * 4096 * 2 * 2048 * 7168);
  CHECK(matmul_flops(layer_forward_ops(ds, shape, LayerKind::kDense), "mlp up") ==
        2.0 * 4096 * 2 * 18432 * 7168);
  CHECK(matmul_flops(layer_forward_ops(ds, shape, LayerKind::kDense), "router") == 0);
}

TEST_CASE("a weightless router (AutoModel's fake balanced gate) runs no router GEMM, nothing else") {
  // Nemotron 3 Nano, 128 experts, h 2688, 4 x 4096 tokens at EP 8: the real router's GEMM is
  // 2 x 16384 x 2688 x 128 FLOPs; the fake gate has no weight, and every other kernel is the same.
  const auto& nano =
      testing::shipped_catalog().models().find("nemotron3-nano-30b-a3b")->value->transformer();
  LayerShape shape{4096, 4, 1, false, true};
  shape.expert_parallel = 8;
  const std::vector<LayerOp> routed = layer_forward_ops(nano, shape, LayerKind::kHybridExperts);
  shape.weightless_router = true;
  const std::vector<LayerOp> fake = layer_forward_ops(nano, shape, LayerKind::kHybridExperts);
  CHECK(matmul_flops(routed, "router") == 2.0 * 16384 * 2688 * 128);
  CHECK(matmul_flops(fake, "router") == 0);
  CHECK(matmul_flops(routed) - matmul_flops(fake) == 2.0 * 16384 * 2688 * 128);
  REQUIRE(fake.size() + 1 == routed.size());
  size_t j = 0;
  for (const LayerOp& op : routed) {
    if (op.name == "router") continue;
    CHECK(fake[j].name == op.name);
    CHECK(fake[j].bytes == op.bytes);
    ++j;
  }
}

TEST_CASE("a hot expert's GEMMs run apart from its rank's other experts, rows rounded up") {
  // Mixtral 8x7B (8 experts, top-2), EP 4: 2 experts per rank, 4096 tokens x 2 copies, 4096 rows
  // each when balanced. max_violation 0.5: the hot expert 1.5 x 4096, the other 6.5 / 7 x 4096.
  const auto& mixtral =
      testing::shipped_catalog().models().find("mixtral-8x7b")->value->transformer();
  LayerShape shape{4096, 1, 1, false, true};
  shape.expert_parallel = 4;
  shape.expert_load =
      expert_load(mixtral, testing::parse_message<schema::ExpertRouting>("max_violation: 0.5"), 4);
  const std::vector<LayerOp> ops = layer_forward_ops(mixtral, shape, LayerKind::kExperts);
  CHECK(matmul_flops(ops, "expert up (hot expert)") == 2.0 * 6144 * 2 * 14336 * 4096);
  CHECK(matmul_flops(ops, "expert up") == 2.0 * 3804 * 2 * 14336 * 4096);  // ceil(3803.4)
  int dispatches = 0;
  for (const LayerOp& op : ops) {
    // The busiest rank receives 6144 + 3803.4 rows of 16-bit hidden states.
    if (op.name != "dispatch") continue;
    CHECK(op.bytes == Approx(2.0 * 4096 * (6144 + 4096 * 6.5 / 7)));
    ++dispatches;
  }
  CHECK(dispatches == 1);
}

TEST_CASE("a layer within the sliding window attends to at most the window's keys per query") {
  // gpt-oss-120b: window 128; layer 0 attends within it, layer 1 densely.
  const auto& oss = testing::shipped_catalog().models().find("gpt-oss-120b")->value->transformer();
  CHECK(attends_in_window(oss, 0));
  CHECK_FALSE(attends_in_window(oss, 1));
  CHECK(windowed_layers_in(oss, 0, 36, LayerKind::kExperts) == 18);
  CHECK(windowed_layers_in(oss, 3, 4, LayerKind::kExperts) == 2);  // layers 4 and 6
  LayerShape shape{4096, 1, 1, false, true};
  shape.sliding_window = true;
  auto attention = [&](const LayerShape& sh) {
    for (const LayerOp& op : layer_forward_ops(oss, sh, LayerKind::kExperts)) {
      if (op.kind == LayerOp::Kind::kAttention) return op;
    }
    FAIL("no attention op");
    return LayerOp{};
  };
  const LayerOp windowed = attention(shape);
  CHECK(windowed.window == 128);
  CHECK(windowed.flops == 4.0 * (128.0 * 129 / 2 + (4096.0 - 128) * 128) * 64 * 64);
  shape.sliding_window = false;
  CHECK(attention(shape).window == 0);
  CHECK(attention(shape).flops == 4.0 * 4096 * 4097 / 2 * 64 * 64);
  // Sequences within the window attend causally.
  LayerShape short_shape{128, 1, 1, false, true};
  short_shape.sliding_window = true;
  CHECK(attention(short_shape).window == 0);
}

TEST_CASE("chunked attention counts each chunk's causal pairs") {
  // c (c + 1) / 2 per whole chunk, r (r + 1) / 2 for the r tokens left.
  CHECK(chunked_causal_pairs(4 * 8192.0, 8192) == 4 * causal_pairs(8192, 0));
  CHECK(chunked_causal_pairs(3 * 8192.0 + 100, 8192) == 3 * 8192.0 * 8193 / 2 + 100.0 * 101 / 2);
  // A chunk no shorter than the sequence is plain causal attention.
  CHECK(chunked_causal_pairs(8192, 8192) == causal_pairs(8192, 0));
  CHECK(chunked_causal_pairs(4096, 8192) == causal_pairs(4096, 0));
  CHECK(chunked_causal_pairs(4096, 0) == causal_pairs(4096, 0));
}

TEST_CASE("a Llama 4 chunked layer attends within its chunk, every fourth layer globally") {
  const auto& scout =
      testing::shipped_catalog().models().find("llama4-scout")->value->transformer();
  CHECK(attends_in_window(scout, 0));
  CHECK_FALSE(attends_in_window(scout, 3));
  CHECK(windowed_layers_in(scout, 0, 48, LayerKind::kExperts) == 36);
  auto attention = [&](int sequence, bool windowed) {
    LayerShape shape{sequence, 1, 1, false, true};
    shape.sliding_window = windowed;
    for (const LayerOp& op : layer_forward_ops(scout, shape, LayerKind::kExperts)) {
      if (op.kind == LayerOp::Kind::kAttention) return op;
    }
    FAIL("no attention op");
    return LayerOp{};
  };
  // 32768 tokens: four causal chunks of 8192, 40 heads of 128.
  const LayerOp chunked = attention(32768, true);
  CHECK(chunked.window == 8192);
  CHECK(chunked.chunked);
  CHECK(chunked.flops == 4.0 * 4 * (8192.0 * 8193 / 2) * 128 * 40);
  CHECK(attention(32768, false).flops == 4.0 * 32768 * 32769 / 2 * 128 * 40);
  // At 8192 tokens (the NeMo 25.07 rows) the chunk is the sequence: plain causal.
  CHECK(attention(8192, true).window == 0);
  CHECK(attention(8192, true).flops == attention(8192, false).flops);
}

TEST_CASE("attention beside the MLP takes one tensor-parallel collective of each kind per layer") {
  // GPT-J (parallel_attention_mlp) at TP 4 with sequence parallelism: one all-gather before both
  // blocks and one reduce-scatter of their summed outputs, against two of each for the same
  // shape laid out one block after the other; the GEMMs are the same.
  schema::Transformer gptj =
      testing::shipped_catalog().models().find("gpt-j-6b")->value->transformer();
  REQUIRE(gptj.parallel_attention_mlp());
  const LayerShape shape{2048, 1, 4, true, true};
  auto count = [&](const schema::Transformer& t, LayerOp::Kind kind) {
    int n = 0;
    for (const LayerOp& op : layer_forward_ops(t, shape, LayerKind::kDense)) n += op.kind == kind;
    return n;
  };
  schema::Transformer sequential = gptj;
  sequential.set_parallel_attention_mlp(false);
  CHECK(count(gptj, LayerOp::Kind::kTensorAllGather) == 1);
  CHECK(count(gptj, LayerOp::Kind::kTensorReduceScatter) == 1);
  CHECK(count(sequential, LayerOp::Kind::kTensorAllGather) == 2);
  CHECK(count(sequential, LayerOp::Kind::kTensorReduceScatter) == 2);
  CHECK(matmul_flops(layer_forward_ops(gptj, shape, LayerKind::kDense)) ==
        matmul_flops(layer_forward_ops(sequential, shape, LayerKind::kDense)));
}

TEST_CASE("a hybrid model's MXFP8 collectives move 16-bit data gradients, narrow output ones") {
  // Nemotron 3 Super at TP 2 under sequence parallelism, 8192 tokens, MXFP8: every all-gather
  // (Mamba in_proj, attention, shared expert) moves 1 byte an element of 8192 x 4096 forward and
  // reduce-scatters the data gradient, 2 bytes an element, backward; every reduce-scatter moves 2
  // forward and all-gathers the output gradient's two MXFP8 copies, 2 x (1 + 1/32), backward.
  const schema::Transformer& super =
      testing::shipped_catalog().models().find("nemotron3-super-120b-a12b")->value->transformer();
  LayerShape shape{8192, 1, 2, true, true, 1, schema::P2P, 1.0};
  shape.gathered_gradient_bytes = 2 * (1 + 1.0 / 32);
  shape.expert_parallel = 64;
  const double elements = 8192.0 * 4096;
  for (LayerKind kind : {LayerKind::kMamba, LayerKind::kAttention, LayerKind::kHybridExperts}) {
    int gathers = 0, scatters = 0;
    for (const LayerOp& op : layer_forward_ops(super, shape, kind)) {
      if (op.kind == LayerOp::Kind::kTensorReduceScatter) {
        ++scatters;
        CHECK(op.bytes == 2 * elements);
        REQUIRE(op.backward_bytes);
        CHECK(*op.backward_bytes == Approx(2.0625 * elements));
      }
      if (op.kind != LayerOp::Kind::kTensorAllGather) continue;
      ++gathers;
      CHECK(op.bytes == elements);
      REQUIRE(op.backward_bytes);
      CHECK(*op.backward_bytes == 2 * elements);
    }
    CHECK(gathers == 1);
    CHECK(scatters == 1);
  }
}

TEST_CASE("separate projections: q, k, v and gate, up GEMMs of the combined FLOPs, gradients summed") {
  // Llama 3 70B at TP 2 with sequence parallelism, 2 x 4096 tokens: q 8192 -> 64 x 128 / 2, k and
  // v 8192 -> 8 x 128 / 2, gate and up 8192 -> 28672 / 2.
  const auto& t = testing::shipped_catalog().models().find("llama3-70b")->value->transformer();
  LayerShape shape{4096, 2, 2, true};
  const std::vector<LayerOp> combined = layer_forward_ops(t, shape, LayerKind::kDense);
  shape.separate_projections = true;
  const std::vector<LayerOp> separate = layer_forward_ops(t, shape, LayerKind::kDense);
  std::vector<std::string> matmuls;
  for (const LayerOp& op : separate) {
    if (op.kind == LayerOp::Kind::kMatmul) matmuls.push_back(op.name);
  }
  CHECK(matmuls == std::vector<std::string>{"q", "k", "v", "attention out", "mlp gate", "mlp up",
                                            "mlp down"});
  // k and v read q's input, up the gate's (torchao casts each input once: fp8_casts.h).
  std::vector<std::string> sharing;
  for (const LayerOp& op : separate) {
    if (op.shares_input) sharing.push_back(op.name);
  }
  CHECK(sharing == std::vector<std::string>{"k", "v", "mlp up"});
  for (const LayerOp& op : combined) CHECK_FALSE(op.shares_input);
  const double tokens = 8192, h = 8192;
  CHECK(matmul_flops(separate, "q") == 2 * tokens * 4096 * h);
  CHECK(matmul_flops(separate, "k") == 2 * tokens * 512 * h);
  CHECK(matmul_flops(separate, "v") == matmul_flops(separate, "k"));
  CHECK(matmul_flops(separate, "mlp gate") == 2 * tokens * 14336 * h);
  CHECK(matmul_flops(separate, "mlp up") == matmul_flops(separate, "mlp gate"));
  CHECK(matmul_flops(separate) == matmul_flops(combined));
  // Backward only: eager autograd adds the p input gradients of the whole (gathered) input, p - 1
  // adds reading two and writing one 16-bit tensor: 2 for q, k, v, 1 for gate, up; each before its
  // block's all-gather (so that the all-gather still feeds the first GEMM).
  int sums = 0;
  for (size_t i = 0; i < separate.size(); ++i) {
    const LayerOp& op = separate[i];
    if (op.name.find("input gradient sum") == std::string::npos) continue;
    ++sums;
    const double adds = op.name == "attention input gradient sum" ? 2 : 1;
    CHECK(op.bytes == 0);
    REQUIRE(op.backward_bytes.has_value());
    CHECK(*op.backward_bytes == 3 * adds * 2 * tokens * h);
    CHECK(separate[i + 1].kind == LayerOp::Kind::kTensorAllGather);
  }
  CHECK(sums == 2);
  CHECK(separate.size() == combined.size() + 2 + 3);
}

TEST_CASE("squared ReLU moves its MLP width twice: relu, then the square, each read and written") {
  // Nemotron-4 15B at micro-batch 2, sequence 4096, TP 2: 8192 tokens x 24576 / 2 per rank.
  schema::Transformer nemotron =
      testing::shipped_catalog().models().find("nemotron4-15b")->value->transformer();
  REQUIRE(nemotron.mlp_activation() == schema::SQUARED_RELU);
  const LayerShape shape{4096, 2, 2, false, true};
  const double width = 8192.0 * 24576 / 2;  // elements per rank
  const std::vector<LayerOp> ops = layer_forward_ops(nemotron, shape, LayerKind::kDense);
  CHECK(bytes_of(ops, "activation") == Approx(2 * (2 + 2) * width));
  // One fused kernel for plain ReLU (read the up projection, write the width) and for a gated
  // MLP (read gate and up, write the width); the GEMMs do not change with the activation.
  schema::Transformer relu = nemotron;
  relu.set_mlp_activation(schema::RELU);
  const std::vector<LayerOp> relu_ops = layer_forward_ops(relu, shape, LayerKind::kDense);
  CHECK(bytes_of(relu_ops, "activation") == Approx((2 + 2) * width));
  CHECK(matmul_flops(relu_ops) == matmul_flops(ops));
  schema::Transformer swiglu = nemotron;
  swiglu.set_mlp_activation(schema::SWIGLU);
  CHECK(bytes_of(layer_forward_ops(swiglu, shape, LayerKind::kDense), "activation") ==
        Approx((2 + 2 + 2) * width));
}

TEST_CASE("latent attention's projections do 2 FLOPs per weight and token, norms aside") {
  // DeepSeek-V3: q 7168 -> 1536 -> 128 x 192, kv 7168 -> 512 + 64 -> 128 x (128 + 128), output
  // 128 x 128 -> 7168. Without tensor parallelism every weight but the two latent norms' is a
  // GEMM weight touched once per token.
  const auto& ds = testing::shipped_catalog().models().find("deepseek-v3")->value->transformer();
  const LayerShape shape{4096, 1, 1, false, true};
  double projections = 0;
  for (const LayerOp& op : layer_forward_ops(ds, shape, LayerKind::kDense)) {
    for (const char* name : {"q down", "q up", "kv down", "kv up", "attention out"}) {
      if (op.name == name) projections += 2.0 * op.m * op.n * op.k * op.count;
    }
  }
  const double weights = 7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * (512 + 64) +
                         512.0 * 128 * 256 + 128.0 * 128 * 7168;
  CHECK(projections == 2 * 4096 * weights);
  // The attention core: query/key heads of 192 and value heads of 128, as one of their mean.
  for (const LayerOp& op : layer_forward_ops(ds, shape, LayerKind::kDense)) {
    if (op.kind == LayerOp::Kind::kAttention) CHECK(op.k == 160);
  }
}

}  // namespace
}  // namespace clustersim
