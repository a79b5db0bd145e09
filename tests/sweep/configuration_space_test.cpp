// Tests of sweep expansion: the product of axes, the pruning rules and a deterministic order.
#include "sim/sweep/configuration_space.h"

#include <catch2/catch.hpp>
#include <set>
#include <tuple>

#include "tests/testing/scenario_text.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

using testing::TempDir;

// A scenario of llama2-7b with a small job, and `rest` (cluster, sweep).
std::unique_ptr<LoadedScenario> load_with_job(const TempDir& dir, const std::string& rest) {
  return testing::load_valid_scenario(dir, R"(model: "llama2-7b"
job { global_batch_size: 32 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 10 }
)" + rest);
}

TEST_CASE("a scenario without a sweep is one configuration with defaults filled in") {
  TempDir dir;
  auto space = expand_configurations(
      *load_with_job(dir, R"(cluster { instance: "aws.p4d.24xlarge" nodes: 2 })"));
  CHECK(space.total == 1);
  REQUIRE(space.valid.size() == 1);
  const Configuration& c = space.valid[0];
  CHECK(c.gpus() == 16);
  CHECK(c.parallelism.tensor_parallel() == 1);
  CHECK(c.parallelism.data_parallel() == 16);  // GPUs / (tp * pp)
  CHECK(c.parallelism.schedule() == schema::ONE_F_ONE_B);
  CHECK(c.parallelism.recompute() == schema::RECOMPUTE_NONE);
}

TEST_CASE("a job on some GPUs of each node counts only those, and splits only them") {
  TempDir dir;
  auto space =
      expand_configurations(*load_with_job(dir, R"(cluster { instance: "aws.p4d.24xlarge" nodes: 2
  gpus_per_node: 4 }
sweep { auto_parallelism { micro_batch_size: [1] } })"));
  REQUIRE_FALSE(space.valid.empty());
  std::set<int> tensor_parallel;
  for (const Configuration& c : space.valid) {
    CHECK(c.gpus() == 8);
    CHECK(c.gpus_per_node == 4);
    const schema::Parallelism& p = c.parallelism;
    CHECK(p.tensor_parallel() * p.pipeline_parallel() * p.data_parallel() == 8);
    tensor_parallel.insert(p.tensor_parallel());
  }
  // Tensor parallelism stays inside the 4 GPUs used of a node.
  CHECK(tensor_parallel == std::set<int>{1, 2, 4});
}

