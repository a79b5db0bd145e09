// Tests of pipelines across pools as scenarios (issue 17): the shipped scenario's answer, and
// every bad input an error at its field (stage layer counts, sums and zeros, a stage too big for
// its pool's GPU, tensor parallelism spanning pools, pools of different GPUs per node), and the
// placements auto_parallelism and sweep.pool_placement try, interleaved ones included.
#include <catch2/catch.hpp>
#include <set>
#include <tuple>

#include "sim/sweep/configuration_space.h"
#include "tests/testing/scenario_text.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

using testing::scenario_errors;

// Llama-2-7B on one p5 node (H100) then one p4d node (A100), the layout on line 9.
const char kTwoPools[] = R"(name: "t"
model: "llama2-7b"
job { global_batch_size: 64 sequence_length: 4096 precision: BF16 optimizer: ADAM
      token_budget: 1e9 }
cluster {
  pool { instance: "aws.p5.48xlarge" nodes: 1 }
  pool { instance: "aws.p4d.24xlarge" nodes: 1 }
}
)";

std::string errors_of(const std::string& parallelism) {
  return scenario_errors(kTwoPools + parallelism);
}

TEST_CASE("stage layer counts of the wrong count, sum or a zero are errors at stage_layers") {
  const std::string across =
      "parallelism { tensor_parallel: 8 pipeline_parallel: 2 pool_placement: "
      "PIPELINE_ACROSS_POOLS ";
  CHECK(errors_of(across + "stage_layers: [10, 11, 11] }") ==
        "s.textproto:9:93: parallelism.stage_layers: stage_layers do not lay out the pipeline: 3 "
        "stage layer counts for 2 stages\n");
  CHECK(errors_of(across + "stage_layers: [10, 11] }") ==
        "s.textproto:9:93: parallelism.stage_layers: add up to 21 layers, the model has 32 "
        "(num_layers)\n");
  CHECK(errors_of(across + "stage_layers: [32, 0] }") ==
        "s.textproto:9:112: parallelism.stage_layers[1]: must be at least 1, got 0\n");
}

TEST_CASE("a pipeline across pools takes no first/last stage layer counts instead of its own") {
  CHECK(errors_of("parallelism { tensor_parallel: 8 pipeline_parallel: 2 pool_placement: "
                  "PIPELINE_ACROSS_POOLS first_stage_layers: 20 }") ==
        "s.textproto:9:93: parallelism.first_stage_layers: a pipeline across pools splits its "
        "layers by speed or by stage_layers, not by first/last stage layers or the "
        "embedding/loss split: the scenario's one configuration is aws.p5.48xlarge x 1 + "
        "aws.p4d.24xlarge x 1, TP 8 PP 2 DP 1 mbs 1, pools as pipeline stages (first on "
        "aws.p5.48xlarge x 1)\n");
}

TEST_CASE("a stage whose layers do not fit its pool's GPU memory is an error at its count") {
  // TP 1 x DP 8 per stage: 30 layers of Llama-2-7B unsharded on each A100 are about 122 GiB.
  const std::string across =
      "parallelism { tensor_parallel: 1 pipeline_parallel: 2 pool_placement: "
      "PIPELINE_ACROSS_POOLS ";
  CHECK(errors_of(across + "stage_layers: [2, 30] }") ==
        "s.textproto:9:111: parallelism.stage_layers[1]: stage 2's 30 layers do not fit in the "
        "memory of \"aws.p4d.24xlarge\"'s A100-SXM4-40GB: they need 122 GiB per GPU of the 39.4 "
        "GiB it has\n");
  // Without counts no split by speed fits either: the error is the placement's.
  const std::string unlisted = errors_of(across + "}");
  CHECK(unlisted.rfind("s.textproto:9:55: parallelism.pool_placement: no split of the layers by "
                       "speed fits the stages' GPU memories (an even split: stage 2's 16 layers",
                       0) == 0);
}

TEST_CASE("tensor parallelism spanning pools stays an error with the pipeline across them") {
  CHECK(errors_of("parallelism { tensor_parallel: 16 pipeline_parallel: 1 pool_placement: "
                  "PIPELINE_ACROSS_POOLS }") ==
        "s.textproto:9:15: parallelism.tensor_parallel: 16 would span pools: pool 1 "
        "(\"aws.p5.48xlarge\") has NVLink domains of 8 GPUs, and a tensor-parallel group stays "
        "inside one pool's NVLink domain\n");
}

