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
  const ExpertNetworkTraffic plain = expert_network_traffic(*two, ep16, first_gpus(16), {}, 1, 1);
  REQUIRE(plain.kinds.size() == 1);
  CHECK(plain.kinds[0].edges.size() == 16 * 8);
  CHECK(plain.kinds[0].edge_bytes_per_byte == Approx(across / 16));
  // Deduplicated per node: the rails {g, g + 8} each carry S x share / 2 per direction.
  const ExpertNetworkTraffic rails =
      expert_network_traffic(*two, ep16, first_gpus(16), {0, 0, 0.5}, 1, 1);
  REQUIRE(rails.kinds.size() == 1);
  CHECK(rails.kinds[0].edges.size() == 8 * 2);
  CHECK(rails.kinds[0].edge_bytes_per_byte == Approx(across * 0.5 / 2));
  for (auto [from, to] : rails.kinds[0].edges) CHECK(to == (from + 8) % 16);
  // No share for groups over two domains: the plain all-to-all.
  const ExpertNetworkTraffic unshared =
      expert_network_traffic(*two, ep16, first_gpus(16), {0, 0, 0, 0.5}, 1, 1);
  REQUIRE(unshared.kinds.size() == 1);
  CHECK(unshared.kinds[0].edges.size() == 16 * 8);
  // EP 8 on each node: no pair leaves its domain.
  const ExpertLayout ep8{1, 8, 16};
  CHECK(expert_network_traffic(*two, ep8, first_gpus(16), {0, 0, 0.5}, 1, 1).kinds.empty());
}

// Four nodes of four GPUs (four NVLink domains) and a stage of 12 GPUs in three EP 4 groups that
// split over the domains in three ways: {0, 1, 4, 5} two GPUs in each of two domains (rails
// {0, 4} and {1, 5}), {2, 6, 10, 14} one in each of four (one rail), {8, 9, 11, 13} three and one
// (uneven: a plain all-to-all), as a stage whose GPUs start off a domain's edge splits its groups.
std::vector<int> mixed_stage_gpus() { return {0, 1, 4, 5, 2, 6, 10, 14, 8, 9, 11, 13}; }

TEST_CASE("groups split unevenly and rails over different domains each move their own bytes") {
  auto four = shipped_cluster("aws.p5.48xlarge", 4, 4);
  REQUIRE(four->domain_of(3) != four->domain_of(4));
  const double across = 1 / four->all_to_all_bandwidth_fraction();
  const std::vector<double> shares = {0, 0, 0.7, 0, 0.9};  // by domains spanned
  const ExpertNetworkTraffic traffic =
      expert_network_traffic(*four, {1, 4, 12}, mixed_stage_gpus(), shares, 1, 1);
  // Three kinds, by bytes per byte ascending: the four-domain rail's 12 pairs (0.9 / 4), the
  // uneven group's 6 crossing pairs (1 / 4), the two-domain rails' 4 pairs (0.7 / 2). One value
  // for every pair (the last group's) would have been wrong for 16 of the 22.
  REQUIRE(traffic.kinds.size() == 3);
  CHECK(traffic.kinds[0].edge_bytes_per_byte == Approx(across * 0.9 / 4));
  CHECK(traffic.kinds[0].edges.size() == 12);
  CHECK(traffic.kinds[1].edge_bytes_per_byte == Approx(across / 4));
  CHECK(traffic.kinds[1].edges.size() == 6);
  CHECK(traffic.kinds[2].edge_bytes_per_byte == Approx(across * 0.7 / 2));
  const std::vector<std::pair<int, int>> rails = {{0, 4}, {4, 0}, {1, 5}, {5, 1}};
  CHECK(traffic.kinds[2].edges == rails);
  // Every byte sent is received, each GPU's the bytes of its own pairs.
  Simulation sim;
  Network network(&sim, four.get());
  const double bytes = 1e6;
  for (const ExpertNetworkTraffic::Kind& kind : traffic.kinds) {
    network.start_prepared(network.prepare_coupled(kind.edges), bytes * kind.edge_bytes_per_byte,
                           traffic.latency, [] {});
  }
  sim.run();
  const auto total = [](const std::vector<double>& v) {
    return std::accumulate(v.begin(), v.end(), 0.0);
  };
  CHECK(total(network.bytes_sent()) ==
        Approx(bytes * across * (12 * 0.9 / 4 + 6.0 / 4 + 4 * 0.7 / 2)));
  CHECK(total(network.bytes_received()) == Approx(total(network.bytes_sent())));
  CHECK(network.bytes_sent()[0] == Approx(bytes * across * 0.7 / 2));
  CHECK(network.bytes_sent()[2] == Approx(3 * bytes * across * 0.9 / 4));
  CHECK(network.bytes_sent()[8] == Approx(bytes * across / 4));  // to 13 only
  CHECK(network.bytes_received()[13] == Approx(3 * bytes * across / 4));
  CHECK(network.bytes_sent()[3] == 0);  // in no group
  // Without the deduplicating dispatcher every group is a plain all-to-all: one kind.
  const ExpertNetworkTraffic plain =
      expert_network_traffic(*four, {1, 4, 12}, mixed_stage_gpus(), {}, 1, 1);
  REQUIRE(plain.kinds.size() == 1);
  CHECK(plain.kinds[0].edges.size() == 4 * 2 + 12 + 6);
}

