// The requests a deployment receives: Poisson arrivals at a rate, Poisson arrivals with bursts,
// or a trace file of (arrival time, input tokens, output tokens); prompt and output lengths drawn
// from fixed, uniform or log-normal distributions. Seeded: the same traffic settings always give
// the same requests. Arrival gaps, the bursts' schedule and the lengths each come from a stream
// of their own, so the traffic at a multiple of its rate holds the same requests in the same
// order, their arrival times divided by the multiple (without bursts; with them, the same bursts),
// as many as its duration takes.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "sim/io/schema/serving.pb.h"
#include "sim/util/diagnostics.h"

namespace clustersim {

// The most requests one simulation may hold: a request takes about 100 bytes and 3 us to simulate
// (a million: 3 s and 97 MB on a 2-core machine), so 2^24 take about a minute and 1.6 GB. Open-loop
// traffic is checked against it when loaded (its expected count), a trace as it is read, a closed
// loop as it runs.
inline constexpr int64_t kMaxRequests = int64_t{1} << 24;
// The longest traffic: duration_s and a trace's last arrival. The picosecond clock spans 107 days;
// the rate search (--max-rate) slows traffic down to a 32nd of its rate (64 days of arrivals), the
// rest is left for the requests still queued to finish.
inline constexpr double kMaxTraffic_s = 2 * 86400.0;

struct Request {
  double arrival_s = 0;
  int32_t input_tokens = 0;   // the whole prompt, its prefix included
  int32_t output_tokens = 0;  // >= 1: the first token ends the prompt's iteration
  // The shared token sequence the prompt begins with (-1: none) and how many of its tokens
  // (<= input_tokens).
  int32_t prefix = -1;
  int32_t prefix_tokens = 0;
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

// Reads a trace file: one request per line, "arrival_s,input_tokens,output_tokens", optionally
// followed by ",prefix_id,prefix_tokens"; blank lines, '#' comments and a leading UTF-8
// byte-order mark are skipped. A malformed line (wrong field count, a number that does not parse,
// a negative time, a length below 1, times out of order, input + output above `max_context`
// tokens, a prefix id below 0, a prefix longer than the prompt) is an error at path:line. Returns false after reporting every problem.
bool read_trace(const std::string& path, int max_context, std::vector<Request>* requests,
                Diagnostics* diagnostics);

// The mean request rate of `traffic` (requests/s): its rate, the time-average of its bursts, or a
// trace's count over its span.
double mean_rate_per_s(const schema::Traffic& traffic, const std::vector<Request>& trace);

// Why a non-empty trace has no rate to scale (--max-rate, autoscaling): every request arrives at
// 0 s, so its count over its span is none; "" when it has one.
std::string trace_without_rate(const std::vector<Request>& trace);

// A fingerprint of a trace's requests, for a resumed sizing to notice an edited trace file:
// "trace of N requests, CRC-32 XXXXXXXX" over every field; "" for no trace.
std::string trace_fingerprint(const std::vector<Request>& trace);

// The requests open-loop `traffic` (rate or bursts) sends over its duration, on average; NaN when
// a rate is not a number (reported by check_traffic).
double expected_requests(const schema::Traffic& traffic);

}  // namespace clustersim
