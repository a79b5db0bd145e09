// The kind of link each communicating part of a step binds on (part_links.h).
#include "sim/parallel/part_links.h"

#include <vector>

#include "sim/net/collective.h"
#include "sim/parallel/expert_parallel.h"

namespace clustersim {
namespace {

using Groups = std::vector<std::vector<int>>;

// `gpus` in their first two NVLink domains, in order.
std::vector<int> first_two_domains(const Topology& topology, const std::vector<int>& gpus) {
  std::vector<int> domains, out;
  for (int gpu : gpus) {
    const int domain = topology.domain_of(gpu);
    bool seen = false;
    for (int d : domains) seen |= d == domain;
    if (!seen) {
      if (domains.size() == 2) continue;
      domains.push_back(domain);
    }
    out.push_back(gpu);
  }
  return out;
}

// The link that binds `groups`' collectives run at once as `algorithm` (a ring over each group's
// GPUs in its first two NVLink domains); none where a group has fewer than two GPUs.
std::optional<LinkKind> binding(const Topology& topology, const Groups& groups,
                                CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing) {
  std::vector<Collective> collectives;
  for (const std::vector<int>& gpus : groups) {
    if (gpus.size() < 2) return std::nullopt;
    collectives.push_back(
        {CollectiveOp::kAllReduce,
         algorithm == CollectiveAlgorithm::kRing ? first_two_domains(topology, gpus) : gpus, 1,
         algorithm});
  }
  if (collectives.empty()) return std::nullopt;
  return collectives_binding_link(topology, collectives);
}

// The data-parallel collectives' groups of each tensor-parallel rank of stage 0 over replicas
// `replicas` and the first `contexts` context-parallel ranks of each
// (pipeline_gradient_reduction.cpp data_parallel_collective).
Groups data_groups(const PipelinePlan& plan, const std::vector<int>& replicas, int contexts) {
  Groups out;
  for (int rank = 0; rank < plan.tensor_parallel; ++rank) {
    out.emplace_back();
    for (int d : replicas) {
      for (int c = 0; c < contexts; ++c) {
        out.back().push_back(plan.gpu(d, 0, c * plan.tensor_parallel + rank));
      }
    }
  }
  return out;
}

std::vector<int> strided(int first, int count, int stride) {
  std::vector<int> out;
  for (int i = 0; i < count; ++i) out.push_back(first + i * stride);
  return out;
}

// The link of the data-parallel traffic that ran (`ran`): over all replicas and their
// context-parallel ranks, or, under hybrid sharding, over one group's ranks (the gathers and
// reduce-scatters) and across the groups (the replicas' all-reduce, one context-parallel rank
// each); beside it the routed experts' gradients over their own data-parallel group. Each group
// weighed for each algorithm its collectives ran as. One link where every kind that moves bytes
// binds the same, else none.
std::optional<LinkKind> data_link(const Topology& topology, const PipelinePlan& plan,
                                  const DataParallelAlgorithms& ran) {
  const int dp = plan.data_parallel, shard = plan.data_parallel_shard, cp = plan.context_parallel;
  const bool hybrid = shard > 0 && shard < dp;
  std::vector<std::optional<LinkKind>> kinds;
  // The groups `groups()` weighed for each algorithm of `algorithms` (DataParallelAlgorithms'
  // bits), formed only where one ran.
  auto weigh = [&](uint8_t algorithms, auto groups) {
    for (CollectiveAlgorithm algorithm :
         {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kTree, CollectiveAlgorithm::kNvls}) {
      if ((algorithms >> static_cast<int>(algorithm)) & 1u) {
        kinds.push_back(binding(topology, groups(), algorithm));
      }
    }
  };
  auto bits = [&](DataParallelGroup group) { return ran.by_group[static_cast<size_t>(group)]; };
  // As data_parallel_collective forms them (pipeline_gradient_reduction.cpp): without hybrid
  // sharding a shard's group is all replicas.
  const uint8_t all =
      bits(DataParallelGroup::kAll) | (hybrid ? 0 : bits(DataParallelGroup::kShard));
  weigh(all, [&] { return data_groups(plan, strided(0, dp, 1), cp); });
  if (hybrid) {
    weigh(bits(DataParallelGroup::kShard),
          [&] { return data_groups(plan, strided(0, shard, 1), cp); });
    weigh(bits(DataParallelGroup::kReplicas),
          [&] { return data_groups(plan, strided(0, dp / shard, shard), 1); });
  }
  const ExpertLayout& experts = plan.experts;
  if (experts.expert_parallel > 1 && experts.expert_data_parallel() > 1) {
    weigh(bits(DataParallelGroup::kExperts), [&] {
      const int tcp = plan.tensor_parallel * cp;
      std::vector<int> group;
      for (int local : expert_data_parallel_group(experts, 0)) {
        group.push_back(plan.gpu(local / tcp, 0, local % tcp));
      }
      return Groups{group};
    });
  }
  std::optional<LinkKind> link;
  for (std::optional<LinkKind> kind : kinds) {
    if (!kind) continue;  // no group of two GPUs: nothing moves
    if (link && *link != *kind) return std::nullopt;
    link = kind;
  }
  return link;
}

std::optional<LinkKind> agreeing_link(std::optional<LinkKind> a, std::optional<LinkKind> b) {
  return a == b ? a : std::nullopt;
}

}  // namespace

PartLinks part_links(const Topology& topology, const PipelinePlan& plan,
                     std::optional<LinkKind> tensor_crossing, const DataParallelAlgorithms& ran) {
  PartLinks out;
  const int tp = plan.tensor_parallel, cp = plan.context_parallel;
  out.tensor = tensor_crossing;
  if (!out.tensor && tp > 1) out.tensor = binding(topology, {strided(0, tp, 1)});
  if (cp > 1) out.context = binding(topology, {strided(0, cp, tp)});
  out.data = data_link(topology, plan, ran);
  return out;
}

PartLinks agreeing(const PartLinks& a, const PartLinks& b) {
  return {agreeing_link(a.tensor, b.tensor), agreeing_link(a.context, b.context),
          agreeing_link(a.data, b.data)};
}

}  // namespace clustersim
