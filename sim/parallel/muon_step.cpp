// Newton-Schulz GEMMs of Muon's optimizer step, weight by weight.
#include "sim/parallel/muon_step.h"

#include <algorithm>
#include <string>

#include "sim/workload/transformer_dimensions.h"

namespace clustersim {

namespace {

// kNewtonSchulzSteps iterations on `count` m x n matrices (m <= n).
Picoseconds iterations(int64_t m, int64_t n, int64_t count, const ComputeModel& compute) {
  const Picoseconds product = compute.matmul(m, m, n, count, true);  // X X^T, and B X alike
  const Picoseconds square = compute.matmul(m, m, m, count, true);   // A^2
  return Picoseconds(kNewtonSchulzSteps * (2 * product.count() + square.count()));
}

}  // namespace

double newton_schulz_flops(int64_t m, int64_t n) {
  const double small = std::min(m, n), large = std::max(m, n);
  return kNewtonSchulzSteps * (4 * small * small * large + 2 * small * small * small);
}

NewtonSchulzTime newton_schulz_time(const std::vector<LayerOp>& ops, const schema::Transformer& t,
                                    int tensor_parallel, const ComputeModel& compute) {
  NewtonSchulzTime time;
  for (const LayerOp& op : ops) {
    if (op.kind != LayerOp::Kind::kMatmul || op.name == "logits" || op.name == "scores" ||
        op.name == "values") {
      continue;
    }
    // The weight is k x n (the op multiplies m x k activations by it), `count` of them.
    auto orthogonalize = [&](int64_t rows) {
      const int64_t m = std::min(rows, op.k), n = std::max(rows, op.k);
      (op.expert ? time.expert : time.dense) += iterations(m, n, op.count, compute);
    };
    if (op.name == "qkv") {
      const int64_t d = head_dim(t);
      orthogonalize(t.num_attention_heads() * d / tensor_parallel);
      orthogonalize(kv_heads(t) * d / tensor_parallel);
      orthogonalize(kv_heads(t) * d / tensor_parallel);
    } else {
      orthogonalize(op.n);
    }
  }
  return time;
}

}  // namespace clustersim
