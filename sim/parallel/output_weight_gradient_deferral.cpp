// Deferred output-layer weight gradients: how many micro-batches, and what each keeps.
#include "sim/parallel/output_weight_gradient_deferral.h"

#include <algorithm>

namespace clustersim {

int deferred_output_micro_batches(const schema::Parallelism& p, int micro_batches) {
  if (!p.defer_output_weight_gradient()) return 0;
  const int limit = p.output_weight_gradient_deferral_limit();
  return limit > 0 ? std::min(limit, micro_batches) : micro_batches;
}

double deferred_output_bytes(const schema::Transformer& t, const schema::TrainingJob& job,
                             const schema::Parallelism& p) {
  const double tokens =
      static_cast<double>(job.sequence_length()) / p.context_parallel() * p.micro_batch_size();
  const double tp = p.tensor_parallel();
  const double gradient = 2.0 * tokens * static_cast<double>(t.vocab_size()) / tp;
  const double input = 2.0 * tokens * t.hidden_size() / (p.sequence_parallel() ? tp : 1.0);
  return gradient + input;
}

}  // namespace clustersim
