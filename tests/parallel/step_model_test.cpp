// Invariants of a simulated training step: the breakdown adds up to the step, MFU is below 1 and
// below HFU, more GPUs of the same plan are faster, and recomputation costs time.
#include "sim/parallel/step_model.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "sim/net/collective_algorithms.h"
#include "sim/parallel/collective_sm_contention.h"
#include "sim/parallel/zero3_traffic.h"
#include "tests/testing/cluster.h"
#include "tests/testing/parse_message.h"

namespace clustersim {
namespace {

namespace s = schema;

StepResult step(const std::string& model, int nodes, const std::string& parallelism,
                int global_batch = 64, s::Precision precision = s::BF16) {
  const Catalog& catalog = testing::shipped_catalog();
  auto topology = testing::shipped_cluster("aws.p5.48xlarge", nodes);
  const auto job = testing::parse_message<s::TrainingJob>(
      "global_batch_size: " + std::to_string(global_batch) + " sequence_length: 4096 precision: " +
      s::Precision_Name(precision) + " optimizer: ADAM steps: 1");
  auto p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 1 micro_batch_size: 1 virtual_stages: 1 "
      "zero_stage: 0 schedule: ONE_F_ONE_B recompute: RECOMPUTE_NONE");
  p.MergeFrom(testing::parse_message<s::Parallelism>(parallelism));
  p.set_data_parallel(nodes * 8 /
                      (p.tensor_parallel() * p.context_parallel() * p.pipeline_parallel()));
  const ComputeModel compute(catalog.gpu_of(*catalog.instances().find("aws.p5.48xlarge")->value),
                             precision, *catalog.runtimes().find("default")->value,
                             KernelSetting::kTrainingStep);
  return simulate_step(*catalog.models().find(model)->value, job, p, *topology, compute);
}

TEST_CASE("the time breakdown adds up to the step time") {
  for (const char* plan :
       {"tensor_parallel: 2 pipeline_parallel: 2", "tensor_parallel: 8",
        "pipeline_parallel: 4 recompute: RECOMPUTE_FULL", "zero_stage: 3 recompute: RECOMPUTE_FULL",
        "zero_stage: 3 pipeline_parallel: 2 schedule: INTERLEAVED_ONE_F_ONE_B "
        "virtual_stages: 2 tensor_parallel: 2",
        "context_parallel: 2 tensor_parallel: 2 sequence_parallel: true "
        "distributed_optimizer: true"}) {
    INFO(plan);
    const StepResult r = step("llama2-7b", 1, plan);
    CHECK(r.compute_s + r.tensor_comm_s + r.context_comm_s + r.bubble_s + r.data_comm_s +
              r.optimizer_s ==
          Approx(r.step_s).epsilon(0.001));
    CHECK(r.mfu > 0.2);
    CHECK(r.mfu < 1);
    CHECK(r.hfu >= r.mfu);
  }
}

TEST_CASE("without a pipeline nothing is bubble: the collectives' SMs slow the compute") {
  // One stage (PP 1) whose ZeRO-3 gathers and reduce-scatters span two p5 nodes: while they run,
  // their CTAs hold SMs and the layers beside them slow (collective_sm_contention.h). That time is
  // the compute's, not a wait for other stages.
  const StepResult r = step("llama2-7b", 2, "zero_stage: 3 recompute: RECOMPUTE_FULL");
  CHECK(r.bubble_s == Approx(0).margin(1e-6));
  CHECK(r.limiting == "compute");
  CHECK(r.compute_s + r.data_comm_s + r.optimizer_s == Approx(r.step_s).epsilon(0.001));
}

TEST_CASE("a MoE step's breakdown adds up, with its exposed all-to-alls and expert kernels") {
  // Mixtral 8x7B with EP 8 on one node (and EP 4 beside TP 2): the all-to-alls are a share of
  // the step of their own; the experts' kernels are a part of compute.
  for (const char* plan : {"expert_parallel: 8 distributed_optimizer: true",
                           "tensor_parallel: 2 sequence_parallel: true expert_parallel: 4 "
                           "expert_tensor_parallel: 1 pipeline_parallel: 2"}) {
    INFO(plan);
    const StepResult r = step("mixtral-8x7b", 1, plan);
    CHECK(r.expert_comm_s > 0);
    CHECK(r.expert_compute_s > 0.3 * r.compute_s);
    CHECK(r.expert_compute_s < r.compute_s);
    CHECK(r.compute_s + r.tensor_comm_s + r.context_comm_s + r.expert_comm_s + r.bubble_s +
              r.data_comm_s + r.optimizer_s ==
          Approx(r.step_s).epsilon(0.001));
  }
}

TEST_CASE("BF16 Adam reads and writes 46 bytes per parameter: norm, clip, update, weight copy") {
  // Llama-2-7B (6,738,415,616 parameters) replicated on 8 H100s: each steps all of them, at the
  // H100's fitted 3350 GB/s x 0.887, after the passes over its fp32 gradient buffer: zeroing (4)
  // and Megatron-Core's default scaling by 1/8 before the all-reduce (4 + 4).
  const double rate = 3350e9 * 0.887;
  const StepResult r = step("llama2-7b", 1, "");
  CHECK(r.optimizer_s == Approx((46 + 12) * 6738415616.0 / rate).epsilon(1e-6));
  // Averaging in the collective and the NaN check (a read): 46 + 4 + 4; neither zeroing nor
  // scaling: the optimizer's 46 alone.
  const std::string averaged = "gradient_scaling: AVERAGE_IN_COLLECTIVE ";
  CHECK(step("llama2-7b", 1, averaged + "check_for_nan_in_grad: true").optimizer_s ==
        Approx((46 + 8) * 6738415616.0 / rate).epsilon(1e-6));
  CHECK(step("llama2-7b", 1, averaged + "zero_gradient_buffer: false").optimizer_s ==
        Approx(46 * 6738415616.0 / rate).epsilon(1e-6));
}

TEST_CASE("the distributed optimizer's step costs its shard: 1 / (DP x CP) of the parameters") {
  // Llama-2-7B on 2 nodes of 8 H100: DP 16, or DP 8 x CP 2; each GPU steps 1/16 of the 46 bytes
  // per parameter; the parameter all-gather after it is data-parallel communication. The
  // gradient buffer is whole on every GPU: its zeroing and scaling (12 bytes) are not sharded.
  for (const char* plan : {"distributed_optimizer: true",
                           "distributed_optimizer: true context_parallel: 2"}) {
    INFO(plan);
    const StepResult r = step("llama2-7b", 2, plan);
    CHECK(r.optimizer_s ==
          Approx((46.0 / 16 + 12) * 6738415616.0 / (3350e9 * 0.887)).epsilon(1e-6));
  }
}

TEST_CASE("Apex's optimizer buckets each pay the ring's step latencies, one after another") {
  // Llama-2-7B on 2 p5 nodes, DP 16, fp32 gradients reduce-scattered after the backward and BF16
  // parameters all-gathered after the step: 4 x 6738415616 bytes in buckets of 1024 MiB are 26
  // collectives of each kind instead of 1. Each moves 1/26 of the bytes at the same rate, so the
  // step grows by 25 x (the reduce-scatter's + the all-gather's latency): on each of the 8
  // channels' rings (each node's GPUs rotated by the channel), 15 steps at the mean of its 16
  // hops' Simple latencies; the slowest channel's ends the collective.
  const std::string plan =
      "distributed_optimizer: true gradient_reduce_in_fp32: true overlap_gradient_reduce: false "
      "overlap_parameter_gather: false ";
  const StepResult one = step("llama2-7b", 2, plan);
  const StepResult buckets = step("llama2-7b", 2, plan + "optimizer_bucket_mib: 1024");
  const auto topology = testing::shipped_cluster("aws.p5.48xlarge", 2);
  Picoseconds ring(0);
  for (int channel = 0; channel < 8; ++channel) {
    std::vector<int> order;
    for (int node = 0; node < 2; ++node) {
      for (int i = 0; i < 8; ++i) order.push_back(node * 8 + (i + channel) % 8);
    }
    std::vector<std::pair<int, int>> edges;
    for (size_t i = 0; i < order.size(); ++i) {
      edges.emplace_back(order[i], order[(i + 1) % order.size()]);
    }
    const ProtocolLatencies sum = summed_step_latencies(edges, *topology);
    ring = std::max(ring, pipelined_latencies(sum, static_cast<int64_t>(edges.size()), 15).simple);
  }
  CHECK(std::ceil(4 * 6738415616.0 / (1024.0 * 1024 * 1024)) == 26);
  CHECK(buckets.step_s - one.step_s == Approx(25 * 2 * ring.seconds()).epsilon(1e-6));
  CHECK(buckets.data_comm_s - one.data_comm_s == Approx(25 * 2 * ring.seconds()).epsilon(1e-6));
}

TEST_CASE("FP16 gradients are added into the step's buffer after every micro-batch's backward") {
  // 64 samples on 8 data-parallel H100s: 8 micro-batches, each adding 6 bytes per parameter
  // (read 2 + 2, write 2) of Llama-2-7B; BF16 accumulates inside the weight-gradient GEMMs.
  // FP16 and BF16 kernels run at the same rates on the H100. The reduction waits for the last
  // backward, so no collective's SMs slow the kernels (FP16 reduces 16-bit gradients, BF16 fp32).
  const StepResult fp16 = step("llama2-7b", 1, "overlap_gradient_reduce: false", 64, s::FP16);
  const StepResult bf16 = step("llama2-7b", 1, "overlap_gradient_reduce: false", 64, s::BF16);
  CHECK(fp16.compute_s - bf16.compute_s ==
        Approx(8 * 6 * 6738415616.0 / (3350e9 * 0.887)).epsilon(1e-6));
}

TEST_CASE("full recomputation costs about one more forward and raises HFU above MFU") {
  const StepResult none = step("llama2-7b", 1, "pipeline_parallel: 2");
  const StepResult full = step("llama2-7b", 1, "pipeline_parallel: 2 recompute: RECOMPUTE_FULL");
  CHECK(full.step_s > none.step_s);
  // Forward is about a third of forward + backward: the step grows by about a third.
  CHECK(full.step_s / none.step_s == Approx(4.0 / 3).epsilon(0.1));
  CHECK(full.hfu / full.mfu == Approx(4.0 / 3).epsilon(0.05));
  CHECK(none.hfu == Approx(none.mfu));
}

TEST_CASE("twice the data-parallel GPUs for the same batch is nearly twice as fast") {
  const StepResult one = step("llama2-7b", 1, "tensor_parallel: 2", 128);
  const StepResult two = step("llama2-7b", 2, "tensor_parallel: 2", 128);
  CHECK(two.step_s < one.step_s);
  CHECK(one.step_s / two.step_s > 1.8);
}

TEST_CASE("the SMs userbuffers reserve slow the forward GEMM they drain by SMs / (SMs - them)") {
  const std::string plan =
      "tensor_parallel: 8 sequence_parallel: true overlap_tensor_communication: true ";
  const auto added = [&](const std::string& sms) {
    return step("llama2-7b", 1, plan + sms).compute_s - step("llama2-7b", 1, plan).compute_s;
  };
  const double attention24 = added("tensor_overlap_attention_out_sms: 24");
  const double attention12 = added("tensor_overlap_attention_out_sms: 12");
  const double mlp24 = added("tensor_overlap_mlp_down_sms: 24");
  CHECK(attention24 > 0);
  // The same chunks G on the H100's 132 SMs: G x 24 / 108 against G x 12 / 120.
  CHECK(attention24 / attention12 == Approx((24.0 / 108) / (12.0 / 120)).epsilon(1e-6));
  // Llama-2-7B's down projection (K 11008 / 8) outlasts its attention output (K 4096 / 8).
  CHECK(mlp24 > attention24);
  CHECK(added("tensor_overlap_attention_out_sms: 24 tensor_overlap_mlp_down_sms: 24") ==
        Approx(attention24 + mlp24).epsilon(1e-6));
}

TEST_CASE("overlapped tensor-parallel communication: less exposed, chunked GEMMs cost more") {
  const char* plan = "tensor_parallel: 8 sequence_parallel: true";
  const StepResult plain = step("llama2-7b", 1, plan);
  const StepResult overlapped =
      step("llama2-7b", 1, std::string(plan) + " overlap_tensor_communication: true");
  CHECK(overlapped.tensor_comm_s < 0.5 * plain.tensor_comm_s);
  CHECK(overlapped.compute_s > plain.compute_s);  // 8 GEMM launches where there was one
  CHECK(overlapped.step_s < plain.step_s);
  // Without sequence parallelism there are only all-reduces, which do not overlap.
  const StepResult all_reduce = step("llama2-7b", 1, "tensor_parallel: 8");
  CHECK(step("llama2-7b", 1, "tensor_parallel: 8 overlap_tensor_communication: true").step_s ==
        all_reduce.step_s);
}

TEST_CASE("the limiting resource names the largest share of the step") {
  const StepResult r = step("llama2-7b", 1, "tensor_parallel: 8");
  CHECK(r.limiting ==
        (r.tensor_comm_s > r.compute_s ? "tensor-parallel communication" : "compute"));
}

}  // namespace
}  // namespace clustersim

