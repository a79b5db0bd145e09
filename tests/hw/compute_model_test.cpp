// The compute model against the calibration GEMMs it was fitted on (validation/gemm.csv), and its
// roofline behaviour.
#include "sim/hw/compute_model.h"

#include <algorithm>

#include <catch2/catch.hpp>

#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

namespace s = schema;

ComputeModel model(const std::string& gpu, s::Precision precision,
                   KernelSetting setting = KernelSetting::kIsolated) {
  const Catalog& c = testing::shipped_catalog();
  return ComputeModel(*c.gpus().find(gpu)->value, precision, *c.runtimes().find("default")->value,
                      setting);
}

double sustained_fraction(const std::string& gpu) {
  return testing::shipped_catalog().gpus().find(gpu)->value->sustained_compute_fraction();
}

double achieved_tflops(const ComputeModel& m, int64_t a, int64_t b, int64_t c) {
  return 2.0 * a * b * c / m.matmul(a, b, c).seconds() / 1e12;
}

TEST_CASE("large square GEMMs come within 10% of the measured cuBLASLt rates") {
  // Azure AI benchmarking guide (gemm.csv): A100 fp16 8192^3 253.7, 16384^3 256.5 TFLOP/s;
  // H100 fp8 8192^3 1290.1, 16384^3 1377.3; H200 fp8 8192^3 1300.6, 16384^3 1366.3.
  const auto a100 = model("A100-SXM4-80GB", s::FP16);
  const auto h100 = model("H100-SXM5-80GB", s::FP8);
  const auto h200 = model("H200-SXM-141GB", s::FP8);
  CHECK(achieved_tflops(a100, 8192, 8192, 8192) == Approx(253.7).epsilon(0.10));
  CHECK(achieved_tflops(a100, 16384, 16384, 16384) == Approx(256.5).epsilon(0.10));
  CHECK(achieved_tflops(h100, 8192, 8192, 8192) == Approx(1290.1).epsilon(0.10));
  CHECK(achieved_tflops(h100, 16384, 16384, 16384) == Approx(1377.3).epsilon(0.10));
  CHECK(achieved_tflops(h200, 8192, 8192, 8192) == Approx(1300.6).epsilon(0.10));
  CHECK(achieved_tflops(h200, 16384, 16384, 16384) == Approx(1366.3).epsilon(0.10));
}

TEST_CASE("Blackwell GEMMs reproduce the MAMF rates they were fitted on, at their shapes") {
  // kernels.csv (ml-engineering MAMF, best-shape torch.matmul): each fitted to within rounding
  // of max_fraction (3 digits) with the 6.4 us overhead (gpus.textproto).
  struct Row {
    const char* gpu;
    s::Precision precision;
    int64_t m, n, k;
    double tflops;
  };
  for (const Row& r : {Row{"B200-SXM-180GB", s::BF16, 1792, 16128, 3072, 1745.0},
                       Row{"B200-SXM-180GB", s::FP8, 15360, 4096, 3072, 3432.5},
                       Row{"B300-SXM-268GB", s::BF16, 12288, 18432, 1024, 1769.0},
                       Row{"B300-SXM-268GB", s::FP8, 3072, 6144, 7168, 3353.3},
                       Row{"GB200-186GB", s::BF16, 4096, 9728, 2048, 1822.0},
                       Row{"GB200-186GB", s::FP8, 19456, 5120, 1536, 3615.6}}) {
    INFO(r.gpu << " " << s::Precision_Name(r.precision));
    const auto m = model(r.gpu, r.precision);
    CHECK(achieved_tflops(m, r.m, r.n, r.k) == Approx(r.tflops).epsilon(0.002));
  }
}

TEST_CASE("the GB200's isolated GEMMs outrun the B200's as their one die's measurements allow") {
  // The same B200 die, the GB200's at 1200 W against 1000 W. At a training-sized GEMM (Llama 3
  // 8B's MLP up-projection at micro-batch 2 x 8192 tokens) the GB200's isolated rate is at least
  // its best-shape MAMF rate's lead (kernels.csv: FP8 3615.6 / 3432.5 = 1.053, BF16 1822.0 /
  // 1745.0 = 1.044; the fits differ at this shape only by the 6.4 us overhead's share of each MAMF
  // shape, so 0.5 points of slack) and at most its spec peaks' lead (5000 / 4500, 2500 / 2250 =
  // 1.111: the clocks its power limit buys, accelerators_2025.csv).
  struct Row {
    s::Precision precision;
    double mamf_ratio;
  };
  for (const Row& r : {Row{s::FP8, 3615.6 / 3432.5}, Row{s::BF16, 1822.0 / 1745.0}}) {
    INFO(s::Precision_Name(r.precision));
    const double ratio = achieved_tflops(model("GB200-186GB", r.precision), 16384, 14336, 4096) /
                         achieved_tflops(model("B200-SXM-180GB", r.precision), 16384, 14336, 4096);
    CHECK(ratio >= r.mamf_ratio - 0.005);
    CHECK(ratio <= 5000.0 / 4500.0);
  }
}

TEST_CASE("small GEMMs pay the fixed overhead: efficiency grows with size") {
  const auto a100 = model("A100-SXM4-80GB", s::BF16);
  double previous = 0;
  for (int64_t size : {256, 1024, 4096, 16384}) {
    const double tflops = achieved_tflops(a100, size, size, size);
    CHECK(tflops > previous);
    previous = tflops;
  }
  CHECK(previous < 312 * 0.808 + 1e-9);  // never above peak x max fraction
}

// Ampere and Hopper kernels write each output tile after its main loop (serial_output_write):
// a fixed time per tile that a short inner dimension K does not amortise. Compute-bound with
// whole tiles, the time less the launch overhead is 2mnk / (peak x max) + 2mn / (HBM x memory
// eff), an efficiency of max x K / (K + K0) with K0 = peak x max / (HBM x memory eff): on the
// H200 at FP8 1979e12 x 0.703 / (4800e9 x 0.865) = 335 (K = 512: 0.60 of max; 4096: 0.92).
TEST_CASE("a GEMM's output write follows its main loop: efficiency K / (K + K0)") {
  const auto h200 = model("H200-SXM-141GB", s::FP8);
  const double overhead_s = 5.4e-6, rate = 1979e12 * 0.703, bytes_per_s = 4800e9 * 0.865;
  const double k0 = rate / bytes_per_s;
  CHECK(k0 == Approx(335.1).epsilon(1e-3));
  for (int64_t k : {512, 1024, 4096}) {
    INFO("K = " << k);
    const double compute_s = h200.matmul(8192, 4096, k).seconds() - overhead_s;
    CHECK(compute_s == Approx(2.0 * 8192 * 4096 * k / rate + 2.0 * 8192 * 4096 / bytes_per_s)
                           .epsilon(1e-6));  // to the picosecond clock
    CHECK(2.0 * 8192 * 4096 * k / compute_s / rate == Approx(k / (k + k0)).epsilon(1e-6));
  }
  // At 16 bits the tensor cores run at half the FP8 rate against the same write: K0 halves (BF16
  // max 0.769), so a short K costs BF16 less than FP8.
  const auto bf16 = model("H200-SXM-141GB", s::BF16);
  const double bf16_rate = 989e12 * 0.769;
  const double bf16_compute_s = bf16.matmul(8192, 4096, 512).seconds() - overhead_s;
  CHECK(2.0 * 8192 * 4096 * 512 / bf16_compute_s / bf16_rate ==
        Approx(512 / (512 + bf16_rate / bytes_per_s)).epsilon(1e-6));
  // Blackwell's fits leave the write overlapped (their MAMF shapes would need a max above 1):
  // compute-bound, the time less the overhead is the FLOPs at peak x max alone.
  const auto b200 = model("B200-SXM-180GB", s::FP8);
  CHECK((b200.matmul(8192, 4096, 4096) - Picoseconds::from_microseconds(6.4)).seconds() ==
        Approx(2.0 * 8192 * 4096 * 4096 / (4500e12 * 0.809)).epsilon(1e-6));
}

