// Invariant (metamorphic) tests of the serving model: one input changed, the same requests served
// again, and the result must move the way physics and queueing say: a faster GPU never lengthens
// an iteration, more tokens never shorten one, a lower rate of the same requests never raises a
// latency percentile, more replicas never slow the same requests, more KV cache never preempts
// more or delays a first or last token, and every request arriving is served, one iteration per
// token it asked for when alone. tools/serve_invariants.py runs such relations over the shipped
// scenarios; results/serving_validation.md lists what they found.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sim/serve/serving_evaluation.h"
#include "sim/serve/serving_metrics.h"
#include "sim/serve/serving_simulation.h"
#include "tests/serve/serve_fixture.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::single_gpu_inputs;

// `gpu` with every peak rate (tensor and non-tensor, measured matmul rates with them) x `factor`.
s::Gpu with_peaks_scaled(const s::Gpu& gpu, double factor) {
  s::Gpu faster = gpu;
  for (google::protobuf::Message* rates :
       {static_cast<google::protobuf::Message*>(faster.mutable_peak_tflops()),
        static_cast<google::protobuf::Message*>(faster.mutable_measured_matmul())}) {
    const google::protobuf::Reflection* reflection = rates->GetReflection();
    const google::protobuf::Descriptor* descriptor = rates->GetDescriptor();
    for (int f = 0; f < descriptor->field_count(); ++f) {
      const google::protobuf::FieldDescriptor* field = descriptor->field(f);
      if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE ||
          !reflection->HasField(*rates, field)) {
        continue;
      }
      reflection->SetDouble(rates, field, reflection->GetDouble(*rates, field) * factor);
    }
  }
  return faster;
}

s::Gpu with_bandwidth_scaled(const s::Gpu& gpu, double factor) {
  s::Gpu faster = gpu;
  faster.set_memory_bandwidth_gb_per_s(gpu.memory_bandwidth_gb_per_s() * factor);
  return faster;
}

// The iteration models of one GPU and of two faster copies of it: its peaks, and its HBM
// bandwidth, x1.5.
struct FasterGpuModels {
  explicit FasterGpuModels(const IterationInputs& in)
      : flops(with_peaks_scaled(*in.gpu, 1.5)),
        bandwidth(with_bandwidth_scaled(*in.gpu, 1.5)),
        base(in),
        more_flops(on(in, &flops)),
        more_bandwidth(on(in, &bandwidth)) {}
  static IterationInputs on(IterationInputs in, const s::Gpu* gpu) {
    in.gpu = gpu;
    return in;
  }
  const s::Gpu flops, bandwidth;  // before the models, which point at them
  const IterationModel base, more_flops, more_bandwidth;
};

// Iterations of every kind a replica forms: prompts alone (whole or chunks after cached tokens),
// decoding sequences alone, and both.
std::vector<IterationWork> iteration_grid() {
  std::vector<IterationWork> works;
  for (const int64_t prompt : {1, 17, 128, 1000, 4096}) {
    for (const int64_t decoding : {0, 1, 8, 64, 256}) {
      for (const int64_t past : {0, 3000}) {
        IterationWork w;
        w.tokens = prompt + decoding;
        w.logits = 1 + decoding;
        add_prompt_chunk(&w, past, prompt);
        w.decode_context = static_cast<double>(decoding) * 1500;
        works.push_back(w);
      }
    }
  }
  for (const int64_t decoding : {1, 8, 64, 256}) {
    works.push_back(IterationWork{decoding, decoding, 0, static_cast<double>(decoding) * 700});
  }
  return works;
}

TEST_CASE("invariant: a GPU with more FLOP/s or memory bandwidth never lengthens an iteration",
          "[invariant]") {
  for (const char* gpu : {"H100-SXM5-80GB", "A100-SXM4-80GB", "L40S-PCIE-48GB"}) {
    for (const s::Precision precision : {s::FP16, s::FP8}) {
      TensorFormats formats;
      formats.weights = formats.activations = formats.kv_cache = precision;
      if (precision == s::FP8 && std::string(gpu) == "A100-SXM4-80GB") continue;  // no FP8
      const FasterGpuModels models(single_gpu_inputs("llama2-7b", gpu, formats));
      for (const IterationWork& w : iteration_grid()) {
        INFO(gpu << " " << s::Precision_Name(precision) << ": " << w.tokens << " tokens, "
                 << w.attention_pairs << " prompt pairs, " << w.decode_context
                 << " decode context");
        CHECK(models.more_flops.iteration(w) <= models.base.iteration(w));
        CHECK(models.more_bandwidth.iteration(w) <= models.base.iteration(w));
      }
    }
  }
}

