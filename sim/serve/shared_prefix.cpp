// Drawing the shared prefixes of generated traffic.
#include "sim/serve/shared_prefix.h"

#include <algorithm>
#include <cmath>

#include "sim/serve/serving_checks.h"

namespace clustersim {
namespace {

namespace s = schema;

// Mixed into the traffic's seed for the prefixes' own generator (any constant other than 0
// would do: it only has to differ from the arrivals' stream).
constexpr uint64_t kPrefixStream = 0x9e3779b97f4a7c15ULL;

}  // namespace

PrefixDraws::PrefixDraws(const s::Traffic& traffic)
    : rng_((traffic.has_seed() ? traffic.seed() : 1) ^ kPrefixStream) {
  if (!traffic.has_shared_prefix()) return;
  const s::SharedPrefix& p = traffic.shared_prefix();
  share_ = p.has_share() ? p.share() : 1.0;
  const double exponent =
      p.popularity() == s::ZIPF ? (p.has_zipf_exponent() ? p.zipf_exponent() : 1.0) : 0.0;
  double total = 0;
  for (int k = 1; k <= p.prefixes(); ++k) {
    lengths_.push_back(draw_length(p.tokens(), &rng_));
    total += std::pow(static_cast<double>(k), -exponent);
    cumulative_.push_back(total);
  }
  for (double& c : cumulative_) c /= total;
  cumulative_.back() = 1;
}

void PrefixDraws::assign(Request* r) {
  if (lengths_.empty()) return;
  std::uniform_real_distribution<double> unit(0, 1);
  const bool carries = unit(rng_) < share_;
  const double u = unit(rng_);
  if (!carries) return;
  const auto id = static_cast<int32_t>(
      std::upper_bound(cumulative_.begin(), cumulative_.end(), u) - cumulative_.begin());
  r->prefix = std::min<int32_t>(id, static_cast<int32_t>(lengths_.size()) - 1);
  r->prefix_tokens = lengths_[r->prefix];
  r->input_tokens += r->prefix_tokens;
}

int max_prefix_tokens(const s::Traffic& traffic) {
  return traffic.has_shared_prefix() ? max_length(traffic.shared_prefix().tokens()) : 0;
}

}  // namespace clustersim