TEST_CASE("a longer inner dimension never lowers a GEMM's efficiency") {
  for (const auto& [gpu, precision] :
       {std::pair{"A100-SXM4-80GB", s::FP16}, std::pair{"H100-SXM5-80GB", s::FP8},
        std::pair{"H200-SXM-141GB", s::BF16}, std::pair{"B200-SXM-180GB", s::FP8},
        std::pair{"L4-PCIE-24GB", s::BF16}}) {
    INFO(gpu << " " << s::Precision_Name(precision));
    const auto m = model(gpu, precision);
    for (const auto& [rows, columns] : {std::pair<int64_t, int64_t>{8192, 768},
                                        std::pair<int64_t, int64_t>{64, 7168},
                                        std::pair<int64_t, int64_t>{802816, 192}}) {
      double previous = 0;
      for (int64_t k = 16; k <= 65536; k += k / 2) {
        const double tflops = achieved_tflops(m, rows, columns, k);
        CHECK(tflops >= previous);
        previous = tflops;
      }
    }
  }
}

TEST_CASE("a ragged dimension wastes part of its last tile") {
  const auto h100 = model("H100-SXM5-80GB", s::BF16);
  // n = 1025 needs nine 128-wide tiles: its tensor-core time is n = 1152's (both compute-bound);
  // only the write of the 127 columns n = 1152 has more tells them apart.
  CHECK((h100.matmul(8192, 1152, 8192) - h100.matmul(8192, 1025, 8192)).seconds() ==
        Approx(2.0 * 8192 * 127 / (3350e9 * 0.887)).epsilon(1e-4));
  CHECK(h100.matmul(8192, 1024, 8192) < h100.matmul(8192, 1025, 8192));
}

// A kernel with tiles of fewer rows pads m less: 200 rows fill two 128-row tiles (256) but seven
// 32-row ones (224); compute-bound (A100 FP16, n = k = 16384), the times less the launch
// overhead (9.2 us) and the output's write (2 x 200 x 16384 bytes at 2000 GB/s x 0.85) stand as
// 256 to 224.
TEST_CASE("a GEMM's rows fill tiles of the kernel's row tile") {
  const auto a100 = model("A100-SXM4-80GB", s::FP16);
  const double overhead_s = 9.2e-6 + 2.0 * 200 * 16384 / (2000e9 * 0.85);
  const double wide = a100.matmul(200, 16384, 16384, 1.0, 2.0).seconds() - overhead_s;
  const double narrow = a100.matmul(200, 16384, 16384, 1.0, 2.0, 32).seconds() - overhead_s;
  CHECK(wide / narrow == Approx(256.0 / 224.0).epsilon(1e-6));
  CHECK(a100.matmul(256, 16384, 16384, 1.0, 2.0, 32) == a100.matmul(256, 16384, 16384));
}

TEST_CASE("a batched matmul is one kernel: one launch overhead for all its problems") {
  // Megatron-LM's unfused attention scores are one torch.baddbmm over heads x micro-batch.
  const auto a100 = model("A100-SXM4-80GB", s::FP16);
  const Picoseconds overhead = Picoseconds::from_microseconds(9.2);
  const Picoseconds one = a100.matmul(2048, 2048, 128);
  const Picoseconds batched = a100.matmul(2048, 2048, 128, 24);
  CHECK((batched - overhead).seconds() == Approx(24 * (one - overhead).seconds()));
  CHECK(batched < Picoseconds(24 * one.count()));
}

TEST_CASE("memory-bound kernels run at the fitted share of HBM bandwidth") {
  // H100: 3350 GB/s x 0.887 (STREAM triad 2.97 TB/s).
  const auto h100 = model("H100-SXM5-80GB", s::BF16);
  CHECK(h100.memory_bound(2.97e9).seconds() == Approx(2.97e9 / (3350e9 * 0.887)));
  // The Grand Teton part (96 GB HBM2e, 2.4 TB/s): the same bytes 3350 / 2400 = 1.40x slower, its
  // tensor peak (the same die) the same.
  const auto grand_teton = model("H100-SXM5-96GB", s::BF16);
  CHECK(grand_teton.memory_bound(2.97e9).seconds() == Approx(2.97e9 / (2400e9 * 0.887)));
  CHECK(grand_teton.peak_flops() == h100.peak_flops());
}

// A GPU run below the power limit its sustained fractions were fitted at (gpu.proto PowerLimit):
// in a training step every tensor-core rate x its measured step throughput fraction; kernels
// benchmarked alone and memory-bound ones unchanged.
TEST_CASE("a power limit scales a training step's tensor-core rates, not isolated kernels") {
  const Catalog& c = testing::shipped_catalog();
  const s::Runtime& runtime = *c.runtimes().find("default")->value;
  s::Gpu limited = *c.gpus().find("H100-SXM5-80GB")->value;
  const s::Gpu full = limited;
  limited.mutable_power_limit()->set_step_throughput_fraction(0.5);
  const auto step = [&](const s::Gpu& g, s::Precision p) {
    return ComputeModel(g, p, runtime, KernelSetting::kTrainingStep);
  };
  for (const s::AttentionLibrary library :
       {s::ATTENTION_LIBRARY_UNSPECIFIED, s::FLASH_ATTENTION_2}) {
    AttentionKernel k{32, 8192, 8192, 128, true};
    k.library = library;
    CHECK(step(limited, s::BF16).attention_forward(k).seconds() ==
          Approx(2 * step(full, s::BF16).attention_forward(k).seconds()));
    CHECK(step(limited, s::FP8).attention_backward(k).seconds() ==
          Approx(2 * step(full, s::FP8).attention_backward(k).seconds()));
  }
  // A GEMM: its compute at half the rate, its launch overhead and output write unchanged.
  const double gemm_full = step(full, s::FP8).matmul(8192, 8192, 8192).seconds();
  const double gemm_limited = step(limited, s::FP8).matmul(8192, 8192, 8192).seconds();
  CHECK(gemm_limited > 1.9 * gemm_full);
  CHECK(gemm_limited < 2 * gemm_full);
  CHECK(step(limited, s::BF16).memory_bound(1e9) == step(full, s::BF16).memory_bound(1e9));
  CHECK(ComputeModel(limited, s::FP8, runtime, KernelSetting::kIsolated).matmul(8192, 8192, 8192) ==
        ComputeModel(full, s::FP8, runtime, KernelSetting::kIsolated).matmul(8192, 8192, 8192));
  // The Grand Teton part: the H100 SXM's fractions x 27,705.3 / 30,271.0 tokens/s (500 W / 700 W).
  const AttentionKernel k{32, 8192, 8192, 128, true};
  CHECK(model("H100-SXM5-96GB", s::BF16, KernelSetting::kTrainingStep)
            .attention_forward(k)
            .seconds() ==
        Approx(model("H100-SXM5-80GB", s::BF16, KernelSetting::kTrainingStep)
                   .attention_forward(k)
                   .seconds() /
               0.915));
}

