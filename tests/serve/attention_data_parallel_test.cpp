// Tests of attention data parallelism: the lockstep iteration model
// (sim/serve/attention_data_parallel), the group's request assignment and lockstep
// (sim/serve/attention_dp_group), the per-GPU memory, and the scenario's located errors.
#include <catch2/catch.hpp>
#include <cmath>

#include "sim/net/collective.h"
#include "sim/serve/attention_data_parallel.h"
#include "sim/serve/attention_dp_group.h"
#include "sim/serve/serving_cost.h"
#include "sim/serve/serving_evaluation.h"
#include "sim/serve/serving_rows.h"
#include "sim/serve/serving_simulation.h"
#include "sim/serve/serving_space.h"
#include "tests/serve/serve_fixture.h"
#include "tests/testing/cluster.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::load_serving_text;
using testing::single_gpu_inputs;

// DeepSeek-V3 at FP8 on one node of 8 x H100 (aws.p5.48xlarge), attention DP 8, EP 8.
struct DeepSeekDep {
  std::unique_ptr<Topology> topology = testing::shipped_cluster("aws.p5.48xlarge", 1, 8);
  IterationInputs in = inputs(topology.get());
  AttentionDataParallelModel model{in};

  static IterationInputs inputs(const Topology* topology) {
    IterationInputs in =
        single_gpu_inputs("deepseek-v3", "H100-SXM5-80GB", {s::FP8, s::FP8, s::FP8});
    in.topology = topology;
    in.tensor_parallel = in.expert_parallel = 8;
    in.max_tokens = 8192;
    return in;
  }
};

// Each of the 8 GPUs' tokens for the MoE layers' exchange.
std::vector<int64_t> per_gpu(int64_t tokens) { return std::vector<int64_t>(8, tokens); }

IterationWork decode(int64_t sequences, double context) {
  return {sequences, sequences, 0, sequences * context};
}

// CUDA graphs with padding: when every GPU only decodes, each runs the captured size holding the
// largest GPU batch, topped up with dummy sequences of one cached token; with a prompt anywhere,
// or a batch above every captured size, each runs its own batch.
TEST_CASE("decode-only lockstep iterations pad every GPU to the largest batch's graph size") {
  const std::unique_ptr<Topology> topology = testing::shipped_cluster("aws.p5.48xlarge", 1, 8);
  const IterationInputs in = DeepSeekDep::inputs(topology.get());
  const AttentionDataParallelModel eager(in);
  const AttentionDataParallelModel graphs(in, {1, 2, 4, 8, 16, 32, 64});
  std::vector<IterationWork> works(8, decode(3, 1000));
  works[2] = decode(20, 1000);
  works[6] = IterationWork{};  // idle: the dummy request, padded as well
  REQUIRE(graphs.graph_batch(works) == 32);
  std::vector<IterationWork> padded(8);
  for (int g = 0; g < 8; ++g) {
    const IterationWork& w = works[g];
    const int64_t real = w.tokens > 0 ? w.tokens : 1;
    const double context = w.tokens > 0 ? w.decode_context : 1;
    padded[g] = decode(32, 0);
    padded[g].decode_context = padded[g].window_decode_context = context + (32 - real);
  }
  CHECK(graphs.iteration(works) == eager.iteration(padded));
  CHECK(graphs.iteration(works) > eager.iteration(works));
  // The padded rows are experts' tokens too (8 x 32 gathered); GPU 2, the longest context, is slowest.
  CHECK(graphs.iteration(works) - eager.rank_model().iteration(padded[2]) ==
        Picoseconds(58 * (eager.dispatch(per_gpu(32)) + eager.combine(per_gpu(32))).count()) +
            eager.routed_experts(256));
  // A batch already at a captured size is not padded; nor one above every size.
  CHECK(graphs.graph_batch(std::vector<IterationWork>(8, decode(16, 1000))) == 16);
  CHECK(graphs.iteration(std::vector<IterationWork>(8, decode(16, 1000))) ==
        eager.iteration(std::vector<IterationWork>(8, decode(16, 1000))));
  works[2] = decode(65, 1000);
  CHECK(graphs.graph_batch(works) == 0);
  CHECK(graphs.iteration(works) == eager.iteration(works));
  // A prompt on one GPU: every GPU runs eagerly, unpadded.
  works[2] = testing::prompts(1, 512);
  CHECK(graphs.graph_batch(works) == 0);
  CHECK(graphs.iteration(works) == eager.iteration(works));
  // No sizes: never padded.
  CHECK(eager.graph_batch(std::vector<IterationWork>(8, decode(3, 1000))) == 0);
}

