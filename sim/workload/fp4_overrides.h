// Where an FP4 step's GEMMs leave NVFP4 (job.fp4_overrides): the modules a quantization recipe
// keeps in 16 bits or runs in MXFP8, as marks on a layer's kernels, and the layers kept in 16 bits.
#pragma once

#include <string>
#include <vector>

#include "sim/io/schema/job.pb.h"
#include "sim/io/schema/model.pb.h"
#include "sim/workload/layer_ops.h"

namespace clustersim {

// The names of the matmuls (layer_ops.h) that make up `module`.
const std::vector<std::string>& quantized_module_ops(schema::QuantizedModule module);

// Whether `t` has a layer with `module` (attention, latent experts, Mamba mixers).
bool has_quantized_module(const schema::Transformer& t, schema::QuantizedModule module);

// `ops` (one NVFP4 layer's forward kernels) with the matmuls of `overrides`' sixteen_bit_modules
// kept in 16 bits and those of its mxfp8_modules in MXFP8; an all-gather in front of such a matmul
// moves its input in that format (16-bit: 2 bytes an element; MXFP8: the row-wise copy, 1) and
// the reduce-scatter after it all-gathers the output gradient in that format's copies in the
// backward (16-bit: 2; MXFP8: two copies of 1 + 1/32) instead of NVFP4's.
std::vector<LayerOp> with_fp4_overrides(const schema::Fp4Overrides& overrides,
                                        std::vector<LayerOp> ops);

// The first 0-based layer of `t` that `job` runs in 16 bits (fp4_overrides.sixteen_bit_last_layers
// from the end); num_layers when none is.
int first_sixteen_bit_layer(const schema::Transformer& t, const schema::TrainingJob& job);

}  // namespace clustersim
