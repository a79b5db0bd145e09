// Tests of sim/serve/beam_search and its use by the replica and the evaluator: the KV blocks
// beams share and hold, a decode step of B beams at batch 1 (nearly the greedy step, not B times
// it), beam width 1 as today, and bad beam widths at their fields.
#include "sim/serve/beam_search.h"

#include <catch2/catch.hpp>

#include "sim/serve/memory_fit.h"
#include "sim/serve/serving_evaluation.h"
#include "sim/serve/serving_simulation.h"
#include "sim/serve/serving_space.h"
#include "tests/serve/serve_fixture.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::load_serving_text;
using testing::single_gpu_inputs;

TEST_CASE("beams share a prompt's full KV blocks and hold their own from its last token on") {
  // A prompt of 100 tokens in blocks of 64: block 0 shared, block 1 (tokens 64-99, the last
  // one's) copied per beam. With 69 tokens generated, 169 per beam: 3 blocks each, 2 of them own.
  CHECK(beam_kv_blocks(100, 169, 64, 4) == 1 + 4 * 2);
  // A prompt filling its blocks exactly shares them all; each beam's first token opens its own.
  CHECK(beam_kv_blocks(128, 128, 64, 4) == 2);
  CHECK(beam_kv_blocks(128, 129, 64, 4) == 2 + 4);
  // A prompt shorter than a block shares nothing.
  CHECK(beam_kv_blocks(30, 31, 64, 4) == 4);
  // Part of a chunked prompt, below its last block: one copy.
  CHECK(beam_kv_blocks(1000, 640, 64, 4) == 10);
  // One beam: ceil(tokens / block).
  for (int tokens : {1, 63, 64, 65, 169}) {
    CHECK(beam_kv_blocks(100, tokens, 64, 1) == (tokens + 63) / 64);
  }
}

TEST_CASE("a request's beams reserve the KV blocks the runtime allocates") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  ReplicaSettings settings;
  settings.kv_blocks = 1000;
  settings.beam_width = 4;
  const std::vector<Request> one{{0, 100, 69}};
  for (auto policy : {s::GUARANTEED_NO_EVICT, s::MAX_UTILIZATION}) {
    settings.capacity_policy = policy;
    const ServingOutcome o = simulate_serving(one, model, settings, 1);
    // Promised whole (GUARANTEED_NO_EVICT) or grown into (MAX_UTILIZATION): 1 + 4 x 2 blocks.
    CHECK(o.peak_kv_committed * 1000 == Approx(9));
  }
}

TEST_CASE("a static batch's KV cache is copied to every beam") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const InferenceShape& shape = model.largest_stage();
  const double greedy = static_batch_peak_bytes(shape, 0, 8, 1000, 128);
  const double beams = static_batch_peak_bytes(shape, 0, 8, 1000, 128, 4);
  CHECK(beams - greedy == Approx(3.0 * 8 * 1128 * shape.kv_bytes_per_token));
}

// Batch 1, 4 beams, llama2-7b FP16 on an H100 after a 128-token prompt: the decode step streams
// the weights once for the 4 rows (memory bound), so it is the greedy step plus the 3 extra
// beams' KV reads (their 128 shared prompt keys at the re-read cost, their own token in full)
// and the beam kernel's logits, not 4 times the greedy step.
TEST_CASE("a decode step of 4 beams at batch 1 is the greedy step plus the beams' reads") {
  const IterationInputs in = single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {});
  const IterationModel model(in);
  const auto second_token = [&](int beams) {
    ReplicaSettings settings;
    settings.kv_blocks = 1000;
    settings.beam_width = beams;
    const ServingOutcome o = simulate_serving({{0, 128, 2}}, model, settings, 1);
    return (o.records[0].finish - o.records[0].first_token).seconds();
  };
  const double greedy = second_token(1), four = second_token(4);
  // The simulated step is the iteration of 4 rows, each beam reading its 129 keys (128 of them
  // in the 2 shared blocks), and 4 rows of logits searched.
  IterationWork work;
  work.tokens = work.logits = work.beam_width = 4;
  work.decode_context = work.window_decode_context = 4 * 129;
  work.beam_shared_rereads = 3 * 128;
  CHECK(four == model.iteration(work).seconds());
  // The closed form: greedy + 3 x (1 + 128 x kv_reread_fraction) keys' K and V + 4 x 32,000
  // logits of 4 bytes, at the fitted memory rate; the GEMMs' 3 extra rows of activations are
  // within 0.3% of the step.
  const double rate = in.gpu->memory_bandwidth_gb_per_s() * 1e9 * in.fit.memory_fraction();
  const double keys = 3 * (1 + 128 * in.fit.kv_reread_fraction());
  const double extra_kv = keys * model.largest_stage().kv_bytes_per_token / rate;
  const double logits = 4.0 * 32000 * 4 / rate;
  INFO("greedy " << greedy << " s, 4 beams " << four << " s, KV " << extra_kv << " s, logits "
                 << logits << " s");
  CHECK(four - greedy == Approx(extra_kv + logits).margin(0.003 * greedy));
  CHECK(four - greedy > extra_kv + logits);
  CHECK(four < 1.05 * greedy);
}

