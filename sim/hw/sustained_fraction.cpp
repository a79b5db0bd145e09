// Which sustained fraction a training step takes, and the fractions derived from fitted ones.
#include "sim/hw/sustained_fraction.h"

#include <map>
#include <string>

#include "sim/io/catalog.h"
#include "sim/util/check.h"

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

bool step_sustained_fraction_fitted(const s::Gpu& gpu, s::Precision precision,
                                    s::Fp8Recipe fp8_recipe) {
  const s::MatmulEfficiency* e = matmul_efficiency(gpu, precision);
  return step_sustained_fraction(gpu, precision, fp8_recipe).has_value() &&
         !(e != nullptr && e->has_sustained_transfer());
}

double transferred_sustained_fraction(const s::Gpu& gpu, s::Precision from, const s::Gpu& reference,
                                      s::Precision precision) {
  const std::optional<double> own = step_sustained_fraction(gpu, from),
                              reference_from = step_sustained_fraction(reference, from),
                              reference_to = step_sustained_fraction(reference, precision);
  CLUSTERSIM_CHECK(own && reference_from && reference_to, "a transfer without its fractions");
  return *own * *reference_to / *reference_from;
}

std::optional<double> default_sustained_compute_fraction(const std::vector<const s::Gpu*>& gpus) {
  std::map<std::string, std::pair<double, int>> by_architecture;  // sum, count
  for (const s::Gpu* gpu : gpus) {
    if (!gpu->has_sustained_compute_fraction() || efficiencies_are_priors(*gpu)) continue;
    auto& [sum, count] = by_architecture[gpu->architecture()];
    sum += gpu->sustained_compute_fraction();
    ++count;
  }
  if (by_architecture.empty()) return std::nullopt;
  double total = 0;
  for (const auto& [architecture, sum_count] : by_architecture) {
    total += sum_count.first / sum_count.second;
  }
  return total / static_cast<double>(by_architecture.size());
}

}  // namespace clustersim
