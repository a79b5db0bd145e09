// Tests of sim/serve/cuda_graph_padding and cuda_graph_checks: a continuous replica's decode-only
// iterations padded to captured CUDA-graph sizes, and the located errors where it is not simulated.
#include "sim/serve/cuda_graph_padding.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sim/serve/serving_evaluation.h"
#include "sim/serve/serving_simulation.h"
#include "sim/serve/serving_space.h"
#include "tests/serve/serve_fixture.h"
#include "tests/testing/cluster.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::load_serving_text;
using testing::single_gpu_inputs;

// `sequences` decoding sequences of summed context `context`.
IterationWork decoding_batch(int64_t sequences, double context) {
  IterationWork w{sequences, sequences, 0, context};
  w.window_decode_context = context;
  return w;
}

// Llama 2 70B at tensor parallelism 4 on one p5 node: every padded row pays its all-reduce bytes.
struct Llama70bTp4 {
  std::unique_ptr<Topology> topology = testing::shipped_cluster("aws.p5.48xlarge", 1, 4);
  IterationModel model{inputs(topology.get())};

  static IterationInputs inputs(const Topology* topology) {
    IterationInputs in = single_gpu_inputs("llama2-70b", "H100-SXM5-80GB", {});
    in.tensor_parallel = 4;
    in.topology = topology;
    in.max_tokens = 8192;
    return in;
  }
};

// Twenty requests of 100 prompt tokens and 3 output tokens arriving together: one prefill
// iteration of the twenty prompts (which gives each its first token), then two decode-only
// iterations of twenty sequences at contexts 101 and 102 each.
std::vector<RequestRecord> twenty_requests(const IterationModel& model, CudaGraphPadding graphs) {
  ReplicaSettings settings;
  settings.kv_blocks = 1000;
  settings.graphs = std::move(graphs);
  const std::vector<Request> requests(20, Request{0.0, 100, 3});
  return simulate_serving(requests, model, settings, 1).records;
}

// A decode batch of b = 20 replays the graph of g = 32: it costs what the unpadded model costs on
// 32 sequences, 12 of them dummies of one cached token; the prefill, with prompts, runs unpadded.
TEST_CASE("a tensor-parallel decode batch runs as the smallest captured graph holding it") {
  const Llama70bTp4 tp;
  const IterationModel& model = tp.model;
  const std::vector<RequestRecord> padded = twenty_requests(model, CudaGraphPadding({1, 4, 32}));
  const double prefill_s = model.iteration(testing::prompts(20, 100)).seconds();
  const double graphs_s = model.iteration(decoding_batch(32, 20 * 101 + 12)).seconds() +
                          model.iteration(decoding_batch(32, 20 * 102 + 12)).seconds();
  for (const RequestRecord& r : padded) {
    CHECK(r.first_token.seconds() == Approx(prefill_s).epsilon(1e-12));
    CHECK(r.finish.seconds() == Approx(prefill_s + graphs_s).epsilon(1e-12));
  }
  // Without graphs, or with none holding 20 (each an eager batch of 20): the same unpadded run.
  const std::vector<RequestRecord> eager = twenty_requests(model, CudaGraphPadding());
  const double eager_s = prefill_s + model.iteration(decoding_batch(20, 20 * 101)).seconds() +
                         model.iteration(decoding_batch(20, 20 * 102)).seconds();
  CHECK(eager[0].finish.seconds() == Approx(eager_s).epsilon(1e-12));
  CHECK(eager_s < prefill_s + graphs_s);
  const std::vector<RequestRecord> above = twenty_requests(model, CudaGraphPadding({1, 4, 16}));
  CHECK(above[0].finish == eager[0].finish);
  // A captured size equal to the batch: replayed, nothing to pad.
  const std::vector<RequestRecord> exact = twenty_requests(model, CudaGraphPadding({20}));
  CHECK(exact[0].finish == eager[0].finish);
}

// A prompt in the batch keeps the whole iteration eager: one request of a 3-token prompt prefills
// at 3 tokens (not padded to 4), then decodes alone at contexts 4 and 5, padded to 4 sequences.
TEST_CASE("an iteration with a prompt runs unpadded, its decodes after it padded") {
  const Llama70bTp4 tp;
  const IterationModel& model = tp.model;
  ReplicaSettings settings;
  settings.kv_blocks = 1000;
  settings.graphs = CudaGraphPadding({4, 8});
  const ServingOutcome o = simulate_serving({{0.0, 3, 3}}, model, settings, 1);
  const double prefill_s = model.iteration(testing::prompts(1, 3)).seconds();
  const double decodes_s = model.iteration(decoding_batch(4, 4 + 3)).seconds() +
                           model.iteration(decoding_batch(4, 5 + 3)).seconds();
  CHECK(o.records[0].first_token.seconds() == Approx(prefill_s).epsilon(1e-12));
  CHECK(o.records[0].finish.seconds() == Approx(prefill_s + decodes_s).epsilon(1e-12));
  CHECK(model.iteration(decoding_batch(4, 7)) > model.iteration(decoding_batch(1, 4)));
}

