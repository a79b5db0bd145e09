// Tests of expert-parallel groups (Megatron-Core's expert rank order) and their problems.
#include "sim/parallel/expert_parallel.h"

#include <catch2/catch.hpp>

#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

using testing::shipped_model;

TEST_CASE("expert-parallel groups take every ETP-th rank, replicas every ETP x EP-th") {
  // A stage of TP 2 x DP 4 = 8 GPUs, EP 4: rank r = ep + 4 edp.
  const ExpertLayout ep4{1, 4, 8};
  CHECK(ep4.expert_data_parallel() == 2);
  CHECK(expert_parallel_group(ep4, 5) == std::vector<int>{4, 5, 6, 7});
  CHECK(expert_data_parallel_group(ep4, 5) == std::vector<int>{1, 5});
  // ETP 2 x EP 2: r = etp + 2 (ep + 2 edp); rank 5 is etp 1, ep 0, edp 1.
  const ExpertLayout etp2{2, 2, 8};
  CHECK(expert_parallel_group(etp2, 5) == std::vector<int>{5, 7});
  CHECK(expert_data_parallel_group(etp2, 5) == std::vector<int>{1, 5});
  // Every rank is in exactly one EP group with each of its EP partners.
  for (int r = 0; r < 8; ++r) {
    for (int other : expert_parallel_group(etp2, r)) {
      CHECK(expert_parallel_group(etp2, other) == expert_parallel_group(etp2, r));
    }
  }
}

TEST_CASE("expert degrees that do not fit the stage or the model are explained") {
  CHECK(expert_layout_problem({2, 8, 8}) ==
        "expert tensor x expert parallel (16) does not divide the 8 GPUs of a pipeline stage "
        "(tensor x data parallel)");
  CHECK(expert_layout_problem({1, 8, 16}).empty());
  CHECK(expert_parallel_problem(3, &shipped_model("mixtral-8x7b")) ==
        "3 does not divide the model's num_experts (8)");
  CHECK(expert_parallel_problem(8, &shipped_model("mixtral-8x7b")).empty());
  CHECK(expert_parallel_problem(2, &shipped_model("llama2-7b")) ==
        "expert parallelism needs a model with experts (moe)");
  // Qwen3-30B-A3B's experts are 768 wide.
  CHECK(expert_tensor_parallel_problem(5, &shipped_model("qwen3-30b-a3b")) ==
        "5 does not divide the experts' FFN width (768)");
  CHECK(expert_tensor_parallel_problem(4, &shipped_model("qwen3-30b-a3b")).empty());
}

}  // namespace
}  // namespace clustersim
