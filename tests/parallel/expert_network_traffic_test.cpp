// The expert all-to-alls that leave the NVLink domain on the pipeline simulation's network: which
// pairs cross NICs and what they move, and the closed forms of their contention with the data-
// parallel reduction or, under ZeRO-3, a layer's gather beside them (max-min fair shares of one
// NIC), none inside one domain.
#include "sim/parallel/expert_network_traffic.h"

#include <catch2/catch.hpp>
#include <numeric>

#include "sim/engine/simulation.h"
#include "sim/net/collective.h"
#include "sim/net/network.h"
#include "sim/parallel/pipeline_simulation.h"
#include "tests/testing/cluster.h"
#include "tests/testing/units.h"

namespace clustersim {
namespace {

using testing::ms;
using testing::shipped_cluster;

std::vector<int> first_gpus(int n) {
  std::vector<int> gpus(n);
  std::iota(gpus.begin(), gpus.end(), 0);
  return gpus;
}

TEST_CASE("an all-to-all's pairs across NVLink domains, plain or on the dispatcher's rails") {
  // Two p5.48xlarge, EP 16 over both: each GPU sends S/16 to each of the other node's 8 GPUs.
  auto two = shipped_cluster("aws.p5.48xlarge", 2);
  const double across = 1 / two->all_to_all_bandwidth_fraction();
  const ExpertLayout ep16{1, 16, 16};
  const ExpertNetworkTraffic plain = expert_network_traffic(*two, ep16, first_gpus(16), 0, 1, 1);
  CHECK(plain.edges.size() == 16 * 8);
  CHECK(plain.edge_bytes_per_byte == Approx(across / 16));
  // Deduplicated per node: the rails {g, g + 8} each carry S x share / 2 per direction.
  const ExpertNetworkTraffic rails = expert_network_traffic(*two, ep16, first_gpus(16), 0.5, 1, 1);
  CHECK(rails.edges.size() == 8 * 2);
  CHECK(rails.edge_bytes_per_byte == Approx(across * 0.5 / 2));
  for (auto [from, to] : rails.edges) CHECK(to == (from + 8) % 16);
  // EP 8 on each node: no pair leaves its domain.
  const ExpertLayout ep8{1, 8, 16};
  CHECK(expert_network_traffic(*two, ep8, first_gpus(16), 0, 1, 1).edges.empty());
}

TEST_CASE("a prepared coupled transfer books every byte sent as received") {
  auto two = shipped_cluster("aws.p5.48xlarge", 2);
  const ExpertNetworkTraffic traffic =
      expert_network_traffic(*two, {1, 16, 16}, first_gpus(16), 0, 1, 1);
  Simulation sim;
  Network network(&sim, two.get());
  const int32_t prepared = network.prepare_coupled(traffic.edges);
  network.start_prepared(prepared, 1e6, traffic.latency, [] {});
  network.start_prepared(prepared, 3e6, traffic.latency, [] {});
  sim.run();
  const auto total = [](const std::vector<double>& v) {
    return std::accumulate(v.begin(), v.end(), 0.0);
  };
  CHECK(total(network.bytes_sent()) == Approx(4e6 * 128));
  CHECK(total(network.bytes_received()) == total(network.bytes_sent()));
  for (int gpu = 0; gpu < 16; ++gpu) CHECK(network.bytes_sent()[gpu] == Approx(4e6 * 8));
}

// One stage of two data-parallel replicas (GPUs 0 and 1), EP 2 over them, one micro-batch: a
// forward of 1 ms, a backward of `compute` ms then an all-to-all of `bytes` per GPU, timed
// `all_to_all` ms alone, whose first of two gradient buckets (`bucket_bytes` each, all-reduced)
// is full as the all-to-all starts.
PipelinePlan all_to_all_plan(double compute, double all_to_all, double bytes, double bucket_bytes) {
  PipelinePlan plan;
  plan.data_parallel = 2;
  plan.activation_bytes = 1;
  plan.experts = {1, 2, 2};
  StageWork w{ms(1), ms(compute + all_to_all), Picoseconds(0)};
  w.gradient_bytes = 2 * bucket_bytes;
  w.gradient_buckets = 2;
  w.chunk_forward_all_to_alls = {{}};
  w.chunk_backward_all_to_alls = {{{ms(compute), ms(all_to_all), "dispatch", bytes}}};
  plan.work = {w};
  return plan;
}

// The traffic of `bytes` per GPU between GPUs 0 and 1 alone on an idle network, in ms.
double pair_traffic_ms(const Topology& t, double bytes) {
  const ExpertNetworkTraffic traffic = expert_network_traffic(t, {1, 2, 2}, {0, 1}, 0, 1, 1);
  Simulation sim;
  Network network(&sim, &t);
  network.start_coupled(traffic.edges, bytes * traffic.edge_bytes_per_byte, traffic.latency, [] {});
  sim.run();
  return sim.now().seconds() * 1e3;
}

double all_reduce_ms(const Topology& t, double bytes) {
  return collective_time(t, {CollectiveOp::kAllReduce, {0, 1}, bytes, CollectiveAlgorithm::kAuto})
             .seconds() *
         1e3;
}

TEST_CASE("an all-to-all across NICs and a gradient reduction on the same NICs take T1 + T2") {
  // Two p5.48xlarge, one GPU each: the all-to-all's pair and the all-reduce's ring cross the same
  // NICs. Each alone saturates them (T1, T2); started together and sharing them max-min fairly,
  // the two end when the NICs have carried both: T1 + T2 after their start (to the latencies).
  auto t = shipped_cluster("aws.p5.48xlarge", 2, 1);
  const double bytes = 2e9;
  const double t1 = pair_traffic_ms(*t, bytes);
  // A bucket all-reducing as long as the all-to-all's traffic.
  const double bucket = bytes / 2 / t->all_to_all_bandwidth_fraction();
  const double t2 = all_reduce_ms(*t, bucket);
  REQUIRE(t2 == Approx(t1).epsilon(0.02));
  // The all-to-all's time alone, its traffic's and more (an NVLink part, a kernel floor): 1.5 T1.
  const double compute = 1.5 * t1, alone = 1.5 * t1;
  const PipelineTimeline run =
      simulate_pipeline(all_to_all_plan(compute, alone, bytes, bucket), *t);
  const double backward_end = run.stages[0].last_backward_end.seconds() * 1e3;
  CHECK(backward_end - 1 - compute - alone == Approx(t2).epsilon(0.01));
  CHECK(run.stages[0].expert_network_wait.seconds() * 1e3 == Approx(t2).epsilon(0.01));
  // Without the bucket beside it (all gradients in one after the backward) it takes its time alone.
  PipelinePlan lone = all_to_all_plan(compute, alone, bytes, bucket);
  lone.work[0].gradient_buckets = 1;
  const PipelineTimeline quiet = simulate_pipeline(lone, *t);
  CHECK(quiet.stages[0].last_backward_end == ms(1 + compute + alone));
  CHECK(quiet.stages[0].expert_network_wait == Picoseconds(0));
}

TEST_CASE("an all-to-all inside one NVLink domain keeps its time alone beside the reduction") {
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  PipelinePlan plan = all_to_all_plan(3, 3, 2e9, 1e9);
  const PipelineTimeline run = simulate_pipeline(plan, *t);
  plan.work[0].chunk_backward_all_to_alls = {{}};
  const PipelineTimeline without = simulate_pipeline(plan, *t);
  CHECK(run.step == without.step);
  CHECK(run.stages[0].last_backward_end == without.stages[0].last_backward_end);
  CHECK(run.stages[0].expert_network_wait == Picoseconds(0));
}

TEST_CASE("more NIC bandwidth per GPU never slows the all-to-all beside the reduction") {
  // The same stage on two nodes of one GPU each: a p4d.24xlarge's GPU reaches the fabric through
  // one 100 Gbit/s EFA NIC, a p5.48xlarge's through 400 Gbit/s (the plan's times are the same).
  const PipelinePlan plan = all_to_all_plan(3, 3, 1e9, 5e8);
  const PipelineTimeline slow = simulate_pipeline(plan, *shipped_cluster("aws.p4d.24xlarge", 2, 1));
  const PipelineTimeline fast = simulate_pipeline(plan, *shipped_cluster("aws.p5.48xlarge", 2, 1));
  CHECK(slow.stages[0].expert_network_wait > Picoseconds(0));
  CHECK(fast.stages[0].expert_network_wait < slow.stages[0].expert_network_wait);
  CHECK(fast.stages[0].last_backward_end < slow.stages[0].last_backward_end);
  CHECK(fast.step <= slow.step);
}

TEST_CASE("skipping the steady state leaves a step with all-to-alls on the network as it is") {
  // 1F1B on two stages of two replicas across two p5.48xlarge (two GPUs each: a stage's expert
  // group crosses the nodes), 16 micro-batches, all-to-alls in both passes, buckets beside them.
  auto t = shipped_cluster("aws.p5.48xlarge", 2, 2);
  PipelinePlan plan = all_to_all_plan(2, 1, 5e8, 2e8);
  plan.stages = 2;
  plan.micro_batches = 16;
  plan.activation_bytes = 5e7;
  plan.work[0].chunk_forward_all_to_alls = {{{ms(0.2), ms(0.3), "dispatch", 2e8}}};
  plan.work[0].forward = ms(1);
  plan.work.push_back(plan.work[0]);
  const PipelineTimeline skipped = simulate_pipeline(plan, *t);
  const PipelineTimeline full = simulate_pipeline(plan, *t, nullptr, {true, false});
  CHECK(skipped.tasks_skipped > 0);
  CHECK(full.tasks_skipped == 0);
  CHECK(skipped.step == full.step);
  for (int r = 0; r < 2; ++r) {
    CHECK(skipped.stages[r].end == full.stages[r].end);
    CHECK(skipped.stages[r].expert_network_wait == full.stages[r].expert_network_wait);
    CHECK(skipped.stages[r].busy == full.stages[r].busy);
  }
  CHECK(full.stages[0].expert_network_wait > Picoseconds(0));
}

TEST_CASE("tensor-parallel rank 0's all-to-alls stand for every rank's on a replicated network") {
  // TP 2 = ETP 2 on two p5.48xlarge of two GPUs each: the replicas' tensor-parallel pairs sit on
  // different nodes, and each rank's expert group {rank, rank + 2} crosses them. Simulating rank
  // 0's traffic for both gives what simulating both gives; with ETP 1 (groups {0, 1, 2, 3} that
  // rank 0's cannot stand for) the step is simulated rank by rank, as without the shortcut.
  auto t = shipped_cluster("aws.p5.48xlarge", 2, 2);
  for (int etp : {2, 1}) {
    INFO("ETP " << etp);
    PipelinePlan plan = all_to_all_plan(2, 1, 5e8, 2e8);
    plan.tensor_parallel = 2;
    plan.experts = {etp, 4 / etp, 4};
    const PipelineTimeline one = simulate_pipeline(plan, *t);
    const PipelineTimeline every = simulate_pipeline(plan, *t, nullptr, {false, true});
    CHECK(one.stages[0].expert_network_wait > Picoseconds(0));
    CHECK(one.step == every.step);
    CHECK(one.stages[0].expert_network_wait == every.stages[0].expert_network_wait);
  }
}

// One ZeRO-3 stage of two data-parallel replicas (GPUs 0 and 1), EP 2 over them, one micro-batch,
// one layer: a forward of `all_to_all` ms, its all-to-all of `bytes` per GPU alone, then `compute`
// ms, beside which the backward's gather of `gather_bytes` is prefetched (`prefetch` layers).
PipelinePlan zero3_all_to_all_plan(double compute, double all_to_all, double bytes,
                                   double gather_bytes, int prefetch = 1) {
  PipelinePlan plan;
  plan.data_parallel = 2;
  plan.activation_bytes = 1;
  plan.experts = {1, 2, 2};
  StageWork w{ms(all_to_all + compute), ms(1), Picoseconds(0)};
  w.zero3.units = 1;
  w.zero3.unit_gather_bytes = gather_bytes;
  w.zero3.unit_gradient_bytes = 1e6;
  w.zero3.prefetch_units = prefetch;
  Zero3ExpertAllToAlls& experts = w.zero3.expert_all_to_alls;
  experts.layers = 1;
  experts.forward = w.forward;
  experts.forward_spans = {{Picoseconds(0), ms(all_to_all), "dispatch", bytes}};
  plan.work = {w};
  return plan;
}

double all_gather_ms(const Topology& t, double bytes) {
  return collective_time(t, {CollectiveOp::kAllGather, {0, 1}, bytes, CollectiveAlgorithm::kAuto})
             .seconds() *
         1e3;
}

TEST_CASE("ZeRO-3: an all-to-all across NICs and a layer's gather on the same NICs take T1 + T2") {
  // Two p5.48xlarge, one GPU each, as above: the forward's all-to-all starts with the backward's
  // prefetched gather, each saturating the NICs alone (T1, T2), and its traffic arrives once the
  // NICs have carried both: it waits T2 more than alone. Without the prefetch beside it, nothing.
  auto t = shipped_cluster("aws.p5.48xlarge", 2, 1);
  const double bytes = 2e9;
  const double t1 = pair_traffic_ms(*t, bytes);
  // Each rank gathers the half it lacks: as many bytes over its NIC as the all-to-all's pair.
  const double gather = bytes / t->all_to_all_bandwidth_fraction();
  const double t2 = all_gather_ms(*t, gather);
  REQUIRE(t2 == Approx(t1).epsilon(0.02));
  const double compute = 1.5 * t1, alone = 1.5 * t1;
  const PipelineTimeline run =
      simulate_pipeline(zero3_all_to_all_plan(compute, alone, bytes, gather), *t);
  CHECK(run.stages[0].expert_network_wait.seconds() * 1e3 == Approx(t2).epsilon(0.01));
  // The first gather alone, the all-to-all beside the second, the compute, the backward.
  CHECK(run.stages[0].last_backward_end.seconds() * 1e3 ==
        Approx(t2 + t2 + alone + compute + 1).epsilon(0.01));
  const PipelineTimeline quiet =
      simulate_pipeline(zero3_all_to_all_plan(compute, alone, bytes, gather, 0), *t);
  CHECK(quiet.stages[0].expert_network_wait == Picoseconds(0));
}

TEST_CASE("ZeRO-3: an all-to-all inside one NVLink domain keeps its closed form") {
  // Both GPUs on one p5.48xlarge: the step is the one whose all-to-all stays inside the compute,
  // to the picosecond.
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  PipelinePlan plan = zero3_all_to_all_plan(3, 3, 2e9, 2e9);
  const PipelineTimeline run = simulate_pipeline(plan, *t);
  plan.work[0].zero3.expert_all_to_alls = {};
  const PipelineTimeline without = simulate_pipeline(plan, *t);
  CHECK(run.step == without.step);
  CHECK(run.stages[0].last_backward_end == without.stages[0].last_backward_end);
  CHECK(run.stages[0].parameter_wait == without.stages[0].parameter_wait);
  CHECK(run.stages[0].expert_network_wait == Picoseconds(0));
}

TEST_CASE("ZeRO-3: more NIC bandwidth per GPU never slows the all-to-all beside the gathers") {
  // As above for the reduction: one GPU per p4d.24xlarge (100 Gbit/s) or p5.48xlarge (400).
  const PipelinePlan plan = zero3_all_to_all_plan(3, 3, 1e9, 1e9);
  const PipelineTimeline slow = simulate_pipeline(plan, *shipped_cluster("aws.p4d.24xlarge", 2, 1));
  const PipelineTimeline fast = simulate_pipeline(plan, *shipped_cluster("aws.p5.48xlarge", 2, 1));
  CHECK(slow.stages[0].expert_network_wait > Picoseconds(0));
  CHECK(fast.stages[0].expert_network_wait < slow.stages[0].expert_network_wait);
  CHECK(fast.stages[0].last_backward_end < slow.stages[0].last_backward_end);
  CHECK(fast.step <= slow.step);
}

TEST_CASE("ZeRO-3: tensor-parallel rank 0's all-to-alls stand for every rank's") {
  // As for the reduction above: TP 2 = ETP 2 on two p5.48xlarge of two GPUs each, each rank's
  // expert group {rank, rank + 2} across the nodes beside its gathers over data parallelism.
  auto t = shipped_cluster("aws.p5.48xlarge", 2, 2);
  PipelinePlan plan = zero3_all_to_all_plan(2, 1, 5e8, 1e9);
  plan.tensor_parallel = 2;
  plan.experts = {2, 2, 4};
  const PipelineTimeline one = simulate_pipeline(plan, *t);
  const PipelineTimeline every = simulate_pipeline(plan, *t, nullptr, {false, true});
  CHECK(one.stages[0].expert_network_wait > Picoseconds(0));
  CHECK(one.step == every.step);
  CHECK(one.stages[0].expert_network_wait == every.stages[0].expert_network_wait);
}

}  // namespace
}  // namespace clustersim