TEST_CASE("the sweep is the product of its axes, impossible splits are pruned with a reason") {
  TempDir dir;
  auto space = expand_configurations(*load_with_job(dir, R"(
sweep { instance: ["aws.p4d.24xlarge", "aws.g5.48xlarge"] nodes: [1, 2]
        tensor_parallel: [1, 8] pipeline_parallel: [1, 4] micro_batch_size: [1, 4] })"));
  CHECK(space.total == 2 * 2 * 2 * 2 * 2);
  // tp8 x pp4 = 32 GPUs exceeds both 8 (1 node) and 16 (2 nodes): 2 instances x 2 nodes x 2 mbs.
  CHECK(space.pruned["tensor x context x pipeline parallel does not divide the GPUs"] == 8);
  // Batch 32 = micro-batch x DP x accumulation: mbs 4 with DP 16 (2 nodes, tp1 pp1) needs 64.
  CHECK(space.pruned["micro-batch x data parallel does not divide the global batch"] == 2);
  CHECK(space.valid.size() + 8 + 2 == static_cast<size_t>(space.total));
  // Deterministic order: instance axis slowest, in the order written.
  CHECK(space.valid.front().instance->name() == "aws.p4d.24xlarge");
  CHECK(space.valid.back().instance->name() == "aws.g5.48xlarge");
}

TEST_CASE("interleaving needs virtual stages and layers divisible by stages x chunks") {
  TempDir dir;
  auto space =
      expand_configurations(*load_with_job(dir, R"(cluster { instance: "aws.p4d.24xlarge" nodes: 1 }
parallelism { schedule: INTERLEAVED_ONE_F_ONE_B pipeline_parallel: 4 }
sweep { virtual_stages: [1, 2, 3] })"));
  // v=1: interleaved without chunks; v=2: 32 % 8 == 0 valid; v=3: 32 % 12 != 0.
  CHECK(space.valid.size() == 1);
  CHECK(space.valid[0].parallelism.virtual_stages() == 2);
  CHECK(space.pruned.size() == 2);
}

TEST_CASE("pipeline runs must split the micro-batches into whole schedules on a pipeline") {
  // Batch 32 on 8 GPUs: PP 4 leaves DP 2, so 16 micro-batches a replica at micro-batch 1 and 8 at
  // 2, interleaved in groups of the 4 stages. 4 runs: of 4 (valid) or of 2 (not a multiple of
  // 4); 3 runs divide neither. PP 1 has no pipeline to run, PP 2 (DP 4, 8 micro-batches) does.
  const auto space = [](const std::string& parallelism, const std::string& sweep) {
    TempDir dir;
    return expand_configurations(*load_with_job(
        dir, "cluster { instance: \"aws.p4d.24xlarge\" nodes: 1 }\nparallelism { " +
                 parallelism + " }\nsweep { " + sweep + " }"));
  };
  const std::string interleaved =
      "schedule: INTERLEAVED_ONE_F_ONE_B pipeline_parallel: 4 virtual_stages: 2 ";
  const std::string split =
      "pipeline runs do not divide the micro-batches into runs of whole schedules";
  const auto four = space(interleaved + "pipeline_runs: 4", "micro_batch_size: [1, 2]");
  REQUIRE(four.valid.size() == 1);
  CHECK(four.valid[0].parallelism.micro_batch_size() == 1);
  CHECK(four.pruned.at(split) == 1);
  CHECK(space(interleaved + "pipeline_runs: 3", "micro_batch_size: [1, 2]").pruned.at(split) ==
        2);
  const auto stages = space("pipeline_runs: 2", "pipeline_parallel: [1, 2]");
  REQUIRE(stages.valid.size() == 1);
  CHECK(stages.valid[0].parallelism.pipeline_parallel() == 2);
  CHECK(stages.pruned.at("pipeline runs need pipeline parallel > 1") == 1);
}

TEST_CASE("expert degrees that do not fit a stage's GPUs are pruned, fitting ones simulated") {
  // Mixtral 8x7B on one 8-GPU node, TP 2 x DP 4: a stage has 8 GPUs; two micro-batch sizes make
  // a sweep of two candidates.
  const std::string text = R"(model: "mixtral-8x7b"
job { global_batch_size: 32 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 10 }
cluster { instance: "aws.p4d.24xlarge" nodes: 1 }
sweep { micro_batch_size: [1, 2] }
parallelism { tensor_parallel: 2 )";
  for (const auto& [degrees, reason] : std::vector<std::pair<std::string, std::string>>{
           {"expert_parallel: 8 sequence_parallel: true",
            "expert tensor x expert parallel does not divide the GPUs of a pipeline stage"},
           {"expert_parallel: 2",
            "expert layers with tensor parallel > 1 need sequence parallelism"},
           {"expert_parallel: 2 sequence_parallel: true", ""},
           // Megatron-Core's assertions on the all-to-all overlap (transformer_config.py).
           {"expert_parallel: 2 sequence_parallel: true overlap_expert_communication: true", ""},
           {"sequence_parallel: true overlap_expert_communication: true",
            "overlapping expert communication needs expert parallel > 1"},
           {"expert_parallel: 2 sequence_parallel: true overlap_expert_communication: true "
            "recompute: RECOMPUTE_FULL",
            "overlapping expert communication cannot run with full recomputation"},
           {"expert_parallel: 2 sequence_parallel: true overlap_expert_communication: true "
            "pipeline_parallel: 2",
            "overlapping expert communication with pipeline parallel > 1 needs the interleaved "
            "or the DualPipe schedule"}}) {
    INFO(degrees);
    TempDir dir;
    const auto space =
        expand_configurations(*testing::load_valid_scenario(dir, text + degrees + " }"));
    if (reason.empty()) {
      CHECK(space.valid.size() == 2);
      continue;
    }
    CHECK(space.valid.empty());
    CHECK(space.pruned.at(reason) == 2);
  }
}

TEST_CASE("a scenario of one configuration that cannot run is an error at the field to correct") {
  const std::string mixtral = R"(model: "mixtral-8x7b"
job { global_batch_size: 32 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 10 }
cluster { instance: "aws.p4d.24xlarge" nodes: 1 }
)";
  // ETP (TP by default) 2 x EP 8 = 16 ranks of experts on a stage of TP 2 x DP 4 = 8 GPUs.
  CHECK(testing::scenario_errors(
            mixtral +
            "parallelism { tensor_parallel: 2 expert_parallel: 8 sequence_parallel: true }") ==
        "s.textproto:4:34: parallelism.expert_parallel: expert tensor x expert parallel does not "
        "divide the GPUs of a pipeline stage: ETP 2 x EP 8 against the 8 GPUs of a stage (TP 2 x "
        "CP 1 x DP 4)\n");
  // Without expert_parallel the expert tensor-parallel degree is the one to correct.
  CHECK(testing::scenario_errors(mixtral + "parallelism { expert_tensor_parallel: 16 }") ==
        "s.textproto:4:15: parallelism.expert_tensor_parallel: expert tensor x expert parallel "
        "does not divide the GPUs of a pipeline stage: ETP 16 x EP 1 against the 8 GPUs of a "
        "stage (TP 1 x CP 1 x DP 8)\n");
  CHECK(testing::scenario_errors(mixtral + "parallelism { expert_communication_sms: 20 }") ==
        "s.textproto:4:15: parallelism.expert_communication_sms: applies with "
        "overlap_expert_communication only\n");
  CHECK(testing::scenario_errors(mixtral + "parallelism { pipeline_parallel: 3 }") ==
        "s.textproto:4:15: parallelism.pipeline_parallel: tensor x context x pipeline parallel "
        "does not divide the GPUs: TP 1 x CP 1 x PP 3 = 3 against 8 GPUs\n");
  // DP x TP x CP x PP overflowed an int (UBSan: signed integer overflow), in 64 bits now.
  CHECK(testing::scenario_errors(
            mixtral + "parallelism { tensor_parallel: 2 data_parallel: 2147483647 }") ==
        "s.textproto:4:34: parallelism.data_parallel: tensor x context x pipeline x data "
        "parallel differs from the GPUs: 2 x 2147483647 against 8 GPUs\n");
  // A missing field is reported where its message starts (here: no parallelism at all).
  CHECK(testing::scenario_errors(R"(model: "mixtral-8x7b"
job { global_batch_size: 12 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 10 }
cluster { instance: "aws.p4d.24xlarge" nodes: 1 })") ==
        "s.textproto:1:1: parallelism.micro_batch_size: micro-batch x data parallel does not "
        "divide the global batch: 1 x 8 does not divide 12\n");
}

TEST_CASE("a CNN's recomputation is pruned from a sweep and an error in a fixed layout") {
  // A CNN's step keeps every activation; recomputation would be a silent no-op.
  const std::string resnet = R"(model: "resnet50"
job { global_batch_size: 256 precision: BF16 optimizer: ADAM steps: 10 }
cluster { instance: "aws.p4d.24xlarge" nodes: 2 }
)";
  TempDir dir;
  const auto swept = expand_configurations(*testing::load_valid_scenario(
      dir, resnet + "sweep { recompute: [RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL] }"));
  REQUIRE(swept.valid.size() == 1);
  CHECK(swept.valid[0].parallelism.recompute() == schema::RECOMPUTE_NONE);
  CHECK(swept.pruned.at("recomputation is simulated for transformers only") == 2);
  CHECK(testing::scenario_errors(resnet + "parallelism { recompute: RECOMPUTE_FULL }") ==
        "s.textproto:4:15: parallelism.recompute: recomputation is simulated for transformers "
        "only: RECOMPUTE_FULL\n");
}

