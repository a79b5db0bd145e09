// Tests of sim/serve/serving_evaluation and memory_fit: memory fit, OOM rows, FP4 on a GPU with
// FP4 tensor cores (a test-only catalog entry).
#include "sim/serve/serving_evaluation.h"

#include <catch2/catch.hpp>

#include "sim/serve/serving_checks.h"
#include "sim/serve/serving_rows.h"
#include "sim/sweep/results_file.h"
#include "tests/serve/serve_fixture.h"
#include "tests/testing/catalog_snippets.h"

namespace clustersim {
namespace {

namespace s = schema;

// A Blackwell-like GPU: FP4 tensor cores, 192 GB.
const std::string kFp4Gpu = R"(gpu {
  name: "TestFP4-192GB"
  form_factor: SXM
  memory_gib: 192
  memory_bandwidth_gb_per_s: 8000
  peak_tflops { fp32: 80 bf16: 2250 fp16: 2250 fp8: 4500 fp4: 9000 }
  nvlink { generation: 5 links: 18 per_direction_gb_per_s: 900 }
  )" + testing::kSource + "\n}\n";

struct Fp4Catalog {
  testing::TempDir dir;
  Diagnostics diagnostics;
  std::unique_ptr<Catalog> catalog;
  Fp4Catalog() {
    dir.write("fp4.textproto",
              kFp4Gpu + testing::instance_entry(testing::test_instance_fields(
                            "onprem.test-fp4", "TestFP4-192GB", "8")));
    catalog = Catalog::load({testing::source_path("models"), testing::source_path("topologies"),
                             dir.path()},
                            &diagnostics);
  }
};

const char* const kFp4Scenario = R"(model: "llama2-70b"
deployment { instance: "onprem.test-fp4" quantization { weights: FP4 } }
traffic { rate_per_s: 2 duration_s: 30 input_tokens { fixed: 512 } output_tokens { fixed: 64 } }
)";

TEST_CASE("FP4 serves on a GPU whose catalog entry has an FP4 peak") {
  Fp4Catalog c;
  REQUIRE_FALSE(c.diagnostics.has_errors());
  testing::TempDir dir;
  Diagnostics diagnostics;
  auto loaded = load_serving_scenario(dir.write("s.textproto", kFp4Scenario), *c.catalog,
                                      &diagnostics);
  INFO(diagnostics.to_string());
  REQUIRE(loaded != nullptr);
  ServingEvaluator evaluator(*c.catalog, *loaded);
  const ServingEvaluation e = evaluator.evaluate(ServingSpace(*loaded).at(0));
  REQUIRE(e.metrics);
  CHECK(e.formats.activations == s::FP4);
  CHECK(e.formats.kv_cache == s::FP8);
  CHECK_FALSE(e.calibrated);  // no serving fit for a test GPU: the SXM default
  // 68.98e9 parameters, of which the embedding and output projection (2 x 32000 x 8192) and
  // the norms stay 16-bit, the rest half a byte.
  const double sixteen_bit = 2 * 32000.0 * 8192 + (2 * 80 + 1) * 8192.0;
  CHECK(e.memory.weight_bytes == Approx((68976648192.0 - sixteen_bit) * 0.5 + sixteen_bit * 2));
}

TEST_CASE("FP4 on a GPU without FP4 tensor cores is a problem naming the GPU") {
  s::Quantization q;
  q.set_weights(s::FP4);
  const s::Gpu& h100 = *testing::shipped_catalog().gpus().find("H100-SXM5-80GB")->value;
  CHECK(quantization_problem(q, h100) == "GPU \"H100-SXM5-80GB\" has no FP4 support");
}

