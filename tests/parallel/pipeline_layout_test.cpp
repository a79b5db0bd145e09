// Tests of Megatron-Core's pipeline layouts: even, first/last-stage layer counts, the embedding and
// loss counted as layers, and layers listed per stage or per model chunk; and why a layout cannot
// be built.
#include "sim/parallel/pipeline_layout.h"

#include <catch2/catch.hpp>

#include "tests/testing/parse_message.h"

namespace clustersim {
namespace {

namespace s = schema;

s::Parallelism plan(const std::string& text) {
  s::Parallelism p = testing::parse_message<s::Parallelism>("schedule: ONE_F_ONE_B virtual_stages: 1");
  p.MergeFrom(testing::parse_message<s::Parallelism>(text));
  return p;
}

TEST_CASE("Llama 3.1 405B: 126 layers + embedding + loss on 8 stages x 8 chunks, 2 each") {
  const s::Parallelism p = plan(
      "pipeline_parallel: 8 schedule: INTERLEAVED_ONE_F_ONE_B virtual_stages: 8 "
      "embedding_in_pipeline_split: true loss_in_pipeline_split: true");
  REQUIRE(pipeline_layout_problem(126, p).empty());
  const PipelineLayout layout = pipeline_layout(126, p);
  CHECK(layout.layers[0][0] == 1);  // the embedding takes a layer's place
  CHECK(layout.layers[7][7] == 1);  // the loss too
  CHECK(layout.layers[3][4] == 2);
  CHECK(layout.stage_layers(0) == 15);
  CHECK(layout.stage_layers(7) == 15);
  CHECK(layout.stage_layers(1) == 16);
  int total = 0;
  for (int r = 0; r < 8; ++r) total += layout.stage_layers(r);
  CHECK(total == 126);
  // Without the accounting 126 layers do not split over 64 chunks.
  CHECK(pipeline_layout_problem(126, plan("pipeline_parallel: 8 schedule: "
                                          "INTERLEAVED_ONE_F_ONE_B virtual_stages: 8")) ==
        "126 layers do not split evenly over 64 model chunks");
}

TEST_CASE("first- and last-stage layer counts leave the rest even over the other stages") {
  const PipelineLayout layout =
      pipeline_layout(126, plan("pipeline_parallel: 8 first_stage_layers: 14 last_stage_layers: 16"));
  CHECK(layout.stage_layers(0) == 14);
  CHECK(layout.stage_layers(7) == 16);
  for (int r = 1; r < 7; ++r) CHECK(layout.stage_layers(r) == 16);
  CHECK(pipeline_layout_problem(126, plan("pipeline_parallel: 8 first_stage_layers: 13")) ==
        "the 113 layers left after the first and last stages do not split evenly over the other "
        "7 stages");
  CHECK(pipeline_layout_problem(126, plan("pipeline_parallel: 8 first_stage_layers: 130")) ==
        "first and last stage layers (130) exceed the model's 126 layers");
  CHECK(pipeline_layout_problem(32, plan("pipeline_parallel: 4 first_stage_layers: 8 "
                                         "embedding_in_pipeline_split: true")) ==
        "first/last stage layer counts and embedding/loss in the pipeline split exclude each "
        "other");
}

TEST_CASE("plain 1F1B splits layers unevenly, the first stages taking one more") {
  const PipelineLayout layout = pipeline_layout(30, plan("pipeline_parallel: 4"));
  CHECK(layout.layers == std::vector<std::vector<int>>{{8}, {8}, {7}, {7}});
}

TEST_CASE("DeepSeek-V3 listed per model chunk: 61 layers on 4 stages x 4 chunks, 1 in the last") {
  // Megatron-Bridge's "Et*4|(t*4|)*14tmL": virtual stage i = chunk i / 4 of stage i % 4, so the
  // last stage's chunks hold 4 + 4 + 4 + 1 = 13 layers, which no per-stage count divides into 4.
  std::string listed = "pipeline_parallel: 4 schedule: INTERLEAVED_ONE_F_ONE_B virtual_stages: 4";
  for (int i = 0; i < 16; ++i) listed += i < 15 ? " stage_layers: 4" : " stage_layers: 1";
  const s::Parallelism p = plan(listed);
  REQUIRE(pipeline_layout_problem(61, p).empty());
  const PipelineLayout layout = pipeline_layout(61, p);
  CHECK(layout.layers[3] == std::vector<int>{4, 4, 4, 1});
  CHECK(layout.layers[0] == std::vector<int>{4, 4, 4, 4});
  CHECK(layout.stage_layers(3) == 13);
  CHECK(layout.first_layer(3, 3) == 60);  // the last chunk holds the model's last layer
  // A chunk may hold no layer (the H100 recipe's last "mL"), a stage may not.
  std::string empty_stage =
      "pipeline_parallel: 2 schedule: INTERLEAVED_ONE_F_ONE_B virtual_stages: 2";
  for (int n : {30, 0, 31, 0}) empty_stage += " stage_layers: " + std::to_string(n);
  CHECK(pipeline_layout_problem(61, plan(empty_stage)) == "every stage needs at least 1 layer");
  std::string wrong_sum =
      "pipeline_parallel: 2 schedule: INTERLEAVED_ONE_F_ONE_B virtual_stages: 2";
  for (int n : {30, 1, 29, 0}) wrong_sum += " stage_layers: " + std::to_string(n);
  CHECK(pipeline_layout_problem(61, plan(wrong_sum)) ==
        "the stages' 60 layers differ from the model's 61");
  CHECK(pipeline_layout_problem(61, plan("pipeline_parallel: 2 schedule: INTERLEAVED_ONE_F_ONE_B "
                                         "virtual_stages: 2 stage_layers: [30, 1, 30]")) ==
        "3 stage layer counts for 2 stages (or 4 model chunks)");
}

}  // namespace
}  // namespace clustersim