TEST_CASE("pools of different GPUs per node cannot hold one pipeline") {
  const std::string errors = scenario_errors(R"(name: "t"
model: "llama2-7b"
job { global_batch_size: 64 sequence_length: 4096 precision: BF16 optimizer: ADAM
      token_budget: 1e9 }
cluster {
  pool { instance: "aws.p5.48xlarge" nodes: 1 }
  pool { instance: "aws.g5.12xlarge" nodes: 2 }
}
parallelism { tensor_parallel: 4 pipeline_parallel: 4 pool_placement: PIPELINE_ACROSS_POOLS })");
  CHECK(errors.rfind("s.textproto:6:3: cluster.pool: pipeline across pools needs the same GPUs "
                     "per node and NVLink domain in every pool: aws.p5.48xlarge has 8 GPUs per "
                     "node, aws.g5.12xlarge 4",
                     0) == 0);
}

TEST_CASE("auto_parallelism over pools also places the pipeline across them") {
  // 8 H100 + 8 A100 GPUs: every stage of TP x DP = 8, 4 or 2 GPUs sits whole on a pool, so PP is
  // 2, 4 or 8 (at most 4 here); one micro-batch size.
  testing::TempDir dir;
  const auto loaded = testing::load_valid_scenario(
      dir, kTwoPools + std::string("sweep { auto_parallelism { micro_batch_size: [1] "
                                   "max_pipeline_parallel: 4 } }"));
  std::set<std::tuple<int, int, int>> across;  // TP, PP, DP
  for (const Configuration& c : expand_configurations(*loaded).valid) {
    const schema::Parallelism& p = c.parallelism;
    if (p.pool_placement() != schema::PIPELINE_ACROSS_POOLS) continue;
    CHECK(p.tensor_parallel() * p.data_parallel() * p.pipeline_parallel() == 16);
    CHECK(8 % (p.tensor_parallel() * p.data_parallel()) == 0);
    across.insert({p.tensor_parallel(), p.pipeline_parallel(), p.data_parallel()});
  }
  CHECK(across.count({8, 2, 1}) == 1);
  CHECK(across.count({4, 4, 1}) == 1);
  CHECK(across.count({2, 2, 4}) == 1);
  CHECK(across.count({1, 8, 1}) == 0);  // more stages than max_pipeline_parallel
}

TEST_CASE("an interleaved pipeline across pools splits by speed with no even split over chunks") {
  // 32 layers over 2 stages x 3 chunks do not split evenly; split by speed they need not.
  const std::string across =
      "parallelism { tensor_parallel: 8 pipeline_parallel: 2 pool_placement: "
      "PIPELINE_ACROSS_POOLS schedule: INTERLEAVED_ONE_F_ONE_B virtual_stages: 3 ";
  CHECK(errors_of(across + "}") == "");
  CHECK(errors_of(across + "stage_layers: [7, 5, 6, 5, 6, 3] }") == "");
  // Listed per stage, each stage's count splits over its chunks (Megatron-Core's even chunks).
  CHECK(errors_of(across + "stage_layers: [20, 12] }") ==
        "s.textproto:9:145: parallelism.stage_layers: stage_layers do not lay out the pipeline: 20 "
        "layers of a stage do not split into 3 model chunks\n");
  // Pools as data-parallel replicas run it too, dealt whole groups of one micro-batch a stage:
  // 2 micro-batches of 32 on 2 stages are one group for the 2 replicas.
  const std::string dp_pools =
      "parallelism { tensor_parallel: 4 pipeline_parallel: 2 schedule: INTERLEAVED_ONE_F_ONE_B "
      "virtual_stages: 2 ";
  CHECK(errors_of(dp_pools + "}") == "");
  CHECK(errors_of(dp_pools + "micro_batch_size: 32 }")
            .find("parallelism.micro_batch_size: interleaving in a mix of data-parallel pools "
                  "needs the micro-batches in groups of one per pipeline stage, at least one "
                  "group per replica: 2 micro-batches over 2 replicas on 2 stages") !=
        std::string::npos);
}

