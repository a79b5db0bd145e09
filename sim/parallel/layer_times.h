// Times of one transformer layer's kernels (workload/layer_ops.h) inside a training step, on one
// tensor- and context-parallel rank: compute from the compute model, tensor- and context-parallel
// collectives on an idle network of the cluster (the first group of each: every group is alike).
//
// Backward of a matmul (m x k).(k x n) is its data gradient (m x n).(n x k) and weight gradient
// (k x m).(m x n); of fused attention, its backward kernel; of a memory-bound kernel, twice its
// bytes; its collectives mirror the forward's. Recomputation reruns the whole layer forward
// (full) or the attention core (selective) before the backward.
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "sim/hw/compute_model.h"
#include "sim/io/schema/parallelism.pb.h"
#include "sim/net/collective.h"
#include "sim/net/topology.h"
#include "sim/workload/layer_ops.h"

namespace clustersim {

struct PassTimes {
  Picoseconds compute;       // kernels on the compute stream
  Picoseconds tensor_comm;   // tensor-parallel collectives on the critical path
  Picoseconds context_comm;  // context-parallel exchange on the critical path
  Picoseconds total() const { return compute + tensor_comm + context_comm; }
  PassTimes& operator+=(const PassTimes& o);
};
PassTimes operator*(int64_t times, const PassTimes& t);

struct LayerTimes {
  PassTimes forward, backward, recompute;
};

// Times collectives over one group of GPUs, each alone on an idle network, cached by kind and
// size. Not thread-safe.
class GroupCollectives {
 public:
  // Requires: `gpus` are distinct GPUs of `topology`, which outlives this.
  GroupCollectives(const Topology& topology, std::vector<int> gpus)
      : topology_(topology), gpus_(std::move(gpus)) {}
  Picoseconds time(CollectiveOp op, double bytes);
  const std::vector<int>& gpus() const { return gpus_; }
  const Topology& topology() const { return topology_; }

 private:
  const Topology& topology_;
  std::vector<int> gpus_;
  std::map<std::pair<int, double>, Picoseconds> cache_;
};

// The parallel groups a layer's collectives run on.
struct LayerGroups {
  GroupCollectives* tensor = nullptr;   // null when tensor parallel is 1
  GroupCollectives* context = nullptr;  // null when context parallel is 1
  schema::ContextParallelComm context_comm = schema::P2P;
};

// `overlap_ranks` > 1: under sequence parallelism, the all-gathers and reduce-scatters run in
// chunks beside the GEMMs they feed or drain (tensor_comm_overlap.h).
// Requires: `groups` has a group for every kind of collective in `ops`.
LayerTimes time_layer(const std::vector<LayerOp>& ops, const ComputeModel& compute,
                      const LayerGroups& groups, schema::Recompute recompute,
                      int overlap_ranks = 0);

}  // namespace clustersim