TEST_CASE("FSDP2 of expert layers: the combinations AutoModel refuses are errors at their field") {
  const std::string mixtral = R"(model: "mixtral-8x7b"
job { global_batch_size: 32 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 10 }
cluster { instance: "aws.p4d.24xlarge" nodes: 2 }
)";
  const std::string one =
      ": the scenario's one configuration is aws.p4d.24xlarge x 2, TP 1 PP 1 DP 16 EP 4 mbs 1, "
      "ZeRO 3\n";
  const auto errors = [&](const std::string& parallelism) {
    return testing::scenario_errors(mixtral + "parallelism { zero_stage: 3 " + parallelism + " }");
  };
  CHECK(errors("fsdp2: true expert_parallel: 4") == "");
  // EP 16 on a stage of 16 GPUs, but 8 experts: parallelize_model's assertion
  // (n_routed_experts divisible by the expert-parallel degree).
  CHECK(errors("fsdp2: true expert_parallel: 16") ==
        "s.textproto:4:41: parallelism.expert_parallel: 16 does not divide the model's "
        "num_experts (8)\n");
  CHECK(errors("expert_parallel: 4") ==
        "s.textproto:4:1: parallelism.fsdp2: ZeRO-3 of expert layers is simulated as FSDP2 "
        "only (DeepSpeed's is not)" + one);
  CHECK(errors("fsdp2: true expert_parallel: 4 tensor_parallel: 2 sequence_parallel: true "
               "overlap_tensor_communication: true") ==
        "s.textproto:4:103: parallelism.overlap_tensor_communication: FSDP2 of expert layers "
        "runs no asynchronous tensor parallelism (AutoModel's MoE parallelizer refuses it): the "
        "scenario's one configuration is aws.p4d.24xlarge x 2, TP 2 PP 1 DP 8 EP 4 mbs 1, "
        "ZeRO 3, SP\n");
  CHECK(errors("fsdp2: true expert_parallel: 4 tensor_parallel: 2 sequence_parallel: true") ==
        "s.textproto:4:60: parallelism.tensor_parallel: FSDP2 of expert layers with tensor "
        "parallel > 1 is not simulated (AutoModel's MoE tensor parallelism replicates attention "
        "and the router): tensor_parallel 2\n");
  CHECK(errors("fsdp2: true expert_parallel: 4 data_parallel_shard: 8") ==
        "s.textproto:4:60: parallelism.data_parallel_shard: hybrid sharding of expert layers is "
        "simulated as Megatron FSDP's Hybrid-FSDP only (shard_optimizer_across_replicas): the "
        "scenario's one configuration is aws.p4d.24xlarge x 2, TP 1 PP 1 DP 16 shard 8 EP 4 "
        "mbs 1, ZeRO 3\n");
  CHECK(errors("fsdp2: true expert_parallel: 4 overlap_expert_communication: true") ==
        "s.textproto:4:60: parallelism.overlap_expert_communication: the expert all-to-all "
        "overlap is not simulated under ZeRO-3" + one);
}

