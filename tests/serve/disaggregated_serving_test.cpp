// Tests of disaggregated serving (sim/serve/serving_simulation's simulate_disaggregated,
// kv_transfer, and the disaggregation fields of a serving scenario): closed forms of one request
// on an idle deployment, conservation of the KV bytes, contention on a shared link, decode
// iterations without prefills, and bad inputs named at file:line:col.
#include <catch2/catch.hpp>
#include <limits>

#include "sim/net/inter_pool_topology.h"
#include "sim/serve/serving_cost.h"
#include "sim/serve/serving_simulation.h"
#include "sim/serve/serving_space.h"
#include "tests/serve/serve_fixture.h"
#include "tests/testing/cluster.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::load_serving_text;
using testing::single_gpu_inputs;

// One prompt of `input` tokens prefilled in one iteration (causal pairs n (n + 1) / 2).
IterationWork prefill_work(int64_t input) {
  IterationWork w{input, 1, 0, 0};
  add_prompt_chunk(&w, 0, input);
  return w;
}

IterationWork decode_work(int64_t context) {
  IterationWork w{1, 1, 0, static_cast<double>(context)};
  w.window_decode_context = w.decode_context;
  return w;
}

ReplicaSettings continuous(double kv_bytes_per_token) {
  ReplicaSettings settings;
  settings.kv_blocks = 4096;
  settings.kv_bytes_per_token = kv_bytes_per_token;
  return settings;
}

// The time one transfer of `bytes` alone takes from GPU `from` to GPU `to`: its route's latency,
// then the bytes at the least capacity along the route.
double lone_transfer_s(const Topology& t, int from, int to, double bytes) {
  double rate = std::numeric_limits<double>::infinity();
  for (int32_t link : t.route(from, to)) rate = std::min(rate, t.link_capacities()[link]);
  return t.route_latency(from, to).seconds() + bytes / rate;
}

// One request of 1000 prompt tokens and 8 output tokens on an idle deployment of one TP-1
// prefill replica on GPU 0 and one TP-1 decode replica on GPU `decode_gpu`:
//   TTFT = prefill(1000)                       (the prefill replica produces the first token)
//   E2E  = prefill(1000) + transfer + sum_{k=1..7} decode(context 1000 + k)
//   transfer = route latency + 1000 x KV bytes per token / least link capacity
TEST_CASE("one disaggregated request: TTFT is its prefill, E2E adds the transfer and decodes") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const double kv = model.largest_stage().kv_bytes_per_token;
  const auto topology = testing::shipped_cluster("aws.p5.48xlarge", 2, 8);
  const std::vector<Request> requests = {{0.0, 1000, 8}};
  for (const int decode_gpu : {1, 8}) {  // NVLink inside node 0; the NICs to node 1
    INFO("decode replica on GPU " << decode_gpu);
    const ServingPoolSpec prefill{&model, continuous(kv), {{0}, 1}};
    const ServingPoolSpec decode{&model, continuous(kv), {{decode_gpu}, 1}};
    const ServingOutcome o = simulate_disaggregated(requests, prefill, decode, kv, topology.get());
    const double prefill_s = model.iteration(prefill_work(1000)).seconds();
    double decode_s = 0;
    for (int k = 1; k <= 7; ++k) decode_s += model.iteration(decode_work(1000 + k)).seconds();
    const double transfer_s = lone_transfer_s(*topology, 0, decode_gpu, 1000 * kv);
    const RequestRecord& r = o.records[0];
    CHECK(r.first_token.seconds() == Approx(prefill_s).epsilon(1e-9));
    CHECK(r.kv_transfer.seconds() == Approx(transfer_s).epsilon(1e-6));
    CHECK(r.finish.seconds() == Approx(prefill_s + transfer_s + decode_s).epsilon(1e-9));
    CHECK(o.kv_bytes_sent == Approx(1000 * kv));
    CHECK(o.kv_bytes_received == o.kv_bytes_sent);
    CHECK(o.decode_prompt_iterations == 0);
  }
  // Between nodes the NICs are slower than NVLink.
  CHECK(lone_transfer_s(*topology, 0, 8, 1e9) > 2 * lone_transfer_s(*topology, 0, 1, 1e9));
}