TEST_CASE("ZeRO-3 and expert parallelism run inside the stages of a pipeline across pools") {
  CHECK(errors_of("parallelism { tensor_parallel: 2 pipeline_parallel: 2 zero_stage: 3 "
                  "pool_placement: PIPELINE_ACROSS_POOLS }") == "");
  std::string mixtral = kTwoPools;
  mixtral.replace(mixtral.find("llama2-7b"), 9, "mixtral-8x7b");
  CHECK(scenario_errors(mixtral +
                        "parallelism { tensor_parallel: 8 sequence_parallel: true "
                        "pipeline_parallel: 2 expert_parallel: 8 expert_tensor_parallel: 1 "
                        "distributed_optimizer: true recompute: RECOMPUTE_FULL pool_placement: "
                        "PIPELINE_ACROSS_POOLS }") == "");
}

TEST_CASE("ZeRO-3 over data-parallel pools: one group over every pool's replicas, in lockstep") {
  CHECK(errors_of("parallelism { tensor_parallel: 2 pipeline_parallel: 2 zero_stage: 3 }") == "");
  CHECK(errors_of("parallelism { tensor_parallel: 2 pipeline_parallel: 2 zero_stage: 3 "
                  "rank_order: TP_DP_PP }") ==
        "s.textproto:9:69: parallelism.rank_order: ZeRO-3 over data-parallel pools places each "
        "replica inside one pool (TP_PP_DP): the scenario's one configuration is "
        "aws.p5.48xlarge x 1 + aws.p4d.24xlarge x 1, TP 2 PP 2 DP 4 mbs 1, ZeRO 3\n");
  // TP 8 on a p5 node and two p4d nodes: 3 replicas cannot split 64 micro-batches evenly.
  std::string three = kTwoPools;
  three.replace(three.find("nodes: 1 }\n}"), 10, "nodes: 2 }");
  CHECK(scenario_errors(three + "parallelism { tensor_parallel: 8 zero_stage: 3 }")
            .find("parallelism.micro_batch_size: ZeRO-3 over data-parallel pools runs every "
                  "replica's micro-batches in lockstep (each layer's gathers and reduce-scatters "
                  "span the pools): the micro-batches must split evenly over the replicas "
                  "(interleaved: in groups of one per stage): 64 micro-batches over 3 replicas") !=
        std::string::npos);
  // TP 4: 2 replicas on the p5 node, 4 on the p4d nodes; 96 sequences; groups of 4 replicas
  // would span the pools.
  three.replace(three.find("global_batch_size: 64"), 21, "global_batch_size: 96");
  CHECK(scenario_errors(three +
                        "parallelism { tensor_parallel: 4 zero_stage: 3 data_parallel_shard: 3 }")
            .find("parallelism.data_parallel_shard: hybrid sharding's groups over data-parallel "
                  "pools must lie inside each pool: 3 replicas against the 2 of aws.p5.48xlarge "
                  "x 1") != std::string::npos);
}

TEST_CASE("expert parallelism of data-parallel pools stays inside each pool's replicas") {
  // Mixtral-8x7B on one p5 node and three p4d nodes, TP 1 x PP 4: DP 8 in all, EP 4 dividing
  // its 8; but each pool's replicas hold every expert, and the p5 node's 2 replicas give a stage
  // 2 GPUs there.
  const std::string errors = scenario_errors(R"(name: "t"
model: "mixtral-8x7b"
job { global_batch_size: 64 sequence_length: 4096 precision: BF16 optimizer: ADAM
      token_budget: 1e9 }
cluster {
  pool { instance: "aws.p5.48xlarge" nodes: 1 }
  pool { instance: "aws.p4d.24xlarge" nodes: 3 }
}
parallelism { tensor_parallel: 1 pipeline_parallel: 4 expert_parallel: 4 expert_tensor_parallel: 1 })");
  CHECK(errors.find("parallelism.expert_parallel: expert tensor x expert parallel does not divide "
                    "a pool's GPUs of a pipeline stage (each pool holds every expert): ETP 1 x EP "
                    "4 against the 2 GPUs of a stage on aws.p5.48xlarge x 1") != std::string::npos);
}

