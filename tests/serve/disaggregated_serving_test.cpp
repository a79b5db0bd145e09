// Tests of disaggregated serving (sim/serve/serving_simulation's simulate_disaggregated,
// kv_transfer, and the disaggregation fields of a serving scenario): closed forms of one request
// on an idle deployment, conservation of the KV bytes, contention on a shared link, decode
// iterations without prefills, and bad inputs named at file:line:col.
#include <catch2/catch.hpp>
#include <limits>

#include "sim/serve/serving_simulation.h"
#include "tests/serve/serve_fixture.h"
#include "tests/testing/cluster.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::load_serving_text;
using testing::single_gpu_inputs;

// One prompt of `input` tokens prefilled in one iteration (causal pairs n (n + 1) / 2).
IterationWork prefill_work(int64_t input) {
  IterationWork w{input, 1, input * (input + 1) / 2.0, 0};
  w.window_attention_pairs = w.attention_pairs;
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
