// Tests of sim/serve/speculative_decoding and speculative_checks: the acceptance draws against the
// truncated geometric distribution, time per output token at batch 1 against its closed form,
// the draft's memory, bad inputs at their fields, and a sweep's rows for any thread count.
#include "sim/serve/speculative_decoding.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "sim/serve/serving_evaluation.h"
#include "sim/serve/serving_sweep.h"
#include "tests/serve/serve_fixture.h"
#include "tests/testing/cluster.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::load_serving_text;
using testing::single_gpu_inputs;

s::SpeculativeDecoding heads(int layers, int k, double alpha) {
  s::SpeculativeDecoding spec;
  spec.set_draft_head_layers(layers);
  spec.set_draft_tokens(k);
  spec.set_acceptance_rate(alpha);
  return spec;
}

TEST_CASE("accepted tokens follow the truncated geometric distribution of Leviathan et al.") {
  const IterationInputs in = single_gpu_inputs("llama3-8b", "H100-SXM5-80GB", {});
  for (const auto& [k, alpha] : {std::pair{4, 0.8}, std::pair{2, 0.5}, std::pair{7, 0.9}}) {
    const SpeculativeDecoder spec(in, heads(1, k, alpha), nullptr, k, 7);
    const double expected = (1 - std::pow(alpha, k + 1)) / (1 - alpha);
    CHECK(spec.expected_accepted() == Approx(expected).epsilon(1e-12));
    constexpr int kRequests = 2000, kRounds = 100;
    double sum = 0, squares = 0;
    int all = 0;  // every draft accepted: P = alpha^k
    for (int r = 0; r < kRequests; ++r) {
      for (int round = 0; round < kRounds; ++round) {
        const int a = spec.accepted(r, round);
        REQUIRE(a >= 1);
        REQUIRE(a <= k + 1);
        sum += a;
        squares += static_cast<double>(a) * a;
        all += a == k + 1;
      }
    }
    const double n = kRequests * kRounds;
    const double mean = sum / n, sd = std::sqrt(squares / n - mean * mean);
    INFO("k " << k << " alpha " << alpha << ": mean " << mean << " expected " << expected);
    CHECK(std::abs(mean - expected) < 5 * sd / std::sqrt(n));  // 5 standard errors
    const double p = std::pow(alpha, k);
    CHECK(std::abs(all / n - p) < 5 * std::sqrt(p * (1 - p) / n));
  }
  // Drawn per request and round: the same draw whatever else was drawn before.
  const SpeculativeDecoder a(in, heads(1, 4, 0.8), nullptr, 4, 7);
  const SpeculativeDecoder b(in, heads(1, 4, 0.8), nullptr, 4, 8);
  int differ = 0;
  for (int r = 0; r < 100; ++r) {
    CHECK(a.accepted(r, 3) == a.accepted(r, 3));
    differ += a.accepted(r, 3) != b.accepted(r, 3);
  }
  CHECK(differ > 20);  // another seed, other draws
}

