// Tests of sweep expansion: the product of axes, the pruning rules and a deterministic order.
#include "sim/sweep/configuration_space.h"

#include <catch2/catch.hpp>

#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

using testing::TempDir;

const Catalog& catalog() { return testing::shipped_catalog(); }

std::unique_ptr<LoadedScenario> load(const TempDir& dir, const std::string& rest) {
  const std::string text = R"(model: "llama2-7b"
job { global_batch_size: 32 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 10 }
)" + rest;
  Diagnostics diagnostics;
  auto loaded = load_scenario(dir.write("s.textproto", text), catalog(), &diagnostics);
  INFO(diagnostics.to_string());
  REQUIRE(loaded != nullptr);
  return loaded;
}

TEST_CASE("a scenario without a sweep is one configuration with defaults filled in") {
  TempDir dir;
  auto space =
      expand_configurations(*load(dir, R"(cluster { instance: "aws.p4d.24xlarge" nodes: 2 })"));
  CHECK(space.total == 1);
  REQUIRE(space.valid.size() == 1);
  const Configuration& c = space.valid[0];
  CHECK(c.gpus() == 16);
  CHECK(c.parallelism.tensor_parallel() == 1);
  CHECK(c.parallelism.data_parallel() == 16);  // GPUs / (tp * pp)
  CHECK(c.parallelism.schedule() == schema::ONE_F_ONE_B);
  CHECK(c.parallelism.recompute() == schema::RECOMPUTE_NONE);
}

TEST_CASE("the sweep is the product of its axes; impossible splits are pruned with a reason") {
  TempDir dir;
  auto space = expand_configurations(*load(dir, R"(
sweep { instance: ["aws.p4d.24xlarge", "aws.g5.48xlarge"] nodes: [1, 2]
        tensor_parallel: [1, 8] pipeline_parallel: [1, 4] micro_batch_size: [1, 4] })"));
  CHECK(space.total == 2 * 2 * 2 * 2 * 2);
  // tp8 x pp4 = 32 GPUs exceeds both 8 (1 node) and 16 (2 nodes): 2 instances x 2 nodes x 2 mbs.
  CHECK(space.pruned["tensor x pipeline parallel does not divide the GPUs"] == 8);
  // Batch 32 = micro-batch x DP x accumulation: mbs 4 with DP 16 (2 nodes, tp1 pp1) needs 64.
  CHECK(space.pruned["micro-batch x data parallel does not divide the global batch"] == 2);
  CHECK(space.valid.size() + 8 + 2 == static_cast<size_t>(space.total));
  // Deterministic order: instance axis slowest, in the order written.
  CHECK(space.valid.front().instance->name() == "aws.p4d.24xlarge");
  CHECK(space.valid.back().instance->name() == "aws.g5.48xlarge");
}

TEST_CASE("interleaving needs virtual stages and layers divisible by stages x chunks") {
  TempDir dir;
  auto space = expand_configurations(*load(dir, R"(cluster { instance: "aws.p4d.24xlarge" nodes: 1 }
parallelism { schedule: INTERLEAVED_ONE_F_ONE_B pipeline_parallel: 4 }
sweep { virtual_stages: [1, 2, 3] })"));
  // v=1: interleaved without chunks; v=2: 32 % 8 == 0 valid; v=3: 32 % 12 != 0.
  CHECK(space.valid.size() == 1);
  CHECK(space.valid[0].parallelism.virtual_stages() == 2);
  CHECK(space.pruned.size() == 2);
}

TEST_CASE("sequence parallelism without tensor parallelism is pruned") {
  TempDir dir;
  auto space = expand_configurations(*load(dir, R"(cluster { instance: "aws.p4d.24xlarge" nodes: 1 }
sweep { tensor_parallel: [1, 2] sequence_parallel: [true] })"));
  REQUIRE(space.valid.size() == 1);
  CHECK(space.valid[0].parallelism.tensor_parallel() == 2);
  CHECK(space.pruned["sequence parallelism needs tensor parallel > 1"] == 1);
}

}  // namespace
}  // namespace clustersim