TEST_CASE("prepared transfers alone together take what they take started together") {
  auto four = shipped_cluster("aws.p5.48xlarge", 4, 4);
  const ExpertNetworkTraffic traffic =
      expert_network_traffic(*four, {1, 4, 12}, mixed_stage_gpus(), {0, 0, 0.7, 0, 0.9}, 1, 1);
  REQUIRE(traffic.kinds.size() == 3);
  Simulation sim;
  Network network(&sim, four.get());
  std::vector<Network::PreparedLoad> loads;
  for (const ExpertNetworkTraffic::Kind& kind : traffic.kinds) {
    loads.push_back({network.prepare_coupled(kind.edges), 4e8 * kind.edge_bytes_per_byte});
  }
  const Picoseconds together = network.prepared_time_alone(loads, traffic.latency);
  // The last of them ends when they do started together on this (idle) network.
  Picoseconds last;
  for (const Network::PreparedLoad& load : loads) {
    network.start_prepared(load.prepared, load.bytes_per_edge, traffic.latency,
                           [&] { last = sim.now(); });
  }
  sim.run();
  CHECK(together == last);
  // The groups' GPUs, so their NICs, are disjoint, the fabric non-blocking: the kinds take as
  // long together as the longest alone (not the first's time, nor the sum).
  Picoseconds longest, sum;
  for (const Network::PreparedLoad& load : loads) {
    const Picoseconds alone = network.prepared_time_alone({load}, traffic.latency);
    longest = std::max(longest, alone);
    sum += alone;
  }
  CHECK(together == longest);
  CHECK(together < sum);
  // Two on the same links share them: together as long as one with the bytes of both.
  const Network::PreparedLoad rail = loads[2];
  const double twice =
      network.prepared_time_alone({{rail.prepared, 2 * rail.bytes_per_edge}}, traffic.latency)
          .seconds();
  CHECK(network.prepared_time_alone({rail, rail}, traffic.latency).seconds() ==
        Approx(twice).epsilon(1e-9));
  CHECK(network.prepared_time_alone({rail}, traffic.latency).seconds() < 0.6 * twice);
}