// Leaving the routed experts apart splits a TP-1 iteration exactly: what remains plus the routed
// experts' GEMMs (with their layer overhead) on the same tokens is the whole iteration.
TEST_CASE("routed experts apart plus the routed experts make the whole iteration") {
  IterationInputs in = single_gpu_inputs("deepseek-v3", "H100-SXM5-80GB", {s::FP8, s::FP8, s::FP8});
  const IterationModel whole(in);
  in.routed_experts_apart = true;
  const IterationModel apart(in);
  for (const IterationWork& w : {decode(1, 0), decode(64, 2048), testing::prompts(4, 1024)}) {
    CHECK(apart.iteration(w) + whole.routed_experts(w.tokens) == whole.iteration(w));
    CHECK(apart.iteration(w) < whole.iteration(w));
  }
}

// One identical request on every GPU: the slowest GPU is any GPU, so the iteration is one GPU's
// attention and dense part (TP 1) plus, per expert layer, the all-gather and reduce-scatter of
// the 8 tokens, plus the routed experts' GEMMs for 8 tokens on the busiest of 8 ranks.
TEST_CASE("one identical request per GPU: one GPU's part plus the MoE's") {
  const DeepSeekDep dep;
  const AttentionDataParallelModel& m = dep.model;
  REQUIRE(m.expert_layers() == 58);
  for (const IterationWork& one : {decode(1, 4096), testing::prompts(1, 2048)}) {
    const std::vector<IterationWork> works(8, one);
    const int64_t gathered = 8 * one.tokens;
    const std::vector<int64_t> each = per_gpu(one.tokens);
    CHECK(m.iteration(works) ==
          m.rank_model().iteration(one) +
              Picoseconds(58 * (m.dispatch(each) + m.combine(each)).count()) +
              m.routed_experts(gathered));
  }
  // An idle GPU runs the dummy request (one token over a context of one): it joins the
  // collectives and the experts with its token, but is never the slowest.
  std::vector<IterationWork> works(8, decode(1, 4096));
  works[5] = IterationWork{};
  CHECK(m.iteration(works) ==
        m.rank_model().iteration(decode(1, 4096)) +
            Picoseconds(58 * (m.dispatch(per_gpu(1)) + m.combine(per_gpu(1))).count()) +
            m.routed_experts(8));
}

// The dispatch all-gathers each token's FP8 activations (7168 bytes) and its 8 expert ids and
// weights (64 bytes); the combine reduce-scatters 16-bit outputs (14336 bytes). A large one on
// the p5's NVSwitch (450 GB/s x 0.80 per direction, Simple steps of 3.75 us, collective_test) is
// the ring's closed form (n - 1) / n S / B + (n - 1) steps, plus the runtime's collective overhead.
TEST_CASE("the dispatch and combine are the ring's closed form on one NVSwitch") {
  const DeepSeekDep dep;
  const AttentionDataParallelModel& m = dep.model;
  CHECK(m.dispatch_bytes_per_token() == 7168 + 64);
  CHECK(m.combine_bytes_per_token() == 7168 * 2);
  const double n = 8, rate = 450e9 * 0.80, step = 3.75e-6;
  const double overhead = dep.in.serving->allreduce_overhead_us() * 1e-6;
  const int64_t tokens = 65536;
  const auto ring = [&](double bytes) { return (n - 1) / n * bytes / rate + (n - 1) * step; };
  CHECK(m.dispatch(per_gpu(tokens / 8)).seconds() ==
        Approx(ring(tokens * (7168.0 + 64)) + overhead).epsilon(1e-3));
  CHECK(m.combine(per_gpu(tokens / 8)).seconds() ==
        Approx(ring(tokens * 14336.0) + overhead).epsilon(1e-3));
}

