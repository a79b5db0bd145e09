// FSDP2 of expert layers in the training step (transformer_stages.cpp, zero3_traffic.h): each
// layer's routed experts gathered and reduce-scattered over their expert data-parallel group, the
// rest over the data-parallel ranks, and the experts' collective on the network against its
// closed form.
#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <string>

#include "sim/engine/timeline.h"
#include "sim/net/collective.h"
#include "sim/parallel/expert_parallel.h"
#include "sim/parallel/pipeline_simulation.h"
#include "sim/parallel/transformer_stages.h"
#include "sim/workload/parameter_count.h"
#include "tests/testing/cluster.h"
#include "tests/testing/parse_message.h"

namespace clustersim {
namespace {

namespace s = schema;

// Mixtral 8x7B (32 MoE layers of 8 experts) on `nodes` p4d.24xlarge, one micro-batch of 4096
// tokens per replica, BF16, FSDP2 with fp32 gradient reduce-scatters and `plan` besides.
TransformerPlan fsdp2_plan(int nodes, const std::string& plan) {
  const Catalog& catalog = testing::shipped_catalog();
  auto topology = testing::shipped_cluster("aws.p4d.24xlarge", nodes);
  auto p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 1 context_parallel: 1 micro_batch_size: 1 "
      "virtual_stages: 1 zero_stage: 3 fsdp2: true gradient_reduce_in_fp32: true "
      "schedule: ONE_F_ONE_B recompute: RECOMPUTE_NONE");
  p.MergeFrom(testing::parse_message<s::Parallelism>(plan));
  p.set_data_parallel(nodes * 8);
  const auto job = testing::parse_message<s::TrainingJob>(
      "global_batch_size: " + std::to_string(p.data_parallel()) +
      " sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 1");
  const ComputeModel compute(catalog.gpu_of(*catalog.instances().find("aws.p4d.24xlarge")->value),
                             s::BF16, *catalog.runtimes().find("default")->value,
                             KernelSetting::kTrainingStep);
  return transformer_plan(*catalog.models().find("mixtral-8x7b")->value, job, p, *topology,
                          compute);
}

double routed_parameters() {
  const auto& t = testing::shipped_catalog().models().find("mixtral-8x7b")->value->transformer();
  return 32.0 * static_cast<double>(transformer_parameters(t).routed_experts_per_layer);
}

TEST_CASE("FSDP2 gathers a layer's experts over the expert DP group, the rest over DP") {
  // EP 4 on 16 GPUs: each GPU holds 2 of the 8 experts of every layer, sharded over EDP = 4. A
  // layer's experts gather 2 bytes x routed / 4 / 32 (whole buffer) and reduce-scatter 4 bytes
  // of each gradient; the dense share's bytes are EP's business not at all.
  const double routed = routed_parameters();
  const TransformerPlan ep4 = fsdp2_plan(2, "expert_parallel: 4");
  const Zero3Work& w = ep4.plan.work[0].zero3;
  CHECK(ep4.plan.experts.expert_data_parallel() == 4);
  CHECK(w.units == 32);
  CHECK(w.unit_expert_gather_bytes == Approx(2 * routed / 4 / 32));
  CHECK(w.unit_expert_gradient_bytes == Approx(4 * routed / 4 / 32));
  // EP 16 is not possible (8 experts); EP 8 leaves EDP 2; EP 8 on one node EDP 1: each GPU holds
  // its expert whole, gathered by nobody, and the dense share is the same.
  const TransformerPlan ep8 = fsdp2_plan(1, "expert_parallel: 8");
  CHECK(ep8.plan.work[0].zero3.unit_expert_gather_bytes == 0);
  CHECK(ep8.plan.work[0].zero3.unit_expert_gradient_bytes == 0);
  CHECK(ep8.plan.work[0].zero3.unit_gather_bytes == Approx(w.unit_gather_bytes));
  CHECK(ep8.plan.work[0].zero3.unit_gradient_bytes == Approx(w.unit_gradient_bytes));
}

TEST_CASE("experts reduced in the weights' type: 2 bytes a gradient, the dense share's 4") {
  // AutoModel@89e3a9fd's experts' fully_shard has no mp_policy: their reduce-scatter in BF16,
  // the rest of the layer in fp32 (gradient_reduce_in_fp32).
  const double routed = routed_parameters();
  const TransformerPlan fp32 = fsdp2_plan(2, "expert_parallel: 4");
  const TransformerPlan bf16 =
      fsdp2_plan(2, "expert_parallel: 4 fsdp2_expert_reduce_in_weight_type: true");
  const Zero3Work& w = bf16.plan.work[0].zero3;
  CHECK(w.unit_expert_gradient_bytes == Approx(2 * routed / 4 / 32));
  CHECK(w.unit_expert_gather_bytes == Approx(fp32.plan.work[0].zero3.unit_expert_gather_bytes));
  CHECK(w.unit_gradient_bytes == Approx(fp32.plan.work[0].zero3.unit_gradient_bytes));
}

TEST_CASE("a layer's expert gather over n GPUs moves (n-1)/n of its bytes per GPU, both ways") {
  // EP 4 on 2 nodes: the expert data-parallel group of rank 0 is the 4 GPUs holding the same
  // experts, {0, 4, 8, 12}, two in each node. Gathering a layer's expert buffer B over it, each
  // member sends and receives (n - 1) / n x B = 3/4 B; nobody else moves a byte.
  const TransformerPlan plan = fsdp2_plan(2, "expert_parallel: 4");
  const double bytes = plan.plan.work[0].zero3.unit_expert_gather_bytes;
  const std::vector<int> group = expert_data_parallel_group(plan.plan.experts, 0);
  CHECK(group == std::vector<int>{0, 4, 8, 12});
  auto topology = testing::shipped_cluster("aws.p4d.24xlarge", 2);
  Simulation sim;
  Network net(&sim, topology.get());
  start_collective(&net, {CollectiveOp::kAllGather, group, bytes, CollectiveAlgorithm::kRing},
                   [] {});
  sim.run();
  for (int gpu = 0; gpu < 16; ++gpu) {
    const bool member = std::find(group.begin(), group.end(), gpu) != group.end();
    INFO("GPU " << gpu);
    CHECK(net.bytes_sent()[gpu] == Approx(member ? 3.0 / 4 * bytes : 0).margin(1e-6));
    CHECK(net.bytes_received()[gpu] == Approx(net.bytes_sent()[gpu]).margin(1e-6));
  }
}

TEST_CASE("the step's expert gathers and reduce-scatters run on the expert data-parallel track") {
  // The traced step of EP 4 on 2 nodes: 32 layers' experts gathered in the forward and again in
  // the backward, reduce-scattered once, on the "expert data parallel" track; none at EP 8 on one
  // node (EDP 1). Keeping the forward's gather for the backward halves the gathers.
  const auto spans = [](const TransformerPlan& plan, const std::string& name) {
    Timeline timeline;
    auto topology = testing::shipped_cluster("aws.p4d.24xlarge", plan.plan.data_parallel / 8);
    simulate_pipeline(plan.plan, *topology, &timeline);
    return std::count_if(timeline.spans().begin(), timeline.spans().end(), [&](const auto& s) {
      return s.track == "expert data parallel" && s.name == name;
    });
  };
  const TransformerPlan ep4 = fsdp2_plan(2, "expert_parallel: 4");
  CHECK(spans(ep4, "all_gather") == 2 * 32);
  CHECK(spans(ep4, "reduce_scatter") == 32);
  CHECK(spans(fsdp2_plan(1, "expert_parallel: 8"), "all_gather") == 0);
  CHECK(spans(fsdp2_plan(2, "expert_parallel: 4 fsdp2_keep_forward_gather: true"), "all_gather") ==
        32);
}

TEST_CASE("Hybrid-FSDP: experts whole in each group, reduced across and gathered after the step") {
  // EP 8 on 2 nodes, groups of 8 ranks (one node, one replica of every expert), 2 groups: nothing
  // of the experts gathered per layer; each layer's expert gradients (4 bytes, fp32 reduction)
  // reduce-scattered over their expert data-parallel group of 2, the dense shard across the 2
  // groups, once (one micro-batch); after the optimizer step the group's dense shard (2 bytes
  // over the 8 ranks) gathered across the groups and the experts' 2 bytes over their group.
  const double routed = routed_parameters();
  const TransformerPlan plan = fsdp2_plan(
      2, "expert_parallel: 8 data_parallel_shard: 8 shard_optimizer_across_replicas: true");
  const StageWork& work = plan.plan.work[0];
  const Zero3Work& w = work.zero3;
  const double dense =
      static_cast<double>(
          transformer_parameters(
              testing::shipped_catalog().models().find("mixtral-8x7b")->value->transformer())
              .total()) -
      routed;
  CHECK(plan.plan.experts.expert_data_parallel() == 2);
  CHECK(w.optimizer_across_replicas);
  CHECK(w.replicas == 2);
  CHECK(w.shard_ranks == 8);
  CHECK(w.unit_expert_gather_bytes == 0);
  CHECK(w.unit_expert_gradient_bytes == Approx(4 * routed / 8 / 32));
  CHECK(work.parameter_gather_bytes == Approx(2 * dense / 8));
  CHECK(work.expert_parameter_gather_bytes == Approx(2 * routed / 8));
  Timeline timeline;
  auto topology = testing::shipped_cluster("aws.p4d.24xlarge", 2);
  simulate_pipeline(plan.plan, *topology, &timeline);
  const auto spans = [&](const std::string& track, const std::string& name) {
    return std::count_if(timeline.spans().begin(), timeline.spans().end(),
                         [&](const auto& s) { return s.track == track && s.name == name; });
  };
  CHECK(spans("expert data parallel", "reduce_scatter") == 32);
  CHECK(spans("data parallel", "reduce_scatter") == 2 * 32);
  CHECK(spans("data parallel", "all_reduce") == 0);
  CHECK(spans("expert data parallel", "all_gather") ==
        spans("data parallel", "all_gather") - 2 * 32);
  CHECK(spans("expert data parallel", "all_gather") >= 1);
}

}  // namespace
}  // namespace clustersim
