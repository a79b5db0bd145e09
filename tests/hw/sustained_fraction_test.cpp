// Which sustained fraction a training step takes, the fractions carried over from a reference GPU,
// and the runtime's default computed from the fitted GPUs: closed forms on small GPUs, and the
// shipped catalog's values against the same rules.
#include "sim/hw/sustained_fraction.h"

#include <catch2/catch.hpp>

#include "sim/hw/compute_model.h"
#include "tests/testing/catalog_snippets.h"
#include "tests/testing/parse_message.h"
#include "tests/testing/shipped_catalog.h"
#include "tests/testing/temp_dir.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::parse_message;

s::Gpu gpu(const std::string& text) { return parse_message<s::Gpu>(text); }

const s::Gpu& shipped(const std::string& name) {
  return *testing::shipped_catalog().gpus().find(name)->value;
}

// A GPU's BF16 fraction 0.7 and its FP8 ones, per-tensor 0.6 and MXFP8 0.5.
const std::string kBf16AndFp8Fractions =
    "sustained_compute_fraction: 0.7 "
    "matmul_efficiency { precision: FP8 sustained_fraction: 0.6 mxfp8_sustained_fraction: 0.5 }";

TEST_CASE("a step takes its precision's fraction, MXFP8's apart, else the GPU's") {
  const s::Gpu g = gpu(kBf16AndFp8Fractions + "matmul_efficiency { precision: FP4 }");
  CHECK(*step_sustained_fraction(g, s::BF16) == 0.7);
  CHECK(*step_sustained_fraction(g, s::FP8) == 0.6);
  CHECK(*step_sustained_fraction(g, s::FP8, s::MXFP8) == 0.5);
  CHECK(*step_sustained_fraction(g, s::FP4) == 0.7);
  CHECK_FALSE(step_sustained_fraction(gpu("name: \"bare\""), s::BF16).has_value());
}

TEST_CASE("an FP4 step's 16-bit kernels take the per-tensor FP8 fraction, others the step's") {
  const s::Gpu g =
      gpu(kBf16AndFp8Fractions + "matmul_efficiency { precision: FP4 sustained_fraction: 0.4 }");
  CHECK(*sixteen_bit_sustained_fraction(g, s::FP4) == 0.6);
  CHECK(*sixteen_bit_sustained_fraction(g, s::FP8, s::MXFP8) == 0.5);
  CHECK(*sixteen_bit_sustained_fraction(g, s::BF16) == 0.7);
  // Without a per-tensor FP8 fraction, the FP4 step's own.
  const s::Gpu no_fp8 = gpu("matmul_efficiency { precision: FP4 sustained_fraction: 0.4 }");
  CHECK(*sixteen_bit_sustained_fraction(no_fp8, s::FP4) == 0.4);
}

TEST_CASE("a transferred fraction is own(from) x reference(to) / reference(from), not fitted") {
  // 0.5 x 0.6 / 0.8 = 0.375.
  const s::Gpu reference =
      gpu("sustained_compute_fraction: 0.6 matmul_efficiency { precision: FP8 sustained_fraction: "
          "0.8 }");
  const s::Gpu own =
      gpu("matmul_efficiency { precision: FP8 sustained_fraction: 0.5 }"
          "matmul_efficiency { precision: BF16 sustained_transfer { from_precision: FP8 } }");
  CHECK(transferred_sustained_fraction(own, s::FP8, &reference, s::BF16) == Approx(0.375));
  // Without a reference the ratio is 1: the GPU's own FP8 fraction.
  CHECK(transferred_sustained_fraction(own, s::FP8, nullptr, s::BF16) == 0.5);
  CHECK(step_sustained_fraction_fitted(reference, s::BF16));
  CHECK(step_sustained_fraction_fitted(own, s::FP8));
  CHECK_FALSE(step_sustained_fraction_fitted(own, s::BF16));
}

