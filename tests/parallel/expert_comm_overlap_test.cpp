// Megatron-Core's expert all-to-all overlap: the three phases of a combined layer against hand
// counts, the combined 1F1B order of Megatron-Core's docstring, and a pipeline of one stage whose
// step is its lone first forward, the combined steps and its lone last backward, and two stages
// whose combined steps wait for both inputs and send both outputs when they end.
#include "sim/parallel/expert_comm_overlap.h"

#include <catch2/catch.hpp>

#include "sim/parallel/pipeline_schedule.h"
#include "sim/parallel/pipeline_simulation.h"
#include "tests/testing/cluster.h"

namespace clustersim {
namespace {

Picoseconds us(int64_t n) { return Picoseconds::from_microseconds(static_cast<double>(n)); }

TEST_CASE("a combined layer hides all-to-alls shorter than the compute beside them") {
  // Every all-to-all 10 us, pre-dispatch 40 us, experts 30 us per pass; s = 0.1:
  // phase 1 max(10, 40 + 1) - 40 = 1; phase 2 max(20, 60 + 2) - 60 = 2; phase 3 as phase 1.
  const ExpertPassPhases pass{us(40), us(30), us(10), us(10)};
  CHECK(combined_exposed_all_to_all(pass, pass, 0.1) == us(4));
  CHECK(combined_exposed_all_to_all(pass, pass, 0.0) == Picoseconds());
}

TEST_CASE("a combined layer exposes what the all-to-alls outlast the compute by") {
  // All-to-alls 100 us, pre-dispatch 40, experts 30: (100 - 40) + (200 - 60) + (100 - 40) = 260 of
  // the 400 us alone; the SMs they take do not matter once they are the longer stream.
  const ExpertPassPhases pass{us(40), us(30), us(100), us(100)};
  CHECK(combined_exposed_all_to_all(pass, pass, 0.15) == us(260));
  // A long forward dispatch: phase 2 max(100 + 10, 5 + 30) - 35 = 75, the others hidden.
  const ExpertPassPhases f{us(40), us(30), us(100), us(10)}, b{us(40), us(5), us(10), us(10)};
  CHECK(combined_exposed_all_to_all(f, b, 0.0) == us(0 + 75 + 0));
}

TEST_CASE("the SMs an all-to-all takes slow only the compute that runs beside it") {
  // All-to-alls 100 us, pre-dispatch 90, experts 45 per pass. Beside 100 us of all-to-all the
  // compute loses s of its speed for those 100 us, so 90 us of it ends at max(100, 90 + 100 s):
  // phases 1 and 3 expose max(100, 90 + 100 s) - 90: 10 us up to s = 0.1, 100 s beyond (20 at
  // s = 0.2, about HybridEP's 32 of a GB200's 148 SMs; 50 at s = 0.5). Phase 2's 200 us of
  // dispatches outlast the 90 us of experts at any s below 0.55: 110.
  const ExpertPassPhases pass{us(90), us(45), us(100), us(100)};
  CHECK(combined_exposed_all_to_all(pass, pass, 0.1) == us(10 + 110 + 10));
  CHECK(combined_exposed_all_to_all(pass, pass, 0.2) == us(20 + 110 + 20));
  CHECK(combined_exposed_all_to_all(pass, pass, 0.5) == us(50 + 110 + 50));
}

TEST_CASE("the all-to-alls take NCCL's 32 CTAs, DeepEP's 20 SMs, or the scenario's count") {
  schema::Gpu h100, b200, npu;
  h100.set_streaming_multiprocessors(132);
  b200.set_streaming_multiprocessors(148);
  schema::Parallelism p;
  // Megatron-Core's alltoall dispatcher: NCCL's all-to-all on its 32 p2p channels, a CTA each.
  CHECK(expert_communication_sm_share(p, h100) == Approx(32.0 / 132));
  p.set_expert_dispatcher(schema::EXPERT_ALL_TO_ALL);
  CHECK(expert_communication_sm_share(p, b200) == Approx(32.0 / 148));
  // The flex dispatcher without a count: Megatron-Core's DeepEP default.
  p.set_expert_dispatcher(schema::EXPERT_NODE_DEDUPLICATED);
  CHECK(expert_communication_sm_share(p, h100) == Approx(20.0 / 132));
  CHECK(expert_communication_sm_share(p, b200) == Approx(20.0 / 148));
  CHECK(expert_communication_sm_share(p, npu) == 0);  // no CUDA SMs
  p.set_expert_communication_sms(32);  // HybridEP's, as Megatron-Bridge's recipes set it
  CHECK(expert_communication_sm_share(p, b200) == Approx(32.0 / 148));
  CHECK(expert_communication_sm_share(p, h100) == Approx(32.0 / 132));
}

TEST_CASE("combined 1F1B without a pipeline runs the first forward and the last backward alone") {
  // combined_1f1b_schedule_for_no_pipelining, 4 micro-batches: F1 | B1 F2 | B2 F3 | B3 F4 | B4.
  const auto tasks = stage_schedule(schema::ONE_F_ONE_B, 1, 1, 4, 0, true);
  REQUIRE(tasks.size() == 8);
  CHECK((tasks[0].forward && !tasks[0].combined && tasks[0].micro_batch == 0));
  for (int i = 1; i < 7; ++i) CHECK(tasks[i].combined);
  CHECK((tasks[1].forward && tasks[1].micro_batch == 1));
  CHECK((!tasks[2].forward && tasks[2].micro_batch == 0));
  CHECK((!tasks[7].forward && !tasks[7].combined && tasks[7].micro_batch == 3));
}

TEST_CASE("interleaved combined 1F1B runs one more warm-up forward, none of them combined") {
  // Stage 0 of 4, 2 chunks, 8 micro-batches: 2 (4 - 1) + (2 - 1) 4 + 1 = 11 warm-up forwards.
  const auto tasks = stage_schedule(schema::INTERLEAVED_ONE_F_ONE_B, 4, 2, 8, 0, true);
  for (int i = 0; i < 11; ++i) CHECK((tasks[i].forward && !tasks[i].combined));
  CHECK(tasks[11].combined);
  const auto plain = stage_schedule(schema::INTERLEAVED_ONE_F_ONE_B, 4, 2, 8, 0);
  CHECK((plain[10].forward && !plain[11].forward && !plain[10].combined));
}

TEST_CASE("a stage with the overlap takes F + (m - 1)(F' + B') + B") {
  // One stage, 6 micro-batches, F = 3 ms, B = 5 ms alone, F' = 2 ms and B' = 4 ms combined:
  // 3 + 5 x 6 + 5 = 38 ms.
  auto cluster = testing::shipped_cluster("aws.p5.48xlarge", 1);
  PipelinePlan plan;
  plan.micro_batches = 6;
  plan.overlap_expert_communication = true;
  StageWork w{us(3000), us(5000), Picoseconds(0)};
  w.chunk_forward = {us(3000)};
  w.chunk_backward = {us(5000)};
  w.combined_forward = {us(2000)};
  w.combined_backward = {us(4000)};
  plan.work = {w};
  CHECK(simulate_pipeline(plan, *cluster).step == us(38000));
}

TEST_CASE("a combined step waits for both its passes' inputs and sends both outputs at its end") {
  // 2 stages of 1F1B, 3 micro-batches, F = 1 ms and B = 2 ms alone or combined. Stage 0 runs
  // F0 F1 | F2 B0 | B1 B2, stage 1 F0 | F1 B0 | F2 B1 | B2. Stage 0's combined F2 waits for B0's
  // gradient (at 5 ms), so F2 B0 run 5-8 and send F2's output at 8 (Megatron-Core's post_forward
  // comes after both passes' layers); stage 1's F2 B1 run 8-11 and B2 11-13, stage 0's B1 11-13
  // and B2 13-15: 15 ms, plus the transfers' ~1 us (13 if F2's output left at its end, 6 ms; 12
  // if F2 also ran as soon as its own input was there).
  auto cluster = testing::shipped_cluster("aws.p5.48xlarge", 1);
  PipelinePlan plan;
  plan.stages = 2;
  plan.micro_batches = 3;
  plan.activation_bytes = 1;
  plan.overlap_expert_communication = true;
  StageWork w{us(1000), us(2000), Picoseconds(0)};
  w.chunk_forward = w.combined_forward = {us(1000)};
  w.chunk_backward = w.combined_backward = {us(2000)};
  plan.work = {w, w};
  CHECK(simulate_pipeline(plan, *cluster).step.seconds() == Approx(15e-3).epsilon(1e-3));
}

}  // namespace
}  // namespace clustersim
