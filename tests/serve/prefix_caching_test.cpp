// Tests of prefix caching: sim/serve/prefix_cache (the resident blocks and their eviction order),
// the replica's reuse of them (a hit's prefill, shared blocks counted once), shared prefixes in
// traffic and traces, prefix-aware routing, and the checks of the fields.
#include <catch2/catch.hpp>

#include "sim/serve/prefix_cache.h"
#include "sim/serve/prefix_routing.h"
#include "sim/serve/serving_metrics.h"
#include "sim/serve/serving_simulation.h"
#include "sim/serve/serving_space.h"
#include "tests/serve/serve_fixture.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::load_serving_text;
using testing::single_gpu_inputs;

TEST_CASE("the prefix cache evicts unused blocks least recently released first, tails first") {
  PrefixCache cache;
  for (int64_t i = 0; i < 4; ++i) CHECK(cache.extend(7, i) == 0);  // prefix 7: four blocks
  CHECK(cache.release(7, 4) == 4);                                 // released at time 1
  for (int64_t i = 0; i < 2; ++i) cache.extend(3, i);              // prefix 3: two blocks
  CHECK(cache.release(3, 2) == 2);                                 // time 2
  CHECK(cache.unused(7, 4) == 4);
  cache.acquire(7, 2);  // a hit on prefix 7's first two blocks, released at time 3
  CHECK(cache.unused(7, 4) == 2);
  CHECK(cache.unused_blocks() == 4);
  CHECK(cache.release(7, 2) == 2);
  CHECK(cache.resident_blocks() == 6);
  // Oldest first: prefix 7's blocks 3 and 2 (time 1, the tail first), prefix 3's blocks 1 and 0
  // (time 2), prefix 7's blocks 1 and 0 (time 3).
  const std::pair<int64_t, int64_t> resident_after[] = {{3, 2}, {2, 2}, {2, 1}, {2, 0}, {1, 0}};
  int64_t limit = 5;
  for (const auto& [seven, three] : resident_after) {
    cache.evict_to(limit--);
    INFO("evicted to " << limit + 1);
    CHECK(cache.resident(7, 100) == seven);
    CHECK(cache.resident(3, 100) == three);
  }
}

TEST_CASE("the prefix cache never evicts a block in use, and a resident copy replaces a new one") {
  PrefixCache cache;
  cache.extend(1, 0);
  cache.extend(1, 1);
  // A second sequence computed block 0 too: the resident copy, in use, replaces its own.
  CHECK(cache.extend(1, 0) == 1);
  CHECK(cache.unused_blocks() == 0);
  cache.evict_to(0);
  CHECK(cache.resident(1, 5) == 2);
  CHECK(cache.release(1, 2) == 1);  // block 1 is unused now; block 0 still has a user
  cache.evict_to(0);
  CHECK(cache.resident(1, 5) == 1);
  CHECK(cache.unused(1, 5) == 0);
}

// One request computes a prefix of P tokens and finishes; an identical-prefix request arriving
// later finds the prefix's whole blocks (floor(P / 64) of them) and prefills only the rest of its
// prompt: its TTFT is the iteration model's time for those tokens, their queries attending over
// the whole context (add_prompt_chunk after the cached tokens), closed form.
TEST_CASE("a prefix hit's TTFT is the prefill of its suffix over the whole context") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  for (const int prefix_tokens : {1024, 1000}) {
    std::vector<Request> requests = {{0.0, prefix_tokens + 200, 1, 0, prefix_tokens},
                                     {5.0, prefix_tokens + 200, 1, 0, prefix_tokens}};
    ReplicaSettings settings;
    settings.kv_blocks = 1000;
    settings.prefix_caching = true;
    const ServingOutcome o = simulate_serving(requests, model, settings, 1);
    const int64_t cached = prefix_tokens / 64 * 64;  // whole blocks only
    INFO("prefix of " << prefix_tokens << " tokens");
    CHECK(o.records[0].cached_tokens == 0);
    CHECK(o.records[1].cached_tokens == cached);
    IterationWork suffix;
    suffix.tokens = prefix_tokens + 200 - cached;
    suffix.logits = 1;
    add_prompt_chunk(&suffix, cached, suffix.tokens);
    CHECK((o.records[1].first_token - Picoseconds::from_seconds(5.0)) == model.iteration(suffix));
    CHECK(o.records[0].first_token == model.iteration(testing::prompts(1, prefix_tokens + 200)));
    settings.prefix_caching = false;
    const ServingOutcome off = simulate_serving(requests, model, settings, 1);
    CHECK(off.records[1].cached_tokens == 0);
    CHECK(off.records[1].first_token - Picoseconds::from_seconds(5.0) ==
          o.records[0].first_token);
  }
}

