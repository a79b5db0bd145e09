// Tests of sim/serve/replica and serving_simulation: queueing closed forms, batching, paging.
#include "sim/serve/serving_simulation.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "sim/serve/serving_metrics.h"
#include "tests/serve/serve_fixture.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::single_gpu_inputs;

std::vector<Request> poisson(double rate, double duration_s, int input, int output,
                             uint64_t seed = 7) {
  s::Traffic t;
  t.set_rate_per_s(rate);
  t.set_duration_s(duration_s);
  t.set_seed(seed);
  t.mutable_input_tokens()->set_fixed(input);
  t.mutable_output_tokens()->set_fixed(output);
  return generate_requests(t, 1);
}

// Poisson arrivals of lengths drawn uniformly from [min, max] (the traffic's default seed).
std::vector<Request> poisson_uniform(double rate, double duration_s, int input_min,
                                     int input_max, int output_min, int output_max) {
  s::Traffic t;
  t.set_rate_per_s(rate);
  t.set_duration_s(duration_s);
  t.mutable_input_tokens()->mutable_uniform()->set_min(input_min);
  t.mutable_input_tokens()->mutable_uniform()->set_max(input_max);
  t.mutable_output_tokens()->mutable_uniform()->set_min(output_min);
  t.mutable_output_tokens()->mutable_uniform()->set_max(output_max);
  return generate_requests(t, 1);
}

double mean_ttft_s(const std::vector<Request>& requests, const ServingOutcome& o) {
  double sum = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    sum += o.records[i].first_token.seconds() - requests[i].arrival_s;
  }
  return sum / static_cast<double>(requests.size());
}

// One server, one request at a time, each one prefill iteration of the same length D: an M/D/1
// queue, whose mean time in system is D + rho D / (2 (1 - rho)) (Pollaczek-Khinchine).
TEST_CASE("a single-server static queue matches the M/D/1 mean wait") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  // A static batch of one request of one output token: one prefill, the context phase's included.
  const double d = model.iteration(testing::prompts(1, 512, true)).seconds();
  ReplicaSettings settings;
  settings.batching = s::STATIC;
  settings.max_batch = 1;
  settings.static_free_bytes = 1e12;
  for (double rho : {0.5, 0.8}) {
    const std::vector<Request> requests = poisson(rho / d, 40000 * d / rho, 512, 1);
    const ServingOutcome o = simulate_serving(requests, model, settings, 1);
    INFO("rho " << rho << ", " << requests.size() << " requests");
    CHECK(mean_ttft_s(requests, o) == Approx(d + rho * d / (2 * (1 - rho))).epsilon(0.04));
  }
}

// The finish of one request of a 1000-token prompt and 2 output tokens, prefilled in chunks of
// 512 on one replica whose layers attend within `window` tokens (`chunked`: within chunks).
double one_request_finish_s(const IterationModel& model, int window, bool chunked) {
  ReplicaSettings settings;
  settings.max_tokens = 512;
  settings.chunked_prefill = true;
  settings.kv_blocks = 1000;
  settings.attention_window = window;
  settings.attention_window_chunked = chunked;
  const std::vector<Request> requests = {{0.0, 1000, 2}};
  return simulate_serving(requests, model, settings, 1).records[0].finish.seconds();
}