// Pools on two instance types (prefill on 8 x H100, decode on 8 x A100) meet on the inter-pool
// network, pool i as GPU i: one request's KV cache takes the route's latency plus its bytes at the
// least of the two pools' NIC capacities, and its E2E is prefill + that + its decodes.
TEST_CASE("a KV cache between pools of two instance types crosses their NICs") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const double kv = model.largest_stage().kv_bytes_per_token;
  const Catalog& catalog = testing::shipped_catalog();
  const InterPoolLinks links =
      inter_pool_links({{catalog.instances().find("aws.p5.48xlarge")->value, 1},
                        {catalog.instances().find("aws.p4de.24xlarge")->value, 1}},
                       s::InterPoolNetwork(), nullptr, catalog);
  REQUIRE(links.error.empty());
  const auto topology = inter_pool_topology(links);
  const std::vector<Request> requests = {{0.0, 1000, 2}};
  const ServingOutcome o = simulate_disaggregated(
      requests, {&model, continuous(kv), {{0}, 1}}, {&model, continuous(kv), {{1}, 1}}, kv,
      topology.get());
  const double transfer_s = lone_transfer_s(*topology, 0, 1, 1000 * kv);
  // The A100 node's 4 x 100 Gb/s bound the route: at most 50 GB/s.
  CHECK(transfer_s > 1000 * kv / 50e9);
  CHECK(o.records[0].kv_transfer.seconds() == Approx(transfer_s).epsilon(1e-6));
  CHECK(o.records[0].finish.seconds() ==
        Approx(model.iteration(prefill_work(1000)).seconds() + transfer_s +
               model.iteration(decode_work(1001)).seconds())
            .epsilon(1e-9));
}

// A TP-2 prefill replica on GPUs 0-1 sends to a TP-4 decode replica on GPUs 8-11 over
// max(2, 4) = 4 pairs, a quarter of the bytes each (pairs 0 and 2 leave GPU 0, 1 and 3 GPU 1):
// what is sent is what is received, in total.
TEST_CASE("a KV cache split over GPU pairs arrives whole") {
  Simulation sim;
  const auto topology = testing::shipped_cluster("aws.p5.48xlarge", 2, 8);
  KvTransfers links(&sim, topology.get(), {{0}, 2}, {{8}, 4});
  bool arrived = false;
  links.send(0, 0, 4e8, [&] { arrived = true; });
  sim.run();
  CHECK(arrived);
  CHECK(links.bytes_sent() == Approx(4e8));
  CHECK(links.bytes_received() == Approx(4e8));
  // Each prefill GPU sends its half through its own NIC, two pairs sharing it.
  CHECK(sim.now().seconds() == Approx(lone_transfer_s(*topology, 0, 8, 2e8)).epsilon(1e-6));
}

// Two KV caches leaving the same GPU for two GPUs of another node share its NIC: each takes
// about twice as long as it would alone.
TEST_CASE("simultaneous KV transfers share the links they cross") {
  Simulation sim;
  const auto topology = testing::shipped_cluster("aws.p5.48xlarge", 2, 8);
  KvTransfers links(&sim, topology.get(), {{0}, 1}, {{8, 9}, 1});
  Picoseconds first, second;
  links.send(0, 0, 1e9, [&] { first = sim.now(); });
  links.send(0, 1, 1e9, [&] { second = sim.now(); });
  sim.run();
  const double alone_s = lone_transfer_s(*topology, 0, 8, 1e9);
  CHECK(first.seconds() > 1.8 * alone_s);
  CHECK(second.seconds() > 1.8 * alone_s);
}

