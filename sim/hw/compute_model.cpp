// Kernel times from the roofline with fitted efficiencies.
#include "sim/hw/compute_model.h"

#include <algorithm>
#include <cstdlib>

#include "sim/hw/attention_schedule.h"
#include "sim/hw/sustained_fraction.h"
#include "sim/io/catalog.h"
#include "sim/util/check.h"
#include "sim/workload/element_size.h"

namespace clustersim {

namespace s = schema;

s::Precision sixteen_bit_format(const s::Gpu& gpu) {
  return gpu.peak_tflops().has_bf16() ? s::BF16 : s::FP16;
}

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

// Share of a dimension's `tile`-wide tiles that hold real rows or columns.
double tile_use(int64_t size, int64_t tile) {
  return static_cast<double>(size) / static_cast<double>((size + tile - 1) / tile * tile);
}

// FlashAttention's backward does 2.5x the forward's FLOPs (five matmuls against two): the
// convention its benchmarks, and so the fitted backward rates, count in.
constexpr double kBackwardFlopsRatio = 2.5;

// The rows of a tile holding one query's heads at the full tensor-core rate
// (AttentionKernel::tile_rows). Hopper: 64. Its warpgroup MMA is 64 rows, and a 64-row block runs
// at the dense kernel's rate with its warpgroups splitting the value columns: FlashMLA's SM90
// sparse prefill holds 64 heads a block whatever the heads (deepseek-ai/FlashMLA@9241ae3e
// csrc/sm90/prefill/sparse/config.h B_H = 64; phase1.cuh: h_q / B_H blocks a query) and runs 128
// heads at 640 TFLOP/s on an H800 (README), cuDNN's SM90 sparse backward 64 heads of 512 over 640
// keys at 322 TFLOP/s on an H200 (NVIDIA/cudnn-frontend benchmark/dsa/results/deepseek_v4): the
// H100 entries' rates at those shapes within 6% (results/sparse_attention_kernels.csv). Elsewhere
// the GEMM model's 128: Blackwell's one-CTA tcgen05 MMA is 128 rows and FlashMLA's SM100 64-head
// kernel issues 64 (csrc/sm100/prefill/sparse/fwd/head64/config.h B_H = 64); at half tiles the
// Blackwell entries run cuDNN's SM100 sparse kernels (64 heads of 512 over 640 keys, GB200 and
// GB300) 1.12-1.28x as fast as measured, as they run its dense kernels (1.10-1.31x at 4096 keys).
int64_t attention_row_tile(const s::Gpu& gpu) {
  return gpu.architecture() == "Hopper" ? 64 : ComputeModel::kTile;
}

// The share of a kernel's tiles its rows fill (AttentionKernel::tile_rows).
double attention_tile_use(const AttentionKernel& kernel, const s::Gpu& gpu) {
  return kernel.tile_rows > 0 ? tile_use(kernel.tile_rows, attention_row_tile(gpu)) : 1;
}

}  // namespace

double AttentionKernel::pairs() const {
  const auto q = static_cast<double>(queries), k = static_cast<double>(keys);
  return causal ? q * (k - q + 1) + q * (q - 1) / 2 : q * k;
}

ComputeModel::Gemm ComputeModel::gemm_for(const s::Gpu& gpu, s::Precision precision,
                                          const s::Runtime& runtime) {
  // The runtime's defaults are the means of GEMM fits that all write their output after the main
  // loop (topologies/runtime.textproto), so a GEMM timed at them does too.
  Gemm g{peak_tflops(gpu.peak_tflops(), precision) * 1e12, runtime.default_matmul_max_fraction(),
         Picoseconds::from_microseconds(runtime.default_matmul_overhead_us()),
         bytes_per_element(precision), /*serial_output_write=*/true};
  const s::MatmulEfficiency* e = matmul_efficiency(gpu, precision);
  if (e != nullptr) {
    g.fraction = e->max_fraction();
    g.overhead = Picoseconds::from_microseconds(e->overhead_us());
    g.serial_output_write = e->serial_output_write();
  }
  return g;
}

