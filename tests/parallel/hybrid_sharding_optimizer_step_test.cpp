// Tests of the optimizer step's shard under hybrid sharding (transformer_stages.cpp, memory_model.h
// optimizer_state_shards): each rank steps the shard the memory model holds, within its group
// under plain hybrid sharding, across every rank under Hybrid-FSDP.
#include <catch2/catch.hpp>
#include <string>

#include "sim/parallel/memory_model.h"
#include "sim/parallel/optimizer_step.h"
#include "sim/parallel/transformer_stages.h"
#include "sim/workload/parameter_count.h"
#include "tests/testing/cluster.h"
#include "tests/testing/parse_message.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

namespace s = schema;

// 64 sequences of 4096 tokens a step, BF16, Adam.
s::TrainingJob job() {
  return testing::parse_message<s::TrainingJob>(
      "global_batch_size: 64 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 1");
}

// ZeRO-3 over `data_parallel` ranks with `extra` besides.
s::Parallelism zero3(int data_parallel, const std::string& extra) {
  auto p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 1 context_parallel: 1 micro_batch_size: 1 "
      "virtual_stages: 1 zero_stage: 3 schedule: ONE_F_ONE_B recompute: RECOMPUTE_NONE " +
      extra);
  p.set_data_parallel(data_parallel);
  return p;
}

// Llama 3 8B's optimizer step on DGX H100s under `p`.
Picoseconds optimizer_time(const s::Parallelism& p) {
  const Catalog& catalog = testing::shipped_catalog();
  auto topology = testing::shipped_cluster("onprem.dgx-h100", p.data_parallel() / 8);
  const ComputeModel h100(catalog.gpu_of(*catalog.instances().find("onprem.dgx-h100")->value),
                          s::BF16, *catalog.runtimes().find("default")->value,
                          KernelSetting::kTrainingStep);
  return transformer_plan(*catalog.models().find("llama3-8b")->value, job(), p, *topology, h100)
      .plan.work[0]
      .optimizer;
}

TEST_CASE("hybrid sharding steps the group's shard: groups of 8 on 64 GPUs as ZeRO-3 on 8") {
  // Every group of 8 holds and steps the same shards: 1/8 of the parameters per rank, Adam's
  // mixed-precision passes over each (optimizer_step.h), not 1/64.
  const s::Parallelism hybrid = zero3(64, "data_parallel_shard: 8");
  CHECK(optimizer_state_shards(hybrid) == 8);
  const Picoseconds eight = optimizer_time(zero3(8, ""));
  const Picoseconds sixty_four = optimizer_time(zero3(64, ""));
  CHECK(optimizer_time(hybrid) == eight);
  CHECK(eight > sixty_four);
  const double parameters = static_cast<double>(
      transformer_parameters(testing::shipped_model("llama3-8b").transformer()).total());
  const Catalog& catalog = testing::shipped_catalog();
  const ComputeModel h100(catalog.gpu_of(*catalog.instances().find("onprem.dgx-h100")->value),
                          s::BF16, *catalog.runtimes().find("default")->value,
                          KernelSetting::kTrainingStep);
  CHECK(eight.seconds() ==
        Approx(h100.memory_bound(optimizer_bytes_per_parameter(s::ADAM, s::BF16) * parameters / 8)
                   .seconds())
            .epsilon(1e-9));
  // The memory model holds the same shard.
  const auto memory = [](const s::Parallelism& p) {
    return estimate_memory(testing::shipped_model("llama3-8b"), job(), p, 1e15, {}).optimizer_bytes;
  };
  CHECK(memory(hybrid) == Approx(memory(zero3(8, ""))));
}

TEST_CASE("Hybrid-FSDP steps the optimizer states sharded across every rank") {
  const s::Parallelism hybrid_fsdp =
      zero3(64, "data_parallel_shard: 8 shard_optimizer_across_replicas: true");
  CHECK(optimizer_state_shards(hybrid_fsdp) == 64);
  CHECK(optimizer_time(hybrid_fsdp) == optimizer_time(zero3(64, "")));
}

}  // namespace
}  // namespace clustersim