TEST_CASE("Hybrid-FSDP: groups, each one replica of every expert, and Megatron FSDP's options") {
  const std::string mixtral = R"(model: "mixtral-8x7b"
job { global_batch_size: 32 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 10 }
cluster { instance: "aws.p4d.24xlarge" nodes: 2 }
)";
  const auto errors = [&](const std::string& parallelism) {
    return testing::scenario_errors(mixtral + "parallelism { " + parallelism + " }");
  };
  const std::string hybrid = "zero_stage: 3 fsdp2: true shard_optimizer_across_replicas: true ";
  // EP 4 on groups of 4 ranks: 4 groups, each one replica of every expert.
  CHECK(errors(hybrid + "expert_parallel: 4 data_parallel_shard: 4") == "");
  // Megatron-Core's tensor parallelism: TP 2 x 2 ranks a group of 4 GPUs.
  CHECK(errors(hybrid + "expert_parallel: 4 expert_tensor_parallel: 1 data_parallel_shard: 2 "
                        "tensor_parallel: 2 sequence_parallel: true "
                        "overlap_tensor_communication: true") == "");
  CHECK(errors(hybrid + "expert_parallel: 4 data_parallel_shard: 8") ==
        "s.textproto:4:98: parallelism.data_parallel_shard: Hybrid-FSDP of expert layers is "
        "simulated with one replica of each expert per hybrid-sharding group only (ETP x EP = "
        "the group's GPUs): groups of 8 GPUs (data_parallel_shard 8 x TP x CP) against ETP 1 x "
        "EP 4\n");
  // The sharding groups must divide the data-parallel ranks (16 here).
  CHECK(errors(hybrid + "expert_parallel: 4 data_parallel_shard: 6") ==
        "s.textproto:4:98: parallelism.data_parallel_shard: hybrid sharding's groups must divide "
        "the data-parallel ranks: data_parallel_shard 6 against DP 16\n");
  CHECK(errors(hybrid + "expert_parallel: 4") ==
        "s.textproto:4:41: parallelism.shard_optimizer_across_replicas: Hybrid-FSDP needs "
        "hybrid-sharding groups: data_parallel_shard below data_parallel: data_parallel_shard "
        "absent, DP 16\n");
  const std::string llama = R"(model: "llama3-8b"