// With a free, infinitely fast link and decode replicas that never run short of blocks, a decode
// replica only ever decodes: none of its iterations carries a prompt token, under Poisson load.
TEST_CASE("with a free, infinite link, decode iterations never include a prefill") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const double kv = model.largest_stage().kv_bytes_per_token;
  s::Traffic t;
  t.set_rate_per_s(20);
  t.set_duration_s(30);
  t.mutable_input_tokens()->set_fixed(512);
  t.mutable_output_tokens()->set_fixed(64);
  const std::vector<Request> requests = generate_requests(t, 1);
  ReplicaSettings roomy = continuous(kv);
  roomy.kv_blocks = 1 << 20;
  const ServingOutcome o = simulate_disaggregated(requests, {&model, roomy, {{0}, 1}},
                                                  {&model, roomy, {{1, 2}, 1}}, kv, nullptr);
  CHECK(o.decode_prompt_iterations == 0);
  CHECK(o.preemptions == 0);
  for (const RequestRecord& r : o.records) {
    CHECK(r.done);
    CHECK(r.kv_transfer == Picoseconds());
  }
  CHECK(o.kv_bytes_sent == Approx(requests.size() * 512 * kv));
}

const std::string kDisaggregated = R"(model: "llama3-70b"
deployment {
  instance: "aws.p5.48xlarge"
  quantization { weights: FP8 }
  disaggregation {
    prefill { tensor_parallel: 8 replicas: 1 }
    decode { tensor_parallel: 8 replicas: 3 }
  }
}
traffic {
  rate_per_s: 10
  input_tokens { fixed: 2048 }
  output_tokens { fixed: 256 }
}
)";

TEST_CASE("a disaggregated serving scenario loads") {
  auto t = load_serving_text(kDisaggregated);
  INFO(t->messages());
  CHECK(t->loaded != nullptr);
}

// The shapes are the colocated ones (sweep.replicas given), then prefill x decode replicas, the
// decode axis fastest: 3 + 2 x 3 deployments.
TEST_CASE("the pool-size axes sweep every split beside the colocated replicas") {
  auto t = load_serving_text(kDisaggregated + "sweep { replicas: [2, 3, 4] prefill_replicas: "
                                              "[1, 2] decode_replicas: [1, 2, 3] }\n");
  REQUIRE(t->loaded != nullptr);
  const ServingSpace space(*t->loaded);
  REQUIRE(space.size() == 9);
  const ServingConfiguration colocated = space.at(2);
  CHECK_FALSE(colocated.prefill.has_value());
  CHECK(colocated.replicas == 4);
  const ServingConfiguration split = space.at(5);  // the third split: 1 prefill, 3 decode
  REQUIRE(split.prefill.has_value());
  CHECK(split.prefill->replicas == 1);
  CHECK(split.replicas == 3);
  CHECK(split.tensor_parallel == 8);
  CHECK(split.gpus() == 32);
  // Without sweep.replicas, only the splits.
  CHECK(ServingSpace(*load_serving_text(kDisaggregated + "sweep { decode_replicas: [1, 2] }\n")
                          ->loaded)
            .size() == 2);
}

TEST_CASE("autoscaling a disaggregated deployment is an error at autoscaling") {
  std::string rates = "1";
  for (int hour = 1; hour < 24; ++hour) rates += ", 1";
  auto t = load_serving_text(kDisaggregated + "autoscaling { hourly_rate_per_s: [" + rates +
                             "] }\n");
  CHECK(t->loaded == nullptr);
  CHECK(t->messages().find("autoscaling: scales colocated replicas: not simulated with "
                           "deployment.disaggregation") != std::string::npos);
}

