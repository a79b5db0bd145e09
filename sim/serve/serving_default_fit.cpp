// The serving runtime's default fits, the means of its fitted GPUs' by form factor.
#include "sim/serve/serving_default_fit.h"

#include "sim/util/check.h"

namespace clustersim {
namespace {

namespace s = schema;
namespace pb = google::protobuf;

bool add_in_card(s::FormFactor form_factor) {
  return form_factor == s::PCIE || form_factor == s::CONSUMER;
}

// The fits `form_factor`'s default averages (serving_default_fit's rule).
std::vector<const s::ServingGpuFit*> averaged_fits(const std::vector<FittedServingGpu>& fitted,
                                                   s::FormFactor form_factor) {
  std::vector<const s::ServingGpuFit*> same, add_in, all;
  for (const FittedServingGpu& g : fitted) {
    if (g.form_factor == form_factor) same.push_back(g.fit);
    if (add_in_card(g.form_factor)) add_in.push_back(g.fit);
    all.push_back(g.fit);
  }
  if (!same.empty()) return same;
  if (add_in_card(form_factor) && !add_in.empty()) return add_in;
  return all;
}

}  // namespace

s::ServingGpuFit serving_default_fit(const std::vector<FittedServingGpu>& fitted,
                                     s::FormFactor form_factor) {
  CLUSTERSIM_CHECK(!fitted.empty(), "a default fit without fitted GPUs");
  const std::vector<const s::ServingGpuFit*> fits = averaged_fits(fitted, form_factor);
  s::ServingGpuFit mean;
  mean.set_form_factor(form_factor);
  const pb::Descriptor* descriptor = s::ServingGpuFit::descriptor();
  const pb::Reflection* reflection = s::ServingGpuFit::GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const pb::FieldDescriptor* field = descriptor->field(i);
    if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_DOUBLE) continue;
    double total = 0;
    int count = 0;
    for (const s::ServingGpuFit* fit : fits) {
      if (!reflection->HasField(*fit, field)) continue;
      total += reflection->GetDouble(*fit, field);
      ++count;
    }
    if (count > 0) reflection->SetDouble(&mean, field, total / count);
  }
  return mean;
}

std::vector<s::ServingGpuFit> serving_default_fits(const std::vector<FittedServingGpu>& fitted) {
  std::vector<s::ServingGpuFit> defaults;
  if (fitted.empty()) return defaults;
  for (const s::FormFactor form_factor : {s::SXM, s::PCIE, s::CONSUMER}) {
    defaults.push_back(serving_default_fit(fitted, form_factor));
  }
  return defaults;
}

s::ServingGpuFit serving_gpu_fit(const s::ServingRuntime& runtime, const s::Gpu& gpu,
                                 bool* calibrated) {
  for (const s::ServingGpuFit& fit : runtime.gpu()) {
    if (fit.gpu() == gpu.name()) return fit;
  }
  *calibrated = false;
  for (const s::ServingGpuFit& fit : runtime.default_fit()) {
    if (fit.form_factor() == gpu.form_factor()) return fit;
  }
  CLUSTERSIM_CHECK(false, "a serving runtime without the default of a form factor");
  return {};
}

}  // namespace clustersim