ComputeModel::ComputeModel(const s::Gpu& gpu, s::Precision precision, const s::Runtime& runtime,
                           KernelSetting setting, s::Fp8Recipe fp8_recipe)
    : precision_(precision), gpu_(&gpu) {
  const s::Precision sixteen = sixteen_bit_format(gpu);
  gemm_ = gemm_for(gpu, precision, runtime);
  peak_flops_ = gemm_.peak_flops;
  CLUSTERSIM_CHECK(peak_flops_ > 0, "a compute model for a precision the GPU lacks");
  // Wider types than 16 bits keep their own GEMMs everywhere.
  const bool narrow = bytes_per_element(precision) < 2;
  sixteen_bit_ = narrow ? gemm_for(gpu, sixteen, runtime) : gemm_;
  const bool mxfp8_inside = precision == s::FP4 && gpu.peak_tflops().fp8() > 0;
  if (mxfp8_inside) mxfp8_ = gemm_for(gpu, s::FP8, runtime);
  sixteen_bit_peak_ = peak_tflops(gpu.peak_tflops(), sixteen) * 1e12;
  fp8_peak_ = peak_tflops(gpu.peak_tflops(), s::FP8) * 1e12;
  tf32_peak_ =
      (gpu.peak_tflops().tf32() > 0 ? gpu.peak_tflops().tf32() : gpu.peak_tflops().fp32()) * 1e12;
  const double memory_fraction = gpu.has_memory_efficiency_fraction()
                                     ? gpu.memory_efficiency_fraction()
                                     : runtime.default_memory_efficiency_fraction();
  memory_bytes_per_s_ = gpu.memory_bandwidth_gb_per_s() * kBytesPerGigabyte * memory_fraction;
  fp32_flops_ = gpu.peak_tflops().fp32() * 1e12;
  attention_flops_ =
      sixteen_bit_peak_ * (gpu.has_flash_attention_fraction()
                               ? gpu.flash_attention_fraction()
                               : runtime.default_flash_attention_fraction());
  calibrated_ = compute_constants_fitted(gpu, precision, setting == KernelSetting::kTrainingStep,
                                         fp8_recipe);
  if (setting != KernelSetting::kTrainingStep) return;
  training_step_ = true;
  power_limit_ = gpu.has_power_limit() ? gpu.power_limit().step_throughput_fraction() : 1;
  const double sustained = step_sustained_fraction(gpu, precision, fp8_recipe)
                               .value_or(runtime.default_sustained_compute_fraction());
  sustained_ = sustained * power_limit_;
  gemm_.fraction *= sustained_;
  sixteen_bit_sustained_ =
      sixteen_bit_sustained_fraction(gpu, precision, fp8_recipe).value_or(sustained) *
      power_limit_;
  if (mxfp8_inside) {
    mxfp8_.fraction *= step_sustained_fraction(gpu, s::FP8, s::MXFP8).value_or(sustained) *
                       power_limit_;
  }
  if (narrow) sixteen_bit_.fraction *= sixteen_bit_sustained_;
  else sixteen_bit_ = gemm_;
  attention_flops_ *= sixteen_bit_sustained_;
}

ComputeModel ComputeModel::serving(const s::Gpu& gpu, s::Precision precision,
                                   const s::Runtime& runtime, double compute_fraction,
                                   double memory_fraction, double fp8_matmul_fraction) {
  CLUSTERSIM_CHECK(compute_fraction > 0 && compute_fraction <= 1 && memory_fraction > 0 &&
                       memory_fraction <= 1 && fp8_matmul_fraction <= 1,
                   "serving fractions outside (0, 1]");
  ComputeModel model(gpu, precision, runtime, KernelSetting::kIsolated);
  const bool own_fp8_rate = precision == s::FP8 && fp8_matmul_fraction > 0;
  model.gemm_.fraction =
      own_fp8_rate ? fp8_matmul_fraction : model.gemm_.fraction * compute_fraction;
  model.sixteen_bit_.fraction *= compute_fraction;
  model.attention_flops_ *= compute_fraction;
  model.serving_attention_fraction_ = compute_fraction;
  model.memory_bytes_per_s_ = gpu.memory_bandwidth_gb_per_s() * kBytesPerGigabyte * memory_fraction;
  return model;
}

