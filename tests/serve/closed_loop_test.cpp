// Tests of sim/serve/closed_loop: a closed-loop client's users on the serving simulation, against
// the closed forms of one user and Little's law, and its scenario fields.
#include "sim/serve/closed_loop.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <utility>

#include "sim/serve/serving_evaluation.h"
#include "sim/serve/serving_metrics.h"
#include "tests/serve/serve_fixture.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::load_serving_text;
using testing::single_gpu_inputs;

constexpr int kInput = 512, kOutput = 64;

s::Traffic closed_loop(double think_s, double duration_s) {
  s::Traffic t;
  t.mutable_closed_loop()->set_think_time_s(think_s);
  t.set_duration_s(duration_s);
  t.mutable_input_tokens()->set_fixed(kInput);
  t.mutable_output_tokens()->set_fixed(kOutput);
  return t;
}

ReplicaSettings continuous(int max_batch) {
  ReplicaSettings settings;
  settings.max_batch = max_batch;
  settings.kv_blocks = 100000;  // never short: no preemption
  return settings;
}

struct Served {
  std::vector<Request> requests;
  ServingOutcome outcome;
  ServingMetrics metrics;
};

Served serve(const IterationModel& model, const s::Traffic& traffic, int users,
             const ReplicaSettings& settings, int replicas = 1) {
  ClosedLoopClient client(traffic, users);
  Served s;
  s.outcome = simulate_serving(&client, model, settings, replicas);
  s.requests = client.requests();
  s.metrics = measure_serving(s.requests, s.outcome, 0);
  return s;
}

double mean_e2e_s(const Served& s) {
  double sum = 0;
  for (size_t i = 0; i < s.requests.size(); ++i) {
    sum += s.outcome.records[i].finish.seconds() - s.requests[i].arrival_s;
  }
  return sum / static_cast<double>(s.requests.size());
}

// The most requests between arrival and last token at once (a finish before an arrival at the
// same instant: the next request of a user without think time).
int max_in_flight(const Served& s) {
  std::vector<std::pair<double, int>> changes;
  for (size_t i = 0; i < s.requests.size(); ++i) {
    changes.emplace_back(s.requests[i].arrival_s, 1);
    changes.emplace_back(s.outcome.records[i].finish.seconds(), -1);
  }
  std::sort(changes.begin(), changes.end());
  int now = 0, most = 0;
  for (const auto& [t, change] : changes) most = std::max(most, now += change);
  return most;
}

TEST_CASE("one user without think time: one request in flight, its TTFT the lone prefill") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const Served s = serve(model, closed_loop(0, 60), 1, continuous(64));
  REQUIRE(s.requests.size() > 50);
  CHECK(max_in_flight(s) == 1);
  // The prompt alone in its iteration: no queueing, whichever request.
  IterationWork prefill;
  prefill.tokens = kInput;
  prefill.logits = 1;
  add_prompt_chunk(&prefill, 0, kInput);
  const double prefill_ms = model.iteration(prefill).seconds() * 1e3;
  CHECK(s.metrics.ttft_ms.p50 == Approx(prefill_ms).epsilon(1e-9));
  CHECK(s.metrics.ttft_ms.p99 == Approx(prefill_ms).epsilon(1e-9));
  // Back to back: the span is the sum of the latencies.
  CHECK(s.metrics.requests_per_s == Approx(1 / mean_e2e_s(s)).epsilon(1e-9));
  CHECK(s.metrics.output_tokens_per_s == Approx(kOutput / mean_e2e_s(s)).epsilon(1e-9));
}

TEST_CASE("N users obey Little's law: N = throughput x (latency + think time)") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  for (const double think : {0.0, 0.5}) {
    for (const int users : {4, 16, 64}) {
      const Served s = serve(model, closed_loop(think, 300), users, continuous(64));
      INFO(users << " users, think " << think << " s, " << s.requests.size() << " requests");
      CHECK(max_in_flight(s) <= users);
      // Exact but for the start and the drain after the last send (one latency of 300 s): within
      // 0.2% here.
      CHECK(s.metrics.requests_per_s * (mean_e2e_s(s) + think) == Approx(users).epsilon(0.005));
      // The reported means are the requests' own: E2E = TTFT + (output - 1) x TPOT, request by
      // request (fixed lengths), so for the means too.
      CHECK(s.metrics.e2e_ms.mean == Approx(mean_e2e_s(s) * 1e3).epsilon(1e-9));
      CHECK(s.metrics.e2e_ms.mean ==
            Approx(s.metrics.ttft_ms.mean + (kOutput - 1) * s.metrics.tpot_ms.mean).epsilon(1e-9));
    }
  }
}

