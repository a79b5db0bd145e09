// Bytes of Transformer Engine's FP8 and FP4 casts from the GEMM shapes of a layer.
#include "sim/workload/fp8_casts.h"

namespace clustersim {

namespace s = schema;

namespace {

bool block_scaled(s::Fp8Recipe recipe) {
  return recipe == s::BLOCKWISE || recipe == s::MXFP8 || recipe == s::NVFP4;
}

}  // namespace

s::Fp8Recipe gemm_recipe(const s::TrainingJob& job) {
  return job.precision() == s::FP4 ? s::NVFP4 : job.fp8_recipe();
}

s::Fp8Recipe attention_recipe(const s::TrainingJob& job) {
  return job.has_fp8_attention_recipe() ? job.fp8_attention_recipe() : gemm_recipe(job);
}

double narrow_copy_bytes(s::Fp8Recipe recipe) {
  if (recipe == s::NVFP4) return 0.5 + 1.0 / 16;  // E2M1 pairs, an E4M3 scale per 16
  return 1 + (block_scaled(recipe) ? 1.0 / 32 : 0);
}

double gemm_input_bytes(const s::TrainingJob& job) {
  if (job.precision() == s::FP4) return narrow_copy_bytes(s::NVFP4);
  return job.precision() == s::FP8 ? 1 : 2;
}

double gathered_gradient_bytes(const s::TrainingJob& job) {
  if (job.precision() != s::FP8 && job.precision() != s::FP4) return 2;
  const s::Fp8Recipe recipe = gemm_recipe(job);
  return block_scaled(recipe) ? 2 * narrow_copy_bytes(recipe) : 1;
}

int fp8_copies(s::Fp8Recipe recipe, bool any_layout) {
  return block_scaled(recipe) || !any_layout ? 2 : 1;
}

namespace {

// Bytes per element of a cast writing `copies` narrow copies; NVFP4's second (its Hadamard
// transform's) read the tensor again under `unfused_hadamard`.
double cast_bytes_per_element(s::Fp8Recipe recipe, int copies, bool unfused_hadamard) {
  constexpr double kRead = 2;  // the 16-bit tensor
  constexpr double kAmax = 2;  // the amax pass over it
  const bool amax = recipe == s::CURRENT_SCALING || recipe == s::NVFP4;
  const bool second_read = unfused_hadamard && recipe == s::NVFP4 && copies == 2;
  return kRead * (second_read ? 2 : 1) + (amax ? kAmax : 0) + copies * narrow_copy_bytes(recipe);
}

}  // namespace

double fp8_cast_bytes_per_element(s::Fp8Recipe recipe, bool any_layout, bool unfused_hadamard) {
  return cast_bytes_per_element(recipe, fp8_copies(recipe, any_layout), unfused_hadamard);
}

namespace {

// TORCHAO_TENSORWISE's casts of matmul `op` (the header), `gathered` and `scattered` as below.
void add_torchao_casts(const LayerOp& op, bool gathered, bool scattered, int tensor_parallel,
                       bool fp8_parameters, Fp8CastBytes* bytes) {
  constexpr double kTransposeBytes = 2;  // read 1, write 1
  const double row_wise = cast_bytes_per_element(s::CURRENT_SCALING, 1, false);
  const double count = static_cast<double>(op.count);
  const double inputs = count * static_cast<double>(op.m) * op.k;
  const double gradients = count * static_cast<double>(op.m) * op.n;
  const double weights = count * static_cast<double>(op.k) * op.n;
  const bool weight_gradient = !op.frozen;
  if (gathered) {
    bytes->forward += row_wise * inputs / tensor_parallel;
    if (weight_gradient) bytes->backward += kTransposeBytes * inputs;
  } else if (!op.shares_input) {
    bytes->forward += row_wise * inputs;
    if (weight_gradient) bytes->saved_input_transposes += inputs;
  }
  if (scattered) {
    bytes->backward +=
        (row_wise / tensor_parallel + (weight_gradient ? kTransposeBytes : 0)) * gradients;
  } else {
    bytes->backward +=
        cast_bytes_per_element(s::CURRENT_SCALING, weight_gradient ? 2 : 1, false) * gradients;
  }
  if (!fp8_parameters) bytes->forward += row_wise * weights;
  bytes->backward += kTransposeBytes * weights;
}

}  // namespace

Fp8CastBytes fp8_cast_bytes(const std::vector<LayerOp>& ops, s::Fp8Recipe recipe, bool any_layout,
                            int tensor_parallel, bool unfused_hadamard, bool fp8_parameters,
                            s::Fp8Recipe attention) {
  using Kind = LayerOp::Kind;
  const double per_element = fp8_cast_bytes_per_element(recipe, any_layout, unfused_hadamard);
  const double attention_per_element =
      attention == s::FP8_RECIPE_UNSPECIFIED
          ? per_element
          : fp8_cast_bytes_per_element(attention, any_layout, unfused_hadamard);
  const double frozen_per_element = cast_bytes_per_element(recipe, 1, unfused_hadamard);
  // A matmul in MXFP8 inside an FP4 step (LayerOp::mxfp8): MXFP8's two copies.
  const double mxfp8_per_element = fp8_cast_bytes_per_element(s::MXFP8, any_layout, false);
  // Per-tensor FP8 where the GEMMs need a transpose (the header): a gathered tensor's shard cast
  // row-wise only, the whole gathered tensor transposed in the backward (read 1, write 1).
  const bool transposed_after_gather = fp8_copies(recipe, any_layout) == 2 && !block_scaled(recipe);
  const double row_wise_per_element = cast_bytes_per_element(recipe, 1, unfused_hadamard);
  constexpr double kTransposeBytes = 2;
  Fp8CastBytes bytes;
  for (size_t i = 0; i < ops.size(); ++i) {
    const LayerOp& op = ops[i];
    if (op.kind == Kind::kAttention && op.fp8) {
      // The queries (and the output's gradient, of their shape) and the keys and values.
      const double queries = static_cast<double>(op.count) * op.m * op.k;
      bytes.forward += attention_per_element * (queries + op.key_value_elements);
      bytes.backward += attention_per_element * queries;
      continue;
    }
    if (op.kind != Kind::kMatmul || op.sixteen_bit) continue;
    const auto count = static_cast<double>(op.count);
    // Under sequence parallelism a gathered input is cast on the rank's shard before the
    // all-gather, and the gradient of a reduce-scattered output before its all-gather.
    const bool gathered = i > 0 && ops[i - 1].kind == Kind::kTensorAllGather;
    const bool scattered = i + 1 < ops.size() && ops[i + 1].kind == Kind::kTensorReduceScatter;
    if (recipe == s::TORCHAO_TENSORWISE) {
      add_torchao_casts(op, gathered, scattered, tensor_parallel, fp8_parameters, &bytes);
      continue;
    }
    const double rows = static_cast<double>(op.m);
    const double element = op.mxfp8    ? mxfp8_per_element
                           : op.frozen ? frozen_per_element
                                       : per_element;
    const bool split = transposed_after_gather && !op.frozen;
    if (gathered && split) {
      bytes.forward += row_wise_per_element * count * rows / tensor_parallel * op.k;
      bytes.backward += kTransposeBytes * count * rows * op.k;
    } else {
      bytes.forward += element * count * rows / (gathered ? tensor_parallel : 1) * op.k;
    }
    if (scattered && split) {
      bytes.backward +=
          (row_wise_per_element / tensor_parallel + kTransposeBytes) * count * rows * op.n;
    } else {
      bytes.backward += element * count * rows / (scattered ? tensor_parallel : 1) * op.n;
    }
  }
  return bytes;
}

double narrow_weight_bytes(s::Fp8Recipe recipe) {
  return recipe == s::NVFP4 ? narrow_copy_bytes(recipe) : 1;
}

bool fp8_weights_gathered_in_fp8(s::Fp8Recipe recipe, bool fp8_parameters) {
  return fp8_parameters && recipe != s::MXFP8;
}

double fp8_weight_cast_bytes(double parameters, s::Fp8Recipe recipe, bool any_layout,
                             bool fp8_parameters, bool frozen) {
  if (recipe == s::TORCHAO_TENSORWISE) return fp8_parameters ? 2 * parameters : 0;  // amax read
  if (frozen && fp8_parameters && recipe == s::MXFP8) return 0;
  if (!fp8_weights_gathered_in_fp8(recipe, fp8_parameters)) {
    return fp8_cast_bytes_per_element(recipe, any_layout) * parameters;
  }
  // The second copy from the first: read one, write one.
  const double copy = narrow_weight_bytes(recipe);
  return fp8_copies(recipe, any_layout) == 2 ? 2 * copy * parameters : 0;
}

}  // namespace clustersim
