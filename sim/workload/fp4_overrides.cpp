// Where an FP4 step's GEMMs leave NVFP4 (fp4_overrides.h).
#include "sim/workload/fp4_overrides.h"

#include <algorithm>

#include "sim/workload/fp8_casts.h"

namespace clustersim {

namespace s = schema;

const std::vector<std::string>& quantized_module_ops(s::QuantizedModule module) {
  static const std::vector<std::string> kQkv = {"qkv", "q", "k", "v"};
  static const std::vector<std::string> kOut = {"attention out"};
  static const std::vector<std::string> kLatent = {"latent down", "latent up"};
  static const std::vector<std::string> kMambaOut = {"mamba out_proj"};
  static const std::vector<std::string> kNone;
  switch (module) {
    case s::ATTENTION_QKV:
      return kQkv;
    case s::ATTENTION_OUT:
      return kOut;
    case s::LATENT_PROJECTIONS:
      return kLatent;
    case s::MAMBA_OUT_PROJECTION:
      return kMambaOut;
    default:
      return kNone;
  }
}

bool has_quantized_module(const s::Transformer& t, s::QuantizedModule module) {
  const std::string& pattern = t.hybrid_layer_pattern();
  switch (module) {
    case s::ATTENTION_QKV:
    case s::ATTENTION_OUT:
      return pattern.empty() || pattern.find('*') != std::string::npos;
    case s::LATENT_PROJECTIONS:
      return t.has_moe_latent_size();
    case s::MAMBA_OUT_PROJECTION:
      return t.has_mamba() && pattern.find('M') != std::string::npos;
    default:
      return false;
  }
}

namespace {

bool in_modules(const std::string& name,
                const google::protobuf::RepeatedField<int>& modules) {
  return std::any_of(modules.begin(), modules.end(), [&](int m) {
    const std::vector<std::string>& names = quantized_module_ops(static_cast<s::QuantizedModule>(m));
    return std::find(names.begin(), names.end(), name) != names.end();
  });
}

}  // namespace

std::vector<LayerOp> with_fp4_overrides(const s::Fp4Overrides& overrides,
                                        std::vector<LayerOp> ops) {
  using K = LayerOp::Kind;
  const double nvfp4_input = narrow_copy_bytes(s::NVFP4);
  const double nvfp4_gradient = 2 * nvfp4_input;
  for (size_t i = 0; i < ops.size(); ++i) {
    LayerOp& op = ops[i];
    if (op.kind != K::kMatmul || op.sixteen_bit) continue;
    const bool sixteen_bit = in_modules(op.name, overrides.sixteen_bit_modules());
    const bool mxfp8 = !sixteen_bit && in_modules(op.name, overrides.mxfp8_modules());
    if (!sixteen_bit && !mxfp8) continue;
    op.sixteen_bit = sixteen_bit;
    op.mxfp8 = mxfp8;
    const double input = sixteen_bit ? 2 : 1;
    const double gradient = sixteen_bit ? 2 : 2 * narrow_copy_bytes(s::MXFP8);
    if (i > 0 && ops[i - 1].kind == K::kTensorAllGather) {
      ops[i - 1].bytes *= input / nvfp4_input;
    }
    if (i + 1 < ops.size() && ops[i + 1].kind == K::kTensorReduceScatter &&
        ops[i + 1].backward_bytes) {
      *ops[i + 1].backward_bytes *= gradient / nvfp4_gradient;
    }
  }
  return ops;
}

int first_sixteen_bit_layer(const s::Transformer& t, const s::TrainingJob& job) {
  return t.num_layers() - job.fp4_overrides().sixteen_bit_last_layers();
}

}  // namespace clustersim