TEST_CASE("CUDA-graph padding picks the smallest captured size and tops up with dummies") {
  const CudaGraphPadding graphs({1, 2, 4, 8, 16, 32, 64});
  CHECK(graphs.graph_batch(20) == 32);
  CHECK(graphs.graph_batch(16) == 16);
  CHECK(graphs.graph_batch(65) == 0);
  const IterationWork run = graphs.run(decoding_batch(20, 20000));
  CHECK(run.tokens == 32);
  CHECK(run.logits == 32);
  CHECK(run.decode_context == 20012);
  CHECK(run.window_decode_context == 20012);
  CHECK(graphs.run(decoding_batch(65, 1000)).tokens == 65);
  IterationWork mixed = testing::prompts(1, 5);  // five prompt tokens, one logit
  CHECK_FALSE(CudaGraphPadding::decode_only(mixed));
  CHECK(graphs.run(mixed).tokens == 5);
  CHECK(CudaGraphPadding().run(decoding_batch(20, 20000)).tokens == 20);
}

// A tensor-parallel scenario with the field loads and serves slower than without it (its decode
// batches padded); pipeline parallelism and disaggregated pools take it too.
const std::string kGraphsTp = R"(model: "llama3-8b"
deployment { instance: "aws.p5.48xlarge" tensor_parallel: 2 quantization { weights: FP8 activations: FP8 kv_cache: FP8 } scheduler { max_batch_size: 64 cuda_graph_batch_sizes: [1, 2, 4, 8, 16, 32, 64] } }
traffic {
  rate_per_s: 20
  duration_s: 20
  input_tokens { fixed: 128 }
  output_tokens { fixed: 256 }
}
)";

double served_tokens_per_s(const std::string& text) {
  auto t = load_serving_text(text);
  INFO(t->messages());
  REQUIRE(t->loaded != nullptr);
  const ServingSpace space(*t->loaded);
  REQUIRE(space.size() == 1);
  ServingEvaluator evaluator(testing::shipped_catalog(), *t->loaded);
  const ServingEvaluation e = evaluator.evaluate(space.at(0));
  REQUIRE(e.error.empty());
  REQUIRE(e.metrics);
  return e.metrics->output_tokens_per_s;
}

TEST_CASE("a tensor-parallel scenario with CUDA-graph sizes serves its decodes padded") {
  std::string eager = kGraphsTp;
  eager.replace(eager.find(" cuda_graph_batch_sizes: [1, 2, 4, 8, 16, 32, 64]"), 50, "");
  const double graphs = served_tokens_per_s(kGraphsTp);
  CHECK(graphs < served_tokens_per_s(eager));
  std::string exact = kGraphsTp;  // every batch size captured: nothing padded
  std::string all = "1";
  for (int b = 2; b <= 64; ++b) all += ", " + std::to_string(b);
  exact.replace(exact.find("1, 2, 4, 8, 16, 32, 64"), 22, all);
  CHECK(served_tokens_per_s(exact) == served_tokens_per_s(eager));
  std::string pipeline = kGraphsTp;
  pipeline.replace(pipeline.find("tensor_parallel: 2"), 18, "pipeline_parallel: 2");
  CHECK(load_serving_text(pipeline)->messages().empty());
  std::string pools = kGraphsTp;
  pools.replace(pools.find("tensor_parallel: 2"), 18,
                "disaggregation { prefill { tensor_parallel: 2 } decode { tensor_parallel: 2 } }");
  CHECK(load_serving_text(pools)->messages().empty());
}

TEST_CASE("CUDA-graph sizes' located errors") {
  const auto messages = [](const std::string& from, const std::string& to) {
    std::string text = kGraphsTp;
    text.replace(text.find(from), from.size(), to);
    return load_serving_text(text)->messages();
  };
  CHECK(messages("[1, 2, 4,", "[1, 0, 4,") ==
        "s.textproto:2:181: deployment.scheduler.cuda_graph_batch_sizes[1]: must be positive and "
        "strictly increasing (TensorRT-LLM's cuda_graph_config.batch_sizes, sorted)\n");
  CHECK(messages("scheduler { ", "scheduler { batching: STATIC ") ==
        "s.textproto:2:134: deployment.scheduler.batching: CUDA-graph padding "
        "(scheduler.cuda_graph_batch_sizes) applies to CONTINUOUS batching: it is the in-flight "
        "batching runtime's (TensorRT-LLM PyTorch backend's _get_padded_batch); a static batch "
        "decodes its own batch size from its prefill to its last token, unpadded\n");
  CHECK(messages("64] } }",
                 "64] } speculative_decoding { draft_model: \"llama3-8b\" "
                 "draft_tokens: 3 acceptance_rate: 0.7 } }") ==
        "s.textproto:2:178: deployment.scheduler.cuda_graph_batch_sizes[0]: CUDA-graph padding "
        "with speculative decoding is not simulated (TensorRT-LLM pads a verification batch "
        "with dummy requests of k draft tokens each, which the drafter runs too): drop one\n");
  CHECK(messages("rate_per_s: 20", "rate_per_s: 20 beam_width: 2") ==
        "s.textproto:2:178: deployment.scheduler.cuda_graph_batch_sizes[0]: CUDA-graph padding "
        "with beam search is not simulated (a graph's batch counts requests of max_beam_width "
        "beams each): drop one\n");
}

}  // namespace
}  // namespace clustersim