// A prompt that is all prefix still computes its last token (vLLM's hit is capped at the prompt
// less one token): of 1024 tokens in blocks of 64, 15 blocks are reused and 64 tokens computed.
TEST_CASE("a prompt that is all cached prefix still prefills its last block") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const std::vector<Request> requests = {{0.0, 1024, 1, 0, 1024}, {5.0, 1024, 1, 0, 1024}};
  ReplicaSettings settings;
  settings.kv_blocks = 1000;
  settings.prefix_caching = true;
  const ServingOutcome o = simulate_serving(requests, model, settings, 1);
  CHECK(o.records[1].cached_tokens == 960);
}

// A conversation in a trace: each turn's prefix is the history so far, one prefix id growing. The
// second turn finds the first's 15 whole blocks (of its 1,000-token prefix) and extends the chain
// to the 31 of its own 2,000; the third finds those 31.
TEST_CASE("a growing conversation reuses its earlier turns' blocks") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const std::vector<Request> requests = {
      {0.0, 1100, 1, 9, 1000}, {5.0, 2100, 1, 9, 2000}, {10.0, 3100, 1, 9, 3000}};
  ReplicaSettings settings;
  settings.kv_blocks = 1000;
  settings.prefix_caching = true;
  const ServingOutcome o = simulate_serving(requests, model, settings, 1);
  CHECK(o.records[0].cached_tokens == 0);
  CHECK(o.records[1].cached_tokens == 960);
  CHECK(o.records[2].cached_tokens == 1984);
}

// N sequences of one P-token prefix decoding side by side hold blocks(P) shared blocks once plus
// their own: N - 1 copies of the prefix's blocks fewer than without caching, at every instant
// (arriving together, none finds the prefix resident, so both runs do the same work).
TEST_CASE("KV blocks in use with N sequences sharing a prefix count its blocks once") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  constexpr int kSequences = 5;
  for (const int prefix_tokens : {640, 650}) {  // ten whole blocks of 64 either way
    const std::vector<Request> requests(kSequences,
                                        Request{0.0, prefix_tokens + 100, 400, 0, prefix_tokens});
    std::vector<int64_t> in_use[2], resident;
    for (const bool caching : {false, true}) {
      ReplicaSettings settings;
      settings.kv_blocks = 1000;
      settings.prefix_caching = caching;
      Simulation sim;
      std::vector<RequestRecord> records(requests.size());
      Replica replica(&sim, &model, settings, &requests, &records);
      for (int32_t i = 0; i < kSequences; ++i) replica.arrive(i);
      for (double t = 0.25; t < 2; t += 0.25) {
        sim.call_at(Picoseconds::from_seconds(t), [&, caching] {
          in_use[caching].push_back(replica.blocks_in_use());
          if (caching) resident.push_back(replica.prefix_cache().resident_blocks());
        });
      }
      sim.run();
      for (const RequestRecord& r : records) CHECK(r.done);
      CHECK(replica.blocks_in_use() == 0);
    }
    INFO("prefix of " << prefix_tokens << " tokens");
    REQUIRE(in_use[0].size() == 7);
    for (size_t i = 0; i < in_use[0].size(); ++i) {
      CHECK(in_use[1][i] == in_use[0][i] - (kSequences - 1) * 10);
      CHECK(resident[i] == 10);
      CHECK(in_use[0][i] % kSequences == 0);  // each sequence's own blocks alike
    }
  }
}

