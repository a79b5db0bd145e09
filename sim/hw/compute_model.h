// Time of one GPU kernel from its FLOPs and bytes against the GPU's peaks and fitted efficiencies
// (catalog data, fitted on measured GEMMs, memory bandwidth and fused attention):
//   matmul (m x k) . (k x n):  max(FLOPs / (peak x max x tile use x sustained) + write,
//                                  bytes / (HBM x memory eff)) + overhead;
//                              tile use = m / (ceil(m/128) 128) x likewise for n;
//                              write = 2 m n / (HBM x memory eff) where the GPU's kernels write
//                              each output tile after its main loop (serial_output_write:
//                              Ampere, Hopper), else 0. It is the fixed cost per output tile
//                              that the inner dimension amortises: efficiency K / (K + K0),
//                              K0 = the FLOP rate / the byte rate (A100 16-bit about 150,
//                              H100 FP8 about 480, H200 FP8 about 340, BF16 half the FP8's)
//   fused attention:           FLOPs / (16-bit peak x rate(pass, mask, head dim, keys) x sustained
//                              x schedule) (gpu.proto AttentionEfficiency of the job's kernel
//                              library; schedule: its thread blocks on the SMs against the
//                              fitted benchmark's, sim/hw/attention_schedule.h; else the flat
//                              flash fraction); with dropout in the kernel, x the GPU's
//                              AttentionDropout fraction of the pass where it has one; x the
//                              tile use of a kernel whose tiles hold one query's heads
//                              (AttentionKernel::tile_rows);
//                              FP8 inputs: the FP8 peak x the FP8 entries' rate where fitted
//   memory-bound kernels:      max(bytes / (HBM x memory eff), bytes x w / FP32 peak), w the
//                              kernel's non-tensor work per byte (0 for most: HBM-bound)
// `sustained` is 1 for kernels benchmarked alone and, inside a training step, the sustained
// compute fraction of the job's precision (sim/hw/sustained_fraction.h: fitted on published
// training runs, or carried over from a GPU where it is; else the runtime's default); a fused
// attention entry with its own sustained_fraction takes that one in a training step instead.
// Every sustained fraction is x the GPU's power-limit throughput fraction where it has one
// (gpu.proto PowerLimit: fractions fitted at a higher limit).
// A model for FP8 (or FP4) also times 16-bit GEMMs: the layers Transformer Engine leaves in BF16
// (the output layer) run at the 16-bit rate, inside the same step; in an FP4 step they and the
// fused attention take the FP8 steps' sustained fraction (sim/hw/sustained_fraction.h).
// Immutable; cheap to copy; safe to share between threads.
#pragma once

#include <cstdint>
#include <string>

#include "sim/io/schema/gpu.pb.h"
#include "sim/io/schema/job.pb.h"
#include "sim/io/schema/runtime.pb.h"
#include "sim/util/units.h"

namespace clustersim {

// The GPU's dense peak for matmul inputs of `precision` (TFLOP/s, or TOPS for INT8); 0 when it has
// no tensor-core support for it (or it is INT4 / unspecified).
double peak_tflops(const schema::PeakTflops& peak, schema::Precision precision);

// The 16-bit format the GPU's tensor cores run: BF16 where it has a BF16 peak, else FP16.
schema::Precision sixteen_bit_format(const schema::Gpu& gpu);

// Where the kernels run: alone, as the calibration benchmarks ran them, or inside a training step.
enum class KernelSetting { kIsolated, kTrainingStep };

// One fused attention kernel: `batch_heads` independent (batch, head) problems, each of `queries`
// queries attending to `keys` keys (causal: bottom-right aligned, a query sees the keys up to its
// own position), head dimension `head_dim`.
struct AttentionKernel {
  int64_t batch_heads = 1;
  int64_t queries = 0;
  int64_t keys = 0;
  int head_dim = 0;
  bool causal = false;
  // FP8 inputs (job.fp8_attention): the GPU's FP8 entries of its pass and mask, else the 16-bit.
  bool fp8 = false;
  // The kernels' library (job.attention_library): the GPU's entries of that library only.
  schema::AttentionLibrary library = schema::ATTENTION_LIBRARY_UNSPECIFIED;
  // Attention-probability dropout inside the kernels (a training step of a model with dropout):
  // each pass at the GPU's attention_dropout fraction of its rate, where it has one.
  bool dropout = false;
  // Rows of the kernel's tiles where queries cannot share one: each query attends to its own key
  // list (compressed sparse attention's gathered keys), so a tile holds that query's heads. The
  // rate is x rows / (ceil(rows / T) T), T 64 on Hopper, else kTile (compute_model.cpp); 0: full.
  int64_t tile_rows = 0;