job { global_batch_size: 32 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 10 }
cluster { instance: "aws.p4d.24xlarge" nodes: 2 }
)";
  CHECK(testing::scenario_errors(llama + "parallelism { zero_stage: 3 data_parallel_shard: 8 "
                                         "shard_optimizer_across_replicas: true }")
            .find("parallelism.shard_optimizer_across_replicas: Hybrid-FSDP needs zero_stage 3 "
                  "with fsdp2: zero_stage 3, no fsdp2") != std::string::npos);
  CHECK(testing::scenario_errors(llama + "parallelism { " + hybrid +
                                 "data_parallel_shard: 8 fsdp2_keep_forward_gather: true }")
            .find("Hybrid-FSDP runs Megatron FSDP, not AutoModel's FSDP2 options: "
                  "fsdp2_keep_forward_gather") != std::string::npos);
}

TEST_CASE("fine-grained offload runs on ZeRO-3's layer-by-layer tasks of one stage") {
  const std::string nano = R"(model: "nemotron3-nano-30b-a3b"
job { global_batch_size: 32 sequence_length: 8192 precision: BF16 optimizer: ADAM steps: 10 }
cluster { instance: "onprem.gb200-nvl72" nodes: 2 }
)";
  const std::string offload =
      "expert_parallel: 8 fused_expert_mlp: true "
      "activation_offload_modules: [OFFLOAD_FUSED_EXPERT_MLP]";
  CHECK(testing::scenario_errors(nano + "parallelism { zero_stage: 3 fsdp2: true " + offload +
                                 " }") == "");
  CHECK(
      testing::scenario_errors(nano + "parallelism { distributed_optimizer: true " + offload + " }")
          .find("parallelism.activation_offload_modules: fine-grained activation offload is "
                "simulated under zero_stage 3 over 2 or more data-parallel ranks only: "
                "zero_stage 0, data_parallel 8") != std::string::npos);
  // Every layer an expert layer: no window between two offloaded layers.
  const std::string mixtral = R"(model: "mixtral-8x7b"