TEST_CASE("throughput grows with users up to the batch cap, then queueing adds to TTFT") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  double previous = 0;
  for (const int users : {1, 2, 4, 8, 16, 32}) {
    const Served s = serve(model, closed_loop(0, 60), users, continuous(32));
    INFO(users << " users");
    CHECK(s.metrics.output_tokens_per_s > previous);
    previous = s.metrics.output_tokens_per_s;
  }
  const Served at_cap = serve(model, closed_loop(0, 60), 32, continuous(32));
  const Served beyond = serve(model, closed_loop(0, 60), 64, continuous(32));
  // Twice the users on a full batch: the same batches, each request waiting for a slot.
  CHECK(beyond.metrics.output_tokens_per_s == Approx(at_cap.metrics.output_tokens_per_s).epsilon(0.03));
  CHECK(beyond.metrics.ttft_ms.p50 > 2 * at_cap.metrics.ttft_ms.p50);
}

TEST_CASE("a saturated closed loop delivers the open loop's maximum-load throughput") {
  // Four times as many users as batch slots keep every slot busy, as a queue of requests all
  // arriving at once does (trtllm-bench's maximum load): the same deployment, the same batches,
  // so the same tokens per second but for the ends (the closed loop's drain after its last send,
  // the open loop's last batch), under 1% of these runs.
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const Served closed = serve(model, closed_loop(0, 300), 128, continuous(32));
  const std::vector<Request> at_once(closed.requests.size(), Request{0, kInput, kOutput});
  const ServingOutcome open = simulate_serving(at_once, model, continuous(32), 1);
  const ServingMetrics max_load = measure_serving(at_once, open, 0);
  INFO(closed.requests.size() << " requests");
  CHECK(closed.metrics.output_tokens_per_s ==
        Approx(max_load.output_tokens_per_s).epsilon(0.01));
  // Past saturation the extra users only wait: Little's law over the whole loop (128 users =
  // requests/s x mean E2E), and over the queue, which holds the 96 users beyond the 32 slots, so a
  // request waits 96 / (requests/s) before its slot; its TTFT adds the iterations up to its first
  // token (here 5% more).
  const double in_loop = closed.metrics.requests_per_s * closed.metrics.e2e_ms.mean / 1e3;
  CHECK(in_loop == Approx(128).epsilon(0.01));
  const double queue_wait_ms = 96 / closed.metrics.requests_per_s * 1e3;
  CHECK(closed.metrics.ttft_ms.mean > queue_wait_ms);
  CHECK(closed.metrics.ttft_ms.mean < 1.1 * queue_wait_ms);
}

TEST_CASE("the users are shared by the replicas behind the load balancer") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const Served one = serve(model, closed_loop(0, 60), 1, continuous(64));
  const Served two = serve(model, closed_loop(0, 60), 2, continuous(64), 2);
  // Two users on two replicas: each replica serves one request at a time, as one user on one.
  CHECK(two.metrics.ttft_ms.p99 == Approx(one.metrics.ttft_ms.p99).epsilon(1e-9));
  CHECK(two.metrics.requests_per_s == Approx(2 * one.metrics.requests_per_s).epsilon(0.01));
}

TEST_CASE("a closed loop is deterministic and sends request k with the same lengths at any N") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  s::Traffic t = closed_loop(0.1, 30);
  t.mutable_input_tokens()->mutable_uniform()->set_min(100);
  t.mutable_input_tokens()->mutable_uniform()->set_max(900);
  const Served a = serve(model, t, 8, continuous(64));
  const Served b = serve(model, t, 8, continuous(64));
  const Served c = serve(model, t, 3, continuous(64));
  REQUIRE(a.requests.size() == b.requests.size());
  for (size_t i = 0; i < a.requests.size(); ++i) {
    CHECK(a.requests[i].arrival_s == b.requests[i].arrival_s);
    CHECK(a.outcome.records[i].finish == b.outcome.records[i].finish);
  }
  for (size_t i = 0; i < std::min(a.requests.size(), c.requests.size()); ++i) {
    CHECK(a.requests[i].input_tokens == c.requests[i].input_tokens);
  }
}

TEST_CASE("a closed loop with a request count sends that many") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  s::Traffic t = closed_loop(0, 0);
  t.clear_duration_s();
  t.mutable_closed_loop()->set_requests(10);
  CHECK(serve(model, t, 4, continuous(64)).requests.size() == 10);
  CHECK(serve(model, t, 40, continuous(64)).requests.size() == 10);
}

const std::string kClosedLoop = R"(model: "llama2-7b"
deployment { instance: "aws.p5.48xlarge" }
traffic {
  closed_loop { concurrency: 4 }
  duration_s: 20
  input_tokens { fixed: 512 }
  output_tokens { fixed: 64 }
}
)";