TEST_CASE("a kernel issuing CUDA-core work per byte runs at the slower of HBM and the FP32 peak") {
  // 35 FP32 FLOP-equivalents a byte: an H100 (67 TFLOP/s) moves 1.91 TB/s, under its 2.97 TB/s of
  // HBM; a B200 (80 TFLOP/s) 2.29 TB/s where its HBM gives 8 TB/s x the runtime's default share.
  const auto h100 = model("H100-SXM5-80GB", s::FP8, KernelSetting::kTrainingStep);
  const auto b200 = model("B200-SXM-180GB", s::FP8, KernelSetting::kTrainingStep);
  CHECK(h100.memory_bound(1e9, 35).seconds() == Approx(1e9 * 35 / 67e12));
  CHECK(b200.memory_bound(1e9, 35).seconds() == Approx(1e9 * 35 / 80e12));
  // The same bytes HBM-bound on both: the B200 2.4x faster than the H100 there, 1.19x here.
  CHECK(h100.memory_bound(1e9).seconds() / b200.memory_bound(1e9).seconds() > 2.3);
  CHECK(h100.memory_bound(1e9, 35).seconds() / b200.memory_bound(1e9, 35).seconds() ==
        Approx(80.0 / 67));
  // Little work a byte leaves the kernel HBM-bound.
  CHECK(b200.memory_bound(1e9, 1) == b200.memory_bound(1e9));
}

TEST_CASE("in a training step only tensor-core work runs at the sustained fraction") {
  const double sustained = sustained_fraction("H100-SXM5-80GB");
  REQUIRE(sustained > 0);
  REQUIRE(sustained < 1);
  const auto alone = model("H100-SXM5-80GB", s::BF16);
  const auto in_step = model("H100-SXM5-80GB", s::BF16, KernelSetting::kTrainingStep);
  // A compute-bound GEMM: its tensor-core part stretches by 1 / sustained, its launch overhead
  // and its output's write to HBM (2 x 8192^2 bytes at 3350 GB/s x 0.887) not.
  const double fixed_s = 5.4e-6 + 2.0 * 8192 * 8192 / (3350e9 * 0.887);
  CHECK(in_step.matmul(8192, 8192, 8192).seconds() - fixed_s ==
        Approx((alone.matmul(8192, 8192, 8192).seconds() - fixed_s) / sustained).epsilon(1e-6));
  CHECK(in_step.fused_attention(1e12).seconds() ==
        Approx(alone.fused_attention(1e12).seconds() / sustained).epsilon(1e-9));
  // Bandwidth-bound work is not scaled: a rank-1 update (k = 1: its write, its FLOPs 0.3% of it)
  // and a memory-bound kernel.
  CHECK(in_step.matmul(65536, 65536, 1).seconds() ==
        Approx(alone.matmul(65536, 65536, 1).seconds()).epsilon(0.01));
  CHECK(in_step.memory_bound(1e9) == alone.memory_bound(1e9));
  CHECK(in_step.calibrated());
}

TEST_CASE("MXFP8 steps run the FP8 GEMMs at their own sustained fraction") {
  const Catalog& c = testing::shipped_catalog();
  const s::Gpu& gb300 = *c.gpus().find("GB300-268GB")->value;
  const s::Runtime& runtime = *c.runtimes().find("default")->value;
  double per_tensor = 0, mxfp8 = 0;
  for (const s::MatmulEfficiency& e : gb300.matmul_efficiency()) {
    if (e.precision() != s::FP8) continue;
    per_tensor = e.sustained_fraction();
    mxfp8 = e.mxfp8_sustained_fraction();
  }
  REQUIRE(mxfp8 > 0);
  const ComputeModel tensorwise(gb300, s::FP8, runtime, KernelSetting::kTrainingStep,
                                s::CURRENT_SCALING);
  const ComputeModel block(gb300, s::FP8, runtime, KernelSetting::kTrainingStep, s::MXFP8);
  const ComputeModel alone(gb300, s::FP8, runtime, KernelSetting::kIsolated, s::MXFP8);
  const Picoseconds overhead = Picoseconds::from_microseconds(6.4);
  // A compute-bound GEMM stretches by the ratio of the two fractions (to the picosecond clock's
  // rounding of each time, ~3e-9 of this one); alone, the recipe is moot.
  CHECK((block.matmul(8192, 8192, 8192) - overhead).seconds() ==
        Approx((tensorwise.matmul(8192, 8192, 8192) - overhead).seconds() * per_tensor / mxfp8)
            .epsilon(1e-8));
  CHECK(alone.matmul(8192, 8192, 8192) == model("GB300-268GB", s::FP8).matmul(8192, 8192, 8192));
  CHECK(block.calibrated() == tensorwise.calibrated());
}