TEST_CASE("a runtime default is the mean over the fitted GPUs, each fit counted once") {
  // Sustained: Ampere 0.9 (twice: one fit) and 0.8, Hopper 0.6: (0.9 + 0.8 + 0.6) / 3 = 0.7667.
  // Memory efficiency: Ampere 0.85 (three entries), Hopper 0.85: one fit each, 0.85. A prior
  // (efficiency source UNVERIFIED) and a GPU lacking one of the fits do not count.
  const std::string fits =
      "peak_tflops { bf16: 312 } matmul_efficiency { precision: BF16 max_fraction: 0.7 "
      "overhead_us: 8 } memory_efficiency_fraction: 0.85 flash_attention_fraction: 0.4 ";
  const s::Gpu a = gpu("architecture: \"Ampere\" sustained_compute_fraction: 0.9 " + fits);
  const s::Gpu a2 = gpu("architecture: \"Ampere\" sustained_compute_fraction: 0.9 " + fits);
  const s::Gpu b = gpu("architecture: \"Ampere\" sustained_compute_fraction: 0.8 " + fits);
  const s::Gpu h = gpu("architecture: \"Hopper\" sustained_compute_fraction: 0.6 " + fits);
  const s::Gpu prior = gpu("architecture: \"Da Vinci\" sustained_compute_fraction: 0.99 " + fits +
                           "efficiency_source { citation: \"x\" confidence: UNVERIFIED }");
  const s::Gpu partial =
      gpu("architecture: \"Blackwell\" sustained_compute_fraction: 0.5 "
          "matmul_efficiency { precision: BF16 max_fraction: 0.8 overhead_us: 6 }");
  CHECK(efficiencies_fitted(a));
  CHECK_FALSE(efficiencies_fitted(prior));
  CHECK_FALSE(efficiencies_fitted(partial));
  const auto of = [](const std::string& field) {
    for (const RuntimeDefault& d : runtime_defaults()) {
      if (std::string(d.field) == field) return d;
    }
    FAIL("no runtime default " << field);
    return runtime_defaults().front();
  };
  const std::vector<const s::Gpu*> gpus = {&a, &a2, &b, &h, &prior, &partial};
  CHECK(*runtime_default(gpus, of("default_sustained_compute_fraction")) ==
        Approx((0.9 + 0.8 + 0.6) / 3));
  CHECK(*runtime_default(gpus, of("default_memory_efficiency_fraction")) == Approx(0.85));
  CHECK(*runtime_default(gpus, of("default_matmul_overhead_us")) == Approx(8));
  CHECK_FALSE(runtime_default({&prior, &partial}, of("default_matmul_max_fraction")).has_value());
}