// A replica hands the iteration model each prompt chunk's pairs (and those over the chunk's keys,
// its end position) and each decoding sequence's context twice, the second time capped at the
// attention window: one request of a 1000-token prompt, prefilled in chunks of 512 after which it
// decodes one token at context 1001, takes as long as the iterations built by hand.
TEST_CASE("a replica counts prompt pairs and decode context within the window") {
  IterationInputs in =
      single_gpu_inputs("gpt-oss-120b", "H100-SXM5-80GB", {s::FP8, s::FP8, s::FP8});
  const IterationModel model(in);
  const int w = model.largest_stage().window_tokens;
  REQUIRE(w == 128);
  const auto pairs = [&](double n, double window) {
    return window > 0 && window < n ? window * (window + 1) / 2 + (n - window) * window
                                    : n * (n + 1) / 2;
  };
  IterationWork first{512, 0, pairs(512, 0), 0};
  first.window_attention_pairs = pairs(512, w);
  first.attention_pairs_per_key = first.attention_pairs / 512;
  first.window_attention_pairs_per_key = first.window_attention_pairs / w;
  IterationWork second{488, 1, pairs(1000, 0) - pairs(512, 0), 0};
  second.window_attention_pairs = pairs(1000, w) - pairs(512, w);
  second.attention_pairs_per_key = second.attention_pairs / 1000;
  second.window_attention_pairs_per_key = second.window_attention_pairs / w;
  IterationWork decode{1, 1, 0, 1001};
  decode.window_decode_context = w;
  const double expected_s =
      (model.iteration(first) + model.iteration(second) + model.iteration(decode)).seconds();
  CHECK(one_request_finish_s(model, w, false) == Approx(expected_s).epsilon(1e-9));
}

// The same request with a chunked window of 128 (Llama 4's kind): the prompt's pairs within each
// chunk, n c (c + 1) / 2 + r (r + 1) / 2, and the decoded token at context 1001 attends to the
// 1000 mod 128 + 1 = 105 tokens of its own chunk.
TEST_CASE("a replica counts prompt pairs and decode context within a chunked window") {
  IterationInputs in =
      single_gpu_inputs("gpt-oss-120b", "H100-SXM5-80GB", {s::FP8, s::FP8, s::FP8});
  const IterationModel model(in);
  const double c = 128;
  const auto chunked = [&](double n) {
    const double whole = std::floor(n / c), left = n - whole * c;
    return whole * c * (c + 1) / 2 + left * (left + 1) / 2;
  };
  IterationWork first{512, 0, 512.0 * 513 / 2, 0};
  first.window_attention_pairs = 4 * c * (c + 1) / 2;
  first.attention_pairs_per_key = first.attention_pairs / 512;
  first.window_attention_pairs_per_key = first.window_attention_pairs / c;
  IterationWork second{488, 1, 1000.0 * 1001 / 2 - 512.0 * 513 / 2, 0};
  second.window_attention_pairs = chunked(1000) - chunked(512);
  second.attention_pairs_per_key = second.attention_pairs / 1000;
  second.window_attention_pairs_per_key = second.window_attention_pairs / c;
  IterationWork decode{1, 1, 0, 1001};
  decode.window_decode_context = 105;
  const double expected_s =
      (model.iteration(first) + model.iteration(second) + model.iteration(decode)).seconds();
  CHECK(one_request_finish_s(model, 128, true) == Approx(expected_s).epsilon(1e-9));
}

// In-flight batching without chunking puts a prompt that arrives while another sequence decodes
// into that sequence's next iteration, whole (TensorRT-LLM's micro-batch scheduler: generation
// and context requests in one forward while their tokens fit max_num_tokens): A (1000 tokens in,
// 3 out) prefills alone; B (500 in, 1 out), arriving meanwhile, prefills in the iteration of A's
// second token, which also produces B's only one; A's third token decodes alone. So B finishes
// at T(1000 prompt) + T(500 prompt + 1 decode at context 1001), A at that + T(1 decode at 1002).
TEST_CASE("a prompt arriving during decodes joins their next iteration") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  ReplicaSettings settings;
  settings.kv_blocks = 1000;
  const std::vector<Request> requests = {{0.0, 1000, 3}, {0.001, 500, 1}};
  const ServingOutcome o = simulate_serving(requests, model, settings, 1);
  const double prefill_s = model.iteration(testing::prompts(1, 1000)).seconds();
  REQUIRE(prefill_s > 0.001);  // B arrives during A's prefill
  IterationWork mixed = testing::prompts(1, 500);
  ++mixed.tokens;
  ++mixed.logits;
  mixed.decode_context = mixed.window_decode_context = 1001;
  const double mixed_s = model.iteration(mixed).seconds();
  const double decode_s = model.iteration({1, 1, 0, 1002}).seconds();
  CHECK(o.records[1].first_token.seconds() == Approx(prefill_s + mixed_s).epsilon(1e-9));
  CHECK(o.records[1].finish.seconds() == Approx(prefill_s + mixed_s).epsilon(1e-9));
  CHECK(o.records[0].finish.seconds() == Approx(prefill_s + mixed_s + decode_s).epsilon(1e-9));
}

