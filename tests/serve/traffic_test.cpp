// Tests of sim/serve/traffic: arrival processes, lengths and trace files.
#include "sim/serve/traffic.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "tests/testing/temp_dir.h"

namespace clustersim {
namespace {

namespace s = schema;

s::Traffic fixed_lengths(uint64_t seed = 3) {
  s::Traffic t;
  t.set_seed(seed);
  t.mutable_input_tokens()->set_fixed(100);
  t.mutable_output_tokens()->set_fixed(10);
  return t;
}

// A Poisson count over T at rate r has mean and variance r T: within 4 standard deviations.
TEST_CASE("Poisson arrivals come at their rate") {
  s::Traffic t = fixed_lengths();
  t.set_rate_per_s(50);
  t.set_duration_s(200);
  const std::vector<Request> r = generate_requests(t, 1);
  CHECK(std::abs(static_cast<double>(r.size()) - 10000) < 4 * std::sqrt(10000.0));
  for (size_t i = 1; i < r.size(); ++i) CHECK(r[i].arrival_s >= r[i - 1].arrival_s);
  CHECK(generate_requests(t, 2).size() > 1.9 * r.size());  // rate_scale doubles the rate
}

// Bursts of length L every E on average (exponential gaps): a share L / (E + L) of the time.
TEST_CASE("bursty arrivals average to their mean rate") {
  s::Traffic t = fixed_lengths();
  s::Bursts* b = t.mutable_bursts();
  b->set_base_rate_per_s(10);
  b->set_burst_rate_per_s(100);
  b->set_burst_every_s(30);
  b->set_burst_duration_s(10);
  t.set_duration_s(20000);
  const double expected = mean_rate_per_s(t, {});
  CHECK(expected == Approx(10 * 0.75 + 100 * 0.25));
  const double measured = static_cast<double>(generate_requests(t, 1).size()) / 20000;
  CHECK(measured == Approx(expected).epsilon(0.05));
}

// The first change of rate was not clamped to the duration as the later ones are: when the first
// burst fell after the duration, the arrival drawn before it was kept even past the duration.
TEST_CASE("bursty arrivals all fall within the traffic's duration") {
  s::Traffic t = fixed_lengths();
  s::Bursts* b = t.mutable_bursts();
  b->set_base_rate_per_s(1);
  b->set_burst_rate_per_s(5);
  b->set_burst_every_s(1e6);  // the first burst falls within 10 s with probability 1e-5
  b->set_burst_duration_s(3);
  t.set_duration_s(1e-300);
  CHECK(generate_requests(t, 1).empty());
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    t.set_seed(seed);
    t.set_duration_s(10);
    const std::vector<Request> requests = generate_requests(t, 1);
    REQUIRE_FALSE(requests.empty());
    CHECK(requests.back().arrival_s < 10);
  }
}

TEST_CASE("log-normal lengths stay in their range around their median") {
  s::Traffic t;
  t.set_rate_per_s(100);
  t.set_duration_s(100);
  s::LogNormalLength* l = t.mutable_input_tokens()->mutable_lognormal();
  l->set_median(500);
  l->set_sigma(0.5);
  l->set_max(2000);
  t.mutable_output_tokens()->set_fixed(1);
  std::vector<int> lengths;
  for (const Request& r : generate_requests(t, 1)) lengths.push_back(r.input_tokens);
  std::sort(lengths.begin(), lengths.end());
  CHECK(lengths.front() >= 1);
  CHECK(lengths.back() <= 2000);
  CHECK(lengths[lengths.size() / 2] == Approx(500).epsilon(0.05));
}

TEST_CASE("a trace file's malformed lines are errors at file:line") {
  testing::TempDir dir;
  const std::string path = dir.write("t.csv",
                                     "# arrival_s,input_tokens,output_tokens\n"
                                     "1.0,100,20\n"
                                     "1.5,100\n"
                                     "1.7,abc,20\n"
                                     "0.4,100,20\n"
                                     "1.2,100,0\n"
                                     "\n"
                                     "2.0,4000,200\n");
  std::vector<Request> requests;
  Diagnostics diagnostics;
  CHECK_FALSE(read_trace(path, 4096, &requests, &diagnostics));
  const std::string p = path + ":";
  CHECK(diagnostics.to_string() ==
        p + "3:1: expected arrival_s,input_tokens,output_tokens[,prefix_id,prefix_tokens], got 2 "
                "fields\n" + p +
            "4:1: input_tokens \"abc\" is not a whole number >= 1\n" + p +
            "5:1: arrival_s goes back in time (the lines must be in order)\n" + p +
            "6:1: output_tokens \"0\" is not a whole number >= 1\n" + p +
            "8:1: a context of 4200 tokens exceeds the model's max_sequence_length (4096)\n");
}

TEST_CASE("a trace's count past 32 bits and its invisible bytes are named as they are") {
  testing::TempDir dir;
  const std::string path = dir.write("t.csv", std::string("1.0,3000000000,20\n"
                                                          "1.1,100,20,99999999999,10\n"
                                                          "1.2,10\t0,20\n"
                                                          "1.3,100,2") +
                                                  '\0' + "\n");
  std::vector<Request> requests;
  Diagnostics diagnostics;
  CHECK_FALSE(read_trace(path, 4096, &requests, &diagnostics));
  const std::string p = path + ":";
  CHECK(diagnostics.to_string() ==
        p + "1:1: input_tokens 3000000000 is larger than 2147483647\n" + p +
            "2:1: prefix_id 99999999999 is larger than 2147483647\n" + p +
            "3:1: input_tokens \"10<0x09>0\" is not a whole number >= 1\n" + p +
            "4:1: output_tokens \"2<0x00>\" is not a whole number >= 1\n");
}

TEST_CASE("a well-formed trace is read in order, and scaled by dividing its times") {
  testing::TempDir dir;
  const std::string path = dir.write("t.csv", "0.0,100,20\n1.5, 200 ,30 # comment\n");
  std::vector<Request> requests;
  Diagnostics diagnostics;
  REQUIRE(read_trace(path, 4096, &requests, &diagnostics));
  REQUIRE(requests.size() == 2);
  CHECK(requests[1].arrival_s == 1.5);
  CHECK(requests[1].input_tokens == 200);
  CHECK(scale_trace(requests, 3)[1].arrival_s == 0.5);
}

TEST_CASE("a trace saved with a UTF-8 byte-order mark reads as one without") {
  testing::TempDir dir;
  const std::string path = dir.write("t.csv", "\xEF\xBB\xBF" "0.5,100,20\n1.5,200,30\n");
  std::vector<Request> requests;
  Diagnostics diagnostics;
  REQUIRE(read_trace(path, 4096, &requests, &diagnostics));
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].arrival_s == 0.5);
}

}  // namespace
}  // namespace clustersim
