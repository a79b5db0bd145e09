// Which sustained fraction a training step takes, and the values derived from fitted ones.
#include "sim/hw/sustained_fraction.h"

#include <set>
#include <string>

#include "sim/hw/compute_model.h"
#include "sim/io/catalog.h"
#include "sim/util/check.h"
#include "sim/workload/element_size.h"

namespace clustersim {

namespace s = schema;

const s::MatmulEfficiency* matmul_efficiency(const s::Gpu& gpu, s::Precision precision) {
  for (const s::MatmulEfficiency& e : gpu.matmul_efficiency()) {
    if (e.precision() == precision) return &e;
  }
  return nullptr;
}

std::optional<double> step_sustained_fraction(const s::Gpu& gpu, s::Precision precision,
                                              s::Fp8Recipe fp8_recipe) {
  if (const s::MatmulEfficiency* e = matmul_efficiency(gpu, precision)) {
    if (precision == s::FP8 && fp8_recipe == s::MXFP8 && e->has_mxfp8_sustained_fraction()) {
      return e->mxfp8_sustained_fraction();
    }
    if (e->has_sustained_fraction()) return e->sustained_fraction();
  }
  if (gpu.has_sustained_compute_fraction()) return gpu.sustained_compute_fraction();
  return std::nullopt;
}

std::optional<double> sixteen_bit_sustained_fraction(const s::Gpu& gpu, s::Precision precision,
                                                     s::Fp8Recipe fp8_recipe) {
  if (precision == s::FP4) {
    const s::MatmulEfficiency* fp8 = matmul_efficiency(gpu, s::FP8);
    if (fp8 != nullptr && fp8->has_sustained_fraction()) return fp8->sustained_fraction();
  }
  return step_sustained_fraction(gpu, precision, fp8_recipe);
}

bool step_sustained_fraction_fitted(const s::Gpu& gpu, s::Precision precision,
                                    s::Fp8Recipe fp8_recipe) {
  const s::MatmulEfficiency* e = matmul_efficiency(gpu, precision);
  return step_sustained_fraction(gpu, precision, fp8_recipe).has_value() &&
         !(e != nullptr && e->has_sustained_transfer()) && !gpu.has_sustained_server_transfer();
}

bool compute_constants_fitted(const s::Gpu& gpu, s::Precision precision, bool training_step,
                              s::Fp8Recipe fp8_recipe) {
  const bool narrow = bytes_per_element(precision) < 2;
  const bool mxfp8_inside = precision == s::FP4 && gpu.peak_tflops().fp8() > 0;
  const bool gemms = matmul_efficiency(gpu, precision) != nullptr &&
                     (!narrow || matmul_efficiency(gpu, sixteen_bit_format(gpu)) != nullptr) &&
                     (!mxfp8_inside || matmul_efficiency(gpu, s::FP8) != nullptr);
  const bool attention =
      gpu.has_flash_attention_fraction() || gpu.attention_efficiency_size() > 0;
  const bool kernels =
      gemms && gpu.has_memory_efficiency_fraction() && attention && !efficiencies_are_priors(gpu);
  return kernels && (!training_step || step_sustained_fraction_fitted(gpu, precision, fp8_recipe));
}

double transferred_sustained_fraction(const s::Gpu& gpu, s::Precision from, const s::Gpu* reference,
                                      s::Precision precision) {
  const std::optional<double> own = step_sustained_fraction(gpu, from);
  CLUSTERSIM_CHECK(own.has_value(), "a transfer without its own fraction");
  if (reference == nullptr) return *own;
  const std::optional<double> reference_from = step_sustained_fraction(*reference, from),
                              reference_to = step_sustained_fraction(*reference, precision);
  CLUSTERSIM_CHECK(reference_from && reference_to, "a transfer without its reference's fractions");
  return *own * *reference_to / *reference_from;
}

double server_transferred_sustained_fraction(const s::Gpu& same_chip, const s::Gpu& ratio_of,
                                             const s::Gpu& ratio_to, s::Precision ratio_precision,
                                             s::Precision precision, s::Fp8Recipe fp8_recipe) {
  const std::optional<double> same = step_sustained_fraction(same_chip, precision, fp8_recipe),
                              of = step_sustained_fraction(ratio_of, ratio_precision),
                              to = step_sustained_fraction(ratio_to, ratio_precision);
  CLUSTERSIM_CHECK(same && of && to, "a server transfer without its GPUs' fractions");
  return *same * *of / *to;
}

const std::vector<RuntimeDefault>& runtime_defaults() {
  static const std::vector<RuntimeDefault> defaults = {
      {"default_matmul_max_fraction", "matmul_efficiency.max_fraction",
       [](const s::Gpu& gpu) -> std::optional<double> {
         const s::MatmulEfficiency* e = matmul_efficiency(gpu, sixteen_bit_format(gpu));
         if (e == nullptr || !e->has_max_fraction()) return std::nullopt;
         return e->max_fraction();
       }},
      {"default_matmul_overhead_us", "matmul_efficiency.overhead_us",
       [](const s::Gpu& gpu) -> std::optional<double> {
         const s::MatmulEfficiency* e = matmul_efficiency(gpu, sixteen_bit_format(gpu));
         if (e == nullptr || !e->has_overhead_us()) return std::nullopt;
         return e->overhead_us();
       }},
      {"default_memory_efficiency_fraction", "memory_efficiency_fraction",
       [](const s::Gpu& gpu) -> std::optional<double> {
         if (!gpu.has_memory_efficiency_fraction()) return std::nullopt;
         return gpu.memory_efficiency_fraction();
       }},
      {"default_flash_attention_fraction", "flash_attention_fraction",
       [](const s::Gpu& gpu) -> std::optional<double> {
         if (!gpu.has_flash_attention_fraction()) return std::nullopt;
         return gpu.flash_attention_fraction();
       }},
      {"default_sustained_compute_fraction", "sustained_compute_fraction",
       [](const s::Gpu& gpu) -> std::optional<double> {
         if (!gpu.has_sustained_compute_fraction()) return std::nullopt;
         return gpu.sustained_compute_fraction();
       }},
  };
  return defaults;
}

bool efficiencies_fitted(const s::Gpu& gpu) {
  if (efficiencies_are_priors(gpu)) return false;
  for (const RuntimeDefault& d : runtime_defaults()) {
    if (!d.value(gpu)) return false;
  }
  return true;
}

std::optional<double> runtime_default(const std::vector<const s::Gpu*>& gpus,
                                      const RuntimeDefault& d) {
  std::set<std::pair<std::string, double>> fits;  // architecture, value
  for (const s::Gpu* gpu : gpus) {
    if (efficiencies_fitted(*gpu)) fits.emplace(gpu->architecture(), *d.value(*gpu));
  }
  if (fits.empty()) return std::nullopt;
  double total = 0;
  for (const auto& [architecture, value] : fits) total += value;
  return total / static_cast<double>(fits.size());
}

}  // namespace clustersim
