// The pipeline plan of a transformer's training step: each stage's work per model chunk from its
// layers' kernel times (layer_times.h) under the pipeline layout (pipeline_layout.h), the output
// layer on the last chunk, FP8 casts and delayed scaling's amax all-reduces (amax_reduction.h),
// gradient buckets over data x context parallel, the optimizer on its shard and the parameter
// all-gather; plus where each stage's time goes.
#pragma once

#include <vector>

#include "sim/hw/compute_model.h"
#include "sim/io/schema/job.pb.h"
#include "sim/io/schema/model.pb.h"
#include "sim/io/schema/parallelism.pb.h"
#include "sim/net/topology.h"
#include "sim/parallel/pipeline_simulation.h"
#include "sim/parallel/step_model.h"

namespace clustersim {

// The plan, and each stage's shares of the step (step_model.h), as pipeline_breakdown reads them.
struct TransformerPlan : StageShares {
  PipelinePlan plan;
  double recomputed_layers = 0;  // fully recomputed layers per micro-batch (all stages)
};

// Requires: a transformer; `parallelism` fully resolved and valid (configuration_problem is "");
// `topology` holds all GPUs of the plan; `compute` for the job's precision on its GPU.
TransformerPlan transformer_plan(const schema::Model& model, const schema::TrainingJob& job,
                                 const schema::Parallelism& parallelism, const Topology& topology,
                                 const ComputeModel& compute);

}  // namespace clustersim