// Same requests, same GPU: in-flight batching fills the slots static batching leaves idle while a
// batch waits for its longest output.
TEST_CASE("continuous batching never gives lower throughput than static batching") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const std::vector<Request> requests = poisson_uniform(40, 60, 64, 1024, 16, 512);
  ReplicaSettings fixed;
  fixed.max_batch = 64;
  fixed.batching = s::STATIC;
  fixed.static_free_bytes = 1e12;
  const ServingMetrics f = measure_serving(requests, simulate_serving(requests, model, fixed, 1), 0);
  for (const s::CapacityPolicy policy : {s::MAX_UTILIZATION, s::GUARANTEED_NO_EVICT}) {
    ReplicaSettings continuous;
    continuous.max_batch = 64;
    continuous.kv_blocks = 100000;
    continuous.capacity_policy = policy;
    const ServingMetrics c =
        measure_serving(requests, simulate_serving(requests, model, continuous, 1), 0);
    INFO(s::CapacityPolicy_Name(policy));
    CHECK(c.output_tokens_per_s >= f.output_tokens_per_s);
    CHECK(c.ttft_ms.p99 < f.ttft_ms.p99);
  }
}

TEST_CASE("a full paged KV cache preempts the latest sequence and every request still finishes") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const std::vector<Request> requests = poisson(50, 20, 256, 256);
  ReplicaSettings settings;
  settings.max_batch = 64;
  settings.block_tokens = 16;
  settings.kv_blocks = 3 * 512 / 16;  // room for three requests at their longest
  const ServingOutcome o = simulate_serving(requests, model, settings, 1);
  CHECK(o.preemptions > 0);
  for (const RequestRecord& r : o.records) CHECK(r.done);
  const ServingMetrics m = measure_serving(requests, o, 0);
  CHECK(m.kv_cache_utilization > 0.5);
  CHECK(m.kv_cache_utilization <= 1.0);
}

// The load above, where MAX_UTILIZATION preempts: GUARANTEED_NO_EVICT admits a request only with
// the blocks of its whole sequence promised, so none is ever preempted.
TEST_CASE("GUARANTEED_NO_EVICT never preempts where MAX_UTILIZATION does") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const std::vector<Request> requests = poisson(50, 20, 256, 256);
  ReplicaSettings settings;
  settings.max_batch = 64;
  settings.block_tokens = 16;
  settings.kv_blocks = 3 * 512 / 16;
  REQUIRE(simulate_serving(requests, model, settings, 1).preemptions > 0);
  settings.capacity_policy = s::GUARANTEED_NO_EVICT;
  const ServingOutcome o = simulate_serving(requests, model, settings, 1);
  CHECK(o.preemptions == 0);
  for (const RequestRecord& r : o.records) {
    CHECK(r.done);
    CHECK(r.preemptions == 0);
  }
}

// Lengths drawn from wide ranges into a small cache, arriving faster than it serves: the blocks
// held plus those promised never exceed the cache, and the load fills it.
TEST_CASE("GUARANTEED_NO_EVICT never commits more KV blocks than the cache holds") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const std::vector<Request> requests = poisson_uniform(40, 20, 16, 1500, 1, 700);
  for (const bool chunked : {false, true}) {
    ReplicaSettings settings;
    settings.capacity_policy = s::GUARANTEED_NO_EVICT;
    settings.block_tokens = 16;
    settings.kv_blocks = 400;  // 6,400 tokens: three to thirty requests
    settings.chunked_prefill = chunked;
    settings.max_tokens = chunked ? 512 : 2048;
    const ServingOutcome o = simulate_serving(requests, model, settings, 2);
    INFO("chunked prefill " << chunked);
    CHECK(o.peak_kv_committed <= 1.0);
    CHECK(o.peak_kv_committed > 0.9);
    CHECK(o.kv_fraction < o.peak_kv_committed);
    CHECK(o.preemptions == 0);
    for (const RequestRecord& r : o.records) CHECK(r.done);
  }
}

