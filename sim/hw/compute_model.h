// Time of one GPU kernel from its FLOPs and bytes against the GPU's peaks and fitted efficiencies
// (catalog data, fitted on measured GEMMs, memory bandwidth and fused attention):
//   matmul (m x k) . (k x n):  max(FLOPs / (peak x max x tile use x sustained),
//                                  bytes / (HBM x memory eff)) + overhead;
//                              tile use = m / (ceil(m/128) 128) x likewise for n
//   fused attention:           FLOPs / (16-bit peak x flash fraction x sustained)
//   memory-bound kernels:      bytes / (HBM x memory eff)
// `sustained` is 1 for kernels benchmarked alone and the GPU's sustained compute fraction (fitted
// on published training runs) inside a training step.
// Immutable; cheap to copy; safe to share between threads.
#pragma once

#include <cstdint>
#include <string>

#include "sim/io/schema/gpu.pb.h"
#include "sim/io/schema/runtime.pb.h"
#include "sim/util/units.h"

namespace clustersim {

// The GPU's dense peak for matmul inputs of `precision` (TFLOP/s, or TOPS for INT8); 0 when it has
// no tensor-core support for it (or it is INT4 / unspecified).
double peak_tflops(const schema::PeakTflops& peak, schema::Precision precision);

// Where the kernels run: alone, as the calibration benchmarks ran them, or inside a training step.
enum class KernelSetting { kIsolated, kTrainingStep };

class ComputeModel {
 public:
  // `runtime` supplies the efficiencies `gpu` has no fitted value for.
  // Requires: `gpu` has a peak for `precision` (the scenario checks guarantee it).
  ComputeModel(const schema::Gpu& gpu, schema::Precision precision, const schema::Runtime& runtime,
               KernelSetting setting);

  // Kernels of a serving iteration: the isolated rates with the tensor-core rates (matmul and
  // fused attention) x `compute_fraction` and memory traffic at HBM x `memory_fraction` (the
  // serving runtime's fit for this GPU) instead of the STREAM fraction.
  // Requires: both fractions in (0, 1]; as the constructor.
  static ComputeModel serving(const schema::Gpu& gpu, schema::Precision precision,
                              const schema::Runtime& runtime, double compute_fraction,
                              double memory_fraction);

  // `batch` independent matrix multiplications of (m x k) by (k x n) in one kernel (torch.bmm:
  // one launch overhead), inputs of the model's precision and a 16-bit output.
  Picoseconds matmul(int64_t m, int64_t n, int64_t k, int64_t batch = 1) const;
  // The same with the (k x n) operand stored in `b_bytes_per_element` (weight-only quantized
  // weights, dequantized in the kernel) and `batch` fractional (an average of routed experts).
  Picoseconds matmul(int64_t m, int64_t n, int64_t k, double batch,
                     double b_bytes_per_element) const;
  // A fused (flash) attention kernel doing `flops`.
  Picoseconds fused_attention(double flops) const;
  // A kernel limited by memory traffic: elementwise ops, norms, softmax, optimizer steps.
  Picoseconds memory_bound(double bytes) const;

  // Whether every efficiency used was fitted for this GPU (false: runtime defaults were used).
  bool calibrated() const { return calibrated_; }
  double peak_flops() const { return peak_flops_; }

 private:
  double peak_flops_ = 0;          // of the precision, FLOP/s
  double attention_flops_ = 0;     // achieved fused-attention FLOP/s
  double memory_bytes_per_s_ = 0;  // achieved
  double matmul_fraction_ = 0;     // of peak, with the sustained fraction in a training step
  Picoseconds matmul_overhead_;
  double input_bytes_ = 2;  // per element of matmul inputs
  bool calibrated_ = true;
};

}  // namespace clustersim