// More work on one GPU never makes the lockstep iteration shorter, and the same requests piled on
// one GPU take longer than spread one per GPU (the others wait for it at every MoE layer).
TEST_CASE("a GPU's added load never shortens the lockstep iteration") {
  const DeepSeekDep dep;
  const AttentionDataParallelModel& m = dep.model;
  std::vector<IterationWork> works(8, decode(16, 1024));
  Picoseconds last = m.iteration(works);
  for (int step = 0; step < 12; ++step) {
    IterationWork& w = works[static_cast<size_t>(step % 3)];
    if (step % 2 == 0) {
      w.tokens += 1;
      w.logits += 1;
      w.decode_context += 3000;
    } else {
      add_prompt_chunk(&w, 0, 256);
      w.tokens += 256;
    }
    const Picoseconds now = m.iteration(works);
    CHECK(now >= last);
    last = now;
  }
  std::vector<IterationWork> piled(8);
  piled[0] = decode(8, 2048);
  CHECK(m.iteration(piled) > m.iteration(std::vector<IterationWork>(8, decode(1, 2048))));
}

// Per GPU: the TP-1 weights less 7/8 of the routed experts (58 layers x 256 experts x 3 matrices
// of 7168 x 2048 at one byte), and the TP-1 KV cache of a token (the latent, 576 x 61 layers).
TEST_CASE("each GPU holds the dense weights whole and an eighth of the routed experts") {
  const DeepSeekDep dep;
  const AttentionDataParallelModel& m = dep.model;
  const double routed = 58.0 * 256 * 3 * 7168 * 2048;
  CHECK(m.weight_bytes() ==
        Approx(m.rank_model().largest_stage().weight_bytes - routed * 7 / 8).epsilon(1e-12));
  CHECK(m.kv_bytes_per_token() == 61.0 * 576);
  CHECK(m.workspace_bytes_per_token() ==
        8 * m.rank_model().largest_stage().activation_bytes_per_token);
}

// TensorRT-LLM's assignment: longest prompt first, each to the GPU with the fewest active prompt
// tokens, up to ceil(requests / GPUs) each. Prompts 100, 300, 200, 400 on two GPUs: 400 -> 0,
// 300 -> 1, 200 -> 1 (300 < 400), 100 -> 0 (400 < 500).
TEST_CASE("new requests go longest first to the GPU with the fewest active prompt tokens") {
  const auto topology = testing::shipped_cluster("aws.p5.48xlarge", 1, 2);
  IterationInputs in = DeepSeekDep::inputs(topology.get());
  in.model = &testing::shipped_catalog().models().find("qwen3-30b-a3b")->value->transformer();
  in.formats = {};
  in.tensor_parallel = in.expert_parallel = 2;
  const AttentionDataParallelModel model(in);
  const std::vector<Request> requests = {
      {0, 100, 4}, {0, 300, 4}, {0, 200, 4}, {0, 400, 4}, {0, 50, 4}};
  std::vector<RequestRecord> records(requests.size());
  ReplicaSettings settings;
  settings.kv_blocks = 1000;
  settings.max_batch = 2;  // the fifth waits for a free slot
  Simulation sim;
  AttentionDataParallelGroup group(&sim, &model, settings, &requests, &records);
  for (int32_t r = 0; r < 5; ++r) group.arrive(r);
  sim.run();
  CHECK(group.gpu_of(3) == 0);
  CHECK(group.gpu_of(1) == 1);
  CHECK(group.gpu_of(2) == 1);
  CHECK(group.gpu_of(0) == 0);
  // The fifth is fetched when both GPUs have finished theirs (together: the same outputs in the
  // same iterations), both idle: the lower index takes it.
  CHECK(group.gpu_of(4) == 0);
  for (const RequestRecord& r : records) CHECK(r.done);
  CHECK(records[4].first_token > records[0].finish);
}

// Eight identical requests arriving together on 8 GPUs: one each, their prompts in one lockstep
// iteration, their first tokens at its end.
TEST_CASE("eight requests on eight GPUs prefill together in one lockstep iteration") {
  const DeepSeekDep dep;
  const std::vector<Request> requests(8, Request{0, 1024, 2});
  ReplicaSettings settings;
  settings.kv_blocks = 1000;
  OpenLoopArrivals source(&requests);
  const ServingOutcome outcome =
      simulate_attention_data_parallel(&source, dep.model, settings, 1);
  const Picoseconds prefill =
      dep.model.iteration(std::vector<IterationWork>(8, testing::prompts(1, 1024)));
  for (const RequestRecord& r : outcome.records) CHECK(r.first_token == prefill);
  CHECK(outcome.iterations == 2);
}