std::vector<Request> chat_traffic(double rate, int prefixes, double share = 1) {
  s::Traffic t;
  t.set_rate_per_s(rate);
  t.set_duration_s(60);
  t.mutable_input_tokens()->mutable_uniform()->set_min(50);
  t.mutable_input_tokens()->mutable_uniform()->set_max(400);
  t.mutable_output_tokens()->mutable_uniform()->set_min(20);
  t.mutable_output_tokens()->mutable_uniform()->set_max(200);
  if (prefixes > 0) {
    s::SharedPrefix* p = t.mutable_shared_prefix();
    p->set_prefixes(prefixes);
    p->mutable_tokens()->set_fixed(2000);
    p->set_share(share);
  }
  return generate_requests(t, 1);
}

// Many prefixes into a small cache, under both capacity policies, with and without chunked
// prefill: the blocks sequences hold plus the unused resident ones never exceed the pool (an
// unused block is evicted before its room is taken), every request finishes, and at the end only
// unused prefix blocks remain.
TEST_CASE("prefix blocks in use and resident never exceed the KV cache") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const std::vector<Request> requests = chat_traffic(12, 24);
  for (const s::CapacityPolicy policy : {s::MAX_UTILIZATION, s::GUARANTEED_NO_EVICT}) {
    for (const bool chunked : {false, true}) {
      ReplicaSettings settings;
      settings.capacity_policy = policy;
      settings.kv_blocks = 300;  // 19,200 tokens: eight of the 24 prefixes' 31 blocks at most
      settings.chunked_prefill = chunked;
      settings.max_tokens = chunked ? 1024 : 4096;
      settings.prefix_caching = true;
      Simulation sim;
      std::vector<RequestRecord> records(requests.size());
      Replica replica(&sim, &model, settings, &requests, &records);
      for (size_t i = 0; i < requests.size(); ++i) {
        sim.call_at(Picoseconds::from_seconds(requests[i].arrival_s),
                    [&, i] { replica.arrive(static_cast<int32_t>(i)); });
      }
      int64_t peak = 0, samples = 0;
      for (double t = 0.05; t < 120; t += 0.05) {
        sim.call_at(Picoseconds::from_seconds(t), [&] {
          const PrefixCache& cache = replica.prefix_cache();
          peak = std::max(peak, replica.blocks_in_use() + cache.unused_blocks());
          ++samples;
        });
      }
      sim.run();
      INFO("policy " << s::CapacityPolicy_Name(policy) << ", chunked prefill " << chunked);
      CHECK(peak <= settings.kv_blocks);
      CHECK(peak > settings.kv_blocks * 9 / 10);  // the load fills the cache
      CHECK(samples > 1000);
      int hits = 0;
      for (const RequestRecord& r : records) {
        CHECK(r.done);
        hits += r.cached_tokens > 0;
      }
      CHECK(hits > static_cast<int>(requests.size()) / 4);
      CHECK(replica.blocks_in_use() == 0);
      CHECK(replica.prefix_cache().unused_blocks() == replica.prefix_cache().resident_blocks());
      if (policy == s::GUARANTEED_NO_EVICT) CHECK(replica.preemptions() == 0);
    }
  }
}

TEST_CASE("shared prefixes leave a traffic's arrivals and lengths as they were") {
  const std::vector<Request> plain = chat_traffic(20, 0), with = chat_traffic(20, 4, 0.5);
  REQUIRE(plain.size() == with.size());
  int carrying = 0;
  for (size_t i = 0; i < plain.size(); ++i) {
    CHECK(with[i].arrival_s == plain[i].arrival_s);
    CHECK(with[i].output_tokens == plain[i].output_tokens);
    CHECK(with[i].input_tokens == plain[i].input_tokens + with[i].prefix_tokens);
    CHECK(plain[i].prefix == -1);
    if (with[i].prefix >= 0) {
      ++carrying;
      CHECK(with[i].prefix < 4);
      CHECK(with[i].prefix_tokens == 2000);
    }
  }
  CHECK(carrying == Approx(0.5 * static_cast<double>(plain.size())).epsilon(0.1));
}

