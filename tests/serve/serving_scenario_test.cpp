// Tests of sim/serve/serving_scenario: bad serving inputs are errors at file:line and field.
#include "sim/serve/serving_scenario.h"

#include <catch2/catch.hpp>
#include <utility>

#include "sim/serve/serving_space.h"
#include "tests/serve/serve_fixture.h"

namespace clustersim {
namespace {

using testing::load_serving_text;

const std::string kGood = R"(model: "llama2-7b"
deployment { instance: "aws.p5.48xlarge" }
traffic {
  rate_per_s: 10
  input_tokens { fixed: 512 }
  output_tokens { fixed: 128 }
}
)";

TEST_CASE("a valid serving scenario loads") {
  auto t = load_serving_text(kGood);
  INFO(t->messages());
  CHECK(t->loaded != nullptr);
}

// A deployment value beside its sweep axis was never read: instance "nope" loaded. It is checked as
// without the axis; one the axis leaves out is never simulated, which a warning says, and one of
// the axis's values (the speculative scenarios' draft_tokens 4 beside [0, 2, 4]) is not warned of.
TEST_CASE("a deployment value a sweep axis replaces is checked, and warned of when left out") {
  std::string text = kGood;
  text.replace(text.find("aws.p5.48xlarge"), 15, "nope");
  auto unknown = load_serving_text(text + "sweep { instance: [\"aws.p5.48xlarge\"] }\n");
  CHECK(unknown->loaded == nullptr);
  CHECK(unknown->messages() ==
        "s.textproto:2:14: deployment.instance: unknown instance type \"nope\"\n");
  std::string fixed = kGood;
  fixed.replace(fixed.find(" }"), 2,
                " replicas: 3 quantization { weights: INT8 }\n"
                "  scheduler { max_batch_size: 64 } }");
  auto replaced =
      load_serving_text(fixed +
                        "sweep {\n  instance: [\"aws.p4d.24xlarge\", \"aws.p5.48xlarge\"]\n"
                        "  replicas: [1, 2]\n  quantization { weights: FP8 }\n"
                        "  max_batch_size: [64, 128]\n}\n");
  CHECK(replaced->loaded != nullptr);
  CHECK(replaced->messages() ==
        "s.textproto:2:42: warning: deployment.replicas: 3 is never simulated: sweep.replicas (1, "
        "2) replaces it in every configuration\n"
        "s.textproto:2:54: warning: deployment.quantization: { weights: INT8 } is never simulated: "
        "sweep.quantization ({ weights: FP8 }) replaces it in every configuration\n");
}

TEST_CASE("a zero request rate is an error at its field") {
  std::string text = kGood;
  text.replace(text.find("rate_per_s: 10"), 14, "rate_per_s: 0");
  auto t = load_serving_text(text);
  CHECK(t->loaded == nullptr);
  CHECK(t->messages() == "s.textproto:4:3: traffic.rate_per_s: must be > 0, got 0\n");
}

// A median of 400 with max 100 loaded: every prompt was clipped to 100 tokens, silently.
// Burst replicas at a subscription's hourly price were priced as if a month's commitment could be
// bought for an hour; a billing mode written as BILLING_MODE_UNSPECIFIED left the day unpriced
// ("autoscaling: no BILLING_MODE_UNSPECIFIED price", exit 0, no line).
TEST_CASE("autoscaling bursts by the hour, and names its billing modes") {
  std::string rates = kGood + "slo { p99_ttft_ms: 500 }\nautoscaling {\n  hourly_rate_per_s: [1";
  for (int hour = 1; hour < 24; ++hour) rates += ", 1";
  rates += "]\n";
  auto subscription = load_serving_text(rates + "  burst_billing: SUBSCRIPTION_MONTHLY\n}\n");
  CHECK(subscription->loaded == nullptr);
  CHECK(subscription->messages() ==
        "s.textproto:11:3: autoscaling.burst_billing: burst replicas are bought for an hour: "
        "ON_DEMAND or SPOT, not SUBSCRIPTION_MONTHLY (committed for every hour of a month or a "
        "year)\n");
  auto unspecified =
      load_serving_text(rates + "  baseline_billing: BILLING_MODE_UNSPECIFIED\n}\n");
  CHECK(unspecified->loaded == nullptr);
  CHECK(unspecified->messages() ==
        "s.textproto:11:3: autoscaling.baseline_billing: must be set to a value other than "
        "BILLING_MODE_UNSPECIFIED\n");
  CHECK(load_serving_text(rates + "  burst_billing: SPOT\n}\n")->loaded != nullptr);
}

TEST_CASE("a log-normal length's median below its min or above its max is an error at the median") {
  const auto errors = [](const std::string& lognormal) {
    std::string text = kGood;
    text.replace(text.find("fixed: 512"), 10, "lognormal { " + lognormal + " }");
    return load_serving_text(text)->messages();
  };
  CHECK(errors("median: 400 sigma: 0.8 max: 100") ==
        "s.textproto:5:30: traffic.input_tokens.lognormal.median: must be within [min, max] = "
        "[1, 100], got 400\n");
  CHECK(errors("median: 40 sigma: 0.8 min: 64 max: 512") ==
        "s.textproto:5:30: traffic.input_tokens.lognormal.median: must be within [min, max] = "
        "[64, 512], got 40\n");
  CHECK(errors("median: 400 sigma: 0.8 max: 400").empty());
  // A sigma of 1e300 sent every draw to min or max (tools/input_audit.py); 0 is every request of
  // the median.
  CHECK(errors("median: 400 sigma: 1e300 max: 2000") ==
        "s.textproto:5:42: traffic.input_tokens.lognormal.sigma: must be in [0, 10], got "
        "1e+300\n");
  CHECK(errors("median: 400 sigma: 0 max: 2000").empty());
}

TEST_CASE("a burst's interval and length are at most the longest traffic") {
  // 1e300 of either was taken: no burst ever, or one without end (tools/input_audit.py).
  const auto errors = [](const std::string& every, const std::string& length) {
    std::string text = kGood;
    text.replace(text.find("rate_per_s: 10"), 14,
                 "bursts { base_rate_per_s: 1 burst_rate_per_s: 4 burst_every_s: " + every +
                     " burst_duration_s: " + length + " }");
    return load_serving_text(text)->messages();
  };
  CHECK(errors("10", "2").empty());
  CHECK(errors("1e300", "2") ==
        "s.textproto:4:51: traffic.bursts.burst_every_s: must be in [0, 172800], got 1e+300\n");
  CHECK(errors("10", "1e300") ==
        "s.textproto:4:69: traffic.bursts.burst_duration_s: must be in [0, 172800], got 1e+300\n");
}

TEST_CASE("a serving scenario's name and group, when written, are not empty") {
  // They label the rows serve and validate print (tools/input_audit.py).
  CHECK(load_serving_text("name: \"\"\ngroup: \"\"\n" + kGood)->messages() ==
        "s.textproto:1:1: name: is empty\n"
        "s.textproto:2:1: group: is empty\n");
}

// DeepSeek V4 serves on continuous batching; what is not simulated for its compressed sparse
// attention is an error at the field to change.
TEST_CASE("a model with DeepSeek V4's attention serves, its unsimulated features refused") {
  std::string text = kGood;
  text.replace(text.find("llama2-7b"), 9, "deepseek-v4-flash");
  auto good = load_serving_text(text);
  INFO(good->messages());
  CHECK(good->loaded != nullptr);
  const std::string unsimulated =
      " is not simulated for \"deepseek-v4-flash\" (compressed sparse attention): continuous "
      "batching on colocated replicas, one beam, attention tensor-parallel\n";
  const auto refused = [&](const std::string& deployment) {
    std::string changed = text;
    changed.replace(changed.find(" }"), 2, deployment + " }");
    auto t = load_serving_text(changed);
    CHECK(t->loaded == nullptr);
    return t->messages();
  };
  CHECK(refused(" scheduler { batching: STATIC }") ==
        "s.textproto:2:54: deployment.scheduler.batching: static batching" + unsimulated);
  CHECK(refused(" tensor_parallel: 8 expert_parallel: 8 attention_data_parallel: true") ==
        "s.textproto:2:80: deployment.attention_data_parallel: attention data parallelism" +
            unsimulated);
  CHECK(refused(" speculative_decoding { multi_token_prediction: true draft_tokens: 1 "
                "acceptance_rate: 0.7 }") ==
        "s.textproto:2:42: deployment.speculative_decoding: speculative decoding (its "
        "multi-token-prediction layer)" +
            unsimulated);
}

// A block of 2^31 - 1 tokens left no whole block in the cache: every deployment read "KV cache
// (0 tokens, ...)" without naming the block as the cause.
TEST_CASE("a KV-cache block longer than the model's context is an error at its line") {
  const auto with_block = [](int tokens) {
    std::string text = kGood;
    text.replace(text.find(" }"), 2,
                 " scheduler { kv_block_tokens: " + std::to_string(tokens) + " } }");
    return load_serving_text(text);
  };
  CHECK(with_block(4096)->loaded != nullptr);  // llama2-7b's whole context in one block
  auto huge = with_block(2147483647);
  CHECK(huge->loaded == nullptr);
  CHECK(huge->messages() ==
        "s.textproto:2:54: deployment.scheduler.kv_block_tokens: 2147483647 tokens a block "
        "exceeds the model's max_sequence_length (4096): a block would hold more than the "
        "longest sequence (runtimes use 16 to 128)\n");
}

TEST_CASE("a request longer than the model's context is an error") {
  std::string text = kGood;
  text.replace(text.find("fixed: 512"), 10, "fixed: 4000");
  auto t = load_serving_text(text);
  CHECK(t->messages() ==
        "s.textproto:5:3: traffic.input_tokens: a request of up to 4128 tokens (input + output) "
        "exceeds the model's max_sequence_length (4096)\n");
  // A shared prefix plus a prompt of 2^31 - 1 tokens overflowed the longest prompt's int sum
  // (UBSan: signed integer overflow) before these errors were reached.
  std::string huge = kGood;
  huge.replace(huge.find("fixed: 512"), 10, "fixed: 2147483647");
  huge.replace(huge.find("  output_tokens"), 0,
               "  shared_prefix { prefixes: 1 tokens { fixed: 100 } }\n");
  auto overflowing = load_serving_text(huge);
  CHECK(overflowing->messages() ==
        "s.textproto:6:31: traffic.shared_prefix.tokens: a request of up to 2147483875 tokens "
        "(prefix + input + output) exceeds the model's max_sequence_length (4096)\n"
        "s.textproto:5:3: traffic.input_tokens: a request of up to 2147483775 tokens (input + "
        "output) exceeds the model's max_sequence_length (4096)\n");
}

TEST_CASE("a malformed trace line is an error at the trace file's line") {
  const std::string text =
      "model: \"llama2-7b\"\ndeployment { instance: \"aws.p5.48xlarge\" }\n"
      "traffic { trace_file: \"trace.csv\" }\n";
  auto t = load_serving_text(text, "0.1,100,10\n0.2,100;10\n");
  CHECK(t->loaded == nullptr);
  CHECK(t->messages() ==
        "trace.csv:2:1: expected arrival_s,input_tokens,output_tokens[,prefix_id,prefix_tokens], "
        "got 2 fields\n");
}

TEST_CASE("a trace file that cannot be read is an error where the scenario names it") {
  // It was reported at the trace's path alone, without the scenario's line and field.
  const std::string text =
      "model: \"llama2-7b\"\ndeployment { instance: \"aws.p5.48xlarge\" }\n"
      "traffic { trace_file: \"missing.csv\" }\n";
  auto t = load_serving_text(text);
  CHECK(t->loaded == nullptr);
  CHECK(t->messages() == "s.textproto:3:11: traffic.trace_file: missing.csv: no such file\n");
}

TEST_CASE("a value listed twice in a serving sweep or its billing modes is an error") {
  // Each gave every row twice, as a training sweep's axes no longer do.
  auto t = load_serving_text(kGood +
                             "sweep { replicas: [1, 2, 1] }\nbilling: [ON_DEMAND, ON_DEMAND]\n");
  CHECK(t->loaded == nullptr);
  CHECK(t->messages() ==
        "s.textproto:8:26: sweep.replicas[2]: 1 is listed twice\n"
        "s.textproto:9:22: billing[1]: ON_DEMAND is listed twice\n");
}

TEST_CASE("an instance without GPU cannot serve") {
  std::string text = kGood;
  text.replace(text.find("aws.p5.48xlarge"), 15, "aliyun.ecs.r6.8xlarge");
  auto t = load_serving_text(text);
  CHECK(t->messages() ==
        "s.textproto:2:14: deployment.instance: \"aliyun.ecs.r6.8xlarge\" has no GPU (gpu_count "
        "is 0): it cannot serve\n");
}

TEST_CASE("FP8 on a GPU without FP8 tensor cores names the GPU") {
  std::string text = kGood;
  text.replace(text.find("aws.p5.48xlarge\" }"), 18,
               "aws.p4d.24xlarge\" quantization { weights: FP8 } }");
  auto t = load_serving_text(text);
  CHECK(t->messages().find("deployment.quantization.weights: GPU \"A100-SXM4-40GB\" of "
                           "\"aws.p4d.24xlarge\" has no FP8 support") != std::string::npos);
}

TEST_CASE("a prompt above the token budget without chunked prefill is an error") {
  std::string text = kGood;
  text.replace(text.find("aws.p5.48xlarge\" }"), 18,
               "aws.p5.48xlarge\" scheduler { max_tokens_per_iteration: 256 } }");
  auto t = load_serving_text(text);
  CHECK(t->messages().find("deployment.scheduler.max_tokens_per_iteration: a prompt of 512 "
                           "tokens exceeds the 256-token budget") != std::string::npos);
}

TEST_CASE("a capacity policy is a continuous-batching setting with a value") {
  std::string text = kGood;
  text.replace(text.find("aws.p5.48xlarge\" }"), 18,
               "aws.p5.48xlarge\"\n  scheduler { batching: STATIC capacity_policy: "
               "GUARANTEED_NO_EVICT } }");
  CHECK(load_serving_text(text)->messages() ==
        "s.textproto:3:32: deployment.scheduler.capacity_policy: applies to CONTINUOUS batching\n");
  text.replace(text.find("batching: STATIC capacity_policy: GUARANTEED_NO_EVICT"), 53,
               "capacity_policy: CAPACITY_POLICY_UNSPECIFIED");
  CHECK(load_serving_text(text)->messages() ==
        "s.textproto:3:15: deployment.scheduler.capacity_policy: must be set to a value other "
        "than CAPACITY_POLICY_UNSPECIFIED\n");
  text.replace(text.find("CAPACITY_POLICY_UNSPECIFIED"), 27, "MAX_UTILIZATION");
  CHECK(load_serving_text(text)->loaded != nullptr);
}

TEST_CASE("tensor parallelism must split the heads and stay in a node") {
  std::string text = kGood;
  text.replace(text.find("aws.p5.48xlarge\" }"), 18, "aws.g6.xlarge\" tensor_parallel: 3 }");
  auto t = load_serving_text(text);
  CHECK(t->messages().find("deployment.tensor_parallel: 3 does not divide the model's "
                           "num_attention_heads (32)") != std::string::npos);
}

TEST_CASE(
    "tensor parallelism beyond a model's KV heads loads, one not splitting its heads is refused") {
  std::string text = kGood;
  text.replace(text.find("llama2-7b"), 9, "qwen3-30b-a3b");
  text.replace(text.find("aws.p5.48xlarge\" }"), 18, "aws.p5.48xlarge\" tensor_parallel: 8 }");
  CHECK(load_serving_text(text)->loaded != nullptr);  // 4 KV heads, each on 2 ranks
  text.replace(text.find("tensor_parallel: 8"), 18, "tensor_parallel: 6");
  auto t = load_serving_text(text);
  CHECK(t->messages() ==
        "s.textproto:2:42: deployment.tensor_parallel: 6 does not divide the model's "
        "num_attention_heads (32)\n");
}

TEST_CASE("latent-attention and sliding-window mixtures of experts serve") {
  for (const char* model : {"deepseek-v3", "gpt-oss-120b"}) {
    std::string text = kGood;
    text.replace(text.find("llama2-7b"), 9, model);
    text.replace(text.find("aws.p5.48xlarge\" }"), 18, "aws.p5en.48xlarge\" tensor_parallel: 8 }");
    auto t = load_serving_text(text);
    INFO(t->messages());
    CHECK(t->loaded != nullptr);
  }
}

TEST_CASE("expert parallelism is an error on a dense model, or not splitting experts or TP") {
  std::string text = kGood;
  text.replace(text.find("aws.p5.48xlarge\" }"), 18,
               "aws.p5.48xlarge\" tensor_parallel: 2 expert_parallel: 2 }");
  CHECK(load_serving_text(text)->messages() ==
        "s.textproto:2:61: deployment.expert_parallel: 2: the model has no experts to split (it "
        "has no moe block)\n");
  text.replace(text.find("llama2-7b"), 9, "mixtral-8x7b");
  CHECK(load_serving_text(text)->loaded != nullptr);
  text.replace(text.find("expert_parallel: 2"), 18, "expert_parallel: 4");
  CHECK(load_serving_text(text)->messages() ==
        "s.textproto:2:61: deployment.expert_parallel: 4 divides no tensor_parallel degree of the "
        "deployment (2): expert parallelism splits the tensor-parallel group\n");
  text.replace(text.find("tensor_parallel: 2"), 18, "tensor_parallel: 8");
  CHECK(load_serving_text(text)->loaded != nullptr);
  text.replace(text.find("expert_parallel: 4"), 18, "expert_parallel: 0");
  CHECK(load_serving_text(text)->messages() ==
        "s.textproto:2:61: deployment.expert_parallel: must be >= 1, got 0\n");
}

TEST_CASE("a swept expert-parallel degree must split the experts and some swept TP") {
  std::string text = kGood;
  text.replace(text.find("llama2-7b"), 9, "qwen3-30b-a3b");
  text += "sweep { tensor_parallel: [2, 4] expert_parallel: [1, 3, 4, 8] }\n";
  CHECK(load_serving_text(text)->messages() ==
        "s.textproto:8:54: sweep.expert_parallel[1]: 3 does not divide the model's "
        "moe.num_experts (128)\n"
        "s.textproto:8:60: sweep.expert_parallel[3]: 8 divides no tensor_parallel degree of the "
        "deployment (2, 4): expert parallelism splits the tensor-parallel group\n");
}

TEST_CASE("expert parallelism must divide each pool's tensor parallelism") {
  std::string text = kGood;
  text.replace(text.find("llama2-7b"), 9, "mixtral-8x7b");
  text.replace(text.find("aws.p5.48xlarge\" }"), 18,
               "aws.p5.48xlarge\" expert_parallel: 4 disaggregation { prefill { tensor_parallel: "
               "4 } decode { tensor_parallel: 2 } } }");
  CHECK(load_serving_text(text)->messages() ==
        "s.textproto:2:42: deployment.expert_parallel: 4 does not divide the decode pool's "
        "tensor_parallel (2): expert parallelism splits the tensor-parallel group\n");
}

// The expert-parallel axis multiplies the shapes (each shape's degrees together, quantization's
// axis faster); a degree not dividing a shape's tensor parallelism leaves that deployment out,
// saying why.
TEST_CASE("the expert-parallel axis sweeps every shape, pruning EP above its TP") {
  std::string text = kGood;
  text.replace(text.find("llama2-7b"), 9, "mixtral-8x7b");
  text += "sweep { tensor_parallel: [2, 4] expert_parallel: [1, 4] }\n";
  auto t = load_serving_text(text);
  INFO(t->messages());
  REQUIRE(t->loaded != nullptr);
  const ServingSpace space(*t->loaded);
  REQUIRE(space.size() == 4);
  const Catalog& catalog = testing::shipped_catalog();
  const std::pair<int, int> expected[] = {{2, 1}, {2, 4}, {4, 1}, {4, 4}};
  for (int64_t i = 0; i < 4; ++i) {
    const ServingConfiguration c = space.at(i);
    CHECK(c.tensor_parallel == expected[i].first);
    CHECK(c.expert_parallel == expected[i].second);
    CHECK(serving_problem(c, catalog) ==
          (i == 1 ? "expert parallelism 4 does not divide tensor parallelism 2" : ""));
  }
}

}  // namespace
}  // namespace clustersim
