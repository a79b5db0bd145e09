// The work of the busiest expert-parallel rank of a serving replica's mixture-of-experts layer
// when its m tokens route uniformly at random: each token picks k distinct experts of E, and the
// E experts sit E / EP on each of the EP ranks. Every rank waits for the slowest before the
// layer's output is reduced, so the busiest rank's grouped GEMMs set the layer's time: it
// streams the weights of the experts it was routed to and runs the token copies they received.
//
// Each is the expected maximum over the EP ranks of independent binomials, E[max] = sum over x >= 0
// of 1 - F(x)^EP:
//   experts a rank touches: Binomial(E / EP, q), q = 1 - (1 - k/E)^m, the chance an expert is
//     picked by any of the m tokens (its mean, summed over ranks, is experts_touched);
//   token copies a rank receives: Binomial(m k, 1 / EP).
// Independence ignores that the ranks' counts sum to a fixed total and that a token's k experts
// are distinct (so at most min(k, E / EP) of its copies land on one rank); the results are held
// within what every outcome obeys: at least the even share rounded up (ceil(m k / EP) copies, one
// rank holding at least ceil(k / EP) of a token's experts) and a copy for each expert of the rank
// with the most, at most m min(k, E / EP) copies and E / EP experts. The rank with the most experts and the rank with the most copies are taken as
// one (the weight streaming of small batches and the rows of large ones each at their maximum).
// At EP = 1 it is exactly the whole layer's: experts_touched and m k.
#pragma once

#include <cstdint>

namespace clustersim {

struct ExpertRankLoad {
  double experts = 0;  // distinct experts the busiest rank runs (expected)
  double copies = 0;   // token copies it runs through them (expected)
};

// Requires: experts_per_token <= experts, expert_parallel >= 1 dividing experts, tokens >= 0.
// Memoized per thread for each routing and token count (up to 2^18 tokens).
ExpertRankLoad busiest_expert_rank(int experts, int experts_per_token, int expert_parallel,
                                   int64_t tokens);

// The expected maximum of `n` independent Binomial(`trials`, `p`) counts. Requires: n >= 1,
// trials >= 0, 0 <= p <= 1.
double expected_binomial_maximum(int64_t trials, double p, int n);

}  // namespace clustersim