const std::string kScenario = R"(model: "llama2-7b"
deployment { instance: "aws.p5.48xlarge" }
traffic {
  rate_per_s: 5
  duration_s: 20
  input_tokens { uniform { min: 100 max: 900 } }
  output_tokens { uniform { min: 30 max: 128 } }
  BEAMS
}
)";

ServingMetrics served(const std::string& beams) {
  std::string text = kScenario;
  text.replace(text.find("BEAMS"), 5, beams);
  auto t = load_serving_text(text);
  INFO(t->messages());
  REQUIRE(t->loaded != nullptr);
  ServingEvaluator evaluator(testing::shipped_catalog(), *t->loaded);
  const ServingEvaluation e = evaluator.evaluate(ServingSpace(*t->loaded).at(0));
  REQUIRE(e.metrics);
  return *e.metrics;
}

TEST_CASE("beam width 1 serves as no beam width, 4 beams take longer per token") {
  const ServingMetrics absent = served(""), one = served("beam_width: 1"),
                       four = served("beam_width: 4");
  CHECK(one.tpot_ms.mean == absent.tpot_ms.mean);
  CHECK(one.e2e_ms.p99 == absent.e2e_ms.p99);
  CHECK(one.ttft_ms.mean == absent.ttft_ms.mean);
  CHECK(one.output_tokens_per_s == absent.output_tokens_per_s);
  CHECK(four.tpot_ms.mean > absent.tpot_ms.mean);
  CHECK(four.output_tokens_per_s == Approx(absent.output_tokens_per_s).epsilon(0.05));
}

TEST_CASE("bad beam widths are errors at their fields") {
  const auto errors = [](const std::string& beams, const std::string& deployment = "") {
    std::string text = kScenario;
    text.replace(text.find("BEAMS"), 5, beams);
    if (!deployment.empty()) {
      text.replace(text.find("deployment { instance: \"aws.p5.48xlarge\" }"), 42, deployment);
    }
    auto t = load_serving_text(text);
    CHECK(t->loaded == nullptr);
    return t->messages();
  };
  CHECK(errors("beam_width: 0") == "s.textproto:8:3: traffic.beam_width: must be >= 1, got 0\n");
  CHECK(errors("beam_width: 65") ==
        "s.textproto:8:3: traffic.beam_width: 65 beams are more than serving runtime "
        "\"tensorrt-llm\" takes (max_beam_width 64)\n");
  CHECK(errors("beam_width: 4",
               "deployment { instance: \"aws.p5.48xlarge\" disaggregation { prefill {} "
               "decode {} } }") ==
        "s.textproto:8:3: traffic.beam_width: beam search on a disaggregated deployment is not "
        "simulated (its prefill-to-decode hand-off carries one sequence's KV cache): serve it on "
        "colocated replicas\n");
}

TEST_CASE("a benchmark run's beam width is checked at its line") {
  auto t = load_serving_text(R"(model: "gpt-j-6b"
deployment { instance: "onprem.dgx-a100-80gb" scheduler { batching: STATIC } }
benchmark { batch_size: 1 input_tokens: 128 output_tokens: 128 }
benchmark { batch_size: 1 input_tokens: 128 output_tokens: 128 beam_width: -2 }
)");
  CHECK(t->messages() == "s.textproto:4:64: benchmark[1].beam_width: must be >= 1, got -2\n");
}

}  // namespace
}  // namespace clustersim