const std::string kDep = R"(model: "deepseek-v3"
deployment { instance: "aws.p5en.48xlarge" tensor_parallel: 8 expert_parallel: 8 attention_data_parallel: true quantization { weights: FP8 activations: FP8 kv_cache: FP8 } }
traffic {
  rate_per_s: 2
  input_tokens { fixed: 1024 }
  output_tokens { fixed: 128 }
}
)";

TEST_CASE("attention data parallelism loads and serves a DEP deployment") {
  auto t = load_serving_text(kDep);
  INFO(t->messages());
  REQUIRE(t->loaded != nullptr);
  const ServingSpace space(*t->loaded);
  REQUIRE(space.size() == 1);
  const ServingConfiguration c = space.at(0);
  CHECK(c.attention_data_parallel);
  CHECK(serving_problem(c, testing::shipped_catalog()).empty());
  ServingEvaluator evaluator(testing::shipped_catalog(), *t->loaded);
  const ServingEvaluation e = evaluator.evaluate(c);
  REQUIRE(e.error.empty());
  CHECK(e.out_of_memory.empty());
  REQUIRE(e.metrics);
  // Each GPU's pool holds its own requests' latent KV cache (61 x 576 bytes a token at FP8); the
  // row's KV tokens are the replica's, the 8 pools together.
  CHECK(e.memory.kv_bytes_per_token == 61.0 * 576);
  REQUIRE(e.kv_blocks > 0);
  Diagnostics diagnostics;
  auto prices = load_serving_prices(*t->loaded, testing::shipped_catalog(), nullptr, &diagnostics);
  REQUIRE(prices != nullptr);
  const std::vector<ResultRow> rows = make_serving_rows(c, e, *prices, std::nullopt);
  REQUIRE(!rows.empty());
  CHECK(row_number(rows[0], serving_column("kv_cache_tokens")) ==
        static_cast<double>(8 * e.kv_blocks * c.scheduler.kv_block_tokens()));
  CHECK(row_number(rows[0], serving_column("attention_data_parallel")) == 1);
}