TEST_CASE("Zipf popularity picks prefix k in proportion to 1 / k^s") {
  s::Traffic t;
  t.set_rate_per_s(100);
  t.set_duration_s(100);
  t.mutable_input_tokens()->set_fixed(10);
  t.mutable_output_tokens()->set_fixed(10);
  s::SharedPrefix* p = t.mutable_shared_prefix();
  p->set_prefixes(2);
  p->mutable_tokens()->set_fixed(100);
  p->set_popularity(s::ZIPF);
  p->set_zipf_exponent(2);  // weights 1 and 1/4: prefix 0 four fifths of the time
  const std::vector<Request> requests = generate_requests(t, 1);
  const auto first = std::count_if(requests.begin(), requests.end(),
                                   [](const Request& r) { return r.prefix == 0; });
  CHECK(static_cast<double>(first) / static_cast<double>(requests.size()) ==
        Approx(0.8).margin(0.02));
}

// Without shared prefixes, prefix caching changes nothing: the same records bit for bit.
TEST_CASE("prefix caching without shared prefixes serves exactly as without it") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const std::vector<Request> requests = chat_traffic(30, 0);
  ReplicaSettings settings;
  settings.kv_blocks = 2000;
  const ServingOutcome off = simulate_serving(requests, model, settings, 2);
  settings.prefix_caching = true;
  const ServingOutcome on = simulate_serving(requests, model, settings, 2);
  for (size_t i = 0; i < requests.size(); ++i) {
    CHECK(on.records[i].first_token == off.records[i].first_token);
    CHECK(on.records[i].finish == off.records[i].finish);
  }
  CHECK(on.iterations == off.iterations);
}

// Many prefixes over four replicas: the least-loaded balancer spreads each prefix over every
// replica, the cache-aware router keeps it on one, so more prompt tokens are found cached and the
// first tokens come sooner.
TEST_CASE("prefix-aware routing finds more of the prefixes cached than least-loaded routing") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const std::vector<Request> requests = chat_traffic(40, 16);
  ReplicaSettings settings;
  settings.kv_blocks = 400;  // 25,600 tokens: a few prefixes of 2,000 per replica
  settings.prefix_caching = true;
  OpenLoopArrivals a(&requests), b(&requests);
  const ServingMetrics least =
      measure_serving(requests, simulate_serving(&a, model, settings, 4, s::LEAST_LOADED), 0);
  const ServingMetrics aware =
      measure_serving(requests, simulate_serving(&b, model, settings, 4, s::PREFIX_AWARE), 0);
  CHECK(aware.prefix_hit_tokens > least.prefix_hit_tokens + 0.05);
  CHECK(aware.ttft_ms.mean < least.ttft_ms.mean);
}

// The replicas' loads as the balancer tracks them.
LeastLoaded tracked_loads(const std::vector<int64_t>& each) {
  LeastLoaded tracked(each.size(), true);
  for (size_t r = 0; r < each.size(); ++r) tracked.set(r, each[r]);
  return tracked;
}