job { global_batch_size: 32 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 10 }
cluster { instance: "onprem.gb200-nvl72" nodes: 2 }
)";
  CHECK(testing::scenario_errors(mixtral + "parallelism { zero_stage: 3 fsdp2: true " + offload +
                                 " }")
            .find("fewer expert layers than layers (each copy's window ends at the next offloaded "
                  "layer's): 32 expert layers of 32") != std::string::npos);
}

TEST_CASE("auto_parallelism enumerates expert parallel over the experts' divisors that fit") {
  // Mixtral 8x7B (8 experts) on 2 nodes of 8 GPUs: at TP 1 and PP 1 a stage of 16 GPUs takes
  // EP 1, 2, 4 and 8 (16 does not divide the experts).
  const std::string text = R"(model: "mixtral-8x7b"
job { global_batch_size: 64 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 10 }
cluster { instance: "aws.p4d.24xlarge" nodes: 2 }
sweep { auto_parallelism { max_pipeline_parallel: 1 micro_batch_size: [1] } })";
  TempDir dir;
  auto loaded = testing::load_valid_scenario(dir, text);
  std::vector<int> degrees;
  for (const Configuration& c : expand_configurations(*loaded).valid) {
    if (c.parallelism.tensor_parallel() == 1 && c.parallelism.pipeline_parallel() == 1) {
      degrees.push_back(c.parallelism.expert_parallel());
    }
  }
  CHECK(degrees == std::vector<int>{1, 2, 4, 8});
}