TEST_CASE("invariant: an iteration never shortens with another prompt token or decode key",
          "[invariant]") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  Picoseconds previous;
  for (int64_t prompt = 1; prompt <= 4096; ++prompt) {
    IterationWork w;
    w.tokens = prompt;
    w.logits = 1;
    add_prompt_chunk(&w, 0, prompt);
    const Picoseconds t = model.iteration(w);
    INFO("a prompt of " << prompt << " tokens");
    CHECK(t >= previous);
    previous = t;
  }
  previous = Picoseconds();
  for (int64_t decoding = 1; decoding <= 256; ++decoding) {
    const Picoseconds t =
        model.iteration(IterationWork{decoding, decoding, 0, static_cast<double>(decoding) * 1000});
    INFO(decoding << " sequences decoding");
    CHECK(t >= previous);
    previous = t;
  }
}

std::vector<Request> uniform_traffic(double rate, double duration_s, int input_max, int output_max,
                                     double rate_scale = 1) {
  s::Traffic t;
  t.set_rate_per_s(rate);
  t.set_duration_s(duration_s);
  t.mutable_input_tokens()->mutable_uniform()->set_min(16);
  t.mutable_input_tokens()->mutable_uniform()->set_max(input_max);
  t.mutable_output_tokens()->mutable_uniform()->set_min(1);
  t.mutable_output_tokens()->mutable_uniform()->set_max(output_max);
  return generate_requests(t, rate_scale);
}

// Every request that arrived finished, after it arrived, its first token no later than its last.
void check_conserved(const std::vector<Request>& requests, const ServingOutcome& o) {
  REQUIRE(o.records.size() == requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    const RequestRecord& r = o.records[i];
    REQUIRE(r.done);
    CHECK(r.first_token.seconds() > requests[i].arrival_s);
    CHECK(r.finish >= r.first_token);
    if (requests[i].output_tokens == 1) CHECK(r.finish == r.first_token);
  }
}

// Requests far enough apart that each is served alone: one prefill iteration per chunk of the
// token budget (its last producing the first token), then one per further output token.
TEST_CASE("invariant: requests served alone take one iteration per prompt chunk and output token",
          "[invariant]") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  std::vector<Request> requests;
  for (int i = 0; i < 20; ++i) {
    Request r;
    r.arrival_s = 10.0 * i;
    r.input_tokens = 1 + 397 * i;
    r.output_tokens = 1 + 13 * i;
    requests.push_back(r);
  }
  for (const bool chunked : {false, true}) {
    ReplicaSettings settings;
    settings.kv_blocks = 10000;
    settings.chunked_prefill = chunked;
    settings.max_tokens = chunked ? 1024 : 8192;
    const ServingOutcome o = simulate_serving(requests, model, settings, 1);
    check_conserved(requests, o);
    int64_t expected = 0;
    for (const Request& r : requests) {
      const int64_t chunks = chunked ? (r.input_tokens + 1023) / 1024 : 1;
      expected += chunks + r.output_tokens - 1;
    }
    INFO((chunked ? "chunked" : "whole prompts"));
    CHECK(o.iterations == expected);
    CHECK(o.preemptions == 0);
  }
}

// The metrics of `requests` served by `replicas` replicas of `model` under `settings`.
ServingMetrics served(const std::vector<Request>& requests, const IterationModel& model,
                      const ReplicaSettings& settings, int replicas = 1) {
  const ServingOutcome o = simulate_serving(requests, model, settings, replicas);
  check_conserved(requests, o);
  return measure_serving(requests, o, 0);
}

// `faster`'s latencies no larger than `slower`'s: TTFT and end to end, and TPOT unless
// `with_tpot` is false (where more sequences may decode at once, each step slower).
void check_not_slower(const ServingMetrics& faster, const ServingMetrics& slower,
                      bool with_tpot = true) {
  const auto check = [&](const Percentiles& f, const Percentiles& s, const char* name) {
    INFO(name);
    CHECK(f.mean <= s.mean);
    CHECK(f.p50 <= s.p50);
    CHECK(f.p90 <= s.p90);
    CHECK(f.p99 <= s.p99);
  };
  check(faster.ttft_ms, slower.ttft_ms, "TTFT");
  if (with_tpot) check(faster.tpot_ms, slower.tpot_ms, "TPOT");
  check(faster.e2e_ms, slower.e2e_ms, "E2E");
}