TEST_CASE("a prepared coupled transfer books every byte sent as received") {
  auto two = shipped_cluster("aws.p5.48xlarge", 2);
  const ExpertNetworkTraffic traffic =
      expert_network_traffic(*two, {1, 16, 16}, first_gpus(16), {}, 1, 1);
  Simulation sim;
  Network network(&sim, two.get());
  const int32_t prepared = network.prepare_coupled(traffic.kinds.at(0).edges);
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
  const ExpertNetworkTraffic traffic = expert_network_traffic(t, {1, 2, 2}, {0, 1}, {}, 1, 1);
  const ExpertNetworkTraffic::Kind& kind = traffic.kinds.at(0);
  Simulation sim;
  Network network(&sim, &t);
  network.start_coupled(kind.edges, bytes * kind.edge_bytes_per_byte, traffic.latency, [] {});
  sim.run();
  return sim.now().seconds() * 1e3;
}

// Collective `op` of `bytes` between GPUs 0 and 1 alone, in ms.
double pair_collective_ms(const Topology& t, CollectiveOp op, double bytes) {
  return collective_time(t, {op, {0, 1}, bytes, CollectiveAlgorithm::kAuto}).seconds() * 1e3;
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
  const double t2 = pair_collective_ms(*t, CollectiveOp::kAllReduce, bucket);
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

TEST_CASE("an all-to-all of several kinds ends when the last kind of its traffic has arrived") {
  // Four nodes of six GPUs, EP 8 over 24 data-parallel ranks, the deduplicating dispatcher (rail
  // share 0.5 over two domains): {0..7} splits 6 + 2 and {16..23} 2 + 6 (plain, S / 8 a pair,
  // GPU 6 sending to six), {8..15} 4 + 4 (rails {g, g + 4}, S x 0.5 / 2 a pair): two kinds, the
  // plain one the longer. Timed alone shorter than its traffic, on a quiet network (one bucket,
  // after the backward) the all-to-all ends when both kinds have arrived: their time together.
  auto t = shipped_cluster("aws.p5.48xlarge", 4, 6);
  const double bytes = 2e9;
  PipelinePlan plan = all_to_all_plan(1, 0.01, bytes, 1e6);
  plan.data_parallel = 24;
  plan.experts = {1, 8, 24};
  plan.expert_rail_shares = {0, 0, 0.5};
  plan.work[0].gradient_buckets = 1;
  std::vector<int> gpus(24);
  std::iota(gpus.begin(), gpus.end(), 0);
  const ExpertNetworkTraffic traffic =
      expert_network_traffic(*t, plan.experts, gpus, plan.expert_rail_shares, 1, 1);
  REQUIRE(traffic.kinds.size() == 2);
  Simulation idle;
  Network network(&idle, t.get());
  std::vector<Network::PreparedLoad> loads;
  for (const ExpertNetworkTraffic::Kind& kind : traffic.kinds) {
    loads.push_back({network.prepare_coupled(kind.edges), bytes * kind.edge_bytes_per_byte});
  }
  const double together = network.prepared_time_alone(loads, traffic.latency).seconds() * 1e3;
  const double rails = network.prepared_time_alone({loads[1]}, traffic.latency).seconds() * 1e3;
  REQUIRE(rails < 0.5 * together);
  const PipelineTimeline run = simulate_pipeline(plan, *t);
  CHECK(run.stages[0].last_backward_end.seconds() * 1e3 == Approx(1 + 1 + together).epsilon(1e-9));
  CHECK(run.stages[0].expert_network_wait.seconds() * 1e3 == Approx(together - 0.01).epsilon(1e-9));
}

// `plan`'s stage on two nodes of one GPU each: a p4d.24xlarge's GPU reaches the fabric through one
// 100 Gbit/s EFA NIC, a p5.48xlarge's through 400 Gbit/s (the plan's times are the same). The
// all-to-all waits on the slower NICs, less on the faster, and the step is never longer there.
void check_more_nic_bandwidth_never_slower(const PipelinePlan& plan) {
  const PipelineTimeline slow = simulate_pipeline(plan, *shipped_cluster("aws.p4d.24xlarge", 2, 1));
  const PipelineTimeline fast = simulate_pipeline(plan, *shipped_cluster("aws.p5.48xlarge", 2, 1));
  CHECK(slow.stages[0].expert_network_wait > Picoseconds(0));
  CHECK(fast.stages[0].expert_network_wait < slow.stages[0].expert_network_wait);
  CHECK(fast.stages[0].last_backward_end < slow.stages[0].last_backward_end);
  CHECK(fast.step <= slow.step);
}

TEST_CASE("more NIC bandwidth per GPU never slows the all-to-all beside the reduction") {
  check_more_nic_bandwidth_never_slower(all_to_all_plan(3, 3, 1e9, 5e8));
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
    CHECK(skipped.stages[r].expert_scale_out == full.stages[r].expert_scale_out);
    CHECK(skipped.stages[r].busy == full.stages[r].busy);
  }
  CHECK(full.stages[0].expert_network_wait > Picoseconds(0));
  // The traffic across the nodes is in flight for its time alone and what the buckets beside it
  // added: more than the wait, at most the all-to-alls' whole time (16 forward ones of 0.3 ms, 16
  // backward ones of 1 ms, and the wait).
  CHECK(full.stages[0].expert_scale_out > full.stages[0].expert_network_wait);
  CHECK(full.stages[0].expert_scale_out <=
        ms(16 * (0.3 + 1)) + full.stages[0].expert_network_wait);
}