TEST_CASE("at batch 1 time per output token is one iteration's draft passes and verification "
          "over the expected tokens kept") {
  // Llama-3-8B at FP16 on one H100 with one EAGLE-style draft layer, k = 4, alpha = 0.8: one
  // request at a time, 16-token prompts, 401 output tokens.
  const IterationInputs in = single_gpu_inputs("llama3-8b", "H100-SXM5-80GB", {});
  const IterationModel model(in);
  constexpr int k = 4;
  const SpeculativeDecoder spec(in, heads(1, k, 0.8), nullptr, k, 1);
  constexpr int kRequests = 40, kInput = 16, kOutput = 401;
  std::vector<Request> requests;
  for (int r = 0; r < kRequests; ++r) requests.push_back({r * 100.0, kInput, kOutput});
  ReplicaSettings settings;
  settings.max_batch = 1;
  settings.kv_blocks = 1000;
  settings.speculative = &spec;
  const ServingOutcome outcome = simulate_serving(requests, model, settings, 1);
  double tpot = 0;
  for (const RequestRecord& r : outcome.records) {
    tpot += (r.finish - r.first_token).seconds() / (kOutput - 1) / kRequests;
  }
  // The closed form: one iteration at the decode's mean context (attention is under 1% of a
  // batch-1 step at these contexts), over E[A] = (1 - 0.8^5) / 0.2 = 3.36 tokens.
  const double expected_tokens = spec.expected_accepted();
  const int64_t context = kInput + kOutput / 2;
  IterationWork verify;
  DraftWork draft;
  spec.add_verification(&verify, &draft, context, static_cast<int>(std::lround(expected_tokens)),
                        0, false);
  const double iteration =
      (model.iteration(verify, draft.verification) + spec.draft_time(draft)).seconds();
  const double closed_form = iteration / expected_tokens;
  // Tolerance 3%: the mean of the ~4,800 draws kept (400 tokens a request over 3.36, 40
  // requests; sd 1.5 tokens) is within 1.3% of E[A] at 3 standard errors; each request's last
  // iteration keeps only what its output has left (one of ~120: under 1%); attention varies with
  // the context over the decode (under 0.5%).
  INFO("simulated TPOT " << tpot * 1e3 << " ms, closed form " << closed_form * 1e3 << " ms");
  CHECK(tpot == Approx(closed_form).epsilon(0.03));
  // The run's mean tokens per iteration: E[A], every iteration but each request's last.
  const double kept = static_cast<double>(outcome.accepted_tokens) /
                      static_cast<double>(outcome.verifications);
  CHECK(kept == Approx(expected_tokens).epsilon(0.03));
  CHECK(outcome.accepted_tokens == kRequests * (kOutput - 1));
  // Weight-bandwidth bound: verifying k + 1 tokens reads the weights once, as decoding one does
  // (within 3%: the extra FLOPs and KV-cache re-reads of 4 more queries).
  IterationWork one{1, 1};
  one.decode_context = one.window_decode_context = static_cast<double>(context);
  const double verify_s = model.forward(verify, draft.verification).seconds();
  const double one_s = model.forward(one).seconds();
  INFO("verify " << verify_s * 1e3 << " ms, one token " << one_s * 1e3 << " ms");
  CHECK(verify_s == Approx(one_s).epsilon(0.03));
  CHECK(verify_s >= one_s);
  // Without speculation the same request decodes one token per iteration: k = 4 at 0.8 is
  // faster here (the draft pass is ~10% of a verification).
  ReplicaSettings plain = settings;
  plain.speculative = nullptr;
  const ServingOutcome baseline = simulate_serving(requests, model, plain, 1);
  const RequestRecord& first = baseline.records[0];
  const double plain_tpot = (first.finish - first.first_token).seconds() / (kOutput - 1);
  CHECK(tpot < plain_tpot / 2);
}

const std::string kSpeculative = R"(model: "llama3-70b"
deployment {
  instance: "aws.p5.48xlarge"
  tensor_parallel: 8
  quantization { weights: FP8 }
  scheduler { max_batch_size: 32 }
  speculative_decoding {
    draft_model: "llama3-8b"
    draft_tokens: 3
    acceptance_rate: 0.7
  }
}
traffic {
  rate_per_s: 4
  duration_s: 20
  input_tokens { uniform { min: 100 max: 400 } }
  output_tokens { uniform { min: 50 max: 200 } }
}
)";

