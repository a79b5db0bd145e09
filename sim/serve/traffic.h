// The requests a deployment receives: Poisson arrivals at a rate, Poisson arrivals with bursts,
// or a trace file of (arrival time, input tokens, output tokens); prompt and output lengths drawn
// from fixed, uniform or log-normal distributions. Seeded: the same traffic settings always give
// the same requests.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "sim/io/schema/serving.pb.h"
#include "sim/util/diagnostics.h"

namespace clustersim {

struct Request {
  double arrival_s = 0;
  int32_t input_tokens = 0;
  int32_t output_tokens = 0;  // >= 1: the first token ends the prompt's iteration
};

// How long `traffic` sends requests (rate, bursts, closed loop without a request count): its
// duration_s, 600 s when absent.
double traffic_duration_s(const schema::Traffic& traffic);

// One length drawn from `lengths`. Requires: a checked distribution.
int32_t draw_length(const schema::LengthDistribution& lengths, std::mt19937_64* rng);

// Requests of `traffic` (rate or bursts; a trace is read by read_trace) over its duration, with
// every rate multiplied by `rate_scale`, in arrival order. Requires: checked settings
// (check_traffic), rate_scale > 0.
std::vector<Request> generate_requests(const schema::Traffic& traffic, double rate_scale);

// `trace` with its arrival times divided by `rate_scale` (the same requests, faster).
std::vector<Request> scale_trace(const std::vector<Request>& trace, double rate_scale);

// Reads a trace file: one request per line, "arrival_s,input_tokens,output_tokens"; blank lines
// and '#' comments are skipped. A malformed line (wrong field count, a number that does not
// parse, a negative time, a length below 1, times out of order, input + output above
// `max_context` tokens) is an error at path:line. Returns false after reporting every problem.
bool read_trace(const std::string& path, int max_context, std::vector<Request>* requests,
                Diagnostics* diagnostics);

// The mean request rate of `traffic` (requests/s): its rate, the time-average of its bursts, or a
// trace's count over its span.
double mean_rate_per_s(const schema::Traffic& traffic, const std::vector<Request>& trace);

}  // namespace clustersim
