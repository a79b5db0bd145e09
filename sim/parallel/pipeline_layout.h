// Which transformer layers each pipeline stage and model chunk holds, as Megatron-Core splits
// them: evenly over stages x chunks; or with given first- and last-stage layer counts and the
// rest even over the other stages (--decoder-first/last-pipeline-num-layers); or as listed per
// stage or per model chunk (parallelism.stage_layers: Megatron-Core's
// --pipeline-model-parallel-layout, whose chunks may hold no transformer layer); or counting
// the embedding and the loss as one layer each of the first and the last model chunk
// (--account-for-embedding/loss-in-pipeline-split). Chunk c of stage r is virtual stage
// c x stages + r: the embedding sits in stage 0's chunk 0, the output layer in the last stage's
// last chunk. Under DualPipe and DualPipeV (dualpipe_schedule.h) the layers are split as without
// interleaving over as many pieces as the schedule has (DualPipe: stages, DualPipeV: 2 x stages;
// first/last-stage and listed counts are the pieces'), and stage r holds piece r as chunk 0 and
// piece pieces - 1 - r as chunk 1: DualPipe's stages 0 and stages - 1 both hold the embedding and
// the output layer, DualPipeV's stage 0 both.
#pragma once

#include <string>
#include <vector>

#include "sim/io/schema/parallelism.pb.h"

namespace clustersim {

struct PipelineLayout {
  std::vector<std::vector<int>> layers;  // [stage][chunk]: transformer layers
  // DualPipe's [stage][chunk]: the model piece the chunk holds; empty: chunk c of stage r is
  // virtual stage c x stages + r.
  std::vector<std::vector<int>> pieces;

  int stage_layers(int stage) const;
  // The model's index of the first layer of chunk `chunk` of stage `stage` (virtual stages in
  // order c x stages + r).
  int first_layer(int stage, int chunk) const;
  // Whether chunk `chunk` of stage `stage` runs the embedding (the output layer): it holds the
  // model's first (last) piece.
  bool holds_embedding(int stage, int chunk) const;
  bool holds_output(int stage, int chunk) const;
  // Whether some chunk of stage `stage` does.
  bool stage_holds_embedding(int stage) const;
  bool stage_holds_output(int stage) const;
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