// A static batch holds weights + runtime + activations of its prompts + KV of every token:
//   peak = W + runtime + B I a + B (I + O) kv
TEST_CASE("a static batch's peak memory adds its prompts' activations and all its KV cache") {
  const s::Transformer& t =
      testing::shipped_catalog().models().find("llama2-7b")->value->transformer();
  const InferenceShape shape = inference_shape(t, {s::FP8, s::FP8, s::FP8}, 1, 1, 0);
  const double runtime_gib = 1.5;
  const double peak = static_batch_peak_bytes(shape, runtime_gib * 1073741824.0, 64, 2048, 128);
  const double expected = shape.weight_bytes + runtime_gib * 1073741824.0 +
                          64 * 2048 * shape.activation_bytes_per_token +
                          64 * 2176 * shape.kv_bytes_per_token;
  CHECK(peak == Approx(expected));
  CHECK(shape.kv_bytes_per_token == 2 * 32 * 32 * 128);  // 2 x layers x heads x head_dim x 1 byte
}

// Mistral 7B attends within 4096 tokens in every layer, and its cache holds that window a sequence:
// a static batch of 4,224-token contexts peaks 128 tokens of KV cache a sequence below a full cache
// (16.8 MB at FP16: 2 x 32 layers x 8 KV heads x 128 x 2 bytes x 128 tokens), the calibration's
// Mistral 128 / 4096 runs (results/serving_validation.md); a context inside the window keeps all
// of it.
TEST_CASE("a sliding window's cache holds the window's tokens a sequence, not the whole context") {
  const s::Transformer& t =
      testing::shipped_catalog().models().find("mistral-7b")->value->transformer();
  const InferenceShape shape = inference_shape(t, {s::FP16, s::FP16, s::FP16}, 1, 1, 0);
  REQUIRE(shape.windowed_layers == 32);
  REQUIRE(shape.window_tokens == 4096);
  const double base = shape.weight_bytes + 60 * 128 * shape.activation_bytes_per_token;
  const double windowed = static_batch_peak_bytes(shape, 0, 60, 128, 4096);
  CHECK(windowed == Approx(base + 60 * 4096 * shape.kv_bytes_per_token));
  CHECK(base + 60 * 4224 * shape.kv_bytes_per_token - windowed == Approx(60 * 16777216.0));
  CHECK(static_batch_peak_bytes(shape, 0, 60, 128, 2048) ==
        Approx(base + 60 * 2176 * shape.kv_bytes_per_token));
}

TEST_CASE("a model larger than its GPUs gets an out-of-memory row, not a simulation") {
  auto t = testing::load_serving_text(R"(model: "llama2-70b"
deployment { instance: "aws.g6.xlarge" }
traffic { rate_per_s: 1 input_tokens { fixed: 512 } output_tokens { fixed: 64 } }
)");
  REQUIRE(t->loaded != nullptr);
  ServingEvaluator evaluator(testing::shipped_catalog(), *t->loaded);
  const ServingEvaluation e = evaluator.evaluate(ServingSpace(*t->loaded).at(0));
  CHECK_FALSE(e.metrics);
  CHECK(e.out_of_memory.rfind("GPU memory (OOM by ", 0) == 0);
}

}  // namespace
}  // namespace clustersim