TEST_CASE("the cache-aware router follows the prefix unless loads are out of balance") {
  PrefixAwareRouter router(3);
  const Request a{0, 2100, 10, 5, 2000}, b{0, 2100, 10, 6, 2000};
  // No match: the smallest record (all empty): 0.
  CHECK(router.route(a, tracked_loads({0, 0, 0})) == 0);
  // No match: the smallest record is replica 1's.
  CHECK(router.route(b, tracked_loads({1, 0, 0})) == 1);
  // 2000 of 2100 tokens sent to replica 0 before.
  CHECK(router.route(a, tracked_loads({1, 1, 0})) == 0);
  CHECK(router.route(b, tracked_loads({2, 1, 0})) == 1);
  // Out of balance (100 - 0 > 64 and 100 > 1.5 x 0): the least loaded, whatever it holds.
  CHECK(router.route(a, tracked_loads({100, 50, 0})) == 2);
  // A match below the cache threshold (2000 of 10,000 tokens < 0.3): the smallest record, replica
  // 2's 2,100 tokens against 2,200 on the others.
  const Request long_prompt{0, 10000, 10, 5, 2000};
  CHECK(router.route(long_prompt, tracked_loads({0, 0, 0})) == 2);
}

TEST_CASE("trace prefix columns are read, and bad ones are errors at their line") {
  testing::TempDir dir;
  const std::string path = dir.write("t.csv",
                                     "0.0,2100,20,3,2000\n"
                                     "0.5,300,20\n"
                                     "1.0,2100,20,-1,2000\n"
                                     "1.5,2100,20,3,2200\n"
                                     "2.0,2100,20,3\n"
                                     "2.5,2100,20,x,0\n");
  std::vector<Request> requests;
  Diagnostics diagnostics;
  CHECK_FALSE(read_trace(path, 4096, &requests, &diagnostics));
  const std::string p = path + ":";
  CHECK(diagnostics.to_string() ==
        p + "3:1: prefix_id \"-1\" is not a whole number >= 0\n" + p +
            "4:1: prefix_tokens \"2200\" is not a whole number from 1 to input_tokens (2100)\n" +
            p + "5:1: expected arrival_s,input_tokens,output_tokens[,prefix_id,prefix_tokens], "
                "got 4 fields\n" +
            p + "6:1: prefix_id \"x\" is not a whole number >= 0\n");
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].prefix == 3);
  CHECK(requests[0].prefix_tokens == 2000);
  CHECK(requests[0].input_tokens == 2100);
  CHECK(requests[1].prefix == -1);
}

const std::string kChat = R"(model: "llama2-7b"
deployment { instance: "aws.p5.48xlarge" }
traffic {
  rate_per_s: 10
  input_tokens { fixed: 512 }
  output_tokens { fixed: 128 }
  shared_prefix { prefixes: 4 tokens { fixed: 2000 } }
}
)";

