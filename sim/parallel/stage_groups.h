// The collective groups of a transformer step's layers (layer_times.h LayerGroups), built once on
// the GPUs of stage 0's first ranks (every stage's groups are alike): tensor, context, expert and
// expert tensor parallel, and the deduplicating dispatcher's rail and NVLink-domain groups.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "sim/io/schema/model.pb.h"
#include "sim/io/schema/parallelism.pb.h"
#include "sim/net/topology.h"
#include "sim/parallel/layer_times.h"
#include "sim/parallel/pipeline_simulation.h"

namespace clustersim {

// The copies of a token a deduplicating dispatcher (EXPERT_NODE_DEDUPLICATED) sends among
// `groups` even groups of `t`'s experts (ranks, or NVLink domains): one to each group its experts
// reach (expert_dispatch.h), consecutive experts under AutoModel's fake balanced gate
// (`consecutive_experts`: job.expert_routing.consecutive_experts), else picked at random (a
// router's imbalance, job.expert_routing.max_violation, left out: it is the mean token's).
double deduplicated_copies(const schema::Transformer& t, bool consecutive_experts, int groups);

// The groups of the first tensor-, context-, expert- and expert tensor-parallel ranks of stage 0
// (every group is alike), each timed beside the others of its kind that run at once.
class StageGroups {
 public:
  StageGroups(const Topology& topology, const schema::Parallelism& p, const PipelinePlan& plan,
              const schema::Transformer& model, bool consecutive_experts);
  const LayerGroups& groups() const { return groups_; }
  // By the NVLink domains a group spans, the deduplicating dispatcher's rail bytes per all-to-all
  // byte (0: none divides the experts); empty when it does not deduplicate.
  const std::vector<double>& rail_shares() const { return rail_shares_; }
  // Whether the expert-parallel groups (more than one rank) lie each inside one NVLink domain.
  bool expert_in_one_domain() const { return expert_in_one_domain_; }
  // Where the tensor-parallel group timed crosses an NVLink domain's edge, the kind of link that
  // binds its collectives' traffic (ring_binding_link: NCCL's ring across domains); none inside
  // one domain.
  std::optional<LinkKind> tensor_crossing_link() const { return tensor_crossing_link_; }

 private:
  // The deduplicating dispatcher's groups (expert_dispatch.h) when every expert-parallel group
  // of `all` (stage 0's, the first timed) has rails (domain_rails: it spans NVLink domains, each
  // with the same number of its GPUs) over a number of domains dividing the experts; else none:
  // the plain all-to-all is what it does. The layer's all-to-all moves a copy of a token per rank
  // reached, the rail one per domain reached (`consecutive_experts`: as deduplicated_copies); the
  // time alone is the first group's (expert_network_traffic.h says where another stage's traffic
  // differs).
  void deduplicate(const Topology& topology, const std::vector<std::vector<int>>& all,
                   const schema::Transformer& t, bool consecutive_experts);

  // The collectives of `groups`' first, timed while the others run the same beside it; their
  // all-to-alls the flex dispatcher's kernels when `flex`, else NCCL's.
  static std::unique_ptr<GroupCollectives> first_beside_others(
      const Topology& topology, std::vector<std::vector<int>> groups, bool flex);

  std::unique_ptr<GroupCollectives> tensor_, context_, expert_, expert_tensor_;
  std::unique_ptr<GroupCollectives> expert_rail_, expert_domain_;
  double rail_share_ = 0;  // the first group's
  std::vector<double> rail_shares_;
  LayerGroups groups_;
  bool expert_in_one_domain_ = false;
  std::optional<LinkKind> tensor_crossing_link_;
};

}  // namespace clustersim
