// Tests of the MoE token exchange of attention data parallelism (sim/serve/moe_token_exchange):
// TensorRT-LLM 1.0 / 1.1's choice, the all-to-all's closed form on one NVSwitch, its copies'
// balance and monotonicity, and the deployment field's located errors.
#include <catch2/catch.hpp>

#include "sim/net/collective.h"
#include "sim/serve/attention_data_parallel.h"
#include "sim/serve/moe_token_exchange.h"
#include "tests/serve/serve_fixture.h"
#include "tests/testing/cluster.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::load_serving_text;

TEST_CASE("the exchange TensorRT-LLM 1.0 and 1.1 pick under attention data parallelism") {
  // All-to-all only with more EP ranks than a token's experts, on an NVSwitch baseboard.
  CHECK(resolve_moe_token_exchange(s::MOE_TOKEN_EXCHANGE_UNSPECIFIED, 8, 1, s::NVSWITCH) ==
        s::MOE_ALL_TO_ALL);  // Llama 4 Maverick DEP 8 on H200
  CHECK(resolve_moe_token_exchange(s::MOE_TOKEN_EXCHANGE_UNSPECIFIED, 8, 8, s::NVSWITCH) ==
        s::MOE_ALL_GATHER);  // DeepSeek-R1, Qwen3 235B DEP 8: EP = top-k
  CHECK(resolve_moe_token_exchange(s::MOE_TOKEN_EXCHANGE_UNSPECIFIED, 4, 8, s::NVSWITCH) ==
        s::MOE_ALL_GATHER);  // Qwen3 235B DEP 4
  CHECK(resolve_moe_token_exchange(s::MOE_TOKEN_EXCHANGE_UNSPECIFIED, 8, 1, s::PCIE_ONLY) ==
        s::MOE_ALL_GATHER);
  CHECK(resolve_moe_token_exchange(s::MOE_ALL_TO_ALL, 8, 8, s::NVSWITCH) == s::MOE_ALL_TO_ALL);
  CHECK(resolve_moe_token_exchange(s::MOE_ALL_GATHER, 8, 1, s::NVSWITCH) == s::MOE_ALL_GATHER);
}

// A token's k distinct experts among E, E / n on each of n GPUs, reach n (1 - C(E - E/n, k) /
// C(E, k)) GPUs on average.
TEST_CASE("the GPUs a token's experts lie on") {
  CHECK(moe_destinations_per_token(128, 1, 8) == 1);
  CHECK(moe_destinations_per_token(8, 8, 8) == 8);
  CHECK(moe_destinations_per_token(4, 2, 2) == Approx(2 * (1 - 1.0 / 6)));
  double none = 1;  // DeepSeek: 8 of 256 experts on 8 GPUs
  for (int i = 0; i < 8; ++i) none *= (224.0 - i) / (256.0 - i);
  CHECK(moe_destinations_per_token(256, 8, 8) == Approx(8 * (1 - none)).epsilon(1e-12));
}

// Llama 4 Maverick's shapes: 5120 FP8 activations plus one expert id and weight a token, 16-bit
// outputs back, 128 experts top-1, on the 8 GPUs of a p5 (NVSwitch, 450 GB/s x 0.80 a direction).
MoeTokenExchangeInputs maverick(s::MoeTokenExchange kind, const Topology* topology) {
  MoeTokenExchangeInputs in;
  in.kind = kind;
  in.topology = topology;
  in.ranks = 8;
  in.dispatch_bytes_per_token = 5120 + 8;
  in.combine_bytes_per_token = 5120 * 2;
  in.experts = 128;
  in.experts_per_token = 1;
  in.overhead = Picoseconds::from_microseconds(10);
  in.most_tokens_per_gpu = 8192;
  return in;
}

// An all-to-all of S bytes a GPU among n GPUs of one NVSwitch takes S (n - 1) / n over the GPU's
// link rate plus a step's latency. With 8,192 tokens on each GPU and one expert a token, each GPU
// sends 7/8 of its 8,192 copies to the others and receives as many: S = 8,192 copies.
TEST_CASE("the all-to-all is S (n - 1) / n over the link rate on one NVSwitch") {
  const std::unique_ptr<Topology> p5 = testing::shipped_cluster("aws.p5.48xlarge", 1, 8);
  const MoeTokenExchange x(maverick(s::MOE_ALL_TO_ALL, p5.get()));
  REQUIRE(x.kind() == s::MOE_ALL_TO_ALL);
  const std::vector<int64_t> tokens(8, 8192);
  const MoeTokenExchange::Copies copies = x.copies(tokens);
  CHECK(copies.sent[3] == 8192 * 7 / 8);
  CHECK(copies.received[3] == 8192 * 7 / 8);
  const double n = 8, rate = 450e9 * 0.80, overhead = 10e-6;
  Collective probe;
  probe.op = CollectiveOp::kAllToAll;
  probe.dispatcher_kernels = true;
  probe.gpus = {0, 1, 2, 3, 4, 5, 6, 7};
  probe.bytes = 8;
  const double latency = collective_time(*p5, probe).seconds();
  REQUIRE(latency < 20e-6);
  const double combine_bytes = 8192.0 * 5120 * 2;
  CHECK(x.combine(tokens).seconds() ==
        Approx(combine_bytes * (n - 1) / n / rate + latency + overhead).epsilon(1e-3));
  // The dispatch adds the prepare kernel's count exchange (a latency and an overhead).
  const double dispatch_bytes = 8192.0 * (5120 + 8);
  CHECK(x.dispatch(tokens).seconds() ==
        Approx(dispatch_bytes * (n - 1) / n / rate + 2 * (latency + overhead)).epsilon(1e-3));
  // Against the all-gather of the same tokens, each GPU receives 7 x 8,192 tokens instead.
  const MoeTokenExchange gather(maverick(s::MOE_ALL_GATHER, p5.get()));
  CHECK(gather.dispatch(tokens).count() > 6 * x.dispatch(tokens).count());
}

