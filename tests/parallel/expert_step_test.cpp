// Tests of mixture-of-experts layers inside the training step (sim/parallel/transformer_stages):
// the dispatch and combine all-to-alls against their closed forms on one NVSwitch node and across
// nodes whose NICs are shared, the expert gradients' own data-parallel group, and an unbalanced
// router's busiest rank setting the experts' times.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "sim/net/collective_algorithms.h"
#include "sim/parallel/pipeline_simulation.h"
#include "sim/parallel/transformer_stages.h"
#include "tests/testing/cluster.h"
#include "tests/testing/parse_message.h"

namespace clustersim {
namespace {

namespace s = schema;

// Mixtral 8x7B (32 MoE layers, top-2, h 4096), `micro_batches` of 4096 tokens per replica, BF16.
TransformerPlan mixtral_plan(const std::string& instance, int nodes, const std::string& plan,
                             const std::string& job_extra = "", int micro_batches = 1) {
  const Catalog& catalog = testing::shipped_catalog();
  auto topology = testing::shipped_cluster(instance, nodes);
  auto p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 1 context_parallel: 1 micro_batch_size: 1 "
      "virtual_stages: 1 zero_stage: 0 schedule: ONE_F_ONE_B recompute: RECOMPUTE_NONE");
  p.MergeFrom(testing::parse_message<s::Parallelism>(plan));
  p.set_data_parallel(nodes * 8 / p.tensor_parallel());
  const auto job = testing::parse_message<s::TrainingJob>(
      "global_batch_size: " + std::to_string(p.data_parallel() * micro_batches) +
      " sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 1 " + job_extra);
  const ComputeModel compute(catalog.gpu_of(*catalog.instances().find(instance)->value), s::BF16,
                             *catalog.runtimes().find("default")->value,
                             KernelSetting::kTrainingStep);
  return transformer_plan(*catalog.models().find("mixtral-8x7b")->value, job, p, *topology,
                          compute);
}

// Each MoE layer runs dispatch and combine in the forward and again in the backward.
constexpr int kAllToAllsPerStep = 32 * 4;

TEST_CASE(
    "in the step, an expert all-to-all inside one NVSwitch node takes S(n-1)/n over the "
    "per-GPU link rate plus a step") {
  // p5.48xlarge: 8 H100 on NVSwitch, NVLink 450 GB/s per direction x 0.80, of which NCCL's
  // all-to-all (the plain dispatcher's) reaches 0.35 (links.textproto).
  // EP 8 over the node: each GPU sends its 4096 tokens x 2 copies, 16-bit.
  const TransformerPlan plan = mixtral_plan("aws.p5.48xlarge", 1, "expert_parallel: 8");
  const double bytes = 2.0 * 4096 * 2 * 4096, n = 8;
  auto topology = testing::shipped_cluster("aws.p5.48xlarge", 1);
  const double latency = step_latency(0, 1, *topology).seconds();
  CHECK(plan.expert_comm_s[0] / kAllToAllsPerStep ==
        Approx(bytes * (n - 1) / n / (450e9 * 0.80 * 0.35) + latency).epsilon(1e-6));
}

TEST_CASE(
    "in the step, expert all-to-alls across nodes whose NICs k GPUs share take k times the "
    "single flow") {
  // p4d.24xlarge x 2: each EFA NIC (100 Gbit/s x 0.955) sits on the PCIe switch of 2 GPUs (k = 2).
  // TP 8 with ETP 8 and EP 2: expert-parallel groups {g, g + 8} cross the nodes, all 8 at once;
  // each GPU sends half of its 512 tokens' 2 copies (16-bit) to the other node, through a NIC
  // that another group's GPU uses too.
  const TransformerPlan plan =
      mixtral_plan("aws.p4d.24xlarge", 2,
                   "tensor_parallel: 8 sequence_parallel: true expert_parallel: 2 "
                   "expert_tensor_parallel: 8");
  const double bytes = 2.0 * 512 * 2 * 4096;
  const double single_flow = bytes / 2 / (100e9 / 8 * 0.955);
  auto topology = testing::shipped_cluster("aws.p4d.24xlarge", 2);
  const double latency = step_latency(0, 8, *topology).seconds();
  CHECK(plan.expert_comm_s[0] / kAllToAllsPerStep ==
        Approx(2 * single_flow + latency).epsilon(1e-6));
}

TEST_CASE(
    "with the all-to-all overlap, only the lone first forward and last backward expose theirs "
    "whole") {
  // EP 8 on one p5.48xlarge, 4 micro-batches: A = one micro-batch's all-to-alls alone. NVLink's
  // all-to-alls are shorter than the compute of every phase, so a combined step exposes only the
  // SMs they take, s = 33 of the H100's 132 = 0.25 of them: A / 2 + A / 2 + (4 - 1) x 0.25 A.
  const int m = 4;
  const TransformerPlan plain = mixtral_plan("aws.p5.48xlarge", 1, "expert_parallel: 8", "", m);
  const TransformerPlan overlapped = mixtral_plan(
      "aws.p5.48xlarge", 1,
      "expert_parallel: 8 overlap_expert_communication: true expert_communication_sms: 33",
      "", m);
  const double a = plain.expert_comm_s[0] / m;
  CHECK(overlapped.expert_comm_s[0] == Approx(a * (1 + (m - 1) * 0.25)).epsilon(1e-5));
  CHECK(overlapped.compute_s[0] == plain.compute_s[0]);
}

TEST_CASE("expert gradients are reduced over the expert data-parallel group, not over DP") {
  // Mixtral 8x7B: 32 layers x 8 experts x 3 x 4096 x 14336 routed parameters. EP 4 on 8 GPUs:
  // each GPU holds 2 experts per layer, replicated over EDP = 2, and reduces their gradients
  // (4 bytes each) there; the rest (dense) over all 8.
  const double routed = 32.0 * 8 * 3 * 4096 * 14336;
  const TransformerPlan ep4 = mixtral_plan("aws.p5.48xlarge", 1, "expert_parallel: 4");
  CHECK(ep4.plan.experts.expert_data_parallel() == 2);
  CHECK(ep4.plan.work[0].expert_gradient_bytes == 4 * routed / 4);
  const TransformerPlan ep1 = mixtral_plan("aws.p5.48xlarge", 1, "");
  CHECK(ep1.plan.work[0].expert_gradient_bytes == 4 * routed);
  CHECK(ep1.plan.work[0].gradient_bytes == ep4.plan.work[0].gradient_bytes);
  CHECK(ep1.expert_comm_s[0] == 0);
  // The routed experts' kernels are the same FLOPs on every GPU whatever EP (balanced routing);
  // EP 1 streams four times the expert weights and writes its outputs in 8 GEMMs of a quarter of
  // the rows, which sets it within 6% of EP 4 (5.0% at the H100's BF16 sustained fraction 0.677:
  // the faster the GEMMs, the more the weight stream counts).
  CHECK(ep4.expert_compute_s[0] == Approx(ep1.expert_compute_s[0]).epsilon(0.06));
}

TEST_CASE("a hot expert's extra tokens lengthen its rank's all-to-alls and experts by its share") {
  // EP 8 on one p5.48xlarge: one expert per GPU; the hot one receives 1.5 times the mean.
  const TransformerPlan hot = mixtral_plan("aws.p5.48xlarge", 1, "expert_parallel: 8",
                                           "expert_routing { max_violation: 0.5 }");
  const double bytes = 1.5 * 2.0 * 4096 * 2 * 4096, n = 8;
  auto topology = testing::shipped_cluster("aws.p5.48xlarge", 1);
  const double latency = step_latency(0, 1, *topology).seconds();
  CHECK(hot.expert_comm_s[0] / kAllToAllsPerStep ==
        Approx(bytes * (n - 1) / n / (450e9 * 0.80 * 0.35) + latency).epsilon(1e-6));
  // Its grouped GEMMs run 1.5 times the rows (at about the same rate).
  const TransformerPlan balanced = mixtral_plan("aws.p5.48xlarge", 1, "expert_parallel: 8");
  CHECK(hot.expert_compute_s[0] / balanced.expert_compute_s[0] == Approx(1.5).epsilon(0.03));
  // A balanced router said out loud is the default, bit for bit.
  const TransformerPlan stated = mixtral_plan("aws.p5.48xlarge", 1, "expert_parallel: 8",
                                              "expert_routing { max_violation: 0 }");
  CHECK(stated.expert_comm_s[0] == balanced.expert_comm_s[0]);
  CHECK(stated.compute_s[0] == balanced.compute_s[0]);
}

TEST_CASE("the step never shortens as the router grows less balanced, until capacity caps it") {
  double previous = 0;
  for (const char* v : {"0", "0.1", "0.3", "0.6", "1"}) {
    const TransformerPlan plan =
        mixtral_plan("aws.p5.48xlarge", 1, "expert_parallel: 8",
                     std::string("expert_routing { max_violation: ") + v + " }");
    const double stage = plan.compute_s[0] + plan.expert_comm_s[0];
    CHECK(stage > previous);
    previous = stage;
  }
  // Capped at 1.25 the hot expert runs what a padded balanced router runs on every rank.
  const TransformerPlan capped =
      mixtral_plan("aws.p5.48xlarge", 1, "expert_parallel: 8",
                   "expert_routing { max_violation: 1 capacity_factor: 1.25 }");
  const TransformerPlan padded =
      mixtral_plan("aws.p5.48xlarge", 1, "expert_parallel: 8",
                   "expert_routing { capacity_factor: 1.25 pad_to_capacity: true }");
  CHECK(capped.expert_comm_s[0] == padded.expert_comm_s[0]);
  CHECK(capped.expert_compute_s[0] == padded.expert_compute_s[0]);
}

// A trace draws every dispatch and combine, forward and backward, on the stage's "expert
// all-to-all" track inside the task it belongs to, as long in all as the step's EP comm column
// (which counts the pair full recomputation reruns before each backward); with the all-to-all
// overlap, inside the shorter combined steps too.
TEST_CASE("a trace draws each expert all-to-all inside its task") {
  const int m = 3;
  for (const char* extra : {"recompute: RECOMPUTE_NONE", "recompute: RECOMPUTE_FULL",
                            "overlap_expert_communication: true"}) {
    const std::string layout = extra;
    const bool full = layout.find("FULL") != std::string::npos;
    const bool overlap = layout.find("overlap") != std::string::npos;
    const TransformerPlan plan =
        mixtral_plan("aws.p5.48xlarge", 1, "expert_parallel: 8 " + layout, "", m);
    auto topology = testing::shipped_cluster("aws.p5.48xlarge", 1);
    Timeline timeline;
    simulate_pipeline(plan.plan, *topology, &timeline);
    std::vector<const TimelineSpan*> tasks, all_to_alls;
    for (const TimelineSpan& span : timeline.spans()) {
      if (span.track == "compute" && span.name != "optimizer") tasks.push_back(&span);
      if (span.track == "expert all-to-all") all_to_alls.push_back(&span);
    }
    INFO(layout);
    REQUIRE(all_to_alls.size() == static_cast<size_t>(m * 32 * (full ? 6 : 4)));
    double drawn_s = 0;
    for (const TimelineSpan* a : all_to_alls) {
      const bool inside = std::any_of(tasks.begin(), tasks.end(), [&](const TimelineSpan* t) {
        return t->start <= a->start && a->end <= t->end;
      });
      CHECK(inside);
      drawn_s += (a->end - a->start).seconds();
    }
    if (!overlap) CHECK(drawn_s == Approx(plan.expert_comm_s[0]).epsilon(1e-6));
  }
}

}  // namespace
}  // namespace clustersim
