// The kernels of a CNN's forward pass over a batch, with their shapes (convolutions as implicit
// GEMMs), and the activations it keeps for the backward pass.
#pragma once

#include <vector>

#include "sim/io/schema/model.pb.h"
#include "sim/workload/layer_ops.h"

namespace clustersim {

// Forward kernels for `batch` samples, 16-bit activations:
//   convolution (C_in -> C_out, k x k, output H x W): GEMM m = batch H W, n = C_out, k = C_in k^2,
//   then batch norm and activation as one memory-bound pass (read and write the output);
//   pooling: read input, write output; linear: GEMM m = batch, n = out, k = in;
//   residual addition: read two tensors, write one.
std::vector<LayerOp> cnn_forward_ops(const schema::Cnn& cnn, int batch);

// Bytes kept for the backward pass for `batch` samples: every convolution's input, its batch-norm
// input and activation output, pooling and linear inputs (2 bytes per element).
double cnn_activation_bytes(const schema::Cnn& cnn, int batch);

}  // namespace clustersim