namespace clustersim {
namespace {

TEST_CASE("ZeRO-3 gathers weights before every pass: slower than ZeRO-1 across nodes") {
  constexpr int kH100Sms = 132;  // the p5's H100 SXM (topologies/gpus.textproto)
  const StepResult zero1 = step("llama2-7b", 2, "zero_stage: 1");
  const StepResult zero3 = step("llama2-7b", 2, "zero_stage: 3");
  CHECK(zero3.step_s > zero1.step_s);
  // DeepSpeed's 2021 coordinator moves every gather and reduce-scatter through one process group
  // at 24.3 GB/s: 4 micro-batches (64 samples on 16 GPUs) x (2 gathers + 1 reduce-scatter) x
  // 13.5 GB of BF16 Llama-2-7B weights bound the step from below.
  const StepResult synchronous =
      step("llama2-7b", 2, "zero_stage: 3 zero3_synchronous_fetch: true");
  const double fetches_s = 4 * 3 * 2 * 6738415616.0 / kDeepSpeed2021FetchBytesPerSecond;
  CHECK(synchronous.step_s >= fetches_s);
  // The compute waiting for those collectives counts as data-parallel communication; what is not
  // waited runs beside a reduce-scatter, at most 132 / 100 of its time (collective_sm_contention.h).
  CHECK(synchronous.data_comm_s >=
        fetches_s - synchronous.compute_s * kH100Sms / (kH100Sms - kNcclCollectiveCtas));
  // Those waits end as the collectives reach the coordinator's rate, not as the network
  // delivers: the limiting column names the rate (step_limit.h).
  CHECK(synchronous.fetch_paced_wait_s > 0);
  CHECK(synchronous.fetch_paced_wait_s <= synchronous.data_comm_s);
  CHECK(synchronous.limiting == "DeepSpeed 2021's ZeRO-3 fetch rate");
  CHECK(synchronous.compute_s + synchronous.tensor_comm_s + synchronous.bubble_s +
            synchronous.data_comm_s + synchronous.optimizer_s ==
        Approx(synchronous.step_s).epsilon(0.001));
}

}  // namespace
}  // namespace clustersim

