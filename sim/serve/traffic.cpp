// Request generation and trace files.
#include "sim/serve/traffic.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "sim/io/hex_byte.h"
#include "sim/io/text_file.h"
#include "sim/serve/shared_prefix.h"
#include "sim/util/number_format.h"

namespace clustersim {
namespace {

namespace s = schema;

constexpr double kDefaultDuration_s = 600;

// Mixed into the traffic's seed for the generators of the lengths and of the bursts' schedule
// (constants from SplitMix64's sequence; they only have to differ from each other and from
// shared_prefix.cpp's): each draws from a stream of its own, so that the traffic at another rate
// (--max-rate, autoscaling, a user's lower rate) has the same requests with their gaps stretched,
// not other lengths and other bursts (a rate search then compares like with like).
constexpr uint64_t kLengthStream = 0xbf58476d1ce4e5b9ULL;
constexpr uint64_t kBurstStream = 0x94d049bb133111ebULL;

// Arrival times before `horizon_s` of a Poisson process whose rate is `base` outside bursts and
// `burst` inside them, the gaps drawn from `gaps`. Bursts last `burst_s`; the gaps between them
// are exponential with mean `every_s` (no bursts when every_s is 0), drawn from `schedule`. At
// each change of rate the next arrival is drawn afresh, which the memoryless exponential allows.
std::vector<double> arrival_times(double base, double burst, double every_s, double burst_s,
                                  double horizon_s, std::mt19937_64* gaps,
                                  std::mt19937_64* schedule) {
  const auto exponential = [](double mean, std::mt19937_64* rng) {
    return std::exponential_distribution<double>(1 / mean)(*rng);
  };
  std::vector<double> times;
  bool on = false;
  double t = 0;
  // Clamped as every later change is: a first burst drawn past the horizon let the arrival drawn
  // before it, past the horizon too, through (a traffic of 1e-300 s held a request).
  double change = every_s > 0 ? std::min(horizon_s, exponential(every_s, schedule)) : horizon_s;
  while (t < horizon_s) {
    const double rate = on ? burst : base;
    const double next = rate > 0 ? t + exponential(1 / rate, gaps) : horizon_s;
    if (next >= change) {
      if (every_s <= 0 || change >= horizon_s) break;
      t = change;
      on = !on;
      change = std::min(horizon_s, on ? t + burst_s : t + exponential(every_s, schedule));
      continue;
    }
    t = next;
    times.push_back(t);
  }
  return times;
}

}  // namespace

double traffic_duration_s(const s::Traffic& traffic) {
  return traffic.has_duration_s() ? traffic.duration_s() : kDefaultDuration_s;
}

int32_t draw_length(const s::LengthDistribution& d, std::mt19937_64* rng) {
  switch (d.kind_case()) {
    case s::LengthDistribution::kUniform:
      return std::uniform_int_distribution<int32_t>(d.uniform().min(), d.uniform().max())(*rng);
    case s::LengthDistribution::kLognormal: {
      const s::LogNormalLength& l = d.lognormal();
      std::lognormal_distribution<double> draw(std::log(l.median()), l.sigma());
      const double low = l.has_min() ? l.min() : 1;
      return static_cast<int32_t>(std::clamp(std::round(draw(*rng)), low,
                                             static_cast<double>(l.max())));
    }
    default:
      return d.fixed();
  }
}

std::vector<Request> generate_requests(const s::Traffic& traffic, double rate_scale) {
  const uint64_t seed = traffic.has_seed() ? traffic.seed() : 1;
  std::mt19937_64 gaps(seed), schedule(seed ^ kBurstStream), lengths(seed ^ kLengthStream);
  const double horizon = traffic_duration_s(traffic);
  std::vector<double> times;
  if (traffic.has_bursts()) {
    const s::Bursts& b = traffic.bursts();
    times = arrival_times(b.base_rate_per_s() * rate_scale, b.burst_rate_per_s() * rate_scale,
                          b.burst_every_s(), b.burst_duration_s(), horizon, &gaps, &schedule);
  } else {
    times = arrival_times(traffic.rate_per_s() * rate_scale, 0, 0, 0, horizon, &gaps, &schedule);
  }
  std::vector<Request> requests;
  requests.reserve(times.size());
  PrefixDraws prefixes(traffic);
  for (double t : times) {
    Request r;
    r.arrival_s = t;
    r.input_tokens = draw_length(traffic.input_tokens(), &lengths);
    r.output_tokens = draw_length(traffic.output_tokens(), &lengths);
    prefixes.assign(&r);
    requests.push_back(r);
  }
  return requests;
}

std::vector<Request> scale_trace(const std::vector<Request>& trace, double rate_scale) {
  std::vector<Request> scaled = trace;
  for (Request& r : scaled) r.arrival_s /= rate_scale;
  return scaled;
}

namespace {

// A CSV field without its surrounding spaces (and a CRLF file's carriage return).
std::string_view trimmed(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

// Parses one CSV field as a number of type T; false when it is not one entirely.
template <class T>
bool parse_field(std::string_view text, T* value) {
  text = trimmed(text);
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return error == std::errc() && end == text.data() + text.size() && !text.empty();
}

// A field as the line has it, in quotes, with each control byte (a NUL, a tab) written as <0xNN>
// (hex_byte, as every file's errors write a byte) so that the message shows what is there.
std::string quoted(std::string_view field) {
  std::string out = "\"";
  for (const unsigned char c : field) {
    if (c < 0x20 || c == 0x7f) {
      out += "<" + hex_byte(c) + ">";
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// Why a count field was refused: digits alone past what 32 bits hold say so.
std::string bad_count(const char* name, std::string_view field, const char* wanted) {
  const std::string_view digits = trimmed(field);
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  const bool only_digits = !digits.empty() && end == digits.data() + digits.size() &&
                           std::all_of(digits.begin(), digits.end(), [](char c) {
                             return c >= '0' && c <= '9';
                           });
  const bool too_large = only_digits && (error == std::errc::result_out_of_range ||
                                         value > std::numeric_limits<int32_t>::max());
  if (too_large) {
    return std::string(name) + " " + std::string(digits) + " is larger than " +
           std::to_string(std::numeric_limits<int32_t>::max());
  }
  return std::string(name) + " " + quoted(field) + " is not " + wanted;
}

// The problem with one trace line, or "" when it is a request (stored in `*r`).
std::string parse_trace_line(const std::string& line, double previous_s, int max_context,
                             Request* r) {
  std::vector<std::string_view> fields;
  std::string_view rest(line);
  for (size_t comma; (comma = rest.find(',')) != std::string_view::npos;) {
    fields.push_back(rest.substr(0, comma));
    rest.remove_prefix(comma + 1);
  }
  fields.push_back(rest);
  if (fields.size() != 3 && fields.size() != 5) {
    return "expected arrival_s,input_tokens,output_tokens[,prefix_id,prefix_tokens], got " +
           std::to_string(fields.size()) + " field" + (fields.size() == 1 ? "" : "s");
  }
  if (!parse_field(fields[0], &r->arrival_s) || !std::isfinite(r->arrival_s) || r->arrival_s < 0) {
    return "arrival_s " + quoted(fields[0]) + " is not a time >= 0 in seconds";
  }
  if (r->arrival_s > kMaxTraffic_s) {
    return "arrival_s " + std::string(fields[0]) + " is later than the " +
           format_number(kMaxTraffic_s) + " s (2 days) a trace may span";
  }
  if (r->arrival_s < previous_s) return "arrival_s goes back in time (the lines must be in order)";
  const char* names[] = {"input_tokens", "output_tokens"};
  int32_t* values[] = {&r->input_tokens, &r->output_tokens};
  for (int i = 0; i < 2; ++i) {
    if (!parse_field(fields[i + 1], values[i]) || *values[i] < 1) {
      return bad_count(names[i], fields[i + 1], "a whole number >= 1");
    }
  }
  const int64_t context = int64_t{r->input_tokens} + r->output_tokens;
  if (context > max_context) {
    return "a context of " + std::to_string(context) +
           " tokens exceeds the model's max_sequence_length (" + std::to_string(max_context) + ")";
  }
  if (fields.size() == 5) {
    if (!parse_field(fields[3], &r->prefix) || r->prefix < 0) {
      return bad_count("prefix_id", fields[3], "a whole number >= 0");
    }
    if (!parse_field(fields[4], &r->prefix_tokens) || r->prefix_tokens < 1 ||
        r->prefix_tokens > r->input_tokens) {
      return "prefix_tokens " + quoted(fields[4]) +
             " is not a whole number from 1 to input_tokens (" + std::to_string(r->input_tokens) +
             ")";
    }
  }
  return "";
}

}  // namespace

bool read_trace(const std::string& path, int max_context, std::vector<Request>* requests,
                Diagnostics* diagnostics) {
  std::string text;
  if (!read_whole_file(path, &text, diagnostics)) return false;
  // A spreadsheet's "CSV UTF-8" starts with a byte-order mark, which made line 1's arrival_s an
  // error quoting an invisible character.
  if (text.starts_with(kUtf8ByteOrderMark)) text.erase(0, kUtf8ByteOrderMark.size());
  const int errors_before = diagnostics->error_count();
  std::istringstream lines(text);
  std::string line;
  double previous = 0;
  for (int number = 1; std::getline(lines, line); ++number) {
    const size_t comment = line.find('#');
    if (comment != std::string::npos) line.resize(comment);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Request r;
    const std::string problem = parse_trace_line(line, previous, max_context, &r);
    if (!problem.empty()) {
      diagnostics->add_error({path, number, 1}, "", problem);
      continue;
    }
    if (static_cast<int64_t>(requests->size()) == kMaxRequests) {
      diagnostics->add_error({path, number, 1}, "",
                             "the trace holds more than the " + format_number(kMaxRequests) +
                                 " (2^24) requests a simulation may hold");
      break;
    }
    previous = r.arrival_s;
    requests->push_back(r);
  }
  if (diagnostics->error_count() == errors_before && requests->empty()) {
    diagnostics->add_error({path, 1, 1}, "", "the trace holds no request");
  }
  return diagnostics->error_count() == errors_before;
}

double mean_rate_per_s(const s::Traffic& traffic, const std::vector<Request>& trace) {
  if (traffic.has_trace_file()) {
    const double span = trace.empty() ? 0 : trace.back().arrival_s;
    return span > 0 ? static_cast<double>(trace.size()) / span : 0;
  }
  if (traffic.has_bursts()) {
    const s::Bursts& b = traffic.bursts();
    // Bursts occupy duration / (every + duration) of the time on average (an alternating
    // renewal process: exponential gaps of mean `every` between bursts of fixed length).
    const double share = b.burst_duration_s() / (b.burst_every_s() + b.burst_duration_s());
    return b.base_rate_per_s() * (1 - share) + b.burst_rate_per_s() * share;
  }
  return traffic.rate_per_s();
}

std::string trace_without_rate(const std::vector<Request>& trace) {
  if (trace.empty() || trace.back().arrival_s > 0) return "";
  return "its " + std::to_string(trace.size()) + " request" + (trace.size() == 1 ? "" : "s") +
         " all arrive at 0 s, a span of no time and so no request rate";
}

std::string trace_fingerprint(const std::vector<Request>& trace) {
  if (trace.empty()) return "";
  uLong crc = crc32(0, nullptr, 0);
  for (const Request& r : trace) {
    const auto add = [&](const auto& field) {
      crc = crc32(crc, reinterpret_cast<const Bytef*>(&field), sizeof field);
    };
    add(r.arrival_s);
    add(r.input_tokens);
    add(r.output_tokens);
    add(r.prefix);
    add(r.prefix_tokens);
  }
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08lx", crc & 0xffffffffUL);
  return "trace of " + std::to_string(trace.size()) + " requests, CRC-32 " + hex;
}

double expected_requests(const s::Traffic& traffic) {
  return mean_rate_per_s(traffic, {}) * traffic_duration_s(traffic);
}

}  // namespace clustersim