TEST_CASE("a draft model's weights and KV cache sit beside the target's") {
  auto t = load_serving_text(kSpeculative + "sweep { draft_tokens: [0, 3] }\n");
  INFO(t->messages());
  REQUIRE(t->loaded != nullptr);
  const ServingSpace space(*t->loaded);
  REQUIRE(space.size() == 2);
  ServingEvaluator evaluator(testing::shipped_catalog(), *t->loaded);
  const ServingEvaluation off = evaluator.evaluate(space.at(0));
  const ServingEvaluation on = evaluator.evaluate(space.at(1));
  REQUIRE(off.metrics);
  REQUIRE(on.metrics);
  // Llama-3-8B at FP8 over 8 GPUs: its 6.98B layer parameters at one byte split 8 ways, its
  // 16-bit embedding (128256 x 4096) whole on every GPU and its output head split 8 ways:
  // 0.87 + 1.05 + 0.13 = 2.05 GB a GPU.
  const double draft_bytes = on.memory.weight_bytes - off.memory.weight_bytes;
  const double embedding = 128256.0 * 4096 * 2;
  CHECK(draft_bytes == Approx(6.98e9 / 8 + embedding * (1 + 1.0 / 8)).epsilon(0.01));
  // Its KV cache per token: 32 layers of 8 KV heads x 128 against the target's 80: 0.4 more.
  CHECK(on.memory.kv_bytes_per_token == Approx(off.memory.kv_bytes_per_token * 1.4));
  CHECK(on.kv_blocks < off.kv_blocks);
  CHECK(off.metrics->accepted_per_iteration == 0);
  CHECK(on.metrics->accepted_per_iteration > 1.5);
  CHECK(on.metrics->accepted_per_iteration < 1 + 0.7 + 0.49 + 0.343 + 0.01);
  CHECK(on.metrics->tpot_ms.mean < off.metrics->tpot_ms.mean);
}

TEST_CASE("a draft model at tensor parallelism 1 sits whole on the replica's first GPU") {
  std::string text = kSpeculative;
  text.replace(text.find("acceptance_rate: 0.7"), 20,
               "acceptance_rate: 0.7 draft_tensor_parallel: 1");
  auto t = load_serving_text(text + "sweep { draft_tokens: [0, 3] }\n");
  INFO(t->messages());
  REQUIRE(t->loaded != nullptr);
  const ServingSpace space(*t->loaded);
  ServingEvaluator evaluator(testing::shipped_catalog(), *t->loaded);
  const ServingEvaluation off = evaluator.evaluate(space.at(0));
  const ServingEvaluation on = evaluator.evaluate(space.at(1));
  REQUIRE(on.metrics);
  // All of Llama-3-8B at FP8 on that GPU: 6.98 GB of layers, 2 x 1.05 GB embedding and head;
  // its KV cache 32 layers x 8 heads x 128 x 2 (K, V) bytes a token beside the target's 80 layers
  // of one KV head a GPU.
  const double embedding = 128256.0 * 4096 * 2;
  CHECK(on.memory.weight_bytes - off.memory.weight_bytes ==
        Approx(6.98e9 + 2 * embedding).epsilon(0.01));
  CHECK(on.memory.kv_bytes_per_token - off.memory.kv_bytes_per_token ==
        Approx(32.0 * 8 * 128 * 2 * 1));  // FP8 cache
}

TEST_CASE("k = 0 in the sweep is the deployment without speculative decoding") {
  auto with = load_serving_text(kSpeculative + "sweep { draft_tokens: [0] }\n");
  std::string text = kSpeculative;
  const size_t from = text.find("  speculative_decoding {");
  text.erase(from, text.find("  }\n}", from) + 4 - from);
  auto without = load_serving_text(text);
  REQUIRE(with->loaded != nullptr);
  REQUIRE(without->loaded != nullptr);
  ServingEvaluator a(testing::shipped_catalog(), *with->loaded);
  ServingEvaluator b(testing::shipped_catalog(), *without->loaded);
  const ServingEvaluation off = a.evaluate(ServingSpace(*with->loaded).at(0));
  const ServingEvaluation plain = b.evaluate(ServingSpace(*without->loaded).at(0));
  REQUIRE(off.metrics);
  REQUIRE(plain.metrics);
  CHECK(off.metrics->tpot_ms.p99 == plain.metrics->tpot_ms.p99);
  CHECK(off.metrics->ttft_ms.mean == plain.metrics->ttft_ms.mean);
  CHECK(off.kv_blocks == plain.kv_blocks);
}

