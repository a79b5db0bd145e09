// The sustained compute fraction (gpu.proto) of a training step: which of a GPU's fractions a
// step of a precision takes, and the two values the catalog derives from the fitted ones at load
// instead of reading them: a precision's fraction carried over from a reference GPU
// (MatmulEfficiency.sustained_transfer) and the runtime's default for GPUs without any.
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

// Whether that fraction is given and fitted on the GPU's own training runs: not carried over from
// another GPU (its matmul_efficiency of `precision` has no sustained_transfer).
bool step_sustained_fraction_fitted(const schema::Gpu& gpu, schema::Precision precision,
                                    schema::Fp8Recipe fp8_recipe = schema::FP8_RECIPE_UNSPECIFIED);

// A sustained fraction carried over from `reference` (gpu.proto SustainedTransfer), per-tensor
// scaling:  own(from) x reference(precision) / reference(from).
// Requires: the three step_sustained_fraction values are given.
double transferred_sustained_fraction(const schema::Gpu& gpu, schema::Precision from,
                                      const schema::Gpu& reference, schema::Precision precision);

// The runtime's default sustained compute fraction (Runtime.default_sustained_compute_fraction):
// of the `gpus` whose sustained_compute_fraction is fitted (given, efficiencies not priors), the
// mean per architecture, then the mean over architectures (each chip generation counts once,
// however many catalog entries share its fit). Absent when no GPU has one.
std::optional<double> default_sustained_compute_fraction(
    const std::vector<const schema::Gpu*>& gpus);

}  // namespace clustersim
