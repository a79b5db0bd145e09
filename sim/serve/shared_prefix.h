// The shared prompt prefixes of a traffic (traffic.shared_prefix): each prefix's length, drawn
// once, and the prefix each request carries, drawn per request in the order requests are made.
// Both come from a generator of their own, seeded by the traffic's seed, so that the arrivals and
// lengths of a traffic are the same with and without prefixes.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "sim/io/schema/serving.pb.h"
#include "sim/serve/traffic.h"

namespace clustersim {

class PrefixDraws {
 public:
  // Requires: checked traffic; without shared_prefix every request keeps no prefix.
  explicit PrefixDraws(const schema::Traffic& traffic);
  // Gives `r`, whose input_tokens are those after its prefix, a prefix (or none) and puts the
  // prefix's tokens in front of its prompt.
  void assign(Request* r);

 private:
  std::mt19937_64 rng_;
  std::vector<int32_t> lengths_;    // per prefix id
  std::vector<double> cumulative_;  // popularity: P(id <= i), the last 1
  double share_ = 0;
};

// The longest prefix `traffic` gives a prompt (0 without shared_prefix; a malformed length: 0).
int max_prefix_tokens(const schema::Traffic& traffic);

}  // namespace clustersim
