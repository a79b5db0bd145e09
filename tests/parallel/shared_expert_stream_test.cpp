// Tests of side-stream shared experts (sim/parallel/shared_expert_stream): the closed form
// min(S, W) + min(S - min(S, W), (1 - s) A) a pass saves, and its place in the step: with a host
// wait longer than the shared experts' forward, each expert layer's forward of each micro-batch
// saves exactly their forward kernels, the backward (no wait, no all-to-all) nothing.
#include "sim/parallel/shared_expert_stream.h"

#include <catch2/catch.hpp>
#include <string>

#include "sim/parallel/transformer_stages.h"
#include "tests/testing/h100_expert_plan.h"

namespace clustersim {
namespace {

namespace s = schema;

Picoseconds shared_us(double x) { return Picoseconds::from_microseconds(x); }

TEST_CASE("shared experts fill the host's wait, then the SMs the all-to-alls leave free") {
  LayerTimes layer;
  layer.forward = {shared_us(1000), {}, {}, shared_us(400), {}};
  layer.forward_shares = {shared_us(300), shared_us(100)};
  // 100 us in the wait, the other 200 beside 400 us of all-to-alls holding a quarter of the SMs
  // (room for 300): all 300 hidden.
  layer.backward = {shared_us(2000), {}, {}, shared_us(400), {}};
  layer.backward_shares = {shared_us(600), shared_us(0)};
  // No wait; beside the all-to-alls at most (1 - 1/4) 400 = 300 of the 600.
  layer.recompute = layer.forward;
  layer.recompute_shares = {shared_us(600),
                            shared_us(100)};  // 100 in the wait, then 300 of the other 500
  overlap_shared_experts(0.25, &layer);
  CHECK(layer.forward.compute == shared_us(700));
  CHECK(layer.backward.compute == shared_us(1700));
  CHECK(layer.recompute.compute == shared_us(600));
  CHECK(layer.forward.expert_comm == shared_us(400));  // the all-to-alls stay exposed as they were
  LayerTimes none;
  none.forward = {shared_us(1000), {}, {}, shared_us(400), {}};
  overlap_shared_experts(0.25, &none);  // no shared experts: nothing moves
  CHECK(none.forward.compute == shared_us(1000));
}

// Llama 4 Scout (48 expert layers of 16 experts and a shared expert, top-1) on one p5.48xlarge,
// EP 1 (no all-to-alls), 2 micro-batches of 4096 tokens per replica, BF16, the GPU's expert-layer
// host sync 1000 us per expert (16 ms a forward, longer than the shared expert's).
TransformerPlan scout(const std::string& plan_extra) {
  return testing::h100_expert_plan("llama4-scout", plan_extra,
                                   "expert_layer_sync_us_per_expert: 1000", 2);
}

TEST_CASE("in the step each expert layer's forward hides its shared expert in the host's wait") {
  const s::Transformer& t =
      testing::shipped_catalog().models().find("llama4-scout")->value->transformer();
  const Catalog& catalog = testing::shipped_catalog();
  const ComputeModel compute(catalog.gpu_of(*catalog.instances().find("aws.p5.48xlarge")->value),
                             s::BF16, *catalog.runtimes().find("default")->value,
                             KernelSetting::kTrainingStep);
  // The shared expert's forward kernels alone: its up GEMM, activation and down GEMM.
  std::vector<LayerOp> shared;
  for (const LayerOp& op :
       layer_forward_ops(t, LayerShape{4096, 1, 1, false, true}, LayerKind::kExperts)) {
    if (op.shared_expert) shared.push_back(op);
  }
  REQUIRE(shared.size() == 3);
  CHECK(shared.front().name == "shared expert up");
  CHECK(shared.back().name == "shared expert down");
  const Picoseconds forward =
      time_layer(shared, compute, LayerGroups{}, s::RECOMPUTE_NONE).forward.compute;
  const double saved =
      scout("").compute_s[0] - scout("shared_experts_side_stream: true").compute_s[0];
  CHECK(saved == Approx(2 * 48 * forward.seconds()).epsilon(1e-9));
}

}  // namespace
}  // namespace clustersim