TEST_CASE("an MXFP8 GEMM inside an NVFP4 step runs as in the GPU's MXFP8 steps") {
  // job.fp4_overrides.mxfp8_modules: the FP8 GEMM efficiency at the MXFP8 steps' sustained
  // fraction, the same kernel time as an MXFP8 step's; the step's own FP4 and 16-bit GEMMs
  // unchanged by it.
  const Catalog& c = testing::shipped_catalog();
  const s::Runtime& runtime = *c.runtimes().find("default")->value;
  for (const char* name : {"GB200-186GB", "GB300-268GB", "B200-SXM-180GB"}) {
    const s::Gpu& gpu = *c.gpus().find(name)->value;
    const ComputeModel fp4(gpu, s::FP4, runtime, KernelSetting::kTrainingStep);
    const ComputeModel mxfp8(gpu, s::FP8, runtime, KernelSetting::kTrainingStep, s::MXFP8);
    CHECK(fp4.matmul(8192, 4096, 8192, 1, GemmFormat::kMxfp8) == mxfp8.matmul(8192, 4096, 8192));
    CHECK(fp4.matmul(8192, 4096, 8192, 1, GemmFormat::kJob) == fp4.matmul(8192, 4096, 8192));
    CHECK(fp4.matmul(8192, 4096, 8192, 1, GemmFormat::kSixteenBit) ==
          fp4.matmul(8192, 4096, 8192, 1, true));
    // NVFP4 < MXFP8 < 16 bits for a compute-bound GEMM.
    CHECK(fp4.matmul(8192, 4096, 8192) < fp4.matmul(8192, 4096, 8192, 1, GemmFormat::kMxfp8));
    CHECK(fp4.matmul(8192, 4096, 8192, 1, GemmFormat::kMxfp8) <
          fp4.matmul(8192, 4096, 8192, 1, true));
  }
}

TEST_CASE("a TF32 GEMM: the 16-bit GEMM's efficiency at the TF32 peak") {
  // GB200: TF32 1250 against BF16 2500 TFLOP/s (gpus.textproto), its 16-bit GEMMs without a
  // serial output write: a compute-bound GEMM takes twice the 16-bit time past the 6.4 us launch.
  const Catalog& c = testing::shipped_catalog();
  const s::Runtime& runtime = *c.runtimes().find("default")->value;
  const s::Gpu& gb200 = *c.gpus().find("GB200-186GB")->value;
  const ComputeModel step(gb200, s::FP8, runtime, KernelSetting::kTrainingStep, s::MXFP8);
  const Picoseconds overhead = Picoseconds::from_microseconds(6.4);
  CHECK((step.matmul(8192, 8192, 8192, 1, GemmFormat::kTf32) - overhead).seconds() ==
        Approx(2 * (step.matmul(8192, 8192, 8192, 1, true) - overhead).seconds()).epsilon(1e-8));
  // V100 has no TF32 tensor cores: the FP32 peak (15.7 against 125 FP16).
  const ComputeModel v100 = model("V100-SXM2-32GB", s::FP16);
  CHECK(v100.matmul(8192, 8192, 8192, 1, GemmFormat::kTf32).seconds() >
        6 * v100.matmul(8192, 8192, 8192, 1, true).seconds());
}

TEST_CASE("a B300 step's GEMMs and attention run slower than the GB300's by peaks and servers") {
  // The same chip: the B300's kernels at 4500 / 5000 of the GB300's peaks (its GEMM fit 0.809
  // against the GB300's 0.782, its attention entries the same) and its sustained fractions the
  // GB300's x 0.553 / 0.627, the B200's and GB200's per-tensor FP8 fits (gpus.textproto). A
  // compute-bound FP8 GEMM's kernel time, less its launch overhead, stretches by
  //   (5000 x 0.782) / (4500 x 0.809) x 0.627 / 0.553 = 1.218,
  // a fused attention kernel by 5000 / 4500 x 0.627 / 0.553 = 1.260, in per-tensor FP8, MXFP8
  // and NVFP4 steps alike (the FP4 GEMMs' peaks 12600 against 15000).
  const Catalog& c = testing::shipped_catalog();
  const s::Runtime& runtime = *c.runtimes().find("default")->value;
  const auto fp8_fraction = [&](const char* name) {
    for (const s::MatmulEfficiency& e : c.gpus().find(name)->value->matmul_efficiency()) {
      if (e.precision() == s::FP8) return e.sustained_fraction();
    }
    return 0.0;
  };
  const double server = fp8_fraction("GB200-186GB") / fp8_fraction("B200-SXM-180GB");
  REQUIRE(server == Approx(0.627 / 0.553).epsilon(0.01));
  const Picoseconds overhead = Picoseconds::from_microseconds(6.4);
  const AttentionKernel kernel{32, 8192, 8192, 128, true};
  for (const auto& [precision, recipe] :
       {std::pair(s::FP8, s::CURRENT_SCALING), std::pair(s::FP8, s::MXFP8),
        std::pair(s::FP4, s::FP8_RECIPE_UNSPECIFIED)}) {
    CAPTURE(s::Precision_Name(precision), s::Fp8Recipe_Name(recipe));
    const ComputeModel b300(*c.gpus().find("B300-SXM-268GB")->value, precision, runtime,
                            KernelSetting::kTrainingStep, recipe);
    const ComputeModel gb300(*c.gpus().find("GB300-268GB")->value, precision, runtime,
                             KernelSetting::kTrainingStep, recipe);
    const double peaks = precision == s::FP4 ? 15000.0 / 12600 : 5000.0 / 4500;
    CHECK((b300.matmul(8192, 8192, 8192) - overhead).seconds() ==
          Approx((gb300.matmul(8192, 8192, 8192) - overhead).seconds() * peaks * 0.782 / 0.809 *
                 server)
              .epsilon(1e-6));
    CHECK(b300.attention_forward(kernel).seconds() ==
          Approx(gb300.attention_forward(kernel).seconds() * 5000.0 / 4500 * server).epsilon(1e-6));
    CHECK(b300.attention_backward(kernel).seconds() ==
          Approx(gb300.attention_backward(kernel).seconds() * 5000.0 / 4500 * server)
              .epsilon(1e-6));
  }
}

TEST_CASE("fused attention runs at the fitted cuDNN rates of the FlashAttention-3 paper") {
  // kernels.csv, cuDNN on H100 SXM5, 16-bit, head dim 128, batch x sequence = 16k tokens, 16
  // heads (hidden 2048), TFLOP/s as FlashAttention counts them (causal: half the square).
  const auto h100 = model("H100-SXM5-80GB", s::BF16);
  const auto tflops = [&](int64_t seq, bool causal, bool forward) {
    const AttentionKernel k{16 * 16384 / seq, seq, seq, 128, causal};
    const double counted = 4.0 * seq * seq * 128 * k.batch_heads / (causal ? 2 : 1);
    const Picoseconds t = forward ? h100.attention_forward(k) : h100.attention_backward(k);
    return (forward ? 1 : 2.5) * counted / t.seconds() / 1e12;
  };
  CHECK(tflops(512, true, true) == Approx(315).epsilon(0.05));    // forward, causal
  CHECK(tflops(8192, true, true) == Approx(529).epsilon(0.05));
  CHECK(tflops(2048, false, true) == Approx(617).epsilon(0.05));  // forward, no mask
  CHECK(tflops(16384, false, false) == Approx(516).epsilon(0.05));  // backward, no mask
  CHECK(tflops(1024, false, false) == Approx(408).epsilon(0.05));
  // Short sequences pay the per-tile cost: slower than long ones.
  CHECK(tflops(1024, true, true) < tflops(8192, true, true));
}