// Ten requests of 200 + 100 tokens at once, blocks of 16, a cache of 60 blocks. GUARANTEED_NO_EVICT
// promises each ceil(300 / 16) = 19 blocks: floor(60 / 19) = 3 run at once, in waves of 3, 3, 3, 1
// (each wave admitted when the one before finishes). MAX_UTILIZATION admits on the prompt's
// ceil(200 / 16) = 13 blocks: floor(60 / 13) = 4 in its first iteration.
TEST_CASE("GUARANTEED_NO_EVICT admits as many whole sequences as the cache holds") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const std::vector<Request> requests(10, Request{0.0, 200, 100});
  ReplicaSettings settings;
  settings.block_tokens = 16;
  settings.kv_blocks = 60;
  const auto first_wave = [&](const ServingOutcome& o) {
    return std::count_if(o.records.begin(), o.records.end(), [&](const RequestRecord& r) {
      return r.first_token == o.records[0].first_token;
    });
  };
  CHECK(first_wave(simulate_serving(requests, model, settings, 1)) == 4);
  settings.capacity_policy = s::GUARANTEED_NO_EVICT;
  const ServingOutcome o = simulate_serving(requests, model, settings, 1);
  CHECK(first_wave(o) == 3);
  for (size_t i = 3; i < requests.size(); ++i) {
    INFO("request " << i);
    CHECK(o.records[i].first_token > o.records[i - 3].finish);
    CHECK(o.records[i].first_token == o.records[i - i % 3].first_token);
  }
  CHECK(o.peak_kv_committed == Approx(57.0 / 60));
}

// The queue's head blocks the requests behind it: a request of 600 tokens (38 blocks of 16) waits
// behind one of 200 (13 blocks) in a cache of 40, and a second one of 200, which would fit beside
// the first, waits for it (TensorRT-LLM's scheduler stops at the first request that does not fit).
TEST_CASE("GUARANTEED_NO_EVICT serves its queue in order") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const std::vector<Request> requests = {{0.0, 100, 100}, {0.0, 400, 200}, {0.0, 100, 100}};
  ReplicaSettings settings;
  settings.capacity_policy = s::GUARANTEED_NO_EVICT;
  settings.block_tokens = 16;
  settings.kv_blocks = 40;
  const ServingOutcome o = simulate_serving(requests, model, settings, 1);
  CHECK(o.records[1].first_token > o.records[0].finish);
  CHECK(o.records[2].first_token > o.records[1].finish);
}

TEST_CASE("the load balancer spreads requests and the run is deterministic") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const std::vector<Request> requests = poisson(30, 30, 256, 64);
  ReplicaSettings settings;
  settings.kv_blocks = 10000;
  const ServingOutcome one = simulate_serving(requests, model, settings, 1);
  const ServingOutcome two = simulate_serving(requests, model, settings, 2);
  const ServingOutcome again = simulate_serving(requests, model, settings, 2);
  const ServingMetrics m1 = measure_serving(requests, one, 0), m2 = measure_serving(requests, two, 0);
  CHECK(m2.ttft_ms.p99 < m1.ttft_ms.p99);
  CHECK(m2.gpu_utilization < m1.gpu_utilization);
  for (size_t i = 0; i < requests.size(); ++i) {
    CHECK(two.records[i].finish == again.records[i].finish);
  }
}

TEST_CASE("chunked prefill keeps decode steps short under long prompts") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const std::vector<Request> requests = poisson(4, 60, 4000, 128);
  ReplicaSettings whole;
  whole.kv_blocks = 100000;
  ReplicaSettings chunked = whole;
  chunked.chunked_prefill = true;
  chunked.max_tokens = 512;
  const ServingMetrics w = measure_serving(requests, simulate_serving(requests, model, whole, 1), 0);
  const ServingMetrics c = measure_serving(requests, simulate_serving(requests, model, chunked, 1), 0);
  CHECK(c.tpot_ms.p99 < w.tpot_ms.p99);
}

}  // namespace
}  // namespace clustersim
