// Size of a training checkpoint and the time to write it to, and read it back from, the chosen
// storage volume.
//
// Saved: the weights and the optimizer states (Adam: fp32 master weights and both moments), not
// the gradients, which the next step recomputes. Writes are fully parallel (as Megatron-Core's
// distributed checkpointing and PyTorch DCP do): every distinct byte is written once, spread
// evenly over the nodes. On a restart every GPU reads back what it holds, so replicas of a
// model state (ZeRO stages below 3 keep weights on every data-parallel rank) are read once per
// replica. A block volume (ESSD, EBS) is attached to each node and bounded by the instance's
// block-storage caps; a shared file system or object store serves all nodes from one throughput,
// each node reaching it through its plain (TCP) network.
#pragma once

#include <cstdint>
#include <string>

#include "sim/io/schema/cost.pb.h"
#include "sim/io/schema/job.pb.h"
#include "sim/io/schema/model.pb.h"
#include "sim/io/schema/storage.pb.h"
#include "sim/parallel/memory_model.h"
#include "sim/sweep/configuration_space.h"

namespace clustersim {

struct CheckpointCost {
  double bytes = 0;    // the whole checkpoint
  double write_s = 0;  // one save, all nodes writing in parallel
  double load_bytes_per_node = 0;
  double load_s = 0;  // every node reading its GPUs' states
};

// The checkpoints a volume holds at once (Checkpoint.keep; absent: 2, see cost.proto).
int checkpoints_kept(const schema::Checkpoint& checkpoint);

// Why `keep` checkpoints of `model` trained by `job`, written over `nodes` nodes, do not fit in
// `capacity_gib` of `tier`: a shared volume holds the whole of each, a block volume (one per
// node) a node's share; "" when they fit. `nodes_note` follows the node count in the message
// (", the most the scenario has").
std::string checkpoint_volume_problem(const schema::Model& model, const schema::TrainingJob& job,
                                      int64_t nodes, int keep, const schema::StorageTier& tier,
                                      double capacity_gib, const std::string& nodes_note);

// `memory`: the configuration's per-GPU estimate (its fullest stage). Requires: `volume` resolved
// against `tier` (resolve_storage_volume) and a configuration of `model`.
CheckpointCost checkpoint_cost(const schema::Model& model, const schema::TrainingJob& job,
                               const Configuration& configuration, const MemoryEstimate& memory,
                               const schema::StorageTier& tier,
                               const schema::StorageVolume& volume);

}  // namespace clustersim