TEST_CASE("FlashAttention-2 runs at its own fitted rates, about 0.6 of cuDNN's") {
  // gpus.textproto: the H100's FLASH_ATTENTION_2 entries (tools/fit_attention_kernels.py --kernel
  // FlashAttention-2), e.g. the non-causal backward at head dimension 128: max_fraction 0.333 of
  // the 989 TFLOP/s peak, half_rate_keys 274, backward FLOPs 2.5x the forward's.
  const auto h100 = model("H100-SXM5-80GB", s::BF16);
  AttentionKernel fa2{8, 8192, 8192, 128, false};
  fa2.library = s::FLASH_ATTENTION_2;
  CHECK(h100.attention_backward(fa2).seconds() ==
        Approx(2.5 * fa2.forward_flops() / (989e12 * 0.333 * 8192 / (8192 + 274))).epsilon(1e-6));
  // kernels.csv, FlashAttention-2 on H100 SXM5, 16-bit, head dim 128, 16k tokens in a batch.
  const auto tflops = [&](int64_t seq, bool causal, bool forward) {
    AttentionKernel k{16 * 16384 / seq, seq, seq, 128, causal};
    k.library = s::FLASH_ATTENTION_2;
    const double counted = 4.0 * seq * seq * 128 * k.batch_heads / (causal ? 2 : 1);
    const Picoseconds t = forward ? h100.attention_forward(k) : h100.attention_backward(k);
    return (forward ? 1 : 2.5) * counted / t.seconds() / 1e12;
  };
  CHECK(tflops(16384, false, true) == Approx(370).epsilon(0.05));  // forward, no mask
  CHECK(tflops(4096, true, true) == Approx(319).epsilon(0.05));    // forward, causal
  CHECK(tflops(16384, false, false) == Approx(322).epsilon(0.05));  // backward, no mask
  // Against cuDNN's kernels (the default library) at long keys: 0.6 of their rate.
  for (bool causal : {false, true}) {
    AttentionKernel cudnn{1, 131072, 131072, 128, causal};
    AttentionKernel flash = cudnn;
    flash.library = s::FLASH_ATTENTION_2;
    const double forward =
        h100.attention_forward(cudnn).seconds() / h100.attention_forward(flash).seconds();
    const double backward = h100.attention_backward(cudnn).seconds() /
                            h100.attention_backward(flash).seconds();
    CHECK(forward == Approx(0.61).margin(0.03));
    CHECK(backward == Approx(0.61).margin(0.03));
  }
  // A GPU without attention entries (the A100: none fitted) runs it at its flat
  // flash_attention_fraction (0.575 of the 312 TFLOP/s peak).
  const auto a100 = model("A100-SXM4-80GB", s::BF16);
  AttentionKernel flat{8, 8192, 8192, 128, false};
  flat.library = s::FLASH_ATTENTION_2;
  CHECK(a100.attention_forward(flat).seconds() ==
        Approx(flat.forward_flops() / (312e12 * 0.575)).epsilon(1e-6));
}

TEST_CASE("the same SM, the same curves: the H200, GH200 and H800 run fused attention as "
          "the H100") {
  // gpus.textproto: each takes the H100 SXM's attention entries (attention_efficiency_from), e.g.
  // cuDNN's causal forward at head dimension 128: 0.567 of 989 TFLOP/s, half rate at 387 keys,
  // 535 TFLOP/s at 8192 keys (an H200 measured 607, results/h200_kernels.md), where the H200's
  // flat flash_attention_fraction would give 0.333 x 989 = 329.
  const auto h100 = model("H100-SXM5-80GB", s::BF16);
  for (const char* name : {"H200-SXM-141GB", "GH200-96GB", "H800-SXM5-80GB"}) {
    INFO(name);
    const auto gpu = model(name, s::BF16);
    AttentionKernel causal{32, 8192, 8192, 128, true};  // the benchmark's shape at 8192 tokens
    CHECK(causal.forward_flops() / gpu.attention_forward(causal).seconds() ==
          Approx(989e12 * 0.567 * 8192 / (8192 + 387)).epsilon(1e-6));
    for (const s::AttentionLibrary library :
         {s::ATTENTION_LIBRARY_UNSPECIFIED, s::FLASH_ATTENTION_2}) {
      for (const int head_dim : {64, 128}) {
        for (const bool masked : {false, true}) {
          AttentionKernel k{16, 4096, 4096, head_dim, masked};
          k.library = library;
          CHECK(gpu.attention_forward(k) == h100.attention_forward(k));
          CHECK(gpu.attention_backward(k) == h100.attention_backward(k));
        }
      }
    }
  }
}

TEST_CASE("dropout inside cuDNN's fused attention slows each pass by its measured fraction") {
  // gpus.textproto: the H100's attention_dropout, 0.967 for both passes (TransformerEngine issue
  // #3312: 0.594 ms -> 0.614 ms forward and backward at p = 0.1 on an H200); the H200, GH200 and
  // H800 take it with the H100's attention entries.
  for (const char* name : {"H100-SXM5-80GB", "H200-SXM-141GB", "H800-SXM5-80GB"}) {
    INFO(name);
    for (const KernelSetting setting : {KernelSetting::kIsolated, KernelSetting::kTrainingStep}) {
      const auto gpu = model(name, s::BF16, setting);
      for (const bool causal : {false, true}) {
        AttentionKernel plain{16, 4096, 4096, 128, causal};
        AttentionKernel dropped = plain;
        dropped.dropout = true;
        CHECK(gpu.attention_forward(dropped).seconds() ==
              Approx(gpu.attention_forward(plain).seconds() / 0.967).epsilon(1e-7));
        CHECK(gpu.attention_backward(dropped).seconds() ==
              Approx(gpu.attention_backward(plain).seconds() / 0.967).epsilon(1e-7));
      }
    }
  }
  // FlashAttention-2's kernels with dropout are not measured: charged nothing.
  const auto h100 = model("H100-SXM5-80GB", s::BF16);
  AttentionKernel fa2{16, 4096, 4096, 128, true};
  fa2.library = s::FLASH_ATTENTION_2;
  AttentionKernel fa2_dropped = fa2;
  fa2_dropped.dropout = true;
  CHECK(h100.attention_forward(fa2_dropped) == h100.attention_forward(fa2));
  CHECK(h100.attention_backward(fa2_dropped) == h100.attention_backward(fa2));
  // A GPU without a measurement (the A100) runs the kernel as without dropout.
  const auto a100 = model("A100-SXM4-80GB", s::BF16);
  AttentionKernel plain{16, 4096, 4096, 128, true};
  AttentionKernel dropped = plain;
  dropped.dropout = true;
  CHECK(a100.attention_forward(dropped) == a100.attention_forward(plain));
  CHECK(a100.attention_backward(dropped) == a100.attention_backward(plain));
}

