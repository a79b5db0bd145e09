// Closed forms as tests of the pipeline on the engine: the 1F1B and interleaved bubbles, and the
// data-parallel reduction hidden behind a long backward or exposed after a short one, chunk by
// chunk when interleaved, the work beside reductions that outlast the backward, and the
// parameter gather waited for bucket by bucket.
#include "sim/parallel/pipeline_simulation.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <tuple>

#include "sim/net/collective.h"
#include "sim/parallel/collective_sm_contention.h"
#include "sim/parallel/parameter_gather_overlap.h"
#include "tests/testing/cluster.h"
#include "tests/testing/units.h"

namespace clustersim {
namespace {

using testing::shipped_cluster;

using testing::ms;

// The SMs of the p5's H100 SXM (topologies/gpus.textproto), the GPU of the shipped cluster these
// plans run on.
constexpr int kP5GpuSms = 132;

PipelinePlan uniform_plan(schema::PipelineSchedule schedule, int stages, int chunks,
                          int micro_batches, Picoseconds forward, Picoseconds backward) {
  PipelinePlan plan;
  plan.schedule = schedule;
  plan.stages = stages;
  plan.chunks = chunks;
  plan.micro_batches = micro_batches;
  plan.activation_bytes = 1;  // transfers cost only their ~1 us latency
  StageWork work{forward, backward, Picoseconds(0)};
  work.gpu_sms = kP5GpuSms;
  plan.work.assign(stages, work);
  return plan;
}

double step_ms(const PipelinePlan& plan, const Topology& t) {
  return simulate_pipeline(plan, t).step.seconds() * 1e3;
}

TEST_CASE("1F1B and GPipe take (m + p - 1)(F + B): bubble fraction (p - 1)/(m + p - 1)") {
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  const double f = 1, b = 2;
  for (auto schedule : {schema::ONE_F_ONE_B, schema::GPIPE}) {
    for (auto [p, m] : {std::pair{4, 8}, std::pair{8, 16}, std::pair{2, 1}}) {
      INFO("p " << p << " m " << m);
      const double step = step_ms(uniform_plan(schedule, p, 1, m, ms(f), ms(b)), *t);
      CHECK(step == Approx((m + p - 1) * (f + b)).epsilon(0.01));
      const double bubble = 1 - m * (f + b) / step;
      CHECK(bubble == Approx(static_cast<double>(p - 1) / (m + p - 1)).epsilon(0.01));
    }
  }
}

TEST_CASE("interleaving with v chunks shrinks the bubble to (p - 1)/(m v) of the ideal time") {
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  const int p = 4, v = 2, m = 8;
  // Each chunk holds half a stage's layers: F and B per chunk are half of 1 and 2 ms.
  const double f = 0.5, b = 1.0;
  const double ideal = m * v * (f + b);
  const double step =
      step_ms(uniform_plan(schema::INTERLEAVED_ONE_F_ONE_B, p, v, m, ms(f), ms(b)), *t);
  CHECK((step - ideal) / ideal == Approx(static_cast<double>(p - 1) / (m * v)).epsilon(0.02));
}

// An all-reduce of `bytes` between GPUs 0 and 1, alone on the network.
double pair_all_reduce_ms(const Topology& t, double bytes) {
  return collective_time(t, {CollectiveOp::kAllReduce, {0, 1}, bytes, CollectiveAlgorithm::kAuto})
             .seconds() *
         1e3;
}

TEST_CASE(
    "the data-parallel reduction hides behind a long backward and is exposed after a short one") {
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  // Two replicas of one stage on GPUs 0 and 1; 360 MB of gradients: a 2-GPU all-reduce moves
  // S over NVLink at 360 GB/s, about 1 ms.
  const double bytes = 360e6;
  const double reduce_ms = pair_all_reduce_ms(*t, bytes);
  auto plan = [&](double backward_ms, bool overlap) {
    PipelinePlan p = uniform_plan(schema::ONE_F_ONE_B, 1, 1, 1, ms(1), ms(backward_ms));
    p.data_parallel = 2;
    p.overlap_gradient_reduce = overlap;
    p.work[0].gradient_bytes = bytes;
    p.work[0].gradient_buckets = 20;
    return p;
  };
  // Long backward (20 ms): only the last of 20 buckets (about 0.05 ms of reduction each) is
  // exposed, after the backward's end; the 19 beside the backward slow it by 32 of 132 SMs of
  // their time (collective_sm_contention.h).
  const double share = static_cast<double>(kNcclCollectiveCtas) / kP5GpuSms;
  const double bucket_ms = pair_all_reduce_ms(*t, bytes / 20);
  const double hidden = step_ms(plan(20, true), *t) - 21;
  CHECK(hidden == Approx(bucket_ms * (19 * share + 1)).epsilon(0.01));
  // Short backward (0.1 ms): nearly the whole reduction is exposed.
  const double exposed = step_ms(plan(0.1, true), *t) - 1.1;
  CHECK(exposed > 0.9 * reduce_ms);
  // Without overlap, the whole reduction follows the backward.
  CHECK(step_ms(plan(20, false), *t) - 21 == Approx(reduce_ms).epsilon(0.02));
}

TEST_CASE("a backward slowed by the reductions beside it fills its buckets later") {
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  // Two buckets over a 10 ms backward of two replicas: the first is full after 5 ms of the
  // backward's work, and its reduction (R) slows the backward by 32 of 132 SMs while it runs, so
  // the backward ends at 1 + 10 + R x 32 / 132 ms; the second bucket is full only then, and its
  // reduction follows: step 11 + R (1 + 32 / 132) ms. (Filled at the backward's unslowed pace,
  // the second would start before the backward's end and hide all but R x 100 / 132 of itself.)
  const double bytes = 2e9;
  const double bucket_ms = pair_all_reduce_ms(*t, bytes / 2);
  REQUIRE(bucket_ms < 5);  // the first reduction ends inside the backward
  PipelinePlan p = uniform_plan(schema::ONE_F_ONE_B, 1, 1, 1, ms(1), ms(10));
  p.data_parallel = 2;
  p.work[0].gradient_bytes = bytes;
  p.work[0].gradient_buckets = 2;
  const double share = static_cast<double>(kNcclCollectiveCtas) / kP5GpuSms;
  CHECK(step_ms(p, *t) == Approx(11 + bucket_ms * (1 + share)).epsilon(1e-6));
}

TEST_CASE("the work beside reductions that outlast the backward is recorded, not beside ones "
          "that end inside it") {
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  // Two buckets over a 10 ms backward: the first is full after 5 ms of it and its reduction
  // begins the collectives' spell. If that reduction outlasts the rest of the backward (5 ms of
  // work at 100 / 132 of its speed beside it: 6.6 ms), the spell is in flight as the backward
  // ends and the backward's last 5 ms of work ran beside it; if it ends inside the backward, the
  // second bucket's reduction begins a spell of its own at the backward's end, beside no work.
  const auto beside_ms = [&](double bytes) {
    PipelinePlan p = uniform_plan(schema::ONE_F_ONE_B, 1, 1, 1, ms(1), ms(10));
    p.data_parallel = 2;
    p.work[0].gradient_bytes = bytes;
    p.work[0].gradient_buckets = 2;
    return simulate_pipeline(p, *t).stages[0].work_beside_collectives.seconds() * 1e3;
  };
  REQUIRE(pair_all_reduce_ms(*t, 8e9 / 2) > 6.6);
  CHECK(beside_ms(8e9) == Approx(5).epsilon(1e-9));
  REQUIRE(pair_all_reduce_ms(*t, 2e9 / 2) < 5);
  CHECK(beside_ms(2e9) == 0);
}

TEST_CASE("a sharded optimizer's parameter gather waits bucket by bucket ahead of the forward") {
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  // Two replicas of one stage, 4 GB of parameters gathered after the optimizer step in n buckets
  // ahead of a 2 ms forward (Megatron-Core's finish_param_sync): the step grows by the first
  // bucket's gather plus what the n - 1 others add beside n - 1 of the n forward segments
  // (parameter_gather_overlap.h), against the same step without a gather.
  const double bytes = 4e9;
  auto step = [&](double gathered, int buckets) {
    PipelinePlan p = uniform_plan(schema::ONE_F_ONE_B, 1, 1, 1, ms(2), ms(4));
    p.data_parallel = 2;
    p.shard_gradients = true;
    p.work[0].gradient_bytes = 1e6;
    p.work[0].gradient_buckets = buckets;
    p.work[0].parameter_gather_bytes = gathered;
    return step_ms(p, *t);
  };
  for (int buckets : {1, 4, 32}) {
    INFO(buckets);
    const Picoseconds each =
        collective_time(*t, {CollectiveOp::kAllGather, {0, 1}, bytes / buckets,
                             CollectiveAlgorithm::kAuto});
    const double exposed =
        parameter_gather_exposed(Picoseconds(each.count() * buckets), buckets, ms(2), kP5GpuSms)
            .seconds() *
        1e3;
    CHECK(step(bytes, buckets) - step(0, buckets) == Approx(exposed).epsilon(1e-6));
  }
  // One bucket: the whole gather is waited for, not only its CTAs' share of it.
  const double whole_ms =
      collective_time(*t, {CollectiveOp::kAllGather, {0, 1}, bytes, CollectiveAlgorithm::kAuto})
          .seconds() *
      1e3;
  CHECK(step(bytes, 1) - step(0, 1) == Approx(whole_ms).epsilon(1e-6));
}

// DeepSpeed's pipeline engine (deepspeed_pipeline.h): every send waits for its receiver.
PipelinePlan deepspeed_plan(int stages, int micro_batches, double activation_bytes) {
  PipelinePlan plan = uniform_plan(schema::ONE_F_ONE_B, stages, 1, micro_batches, ms(1), ms(2));
  plan.activation_bytes = activation_bytes;
  plan.deepspeed_exchange = true;
  plan.overlap_gradient_reduce = false;
  return plan;
}

TEST_CASE("DeepSpeed's engine: (m + p - 1)(F + B), plus every transfer on two stages") {
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  const double f = 1, b = 2;
  // Transfers of a byte (~1 us latency): the 1F1B step.
  for (auto [p, m] : {std::pair{4, 8}, std::pair{8, 16}, std::pair{3, 2}}) {
    INFO("p " << p << " m " << m);
    CHECK(step_ms(deepspeed_plan(p, m, 1), *t) == Approx((m + p - 1) * (f + b)).epsilon(0.01));
  }
  // Two stages, transfers of c: after the first forward's activation (c) the stages meet m - 1
  // times to pass an activation and then a gradient (2c each, both stages held), F + B apart,
  // and the last gradient crosses alone (c): (m + 1)(F + B) + 2 m c. One micro-batch gives c.
  const double bytes = 360e6;
  const double c = (step_ms(deepspeed_plan(2, 1, bytes), *t) - 2 * (f + b)) / 2;
  CHECK(c > 0.5);  // 360 MB over NVLink
  for (int m : {2, 4, 8}) {
    INFO("m " << m);
    CHECK(step_ms(deepspeed_plan(2, m, bytes), *t) ==
          Approx((m + 1) * (f + b) + 2 * m * c).epsilon(0.001));
  }
  // A sender that does not wait for its receiver (Megatron-LM 2021's blocking send) pays one
  // transfer per exchange fewer.
  PipelinePlan megatron = deepspeed_plan(2, 8, bytes);
  megatron.deepspeed_exchange = false;
  megatron.overlap_pipeline_communication = false;
  CHECK(step_ms(megatron, *t) < step_ms(deepspeed_plan(2, 8, bytes), *t) - 6 * c);
}

TEST_CASE("DeepSpeed's engine: the gradient all-reduce after the flush adds its whole time") {
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  const double bytes = 360e6;
  const double alone = step_ms(deepspeed_plan(2, 4, 1), *t);
  PipelinePlan plan = deepspeed_plan(2, 4, 1);
  plan.data_parallel = 2;
  for (StageWork& w : plan.work) w.gradient_bytes = bytes;
  // Stage 0's reduction starts after its last backward, the end of the pipeline; stage 1's ends
  // before it on links of its own.
  CHECK(step_ms(plan, *t) - alone == Approx(pair_all_reduce_ms(*t, bytes)).epsilon(0.02));
  // The BF16 optimizer's all-reduce of sharded gradients: the same collective.
  plan.shard_gradients = plan.all_reduce_gradients = true;
  CHECK(step_ms(plan, *t) - alone == Approx(pair_all_reduce_ms(*t, bytes)).epsilon(0.02));
}

TEST_CASE("the tied embedding's all-reduce between the end stages adds its whole time") {
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  // Two stages on GPUs 0 and 1 (one replica): the first stage's last backward ends the pipeline,
  // then the two all-reduce the embedding's gradient (E bytes), then the optimizer steps.
  const double tied = 500e6, gradients = 360e6;
  const double alone = step_ms(deepspeed_plan(2, 4, 1), *t);
  for (bool deepspeed : {true, false}) {
    INFO("DeepSpeed's engine " << deepspeed);
    PipelinePlan plan = deepspeed_plan(2, 4, 1);
    plan.deepspeed_exchange = deepspeed;
    plan.overlap_pipeline_communication = false;
    plan.tied_embedding_gradient_bytes = tied;
    CHECK(step_ms(plan, *t) - alone == Approx(pair_all_reduce_ms(*t, tied)).epsilon(0.02));
  }
  // Two replicas (GPUs 0-3); only the last stage has data-parallel gradients to speak of (G bytes, under 2 ms
  // of all-reduce: B). Megatron reduces them from its last backward, B before the first stage's,
  // and all-reduces the embedding after: step 1F1B + tied. DeepSpeed's ReduceTiedGrads comes
  // first, after the first stage's last backward, and ReduceGrads follows: 1F1B + tied + G's.
  for (bool deepspeed : {true, false}) {
    INFO("DeepSpeed's engine " << deepspeed);
    PipelinePlan plan = deepspeed_plan(2, 4, 1);
    plan.deepspeed_exchange = deepspeed;
    plan.overlap_pipeline_communication = false;
    plan.data_parallel = 2;
    plan.work[0].gradient_bytes = 1;
    plan.work[1].gradient_bytes = gradients;
    plan.tied_embedding_gradient_bytes = tied;
    const double reduce_ms = pair_all_reduce_ms(*t, gradients);
    REQUIRE(reduce_ms < 2);
    const double expected = pair_all_reduce_ms(*t, tied) + (deepspeed ? reduce_ms : 0);
    CHECK(step_ms(plan, *t) - alone == Approx(expected).epsilon(0.02));
  }
}

TEST_CASE("simulating one tensor-parallel rank for all gives every rank's step and stage times") {
  struct Case {
    const char* instance;
    const char* fabric;
    int tp, pp, dp;
    bool zero3;
  };
  // Stages across nodes on the same rail (TP 8), across nodes through PXN (TP 4), inside nodes
  // (TP 2), ZeRO-3 gathers before every layer, and a NIC per GPU pair (TP 8 keeps to rails).
  for (const Case& c : {Case{"onprem.dgx-a100-80gb", "ib-rail-optimized", 8, 2, 2, false},
                        Case{"onprem.dgx-a100-80gb", "ib-rail-optimized", 4, 4, 2, false},
                        Case{"aws.p5.48xlarge", "clos-2to1", 2, 4, 4, false},
                        Case{"aws.p5.48xlarge", "clos-2to1", 4, 2, 4, true},
                        Case{"aws.p4d.24xlarge", "", 8, 2, 2, false}}) {
    INFO(c.instance << " TP " << c.tp << " PP " << c.pp << " DP " << c.dp);
    auto t = shipped_cluster(c.instance, c.tp * c.pp * c.dp / 8, 0, c.fabric);
    PipelinePlan plan = uniform_plan(schema::INTERLEAVED_ONE_F_ONE_B, c.pp, 2, 8, ms(2), ms(4));
    plan.tensor_parallel = c.tp;
    plan.data_parallel = c.dp;
    plan.activation_bytes = 64e6;
    plan.shard_gradients = true;
    for (StageWork& w : plan.work) {
      w.optimizer = ms(1);
      w.gradient_bytes = 4e8;
      w.gradient_buckets = 6;
      w.parameter_gather_bytes = c.zero3 ? 0 : 2e8;
      if (c.zero3) w.zero3 = zero3_work(4, 1e8, 2, 1e8, 2);
    }
    const PipelineTimeline one = simulate_pipeline(plan, *t);
    const PipelineTimeline every =
        simulate_pipeline(plan, *t, nullptr, {.one_rank_for_all = false});
    CHECK(one.step.seconds() == Approx(every.step.seconds()).epsilon(1e-12));
    for (int r = 0; r < c.pp; ++r) {
      CHECK(one.stages[r].gradients_reduced.seconds() ==
            Approx(every.stages[r].gradients_reduced.seconds()).epsilon(1e-12));
      CHECK(one.stages[r].end.seconds() == Approx(every.stages[r].end.seconds()).epsilon(1e-12));
    }
  }
}

TEST_CASE("with interleaving, a chunk's gradients are reduced under the later chunks' backwards") {
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  // One stage of two chunks on two replicas (GPUs 0 and 1): forwards 1 ms, backwards 0.6 ms per
  // chunk, 360 MB of gradients (about 1 ms of all-reduce), 10 buckets per chunk. Chunk 1's
  // backward runs first: its half of the reduction (0.5 ms) runs under chunk 0's backward, so
  // only about the last bucket of chunk 0's half outlasts the step's compute; reducing all
  // gradients after chunk 0's backward alone would expose about 0.4 ms.
  const double bytes = 360e6;
  const double reduce_ms = pair_all_reduce_ms(*t, bytes);
  PipelinePlan plan = uniform_plan(schema::INTERLEAVED_ONE_F_ONE_B, 1, 2, 1, ms(1), ms(0.6));
  plan.data_parallel = 2;
  plan.work[0].gradient_bytes = bytes;
  plan.work[0].gradient_buckets = 20;
  // The buckets beside the backwards also slow them by 32 of 132 SMs of their time.
  const double exposed = step_ms(plan, *t) - 2 * (1 + 0.6);
  CHECK(exposed > 0);
  CHECK(exposed < (0.2 + static_cast<double>(kNcclCollectiveCtas) / kP5GpuSms) * reduce_ms);
}

TEST_CASE("interleaved schedules list every chunk's forward and backward once") {
  for (int stage = 0; stage < 4; ++stage) {
    const auto tasks = stage_schedule(schema::INTERLEAVED_ONE_F_ONE_B, 4, 2, 8, stage);
    CHECK(tasks.size() == 2 * 2 * 8);
    std::set<std::tuple<bool, int, int>> seen;
    for (const auto& t : tasks) seen.insert({t.forward, t.chunk, t.micro_batch});
    CHECK(seen.size() == tasks.size());
  }
}

TEST_CASE("pipeline runs: the step's micro-batches as back-to-back schedules, numbered on") {
  // 2 runs of 4 micro-batches on stage 1 of 4 with 2 chunks: run 1 is run 0's schedule with its
  // micro-batches 4 later, every task marked with its run.
  const auto one = stage_schedule(schema::INTERLEAVED_ONE_F_ONE_B, 4, 2, 4, 1);
  const auto two = stage_schedule(schema::INTERLEAVED_ONE_F_ONE_B, 4, 2, 8, 1, false, 2);
  REQUIRE(two.size() == 2 * one.size());
  for (size_t i = 0; i < two.size(); ++i) {
    const PipelineTask& a = one[i % one.size()];
    const int run = static_cast<int>(i / one.size());
    CHECK(two[i].run == run);
    CHECK(std::tuple{two[i].forward, two[i].chunk, two[i].micro_batch} ==
          std::tuple{a.forward, a.chunk, a.micro_batch + 4 * run});
  }
}

TEST_CASE("R pipeline runs of m / R micro-batches take R (m / R + p - 1)(F + B)") {
  // Each run fills and drains the pipeline: 1F1B on 4 stages, 16 micro-batches as 1, 2 or 4
  // runs take 19, 2 x 11 and 4 x 7 (F + B).
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  const double f = 1, b = 2;
  const int p = 4, m = 16;
  for (int runs : {1, 2, 4}) {
    INFO("runs " << runs);
    PipelinePlan plan = uniform_plan(schema::ONE_F_ONE_B, p, 1, m, ms(f), ms(b));
    plan.runs = runs;
    CHECK(step_ms(plan, *t) == Approx(runs * (m / runs + p - 1) * (f + b)).epsilon(0.01));
  }
}

}  // namespace
}  // namespace clustersim