TEST_CASE("a sweep over draft tokens gives the same rows for any thread count") {
  auto t =
      load_serving_text(kSpeculative + "sweep { draft_tokens: [0, 1, 3, 5] replicas: [1, 2] }\n");
  REQUIRE(t->loaded != nullptr);
  Diagnostics diagnostics;
  auto prices = load_serving_prices(*t->loaded, testing::shipped_catalog(), nullptr, &diagnostics);
  REQUIRE(prices != nullptr);
  const auto run = [&](int threads) {
    std::vector<ResultRow> all;
    std::string error;
    ServingSweepOptions options;
    options.sweep.threads = threads;
    options.sweep.chunk = 1;
    run_serving_sweep(testing::shipped_catalog(), *t->loaded, *prices, options,
                      [&](std::vector<ResultRow>& rows, int64_t, const ServingSweepCounts&) {
                        all.insert(all.end(), rows.begin(), rows.end());
                        return true;
                      },
                      &error);
    REQUIRE(error.empty());
    std::vector<std::string> keys;
    for (const ResultColumn& c : serving_columns()) keys.push_back(c.key);
    std::ostringstream out;
    serving_table(keys, all).print(out, OutputFormat::kCsv);
    return out.str();
  };
  const std::string one = run(1);
  CHECK(one == run(2));
  CHECK(one == run(4));
  CHECK(one.find(",3,") != std::string::npos);
}

TEST_CASE("bad speculative decoding settings are errors at their field") {
  const auto messages = [](const std::string& from, const std::string& to,
                           const std::string& extra = "") {
    std::string text = kSpeculative + extra;
    if (!from.empty()) text.replace(text.find(from), from.size(), to);
    auto t = load_serving_text(text);
    CHECK(t->loaded == nullptr);
    return t->messages();
  };
  CHECK(messages("acceptance_rate: 0.7", "acceptance_rate: 1") ==
        "s.textproto:10:5: deployment.speculative_decoding.acceptance_rate: must be above 0 and "
        "below 1 (the probability that a draft token is accepted after those before it), got 1\n");
  CHECK(messages("acceptance_rate: 0.7", "acceptance_rate: 0") ==
        "s.textproto:10:5: deployment.speculative_decoding.acceptance_rate: must be above 0 and "
        "below 1 (the probability that a draft token is accepted after those before it), got 0\n");
  CHECK(messages("    acceptance_rate: 0.7\n", "") ==
        "s.textproto:7:3: deployment.speculative_decoding.acceptance_rate: is required\n");
  CHECK(messages("draft_tokens: 3", "draft_tokens: 0") ==
        "s.textproto:9:5: deployment.speculative_decoding.draft_tokens: must be in [1, 64], "
        "got 0\n");
  CHECK(messages("", "", "sweep { draft_tokens: [2, -1] }\n") ==
        "s.textproto:19:27: sweep.draft_tokens[1]: must be in [0, 64], got -1\n");
  CHECK(messages("draft_model: \"llama3-8b\"", "draft_model: \"llama3-8c\"") ==
        "s.textproto:8:5: deployment.speculative_decoding.draft_model: unknown model "
        "\"llama3-8c\" (did you mean \"llama3-8b\"?)\n");
  CHECK(messages("model: \"llama3-70b\"", "model: \"llama2-70b\"") ==
        "s.textproto:8:5: deployment.speculative_decoding.draft_model: \"llama3-8b\" has a "
        "vocabulary of 128256 tokens, \"llama2-70b\" of 32000: the target cannot verify its "
        "tokens\n");
  CHECK(messages("draft_model: \"llama3-8b\"", "multi_token_prediction: true") ==
        "s.textproto:8:5: deployment.speculative_decoding.multi_token_prediction: \"llama3-70b\" "
        "has no multi-token-prediction modules (its model's multi_token_prediction_layers): give "
        "draft_model or draft_head_layers\n");
  CHECK(messages("draft_model: \"llama3-8b\"", "draft_head_layers: 0") ==
        "s.textproto:8:5: deployment.speculative_decoding.draft_head_layers: must be in [1, 80], "
        "got 0\n");
  CHECK(messages("    draft_model: \"llama3-8b\"\n", "") ==
        "s.textproto:7:3: deployment.speculative_decoding: needs a draft: draft_model, "
        "multi_token_prediction or draft_head_layers\n");
  CHECK(messages("max_batch_size: 32", "batching: STATIC") ==
        "s.textproto:6:15: deployment.scheduler.batching: speculative decoding is simulated with "
        "CONTINUOUS batching only (a static batch steps together, each sequence keeping its own "
        "number of tokens: not modelled)\n");
  CHECK(messages("tensor_parallel: 8", "tensor_parallel: 4 pipeline_parallel: 2") ==
        "s.textproto:4:22: deployment.pipeline_parallel: speculative decoding is simulated on "
        "replicas of one pipeline stage (the draft beside a pipeline is not modelled): "
        "pipeline_parallel 1\n");
  CHECK(messages("acceptance_rate: 0.7", "acceptance_rate: 0.7 draft_tensor_parallel: 4") ==
        "s.textproto:10:26: deployment.speculative_decoding.draft_tensor_parallel: must be 1 or "
        "the target's tensor_parallel (8), got 4\n");
  CHECK(messages("draft_model: \"llama3-8b\"", "draft_head_layers: 1 draft_tensor_parallel: 1") ==
        "s.textproto:8:26: deployment.speculative_decoding.draft_tensor_parallel: sets a draft "
        "model's tensor parallelism: MTP modules and draft heads run inside the target's\n");
  std::string plain = kSpeculative;
  const size_t from = plain.find("  speculative_decoding {");
  plain.erase(from, plain.find("  }\n}", from) + 4 - from);
  auto t = load_serving_text(plain + "sweep { draft_tokens: [2] }\n");
  CHECK(t->messages() ==
        "s.textproto:14:9: sweep.draft_tokens: sets speculative decoding's draft tokens: give "
        "deployment.speculative_decoding\n");
}