TEST_CASE("in a training step FlashAttention-2 sustains its own fraction, not the GEMMs'") {
  // gpus.textproto: the H100's FLASH_ATTENTION_2 entries carry sustained_fraction 0.939 (fitted on
  // the NeMo 24.03.01 long-sequence rows), the FP8 steps' GEMMs and cuDNN's attention 0.847. (4
  // heads of 16,384 tokens without a mask fill the SMs as the benchmark's 16 do: no schedule term.)
  const auto step = model("H100-SXM5-80GB", s::FP8, KernelSetting::kTrainingStep);
  const auto alone = model("H100-SXM5-80GB", s::FP8);
  AttentionKernel fa2{4, 16384, 16384, 128, false};
  fa2.library = s::FLASH_ATTENTION_2;
  CHECK(step.attention_forward(fa2).seconds() ==
        Approx(fa2.forward_flops() / (989e12 * 0.381 * 0.939 * 16384 / (16384 + 104)))
            .epsilon(1e-6));
  CHECK(alone.attention_forward(fa2).seconds() / step.attention_forward(fa2).seconds() ==
        Approx(0.939).epsilon(1e-9));
  fa2.causal = true;
  CHECK(alone.attention_backward(fa2).seconds() / step.attention_backward(fa2).seconds() ==
        Approx(0.939).epsilon(1e-9));
  // cuDNN's kernels (no fraction of their own) keep the step's.
  const AttentionKernel cudnn{4, 16384, 16384, 128, true};
  CHECK(alone.attention_backward(cudnn).seconds() / step.attention_backward(cudnn).seconds() ==
        Approx(0.847).epsilon(1e-9));
}

TEST_CASE("Blackwell fused attention: the H100's kernel curves scaled by the B200 fit") {
  // gpus.textproto: no Blackwell attention kernel is benchmarked, so every Blackwell GPU takes the
  // H100's curves with max_fraction x 1.373 (fitted on the B200 long-sequence rows). Alone, the
  // rate at a sequence is that scale x the H100's fraction of its own peak x the Blackwell peak,
  // and grows with the keys as the H100's does. At the benchmark's batch-heads, where the blocks'
  // schedule on the SMs (148 or 160 against 132) takes nothing from either.
  const auto h100 = model("H100-SXM5-80GB", s::BF16);
  const double scale = 1.373;
  for (const char* name : {"B200-SXM-180GB", "GB200-186GB", "B300-SXM-268GB", "GB300-268GB"}) {
    const auto blackwell = model(name, s::BF16);
    for (int64_t seq : {1024, 8192, 131072}) {
      for (bool causal : {false, true}) {
        const AttentionKernel k{std::max<int64_t>(1, 16 * 16384 / seq), seq, seq, 128, causal};
        const double h100_share = k.forward_flops() / h100.attention_forward(k).seconds() /
                                  h100.peak_flops();
        const double share = k.forward_flops() / blackwell.attention_forward(k).seconds() /
                             blackwell.peak_flops();
        CHECK(share == Approx(scale * h100_share).epsilon(1e-3));
        CHECK(blackwell.attention_backward(k).seconds() * blackwell.peak_flops() ==
              Approx(h100.attention_backward(k).seconds() * h100.peak_flops() / scale)
                  .epsilon(1e-3));
      }
    }
  }
}

TEST_CASE("Blackwell head dimension 64: cuDNN's measured ratios to 128, not the H100's shape") {
  // gpus.textproto: on every Blackwell GPU the backward at 64 runs at 0.625 of the 128 curve
  // (cuDNN 9.22's FP8 and MXFP8 backward on GB200 and GB300); the forward at 0.69 on the B200 and
  // GB200 (their exponential units), at the 128 curve on the B300 and GB300 (twice the units).
  // Each kernel at its benchmark batch-heads, where the blocks' schedule takes nothing.
  const auto share = [](const ComputeModel& m, int head_dim, bool causal, bool forward) {
    const int64_t seq = 8192;
    const AttentionKernel k{16384 / seq * (2048 / head_dim), seq, seq, head_dim, causal};
    const double seconds =
        forward ? m.attention_forward(k).seconds() : m.attention_backward(k).seconds();
    return k.forward_flops() / seconds;
  };
  for (const char* name : {"B200-SXM-180GB", "GB200-186GB", "B300-SXM-268GB", "GB300-268GB"}) {
    const bool ultra = std::string(name).find("300") != std::string::npos;
    const auto blackwell = model(name, s::BF16);
    for (bool causal : {false, true}) {
      CHECK(share(blackwell, 64, causal, false) / share(blackwell, 128, causal, false) ==
            Approx(0.625).epsilon(1e-6));
      CHECK(share(blackwell, 64, causal, true) / share(blackwell, 128, causal, true) ==
            Approx(ultra ? 1.0 : 0.69).epsilon(1e-6));
    }
  }
  // The H100 keeps its own shape: its measured non-causal backward at 64 (0.456 of the peak
  // against 0.548 at 128, at their half_rate_keys), the 128 curves elsewhere.
  const auto h100 = model("H100-SXM5-80GB", s::BF16);
  CHECK(share(h100, 64, true, true) / share(h100, 128, true, true) == Approx(1).epsilon(1e-6));
  CHECK(share(h100, 64, true, false) / share(h100, 128, true, false) == Approx(1).epsilon(1e-6));
  // An FP8 backward has no FP8 entry: the 16-bit one at its head dimension, so 0.625 there too
  // (the rows' MXFP8 attention, job.fp8_attention).
  const auto fp8 = model("GB200-186GB", s::FP8);
  AttentionKernel eight{64, 4096, 4096, 64, true, true}, sixteen = eight;
  sixteen.fp8 = false;
  CHECK(fp8.attention_backward(eight) == fp8.attention_backward(sixteen));
}

TEST_CASE("FP8 attention runs at the fitted cuDNN FP8 rates of the FlashAttention-3 paper") {
  // gpus.textproto: the H100's FP8 forward at head dimension 128 (either mask), max_fraction 0.502
  // of the 1979 TFLOP/s FP8 peak and half_rate_keys 317 (tools/fit_attention_kernels.py --fp8).
  const auto h100 = model("H100-SXM5-80GB", s::FP8);
  // (The picosecond clock rounds the time: 1e-8 of this one.)
  AttentionKernel k{8, 4096, 4096, 128, false, true};
  CHECK(h100.attention_forward(k).seconds() ==
        Approx(k.forward_flops() / (1979e12 * 0.502 * 4096 / (4096 + 317))).epsilon(1e-6));
  // kernels.csv, cuDNN FP8 forward on H100 SXM5, TFLOP/s as FlashAttention counts them.
  const auto tflops = [&](int64_t seq, int head_dim, bool causal) {
    const AttentionKernel f{16384 / seq * (2048 / head_dim), seq, seq, head_dim, causal, true};
    const double counted = 4.0 * seq * seq * head_dim * f.batch_heads / (causal ? 2 : 1);
    return counted / h100.attention_forward(f).seconds() / 1e12;
  };
  CHECK(tflops(16384, 128, false) == Approx(1005).epsilon(0.05));
  CHECK(tflops(16384, 64, false) == Approx(438).epsilon(0.05));
  CHECK(tflops(8192, 256, true) == Approx(1056).epsilon(0.05));   // variant B: causal
  CHECK(tflops(2048, 256, false) == Approx(1001).epsilon(0.05));  // variant A: no mask
  // No FP8 backward is benchmarked: it runs at the 16-bit entries.
  AttentionKernel sixteen_bit = k;
  sixteen_bit.fp8 = false;
  CHECK(h100.attention_backward(k) == h100.attention_backward(sixteen_bit));
  // A 16-bit kernel never takes an FP8 entry.
  const auto bf16 = model("H100-SXM5-80GB", s::BF16);
  CHECK(h100.attention_forward(sixteen_bit) == bf16.attention_forward(sixteen_bit));
}

