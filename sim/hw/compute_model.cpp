// Kernel times from the roofline with fitted efficiencies.
#include "sim/hw/compute_model.h"

#include <algorithm>

#include "sim/util/check.h"

namespace clustersim {

namespace s = schema;

double peak_tflops(const s::PeakTflops& p, s::Precision precision) {
  switch (precision) {
    case s::FP32:
      return p.fp32();
    case s::TF32:
      return p.tf32();
    case s::FP16:
      return p.fp16();
    case s::BF16:
      return p.bf16();
    case s::FP8:
      return p.fp8();
    case s::INT8:
      return p.int8_tops();
    case s::FP4:
      return p.fp4();
    default:
      return 0;
  }
}

namespace {

// Share of a dimension's 128-wide tiles that hold real rows or columns.
double tile_use(int64_t size) {
  constexpr int64_t kTile = 128;
  return static_cast<double>(size) / static_cast<double>((size + kTile - 1) / kTile * kTile);
}

}  // namespace

ComputeModel::ComputeModel(const s::Gpu& gpu, s::Precision precision, const s::Runtime& runtime,
                           KernelSetting setting) {
  peak_flops_ = peak_tflops(gpu.peak_tflops(), precision) * 1e12;
  CLUSTERSIM_CHECK(peak_flops_ > 0, "a compute model for a precision the GPU lacks");
  input_bytes_ = precision == s::FP32 || precision == s::TF32      ? 4
                 : precision == s::FP8 || precision == s::INT8 ? 1
                 : precision == s::FP4                         ? 0.5
                                                               : 2;
  matmul_fraction_ = runtime.default_matmul_max_fraction();
  matmul_overhead_ = Picoseconds::from_microseconds(runtime.default_matmul_overhead_us());
  bool fitted_matmul = false;
  for (const s::MatmulEfficiency& e : gpu.matmul_efficiency()) {
    if (e.precision() != precision) continue;
    matmul_fraction_ = e.max_fraction();
    matmul_overhead_ = Picoseconds::from_microseconds(e.overhead_us());
    fitted_matmul = true;
  }
  const double memory_fraction = gpu.has_memory_efficiency_fraction()
                                     ? gpu.memory_efficiency_fraction()
                                     : runtime.default_memory_efficiency_fraction();
  memory_bytes_per_s_ = gpu.memory_bandwidth_gb_per_s() * kBytesPerGigabyte * memory_fraction;
  const double sixteen_bit =
      gpu.peak_tflops().has_bf16() ? gpu.peak_tflops().bf16() : gpu.peak_tflops().fp16();
  attention_flops_ =
      sixteen_bit * 1e12 *
      (gpu.has_flash_attention_fraction() ? gpu.flash_attention_fraction()
                                          : runtime.default_flash_attention_fraction());
  calibrated_ =
      fitted_matmul && gpu.has_memory_efficiency_fraction() && gpu.has_flash_attention_fraction();
  if (setting == KernelSetting::kTrainingStep) {
    const double sustained = gpu.has_sustained_compute_fraction()
                                 ? gpu.sustained_compute_fraction()
                                 : runtime.default_sustained_compute_fraction();
    matmul_fraction_ *= sustained;
    attention_flops_ *= sustained;
    calibrated_ = calibrated_ && gpu.has_sustained_compute_fraction();
  }
}

ComputeModel ComputeModel::serving(const s::Gpu& gpu, s::Precision precision,
                                   const s::Runtime& runtime, double compute_fraction,
                                   double memory_fraction) {
  CLUSTERSIM_CHECK(compute_fraction > 0 && compute_fraction <= 1 && memory_fraction > 0 &&
                       memory_fraction <= 1,
                   "serving fractions outside (0, 1]");
  ComputeModel model(gpu, precision, runtime, KernelSetting::kIsolated);
  model.matmul_fraction_ *= compute_fraction;
  model.attention_flops_ *= compute_fraction;
  model.memory_bytes_per_s_ = gpu.memory_bandwidth_gb_per_s() * kBytesPerGigabyte * memory_fraction;
  return model;
}

Picoseconds ComputeModel::matmul(int64_t m, int64_t n, int64_t k, int64_t batch) const {
  return matmul(m, n, k, static_cast<double>(batch), input_bytes_);
}

Picoseconds ComputeModel::matmul(int64_t m, int64_t n, int64_t k, double batch,
                                 double b_bytes_per_element) const {
  const double problems = batch;
  const double flops =
      problems * 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const double bytes =
      problems * (input_bytes_ * static_cast<double>(m) * k +
                  b_bytes_per_element * static_cast<double>(k) * n + 2.0 * static_cast<double>(m) * n);
  const double compute_s = flops / (peak_flops_ * matmul_fraction_ * tile_use(m) * tile_use(n));
  const double memory_s = bytes / memory_bytes_per_s_;
  return Picoseconds::from_seconds(std::max(compute_s, memory_s)) + matmul_overhead_;
}

Picoseconds ComputeModel::fused_attention(double flops) const {
  return Picoseconds::from_seconds(flops / attention_flops_);
}

Picoseconds ComputeModel::memory_bound(double bytes) const {
  return Picoseconds::from_seconds(bytes / memory_bytes_per_s_);
}

}  // namespace clustersim
