// Tests of the evaluation of several configurations: the fastest that fits is the one a tuned run
// would have chosen.
#include "sim/sweep/evaluation.h"

#include <catch2/catch.hpp>

#include "tests/testing/scenario_text.h"
#include "tests/testing/shipped_catalog.h"
#include "tests/testing/temp_dir.h"

namespace clustersim {
namespace {

using testing::load_valid_scenario;

TEST_CASE("the fastest configuration that fits is chosen, skipping those that do not fit") {
  const testing::TempDir dir;
  // A 7.5B model data-parallel on 8 A100s: micro-batches from 1 to 64 (the largest do not fit).
  const auto loaded = load_valid_scenario(dir, R"(name: "tuned" model: "gpt-7.5b"
job { global_batch_size: 512 sequence_length: 2048 precision: BF16 optimizer: ADAM steps: 1 }
cluster { instance: "aws.p4de.24xlarge" nodes: 1 }
parallelism { tensor_parallel: 2 distributed_optimizer: true }
sweep { micro_batch_size: [1, 2, 4, 8, 16, 32, 64] })");
  const ExpandedConfigurations space = expand_configurations(*loaded);
  REQUIRE(space.valid.size() == 7);
  Evaluator evaluator(testing::shipped_catalog(), *loaded);
  const FastestEvaluation fastest = evaluate_fastest(space.valid, &evaluator);
  REQUIRE(fastest.configuration != nullptr);
  REQUIRE(fastest.evaluation.step);
  int out_of_memory = 0;
  for (const Configuration& c : space.valid) {
    const Evaluation e = evaluator.evaluate(c);
    if (!e.step) {
      ++out_of_memory;
      continue;
    }
    CHECK(fastest.evaluation.step->step_s <= e.step->step_s);
    if (&c == fastest.configuration) CHECK(e.step->step_s == fastest.evaluation.step->step_s);
  }
  CHECK(out_of_memory > 0);
  CHECK(fastest.configuration != &space.valid.front());
}

TEST_CASE("a job on half of a node's GPUs runs on half of them: twice the work per GPU") {
  const testing::TempDir dir;
  auto step_s = [&](const std::string& gpus_per_node) {
    const auto loaded = load_valid_scenario(dir, R"(name: "half" model: "gpt-1.7b"
job { global_batch_size: 64 sequence_length: 2048 precision: BF16 optimizer: ADAM steps: 1 }
cluster { instance: "aws.p4de.24xlarge" nodes: 1 )" + gpus_per_node +
                                                     " }");
    const ExpandedConfigurations space = expand_configurations(*loaded);
    REQUIRE(space.valid.size() == 1);
    Evaluator evaluator(testing::shipped_catalog(), *loaded);
    const Evaluation e = evaluator.evaluate(space.valid.front());
    REQUIRE(e.step);
    return e.step->step_s;
  };
  const double all = step_s(""), half = step_s("gpus_per_node: 4");
  CHECK(half / all == Approx(2).epsilon(0.1));
}

TEST_CASE("when no configuration fits, there is no fastest and the first one's memory is given") {
  const testing::TempDir dir;
  const auto loaded = load_valid_scenario(dir, R"(name: "gpt3-oom" model: "gpt3-175b"
job { global_batch_size: 1536 sequence_length: 2048 precision: BF16 optimizer: ADAM steps: 1 }
cluster { instance: "aws.p4de.24xlarge" nodes: 1 }
sweep { micro_batch_size: [1, 2] })");
  const ExpandedConfigurations space = expand_configurations(*loaded);
  Evaluator evaluator(testing::shipped_catalog(), *loaded);
  const FastestEvaluation fastest = evaluate_fastest(space.valid, &evaluator);
  CHECK(fastest.configuration == nullptr);
  CHECK_FALSE(fastest.evaluation.step);
  CHECK_FALSE(fastest.evaluation.memory.fits());
}

}  // namespace
}  // namespace clustersim
