// The tokens the experts of a mixture-of-experts layer receive when the router is not balanced
// (job.expert_routing): one expert gets (1 + max_violation) times the mean, the others share the
// rest evenly; with a capacity factor each expert takes at most that many times the mean (the rest
// are dropped) or, padded, exactly that many. The busiest expert-parallel rank's share sets its
// grouped GEMMs and, as the last to receive its tokens, the all-to-alls.
#pragma once

#include <string>

#include "sim/io/schema/job.pb.h"
#include "sim/io/schema/model.pb.h"

namespace clustersim {

struct ExpertLoad {
  // On the busiest expert-parallel rank, the one holding the hot expert: the token copies that
  // expert runs, and each of the rank's other experts, over a balanced router's.
  double hot_expert = 1, other_experts = 1;
  // Token copies the busiest rank runs through its experts (and receives in the dispatch), over
  // what a rank of a balanced router does.
  double busiest_rank = 1;
  // Token copies each rank sends in the dispatch, over the balanced count: what is not dropped,
  // or the capacity factor when padded.
  double sent = 1;
  double dropped = 0;  // share of all routed token copies that skip their expert
  // Token copies the expert all-to-alls move, over the k a token is routed to: below 1 where a
  // deduplicating dispatcher sends a token once to each rank its experts reach
  // (parallelism.expert_dispatcher EXPERT_NODE_DEDUPLICATED; transformer_stages.cpp sets it).
  double dispatched = 1;
};

// Requires: `t` has moe, `expert_parallel` divides its num_experts, and `routing` passed
// expert_routing_problem.
ExpertLoad expert_load(const schema::Transformer& t, const schema::ExpertRouting& routing,
                       int expert_parallel);

// A field of job.expert_routing ("" for the message itself) and why it cannot be; reason "" if
// nothing is wrong.
struct RoutingProblem {
  std::string field, reason;
};

// Why `routing` cannot describe `t`'s router: a model without experts, max_violation below 0 or
// making the hot expert take more tokens than a batch has (one copy per token: 1 + max_violation <=
// num_experts / experts_per_token), a capacity factor not above 0, padding without a capacity
// factor, consecutive experts with either of those. Requires: `t` passed the catalog checks, or has
// no moe.
RoutingProblem expert_routing_problem(const schema::Transformer& t,
                                      const schema::ExpertRouting& routing);

}  // namespace clustersim