namespace clustersim {
namespace {

TEST_CASE(
    "ResNet-50 trains data-parallel: a plausible MFU, and twice the GPUs nearly twice the rate") {
  const Catalog& catalog = testing::shipped_catalog();
  const auto job = testing::parse_message<s::TrainingJob>(
      "global_batch_size: 2048 precision: BF16 optimizer: SGD_MOMENTUM steps: 1");
  const s::Model& resnet = *catalog.models().find("resnet50")->value;
  auto rate = [&](int nodes) {
    auto topology = testing::shipped_cluster("aws.p4de.24xlarge", nodes);
    auto p = testing::parse_message<s::Parallelism>(
        "tensor_parallel: 1 pipeline_parallel: 1 micro_batch_size: 128 virtual_stages: 1 "
        "zero_stage: 0 schedule: ONE_F_ONE_B recompute: RECOMPUTE_NONE");
    p.set_data_parallel(8 * nodes);
    const ComputeModel compute(
        catalog.gpu_of(*catalog.instances().find("aws.p4de.24xlarge")->value), s::BF16,
        *catalog.runtimes().find("default")->value, KernelSetting::kTrainingStep);
    return simulate_step(resnet, job, p, *topology, compute);
  };
  const StepResult one = rate(1), two = rate(2);
  CHECK(one.mfu > 0.1);
  CHECK(one.mfu < 0.6);
  CHECK(one.samples_per_s == Approx(2048 / one.step_s));
  CHECK(two.samples_per_s / one.samples_per_s > 1.8);
}

}  // namespace
}  // namespace clustersim