TEST_CASE("the catalog writes the transferred fractions and the default at load") {
  // Reference: BF16 0.6 (GPU-wide), FP8 0.8; own FP8 0.5: own BF16 0.5 x 0.6 / 0.8 = 0.375. The
  // runtime's default: the one fitted GPU-wide fraction, 0.6 (the transferring GPU has none).
  testing::TempDir dir;
  const std::string gpus =
      testing::gpu_entry(
          "  architecture: \"Hopper\" sustained_compute_fraction: 0.6\n"
          "  matmul_efficiency { precision: FP8 max_fraction: 0.7 overhead_us: 6 "
          "sustained_fraction: 0.8 }\n"
          "  matmul_efficiency { precision: BF16 max_fraction: 0.75 overhead_us: 6 }\n"
          "  memory_efficiency_fraction: 0.85 flash_attention_fraction: 0.4") +
      testing::gpu_entry(
          "  matmul_efficiency { precision: FP8 max_fraction: 0.7 overhead_us: 6 "
          "sustained_fraction: 0.5 }\n"
          "  matmul_efficiency { precision: BF16 max_fraction: 0.8 overhead_us: 6 "
          "sustained_transfer { from_precision: FP8 reference_gpu: \"TestGPU-80GB\" "
          "} }");
  std::string own = gpus;
  own.replace(own.rfind("TestGPU-80GB\"\n"), 12, "Own-80GB");
  dir.write("gpus.textproto", own);
  dir.write("runtime.textproto",
            "runtime { name: \"default\" cuda_context_gib: 0.4 communicator_gib: 0.6 "
            "allocator_overhead_fraction: 0.05 " +
                testing::kSource + " }\n");
  Diagnostics diagnostics;
  const auto catalog = Catalog::load({dir.path()}, &diagnostics);
  REQUIRE(diagnostics.to_string() == "");
  CHECK(*step_sustained_fraction(*catalog->gpus().find("Own-80GB")->value, s::BF16) ==
        Approx(0.375).epsilon(1e-12));
  const s::Runtime& runtime = *catalog->runtimes().find("default")->value;
  CHECK(runtime.default_sustained_compute_fraction() == 0.6);
  CHECK(runtime.default_matmul_max_fraction() == 0.75);
  CHECK(runtime.default_matmul_overhead_us() == 6);
  CHECK(runtime.default_memory_efficiency_fraction() == 0.85);
  CHECK(runtime.default_flash_attention_fraction() == 0.4);
  // Another reference fit moves the default, not the runtime file's line of the fingerprint.
  own.replace(own.find("sustained_compute_fraction: 0.6"), 31, "sustained_compute_fraction: 0.7");
  dir.write("gpus.textproto", own);
  const auto refit = Catalog::load({dir.path()}, &diagnostics);
  CHECK(refit->runtimes().find("default")->value->default_sustained_compute_fraction() == 0.7);
  const auto runtime_line = [](const std::string& fingerprint) {
    return fingerprint.substr(fingerprint.find("runtime.textproto"));
  };
  CHECK(runtime_line(refit->fingerprint()) == runtime_line(catalog->fingerprint()));
  CHECK(refit->fingerprint() != catalog->fingerprint());
  // Without reference_gpu the BF16 steps take the GPU's own FP8 fraction, 0.5, whatever the
  // other GPU's fits.
  own.replace(own.find(" reference_gpu: \"TestGPU-80GB\""), 30, "");
  dir.write("gpus.textproto", own);
  const auto own_ratio = Catalog::load({dir.path()}, &diagnostics);
  REQUIRE(diagnostics.to_string() == "");
  CHECK(*step_sustained_fraction(*own_ratio->gpus().find("Own-80GB")->value, s::BF16) == 0.5);
}

TEST_CASE("the shipped runtime's defaults equal their rule over the shipped catalog") {
  const Catalog& c = testing::shipped_catalog();
  std::vector<const s::Gpu*> gpus;
  for (const auto& [name, entry] : c.gpus().all()) gpus.push_back(entry.value);
  const s::Runtime& runtime = *c.runtimes().find("default")->value;
  for (const RuntimeDefault& d : runtime_defaults()) {
    const google::protobuf::FieldDescriptor* field =
        s::Runtime::descriptor()->FindFieldByName(d.field);
    REQUIRE(field != nullptr);
    CHECK(runtime.GetReflection()->GetDouble(runtime, field) == *runtime_default(gpus, d));
  }
  // Today's fitted GPUs: the A100 SXM4s (one fit), the H100 SXM5 and the H200 (the H200 takes the
  // H100's sustained fraction: one fit); a fit of another GPU changes these lines on purpose. The
  // first four were the values runtime.textproto used to write (0.744, 7.9, 0.867, 0.413) until
  // the GEMM fits took the serial output write (0.7973, 7.3).
  const s::Gpu &a100 = shipped("A100-SXM4-80GB"), &h100 = shipped("H100-SXM5-80GB"),
               &h200 = shipped("H200-SXM-141GB");
  const auto mean = [&](auto value) { return (value(a100) + value(h100) + value(h200)) / 3; };
  CHECK(runtime.default_matmul_max_fraction() == Approx(mean([](const s::Gpu& g) {
          return matmul_efficiency(g, s::BF16)->max_fraction();
        })));
  CHECK(runtime.default_matmul_max_fraction() == Approx(0.7973).margin(0.0005));
  // The H100 and H200 GEMM fits share one overhead (5.4 us), one Hopper value: counted once.
  CHECK(matmul_efficiency(h100, s::BF16)->overhead_us() ==
        matmul_efficiency(h200, s::BF16)->overhead_us());
  CHECK(runtime.default_matmul_overhead_us() ==
        Approx((matmul_efficiency(a100, s::BF16)->overhead_us() +
                matmul_efficiency(h100, s::BF16)->overhead_us()) / 2));
  CHECK(runtime.default_matmul_overhead_us() == Approx(7.3).margin(0.05));
  CHECK(runtime.default_memory_efficiency_fraction() ==
        Approx(mean([](const s::Gpu& g) { return g.memory_efficiency_fraction(); })));
  CHECK(runtime.default_memory_efficiency_fraction() == Approx(0.867).margin(0.0005));
  CHECK(runtime.default_flash_attention_fraction() ==
        Approx(mean([](const s::Gpu& g) { return g.flash_attention_fraction(); })));
  CHECK(runtime.default_flash_attention_fraction() == Approx(0.413).margin(0.0005));
  CHECK(runtime.default_sustained_compute_fraction() ==
        Approx((a100.sustained_compute_fraction() + h100.sustained_compute_fraction()) / 2));
}