namespace clustersim {
namespace {

// A price of a billing mode nothing prices was accepted and never read; autoscaling's baseline
// and burst modes are priced as billing's are.
TEST_CASE("a serving price override of a billing mode not priced is warned of") {
  const std::string scenario = R"(model: "llama2-7b"
deployment { instance: "aws.g6.xlarge" }
traffic { rate_per_s: 1 duration_s: 20 input_tokens { fixed: 256 } output_tokens { fixed: 32 } }
prices { price { instance: "aws.g6.xlarge"
                 price { billing: SUBSCRIPTION_MONTHLY currency: USD per_hour: 0.5 } } }
)";
  auto unread = testing::load_serving_text(scenario);
  REQUIRE(unread->loaded != nullptr);
  REQUIRE(load_serving_prices(*unread->loaded, testing::shipped_catalog(), nullptr,
                              &unread->diagnostics) != nullptr);
  CHECK(unread->messages() ==
        "s.textproto:5:26: warning: prices.price[0].price.billing: SUBSCRIPTION_MONTHLY is not "
        "among the billing modes priced (ON_DEMAND), so this price is never used\n");
  std::string day = "autoscaling { hourly_rate_per_s: [";
  for (int h = 0; h < 24; ++h) day += std::string(h ? ", " : "") + "1";
  auto read = testing::load_serving_text(scenario + day + "] }\nslo { p99_ttft_ms: 1000 }\n");
  REQUIRE(read->loaded != nullptr);
  REQUIRE(load_serving_prices(*read->loaded, testing::shipped_catalog(), nullptr,
                              &read->diagnostics) != nullptr);
  CHECK(read->messages() == "");
}

// A mode of the autoscaled day without a price for an instance: the sizing ran, then printed
// "autoscaling: no SUBSCRIPTION_YEARLY price for ..." and exited 0. aws.g6.xlarge has an
// ON_DEMAND price only; every other mode is refused at its field, the default baseline (monthly)
// at the block.
TEST_CASE("every billing mode of an autoscaled day needs a price for its instances") {
  std::string day = "autoscaling { hourly_rate_per_s: [";
  for (int h = 0; h < 24; ++h) day += std::string(h ? ", " : "") + "1";
  day += "]";
  const auto messages = [&](const std::string& modes) {
    auto t = testing::load_serving_text(R"(model: "llama2-7b"
deployment { instance: "aws.g6.xlarge" }
traffic { rate_per_s: 1 duration_s: 20 input_tokens { fixed: 256 } output_tokens { fixed: 32 } }
slo { p99_ttft_ms: 1000 }
)" + day + modes + " }\n");
    REQUIRE(t->loaded != nullptr);
    CHECK(load_serving_prices(*t->loaded, testing::shipped_catalog(), nullptr, &t->diagnostics) ==
          nullptr);
    return t->messages();
  };
  const auto refused = [](const std::string& where, const std::string& mode) {
    return "s.textproto:5:" + where + ": \"aws.g6.xlarge\" has no " + mode +
           " price in the catalog: give one in the scenario's prices or a --prices file\n";
  };
  CHECK(messages(" baseline_billing: SUBSCRIPTION_YEARLY") ==
        refused("107: autoscaling.baseline_billing", "SUBSCRIPTION_YEARLY"));
  CHECK(messages("") == refused("1: autoscaling.baseline_billing", "SUBSCRIPTION_MONTHLY"));
  CHECK(messages(" baseline_billing: ON_DEMAND burst_billing: SPOT") ==
        refused("135: autoscaling.burst_billing", "SPOT"));
}

// A serving sizing's rows go through the training sweeps' results file with their own columns.
TEST_CASE("serving rows round-trip through the HDF5 results file") {
  auto t = testing::load_serving_text(R"(model: "llama2-7b"
deployment { instance: "aws.g6.xlarge" }
traffic { rate_per_s: 1 duration_s: 20 input_tokens { fixed: 256 } output_tokens { fixed: 32 } }
sweep { replicas: [1, 2] }
)");
  REQUIRE(t->loaded != nullptr);
  Diagnostics diagnostics;
  auto prices = load_serving_prices(*t->loaded, testing::shipped_catalog(), nullptr, &diagnostics);
  REQUIRE(prices != nullptr);
  ServingEvaluator evaluator(testing::shipped_catalog(), *t->loaded);
  std::vector<ResultRow> rows;
  for (int64_t i = 0; i < 2; ++i) {
    const ServingConfiguration c = ServingSpace(*t->loaded).at(i);
    for (ResultRow& r : make_serving_rows(c, evaluator.evaluate(c), *prices, std::nullopt)) {
      rows.push_back(std::move(r));
    }
  }
  const std::string path = t->dir.path() + "/serving.h5";
  std::string error;
  auto writer = ResultsWriter::create(path, &error, serving_columns());
  REQUIRE(writer != nullptr);
  SweepSummary summary;
  summary.candidates = summary.next_index = summary.configurations = 2;
  summary.rows = static_cast<int64_t>(rows.size());
  summary.complete = true;
  REQUIRE(writer->append(rows, &error));
  REQUIRE(writer->commit(summary, &error));
  ResultsFile file;
  REQUIRE(read_results(path, &file, &error, serving_columns()));
  CHECK(file.rows == rows);
  CHECK_FALSE(read_results(path, &file, &error));  // not a training sweep's columns
}

}  // namespace
}  // namespace clustersim
