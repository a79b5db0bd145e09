// Tests of a configuration in words (the OOM message's closest, the trace's metadata, cost's
// cheapest and fastest) against its result row's (sweep's summary and ties, plot's bars): both
// name context parallelism, the hybrid-sharding group and expert parallelism, in the same words.
#include <catch2/catch.hpp>

#include "sim/sweep/configuration_labels.h"
#include "sim/sweep/configuration_space.h"
#include "sim/sweep/evaluation.h"
#include "sim/sweep/result_row.h"
#include "sim/sweep/runnable.h"
#include "tests/testing/scenario_text.h"
#include "tests/testing/shipped_catalog.h"
#include "tests/testing/temp_dir.h"

namespace clustersim {
namespace {

// The words of `text`'s one configuration, and of its result row's layout.
std::pair<std::string, std::string> words(const std::string& text) {
  const testing::TempDir dir;
  const auto loaded = testing::load_valid_scenario(dir, text);
  const ExpandedConfigurations space = expand_configurations(*loaded);
  REQUIRE(space.valid.size() == 1);
  const Configuration& c = space.valid.front();
  Evaluator evaluator(testing::shipped_catalog(), *loaded);
  return {describe(c), describe_layout(make_step_row(c, evaluator.evaluate(c)))};
}

TEST_CASE("a configuration's words name CP, the hybrid-sharding group and EP, as its row's do") {
  const std::string job =
      "job { global_batch_size: 64 sequence_length: 4096 precision: BF16 optimizer: ADAM "
      "steps: 10 }\n";
  // Llama 3 70B on 4 p4de nodes (32 GPUs): CP 2 x DP 16, FSDP2 sharded in groups of 4 ranks.
  const auto [hybrid, hybrid_row] =
      words("model: \"llama3-70b\"\n" + job +
            "cluster { instance: \"aws.p4de.24xlarge\" nodes: 4 }\n"
            "parallelism { context_parallel: 2 zero_stage: 3 fsdp2: true data_parallel_shard: 4 }");
  CHECK(hybrid == "aws.p4de.24xlarge x 4, TP 1 CP 2 PP 1 DP 16 shard 4 mbs 1, ZeRO 3");
  CHECK(hybrid_row == "aws.p4de.24xlarge x 4, TP 1 CP 2 PP 1 DP 16 shard 4 mbs 1");
  // Sharded over every rank: no group named.
  const auto [full, full_row] = words("model: \"llama3-70b\"\n" + job +
                                      "cluster { instance: \"aws.p4de.24xlarge\" nodes: 4 }\n"
                                      "parallelism { zero_stage: 3 fsdp2: true }");
  CHECK(full == "aws.p4de.24xlarge x 4, TP 1 PP 1 DP 32 mbs 1, ZeRO 3");
  CHECK(full_row == "aws.p4de.24xlarge x 4, TP 1 PP 1 DP 32 mbs 1");
  // Qwen3-30B-A3B's experts over the 8 GPUs of one p5.
  const auto [experts, experts_row] =
      words("model: \"qwen3-30b-a3b\"\n" + job +
            "cluster { instance: \"aws.p5.48xlarge\" nodes: 1 }\n"
            "parallelism { expert_parallel: 8 distributed_optimizer: true }");
  CHECK(experts == "aws.p5.48xlarge x 1, TP 1 PP 1 DP 8 EP 8 mbs 1, dist opt");
  CHECK(experts_row == "aws.p5.48xlarge x 1, TP 1 PP 1 DP 8 EP 8 mbs 1");
}

}  // namespace
}  // namespace clustersim