TEST_CASE("the V100 SXM2's fitted fraction scales the default isolated rates, outside the defaults") {
  // Fitted on the README's DGX-2 rows (gpus.textproto): 1.000 for both SXM2 entries. Without an
  // isolated fit of its own the V100 is not a fitted GPU: it stays out of the runtime's defaults
  // (their test above), its steps are uncalibrated, and the PCIe cards take the default.
  const Catalog& c = testing::shipped_catalog();
  const s::Runtime& runtime = *c.runtimes().find("default")->value;
  for (const char* name : {"V100-SXM2-32GB", "V100-SXM2-16GB"}) {
    const s::Gpu& v100 = shipped(name);
    CHECK(*step_sustained_fraction(v100, s::FP16) == 1.0);
    CHECK(step_sustained_fraction_fitted(v100, s::FP16));
    CHECK_FALSE(efficiencies_fitted(v100));
    CHECK_FALSE(ComputeModel(v100, s::FP16, runtime, KernelSetting::kTrainingStep).calibrated());
  }
  CHECK_FALSE(step_sustained_fraction(shipped("V100-PCIE-32GB"), s::FP16).has_value());
}

TEST_CASE("a compute model is calibrated exactly when compute_constants_fitted says so") {
  // One source of truth for the rows' `calibrated` column and the accuracy line's word: every
  // shipped GPU, every precision it has a peak for, alone and in a training step.
  const Catalog& c = testing::shipped_catalog();
  const s::Runtime& runtime = *c.runtimes().find("default")->value;
  int calibrated = 0, models = 0;
  for (const auto& [name, entry] : c.gpus().all()) {
    const s::Gpu& g = *entry.value;
    for (s::Precision p : {s::FP32, s::TF32, s::FP16, s::BF16, s::FP8, s::INT8, s::FP4}) {
      if (!(peak_tflops(g.peak_tflops(), p) > 0)) continue;
      for (s::Fp8Recipe recipe : {s::FP8_RECIPE_UNSPECIFIED, s::MXFP8}) {
        for (KernelSetting setting : {KernelSetting::kIsolated, KernelSetting::kTrainingStep}) {
          const bool step = setting == KernelSetting::kTrainingStep;
          INFO(name << " " << s::Precision_Name(p) << " " << s::Fp8Recipe_Name(recipe) << " "
                    << step);
          const bool fitted = compute_constants_fitted(g, p, step, recipe);
          CHECK(ComputeModel(g, p, runtime, setting, recipe).calibrated() == fitted);
          calibrated += fitted;
          ++models;
        }
      }
    }
  }
  CHECK(calibrated > 0);
  CHECK(calibrated < models);
  // The B200's FP8 fraction and the V100's FP16 one are fitted on their own runs, but their
  // kernel efficiencies are priors or defaults: not calibrated (the accuracy line says so too).
  for (const auto& [name, precision] :
       {std::pair{"B200-SXM-180GB", s::FP8}, std::pair{"V100-SXM2-32GB", s::FP16}}) {
    CHECK(step_sustained_fraction_fitted(shipped(name), precision));
    CHECK_FALSE(compute_constants_fitted(shipped(name), precision, true));
  }
  CHECK(compute_constants_fitted(shipped("H100-SXM5-80GB"), s::BF16, true));
}

