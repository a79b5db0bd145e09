// The sustained compute fraction (gpu.proto) of a training step: which of a GPU's fractions a
// step of a precision takes, and the two values the catalog derives from the fitted ones at load
// instead of reading them: a precision's fraction carried over from a reference GPU
// (MatmulEfficiency.sustained_transfer) or from the same chip in another server
// (Gpu.sustained_server_transfer), and the runtime's defaults for GPUs without fits (this
// fraction's and the isolated efficiencies', one rule).
#pragma once

#include <optional>
#include <vector>

#include "sim/io/schema/gpu.pb.h"
#include "sim/io/schema/job.pb.h"

namespace clustersim {

// The GPU's matmul efficiency of `precision`; null when it has none. Lifetime: the GPU's.
const schema::MatmulEfficiency* matmul_efficiency(const schema::Gpu& gpu,
                                                  schema::Precision precision);

// The sustained fraction of a training step whose GEMMs run in `precision`: the precision's
// matmul_efficiency mxfp8_sustained_fraction (FP8 steps under `fp8_recipe` MXFP8), else its
// sustained_fraction, else the GPU's sustained_compute_fraction; absent when none is given.
std::optional<double> step_sustained_fraction(
    const schema::Gpu& gpu, schema::Precision precision,
    schema::Fp8Recipe fp8_recipe = schema::FP8_RECIPE_UNSPECIFIED);

// The sustained fraction of that step's 16-bit tensor-core kernels (fused attention, the output
// layer's GEMMs): the step's own, but in an FP4 step the GPU's per-tensor FP8 step fraction where
// one is given. The FP4 fraction is fitted on NVFP4 steps for their FP4 GEMMs; their 16-bit
// kernels are the ones the GPU's FP8 steps run, at the rate fitted there.
std::optional<double> sixteen_bit_sustained_fraction(
    const schema::Gpu& gpu, schema::Precision precision,
    schema::Fp8Recipe fp8_recipe = schema::FP8_RECIPE_UNSPECIFIED);

// Whether that fraction is given and fitted on the GPU's own training runs: not carried over from
// another GPU (its matmul_efficiency of `precision` has no sustained_transfer, the GPU no
// sustained_server_transfer).
bool step_sustained_fraction_fitted(const schema::Gpu& gpu, schema::Precision precision,
                                    schema::Fp8Recipe fp8_recipe = schema::FP8_RECIPE_UNSPECIFIED);

// Whether every constant a compute model of `gpu` in `precision` takes is fitted for the GPU
// (ComputeModel::calibrated, the rows' `calibrated` column, and the word "calibrated" of the
// accuracy line run, sweep and cost print beside them): its GEMM efficiency of `precision`, of the
// 16-bit format in a narrower precision and of FP8 in an FP4 model of a GPU with FP8; its memory
// efficiency and attention rates, none of them priors; inside a training step (`training_step`),
// also its sustained fraction (step_sustained_fraction_fitted).
bool compute_constants_fitted(const schema::Gpu& gpu, schema::Precision precision,
                              bool training_step,
                              schema::Fp8Recipe fp8_recipe = schema::FP8_RECIPE_UNSPECIFIED);

// A sustained fraction derived from the GPU's own of `from` steps (gpu.proto SustainedTransfer),
// per-tensor scaling: own(from) x reference(precision) / reference(from), or own(from) without a
// reference (null).
// Requires: the step_sustained_fraction values used are given.
double transferred_sustained_fraction(const schema::Gpu& gpu, schema::Precision from,
                                      const schema::Gpu* reference, schema::Precision precision);

// A sustained fraction carried over from the same chip in another server (gpu.proto
// SustainedServerTransfer): same_chip(precision, fp8_recipe) x ratio_of(ratio_precision) /
// ratio_to(ratio_precision), the ratio's two per-tensor.
// Requires: the step_sustained_fraction values used are given.
double server_transferred_sustained_fraction(const schema::Gpu& same_chip,
                                             const schema::Gpu& ratio_of,
                                             const schema::Gpu& ratio_to,
                                             schema::Precision ratio_precision,
                                             schema::Precision precision,
                                             schema::Fp8Recipe fp8_recipe);

// One of the runtime's efficiencies for GPUs without their own (Runtime.default_*), which the
// catalog computes at load instead of reading it: `field` of the Runtime, taken from `gpu_field`
// of the GPUs with fitted efficiencies.
struct RuntimeDefault {
  const char* field;      // e.g. "default_matmul_max_fraction"
  const char* gpu_field;  // e.g. "matmul_efficiency.max_fraction" (of the 16-bit format)
  std::optional<double> (*value)(const schema::Gpu& gpu);  // the GPU's own; absent if none
};

// The five: the 16-bit matmul's max_fraction and overhead_us, memory_efficiency_fraction,
// flash_attention_fraction, sustained_compute_fraction.
const std::vector<RuntimeDefault>& runtime_defaults();

// Whether a GPU's efficiencies are fitted: not priors, and it gives every runtime_defaults() value.
bool efficiencies_fitted(const schema::Gpu& gpu);

// The runtime's default of `d`: the mean of its value over the `gpus` whose efficiencies are
// fitted, each fit counted once (entries of one architecture with the same value share a fit:
// the A100 SXM4 40GB and 80GB entries all theirs, the H200 the H100's sustained fraction).
// Absent when no GPU's efficiencies are fitted.
std::optional<double> runtime_default(const std::vector<const schema::Gpu*>& gpus,
                                      const RuntimeDefault& d);

}  // namespace clustersim
