// Delayed scaling's amax buffers and reduction group (amax_reduction.h).
#include "sim/parallel/amax_reduction.h"

namespace clustersim {
namespace {

// Transformer Engine's FP8 tensors per GEMM (module/base.py: 3 forward, 2 backward) in fp32.
constexpr double kForwardAmaxBytes = 3 * 4.0;
constexpr double kBackwardAmaxBytes = 2 * 4.0;

}  // namespace

bool reduces_amax(const schema::TrainingJob& job) {
  const schema::Fp8Recipe recipe = job.fp8_recipe();
  return job.precision() == schema::FP8 &&
         (recipe == schema::DELAYED_SCALING || recipe == schema::FP8_RECIPE_UNSPECIFIED);
}

AmaxBytes& AmaxBytes::operator+=(const AmaxBytes& o) {
  forward += o.forward;
  backward += o.backward;
  return *this;
}

AmaxBytes amax_bytes(const std::vector<LayerOp>& ops) {
  AmaxBytes bytes;
  for (const LayerOp& op : ops) {
    if (op.kind != LayerOp::Kind::kMatmul || op.sixteen_bit) continue;
    bytes.forward += kForwardAmaxBytes * static_cast<double>(op.count);
    bytes.backward += kBackwardAmaxBytes * static_cast<double>(op.count);
  }
  return bytes;
}

std::vector<int> amax_reduction_group(const PipelinePlan& plan) {
  std::vector<int> gpus;
  for (int replica = 0; replica < plan.data_parallel; ++replica) {
    for (int rank = 0; rank < plan.tensor_parallel * plan.context_parallel; ++rank) {
      gpus.push_back(plan.gpu(replica, 0, rank));
    }
  }
  return gpus;
}

}  // namespace clustersim
