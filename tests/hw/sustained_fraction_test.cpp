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

TEST_CASE("a step takes its precision's fraction, MXFP8's apart, else the GPU's") {
  const s::Gpu g = gpu(
      "sustained_compute_fraction: 0.7 "
      "matmul_efficiency { precision: FP8 sustained_fraction: 0.6 mxfp8_sustained_fraction: 0.5 }"
      "matmul_efficiency { precision: FP4 }");
  CHECK(*step_sustained_fraction(g, s::BF16) == 0.7);
  CHECK(*step_sustained_fraction(g, s::FP8) == 0.6);
  CHECK(*step_sustained_fraction(g, s::FP8, s::MXFP8) == 0.5);
  CHECK(*step_sustained_fraction(g, s::FP4) == 0.7);
  CHECK_FALSE(step_sustained_fraction(gpu("name: \"bare\""), s::BF16).has_value());
}

TEST_CASE("a transferred fraction is own(from) x reference(to) / reference(from), not fitted") {
  // 0.5 x 0.6 / 0.8 = 0.375.
  const s::Gpu reference =
      gpu("sustained_compute_fraction: 0.6 matmul_efficiency { precision: FP8 sustained_fraction: "
          "0.8 }");
  const s::Gpu own =
      gpu("matmul_efficiency { precision: FP8 sustained_fraction: 0.5 }"
          "matmul_efficiency { precision: BF16 sustained_transfer { from_precision: FP8 } }");
  CHECK(transferred_sustained_fraction(own, s::FP8, reference, s::BF16) == Approx(0.375));
  CHECK(step_sustained_fraction_fitted(reference, s::BF16));
  CHECK(step_sustained_fraction_fitted(own, s::FP8));
  CHECK_FALSE(step_sustained_fraction_fitted(own, s::BF16));
}

TEST_CASE("the default is the mean over architectures of the fitted GPUs' fractions") {
  // Ampere (0.9 + 0.8) / 2 = 0.85, Hopper 0.6: (0.85 + 0.6) / 2 = 0.725. A prior (efficiency
  // source UNVERIFIED) and a GPU without a GPU-wide fraction do not count.
  const s::Gpu a = gpu("architecture: \"Ampere\" sustained_compute_fraction: 0.9");
  const s::Gpu b = gpu("architecture: \"Ampere\" sustained_compute_fraction: 0.8");
  const s::Gpu h = gpu("architecture: \"Hopper\" sustained_compute_fraction: 0.6");
  const s::Gpu prior =
      gpu("architecture: \"Da Vinci\" sustained_compute_fraction: 0.99 "
          "efficiency_source { citation: \"x\" confidence: UNVERIFIED }");
  const s::Gpu none = gpu(
      "architecture: \"Blackwell\" matmul_efficiency { precision: FP8 sustained_fraction: 0.5 }");
  CHECK(*default_sustained_compute_fraction({&a, &b, &h, &prior, &none}) == Approx(0.725));
  CHECK_FALSE(default_sustained_compute_fraction({&prior, &none}).has_value());
}

TEST_CASE("the catalog writes the transferred fractions and the default at load") {
  // Reference: BF16 0.6 (GPU-wide), FP8 0.8; own FP8 0.5: own BF16 0.5 x 0.6 / 0.8 = 0.375. The
  // runtime's default: the one fitted GPU-wide fraction, 0.6 (the transferring GPU has none).
  testing::TempDir dir;
  const std::string gpus =
      testing::gpu_entry(
          "  architecture: \"Hopper\" sustained_compute_fraction: 0.6\n"
          "  matmul_efficiency { precision: FP8 max_fraction: 0.7 overhead_us: 6 "
          "sustained_fraction: 0.8 }") +
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
            "allocator_overhead_fraction: 0.05 default_matmul_max_fraction: 0.7 "
            "default_matmul_overhead_us: 8 default_memory_efficiency_fraction: 0.8 "
            "default_flash_attention_fraction: 0.4 " +
                testing::kSource + " }\n");
  Diagnostics diagnostics;
  const auto catalog = Catalog::load({dir.path()}, &diagnostics);
  REQUIRE(diagnostics.to_string() == "");
  CHECK(*step_sustained_fraction(*catalog->gpus().find("Own-80GB")->value, s::BF16) ==
        Approx(0.375).epsilon(1e-12));
  CHECK(catalog->runtimes().find("default")->value->default_sustained_compute_fraction() == 0.6);
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
}

TEST_CASE("the shipped runtime's default equals its rule over the shipped catalog") {
  const Catalog& c = testing::shipped_catalog();
  std::vector<const s::Gpu*> gpus;
  for (const auto& [name, entry] : c.gpus().all()) gpus.push_back(entry.value);
  const double fraction = c.runtimes().find("default")->value->default_sustained_compute_fraction();
  CHECK(fraction == *default_sustained_compute_fraction(gpus));
  // Today's fitted architectures: Ampere (the A100s' 0.909) and Hopper (the H100's and H200's
  // 0.655); a fit of another architecture changes this line on purpose.
  CHECK(fraction == Approx((shipped("A100-SXM4-80GB").sustained_compute_fraction() +
                            shipped("H100-SXM5-80GB").sustained_compute_fraction()) /
                           2));
}

TEST_CASE("a Blackwell BF16 step takes its FP8 fraction x the H100's BF16 / FP8, uncalibrated") {
  // B200: 0.533 x 0.655 / 0.840 = 0.416 (its GEMM-only layer: tests/parallel/layer_times_test.cpp).
  const s::Gpu& b200 = shipped("B200-SXM-180GB");
  const s::Gpu& h100 = shipped("H100-SXM5-80GB");
  const double sustained = *step_sustained_fraction(b200, s::FP8) *
                           h100.sustained_compute_fraction() /
                           *step_sustained_fraction(h100, s::FP8);
  CHECK(sustained == Approx(0.416).epsilon(0.002));
  CHECK(*step_sustained_fraction(b200, s::BF16) == Approx(sustained).epsilon(1e-12));
  CHECK(*step_sustained_fraction(b200, s::FP16) == Approx(sustained).epsilon(1e-12));
  CHECK_FALSE(step_sustained_fraction_fitted(b200, s::BF16));
  const Catalog& c = testing::shipped_catalog();
  CHECK_FALSE(ComputeModel(b200, s::BF16, *c.runtimes().find("default")->value,
                           KernelSetting::kTrainingStep)
                  .calibrated());
  // The B300, with no FP8 fit, takes the runtime's default.
  CHECK_FALSE(step_sustained_fraction(shipped("B300-SXM-268GB"), s::BF16).has_value());
}

}  // namespace
}  // namespace clustersim