  // Query-key pairs attended per (batch, head): queries x keys, or for a causal mask
  // queries (keys - queries + 1) + queries (queries - 1) / 2 (half the square plus its diagonal
  // when queries == keys).
  double pairs() const;
  // Forward FLOPs: 2 matmuls of 2 FLOPs per multiply-add: 4 x pairs x head_dim x batch_heads.
  double forward_flops() const { return 4.0 * pairs() * head_dim * static_cast<double>(batch_heads); }
};

// Which of a step's GEMM rates a matmul takes: the job's precision's, the 16-bit one, MXFP8's
// inside an FP4 step (job.fp4_overrides.mxfp8_modules), or TF32's (an FP32 parameter's GEMM on
// TF32 tensor cores fed 16-bit activations: ComputeModel::matmul).
enum class GemmFormat { kJob, kSixteenBit, kMxfp8, kTf32 };

class ComputeModel {
 public:
  // `runtime` supplies the efficiencies `gpu` has no fitted value for; in a training step at FP8,
  // `fp8_recipe` MXFP8 takes the FP8 mxfp8_sustained_fraction where one is fitted.
  // Requires: `gpu` has a peak for `precision` (the scenario checks guarantee it); `gpu` outlives
  // the model (its attention efficiencies are read from it).
  ComputeModel(const schema::Gpu& gpu, schema::Precision precision, const schema::Runtime& runtime,
               KernelSetting setting,
               schema::Fp8Recipe fp8_recipe = schema::FP8_RECIPE_UNSPECIFIED);

  // Kernels of a serving iteration: the isolated rates with the tensor-core rates (matmul and
  // fused attention) x `compute_fraction` and memory traffic at HBM x `memory_fraction` (the
  // serving runtime's fit for this GPU) instead of the STREAM fraction; FP8 matmuls at
  // `fp8_matmul_fraction` of the FP8 peak instead when it is > 0.
  // Requires: both fractions in (0, 1], fp8_matmul_fraction <= 1; as the constructor.
  static ComputeModel serving(const schema::Gpu& gpu, schema::Precision precision,
                              const schema::Runtime& runtime, double compute_fraction,
                              double memory_fraction, double fp8_matmul_fraction = 0);

  // `batch` independent matrix multiplications of (m x k) by (k x n) in one kernel (torch.bmm:
  // one launch overhead), inputs of the model's precision (16-bit when `sixteen_bit`) and a
  // 16-bit output.
  Picoseconds matmul(int64_t m, int64_t n, int64_t k, int64_t batch = 1,
                     bool sixteen_bit = false) const;
  // The same at the rate of `format`. Under precision FP4, kMxfp8 runs the GPU's FP8 GEMM
  // efficiency with the sustained fraction of its MXFP8 steps (the FP8 mxfp8_sustained_fraction,
  // else its FP8 one), as the step's 16-bit GEMMs take its per-tensor FP8 steps' fraction.
  // kTf32: the 16-bit GEMM's efficiency (and sustained fraction) at the catalog's TF32 peak
  // (peak_tflops.tf32; the FP32 peak on a GPU without one: cuBLAS's FP32 path), its (m x k)
  // operand read in 16 bits (the kernel converts the activations in registers) and the (k x n)
  // FP32 parameter in 4 bytes.
  // Requires: kMxfp8 only under precision FP4 on a GPU with an FP8 peak; kTf32 on a GPU with a
  // TF32 or FP32 peak.
  Picoseconds matmul(int64_t m, int64_t n, int64_t k, int64_t batch, GemmFormat format) const;
  // The same in the model's precision with the (k x n) operand stored in `b_bytes_per_element`
  // (weight-only quantized weights, dequantized in the kernel), `batch` fractional (an average
  // of routed experts) and the m rows in tiles of `row_tile` (a kernel with smaller tiles).
  Picoseconds matmul(int64_t m, int64_t n, int64_t k, double batch, double b_bytes_per_element,
                     int64_t row_tile = kTile) const;
  // The rows and columns of a GEMM's output tile (the compute time counts whole tiles).
  static constexpr int64_t kTile = 128;
  // A fused (flash) attention kernel doing `flops` at the flat fused-attention rate.
  Picoseconds fused_attention(double flops) const;
  // The forward and the backward of a fused attention kernel, at the fitted rate of its pass and
  // mask (the flat rate, backward at twice the forward's FLOPs, where none is fitted), x the
  // GPU's dropout fraction of the pass for a kernel with dropout.
  Picoseconds attention_forward(const AttentionKernel& kernel) const;
  Picoseconds attention_backward(const AttentionKernel& kernel) const;
  // The causal 16-bit forward of an iteration's prompt chunks in one launch (a serving runtime's
  // context kernel over every prompt of its batch): `flops` their forward FLOPs, `flops_per_key`
  // the sum over chunks of a chunk's FLOPs over its keys S (the keys its last query sees). Each
  // chunk runs at the fitted causal forward rate for `head_dim` at its S,
  // peak x max_fraction x S / (S + half_rate_keys), so together
  //   (flops + half_rate_keys x flops_per_key) / (peak x max_fraction)
  // (x the serving compute fraction; the occupancy the fitted benchmark's: the launch holds the
  // iteration's prompts together). Without a fitted entry: fused_attention(flops).
  Picoseconds prompt_attention(double flops, double flops_per_key, int head_dim) const;
  // A kernel limited by memory traffic: elementwise ops, norms, softmax, optimizer steps; or, when
  // it issues `fp32_flops_per_byte` > 0 of non-tensor work per byte moved, by the SMs' FP32 rate
  // where that is the slower (the peak, not scaled by the sustained fraction, which is the tensor
  // cores'). Requires: the GPU has an FP32 peak when fp32_flops_per_byte > 0.
  Picoseconds memory_bound(double bytes, double fp32_flops_per_byte = 0) const;