TEST_CASE("invariant: the same requests on a faster GPU are served no slower", "[invariant]") {
  const FasterGpuModels models(single_gpu_inputs("llama2-7b", "A100-SXM4-80GB", {}));
  const std::vector<Request> requests = uniform_traffic(12, 60, 2048, 256);
  for (const bool chunked : {false, true}) {
    ReplicaSettings settings;
    settings.kv_blocks = 20000;
    settings.chunked_prefill = chunked;
    settings.max_tokens = chunked ? 2048 : 8192;
    INFO((chunked ? "chunked" : "whole prompts"));
    const ServingMetrics m = served(requests, models.base, settings);
    check_not_slower(served(requests, models.more_flops, settings), m);
    check_not_slower(served(requests, models.more_bandwidth, settings), m);
  }
}

// TPOT may grow with the cache: at 200 blocks of 16 tokens about 6 of these sequences decode at
// once, at 3,200 all 64 the batch allows, each step longer.
TEST_CASE("invariant: more KV cache never preempts more or delays a first or last token",
          "[invariant]") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const std::vector<Request> requests = uniform_traffic(40, 30, 512, 512);
  ReplicaSettings settings;
  settings.max_batch = 64;
  settings.block_tokens = 16;
  ServingOutcome previous;
  ServingMetrics previous_metrics;
  for (const int64_t blocks : {200, 400, 800, 1600, 3200}) {
    settings.kv_blocks = blocks;
    const ServingOutcome o = simulate_serving(requests, model, settings, 1);
    check_conserved(requests, o);
    const ServingMetrics m = measure_serving(requests, o, 0);
    INFO(blocks << " blocks");
    if (blocks > 200) {
      CHECK(o.preemptions <= previous.preemptions);
      check_not_slower(m, previous_metrics, false);
    }
    previous = o;
    previous_metrics = m;
  }
  CHECK(previous.preemptions == 0);
}

TEST_CASE("invariant: more replicas serve the same requests no slower", "[invariant]") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "A100-SXM4-80GB", {}));
  const std::vector<Request> requests = uniform_traffic(20, 60, 2048, 256);
  ReplicaSettings settings;
  settings.kv_blocks = 20000;
  ServingMetrics previous = served(requests, model, settings, 1);
  for (int replicas = 2; replicas <= 4; ++replicas) {
    INFO(replicas << " replicas");
    const ServingMetrics m = served(requests, model, settings, replicas);
    check_not_slower(m, previous);
    previous = m;
  }
}

TEST_CASE("invariant: the traffic at half its rate is the same requests, twice as far apart",
          "[invariant]") {
  const std::vector<Request> full = uniform_traffic(20, 60, 2048, 256);
  const std::vector<Request> half = uniform_traffic(20, 60, 2048, 256, 0.5);
  REQUIRE(half.size() < full.size());
  REQUIRE(half.size() > full.size() / 3);
  for (size_t i = 0; i < half.size(); ++i) {
    INFO("request " << i);
    CHECK(half[i].input_tokens == full[i].input_tokens);
    CHECK(half[i].output_tokens == full[i].output_tokens);
    CHECK(half[i].arrival_s == Approx(2 * full[i].arrival_s).epsilon(1e-12));
  }
}

TEST_CASE("invariant: the same requests at a lower rate wait no longer", "[invariant]") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "A100-SXM4-80GB", {}));
  ReplicaSettings settings;
  settings.kv_blocks = 20000;
  const std::vector<Request> full = uniform_traffic(20, 60, 2048, 256);
  const std::vector<Request> half = uniform_traffic(20, 60, 2048, 256, 0.5);
  // The requests both traffics hold: the first half.size() of the full rate's.
  const std::vector<Request> first(full.begin(), full.begin() + static_cast<long>(half.size()));
  check_not_slower(served(half, model, settings), served(first, model, settings));
}

// A looser objective is met wherever a tighter one is, so the highest rate meeting it is no lower.
TEST_CASE("invariant: the highest rate within an objective never falls as it loosens",
          "[invariant]") {
  double previous = 0;
  for (const int ttft_ms : {150, 300, 600, 1200}) {
    auto t = testing::load_serving_text(R"(model: "llama2-7b"
deployment { instance: "aws.g6.xlarge" quantization { weights: INT8 } }
traffic { rate_per_s: 1 duration_s: 30 input_tokens { uniform { min: 64 max: 1024 } }
          output_tokens { uniform { min: 16 max: 128 } } }
slo { p99_ttft_ms: )" + std::to_string(ttft_ms) +
                                        " }\n");
    REQUIRE(t->loaded != nullptr);
    ServingEvaluator evaluator(testing::shipped_catalog(), *t->loaded);
    const double scale = evaluator.max_rate_scale(ServingSpace(*t->loaded).at(0));
    INFO("p99 TTFT " << ttft_ms << " ms");
    CHECK(scale >= previous);
    previous = scale;
  }
  CHECK(previous > 0);
}

}  // namespace
}  // namespace clustersim
