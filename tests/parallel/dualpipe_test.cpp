// DualPipe and DualPipeV on the engine: their task orders against the source's rules, their
// bubbles and activations against the DeepSeek-V3 report's closed forms (arXiv:2412.19437
// Table 2; deepseek-ai/DualPipe@3da1bbe README table), their layouts and memory.
#include "sim/parallel/dualpipe_schedule.h"

#include <catch2/catch.hpp>
#include <set>
#include <tuple>

#include "sim/parallel/memory_model.h"
#include "sim/parallel/pipeline_layout.h"
#include "sim/parallel/pipeline_simulation.h"
#include "tests/testing/cluster.h"
#include "tests/testing/parse_message.h"
#include "tests/testing/shipped_catalog.h"
#include "tests/testing/units.h"

namespace clustersim {
namespace {

using testing::ms;

using schema::DUALPIPE, schema::DUALPIPE_V;

TEST_CASE("DualPipe runs each direction's micro-batches once through both chunks of a stage") {
  for (auto [p, m] : {std::pair{2, 4}, std::pair{4, 8}, std::pair{8, 20}, std::pair{16, 32}}) {
    for (int r = 0; r < p; ++r) {
      INFO("p " << p << " m " << m << " stage " << r);
      const std::vector<PipelineTask> tasks = dualpipe_schedule(DUALPIPE, p, m, r);
      std::set<std::tuple<int, int, int>> seen;  // (pass, chunk, micro-batch)
      std::set<std::pair<int, int>> awaiting_weight;
      int pairs = 0;
      for (size_t i = 0; i < tasks.size(); ++i) {
        const PipelineTask& t = tasks[i];
        const int pass = t.forward ? 0 : t.weight_only ? 2 : 1;
        CHECK(seen.insert({pass, t.chunk, t.micro_batch}).second);
        CHECK(t.micro_batch < m / 2);
        if (!t.forward && !t.weight_only) CHECK(seen.count({0, t.chunk, t.micro_batch}) == 1);
        if (t.input_only) awaiting_weight.insert({t.chunk, t.micro_batch});
        if (t.weight_only) CHECK(awaiting_weight.erase({t.chunk, t.micro_batch}) == 1);
        if (t.combined && t.forward) {
          ++pairs;
          REQUIRE(i + 1 < tasks.size());
          CHECK((tasks[i + 1].combined && !tasks[i + 1].forward));
          CHECK(tasks[i + 1].chunk != t.chunk);
        }
      }
      CHECK(awaiting_weight.empty());
      int forwards = 0, backwards = 0;
      for (const PipelineTask& t : tasks) (t.forward ? forwards : backwards) += !t.weight_only;
      CHECK(forwards == m);
      CHECK(backwards == m);
      // Steps 4 and 5: 2 (m / 2 - p + h + 1) + (p / 2 - h - 1) pairs, one fewer on the middle
      // stages (their first runs apart).
      const int h = std::min(r, p - 1 - r);
      const bool middle = h == p / 2 - 1;
      CHECK(pairs == 2 * (m / 2 - p + h + 1) + (p / 2 - h - 1) - (middle ? 1 : 0));
    }
  }
}

TEST_CASE("DualPipeV runs every micro-batch down through the chunks 0 and back through the 1") {
  for (auto [p, m] : {std::pair{1, 2}, std::pair{3, 7}, std::pair{4, 8}, std::pair{8, 20}}) {
    for (int r = 0; r < p; ++r) {
      INFO("p " << p << " m " << m << " stage " << r);
      int forwards[2] = {0, 0}, backwards[2] = {0, 0}, deferred = 0;
      for (const PipelineTask& t : dualpipe_schedule(DUALPIPE_V, p, m, r)) {
        if (t.forward) CHECK(t.micro_batch == forwards[t.chunk]++);
        if (!t.forward && !t.weight_only) CHECK(t.micro_batch == backwards[t.chunk]++);
        deferred += t.input_only ? 1 : t.weight_only ? -1 : 0;
      }
      CHECK(forwards[0] == m);
      CHECK(forwards[1] == m);
      CHECK(backwards[0] == m);
      CHECK(backwards[1] == m);
      CHECK(deferred == 0);
    }
  }
}

TEST_CASE("DualPipe's bad stage and micro-batch counts are named") {
  CHECK(dualpipe_problem(DUALPIPE, 4, 8).empty());
  const std::string stages = "DUALPIPE needs an even pipeline parallel of at least 2";
  CHECK(dualpipe_problem(DUALPIPE, 3, 8) == stages);
  CHECK(dualpipe_problem(DUALPIPE, 1, 8) == stages);
  const std::string batches =
      "DUALPIPE needs an even number of micro-batches per replica, at least 2 x pipeline "
      "parallel";
  CHECK(dualpipe_problem(DUALPIPE, 4, 6) == batches);
  CHECK(dualpipe_problem(DUALPIPE, 4, 9) == batches);
  CHECK(dualpipe_problem(DUALPIPE, 2, 4).empty());
  // DualPipeV asserts the count only: an odd one, on any number of stages, runs.
  CHECK(dualpipe_problem(DUALPIPE_V, 3, 7).empty());
  CHECK(dualpipe_problem(DUALPIPE_V, 4, 7) ==
        "DUALPIPE_V needs at least 2 x pipeline parallel micro-batches per replica");
}

// A DualPipe plan of `p` stages with uniform chunks: forward f, backward b of which w is the
// weight gradient, and, when `pair_f` / `pair_b` are positive, the overlapped halves of a pair.
PipelinePlan dualpipe_plan(int p, int m, double f, double b, double w, double pair_f = 0,
                           double pair_b = 0, schema::PipelineSchedule schedule = DUALPIPE) {
  PipelinePlan plan;
  plan.schedule = schedule;
  plan.stages = p;
  plan.chunks = 2;
  plan.micro_batches = m;
  plan.activation_bytes = 1;  // transfers cost only their ~1 us latency
  StageWork work{ms(f), ms(b), Picoseconds(0)};
  work.chunk_weight_gradient = {ms(w), ms(w)};
  if (pair_f > 0) {
    plan.overlap_expert_communication = true;
    work.combined_forward = {ms(pair_f), ms(pair_f)};
    work.combined_backward = {ms(pair_b), ms(pair_b)};
  }
  plan.work.assign(p, work);
  return plan;
}

// The paper's bubble is the middle stages' idle time, the longest: (p/2 - 1)(F&B + B - 3W), with
// the input gradient as long as the forward (B - W = F, as the report's Figure 5 draws it). The
// step is then m (F + B) of work on a stage plus that, against 1F1B's (p - 1)(F + B).
TEST_CASE("DualPipe's bubble on the engine is (p/2 - 1)(F&B + B - 3W) (DeepSeek-V3 Table 2)") {
  auto t = testing::shipped_cluster("aws.p5.48xlarge", 2);
  struct Case {
    int p, m;
    double f, b, w, pair_f, pair_b;
  };
  for (const Case& c : {Case{4, 8, 10, 20, 10, 0, 0}, Case{8, 16, 20, 30, 10, 0, 0},
                        Case{8, 24, 10, 20, 10, 0, 0}, Case{16, 40, 10, 20, 10, 0, 0},
                        Case{8, 16, 10, 20, 10, 8, 16}, Case{16, 32, 20, 30, 10, 15, 25}}) {
    INFO("p " << c.p << " m " << c.m << " F " << c.f << " B " << c.b << " W " << c.w);
    const PipelineTimeline run = simulate_pipeline(
        dualpipe_plan(c.p, c.m, c.f, c.b, c.w, c.pair_f, c.pair_b), *t);
    const double both = c.pair_f > 0 ? c.pair_f + c.pair_b : c.f + c.b;
    const double bubble = (c.p / 2 - 1) * (both + c.b - 3 * c.w);
    const double step = run.step.seconds() * 1e3;
    const double middle_busy = run.stages[c.p / 2].busy.seconds() * 1e3;
    // Sends' latencies aside: about 1 us each inside a node, tens of us across the two nodes
    // that 16 stages span, on the critical path a few tens of them (under 1% of the bubble).
    CHECK(step - middle_busy == Approx(bubble).epsilon(0.01));
    CHECK(step - middle_busy >= bubble);
    if (c.pair_f == 0) {
      CHECK(step == Approx(c.m * (c.f + c.b) + bubble).epsilon(0.001));
      CHECK(bubble < (c.p - 1) * (c.f + c.b));
    }
  }
}

TEST_CASE("DualPipe with two stages has no bubble, and without a weight split none is deferred") {
  auto t = testing::shipped_cluster("aws.p5.48xlarge", 2);
  const PipelineTimeline two = simulate_pipeline(dualpipe_plan(2, 8, 10, 20, 10), *t);
  CHECK(two.step.seconds() * 1e3 == Approx(8 * 30).margin(0.05));
  // W = 0 (B = F): the input-gradient passes are whole backwards and the weight tasks take
  // nothing; the bubble (p/2 - 1)(F + 2B).
  const PipelineTimeline whole = simulate_pipeline(dualpipe_plan(4, 8, 10, 10, 0), *t);
  CHECK(whole.step.seconds() * 1e3 == Approx(8 * 20 + (4 / 2 - 1) * (10 + 2 * 10)).margin(0.1));
}

// DualPipeV's PP of the table is its pieces, 2 x stages: the same bubble on half the GPUs.
TEST_CASE("DualPipeV's bubble on the engine is (pieces/2 - 1)(F&B + B - 3W)") {
  auto t = testing::shipped_cluster("aws.p5.48xlarge", 1);
  struct Case {
    int p, m;
    double f, b, w, pair_f, pair_b;
  };
  for (const Case& c : {Case{4, 8, 10, 20, 10, 0, 0}, Case{3, 7, 20, 30, 10, 0, 0},
                        Case{8, 20, 10, 20, 10, 8, 16}, Case{1, 2, 10, 20, 10, 0, 0}}) {
    INFO("p " << c.p << " m " << c.m << " F " << c.f << " B " << c.b << " W " << c.w);
    const PipelineTimeline run = simulate_pipeline(
        dualpipe_plan(c.p, c.m, c.f, c.b, c.w, c.pair_f, c.pair_b, DUALPIPE_V), *t);
    const double both = c.pair_f > 0 ? c.pair_f + c.pair_b : c.f + c.b;
    const double bubble = (c.p - 1) * (both + c.b - 3 * c.w);
    const double step = run.step.seconds() * 1e3;
    CHECK(step - run.stages[c.p - 1].busy.seconds() * 1e3 == Approx(bubble).margin(0.1));
    if (c.pair_f == 0) CHECK(step == Approx(2 * c.m * (c.f + c.b) + bubble).margin(0.1));
  }
}

TEST_CASE("DualPipe(V) holds PP + 1 chunks' activations on every stage (DeepSeek-V3 Table 2)") {
  for (auto [p, m] : {std::pair{2, 4}, std::pair{4, 8}, std::pair{8, 40}, std::pair{16, 120}}) {
    for (int r = 0; r < p; ++r) {
      INFO("p " << p << " m " << m << " stage " << r);
      CHECK(dualpipe_chunks_in_flight(DUALPIPE, p, m, r) == p + 1);
      CHECK(dualpipe_chunks_in_flight(DUALPIPE_V, p, m, r) == 2 * p + 1);
    }
  }
}

schema::Parallelism dualpipe_parallelism(int pp, const std::string& schedule) {
  return testing::parse_message<schema::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: " + std::to_string(pp) +
      " data_parallel: 1 micro_batch_size: 1 virtual_stages: 1 zero_stage: 0 schedule: " +
      schedule + " recompute: RECOMPUTE_NONE");
}

TEST_CASE("DualPipe's stage r holds pieces r and PP - 1 - r, the ends both embedding and head") {
  // 10 layers on 4 stages: pieces of 3, 3, 2, 2 layers (the first 10 % 4 take one more).
  const PipelineLayout layout = pipeline_layout(10, dualpipe_parallelism(4, "DUALPIPE"));
  REQUIRE(layout.stages() == 4);
  REQUIRE(layout.chunks() == 2);
  CHECK(layout.layers[0] == std::vector<int>{3, 2});
  CHECK(layout.layers[1] == std::vector<int>{3, 2});
  CHECK(layout.layers[3] == std::vector<int>{2, 3});
  CHECK(layout.first_layer(0, 1) == 8);  // piece 3
  CHECK(layout.first_layer(1, 0) == 3);  // piece 1
  CHECK(layout.first_layer(2, 1) == 3);  // piece 1
  CHECK(layout.holds_embedding(0, 0));
  CHECK(layout.holds_output(0, 1));
  CHECK(layout.holds_embedding(3, 1));
  CHECK(layout.holds_output(3, 0));
  CHECK(!layout.stage_holds_embedding(1));
  CHECK(!layout.stage_holds_output(2));
  // DualPipeV on 2 stages: 4 pieces of 3, 3, 2, 2; stage 0 holds pieces 0 and 3, both ends.
  const PipelineLayout v = pipeline_layout(10, dualpipe_parallelism(2, "DUALPIPE_V"));
  REQUIRE(v.stages() == 2);
  CHECK(v.layers[0] == std::vector<int>{3, 2});
  CHECK(v.layers[1] == std::vector<int>{3, 2});
  CHECK(v.first_layer(1, 1) == 6);  // piece 2
  CHECK(v.first_layer(0, 1) == 8);  // piece 3
  CHECK((v.holds_embedding(0, 0) && v.holds_output(0, 1)));
  CHECK(!v.stage_holds_embedding(1));
  CHECK(!v.stage_holds_output(1));
}

TEST_CASE("DualPipe's stages hold twice 1F1B's parameters and PP + 1 micro-batches' activations") {
  // Llama 2 7B (32 layers) on 4 stages, 16 micro-batches: DualPipe's stage r holds 1F1B's stages
  // r and 3 - r; 1F1B's stage 0 holds 4 micro-batches of its 8 layers' activations, DualPipe's
  // 5 chunks of 8 layers.
  const schema::Model model = testing::shipped_model("llama2-7b");
  const auto job = testing::parse_message<schema::TrainingJob>(
      "global_batch_size: 16 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 1");
  const schema::Parallelism one = dualpipe_parallelism(4, "ONE_F_ONE_B");
  const schema::Parallelism dual = dualpipe_parallelism(4, "DUALPIPE");
  // One layer's activations of one micro-batch: 1F1B's stage 0 holds 4 micro-batches of 8.
  const double layer =
      estimate_stage_memory(model, job, one, 0, 1e15, {}).activations_bytes / (4 * 8);
  for (int r = 0; r < 4; ++r) {
    INFO("stage " << r);
    const MemoryEstimate d = estimate_stage_memory(model, job, dual, r, 1e15, {});
    const MemoryEstimate a = estimate_stage_memory(model, job, one, r, 1e15, {});
    const MemoryEstimate b = estimate_stage_memory(model, job, one, 3 - r, 1e15, {});
    CHECK(d.weights_bytes == Approx(a.weights_bytes + b.weights_bytes));
    CHECK(d.optimizer_bytes == Approx(a.optimizer_bytes + b.optimizer_bytes));
    CHECK(d.layers == 16);
    CHECK(d.activations_bytes == Approx(5 * 8 * layer));
  }
}

TEST_CASE("DualPipe's end stages share the embedding with the multi-token-prediction module") {
  // DeepSeek-V3 (arXiv:2412.19437 section 3.2.3): the embedding and the output head on the same
  // rank serve the MTP module as well. Llama 2 7B with one MTP module on 4 stages: DualPipe's
  // stage 0 holds 1F1B's stages 0 and 3 less the copy of the embedding 1F1B's last stage keeps
  // for the module, vocabulary x hidden 16-bit weights and fp32 gradients; the middle stages
  // hold no embedding and no copy.
  schema::Model model = testing::shipped_model("llama2-7b");
  model.mutable_transformer()->set_multi_token_prediction_layers(1);
  const auto job = testing::parse_message<schema::TrainingJob>(
      "global_batch_size: 16 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 1");
  const schema::Parallelism one = dualpipe_parallelism(4, "ONE_F_ONE_B");
  const schema::Parallelism dual = dualpipe_parallelism(4, "DUALPIPE");
  const double copy = static_cast<double>(model.transformer().vocab_size()) *
                      model.transformer().hidden_size();
  for (int r : {0, 3}) {
    INFO("stage " << r);
    const MemoryEstimate d = estimate_stage_memory(model, job, dual, r, 1e15, {});
    const MemoryEstimate a = estimate_stage_memory(model, job, one, 0, 1e15, {});
    const MemoryEstimate b = estimate_stage_memory(model, job, one, 3, 1e15, {});
    CHECK(d.weights_bytes == Approx(a.weights_bytes + b.weights_bytes - 2 * copy));
    CHECK(d.gradients_bytes == Approx(a.gradients_bytes + b.gradients_bytes - 4 * copy));
  }
  const auto weights = [&](const schema::Parallelism& p, int r) {
    return estimate_stage_memory(model, job, p, r, 1e15, {}).weights_bytes;
  };
  CHECK(weights(dual, 1) == Approx(weights(one, 1) + weights(one, 2)));
}

}  // namespace
}  // namespace clustersim