Picoseconds ComputeModel::matmul(int64_t m, int64_t n, int64_t k, int64_t batch,
                                 bool sixteen_bit) const {
  return matmul(m, n, k, batch, sixteen_bit ? GemmFormat::kSixteenBit : GemmFormat::kJob);
}

Picoseconds ComputeModel::matmul(int64_t m, int64_t n, int64_t k, int64_t batch,
                                 GemmFormat format) const {
  CLUSTERSIM_CHECK(format != GemmFormat::kMxfp8 || mxfp8_.peak_flops > 0,
                   "an MXFP8 GEMM outside an FP4 step");
  if (format == GemmFormat::kTf32) {
    CLUSTERSIM_CHECK(tf32_peak_ > 0, "a TF32 GEMM on a GPU without a TF32 or FP32 peak");
    Gemm tf32 = sixteen_bit_;
    tf32.peak_flops = tf32_peak_;
    return gemm_time(tf32, m, n, k, static_cast<double>(batch), bytes_per_element(s::FP32), kTile);
  }
  const Gemm& g = format == GemmFormat::kSixteenBit ? sixteen_bit_
                  : format == GemmFormat::kMxfp8    ? mxfp8_
                                                    : gemm_;
  return gemm_time(g, m, n, k, static_cast<double>(batch), g.input_bytes, kTile);
}

Picoseconds ComputeModel::matmul(int64_t m, int64_t n, int64_t k, double batch,
                                 double b_bytes_per_element, int64_t row_tile) const {
  return gemm_time(gemm_, m, n, k, batch, b_bytes_per_element, row_tile);
}

Picoseconds ComputeModel::gemm_time(const Gemm& g, int64_t m, int64_t n, int64_t k, double batch,
                                    double b_bytes_per_element, int64_t row_tile) const {
  const double flops =
      batch * 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const double output_bytes = batch * 2.0 * static_cast<double>(m) * n;
  const double bytes = batch * (g.input_bytes * static_cast<double>(m) * k +
                                b_bytes_per_element * static_cast<double>(k) * n) +
                       output_bytes;
  const double output_write_s = g.serial_output_write ? output_bytes / memory_bytes_per_s_ : 0;
  const double compute_s =
      flops / (g.peak_flops * g.fraction * tile_use(m, row_tile) * tile_use(n, kTile)) +
      output_write_s;
  const double memory_s = bytes / memory_bytes_per_s_;
  return Picoseconds::from_seconds(std::max(compute_s, memory_s)) + g.overhead;
}

Picoseconds ComputeModel::fused_attention(double flops) const {
  return Picoseconds::from_seconds(flops / attention_flops_);
}

const s::AttentionEfficiency* ComputeModel::fitted_attention_entry(
    s::AttentionEfficiency::Pass pass, const AttentionKernel& kernel,
    s::Precision precision) const {
  const s::AttentionEfficiency* best = nullptr;
  for (const s::AttentionEfficiency& e : gpu_->attention_efficiency()) {
    if (e.pass() != pass || e.causal() != kernel.causal || e.precision() != precision ||
        e.library() != kernel.library) {
      continue;
    }
    const auto distance = [&](const s::AttentionEfficiency& x) {
      return std::abs(x.head_dim() - kernel.head_dim) * 2 + (x.head_dim() > kernel.head_dim);
    };
    if (best == nullptr || distance(e) < distance(*best)) best = &e;
  }
  return best;
}

