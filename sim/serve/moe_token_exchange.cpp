// The MoE token exchange of an attention-data-parallel replica: all-gather or all-to-all.
#include "sim/serve/moe_token_exchange.h"

#include <algorithm>
#include <cmath>

#include "sim/net/collective.h"
#include "sim/serve/iteration_model.h"
#include "sim/util/check.h"

namespace clustersim {
namespace {

// The prepare kernel's payload: each GPU's count of tokens for each destination (int32).
constexpr double kPrepareCountBytes = 4;

std::vector<int> exchange_group(int ranks) {
  std::vector<int> gpus;
  for (int g = 0; g < ranks; ++g) gpus.push_back(g);
  return gpus;
}

}  // namespace

schema::MoeTokenExchange resolve_moe_token_exchange(schema::MoeTokenExchange requested,
                                                    int expert_parallel, int experts_per_token,
                                                    schema::GpuInterconnect interconnect) {
  if (requested != schema::MOE_TOKEN_EXCHANGE_UNSPECIFIED) return requested;
  return expert_parallel > experts_per_token && interconnect == schema::NVSWITCH
             ? schema::MOE_ALL_TO_ALL
             : schema::MOE_ALL_GATHER;
}

double moe_destinations_per_token(int experts, int experts_per_token, int ranks) {
  CLUSTERSIM_CHECK(ranks >= 1 && experts % ranks == 0 && experts_per_token >= 1 &&
                       experts_per_token <= experts,
                   "experts split evenly, top-k within them");
  // P(none of the k distinct experts on a given GPU) = C(E - E/n, k) / C(E, k).
  const int elsewhere = experts - experts / ranks;
  double none_here = 1;
  for (int i = 0; i < experts_per_token; ++i) {
    none_here *= std::max(0, elsewhere - i) / static_cast<double>(experts - i);
  }
  return ranks * (1 - none_here);
}

MoeTokenExchange::MoeTokenExchange(const MoeTokenExchangeInputs& in)
    : kind_(in.kind),
      ranks_(in.ranks),
      fake_weights_(in.fake_weights),
      dispatch_bytes_per_token_(in.dispatch_bytes_per_token),
      combine_bytes_per_token_(in.combine_bytes_per_token) {
  CLUSTERSIM_CHECK(in.ranks >= 2 && in.topology != nullptr &&
                       (in.kind == schema::MOE_ALL_GATHER || in.kind == schema::MOE_ALL_TO_ALL),
                   "a resolved token exchange among two GPUs or more");
  Collective c;
  c.gpus = exchange_group(ranks_);
  const int64_t most_per_gpu = std::max<int64_t>(1, in.most_tokens_per_gpu);
  if (kind_ == schema::MOE_ALL_GATHER) {
    const int64_t most = most_per_gpu * ranks_;
    for (int64_t tokens = 1;; tokens *= 2) {
      c.op = CollectiveOp::kAllGather;
      c.bytes = static_cast<double>(tokens) * in.dispatch_bytes_per_token;
      out_.push_back(collective_time(*in.topology, c) + in.overhead);
      c.op = CollectiveOp::kReduceScatter;
      c.bytes = static_cast<double>(tokens) * in.combine_bytes_per_token;
      back_.push_back(collective_time(*in.topology, c) + in.overhead);
      if (tokens >= most) break;
    }
    return;
  }
  destinations_ = in.fake_weights ? 1
                                  : moe_destinations_per_token(in.experts, in.experts_per_token,
                                                               ranks_);
  c.op = CollectiveOp::kAllToAll;
  c.dispatcher_kernels = true;
  c.bytes = kPrepareCountBytes * ranks_;
  prepare_ = collective_time(*in.topology, c) + in.overhead;
  // The busiest buffer: n x a GPU's tokens (fake weights: GPU 0 receives everyone's).
  const auto most = static_cast<int64_t>(
      std::ceil(static_cast<double>(most_per_gpu) * ranks_ * std::max(1.0, destinations_)));
  for (int64_t copies = 1;; copies *= 2) {
    c.bytes = static_cast<double>(copies) * in.dispatch_bytes_per_token;
    out_.push_back(collective_time(*in.topology, c) + in.overhead);
    c.bytes = static_cast<double>(copies) * in.combine_bytes_per_token;
    back_.push_back(collective_time(*in.topology, c) + in.overhead);
    if (copies >= most) break;
  }
}

MoeTokenExchange::Copies MoeTokenExchange::copies(const std::vector<int64_t>& tokens) const {
  CLUSTERSIM_CHECK(static_cast<int>(tokens.size()) == ranks_, "a token count per GPU");
  int64_t all = 0;
  for (int64_t t : tokens) all += t;
  Copies c;
  const double n = ranks_;
  for (int g = 0; g < ranks_; ++g) {
    const auto own = static_cast<double>(tokens[g]);
    if (fake_weights_) {  // every token's one copy to GPU 0
      c.sent.push_back(g == 0 ? 0 : own);
      c.received.push_back(g == 0 ? static_cast<double>(all) - own : 0);
    } else {  // each GPU's D copies a token spread evenly over the n GPUs, its own included
      c.sent.push_back(own * destinations_ * (n - 1) / n);
      c.received.push_back((static_cast<double>(all) - own) * destinations_ / n);
    }
  }
  return c;
}

int64_t MoeTokenExchange::all_to_all_buffer_copies(const std::vector<int64_t>& tokens) const {
  const Copies c = copies(tokens);
  double busiest = 0;
  for (int g = 0; g < ranks_; ++g) busiest = std::max({busiest, c.sent[g], c.received[g]});
  // The collective's buffer holds the GPU's own share too: S (n - 1) / n leaves it.
  // At least one copy: the kernels run (and sync) with nothing to send.
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(busiest * ranks_ / (ranks_ - 1))));
}

Picoseconds MoeTokenExchange::dispatch(const std::vector<int64_t>& tokens) const {
  if (kind_ == schema::MOE_ALL_GATHER) {
    int64_t all = 0;
    for (int64_t t : tokens) all += t;
    return IterationModel::interpolate(out_, all);
  }
  return prepare_ + IterationModel::interpolate(out_, all_to_all_buffer_copies(tokens));
}

Picoseconds MoeTokenExchange::combine(const std::vector<int64_t>& tokens) const {
  if (kind_ == schema::MOE_ALL_GATHER) {
    int64_t all = 0;
    for (int64_t t : tokens) all += t;
    return IterationModel::interpolate(back_, all);
  }
  return IterationModel::interpolate(back_, all_to_all_buffer_copies(tokens));
}

}  // namespace clustersim