TEST_CASE("a Blackwell BF16 step takes its own FP8 step's fraction, uncalibrated") {
  // B200: 0.553 (its GEMM-only layer: tests/parallel/layer_times_test.cpp).
  const s::Gpu& b200 = shipped("B200-SXM-180GB");
  const double sustained = *step_sustained_fraction(b200, s::FP8);
  CHECK(sustained == Approx(0.553).epsilon(0.002));
  CHECK(*step_sustained_fraction(b200, s::BF16) == Approx(sustained).epsilon(1e-12));
  CHECK(*step_sustained_fraction(b200, s::FP16) == Approx(sustained).epsilon(1e-12));
  CHECK_FALSE(step_sustained_fraction_fitted(b200, s::BF16));
  const Catalog& c = testing::shipped_catalog();
  CHECK_FALSE(ComputeModel(b200, s::BF16, *c.runtimes().find("default")->value,
                           KernelSetting::kTrainingStep)
                  .calibrated());
  // The B300's is its FP8 step's too, carried over from the GB300 (the test below).
  const s::Gpu& b300 = shipped("B300-SXM-268GB");
  CHECK(*step_sustained_fraction(b300, s::BF16) ==
        Approx(*step_sustained_fraction(b300, s::FP8)).epsilon(1e-12));
}

TEST_CASE("a server transfer is same_chip(precision, recipe) x ratio_of / ratio_to, not fitted") {
  // GB300-like: FP8 0.8, MXFP8 0.7, FP4 0.5; the ratio 0.5 / 0.625 = 0.8 of the per-tensor FP8
  // fractions (ratio_of's MXFP8 0.3 not taken).
  const s::Gpu same = gpu(
      "matmul_efficiency { precision: FP8 sustained_fraction: 0.8 mxfp8_sustained_fraction: 0.7 }"
      "matmul_efficiency { precision: FP4 sustained_fraction: 0.5 }");
  const s::Gpu of = gpu(
      "matmul_efficiency { precision: FP8 sustained_fraction: 0.5 mxfp8_sustained_fraction: 0.3 }");
  const s::Gpu to = gpu("matmul_efficiency { precision: FP8 sustained_fraction: 0.625 }");
  const auto carried = [&](s::Precision p, s::Fp8Recipe recipe) {
    return server_transferred_sustained_fraction(same, of, to, s::FP8, p, recipe);
  };
  CHECK(carried(s::FP8, s::FP8_RECIPE_UNSPECIFIED) == Approx(0.64).epsilon(1e-12));
  CHECK(carried(s::FP8, s::MXFP8) == Approx(0.56).epsilon(1e-12));
  CHECK(carried(s::FP4, s::FP8_RECIPE_UNSPECIFIED) == Approx(0.4).epsilon(1e-12));
  // A GPU with the transfer holds written fractions that are not fitted.
  const s::Gpu taker = gpu(
      "sustained_server_transfer { same_chip: \"S\" ratio_of: \"O\" ratio_to: \"T\" "
      "ratio_precision: FP8 } matmul_efficiency { precision: FP8 sustained_fraction: 0.64 }");
  CHECK(*step_sustained_fraction(taker, s::FP8) == 0.64);
  CHECK_FALSE(step_sustained_fraction_fitted(taker, s::FP8));
}

