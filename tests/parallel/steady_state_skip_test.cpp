// Skipping the periodic steady state of a pipeline: how far a repeated state may jump on a 1F1B
// schedule, and on whole plans (1F1B, interleaved, GPipe, blocking sends, ZeRO-3, with
// data-parallel reductions overlapped, sends contending for NICs) the step and every stage's
// times to the picosecond of the full simulation, the shortcut taken wherever a steady state
// exists; the same on 240 random plans of unequal stages and chunks (pipelines across pools
// and interleaved stages far behind their upstream among them), and on random ZeRO-3 plans.
#include "sim/parallel/steady_state_skip.h"

#include <catch2/catch.hpp>

#include "sim/net/inter_pool_topology.h"
#include "sim/net/topology_builder.h"
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
  std::vector<Picoseconds> expert_scale_out(next_task.size());
  std::vector<size_t> furthest_task = next_task;
  return {std::move(state),         time,           micro_batch,        std::move(next_task),
          std::move(furthest_task), std::move(busy), std::move(stretch), std::move(expert_wait),
          std::move(expert_scale_out)};
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

// A fixed xorshift64 stream, so the random plans are the same on every platform.
struct PlanDice {
  uint64_t state;
  uint64_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
  int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
  double unit() { return static_cast<double>(next() >> 11) / 9007199254740992.0; }
  bool one_in(int n) { return below(n) == 0; }
};

// `a_nodes` p5.48xlarge then `b_nodes` p4d.24xlarge meeting over their slowest common network.
std::unique_ptr<Topology> p5_then_p4d(int a_nodes, int b_nodes) {
  const Catalog& catalog = testing::shipped_catalog();
  const schema::InstanceType* p5 = catalog.instances().find("aws.p5.48xlarge")->value;
  const schema::InstanceType* p4d = catalog.instances().find("aws.p4d.24xlarge")->value;
  const InterPoolLinks links = inter_pool_links({{p5, a_nodes}, {p4d, b_nodes}},
                                                schema::InterPoolNetwork(), nullptr, catalog);
  TopologyOrError built = build_joined_topology(
      {{p5, a_nodes, 0, 0, nullptr, std::nullopt}, {p4d, b_nodes, 0, 0, nullptr, std::nullopt}},
      links.bytes_per_s, catalog);
  REQUIRE(built.topology);
  return std::move(built.topology);
}