double ComputeModel::fitted_attention_rate(s::AttentionEfficiency::Pass pass,
                                           const AttentionKernel& kernel) const {
  const s::AttentionEfficiency* fp8 =
      kernel.fp8 && fp8_peak_ > 0 ? fitted_attention_entry(pass, kernel, s::FP8) : nullptr;
  const s::AttentionEfficiency* best =
      fp8 ? fp8 : fitted_attention_entry(pass, kernel, s::PRECISION_UNSPECIFIED);
  if (best == nullptr) return 0;
  const auto keys = static_cast<double>(kernel.keys);
  const double sustained = training_step_ && best->has_sustained_fraction()
                               ? best->sustained_fraction() * power_limit_
                               : fp8 ? sustained_ : sixteen_bit_sustained_;
  return (fp8 ? fp8_peak_ : sixteen_bit_peak_) * best->max_fraction() * sustained * keys /
         (keys + best->half_rate_keys()) *
         attention_schedule_scale(kernel, gpu_->streaming_multiprocessors());
}

double ComputeModel::dropout_fraction(s::AttentionEfficiency::Pass pass,
                                      const AttentionKernel& kernel) const {
  // Measured on the GPU's default kernels only: another library's are charged nothing.
  if (!kernel.dropout || kernel.library != s::ATTENTION_LIBRARY_UNSPECIFIED ||
      !gpu_->has_attention_dropout()) {
    return 1;
  }
  const s::AttentionDropout& d = gpu_->attention_dropout();
  return pass == s::AttentionEfficiency::FORWARD ? d.forward_fraction() : d.backward_fraction();
}

Picoseconds ComputeModel::attention_forward(const AttentionKernel& kernel) const {
  const double flops = kernel.forward_flops() /
                       dropout_fraction(s::AttentionEfficiency::FORWARD, kernel) /
                       attention_tile_use(kernel, *gpu_);
  const double rate = fitted_attention_rate(s::AttentionEfficiency::FORWARD, kernel);
  if (rate <= 0) return fused_attention(flops);
  return Picoseconds::from_seconds(flops / rate);
}

Picoseconds ComputeModel::prompt_attention(double flops, double flops_per_key, int head_dim) const {
  AttentionKernel kernel;
  kernel.causal = true;
  kernel.head_dim = head_dim;
  const s::AttentionEfficiency* e =
      fitted_attention_entry(s::AttentionEfficiency::FORWARD, kernel, s::PRECISION_UNSPECIFIED);
  if (e == nullptr) return fused_attention(flops);
  const double rate =
      sixteen_bit_peak_ * e->max_fraction() * sixteen_bit_sustained_ * serving_attention_fraction_;
  return Picoseconds::from_seconds((flops + e->half_rate_keys() * flops_per_key) / rate);
}

Picoseconds ComputeModel::attention_backward(const AttentionKernel& kernel) const {
  const double flops = kernel.forward_flops() /
                       dropout_fraction(s::AttentionEfficiency::BACKWARD, kernel) /
                       attention_tile_use(kernel, *gpu_);
  const double rate = fitted_attention_rate(s::AttentionEfficiency::BACKWARD, kernel);
  if (rate <= 0) return fused_attention(2 * flops);
  return Picoseconds::from_seconds(kBackwardFlopsRatio * flops / rate);
}

Picoseconds ComputeModel::memory_bound(double bytes, double fp32_flops_per_byte) const {
  const double memory_s = bytes / memory_bytes_per_s_;
  if (fp32_flops_per_byte <= 0) return Picoseconds::from_seconds(memory_s);
  CLUSTERSIM_CHECK(fp32_flops_ > 0, "a kernel bound by FP32 work on a GPU without an FP32 peak");
  return Picoseconds::from_seconds(std::max(memory_s, bytes * fp32_flops_per_byte / fp32_flops_));
}

}  // namespace clustersim
