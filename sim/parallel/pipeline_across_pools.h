// One training step of a pipeline whose stages sit on the pools of a mix (a cluster made of
// several instance types), in order: pool 0 holds the first stages, and so on, each pool a whole
// number of stages of tensor x context x data parallel GPUs (the same on every pool). Each
// stage's work is timed on its own pool's GPU and NVLink (transformer_stages.h on that pool's
// topology), with the layers given per stage (parallelism.stage_layers) or split by speed within
// each stage's GPU memory (stage_layer_split.h); the whole pipeline then runs on the engine over
// the pools joined into one cluster (net/topology_builder.h's build_joined_topology), so the
// activations between the last stage of one pool and the first of the next cross the inter-pool
// network, and every stage reduces its gradients over its replicas inside its pool.
//
// With the interleaved schedule (virtual_stages v > 1) every stage's v model chunks sit on its
// pool's GPUs: a micro-batch crosses each pool boundary once per chunk each way, and from the last
// pool back to the first between chunks, every crossing a send on the joined network. Split by
// speed, each stage's layers are then dealt over its chunks, the output layer's time on the last
// (split_layers_by_speed with the chunks); given ones are per stage or per chunk as
// parallelism.stage_layers says.
//
// Ranks sit tensor-parallel innermost, then context parallel, then a stage's replicas, then the
// stages (rank_order TP_DP_PP): a stage's GPUs lie inside one pool.
// A mixture-of-experts model's expert-parallel groups lie inside each stage (ETP x EP dividing
// its TP x CP x DP GPUs), so inside its pool: each stage's all-to-alls are timed on its pool's
// NVLink and, where they cross its nodes, run on the pool's network in the joined cluster.
// So do ZeRO-3's groups (a stage's replicas): its layer gathers and reduce-scatters stay in the
// stage's pool. The split by speed times a layer as the mean of a plain stage's (dense-first
// layers of a MoE model are not told apart).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/engine/timeline.h"
#include "sim/hw/compute_model.h"
#include "sim/io/schema/job.pb.h"
#include "sim/io/schema/model.pb.h"
#include "sim/io/schema/parallelism.pb.h"
#include "sim/net/topology.h"
#include "sim/parallel/memory_model.h"
#include "sim/parallel/stage_layer_split.h"
#include "sim/parallel/step_model.h"

namespace clustersim {

struct StagePool {
  const Topology* topology = nullptr;     // the pool's own GPUs (its stages' layer times)
  const ComputeModel* compute = nullptr;  // its GPU at the job's precision
  int stages = 1;                         // consecutive stages it holds
  double capacity_bytes = 0;              // GPU memory (for the split by speed)
};

// `parallelism` with stage_layers listing `totals` (one per stage): as they are without
// interleaving; with v model chunks per chunk in virtual-stage order, stage r's total spread over
// its chunks, the first totals[r] % v chunks one layer more (a chunk may hold none, as
// Megatron-Core's --pipeline-model-parallel-layout allows).
schema::Parallelism with_stage_totals(const schema::Parallelism& parallelism,
                                      const std::vector<int>& totals);

// `parallelism` without given stage layers: the layers as even as whole layers allow, the first
// layers % stages stages one more (pipeline_layout.h's default), listed per chunk when
// interleaved (with_stage_totals), where an even split needs layers divisible by the chunks.
schema::Parallelism with_even_stage_layers(int layers, const schema::Parallelism& parallelism);

// Each stage's speed on its pool (one layer's forward and backward, the output layer besides on
// the last) and the layers its GPU's memory holds, for split_layers_by_speed (under `runtime`,
// its fp8_gemm_any_layout taken from each pool's GPU).
// Requires: `parallelism` resolved, pipeline_parallel the pools' stages together; no
// stage_layers needed (an even layout times the layers).
std::vector<StageSpeed> stage_speeds(const schema::Model& model, const schema::TrainingJob& job,
                                     const schema::Parallelism& parallelism,
                                     const std::vector<StagePool>& pools,
                                     const RuntimeMemory& runtime);

// The parallelism with stage_layers set: as given, or split by speed; null when the stages'
// memories cannot hold the model. Requires: as stage_speeds.
std::optional<schema::Parallelism> with_stage_layers(const schema::Model& model,
                                                     const schema::TrainingJob& job,
                                                     const schema::Parallelism& parallelism,
                                                     const std::vector<StagePool>& pools,
                                                     const RuntimeMemory& runtime);

struct PipelineAcrossPoolsResult {
  StepResult step;  // the breakdown is the stage that finishes last's
  std::vector<int> stage_layers;  // each stage's, its chunks together
  std::vector<double> stage_busy_s;  // each stage's compute stream over the step
  int limiting_stage = 0;            // the busiest stage: it sets the pipeline's pace
  int limiting_pool = 0;             // the pool that holds it
  // The longest time another pool's busiest stage idles beside the limiting one, per step.
  double wait_s = 0;
};

// Requires: a transformer; `parallelism` resolved with stage_layers set (with_stage_layers) and
// rank order TP_DP_PP implied; `joined` holds every pool's GPUs in order; each pool's topology
// its own. `timeline`, when given, receives the step's spans.
PipelineAcrossPoolsResult simulate_pipeline_across_pools(const schema::Model& model,
                                                         const schema::TrainingJob& job,
                                                         const schema::Parallelism& parallelism,
                                                         const std::vector<StagePool>& pools,
                                                         const Topology& joined,
                                                         Timeline* timeline = nullptr);

}  // namespace clustersim