TEST_CASE("FP8 attention is never slower than 16-bit where both are benchmarked") {
  // kernels.csv: cuDNN's FP8 forward runs 1.2-2.3x its 16-bit one at head dimension 128 over
  // sequences 512-16k, and at 256 from 2k on (at 512 and 1k, the causal FP8 kernel, 304 and 449
  // TFLOP/s, runs no faster than the 16-bit, 308 and 391). On the H100 and, scaled alike, on
  // Blackwell.
  for (const char* gpu : {"H100-SXM5-80GB", "GB200-186GB"}) {
    const auto fp8 = model(gpu, s::FP8, KernelSetting::kTrainingStep);
    for (int head_dim : {128, 256}) {
      for (int64_t seq : {512, 1024, 2048, 4096, 8192, 16384}) {
        if (head_dim == 256 && seq < 2048) continue;
        for (bool causal : {false, true}) {
          const AttentionKernel eight{8, seq, seq, head_dim, causal, true};
          const AttentionKernel sixteen{8, seq, seq, head_dim, causal, false};
          CHECK(fp8.attention_forward(eight) < fp8.attention_forward(sixteen));
          CHECK(fp8.attention_backward(eight) == fp8.attention_backward(sixteen));
        }
      }
    }
  }
}

TEST_CASE("a causal kernel does half the pairs plus the diagonal") {
  const AttentionKernel causal{1, 4096, 4096, 128, true};
  CHECK(causal.pairs() == 4096.0 * 4097 / 2);
  CHECK(AttentionKernel{1, 4096, 4096, 128, false}.pairs() == 4096.0 * 4096);
  // Queries at the end of a longer key range (a context-parallel chunk against the keys before
  // it): every earlier key, then the diagonal block's lower triangle.
  CHECK(AttentionKernel{1, 1024, 4096, 128, true}.pairs() == 1024.0 * 3072 + 1024.0 * 1025 / 2);
}

TEST_CASE("an FP8 model runs its 16-bit GEMMs at the 16-bit rate, in the same step") {
  const auto bf16 = model("H100-SXM5-80GB", s::BF16, KernelSetting::kTrainingStep);
  const auto fp8 = model("H100-SXM5-80GB", s::FP8, KernelSetting::kTrainingStep);
  const Catalog& c = testing::shipped_catalog();
  const s::Gpu& gpu = *c.gpus().find("H100-SXM5-80GB")->value;
  double bf16_sustained = gpu.sustained_compute_fraction(), fp8_sustained = bf16_sustained;
  for (const auto& e : gpu.matmul_efficiency()) {
    if (e.precision() == s::FP8 && e.has_sustained_fraction()) fp8_sustained = e.sustained_fraction();
  }
  // Less the overhead and the output's write (not scaled by a sustained fraction).
  const double fixed_s = 5.4e-6 + 2.0 * 8192 * 8192 / (3350e9 * 0.887);
  const double sixteen = fp8.matmul(8192, 8192, 8192, 1, true).seconds() - fixed_s;
  CHECK(sixteen == Approx((bf16.matmul(8192, 8192, 8192).seconds() - fixed_s) * bf16_sustained /
                          fp8_sustained)
                       .epsilon(1e-6));
  CHECK(fp8.matmul(8192, 8192, 8192) < fp8.matmul(8192, 8192, 8192, 1, true));
}

TEST_CASE("an FP4 step runs its 16-bit GEMMs and attention as an FP8 step, its FP4 GEMMs apart") {
  const s::Gpu& gpu = *testing::shipped_catalog().gpus().find("GB300-268GB")->value;
  double fp8_sustained = 0, fp4_sustained = 0;
  for (const auto& e : gpu.matmul_efficiency()) {
    if (e.precision() == s::FP8) fp8_sustained = e.sustained_fraction();
    if (e.precision() == s::FP4) fp4_sustained = e.sustained_fraction();
  }
  REQUIRE(fp8_sustained > 0);
  REQUIRE(fp4_sustained > 0);
  REQUIRE(fp8_sustained != fp4_sustained);
  const auto fp4 = model("GB300-268GB", s::FP4, KernelSetting::kTrainingStep);
  const auto fp8 = model("GB300-268GB", s::FP8, KernelSetting::kTrainingStep);
  const auto alone = model("GB300-268GB", s::FP4);
  CHECK(fp4.matmul(8192, 8192, 8192, 1, true) == fp8.matmul(8192, 8192, 8192, 1, true));
  const AttentionKernel kernel{32, 8192, 8192, 128, true};
  CHECK(fp4.attention_forward(kernel) == fp8.attention_forward(kernel));
  CHECK(fp4.attention_backward(kernel) == fp8.attention_backward(kernel));
  // The FP4 GEMM's compute part stretches by 1 / the FP4 fraction (to the picosecond clock).
  const Picoseconds overhead = Picoseconds::from_microseconds(6.4);
  CHECK((fp4.matmul(8192, 8192, 8192) - overhead).seconds() ==
        Approx((alone.matmul(8192, 8192, 8192) - overhead).seconds() / fp4_sustained)
            .epsilon(1e-8));
}