TEST_CASE("the catalog writes a server transfer's fractions at load, on the transferred ones") {
  // The taker first in the file, its same_chip's BF16 fraction transferred from its FP8 one (0.8):
  // every precision and recipe x 0.5 / 0.625 = 0.8.
  const auto named = [](const std::string& name, const std::string& fields) {
    std::string entry = testing::gpu_entry(fields);
    return entry.replace(entry.find("TestGPU-80GB"), 12, name);
  };
  const std::string efficiency = " max_fraction: 0.8 overhead_us: 6";
  const std::string gpus =
      named("Taker-80GB",
            "  sustained_server_transfer { same_chip: \"Same-80GB\" ratio_of: \"Of-80GB\" "
            "ratio_to: \"To-80GB\" ratio_precision: FP8 }\n"
            "  matmul_efficiency { precision: BF16" + efficiency + " }\n"
            "  matmul_efficiency { precision: FP8" + efficiency + " }\n"
            "  matmul_efficiency { precision: FP4" + efficiency + " }") +
      named("Same-80GB",
            "  matmul_efficiency { precision: BF16" + efficiency +
                " sustained_transfer { from_precision: FP8 } }\n"
                "  matmul_efficiency { precision: FP8" + efficiency +
                " sustained_fraction: 0.8 mxfp8_sustained_fraction: 0.7 }\n"
                "  matmul_efficiency { precision: FP4" + efficiency +
                " sustained_fraction: 0.5 }") +
      named("Of-80GB", "  matmul_efficiency { precision: FP8" + efficiency +
                           " sustained_fraction: 0.5 }") +
      named("To-80GB", "  matmul_efficiency { precision: FP8" + efficiency +
                           " sustained_fraction: 0.625 }");
  testing::TempDir dir;
  dir.write("gpus.textproto", gpus);
  Diagnostics diagnostics;
  const auto catalog = Catalog::load({dir.path()}, &diagnostics);
  REQUIRE(diagnostics.to_string() == "");
  const s::Gpu& taker = *catalog->gpus().find("Taker-80GB")->value;
  CHECK(*step_sustained_fraction(taker, s::BF16) == Approx(0.64).epsilon(1e-12));
  CHECK(*step_sustained_fraction(taker, s::FP8) == Approx(0.64).epsilon(1e-12));
  CHECK(*step_sustained_fraction(taker, s::FP8, s::MXFP8) == Approx(0.56).epsilon(1e-12));
  CHECK(*step_sustained_fraction(taker, s::FP4) == Approx(0.4).epsilon(1e-12));
  // An FP4 step's 16-bit kernels at the carried per-tensor FP8 fraction.
  CHECK(*sixteen_bit_sustained_fraction(taker, s::FP4) == Approx(0.64).epsilon(1e-12));
}

TEST_CASE("the B300's fractions are the GB300's x the B200's / the GB200's per-tensor FP8 ones") {
  // gpus.textproto, the B300 entry: 0.553 / 0.627 = 0.882 on the GB300's per-tensor FP8 0.809,
  // MXFP8 0.736 and NVFP4 0.479 fits (as of 2026-12-06: the products follow a refit).
  const s::Gpu &b300 = shipped("B300-SXM-268GB"), &gb300 = shipped("GB300-268GB"),
               &b200 = shipped("B200-SXM-180GB"), &gb200 = shipped("GB200-186GB");
  const double ratio =
      *step_sustained_fraction(b200, s::FP8) / *step_sustained_fraction(gb200, s::FP8);
  CHECK(ratio == Approx(0.882).margin(0.005));
  for (const s::Precision p : {s::BF16, s::FP16, s::FP8, s::FP4}) {
    CAPTURE(s::Precision_Name(p));
    CHECK(*step_sustained_fraction(b300, p) ==
          Approx(*step_sustained_fraction(gb300, p) * ratio).epsilon(1e-12));
    CHECK_FALSE(step_sustained_fraction_fitted(b300, p));
  }
  CHECK(*step_sustained_fraction(b300, s::FP8, s::MXFP8) ==
        Approx(*step_sustained_fraction(gb300, s::FP8, s::MXFP8) * ratio).epsilon(1e-12));
  CHECK(*step_sustained_fraction(b300, s::FP8) == Approx(0.714).margin(0.005));
  CHECK(*step_sustained_fraction(b300, s::FP8, s::MXFP8) == Approx(0.649).margin(0.005));
  CHECK(*step_sustained_fraction(b300, s::FP4) == Approx(0.422).margin(0.005));
  const Catalog& c = testing::shipped_catalog();
  CHECK_FALSE(ComputeModel(b300, s::FP8, *c.runtimes().find("default")->value,
                           KernelSetting::kTrainingStep)
                  .calibrated());
}

}  // namespace
}  // namespace clustersim
