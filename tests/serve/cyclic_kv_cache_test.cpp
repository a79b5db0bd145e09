// Tests of sim/serve/cyclic_kv_cache and a replica's paged pool under it: the KV cache a sequence
// of a sliding-window model holds past the window under each shipped runtime, and how many
// sequences the pool then holds at once, and which of them reuse prefix blocks.
#include "sim/serve/cyclic_kv_cache.h"

#include <catch2/catch.hpp>

#include "sim/serve/serving_simulation.h"
#include "tests/serve/serve_fixture.h"

namespace clustersim {
namespace {

namespace s = schema;

const s::Transformer& model(const std::string& name) {
  return testing::shipped_catalog().models().find(name)->value->transformer();
}

bool cyclic(const std::string& runtime) {
  return testing::shipped_catalog().serving_runtimes().find(runtime)->value->cyclic_kv_cache();
}

// Mistral 7B (every layer within 4,096 tokens) at FP16 holds 2 x 32 layers x 8 KV heads x 128 x
// 2 bytes = 131,072 bytes a token. At 10,000 tokens in blocks of 64: TensorRT-LLM 0.9.0's cyclic
// cache holds ceil(4096 / 64) = 64 blocks, 536,870,912 bytes; 1.0's LLM API, its window unset,
// ceil(10000 / 64) = 157 blocks, 1,317,011,456 bytes; inside the window both hold the context.
TEST_CASE("a sliding-window sequence's KV bytes past the window under each runtime") {
  const InferenceShape shape = inference_shape(model("mistral-7b"), {}, 1, 1, 0);
  REQUIRE(shape.kv_bytes_per_token == 131072);
  const auto bytes = [&](const std::string& runtime, int64_t tokens) {
    const int window = cyclic_kv_window_tokens(cyclic(runtime), shape);
    return static_cast<double>(sequence_kv_blocks(tokens, 64, window)) * 64 *
           shape.kv_bytes_per_token;
  };
  CHECK(cyclic_kv_window_tokens(cyclic("tensorrt-llm"), shape) == 4096);
  CHECK(bytes("tensorrt-llm", 10000) == 536870912.0);
  CHECK(cyclic_kv_window_tokens(cyclic("tensorrt-llm-1.0"), shape) == 0);
  CHECK(bytes("tensorrt-llm-1.0", 10000) == 1317011456.0);
  CHECK(bytes("tensorrt-llm", 4000) == bytes("tensorrt-llm-1.0", 4000));
  CHECK(sequence_kv_blocks(4000, 64, 4096) == 63);
  // A window that is not a whole number of blocks rounds up: ceil(100 / 64) = 2.
  CHECK(sequence_kv_blocks(1000, 64, 100) == 2);
}

// The cache is cyclic only when every layer attends within the one window: gpt-oss's dense
// layers between its 128-token windows, Llama 4's chunked attention (context requests only) and
// a model without a window keep the whole context under either runtime.
TEST_CASE("a model with layers outside a band window keeps its whole context") {
  for (const char* name : {"gpt-oss-120b", "llama4-maverick"}) {
    INFO(name);
    const InferenceShape shape = inference_shape(model(name), {}, 8, 1, 0);
    REQUIRE(shape.windowed_layers > 0);
    CHECK(cyclic_kv_window_tokens(true, shape) == 0);
  }
  s::Transformer dense = model("mistral-7b");
  dense.clear_sliding_window();
  CHECK(cyclic_kv_window_tokens(true, inference_shape(dense, {}, 1, 1, 0)) == 0);
}

// Ten requests of 6,000 prompt and 200 output tokens queued at once on a pool of 300 blocks of 64,
// admitted only when the blocks of their whole sequence can be promised (GUARANTEED_NO_EVICT):
// capped at Mistral's window each promises 64 blocks and floor(300 / 64) = 4 start together; its
// whole 6,200 tokens, ceil(6200 / 64) = 97 blocks, floor(300 / 97) = 3, as for a runtime without
// the cyclic cache.
int started_together(int kv_window_tokens) {
  const IterationModel m(testing::single_gpu_inputs("mistral-7b", "H100-SXM5-80GB", {}));
  ReplicaSettings settings;
  settings.capacity_policy = s::GUARANTEED_NO_EVICT;
  settings.max_tokens = 65536;
  settings.kv_blocks = 300;
  settings.attention_window = m.largest_stage().window_tokens;
  settings.kv_window_tokens = kv_window_tokens;
  const std::vector<Request> requests(10, Request{0.0, 6000, 200});
  const ServingOutcome o = simulate_serving(requests, m, settings, 1);
  int together = 0;
  for (const RequestRecord& r : o.records) {
    REQUIRE(r.done);
    together += r.first_token == o.records[0].first_token ? 1 : 0;
  }
  return together;
}

TEST_CASE("more sequences of a windowed model fit a cyclic cache than a full one") {
  CHECK(started_together(4096) == 4);
  CHECK(started_together(0) == 3);
}

// TensorRT-LLM reuses no blocks of a cyclic sequence (its oldest are overwritten): of two
// requests sharing a 2,000-token prefix, the second finds floor(2000 / 64) x 64 = 1,984 tokens
// cached when its sequence (3,000 + 10 tokens) fits Mistral's window, none when it does not
// (5,000 + 10), and 1,984 again without the cyclic cache.
int64_t second_request_cached(int input, int kv_window_tokens) {
  const IterationModel m(testing::single_gpu_inputs("mistral-7b", "H100-SXM5-80GB", {}));
  ReplicaSettings settings;
  settings.kv_blocks = 1000;
  settings.prefix_caching = true;
  settings.attention_window = m.largest_stage().window_tokens;
  settings.kv_window_tokens = kv_window_tokens;
  const std::vector<Request> requests = {{0.0, input, 10, 0, 2000}, {5.0, input, 10, 0, 2000}};
  return simulate_serving(requests, m, settings, 1).records[1].cached_tokens;
}

TEST_CASE("a sequence longer than a cyclic cache's window reuses no prefix blocks") {
  CHECK(second_request_cached(3000, 4096) == 1984);
  CHECK(second_request_cached(5000, 4096) == 0);
  CHECK(second_request_cached(5000, 0) == 1984);
}

}  // namespace
}  // namespace clustersim
