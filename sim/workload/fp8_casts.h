// The memory-bound quantization kernels Transformer Engine adds around FP8 GEMMs, per recipe
// (job.proto Fp8Recipe). Each linear layer's GEMM input is cast to FP8 in the forward and its
// output gradient in the backward, each in the two layouts Hopper's FP8 GEMMs need (row-wise for
// one GEMM, transposed for the weight gradient; MXFP8 and blockwise: two differently scaled
// copies), so a cast reads the 16-bit tensor and writes two 1-byte copies (4 bytes per element);
// per-tensor current scaling first reads it once more for its amax (6 bytes). Delayed scaling
// uses the amax of earlier steps and needs no extra pass. Weights are cast the same way once per
// step (Transformer Engine caches them over the micro-batches); FP8 weights
// (job.fp8_parameters) only need their transposed copy: read 1, write 1 byte.
#pragma once

#include <vector>

#include "sim/io/schema/job.pb.h"
#include "sim/workload/layer_ops.h"

namespace clustersim {

// Bytes moved per element of a cast under `recipe`.
double fp8_cast_bytes_per_element(schema::Fp8Recipe recipe);

struct Fp8CastBytes {
  double forward = 0;   // per micro-batch: the GEMM inputs
  double backward = 0;  // per micro-batch: the GEMMs' output gradients
};

// The casts of the FP8 GEMMs among `ops` (one layer's forward kernels on one rank: matmuls not
// kept in 16 bits). Under sequence parallelism (all-gathers and reduce-scatters among `ops`,
// over `tensor_parallel` ranks) Transformer Engine casts a gathered input on the rank's shard
// before gathering it in FP8, and likewise a reduce-scattered output's gradient.
Fp8CastBytes fp8_cast_bytes(const std::vector<LayerOp>& ops, schema::Fp8Recipe recipe,
                            int tensor_parallel);

// Bytes of casting `parameters` FP8-GEMM weights once per step.
double fp8_weight_cast_bytes(double parameters, schema::Fp8Recipe recipe, bool fp8_parameters);

}  // namespace clustersim