// Whatever the GPUs' loads, the copies sent are the copies received; more tokens on any GPU
// never make the exchange faster; with the fake weights' routing everything goes to GPU 0.
TEST_CASE("the all-to-all's copies balance and grow with any GPU's tokens") {
  const std::unique_ptr<Topology> p5 = testing::shipped_cluster("aws.p5.48xlarge", 1, 8);
  MoeTokenExchangeInputs deepseek = maverick(s::MOE_ALL_TO_ALL, p5.get());
  deepseek.experts = 256;
  deepseek.experts_per_token = 8;
  MoeTokenExchangeInputs fake = deepseek;
  fake.fake_weights = true;
  for (const MoeTokenExchangeInputs& in : {maverick(s::MOE_ALL_TO_ALL, p5.get()), deepseek, fake}) {
    const MoeTokenExchange x(in);
    std::vector<int64_t> tokens = {1, 30, 7, 1, 500, 2, 64, 9};
    Picoseconds dispatched = x.dispatch(tokens), combined = x.combine(tokens);
    for (int step = 0; step < 24; ++step) {
      const MoeTokenExchange::Copies c = x.copies(tokens);
      double sent = 0, received = 0;
      for (int g = 0; g < 8; ++g) {
        sent += c.sent[g];
        received += c.received[g];
      }
      CHECK(sent == Approx(received).epsilon(1e-12));
      tokens[static_cast<size_t>(step * 5 % 8)] += 37 * step;
      CHECK(x.dispatch(tokens) >= dispatched);
      CHECK(x.combine(tokens) >= combined);
      dispatched = x.dispatch(tokens);
      combined = x.combine(tokens);
    }
  }
  const MoeTokenExchange x(fake);
  const MoeTokenExchange::Copies c = x.copies({4, 1, 2, 3, 0, 0, 0, 5});
  CHECK(c.received[0] == 11);
  CHECK(c.sent[0] == 0);
  CHECK(c.sent[7] == 5);
}

// The deployment's choice reaches the lockstep iteration: an all-to-all model of DeepSeek-V3 on
// 8 GPUs differs from the all-gather one only in the exchange.
TEST_CASE("the attention-DP iteration takes the chosen exchange") {
  const std::unique_ptr<Topology> p5 = testing::shipped_cluster("aws.p5.48xlarge", 1, 8);
  IterationInputs in = testing::single_gpu_inputs("deepseek-v3", "H100-SXM5-80GB",
                                                  {s::FP8, s::FP8, s::FP8});
  in.topology = p5.get();
  in.tensor_parallel = in.expert_parallel = 8;
  const AttentionDataParallelModel gather(in, {}, s::MOE_ALL_GATHER);
  const AttentionDataParallelModel a2a(in, {}, s::MOE_ALL_TO_ALL);
  REQUIRE(a2a.exchange().kind() == s::MOE_ALL_TO_ALL);
  const IterationWork w{64, 64, 0, 64 * 2048.0};
  const std::vector<IterationWork> works(8, w);
  const std::vector<int64_t> tokens(8, 64);
  CHECK(a2a.iteration(works) - gather.iteration(works) ==
        Picoseconds(58 * (a2a.dispatch(tokens) + a2a.combine(tokens) - gather.dispatch(tokens) -
                          gather.combine(tokens))
                             .count()));
}

const std::string kMaverick = R"(model: "llama4-maverick"
deployment { instance: "aws.p5en.48xlarge" tensor_parallel: 8 expert_parallel: 8
  attention_data_parallel: true moe_token_exchange: MOE_ALL_TO_ALL
  quantization { weights: FP8 activations: FP8 kv_cache: FP8 } }
traffic {
  rate_per_s: 2
  input_tokens { fixed: 1024 }
  output_tokens { fixed: 128 }
}
)";

TEST_CASE("moe_token_exchange's located errors") {
  const auto messages = [](const std::string& from, const std::string& to) {
    std::string text = kMaverick;
    text.replace(text.find(from), from.size(), to);
    return load_serving_text(text)->messages();
  };
  CHECK(load_serving_text(kMaverick)->messages().empty());
  CHECK(messages("attention_data_parallel: true ", "") ==
        "s.textproto:3:3: deployment.moe_token_exchange: applies to attention data parallelism "
        "only (deployment.attention_data_parallel true, or sweep.attention_data_parallel listing "
        "it): tensor-parallel MoE layers all-reduce their outputs\n");
  CHECK(messages("aws.p5en.48xlarge", "aws.g6e.48xlarge") ==
        "s.textproto:3:33: deployment.moe_token_exchange: MOE_ALL_TO_ALL needs the replica's "
        "GPUs on one NVSwitch (TensorRT-LLM's MNNVL kernels write into the peers' memory through "
        "it); instance \"aws.g6e.48xlarge\" has gpu_interconnect PCIE_ONLY: MOE_ALL_GATHER\n");
  CHECK(messages("MOE_ALL_TO_ALL", "MOE_ALL_GATHER").empty());
}

}  // namespace
}  // namespace clustersim