  // Whether every efficiency used was fitted for this GPU (false: runtime defaults were used).
  bool calibrated() const { return calibrated_; }
  double peak_flops() const { return peak_flops_; }
  schema::Precision precision() const { return precision_; }
  const schema::Gpu& gpu() const { return *gpu_; }
  // Whether its FP8 GEMMs take either operand transposed (gpu.proto fp8_gemm_any_layout).
  bool fp8_gemm_any_layout() const { return gpu_->fp8_gemm_any_layout(); }

 private:
  struct Gemm {  // one precision's GEMM parameters
    double peak_flops = 0;  // FLOP/s
    double fraction = 0;    // of peak, with the sustained fraction in a training step
    Picoseconds overhead;
    double input_bytes = 2;  // per element
    bool serial_output_write = false;  // MatmulEfficiency.serial_output_write
  };
  Gemm gemm_for(const schema::Gpu& gpu, schema::Precision precision,
                const schema::Runtime& runtime);
  Picoseconds gemm_time(const Gemm& g, int64_t m, int64_t n, int64_t k, double batch,
                        double b_bytes_per_element, int64_t row_tile) const;
  // The fitted rate in FLOP/s of `pass` for `kernel` among the entries of its library (an FP8
  // kernel: of the FP8 entries where its pass and mask have one, else of the 16-bit); 0 when none
  // is fitted for its library and mask.
  double fitted_attention_rate(schema::AttentionEfficiency::Pass pass,
                               const AttentionKernel& kernel) const;
  // The share of its rate without dropout at which `kernel`'s `pass` runs: the GPU's
  // AttentionDropout fraction for a kernel of its default library with dropout, else 1.
  double dropout_fraction(schema::AttentionEfficiency::Pass pass,
                          const AttentionKernel& kernel) const;
  // The entry of `pass` for `kernel`'s library and mask with the nearest head dimension (of two
  // as near, the smaller) among those of `precision` (FP8, or unspecified for 16 bits); null when
  // none.
  const schema::AttentionEfficiency* fitted_attention_entry(schema::AttentionEfficiency::Pass pass,
                                                            const AttentionKernel& kernel,
                                                            schema::Precision precision) const;

  schema::Precision precision_;
  double peak_flops_ = 0;  // of the precision, FLOP/s
  Gemm gemm_;              // the job's precision
  Gemm sixteen_bit_;       // BF16 (FP16 where the GPU lacks BF16)
  Gemm mxfp8_;             // under precision FP4: MXFP8 (GemmFormat::kMxfp8); else unset
  double attention_flops_ = 0;     // achieved flat fused-attention FLOP/s
  double serving_attention_fraction_ = 1;  // serving's compute_fraction on the fitted rates
  double sixteen_bit_peak_ = 0;    // FLOP/s
  double fp8_peak_ = 0;            // FLOP/s; 0 without FP8 tensor cores
  double tf32_peak_ = 0;           // FLOP/s of GemmFormat::kTf32 (TF32, else FP32); 0 if neither
  double sustained_ = 1;           // applied to tensor-core rates
  double sixteen_bit_sustained_ = 1;  // applied to 16-bit GEMM and attention rates
  double power_limit_ = 1;  // in a training step, gpu.proto PowerLimit's step throughput fraction
  bool training_step_ = false;        // kernels inside a training step (KernelSetting)
  double memory_bytes_per_s_ = 0;  // achieved
  double fp32_flops_ = 0;          // non-tensor FP32 peak, FLOP/s; 0 where the catalog has none
  const schema::Gpu* gpu_ = nullptr;  // for its attention efficiencies and FP8 GEMM layouts, and
                                      // to callers
  bool calibrated_ = true;
};

}  // namespace clustersim
