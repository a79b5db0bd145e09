// The serving runtime's fits for GPUs without their own (ServingRuntime.default_fit), one per
// form factor, which the catalog computes at load from the runtime's fitted GPUs instead of
// reading them.
#pragma once

#include <vector>

#include "sim/io/schema/gpu.pb.h"
#include "sim/io/schema/runtime.pb.h"

namespace clustersim {

// One GPU a serving runtime has a fit for: the fit and the GPU's form factor (gpu.proto).
struct FittedServingGpu {
  const schema::ServingGpuFit* fit = nullptr;
  schema::FormFactor form_factor = schema::FORM_FACTOR_UNSPECIFIED;
};

// The default fit of `form_factor`: each number of ServingGpuFit (compute_fraction,
// memory_fraction, layer_overhead_us, memory_overhead_gib, tensor_parallel_memory_gib,
// kv_reread_fraction, fp8_kv_reread_fraction, fp8_matmul_fraction, expert_matmul_fraction,
// expert_layer_overhead_us) the mean over the fits averaged that give it, absent where none does
// (its absent meaning applies).
// The fits averaged: those of the GPUs of `form_factor`; where there are none, for an add-in card
// (PCIE, CONSUMER) those of the other add-in form factor, else all of `fitted`.
// Requires: `fitted` is not empty.
schema::ServingGpuFit serving_default_fit(const std::vector<FittedServingGpu>& fitted,
                                          schema::FormFactor form_factor);

// The default fits of every form factor (SXM, PCIE, CONSUMER); none when `fitted` is empty.
std::vector<schema::ServingGpuFit> serving_default_fits(
    const std::vector<FittedServingGpu>& fitted);

// The runtime's fit for `gpu`, else its default for the GPU's form factor (`*calibrated` set
// false; the catalog computes one for every form factor at load).
// Requires: `runtime` holds its default fits (a catalog's runtime).
schema::ServingGpuFit serving_gpu_fit(const schema::ServingRuntime& runtime, const schema::Gpu& gpu,
                                      bool* calibrated);

}  // namespace clustersim
