// The serving runtime's default fits: the rule on small fits (closed forms), and the shipped
// runtime's computed defaults against the means of its shipped fits.
#include "sim/serve/serving_default_fit.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "tests/testing/parse_message.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::parse_message;

s::ServingGpuFit fit(const std::string& text) { return parse_message<s::ServingGpuFit>(text); }

TEST_CASE("a form factor's default is the mean of its fits, each field over the fits giving it") {
  const s::ServingGpuFit a = fit(
      "gpu: \"a\" compute_fraction: 0.8 memory_fraction: 0.9 layer_overhead_us: 40 "
      "kv_reread_fraction: 0.5 fp8_matmul_fraction: 0.6 memory_overhead_gib: 1.2");
  const s::ServingGpuFit b = fit(
      "gpu: \"b\" compute_fraction: 1.0 memory_fraction: 0.7 layer_overhead_us: 60 "
      "kv_reread_fraction: 0.9 memory_overhead_gib: 0.8 expert_layer_overhead_us: 20");
  const s::ServingGpuFit c = fit(
      "gpu: \"c\" compute_fraction: 0.6 memory_fraction: 0.5 layer_overhead_us: 10");
  const std::vector<FittedServingGpu> fitted = {{&a, s::SXM}, {&b, s::SXM}, {&c, s::PCIE}};
  const s::ServingGpuFit sxm = serving_default_fit(fitted, s::SXM);
  CHECK(sxm.form_factor() == s::SXM);
  CHECK_FALSE(sxm.has_gpu());
  CHECK(sxm.compute_fraction() == Approx(0.9));
  CHECK(sxm.memory_fraction() == Approx(0.8));
  CHECK(sxm.layer_overhead_us() == Approx(50));
  CHECK(sxm.kv_reread_fraction() == Approx(0.7));
  CHECK(sxm.memory_overhead_gib() == Approx(1.0));
  // Fitted on one of the two: that one's value; on none: absent (its absent meaning applies).
  CHECK(sxm.fp8_matmul_fraction() == Approx(0.6));
  CHECK(sxm.expert_layer_overhead_us() == Approx(20));
  CHECK_FALSE(sxm.has_expert_matmul_fraction());
  CHECK_FALSE(sxm.has_tensor_parallel_memory_gib());
  const s::ServingGpuFit pcie = serving_default_fit(fitted, s::PCIE);
  CHECK(pcie.compute_fraction() == Approx(0.6));
  CHECK_FALSE(pcie.has_kv_reread_fraction());
  CHECK_FALSE(pcie.has_fp8_matmul_fraction());
  // No consumer card fitted: the PCIe cards' fits, not the SXM ones.
  const s::ServingGpuFit consumer = serving_default_fit(fitted, s::CONSUMER);
  CHECK(consumer.form_factor() == s::CONSUMER);
  CHECK(consumer.compute_fraction() == Approx(0.6));
  CHECK(consumer.layer_overhead_us() == Approx(10));
  // No add-in card fitted at all: every fit.
  const std::vector<FittedServingGpu> sxm_only = {{&a, s::SXM}, {&b, s::SXM}};
  CHECK(serving_default_fit(sxm_only, s::CONSUMER).compute_fraction() == Approx(0.9));
  // A consumer card fitted: the PCIe cards take it when none of theirs is.
  const std::vector<FittedServingGpu> consumer_only = {{&a, s::SXM}, {&c, s::CONSUMER}};
  CHECK(serving_default_fit(consumer_only, s::PCIE).compute_fraction() == Approx(0.6));
  CHECK(serving_default_fit(consumer_only, s::SXM).compute_fraction() == Approx(0.8));
  // One default per form factor, none without fits.
  const std::vector<s::ServingGpuFit> all = serving_default_fits(fitted);
  REQUIRE(all.size() == 3);
  CHECK(all[0].form_factor() == s::SXM);
  CHECK(all[1].form_factor() == s::PCIE);
  CHECK(all[2].form_factor() == s::CONSUMER);
  CHECK(serving_default_fits({}).empty());
}

// The shipped runtime's default of `form_factor`.
const s::ServingGpuFit& shipped_default(s::FormFactor form_factor) {
  const s::ServingRuntime& runtime =
      *testing::shipped_catalog().serving_runtimes().find("tensorrt-llm")->value;
  for (const s::ServingGpuFit& d : runtime.default_fit()) {
    if (d.form_factor() == form_factor) return d;
  }
  FAIL("no default of form factor " << s::FormFactor_Name(form_factor));
  return runtime.default_fit(0);
}