TEST_CASE("sequence parallelism without tensor parallelism is pruned") {
  TempDir dir;
  auto space =
      expand_configurations(*load_with_job(dir, R"(cluster { instance: "aws.p4d.24xlarge" nodes: 1 }
sweep { tensor_parallel: [1, 2] sequence_parallel: [true] })"));
  REQUIRE(space.valid.size() == 1);
  CHECK(space.valid[0].parallelism.tensor_parallel() == 2);
  CHECK(space.pruned["sequence parallelism needs tensor parallel > 1"] == 1);
}

TEST_CASE("DeepSpeed's pipeline engine without a pipeline is pruned, its overlaps off") {
  TempDir dir;
  auto space =
      expand_configurations(*load_with_job(dir, R"(cluster { instance: "aws.p4d.24xlarge" nodes: 1 }
parallelism { distributed_optimizer: true deepspeed_pipeline_engine: true }
sweep { pipeline_parallel: [1, 2] })"));
  REQUIRE(space.valid.size() == 1);
  const schema::Parallelism& p = space.valid[0].parallelism;
  CHECK(p.pipeline_parallel() == 2);
  CHECK_FALSE(p.overlap_gradient_reduce());
  CHECK_FALSE(p.overlap_parameter_gather());
  CHECK_FALSE(p.overlap_pipeline_communication());
  CHECK(space.pruned["DeepSpeed's pipeline engine needs pipeline parallel > 1"] == 1);
}

// (nodes, tp, pp, mbs, virtual stages) of every valid configuration of `space`.
std::set<std::tuple<int, int, int, int, int>> layouts(const ExpandedConfigurations& space) {
  std::set<std::tuple<int, int, int, int, int>> result;
  for (const Configuration& c : space.valid) {
    const schema::Parallelism& p = c.parallelism;
    result.insert({c.nodes, p.tensor_parallel(), p.pipeline_parallel(), p.micro_batch_size(),
                   p.virtual_stages()});
  }
  return result;
}

TEST_CASE("auto parallelism enumerates every valid layout, counted by hand") {
  // llama2-7b (32 layers, 32 heads, hidden 4096, FFN 11008), batch 32, g5.12xlarge (4 GPUs).
  // 1 node:  tp1 pp1/2/4 (dp 4/2/1) 3 x 4 mbs; tp2 pp1/2 2 x 4; tp4 pp1 4      = 24
  // 2 nodes: tp1 pp1 dp8 mbs 1,2,4 (8 x 8 > 32) 3, pp2/4/8 3 x 4; tp2 pp1/2/4 3 x 4;
  //          tp4 pp1/2 2 x 4                                                   = 35
  TempDir dir;
  const std::string cluster = R"(cluster { instance: "aws.g5.12xlarge" }
sweep { nodes: [1, 2] auto_parallelism { )";
  const auto plain = expand_configurations(*load_with_job(dir, cluster + "} }"));
  CHECK(plain.total == 59);
  CHECK(plain.valid.size() == 59);
  // Interleaving (32 layers divide 2 x pp for pp 2, 4, 8) doubles the pipelined layouts whose
  // micro-batch count 32 / (mbs x dp) divides by pp: all 12 of 1 node's; of 2 nodes' 24, not
  // mbs 8 of tp1 pp2 dp4 (1 micro-batch), mbs 8 of tp1 pp4 dp2 (2), mbs 8 of tp1 pp8 dp1 (4).
  const auto interleaved =
      expand_configurations(*load_with_job(dir, cluster + "max_virtual_stages: 2 } }"));
  CHECK(interleaved.valid.size() == 59 + 12 + 21);
  for (const Configuration& c : interleaved.valid) {
    CHECK((c.parallelism.virtual_stages() > 1) ==
          (c.parallelism.schedule() == schema::INTERLEAVED_ONE_F_ONE_B));
  }
  // The same set as listing every degree and pruning, with tensor parallelism inside a node.
  const auto listed =
      expand_configurations(*load_with_job(dir, R"(cluster { instance: "aws.g5.12xlarge" }
sweep { nodes: [1, 2] tensor_parallel: [1, 2, 4] pipeline_parallel: [1, 2, 4, 8]
        micro_batch_size: [1, 2, 4, 8] })"));
  CHECK(layouts(listed) == layouts(plain));
  const auto capped = expand_configurations(
      *load_with_job(dir, cluster + "max_pipeline_parallel: 2 micro_batch_size: [1] } }"));
  // 1 node: tp1 pp1/2, tp2 pp1/2, tp4 pp1 = 5; 2 nodes: tp1 pp1/2, tp2 pp1/2, tp4 pp1/2 = 6.
  CHECK(capped.valid.size() == 11);
}

TEST_CASE("auto parallelism tries context-parallel degrees up to its maximum, CP after TP") {
  TempDir dir;
  // 16 GPUs, sequence 4096 (divisible by 2 x 16): CP 1, 2, 4, 8, 16 wherever tp x cp divides.
  auto space =
      expand_configurations(*load_with_job(dir, R"(cluster { instance: "aws.p4d.24xlarge" nodes: 2 }
sweep { auto_parallelism { micro_batch_size: [1] max_context_parallel: 4 } })"));
  std::set<int> degrees;
  for (const Configuration& c : space.valid) {
    const schema::Parallelism& p = c.parallelism;
    CHECK(p.tensor_parallel() * p.context_parallel() * p.pipeline_parallel() * p.data_parallel() ==
          16);
    degrees.insert(p.context_parallel());
  }
  CHECK(degrees == std::set<int>{1, 2, 4});
}

TEST_CASE("auto parallelism counts embedding and loss as layers where that splits evenly") {
  TempDir dir;
  // Llama 2 7B's 32 layers on 2 stages x 17 chunks: 34 = 32 + 2 slots (with
  // uneven_pipeline_layouts), never without.
  const std::string cluster = R"(cluster { instance: "aws.p4d.24xlarge" nodes: 2 }
sweep { auto_parallelism { micro_batch_size: [1] max_pipeline_parallel: 2 max_virtual_stages: 17 )";
  const auto accounted = [](const ExpandedConfigurations& space) {
    int n = 0;
    for (const Configuration& c : space.valid) {
      const schema::Parallelism& p = c.parallelism;
      if (!p.embedding_in_pipeline_split()) continue;
      CHECK(p.loss_in_pipeline_split());
      CHECK(p.pipeline_parallel() * p.virtual_stages() == 34);
      ++n;
    }
    return n;
  };
  CHECK(accounted(expand_configurations(*load_with_job(dir, cluster + "} }"))) == 0);
  CHECK(accounted(expand_configurations(
            *load_with_job(dir, cluster + "uneven_pipeline_layouts: true } }"))) > 0);
}

TEST_CASE("GPU-count constraints prune before any evaluation, with the constraint named") {
  TempDir dir;
  auto space = expand_configurations(*load_with_job(dir, R"(cluster { instance: "aws.p4d.24xlarge" }
sweep { nodes: [1, 2, 4, 8] constraints { min_gpus: 16 max_gpus: 32 } })"));
  CHECK(space.valid.size() == 2);
  CHECK(space.pruned["fewer GPUs than constraints.min_gpus"] == 1);
  CHECK(space.pruned["more GPUs than constraints.max_gpus"] == 1);
}

TEST_CASE("any index of the space decodes to the configuration expansion lists there") {
  TempDir dir;
  auto loaded = load_with_job(dir, R"(cluster { instance: "aws.g5.12xlarge" }
sweep { instance: ["aws.g5.12xlarge", "aws.p4d.24xlarge"] nodes: [1, 2]
        auto_parallelism { max_virtual_stages: 4 } recompute: [RECOMPUTE_SELECTIVE, RECOMPUTE_FULL]
        zero_stage: [0, 1] })");
  const ConfigurationSpace space(*loaded);
  const auto expanded = expand_configurations(*loaded);
  REQUIRE(expanded.valid.size() == static_cast<size_t>(space.size()));
  for (const Configuration& c : expanded.valid) {
    const Configuration again = space.at(c.index);
    CHECK(again.instance == c.instance);
    CHECK(again.nodes == c.nodes);
    CHECK(again.parallelism.SerializeAsString() == c.parallelism.SerializeAsString());
  }
  CHECK(expanded.valid.back().index == space.size() - 1);
}

}  // namespace
}  // namespace clustersim

namespace clustersim {
namespace {

TEST_CASE("auto_parallelism with dualpipe adds a DualPipe twin of every layout it runs on") {
  // 16 GPUs, 32 sequences: a layout of DP d has 32 / d micro-batches per replica.
  const auto layouts = [](const std::string& flag) {
    TempDir dir;
    const auto space = expand_configurations(*load_with_job(
        dir, R"(cluster { instance: "aws.p4d.24xlarge" nodes: 2 }
sweep { auto_parallelism { micro_batch_size: [1] max_pipeline_parallel: 8 )" + flag + " } }"));
    std::multiset<std::tuple<int, int, int>> dual, plain;  // (TP, PP, DP) of each schedule
    for (const Configuration& c : space.valid) {
      const schema::Parallelism& p = c.parallelism;
      const auto key = std::tuple{p.tensor_parallel(), p.pipeline_parallel(), p.data_parallel()};
      if (p.schedule() == schema::DUALPIPE) {
        dual.insert(key);
      } else if (p.schedule() == schema::ONE_F_ONE_B) {
        plain.insert(key);
      }
    }
    return std::pair{dual, plain};
  };
  CHECK(layouts("").first.empty());
  const auto [dual, plain] = layouts("dualpipe: true");
  REQUIRE_FALSE(dual.empty());
  for (const auto& [tp, pp, dp] : plain) {
    INFO("TP " << tp << " PP " << pp << " DP " << dp);
    const int micro_batches = 32 / dp;
    const bool runs = pp % 2 == 0 && micro_batches % 2 == 0 && micro_batches >= 2 * pp;
    CHECK(dual.count({tp, pp, dp}) == (runs ? 1u : 0u));
  }
  CHECK(dual.size() <= plain.size());
}

}  // namespace
}  // namespace clustersim