// A random plan: 1F1B (m 1..512), interleaved (PP 1..16, v 2..8, Megatron-Core's combined steps
// at times) or GPipe; stage and chunk times unequal (a run of slower stages anywhere, some chunks
// up to 3x or a 20th of the others, or a last stage lagging in its later chunks), on whole
// microseconds or not; sends of 1 B to 300 MB, blocking or not, within a node, across nodes or
// across an H100 and an A100 pool; reductions over 1 or 2 replicas, in buckets or after,
// contending for SMs; the output layer's weight gradients deferred; expert all-to-alls across
// nodes; a tied embedding. The lagging case without the check of held inputs' reach
// (steady_state_skip.cpp periods_repeated) fails here as the test above does.
PipelinePlan random_plan(PlanDice* dice, std::unique_ptr<Topology>* topology) {
  using schema::GPIPE, schema::INTERLEAVED_ONE_F_ONE_B, schema::ONE_F_ONE_B;
  PipelinePlan plan;
  const int kind = dice->below(10);
  plan.schedule = kind < 4 ? ONE_F_ONE_B : kind < 9 ? INTERLEAVED_ONE_F_ONE_B : GPIPE;
  plan.stages = 1 + dice->below(16);
  const bool interleaved = plan.schedule == INTERLEAVED_ONE_F_ONE_B;
  if (!interleaved) plan.stages = std::max(plan.stages, 2);
  plan.chunks = interleaved ? 2 + dice->below(7) : 1;
  const int most = dice->one_in(3) ? 512 : 64;
  plan.micro_batches = interleaved
                           ? plan.stages * (1 + dice->below(std::max(1, most / plan.stages)))
                           : 1 + dice->below(most);
  plan.overlap_expert_communication = interleaved && dice->one_in(4);
  plan.tensor_parallel = std::vector<int>{1, 2, 4}[dice->below(3)];
  plan.context_parallel = dice->one_in(4) ? 2 : 1;
  plan.data_parallel = 1 + dice->below(2);
  plan.rank_order = dice->below(2) ? schema::TP_DP_PP : schema::TP_PP_DP;
  plan.activation_bytes = std::vector<double>{1, 1e6, 4.8e7, 3e8}[dice->below(4)];
  plan.overlap_pipeline_communication = !dice->one_in(4);
  plan.overlap_gradient_reduce = !dice->one_in(3);
  plan.overlap_parameter_gather = dice->below(2);
  plan.shard_gradients = dice->below(2);
  plan.all_reduce_gradients = plan.shard_gradients && dice->one_in(3);
  plan.tied_embedding_gradient_bytes = dice->one_in(3) ? 1e8 : 0;
  const bool experts = dice->one_in(4), deferred = dice->one_in(5), contended = dice->below(2);
  const bool whole_us = dice->below(2), across_pools = dice->below(2);
  // Or a last stage whose chunks after its first are the slowest, alone on one p5 node's
  // NVLink: its upstream runs ahead and it holds inputs for tasks far beyond its next ones.
  const bool lagging = interleaved && dice->one_in(3);
  if (lagging) {
    plan.tensor_parallel = plan.context_parallel = plan.data_parallel = 1;
    plan.activation_bytes = 1;
    plan.overlap_expert_communication = false;
  }
  if (experts && !lagging) {  // every GPU on its own node: the all-to-alls cross the network
    plan.tensor_parallel = plan.context_parallel = 1;
    plan.data_parallel = 2;
    plan.experts = {1, 2, 2};
  }
  const int slow_from = dice->below(plan.stages);
  const int slow_to = slow_from + 1 + dice->below(plan.stages - slow_from);
  const double slow = 1 + (dice->below(2) ? 3 : 9) * dice->unit();
  const auto time = [&](double milliseconds) {
    const int64_t ps = ms(milliseconds).count();
    return Picoseconds(whole_us ? ps / 1000000 * 1000000 : ps + dice->below(1000));
  };
  for (int r = 0; r < plan.stages; ++r) {
    StageWork w{Picoseconds(0), Picoseconds(0), ms(0.3 + dice->unit())};
    const double stage = (r >= slow_from && r < slow_to ? slow : 1) * (0.5 + dice->unit());
    for (int c = 0; c < plan.chunks; ++c) {
      const double f = lagging ? (r < plan.stages / 2 ? 3 : r + 1 < plan.stages || c == 0 ? 2 : 5)
                       : stage * (dice->one_in(4) ? 3 * dice->unit() + 0.05 : 1);
      w.chunk_forward.push_back(lagging ? ms(f) : time(f));
      w.chunk_backward.push_back(lagging ? ms(2 * f) : time(f * (1.5 + dice->unit())));
      const Picoseconds forward = w.chunk_forward.back(), backward = w.chunk_backward.back();
      if (plan.overlap_expert_communication) {
        w.combined_forward.push_back(Picoseconds(forward.count() * 9 / 10));
        w.combined_backward.push_back(Picoseconds(backward.count() * 9 / 10));
      }
      if (experts && !lagging) {
        const double bytes = std::vector<double>{1e6, 5e7, 4e8}[dice->below(3)];
        const Picoseconds f5(forward.count() / 5), f4(forward.count() / 4);
        const Picoseconds b3(backward.count() / 3), b4(backward.count() / 4);
        w.chunk_forward_all_to_alls.push_back({{f5, f4, "dispatch", bytes}});
        w.chunk_backward_all_to_alls.push_back({{b3, b4, "combine", bytes}});
      }
    }
    if (lagging) {
      plan.work.push_back(w);
      continue;
    }
    w.gradient_bytes = 1e8 * dice->unit();
    w.gradient_buckets = 1 + dice->below(4);
    if (dice->one_in(4)) w.optimizer_buckets = w.gradient_buckets;
    w.parameter_gather_bytes = plan.shard_gradients ? w.gradient_bytes : 0;
    if (experts) {
      w.expert_gradient_bytes = 2e8 * dice->unit();
      w.expert_parameter_gather_bytes = plan.shard_gradients ? w.expert_gradient_bytes : 0;
    }
    w.gpu_sms = contended ? 132 : 0;
    if (deferred && r == plan.stages - 1) {  // all of them: the shortcut knows no partial one
      w.deferred_output_micro_batches = plan.micro_batches;
      w.output_weight_gradient = Picoseconds(w.chunk_backward.back().count() / 3);
    }
    plan.work.push_back(w);
  }
  const int gpus =
      plan.stages * plan.tensor_parallel * plan.context_parallel * plan.data_parallel;
  if (lagging) {
    *topology = testing::shipped_cluster("aws.p5.48xlarge", 2);
  } else if (experts) {
    *topology = testing::shipped_cluster(dice->below(2) ? "aws.p5.48xlarge" : "aws.p4d.24xlarge",
                                         gpus, 1);
  } else if (across_pools && gpus % 16 == 0) {
    *topology = p5_then_p4d(gpus / 16, gpus / 16);
  } else {
    *topology = testing::shipped_cluster("aws.p5.48xlarge", (gpus + 7) / 8);
  }
  return plan;
}