std::string with(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST_CASE("a scenario with shared prefixes loads and sizes its longest prompt with them") {
  auto t = load_serving_text(kChat);
  INFO(t->messages());
  REQUIRE(t->loaded != nullptr);
  CHECK(longest_prompt_tokens(*t->loaded) == 2512);
  CHECK(longest_request_tokens(*t->loaded) == 2640);
  CHECK(has_shared_prefixes(*t->loaded));
}

TEST_CASE("bad shared prefixes and prefix caching settings are errors at their fields") {
  const struct {
    std::string from, to, message;
  } cases[] = {
      {"prefixes: 4", "prefixes: 0",
       "s.textproto:7:19: traffic.shared_prefix.prefixes: must be in [1, 1048576], got 0\n"},
      {"prefixes: 4", "prefixes: 4 share: 1.5",
       "s.textproto:7:31: traffic.shared_prefix.share: must be in [0, 1], got 1.5\n"},
      {"prefixes: 4", "prefixes: 4 share: 0",
       "s.textproto:7:31: traffic.shared_prefix.share: 0 gives no request a prefix: remove "
       "shared_prefix instead\n"},
      {"prefixes: 4", "prefixes: 4 zipf_exponent: 2",
       "s.textproto:7:31: traffic.shared_prefix.zipf_exponent: applies to popularity ZIPF\n"},
      {"fixed: 2000", "fixed: 3500",
       "s.textproto:7:31: traffic.shared_prefix.tokens: a request of up to 4140 tokens (prefix + "
       "input + output) exceeds the model's max_sequence_length (4096)\n"},
      {"{ prefixes: 4 tokens { fixed: 2000 } }", "{ prefixes: 4 }",
       "s.textproto:7:3: traffic.shared_prefix.tokens: is required\n"},
      {"aws.p5.48xlarge\" }",
       "aws.p5.48xlarge\" scheduler { batching: STATIC prefix_caching { enabled: true } } }",
       "s.textproto:2:88: deployment.scheduler.prefix_caching.enabled: applies to CONTINUOUS "
       "batching (a static batch's KV cache is not paged)\n"},
  };
  for (const auto& c : cases) {
    auto t = load_serving_text(with(kChat, c.from, c.to));
    INFO(c.to);
    CHECK(t->loaded == nullptr);
    CHECK(t->messages() == c.message);
  }
}

TEST_CASE("the prefix-caching axis makes one deployment per setting") {
  auto t = load_serving_text(kChat + "sweep { replicas: [1, 2] prefix_caching: [false, true] }\n");
  INFO(t->messages());
  REQUIRE(t->loaded != nullptr);
  const ServingSpace space(*t->loaded);
  REQUIRE(space.size() == 4);
  const bool expected[] = {false, true, false, true};
  for (int64_t i = 0; i < space.size(); ++i) {
    const ServingConfiguration c = space.at(i);
    CHECK(c.scheduler.prefix_caching().enabled() == expected[i]);
    CHECK(c.replicas == (i < 2 ? 1 : 2));
  }
  auto repeated = load_serving_text(kChat + "sweep { prefix_caching: [true, true] }\n");
  CHECK(repeated->loaded == nullptr);
}

TEST_CASE("a prefix-caching sweep without shared prefixes is an error") {
  const std::string text = with(kChat, "  shared_prefix { prefixes: 4 tokens { fixed: 2000 } }\n",
                                "") + "sweep { prefix_caching: [false, true] }\n";
  auto t = load_serving_text(text);
  CHECK(t->loaded == nullptr);
  CHECK(t->messages() ==
        "s.textproto:8:9: sweep.prefix_caching: compares prefix caching off and on, but no "
        "request carries a shared prefix: give traffic.shared_prefix (or a trace's "
        "prefix_id,prefix_tokens columns)\n");
}

TEST_CASE("shared prefixes beside a trace file are an error") {
  const std::string text =
      "model: \"llama2-7b\"\ndeployment { instance: \"aws.p5.48xlarge\" }\n"
      "traffic {\n  trace_file: \"trace.csv\"\n"
      "  shared_prefix { prefixes: 2 tokens { fixed: 10 } }\n}\n";
  auto t = load_serving_text(text, "0.1,100,10\n");
  CHECK(t->loaded == nullptr);
  CHECK(t->messages() ==
        "s.textproto:5:3: traffic.shared_prefix: comes from the trace file (its "
        "prefix_id,prefix_tokens columns): remove it\n");
}

// Disaggregated pools do not cache prefixes: shared prefixes with caching on (here the runtime's
// default) are an error; with it off they load.
TEST_CASE("prefix caching on disaggregated pools is an error") {
  const std::string disaggregated =
      with(kChat, "aws.p5.48xlarge\" }",
           "aws.p5.48xlarge\" runtime: \"tensorrt-llm-1.0\"\n"
           "  disaggregation { prefill { replicas: 1 } decode { replicas: 1 } } }");
  auto t = load_serving_text(disaggregated);
  CHECK(t->loaded == nullptr);
  CHECK(t->messages() ==
        "s.textproto:3:3: deployment.disaggregation: prefix caching is not simulated on "
        "disaggregated pools and this traffic carries shared prefixes: set "
        "deployment.scheduler.prefix_caching.enabled false (the runtime's default is on)\n");
  const std::string off = with(disaggregated, "} } }",
                               "} }\n  scheduler { prefix_caching { enabled: false } } }");
  auto u = load_serving_text(off);
  INFO(u->messages());
  CHECK(u->loaded != nullptr);
}

}  // namespace
}  // namespace clustersim