TEST_CASE("GPUs without fitted efficiencies use the runtime defaults and say so") {
  CHECK(model("H100-SXM5-80GB", s::BF16).calibrated());
  const auto l4 = model("L4-PCIE-24GB", s::BF16);
  CHECK_FALSE(l4.calibrated());
  // 121 TFLOP/s x the default max fraction at a large size, plus the output's write (the fits
  // the defaults average all write it after the main loop) at 300 GB/s x the default memory
  // efficiency and the default overhead (computed at load from the fitted GPUs: 0.7973 and
  // 7.3 us today).
  const Catalog& c = testing::shipped_catalog();
  const s::Runtime& runtime = *c.runtimes().find("default")->value;
  const double fraction = runtime.default_matmul_max_fraction(),
               overhead = runtime.default_matmul_overhead_us() * 1e-6,
               write = 2.0 * 16384 * 16384 /
                       (300e9 * runtime.default_memory_efficiency_fraction());
  CHECK(fraction == Approx(0.7973).margin(1e-4));
  const double expected = 2.0 * 16384 * 16384 * 16384 / (121e12 * fraction) + write + overhead;
  CHECK(l4.matmul(16384, 16384, 16384).seconds() == Approx(expected));
  // In a training step, the runtime's default sustained fraction as well.
  const double sustained = runtime.default_sustained_compute_fraction();
  const auto l4_in_step = model("L4-PCIE-24GB", s::BF16, KernelSetting::kTrainingStep);
  CHECK(l4_in_step.matmul(16384, 16384, 16384).seconds() ==
        Approx(2.0 * 16384 * 16384 * 16384 / (121e12 * fraction * sustained) + write + overhead));
}

// Issue 17: the Ascend 910B's efficiencies are priors (the A100-SXM4's fits, efficiency_source
// UNVERIFIED): they are used as given, and the results still say they are not calibrated. Its
// sustained fraction is the A100 80GB's fit, written with it (tools/refit_sustained_fractions).
TEST_CASE("priors in place of fits are used as given but leave the results uncalibrated") {
  const auto npu = model("Ascend-910B-64GB", s::FP16, KernelSetting::kTrainingStep);
  CHECK_FALSE(npu.calibrated());
  const double a100 = sustained_fraction("A100-SXM4-80GB");
  for (const char* npu_name : {"Ascend-910-32GB", "Ascend-910B-64GB", "Ascend-910C-128GB"})
    CHECK(sustained_fraction(npu_name) == a100);
  // 280 TFLOP/s (FP16) x 0.765 x the A100's sustained fraction at a large size, plus the 10.9 us
  // overhead.
  CHECK(npu.matmul(16384, 16384, 16384).seconds() ==
        Approx(2.0 * 16384 * 16384 * 16384 / (280e12 * 0.765 * a100) + 10.9e-6));
  CHECK(model("A100-SXM4-80GB", s::FP16, KernelSetting::kTrainingStep).calibrated());
}

// A serving fit's fp8_matmul_fraction replaces the FP8 matmuls' isolated fraction x
// compute_fraction: an 8192^3 FP8 GEMM (compute bound) at f of the dense FP8 peak takes
// 2 x 8192^3 / (peak f) besides its launch overhead; the 16-bit matmuls and a 16-bit model keep
// compute_fraction.
TEST_CASE("a serving fit's FP8 matmul fraction sets the FP8 matmuls' rate and nothing else") {
  const Catalog& c = testing::shipped_catalog();
  const s::Gpu& h100 = *c.gpus().find("H100-SXM5-80GB")->value;
  const s::Runtime& runtime = *c.runtimes().find("default")->value;
  const ComputeModel fitted = ComputeModel::serving(h100, s::FP8, runtime, 0.9, 0.9);
  const ComputeModel half = ComputeModel::serving(h100, s::FP8, runtime, 0.9, 0.9, 0.5);
  const ComputeModel quarter = ComputeModel::serving(h100, s::FP8, runtime, 0.9, 0.9, 0.25);
  const int64_t n = 8192;
  const double flops = 2.0 * n * n * n, peak = h100.peak_tflops().fp8() * 1e12;
  const double at_half = half.matmul(n, n, n).seconds(),
               at_quarter = quarter.matmul(n, n, n).seconds();
  CHECK(at_quarter - at_half == Approx(flops / (peak * 0.25) - flops / (peak * 0.5)).epsilon(0.01));
  CHECK(at_half != Approx(fitted.matmul(n, n, n).seconds()).epsilon(0.01));
  CHECK(half.matmul(n, n, n, 1, true) == fitted.matmul(n, n, n, 1, true));
  const ComputeModel sixteen = ComputeModel::serving(h100, s::FP16, runtime, 0.9, 0.9);
  CHECK(ComputeModel::serving(h100, s::FP16, runtime, 0.9, 0.9, 0.5).matmul(n, n, n) ==
        sixteen.matmul(n, n, n));
}

// A serving iteration's prompt chunks run in one causal context kernel, each chunk at the fitted
// 16-bit causal forward rate for its keys S, 0.567 x S / (S + 387) of the H100's 989 TFLOP/s (the
// H200's taken from it), x the serving compute fraction: chunks add, a 5,000-token prompt runs at
// 1.59x the flat flash_attention_fraction (0.332) and a 128-token one at 0.42x. A GPU without a
// fitted curve (the A100) keeps its flat rate whatever the keys.
TEST_CASE("serving prompts attend at the fitted causal forward rate for their keys") {
  const Catalog& c = testing::shipped_catalog();
  const s::Runtime& runtime = *c.runtimes().find("default")->value;
  const auto serving = [&](const char* gpu) {
    return ComputeModel::serving(*c.gpus().find(gpu)->value, s::FP16, runtime, 0.9, 0.9);
  };
  const ComputeModel h100 = serving("H100-SXM5-80GB");
  const auto flops = [](double keys) { return 4.0 * keys * (keys + 1) / 2 * 128 * 32; };
  const auto curve_s = [&](double keys) {
    return flops(keys) / (989e12 * 0.567 * keys / (keys + 387) * 0.9);
  };
  const auto prompt_s = [&](const ComputeModel& m, double keys) {
    return m.prompt_attention(flops(keys), flops(keys) / keys, 128).seconds();
  };
  CHECK(prompt_s(h100, 5000) == Approx(curve_s(5000)).epsilon(1e-9));
  CHECK(prompt_s(h100, 128) == Approx(curve_s(128)).epsilon(1e-6));
  const double together_s =
      h100.prompt_attention(flops(5000) + flops(128), flops(5000) / 5000 + flops(128) / 128, 128)
          .seconds();
  CHECK(together_s == Approx(curve_s(5000) + curve_s(128)).epsilon(1e-9));
  const double flat_rate = 989e12 * 0.332 * 0.9;
  CHECK(flops(5000) / flat_rate / prompt_s(h100, 5000) == Approx(1.585).epsilon(0.001));
  CHECK(flops(128) / flat_rate / prompt_s(h100, 128) == Approx(0.4245).epsilon(0.001));
  CHECK(prompt_s(serving("H200-SXM-141GB"), 5000) == Approx(curve_s(5000)).epsilon(1e-9));
  const ComputeModel a100 = serving("A100-SXM4-80GB");
  const double a100_flat =
      312e12 * c.gpus().find("A100-SXM4-80GB")->value->flash_attention_fraction() * 0.9;
  CHECK(prompt_s(a100, 5000) == Approx(flops(5000) / a100_flat).epsilon(1e-6));
  CHECK(prompt_s(a100, 128) == Approx(flops(128) / a100_flat).epsilon(1e-6));
}

}  // namespace
}  // namespace clustersim