TEST_CASE("auto_parallelism interleaves pipelines across pools up to max_virtual_stages") {
  testing::TempDir dir;
  const auto loaded = testing::load_valid_scenario(
      dir, kTwoPools + std::string("sweep { auto_parallelism { micro_batch_size: [1] "
                                   "max_pipeline_parallel: 4 max_virtual_stages: 3 } }"));
  std::set<std::tuple<int, int, int>> across, replicas;  // TP, PP, virtual stages
  for (const Configuration& c : expand_configurations(*loaded).valid) {
    const schema::Parallelism& p = c.parallelism;
    (p.pool_placement() == schema::PIPELINE_ACROSS_POOLS ? across : replicas)
        .insert({p.tensor_parallel(), p.pipeline_parallel(), p.virtual_stages()});
  }
  for (int v : {1, 2, 3}) {
    INFO("virtual stages " << v);
    CHECK(across.count({8, 2, v}) == 1);
    CHECK(across.count({4, 4, v}) == 1);  // 32 layers over 4 x 3 chunks: split by speed
  }
  // As data-parallel pools, every pool holding whole replicas (TP x PP of its 8 GPUs), an even
  // split over the chunks: 32 layers over 2 x 2 or 4 x 2 chunks, not over 2 x 3 or 4 x 3.
  for (auto [tp, pp] : {std::pair{4, 2}, {2, 4}}) {
    INFO("TP " << tp << " PP " << pp);
    CHECK(replicas.count({tp, pp, 1}) == 1);
    CHECK(replicas.count({tp, pp, 2}) == 1);
    CHECK(replicas.count({tp, pp, 3}) == 0);
  }
  CHECK(replicas.count({8, 1, 2}) == 0);  // one stage is no pipeline to interleave
}

TEST_CASE("auto_parallelism tries ZeRO-3 over data-parallel pools, interleaved too") {
  testing::TempDir dir;
  const auto loaded = testing::load_valid_scenario(
      dir, kTwoPools + std::string("parallelism { distributed_optimizer: false }\n"
                                   "sweep { zero_stage: [3] auto_parallelism { micro_batch_size: "
                                   "[1] max_pipeline_parallel: 2 max_virtual_stages: 2 } }"));
  std::set<std::tuple<int, int, int>> replicas;  // TP, PP, virtual stages of data-parallel pools
  for (const Configuration& c : expand_configurations(*loaded).valid) {
    const schema::Parallelism& p = c.parallelism;
    CHECK(p.zero_stage() == 3);
    if (p.pool_placement() == schema::PIPELINE_ACROSS_POOLS) continue;
    replicas.insert({p.tensor_parallel(), p.pipeline_parallel(), p.virtual_stages()});
  }
  CHECK(replicas.count({8, 1, 1}) == 1);
  CHECK(replicas.count({4, 2, 1}) == 1);
  CHECK(replicas.count({4, 2, 2}) == 1);
}

TEST_CASE("auto_parallelism tries expert parallelism inside the stages of a pipeline across pools") {
  // Mixtral-8x7B (8 experts) on 8 H100 + 8 A100 GPUs: a stage of TP 2 x DP 4 takes EP 1, 2, 4 or
  // 8 (ETP 1), each inside one pool.
  std::string mixtral = kTwoPools;
  mixtral.replace(mixtral.find("llama2-7b"), 9, "mixtral-8x7b");
  testing::TempDir dir;
  const auto loaded = testing::load_valid_scenario(
      dir, mixtral + "parallelism { sequence_parallel: true expert_tensor_parallel: 1 }\n"
                     "sweep { auto_parallelism { micro_batch_size: [1] max_pipeline_parallel: 2 } }");
  std::set<int> degrees;  // EP of the TP 2 x PP 2 x DP 4 layouts across the pools
  for (const Configuration& c : expand_configurations(*loaded).valid) {
    const schema::Parallelism& p = c.parallelism;
    if (p.pool_placement() != schema::PIPELINE_ACROSS_POOLS || p.tensor_parallel() != 2) continue;
    degrees.insert(p.expert_parallel());
  }
  CHECK(degrees == std::set<int>{1, 2, 4, 8});
}

TEST_CASE("sweep.pool_placement tries both placements of one layout") {
  testing::TempDir dir;
  const auto loaded = testing::load_valid_scenario(
      dir, kTwoPools + std::string("parallelism { tensor_parallel: 8 pipeline_parallel: 2 }\n"
                                   "sweep { pool_placement: [DATA_PARALLEL_POOLS, "
                                   "PIPELINE_ACROSS_POOLS] }"));
  const ExpandedConfigurations space = expand_configurations(*loaded);
  // TP 8 x PP 2 is 16 GPUs: the data-parallel mix needs it inside each pool's 8.
  CHECK(space.total == 2);
  REQUIRE(space.valid.size() == 1);
  CHECK(space.valid[0].parallelism.pool_placement() == schema::PIPELINE_ACROSS_POOLS);
  CHECK(space.pruned.count(
            "tensor x context x pipeline parallel does not divide every pool's GPUs") == 1);
}

}  // namespace
}  // namespace clustersim