TEST_CASE("sweep.concurrency makes one configuration per level, the fastest axis") {
  auto t = load_serving_text(kClosedLoop + "sweep { concurrency: [1, 8] max_batch_size: [16, 32] }\n");
  INFO(t->messages());
  REQUIRE(t->loaded != nullptr);
  const ServingSpace space(*t->loaded);
  REQUIRE(space.size() == 4);
  CHECK(space.at(0).concurrency == 1);
  CHECK(space.at(1).concurrency == 8);
  CHECK(space.at(1).scheduler.max_batch_size() == 16);
  ServingEvaluator evaluator(testing::shipped_catalog(), *t->loaded);
  const ServingEvaluation one = evaluator.evaluate(space.at(0));
  const ServingEvaluation eight = evaluator.evaluate(space.at(1));
  REQUIRE(one.metrics);
  REQUIRE(eight.metrics);
  CHECK(eight.metrics->output_tokens_per_s > 4 * one.metrics->output_tokens_per_s);
  // Open-loop traffic has no concurrency.
  auto open = load_serving_text(
      "model: \"llama2-7b\"\ndeployment { instance: \"aws.p5.48xlarge\" }\n"
      "traffic { rate_per_s: 1 input_tokens { fixed: 8 } output_tokens { fixed: 8 } }\n");
  REQUIRE(open->loaded != nullptr);
  CHECK(ServingSpace(*open->loaded).at(0).concurrency == 0);
}

TEST_CASE("users whose requests outlast the warm-up leave nothing to measure: an error") {
  std::string text = kClosedLoop;
  text.replace(text.find("duration_s: 20"), 14, "duration_s: 20 warmup_s: 15");
  text.replace(text.find("fixed: 64"), 9, "fixed: 2000");  // about 12 s a request
  auto t = load_serving_text(text);
  REQUIRE(t->loaded != nullptr);
  ServingEvaluator evaluator(testing::shipped_catalog(), *t->loaded);
  ServingConfiguration c = ServingSpace(*t->loaded).at(0);
  c.concurrency = 1;
  const ServingEvaluation e = evaluator.evaluate(c);
  CHECK_FALSE(e.metrics);
  CHECK(e.error == "no request of deployment 0 arrives after traffic.warmup_s (15 s): lengthen "
                   "traffic.duration_s or shorten the warm-up");
}

TEST_CASE("bad closed-loop settings are errors at their field") {
  const auto messages = [](const std::string& from, const std::string& to,
                           const std::string& extra = "") {
    std::string text = kClosedLoop;
    text.replace(text.find(from), from.size(), to);
    auto t = load_serving_text(text + extra);
    CHECK(t->loaded == nullptr);
    return t->messages();
  };
  CHECK(messages("concurrency: 4", "concurrency: 0") ==
        "s.textproto:4:17: traffic.closed_loop.concurrency: must be in [1, 1048576], got 0\n");
  CHECK(messages("concurrency: 4", "think_time_s: 1") ==
        "s.textproto:4:3: traffic.closed_loop.concurrency: is required\n");
  CHECK(messages("concurrency: 4", "concurrency: 4 think_time_s: -1") ==
        "s.textproto:4:32: traffic.closed_loop.think_time_s: must be in [0, 86400], got -1\n");
  CHECK(messages("concurrency: 4", "concurrency: 4 requests: 100") ==
        "s.textproto:5:3: traffic.duration_s: closed_loop.requests ends the run: give a duration "
        "or a request count, and warm up only with a duration\n");
  CHECK(messages("concurrency: 4", "concurrency: 2000000") ==
        "s.textproto:4:17: traffic.closed_loop.concurrency: must be in [1, 1048576], got "
        "2000000\n");
  CHECK(messages("concurrency: 4", "concurrency: 4", "sweep { concurrency: [2, 0] }\n") ==
        "s.textproto:9:26: sweep.concurrency[1]: must be in [1, 1048576], got 0\n");
  CHECK(messages("closed_loop { concurrency: 4 }", "rate_per_s: 2",
                 "sweep { concurrency: [2] }\n") ==
        "s.textproto:9:9: sweep.concurrency: sets the users of a closed-loop client: give "
        "traffic.closed_loop\n");
  std::string day = "autoscaling { hourly_rate_per_s: [";
  for (int h = 0; h < 24; ++h) day += h ? ", 1" : "1";
  CHECK(messages("concurrency: 4", "concurrency: 4", day + "] }\nslo { p99_ttft_ms: 1000 }\n") ==
        "s.textproto:9:1: autoscaling: scales replicas to hourly request rates: it needs open-loop "
        "traffic (rate_per_s, bursts or trace_file), not closed_loop\n");
}

}  // namespace
}  // namespace clustersim