TEST_CASE("a model's multi-token-prediction modules draft with their own KV cache") {
  const IterationInputs in = single_gpu_inputs("deepseek-v3", "H100-SXM5-80GB", {});
  s::SpeculativeDecoding mtp;
  mtp.set_multi_token_prediction(true);
  mtp.set_draft_tokens(3);
  mtp.set_acceptance_rate(0.8);
  const SpeculativeDecoder spec(in, mtp, nullptr, 3, 1);
  // One MTP module of DeepSeek-V3: 11.61B parameters (models/deepseek.textproto: an expert layer,
  // three norms and the 2h x h projection) at 16 bits, embedding and head shared.
  CHECK(spec.weight_bytes() == Approx(11.61e9 * 2).epsilon(0.01));
  // Its one latent-attention layer's cache: (512 + 64) x 2 bytes a token.
  CHECK(spec.kv_bytes_per_token() == Approx(576 * 2));
}

// Expert parallelism splits the target's experts; draft heads are dense layers (no experts to
// split, the same passes at any EP), while an MTP module is a layer of the target's, its experts
// split as the target's: at EP 8 its busiest rank streams more whole experts than TP 8's share.
TEST_CASE("expert parallelism applies to MTP modules, not to dense draft heads") {
  IterationInputs in =
      single_gpu_inputs("deepseek-v3", "H200-SXM-141GB", {s::FP8, s::FP8, s::FP8});
  const auto topology = testing::shipped_cluster("aws.p5en.48xlarge", 1, 8);
  in.topology = topology.get();
  in.tensor_parallel = 8;
  in.max_tokens = 1024;
  IterationInputs expert = in;
  expert.expert_parallel = 8;
  s::SpeculativeDecoding mtp;
  mtp.set_multi_token_prediction(true);
  mtp.set_draft_tokens(3);
  mtp.set_acceptance_rate(0.8);
  const auto time = [](const SpeculativeDecoder& spec) {
    IterationWork work;
    DraftWork draft;
    spec.add_verification(&work, &draft, 1000, 2, 0, false);
    return spec.draft_time(draft);
  };
  const SpeculativeDecoder heads_tp(in, heads(2, 3, 0.8), nullptr, 3, 1);
  const SpeculativeDecoder heads_ep(expert, heads(2, 3, 0.8), nullptr, 3, 1);
  CHECK(heads_ep.weight_bytes() == heads_tp.weight_bytes());
  CHECK(time(heads_ep) == time(heads_tp));
  const SpeculativeDecoder mtp_tp(in, mtp, nullptr, 3, 1);
  const SpeculativeDecoder mtp_ep(expert, mtp, nullptr, 3, 1);
  CHECK(time(mtp_ep) > time(mtp_tp));
}

}  // namespace
}  // namespace clustersim