// `plan` at TP 2 and ETP `etp` on two p5.48xlarge of two GPUs each (the replicas' tensor-parallel
// pairs on different nodes): simulating tensor-parallel rank 0's all-to-alls for every rank gives
// what simulating every rank's gives, and they wait on the network.
void check_rank_zero_stands_for_every_rank(PipelinePlan plan, int etp) {
  auto t = shipped_cluster("aws.p5.48xlarge", 2, 2);
  plan.tensor_parallel = 2;
  plan.experts = {etp, 4 / etp, 4};
  const PipelineTimeline one = simulate_pipeline(plan, *t);
  const PipelineTimeline every = simulate_pipeline(plan, *t, nullptr, {false, true});
  CHECK(one.stages[0].expert_network_wait > Picoseconds(0));
  CHECK(one.step == every.step);
  CHECK(one.stages[0].expert_network_wait == every.stages[0].expert_network_wait);
}

TEST_CASE("tensor-parallel rank 0's all-to-alls stand for every rank's on a replicated network") {
  // ETP 2: each rank's expert group {rank, rank + 2} crosses the nodes, rank 0's stands for rank
  // 1's; with ETP 1 (groups {0, 1, 2, 3} that rank 0's cannot stand for) the step is simulated
  // rank by rank, as without the shortcut.
  for (int etp : {2, 1}) {
    INFO("ETP " << etp);
    check_rank_zero_stands_for_every_rank(all_to_all_plan(2, 1, 5e8, 2e8), etp);
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

TEST_CASE("ZeRO-3: an all-to-all across NICs and a layer's gather on the same NICs take T1 + T2") {
  // Two p5.48xlarge, one GPU each, as above: the forward's all-to-all starts with the backward's
  // prefetched gather, each saturating the NICs alone (T1, T2), and its traffic arrives once the
  // NICs have carried both: it waits T2 more than alone. Without the prefetch beside it, nothing.
  auto t = shipped_cluster("aws.p5.48xlarge", 2, 1);
  const double bytes = 2e9;
  const double t1 = pair_traffic_ms(*t, bytes);
  // Each rank gathers the half it lacks: as many bytes over its NIC as the all-to-all's pair.
  const double gather = bytes / t->all_to_all_bandwidth_fraction();
  const double t2 = pair_collective_ms(*t, CollectiveOp::kAllGather, gather);
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
  check_more_nic_bandwidth_never_slower(zero3_all_to_all_plan(3, 3, 1e9, 1e9));
}

TEST_CASE("ZeRO-3: tensor-parallel rank 0's all-to-alls stand for every rank's") {
  // As for the reduction above, at ETP 2, beside the gathers over data parallelism.
  check_rank_zero_stands_for_every_rank(zero3_all_to_all_plan(2, 1, 5e8, 1e9), 2);
}

}  // namespace
}  // namespace clustersim