namespace clustersim {
namespace {

TEST_CASE("the timeline records every task once, without overlap on a stage's compute track") {
  auto t = testing::shipped_cluster("aws.p5.48xlarge", 1);
  PipelinePlan plan = uniform_plan(schema::INTERLEAVED_ONE_F_ONE_B, 4, 2, 8, ms(0.5), ms(1));
  Timeline timeline;
  simulate_pipeline(plan, *t, &timeline);
  std::map<std::string, std::vector<TimelineSpan>> compute;
  for (const TimelineSpan& s : timeline.spans()) {
    if (s.track == "compute") compute[s.group].push_back(s);
  }
  REQUIRE(compute.size() == 4);
  for (auto& [stage, spans] : compute) {
    // Forward and backward of 2 chunks x 8 micro-batches, then the optimizer step.
    CHECK(spans.size() == 2 * 2 * 8 + 1);
    std::sort(spans.begin(), spans.end(),
              [](const TimelineSpan& a, const TimelineSpan& b) { return a.start < b.start; });
    for (size_t i = 1; i < spans.size(); ++i) CHECK(spans[i].start >= spans[i - 1].end);
  }
}

}  // namespace
}  // namespace clustersim

namespace clustersim {
namespace {

// The "data parallel" span of stage 0 and the tracks the stage-to-stage sends used.
struct Placed {
  double reduction_ms = 0;
  std::set<std::string> send_tracks;
};

Placed placed(schema::RankOrder order) {
  auto t = shipped_cluster("aws.p5.48xlarge", 2);  // 2 x 8 H100: NVLink inside, EFA between
  PipelinePlan plan = uniform_plan(schema::ONE_F_ONE_B, 2, 1, 4, ms(1), ms(2));
  plan.tensor_parallel = 4;
  plan.data_parallel = 2;
  plan.rank_order = order;
  plan.activation_bytes = 64e6;
  plan.overlap_gradient_reduce = false;
  for (StageWork& w : plan.work) w.gradient_bytes = 1e9;
  Timeline timeline;
  simulate_pipeline(plan, *t, &timeline);
  Placed p;
  for (const TimelineSpan& s : timeline.spans()) {
    if (s.track.rfind("send", 0) == 0) p.send_tracks.insert(s.track);
    if (s.group == "stage 0" && s.track == "data parallel")
      p.reduction_ms = (s.end - s.start).seconds() * 1e3;
  }
  return p;
}

TEST_CASE("the rank order decides which of pipeline and data parallelism stays inside a node") {
  // TP_PP_DP: a replica's two stages share a node (sends over NVLink), replicas span nodes.
  const Placed stages_together = placed(schema::TP_PP_DP);
  CHECK(stages_together.send_tracks == std::set<std::string>{"send (NVLink)"});
  // TP_DP_PP: a stage's two replicas share a node, stages span nodes.
  const Placed replicas_together = placed(schema::TP_DP_PP);
  CHECK(replicas_together.send_tracks == std::set<std::string>{"send (network)"});
  // The gradient all-reduce between replicas: over NVLink when they share a node.
  REQUIRE(stages_together.reduction_ms > 0);
  CHECK(replicas_together.reduction_ms < stages_together.reduction_ms / 2);
}

}  // namespace
}  // namespace clustersim
