// Bytes of the optimizer's passes and gradient buffers; Megatron-Core's bucket size.
#include "sim/parallel/optimizer_step.h"

#include <algorithm>

#include "sim/parallel/memory_model.h"

namespace clustersim {

namespace s = schema;

double optimizer_bytes_per_parameter(s::Optimizer optimizer, s::Precision precision) {
  const double update = optimizer == s::ADAM                                   ? 28
                        : optimizer == s::SGD_MOMENTUM || optimizer == s::MUON ? 20
                                                                               : 12;
  const bool master_copy = precision != s::FP32 && precision != s::TF32;
  return update + 12 + (precision == s::FP16 ? 6 + 8 : 0) + (master_copy ? 6 : 0);
}

double gradient_accumulation_bytes(s::Precision precision, bool deepspeed) {
  if (!deepspeed) return precision == s::FP16 ? 6 : 0;
  return precision == s::BF16 ? 10 : precision == s::FP16 ? 6 : 12;
}

GradientBufferPassBytes gradient_buffer_pass_bytes(s::Precision precision, const s::Parallelism& p,
                                                   int expert_data_parallel) {
  if (p.zero_stage() > 0 || p.deepspeed_pipeline_engine()) return {};
  const double g = gradient_reduce_bytes(precision, p);
  const double shared = (!p.has_zero_gradient_buffer() || p.zero_gradient_buffer() ? g : 0) +
                        (p.check_for_nan_in_grad() ? g : 0);
  const int ranks = p.data_parallel() * p.context_parallel();
  const s::GradientScaling scaling = p.gradient_scaling();
  const bool before = scaling != s::AVERAGE_IN_COLLECTIVE && scaling != s::PER_TOKEN_LOSS;
  const bool dense_scaled = before && ranks > 1;
  const bool expert_scaled =
      before ? ranks > 1 : scaling == s::AVERAGE_IN_COLLECTIVE && expert_data_parallel != ranks;
  return {shared + (dense_scaled ? 2 * g : 0), shared + (expert_scaled ? 2 * g : 0)};
}

double megatron_bucket_parameters(int data_parallel_ranks) {
  return std::max(40e6, 1e6 * data_parallel_ranks);
}

}  // namespace clustersim
