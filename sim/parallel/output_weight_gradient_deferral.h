// Megatron-Core's deferred output-layer weight gradients (parallelism.defer_output_weight_gradient,
// its defer_embedding_wgrad_compute): on the last pipeline stage, each of the step's first
// `limit` micro-batches (all: 0) keeps its output-layer input (the sequence-parallel shard when
// sequence parallel) and the logits' gradient instead of running the weight-gradient GEMM in its
// backward; the stage runs the kept GEMMs after its last backward, in the pipeline's flush
// (NVIDIA/Megatron-LM d98e8a64: tensor_parallel/layers.py ColumnParallelLinear.forward and
// LinearWithGradAccumulationAndAsyncCommunication.backward fill the buffers while shorter than
// wgrad_deferral_limit; pipeline_parallel/schedules.py finish_embedding_wgrad_compute calls
// utils.py drain_embedding_wgrad_compute after the schedule's last backward). Owns how many
// micro-batches are deferred and what each keeps; the step moves the GEMMs
// (pipeline_simulation.h StageWork), the memory model holds the kept tensors.
#pragma once

#include "sim/io/schema/job.pb.h"
#include "sim/io/schema/model.pb.h"
#include "sim/io/schema/parallelism.pb.h"

namespace clustersim {

// How many of a step's `micro_batches` (per replica) defer their output-layer weight gradient:
// 0 without defer_output_weight_gradient.
int deferred_output_micro_batches(const schema::Parallelism& parallelism, int micro_batches);

// Bytes one deferred micro-batch keeps on a GPU of the last stage until the flush: the logits'
// gradient, sequence / CP x micro-batch x vocabulary / TP in 16 bits (the backward casts it to
// the input's type), and the layer's input, sequence / CP x micro-batch x hidden in 16 bits, a
// TP-th of it under sequence parallelism (the flush all-gathers it again).
double deferred_output_bytes(const schema::Transformer& t, const schema::TrainingJob& job,
                             const schema::Parallelism& parallelism);

}  // namespace clustersim
