// Skipping the periodic steady state of a pipeline: how far a repeated state may jump on a 1F1B
// schedule, and on whole plans (1F1B, interleaved, GPipe, blocking sends, ZeRO-3, with
// data-parallel reductions overlapped, sends contending for NICs) the step and every stage's
// times to the picosecond of the full simulation, the shortcut taken wherever a steady state
// exists.
#include "sim/parallel/steady_state_skip.h"

#include <catch2/catch.hpp>

#include "sim/parallel/pipeline_simulation.h"
#include "tests/testing/cluster.h"
#include "tests/testing/units.h"

namespace clustersim {
namespace {

using testing::ms;

PipelineCut cut_at(Picoseconds time, int micro_batch, std::vector<size_t> next_task) {
  StateFingerprint state(time);
  state.add(42);  // the same state at every cut
  std::vector<Picoseconds> busy(next_task.size(), time);
  std::vector<Picoseconds> stretch(next_task.size()), expert_wait(next_task.size());
  std::vector<size_t> furthest_task = next_task;
  return {std::move(state),         time,           micro_batch,        std::move(next_task),
          std::move(furthest_task), std::move(busy), std::move(stretch), std::move(expert_wait)};
}

TEST_CASE("a repeated state jumps whole periods, up to the last task that repeats") {
  // 1F1B on 2 stages, 10 micro-batches. Stage 0: F0, then F(j+1) B(j) for j < 9, then B9;
  // stage 1: F(j) B(j).
  const auto stage0 = stage_schedule(schema::ONE_F_ONE_B, 2, 1, 10, 0);
  const auto stage1 = stage_schedule(schema::ONE_F_ONE_B, 2, 1, 10, 1);
  const std::vector<char> flags(20, 0);
  SteadyStateSkip skip({{stage0, flags}, {stage1, flags}});
  CHECK_FALSE(skip.record(cut_at(Picoseconds(100), 2, {3, 2})).has_value());
  CHECK(skip.looking());
  // One period later: 2 tasks per stage, 1 micro-batch, 50 ps. From the first cut, the run
  // reads stage 0's tasks 3..5 in that period: they repeat shifted through task 17 (F9; task 19
  // is B9, not F10), so periods 2..7 are images of the first: 6 periods can be skipped from the
  // second cut, to stage 0's task 17.
  const std::optional<SteadyStateJump> jump = skip.record(cut_at(Picoseconds(150), 3, {5, 4}));
  REQUIRE(jump.has_value());
  CHECK(jump->periods == 6);
  CHECK(jump->tasks == 12);
  CHECK(jump->micro_batches == 6);
  CHECK(jump->time == Picoseconds(300));
  CHECK(jump->busy == std::vector<Picoseconds>{Picoseconds(300), Picoseconds(300)});
  CHECK_FALSE(skip.looking());
}

TEST_CASE("inputs held for tasks further on shorten the jump to where those still repeat") {
  // As above, but stage 0 holds an input of its task 4 past the next (a stage behind its
  // upstream): its pairs must repeat through task furthest + n a, so (14 - 1 - 4) / 2 = 4 periods.
  const auto stage0 = stage_schedule(schema::ONE_F_ONE_B, 2, 1, 10, 0);
  const auto stage1 = stage_schedule(schema::ONE_F_ONE_B, 2, 1, 10, 1);
  const std::vector<char> flags(20, 0);
  SteadyStateSkip skip({{stage0, flags}, {stage1, flags}});
  PipelineCut first = cut_at(Picoseconds(100), 2, {3, 2});
  first.furthest_task[0] = 7;
  CHECK_FALSE(skip.record(std::move(first)).has_value());
  PipelineCut second = cut_at(Picoseconds(150), 3, {5, 4});
  second.furthest_task[0] = 9;
  const std::optional<SteadyStateJump> jump = skip.record(std::move(second));
  REQUIRE(jump.has_value());
  CHECK(jump->periods == 4);
}

TEST_CASE("a gradient reduction that starts inside the steady state ends the jump before it") {
  const auto tasks = stage_schedule(schema::ONE_F_ONE_B, 1, 1, 10, 0);  // F(j) B(j)
  std::vector<char> flags(20, 0);
  flags[9] = 1;  // B4
  SteadyStateSkip skip({{tasks, flags}});
  skip.record(cut_at(Picoseconds(0), 0, {1}));
  const std::optional<SteadyStateJump> jump = skip.record(cut_at(Picoseconds(10), 1, {3}));
  REQUIRE(jump.has_value());
  // Task i + 2 is task i shifted for i = 1..6, not for 7 (B3, then the flagged B4): the periods
  // after the first that read only tasks up to 7 can be skipped, 2 of them.
  CHECK(jump->periods == 2);
}

TEST_CASE("different states never jump") {
  const auto tasks = stage_schedule(schema::ONE_F_ONE_B, 1, 1, 10, 0);
  const std::vector<char> flags(20, 0);
  SteadyStateSkip skip({{tasks, flags}});
  PipelineCut a = cut_at(Picoseconds(0), 0, {1}), b = cut_at(Picoseconds(10), 1, {3});
  b.state.add(1);
  CHECK_FALSE(skip.record(std::move(a)).has_value());
  CHECK_FALSE(skip.record(std::move(b)).has_value());
  PipelineCut c = cut_at(Picoseconds(20), 2, {5});
  c.state.make_incomparable();
  CHECK_FALSE(skip.record(std::move(c)).has_value());
}

struct Case {
  const char* what;
  const char* instance;
  const char* fabric;
  schema::PipelineSchedule schedule;
  int tp, pp, dp, chunks, micro_batches;
  bool zero3 = false;
  bool blocking_sends = false;
  bool skips = true;  // a steady state to skip
};

PipelinePlan plan_of(const Case& c) {
  PipelinePlan plan;
  plan.schedule = c.schedule;
  plan.stages = c.pp;
  plan.chunks = c.chunks;
  plan.micro_batches = c.micro_batches;
  plan.tensor_parallel = c.tp;
  plan.data_parallel = c.dp;
  // About as long on a NIC as a forward on the GPU: forward and backward sends of a stage share
  // its NIC, so they contend whenever they overlap.
  plan.activation_bytes = 48e6;
  plan.overlap_pipeline_communication = !c.blocking_sends;
  plan.shard_gradients = true;
  for (int r = 0; r < c.pp; ++r) {
    const double extra = r == c.pp - 1 ? 0.35 : r % 3 * 0.01;  // the last stage has the head
    StageWork w{ms((1 + extra) / c.chunks), ms((2.1 + 2 * extra) / c.chunks), ms(0.5)};
    w.gradient_bytes = 3e8;
    w.gradient_buckets = 4;
    w.parameter_gather_bytes = c.zero3 ? 0 : 1.5e8;
    if (c.zero3) w.zero3 = zero3_work(2, 5e7, 2, 5e7, 2);
    plan.work.push_back(w);
  }
  return plan;
}

TEST_CASE("skipping the steady state leaves the step and every stage's times as they are") {
  using schema::GPIPE, schema::INTERLEAVED_ONE_F_ONE_B, schema::ONE_F_ONE_B;
  const char* dgx = "onprem.dgx-a100-80gb";
  const char* rails = "ib-rail-optimized";
  for (const Case& c : {
           Case{"1F1B across nodes on rails", dgx, rails, ONE_F_ONE_B, 8, 8, 2, 1, 48},
           Case{"1F1B, two stages per node", dgx, rails, ONE_F_ONE_B, 4, 8, 2, 1, 40},
           Case{"1F1B in one node", "aws.p5.48xlarge", "", ONE_F_ONE_B, 1, 8, 1, 1, 32},
           Case{"1F1B with blocking sends", dgx, rails, ONE_F_ONE_B, 8, 4, 2, 1, 32, false, true},
           Case{"interleaved", dgx, rails, INTERLEAVED_ONE_F_ONE_B, 8, 4, 2, 2, 32},
           Case{"interleaved on one stage", dgx, rails, INTERLEAVED_ONE_F_ONE_B, 8, 1, 2, 2, 16},
           Case{"GPipe", dgx, rails, GPIPE, 8, 4, 2, 1, 32, false, false, false},
           Case{"ZeRO-3", dgx, rails, ONE_F_ONE_B, 8, 4, 2, 1, 32, true, false, false},
       }) {
    const int nodes = std::max(1, c.tp * c.pp * c.dp / 8);
    auto t = testing::shipped_cluster(c.instance, nodes, 0, c.fabric);
    const PipelinePlan plan = plan_of(c);
    for (bool one_rank_for_all : {true, false}) {
      INFO(c.what << (one_rank_for_all ? "" : ", every rank simulated"));
      const PipelineTimeline shortcut =
          simulate_pipeline(plan, *t, nullptr, {.one_rank_for_all = one_rank_for_all});
      const PipelineTimeline full = simulate_pipeline(
          plan, *t, nullptr, {.one_rank_for_all = one_rank_for_all, .skip_steady_state = false});
      CHECK(full.tasks_skipped == 0);
      CHECK((shortcut.tasks_skipped > 0) == c.skips);
      CHECK(shortcut.step == full.step);
      REQUIRE(shortcut.stages.size() == full.stages.size());
      for (size_t r = 0; r < full.stages.size(); ++r) {
        INFO("stage " << r);
        CHECK(shortcut.stages[r].busy == full.stages[r].busy);
        CHECK(shortcut.stages[r].last_backward_end == full.stages[r].last_backward_end);
        CHECK(shortcut.stages[r].gradients_reduced == full.stages[r].gradients_reduced);
        CHECK(shortcut.stages[r].parameter_wait == full.stages[r].parameter_wait);
        CHECK(shortcut.stages[r].end == full.stages[r].end);
      }
    }
  }
}

TEST_CASE("an interleaved stage far behind its upstream: the shortcut is the full run") {
  // Eight stages of 5 chunks (a pipeline across an H100 and an A100 pool): four of 3 ms a chunk's
  // forward, three of 2 ms, and a last one whose chunks after its first take 5 ms. Its upstream
  // runs ahead, so it holds inputs for tasks far beyond its next ones; the jump once moved those
  // past where the schedule repeats (a failed check at 16 micro-batches, a step of 0 at 64).
  auto t = testing::shipped_cluster("aws.p5.48xlarge", 1);
  for (int m : {16, 64}) {
    INFO(m << " micro-batches");
    PipelinePlan plan;
    plan.schedule = schema::INTERLEAVED_ONE_F_ONE_B;
    plan.stages = 8;
    plan.chunks = 5;
    plan.micro_batches = m;
    plan.activation_bytes = 1;
    for (int r = 0; r < 8; ++r) {
      StageWork w{Picoseconds(0), Picoseconds(0), Picoseconds(0)};
      for (int c = 0; c < 5; ++c) {
        const double f = r < 4 ? 3 : r < 7 || c == 0 ? 2 : 5;
        w.chunk_forward.push_back(ms(f));
        w.chunk_backward.push_back(ms(2 * f));
      }
      plan.work.push_back(w);
    }
    const PipelineTimeline shortcut = simulate_pipeline(plan, *t);
    const PipelineTimeline full =
        simulate_pipeline(plan, *t, nullptr, {.skip_steady_state = false});
    CHECK(full.step > Picoseconds(0));
    CHECK(shortcut.step == full.step);
    for (size_t r = 0; r < full.stages.size(); ++r) {
      INFO("stage " << r);
      CHECK(shortcut.stages[r].busy == full.stages[r].busy);
      CHECK(shortcut.stages[r].end == full.stages[r].end);
    }
  }
}

}  // namespace
}  // namespace clustersim