TEST_CASE("on random plans of unequal stages the shortcut is the full run to the picosecond") {
  PlanDice dice{20261206};
  int skipped = 0;
  for (int k = 0; k < 240; ++k) {
    std::unique_ptr<Topology> t;
    const PipelinePlan plan = random_plan(&dice, &t);
    INFO("plan " << k << ": schedule " << plan.schedule << ", " << plan.stages << " stages x "
                 << plan.chunks << " chunks, " << plan.micro_batches << " micro-batches, TP "
                 << plan.tensor_parallel << " CP " << plan.context_parallel << " DP "
                 << plan.data_parallel);
    const bool one_rank_for_all = dice.below(2);
    const PipelineTimeline shortcut =
        simulate_pipeline(plan, *t, nullptr, {.one_rank_for_all = one_rank_for_all});
    const PipelineTimeline full = simulate_pipeline(
        plan, *t, nullptr, {.one_rank_for_all = one_rank_for_all, .skip_steady_state = false});
    skipped += shortcut.tasks_skipped > 0;
    REQUIRE(full.step > Picoseconds(0));
    CHECK(shortcut.step == full.step);
    for (size_t r = 0; r < full.stages.size(); ++r) {
      INFO("stage " << r);
      const StageTimeline &a = shortcut.stages[r], &b = full.stages[r];
      CHECK(a.busy == b.busy);
      CHECK(a.collective_stretch == b.collective_stretch);
      CHECK(a.work_beside_collectives == b.work_beside_collectives);
      CHECK(a.last_backward_end == b.last_backward_end);
      CHECK(a.gradients_reduced == b.gradients_reduced);
      CHECK(a.expert_network_wait == b.expert_network_wait);
      CHECK(a.optimizer_end == b.optimizer_end);
      CHECK(a.end == b.end);
    }
  }
  CHECK(skipped > 120);  // the shortcut was taken on most of them
}

TEST_CASE("on random ZeRO-3 plans the shortcut is the full run, the work beside gathers too") {
  // ZeRO-3 runs take no jump (their work beside the gathers is recorded at every parameter
  // wait, and a jump would skip periods' records): with the shortcut asked for, every record is
  // the full run's, to the picosecond.
  PlanDice dice{20261207};
  auto t = testing::shipped_cluster("aws.p5.48xlarge", 1);
  int recorded = 0;
  for (int k = 0; k < 24; ++k) {
    PipelinePlan plan;
    plan.stages = 1 + dice.below(2);
    plan.micro_batches = 2 + dice.below(7);
    plan.data_parallel = 2;
    plan.activation_bytes = 1e7;
    const double gather = std::vector<double>{1e8, 1e9, 3e9}[dice.below(3)];
    for (int r = 0; r < plan.stages; ++r) {
      const double forward = 0.5 + 3 * dice.unit();
      StageWork w{ms(forward), ms(forward * (1.5 + dice.unit())), ms(0.3)};
      w.zero3 = zero3_work(2 + dice.below(4), gather, 1, gather, 2);
      w.gpu_sms = dice.below(2) ? 132 : 0;
      plan.work.push_back(w);
    }
    INFO("plan " << k << ": " << plan.stages << " stages, " << plan.micro_batches
                 << " micro-batches, " << gather << " bytes gathered a chunk");
    const PipelineTimeline shortcut = simulate_pipeline(plan, *t);
    const PipelineTimeline full =
        simulate_pipeline(plan, *t, nullptr, {.skip_steady_state = false});
    CHECK(shortcut.tasks_skipped == 0);
    CHECK(shortcut.step == full.step);
    for (size_t r = 0; r < full.stages.size(); ++r) {
      INFO("stage " << r);
      const StageTimeline &a = shortcut.stages[r], &b = full.stages[r];
      CHECK(a.busy == b.busy);
      CHECK(a.parameter_wait == b.parameter_wait);
      CHECK(a.work_beside_collectives == b.work_beside_collectives);
      CHECK(a.end == b.end);
      recorded += b.work_beside_collectives > Picoseconds(0);
    }
  }
  CHECK(recorded > 8);  // the gathers outlast the layers on many of them
}

}  // namespace
}  // namespace clustersim
