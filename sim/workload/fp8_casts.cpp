// Bytes of Transformer Engine's FP8 casts from the GEMM shapes of a layer.
#include "sim/workload/fp8_casts.h"

namespace clustersim {

namespace s = schema;

double fp8_cast_bytes_per_element(s::Fp8Recipe recipe) {
  constexpr double kCast = 2 + 1 + 1;  // read 16 bits, write two 1-byte layouts
  constexpr double kAmax = 2;          // current scaling's pass over the 16-bit tensor
  return recipe == s::CURRENT_SCALING ? kCast + kAmax : kCast;
}

Fp8CastBytes fp8_cast_bytes(const std::vector<LayerOp>& ops, s::Fp8Recipe recipe,
                            int tensor_parallel) {
  using Kind = LayerOp::Kind;
  const double per_element = fp8_cast_bytes_per_element(recipe);
  Fp8CastBytes bytes;
  for (size_t i = 0; i < ops.size(); ++i) {
    const LayerOp& op = ops[i];
    if (op.kind != Kind::kMatmul || op.sixteen_bit) continue;
    const auto count = static_cast<double>(op.count);
    // Under sequence parallelism a gathered input is cast on the rank's shard before the
    // all-gather, and the gradient of a reduce-scattered output before its all-gather.
    const bool gathered = i > 0 && ops[i - 1].kind == Kind::kTensorAllGather;
    const bool scattered = i + 1 < ops.size() && ops[i + 1].kind == Kind::kTensorReduceScatter;
    const double rows = static_cast<double>(op.m);
    bytes.forward += per_element * count * rows / (gathered ? tensor_parallel : 1) * op.k;
    bytes.backward += per_element * count * rows / (scattered ? tensor_parallel : 1) * op.n;
  }
  return bytes;
}

double fp8_weight_cast_bytes(double parameters, s::Fp8Recipe recipe, bool fp8_parameters) {
  if (fp8_parameters) return (1 + 1) * parameters;
  return fp8_cast_bytes_per_element(recipe) * parameters;
}

}  // namespace clustersim
