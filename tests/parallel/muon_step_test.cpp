// Tests of Muon's optimizer step: the Newton-Schulz FLOPs against their closed form, the GEMMs
// timed weight by weight (QKV split into its blocks, the output layer left to Adam), and the
// states (master weights and one momentum, sharded over the data-parallel ranks).
#include "sim/parallel/muon_step.h"

#include <catch2/catch.hpp>

#include "sim/parallel/memory_model.h"
#include "tests/testing/parse_message.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

namespace s = schema;
using K = LayerOp::Kind;

ComputeModel h100() {
  const Catalog& c = testing::shipped_catalog();
  return ComputeModel(*c.gpus().find("H100-SXM5-80GB")->value, s::BF16,
                      *c.runtimes().find("default")->value, KernelSetting::kTrainingStep);
}

TEST_CASE("Newton-Schulz on an m x n matrix costs 5 x (4 m^2 n + 2 m^3) FLOPs, m the smaller") {
  // X X^T and B X are m x n x m products (2 m^2 n each), A^2 an m x m x m one (2 m^3).
  CHECK(newton_schulz_flops(2048, 7168) ==
        5 * (4.0 * 2048 * 2048 * 7168 + 2.0 * 2048 * 2048 * 2048));
  CHECK(newton_schulz_flops(7168, 2048) == newton_schulz_flops(2048, 7168));
}

TEST_CASE("Muon orthogonalizes each weight in 16-bit GEMMs, QKV by blocks, not the output layer") {
  const ComputeModel compute = h100();
  const auto& t = testing::shipped_model("llama3-70b").transformer();
  const auto five = [](Picoseconds p) { return Picoseconds(5 * p.count()); };
  // FC2 of Llama 3 70B: an 8192 x 28672 weight (k = 28672 rows, n = 8192 columns).
  const LayerOp down{K::kMatmul, "mlp down", 4096, 8192, 28672};
  const NewtonSchulzTime fc2 = newton_schulz_time({down}, t, 1, compute);
  CHECK(fc2.dense == five(Picoseconds(2 * compute.matmul(8192, 8192, 28672, 1, true).count() +
                                      compute.matmul(8192, 8192, 8192, 1, true).count())));
  CHECK(fc2.expert.count() == 0);
  // QKV: the 8192 x 8192 query block and two 1024 x 8192 key and value blocks.
  const LayerOp qkv{K::kMatmul, "qkv", 4096, 10240, 8192};
  const auto block = [&](int64_t m) {
    return 2 * compute.matmul(m, m, 8192, 1, true).count() +
           compute.matmul(m, m, m, 1, true).count();
  };
  CHECK(newton_schulz_time({qkv}, t, 1, compute).dense ==
        five(Picoseconds(block(8192) + 2 * block(1024))));
  // The logits' weight is the output layer's: Adam's.
  const LayerOp logits{K::kMatmul, "logits", 4096, 128256, 8192};
  CHECK(newton_schulz_time({logits}, t, 1, compute).dense.count() == 0);
  // Routed experts' weights apart, each of the `count` local experts its own.
  LayerOp experts{K::kMatmul, "expert down", 512, 4096, 14336, 2};
  experts.expert = true;
  const NewtonSchulzTime e = newton_schulz_time({experts}, t, 1, compute);
  CHECK(e.dense.count() == 0);
  CHECK(e.expert == five(Picoseconds(2 * compute.matmul(4096, 4096, 14336, 2, true).count() +
                                     compute.matmul(4096, 4096, 4096, 2, true).count())));
}

TEST_CASE("Muon keeps master weights and one momentum, sharded over the data-parallel ranks") {
  const auto b = state_bytes_per_parameter(s::BF16, s::MUON);
  CHECK(b.optimizer == 8);  // fp32 master + momentum (Adam: 12)
  const s::Parallelism p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 1 data_parallel: 8 micro_batch_size: 1 "
      "virtual_stages: 1 zero_stage: 0 schedule: ONE_F_ONE_B recompute: RECOMPUTE_NONE");
  const s::TrainingJob job = testing::parse_message<s::TrainingJob>(
      "global_batch_size: 64 sequence_length: 4096 precision: BF16 optimizer: MUON steps: 1");
  const MemoryEstimate e = estimate_memory(testing::shipped_model("llama2-7b"), job, p, 1e15, {});
  const double params = 6738415616.0;  // Llama-2-7B on every GPU
  CHECK(e.weights_bytes == Approx(2 * params));
  CHECK(e.gradients_bytes == Approx(4 * params));  // all-reduced: whole on every rank
  CHECK(e.optimizer_bytes == Approx(8 * params / 8));
}

}  // namespace
}  // namespace clustersim