// Replicas are placed in GPU order, the prefill pool first: two TP-4 prefill replicas fill one
// 8-GPU node and three TP-8 decode replicas take a node each (4 nodes, billed at one price); a
// prefill pool on its own instance type takes nodes of its own, each billed at its price.
TEST_CASE("a disaggregated deployment's nodes and price cover both pools") {
  std::string text = kDisaggregated;
  text.replace(text.find("prefill { tensor_parallel: 8 replicas: 1 }"), 42,
               "prefill { tensor_parallel: 4 replicas: 2 }");
  auto t = load_serving_text(text);
  REQUIRE(t->loaded != nullptr);
  Diagnostics diagnostics;
  const Catalog& catalog = testing::shipped_catalog();
  auto prices = load_serving_prices(*t->loaded, catalog, nullptr, &diagnostics);
  REQUIRE(prices != nullptr);
  const auto per_hour = [&](const char* name) {
    return prices->book.price(*catalog.instances().find(name)->value, s::ON_DEMAND)->per_hour;
  };
  ServingConfiguration c = ServingSpace(*t->loaded).at(0);
  REQUIRE(c.prefill.has_value());
  const DeploymentPlacement placement = deployment_placement(c);
  CHECK(placement.prefill.first_gpu == std::vector<int>{0, 4});
  CHECK(placement.decode.first_gpu == std::vector<int>{8, 16, 24});
  CHECK(c.nodes() == 4);
  CHECK(*deployment_per_hour(*prices, c, s::ON_DEMAND) ==
        Approx(4 * per_hour("aws.p5.48xlarge")));
  c.instance = catalog.instances().find("aws.p4de.24xlarge")->value;  // the decode pool's
  CHECK(c.split_nodes());
  CHECK(deployment_placement(c).decode.first_gpu == std::vector<int>{0, 8, 16});
  CHECK(c.nodes() == 4);
  CHECK(*deployment_per_hour(*prices, c, s::ON_DEMAND) ==
        Approx(per_hour("aws.p5.48xlarge") + 3 * per_hour("aws.p4de.24xlarge")));
}

TEST_CASE("a pool's instance without the deployment's format is an error at it") {
  std::string text = kDisaggregated;
  text.replace(text.find("decode { tensor_parallel: 8"), 27,
               "decode { instance: \"aws.p4de.24xlarge\" tensor_parallel: 8");
  auto t = load_serving_text(text);
  CHECK(t->loaded == nullptr);
  CHECK(t->messages() == "s.textproto:7:14: deployment.disaggregation.decode.instance: GPU "
                         "\"A100-SXM4-80GB\" has no FP8 support\n");
}

TEST_CASE("a pool of zero replicas is an error at its field") {
  std::string text = kDisaggregated;
  text.replace(text.find("replicas: 1"), 11, "replicas: 0");
  auto t = load_serving_text(text);
  CHECK(t->loaded == nullptr);
  CHECK(t->messages() ==
        "s.textproto:6:34: deployment.disaggregation.prefill.replicas: must be >= 1, got 0\n");
}

TEST_CASE("a decode pool whose GPUs cannot hold one request is an error at the pool") {
  std::string text = kDisaggregated;
  text.replace(text.find("decode { tensor_parallel: 8"), 27, "decode { tensor_parallel: 1");
  text.replace(text.find("weights: FP8"), 12, "weights: FP16");
  auto t = load_serving_text(text);
  CHECK(t->loaded == nullptr);
  CHECK(t->messages() ==
        "s.textproto:7:5: deployment.disaggregation.decode: a decode replica of TP 1 PP 1 on "
        "\"aws.p5.48xlarge\" cannot hold one request's KV cache: 131.4 GiB of weights + 0.7 GiB "
        "for 2304 tokens > 80.0 GiB per GPU\n");
}

TEST_CASE("disaggregation with static batching is an error at the batching") {
  std::string text = kDisaggregated;
  text.replace(text.find("  quantization"), 0, "  scheduler { batching: STATIC }\n");
  auto t = load_serving_text(text);
  CHECK(t->loaded == nullptr);
  INFO(t->messages());
  CHECK(t->messages().find("s.textproto:4:15: deployment.scheduler.batching: a disaggregated "
                           "deployment hands each request") != std::string::npos);
}

TEST_CASE("pool-size axes without disaggregation are an error at the axis") {
  auto t = load_serving_text(R"(model: "llama2-7b"
deployment { instance: "aws.p5.48xlarge" }
traffic { rate_per_s: 1 input_tokens { fixed: 8 } output_tokens { fixed: 8 } }
sweep { decode_replicas: [1, 2] }
)");
  CHECK(t->loaded == nullptr);
  CHECK(t->messages() ==
        "s.textproto:4:9: sweep.decode_replicas: sizes the pools of a disaggregated deployment: "
        "set deployment.disaggregation\n");
}

}  // namespace
}  // namespace clustersim
