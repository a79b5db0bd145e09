// Which transformer layers each pipeline stage and model chunk holds, as Megatron-Core splits
// them: evenly over stages x chunks; or with given first- and last-stage layer counts and the
// rest even over the other stages (--decoder-first/last-pipeline-num-layers); or as listed per
// stage or per model chunk (parallelism.stage_layers: Megatron-Core's
// --pipeline-model-parallel-layout, whose chunks may hold no transformer layer); or counting
// the embedding and the loss as one layer each of the first and the last model chunk
// (--account-for-embedding/loss-in-pipeline-split). Chunk c of stage r is virtual stage
// c x stages + r: the embedding sits in stage 0's chunk 0, the output layer in the last stage's
// last chunk.
#pragma once

#include <string>
#include <vector>

#include "sim/io/schema/parallelism.pb.h"

namespace clustersim {

struct PipelineLayout {
  std::vector<std::vector<int>> layers;  // [stage][chunk]: transformer layers

  int stage_layers(int stage) const;
  // The model's index of the first layer of chunk `chunk` of stage `stage` (virtual stages in
  // order c x stages + r).
  int first_layer(int stage, int chunk) const;
  int stages() const { return static_cast<int>(layers.size()); }
  int chunks() const { return layers.empty() ? 1 : static_cast<int>(layers[0].size()); }
};

// Why `layers` transformer layers cannot be laid out as `p` asks (its pipeline_parallel,
// interleaved virtual_stages, first/last-stage or listed stage layer counts and embedding/loss
// accounting), or
// "" when they can. Without interleaving or uneven settings the layers need not divide: the
// first layers % stages stages take one more each.
std::string pipeline_layout_problem(int layers, const schema::Parallelism& p);

// The layout. Requires: pipeline_layout_problem(layers, p) is "".
PipelineLayout pipeline_layout(int layers, const schema::Parallelism& p);

}  // namespace clustersim