TEST_CASE("the shipped serving defaults are the means of the shipped fits by form factor") {
  const Catalog& catalog = testing::shipped_catalog();
  const s::ServingRuntime& runtime = *catalog.serving_runtimes().find("tensorrt-llm")->value;
  CHECK(runtime.default_fit_size() == 3);
  for (const s::FormFactor form_factor : {s::SXM, s::PCIE}) {
    std::set<std::string> names;
    double compute = 0, memory = 0, layer = 0, kv = 0, expert = 0, expert_layer = 0, base = 0,
           per_rank = 0, fp8_kv = 0;
    int fp8_kv_fits = 0;  // the FP8 cache's fraction: the mean over the fits that give it
    for (const s::ServingGpuFit& f : runtime.gpu()) {
      if (catalog.gpus().find(f.gpu())->value->form_factor() != form_factor) continue;
      names.insert(f.gpu());
      compute += f.compute_fraction();
      memory += f.memory_fraction();
      layer += f.layer_overhead_us();
      kv += f.kv_reread_fraction();
      if (f.has_fp8_kv_reread_fraction()) {
        fp8_kv += f.fp8_kv_reread_fraction();
        ++fp8_kv_fits;
      }
      expert += f.expert_matmul_fraction();
      expert_layer += f.expert_layer_overhead_us();
      base += f.memory_overhead_gib();
      per_rank += f.tensor_parallel_memory_gib();
    }
    const double n = static_cast<double>(names.size());
    const s::ServingGpuFit& d = shipped_default(form_factor);
    CAPTURE(s::FormFactor_Name(form_factor));
    CHECK(d.compute_fraction() == Approx(compute / n));
    CHECK(d.memory_fraction() == Approx(memory / n));
    CHECK(d.layer_overhead_us() == Approx(layer / n));
    CHECK(d.kv_reread_fraction() == Approx(kv / n));
    REQUIRE(fp8_kv_fits > 0);
    CHECK(d.fp8_kv_reread_fraction() == Approx(fp8_kv / fp8_kv_fits));
    CHECK(d.expert_matmul_fraction() == Approx(expert / n));
    CHECK(d.expert_layer_overhead_us() == Approx(expert_layer / n));
    CHECK(d.memory_overhead_gib() == Approx(base / n));
    CHECK(d.tensor_parallel_memory_gib() == Approx(per_rank / n));
  }
  // Today's fits (a refit changes these lines on purpose): SXM the H100 SXM, H200, A100 SXM4 80GB
  // and GH200; PCIE the L40S, L40 and H100 NVL (the hand-written defaults had 0.934 and 0.853).
  const s::ServingGpuFit &sxm = shipped_default(s::SXM), &pcie = shipped_default(s::PCIE);
  CHECK(sxm.compute_fraction() == Approx((0.834 + 0.955 + 1.000 + 0.836) / 4));
  CHECK(pcie.memory_fraction() == Approx((0.853 + 0.780 + 0.772) / 3));
  CHECK(pcie.expert_layer_overhead_us() == Approx((2.7 + 69.3 + 35.5) / 3));
  // The FP8 cache's re-read fraction: SXM's of the H100 SXM, H200 and GH200 (the A100's runs keep
  // 16-bit caches), the 16-bit one's of all four.
  CHECK(sxm.fp8_kv_reread_fraction() == Approx((0.714 + 0.873 + 0.810) / 3));
  CHECK(sxm.kv_reread_fraction() == Approx((0.405 + 0.500 + 0.478 + 0.495) / 4));
  // The FP8 matmul fraction only the H100 SXM fits: SXM's default, none for the PCIe cards.
  CHECK(sxm.fp8_matmul_fraction() == Approx(0.701));
  CHECK_FALSE(pcie.has_fp8_matmul_fraction());
  // No consumer GPU is fitted: the consumer default is the PCIe cards'.
  s::ServingGpuFit consumer = shipped_default(s::CONSUMER);
  consumer.set_form_factor(s::PCIE);
  CHECK(consumer.SerializeAsString() == pcie.SerializeAsString());
}

}  // namespace
}  // namespace clustersim
