// Bytes of the optimizer's passes and gradient buffers; Megatron-Core's bucket size.
#include "sim/parallel/optimizer_step.h"

#include <algorithm>

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

double megatron_bucket_parameters(int data_parallel_ranks) {
  return std::max(40e6, 1e6 * data_parallel_ranks);
}

}  // namespace clustersim
