// The kind of link that binds each communicating part of a training step: the tensor-, context-
// and data-parallel collectives of stage 0's groups (every stage's are alike), each the binding
// link of the algorithm its collectives ran as (collectives_binding_link): NCCL's ring, or for
// the data-parallel all-reduces the tree or NVLS where the step's simulation chose them. The
// limiting column weighs parts that share one kind of link together (step_limit.h): on a node
// without NVLink the tensor-parallel all-reduces and the data-parallel gathers and reduce-scatters
// all cross PCIe, so a faster PCIe shortens both parts at once.
#pragma once

#include <optional>

#include "sim/net/topology.h"
#include "sim/parallel/pipeline_simulation.h"

namespace clustersim {

// None where a part has no group of two GPUs, or where its collectives bind different kinds of
// link (hybrid sharding's groups, the experts' own data-parallel group, collectives of one group
// run as different algorithms, pools of other instances).
struct PartLinks {
  std::optional<LinkKind> tensor, context, data;
};

// The links of `plan`'s groups on `topology`, its data-parallel collectives run as `ran` (the
// stages' StageTimeline::data_parallel_algorithms together; a group none ran on moves nothing).
// `tensor_crossing`: the tensor-parallel group's binding link where it crosses an NVLink domain's
// edge (StageGroups), taken as its link. A data-parallel group's ring is weighed on its GPUs in
// its first two NVLink domains: a ring's channels cross each domain alike, so more domains bind
// the same kind of link; its tree on all of them: what a domain's leaders send over their NICs
// depends on where the domain sits in the two trees (a leaf's one edge, an inner node's three).
// Requires: `plan`'s GPUs are `topology`'s; the algorithms in `ran` applicable to their groups.
PartLinks part_links(const Topology& topology, const PipelinePlan& plan,
                     std::optional<LinkKind> tensor_crossing, const DataParallelAlgorithms& ran);

// Each part's link where `a` and `b` agree; none where they differ.
PartLinks agreeing(const PartLinks& a, const PartLinks& b);

}  // namespace clustersim