TEST_CASE("attention data parallelism's located errors") {
  const auto messages = [](const std::string& from, const std::string& to) {
    std::string text = kDep;
    text.replace(text.find(from), from.size(), to);
    return load_serving_text(text)->messages();
  };
  CHECK(messages("expert_parallel: 8 ", "") ==
        "s.textproto:2:63: deployment.attention_data_parallel: needs deployment.expert_parallel "
        "equal to tensor_parallel (8; it is absent): the experts split over all the replica's "
        "GPUs, as TensorRT-LLM's DEP deployments\n");
  CHECK(messages("tensor_parallel: 8 expert_parallel: 8 ", "") ==
        "s.textproto:2:44: deployment.attention_data_parallel: needs a replica of two GPUs or "
        "more (deployment.tensor_parallel 1): each GPU runs its own requests and the experts "
        "split over them\n");
  CHECK(messages("deepseek-v3", "llama2-70b") ==
        "s.textproto:2:63: deployment.expert_parallel: 8: the model has no experts to split (it "
        "has no moe block)\n"
        "s.textproto:2:82: deployment.attention_data_parallel: needs a mixture of experts "
        "(\"llama2-70b\" has no moe block): without experts to share, GPUs with requests of their "
        "own are replicas (deployment.replicas)\n");
  CHECK(messages("FP8 } }", "FP8 } scheduler { batching: STATIC } }") ==
        "s.textproto:2:82: deployment.attention_data_parallel: static batching is not simulated "
        "with attention data parallelism (TensorRT-LLM runs it in-flight): batching CONTINUOUS\n");
  CHECK(messages("FP8 } }", "FP8 } pipeline_parallel: 2 }") ==
        "s.textproto:2:82: deployment.attention_data_parallel: pipeline parallelism is not "
        "simulated with attention data parallelism\n");
  CHECK(messages("rate_per_s: 2", "rate_per_s: 2 beam_width: 2") ==
        "s.textproto:2:82: deployment.attention_data_parallel: beam search is not simulated "
        "with attention data parallelism\n");
  CHECK(messages("FP8 } }", "FP8 } speculative_decoding { multi_token_prediction: true "
                            "draft_tokens: 1 acceptance_rate: 0.7 } }") ==
        "s.textproto:2:82: deployment.attention_data_parallel: speculative decoding is not "
        "simulated with attention data parallelism\n");
  CHECK(messages("FP8 } }", "FP8 } disaggregation { prefill { tensor_parallel: 8 } decode { "
                            "tensor_parallel: 8 } } }") ==
        "s.textproto:2:82: deployment.attention_data_parallel: disaggregated serving is not "
        "simulated with attention data parallelism\n");
  CHECK(messages("FP8 } }", "FP8 } scheduler { prefix_caching { enabled: true } } }")
            .empty());  // no shared prefix: nothing to cache
  std::string prefixed = kDep;
  prefixed.replace(
      prefixed.find("output_tokens { fixed: 128 }"), 28,
      "output_tokens { fixed: 128 } shared_prefix { prefixes: 2 tokens { fixed: 512 } }");
  CHECK(load_serving_text(prefixed)->messages().empty());  // the runtime's default: caching off
  prefixed.replace(prefixed.find("FP8 } }"), 7,
                   "FP8 } scheduler { prefix_caching { enabled: true } } }");
  CHECK(load_serving_text(prefixed)->messages() ==
        "s.textproto:2:82: deployment.attention_data_parallel: prefix caching is not simulated "
        "with attention data parallelism and this traffic carries shared prefixes: set "
        "deployment.scheduler.prefix_caching.enabled false\n");
  // Turned on by the sweep alone: the error at the sweep's "true".
  std::string swept = kDep;
  swept.replace(swept.find("expert_parallel: 8 attention_data_parallel: true "), 49, "");
  swept += "sweep { attention_data_parallel: [false, true] }\n";
  CHECK(load_serving_text(swept)->messages() ==
        "s.textproto:8:42: sweep.attention_data_parallel[1]: needs deployment.expert_parallel "
        "equal to tensor_parallel (8; it is absent): the experts split over all the replica's "
        "GPUs, as TensorRT-LLM's DEP deployments\n");
  CHECK(messages("}\ntraffic", "}\nsweep { attention_data_parallel: [false, true] }\ntraffic")
            .empty());
  // CUDA-graph sizes: increasing, positive; a tensor-parallel replica takes them too
  // (cuda_graph_padding_test.cpp).
  CHECK(messages("FP8 } }", "FP8 } scheduler { cuda_graph_batch_sizes: [1, 8, 4] } }") ==
        "s.textproto:2:216: deployment.scheduler.cuda_graph_batch_sizes[2]: must be positive and "
        "strictly increasing (TensorRT-LLM's cuda_graph_config.batch_sizes, sorted)\n");
  std::string tp = kDep;
  tp.replace(tp.find("attention_data_parallel: true "), 30, "");
  tp.replace(tp.find("FP8 } }"), 7, "FP8 } scheduler { cuda_graph_batch_sizes: [1, 2] } }");
  CHECK(load_serving_text(tp)->messages().empty());
}

// The axis compares a deployment with and without attention DP; with EP swept, only EP = TP keeps
// the "on" configuration.
TEST_CASE("the attention-DP axis prunes configurations whose EP is not their TP") {
  std::string text = kDep;
  text.replace(text.find("expert_parallel: 8 attention_data_parallel: true "), 49, "");
  text += "sweep { expert_parallel: [4, 8] attention_data_parallel: [false, true] }\n";
  auto t = load_serving_text(text);
  INFO(t->messages());
  REQUIRE(t->loaded != nullptr);
  const ServingSpace space(*t->loaded);
  REQUIRE(space.size() == 4);
  const Catalog& catalog = testing::shipped_catalog();
  int on = 0;
  for (int64_t i = 0; i < 4; ++i) {
    const ServingConfiguration c = space.at(i);
    const std::string why = serving_problem(c, catalog);
    if (c.attention_data_parallel && c.expert_parallel == 4) {
      CHECK(why == "attention data parallelism with expert parallelism 4 (it splits the experts "
                   "over all 8 GPUs of the replica)");
    } else {
      CHECK(why.empty());
      on += c.attention_data_parallel ? 1 : 0;
    }
  }
  CHECK(on == 1);
}

}  // namespace
}  // namespace clustersim
