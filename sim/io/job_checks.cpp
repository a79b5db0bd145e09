// The checks of a scenario's job (its budget's size, LoRA, precision, kernels and model options)
// and the model as the job trains it.
#include "sim/io/job_checks.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "sim/util/number_format.h"
#include "sim/util/units.h"
#include "sim/workload/expert_load.h"
#include "sim/workload/fp4_overrides.h"

namespace clustersim {
namespace {

namespace s = schema;

// A budget must ask for one optimizer step at least (less was run and priced as a whole step,
// silently) and kMaxBudgetSteps at most.
void check_budget_size(const FieldChecker& job) {
  const auto& m = static_cast<const s::TrainingJob&>(job.message());
  if (m.global_batch_size() < 1) return;
  const double batch = m.global_batch_size();
  // `one_step`: a step in the field's unit ("4.19e+06 tokens").
  const auto limit = [&](const char* field, double steps, const std::string& largest,
                         const std::string& one_step = "") {
    if (steps > 0 && steps < 1) {
      job.error(field, "asks for " + format_significant(steps, 3) +
                           " optimizer steps, less than one: a run trains whole steps (one is " +
                           one_step + ")");
    } else if (steps > kMaxBudgetSteps) {
      job.error(field, "asks for " + format_significant(steps, 3) + " optimizer steps, more than the " +
                           format_number(kMaxBudgetSteps) + " (2^53) a run may have" + largest);
    }
  };
  if (m.has_steps()) limit("steps", static_cast<double>(m.steps()), "");
  if (m.has_token_budget() && m.sequence_length() >= 1 && std::isfinite(m.token_budget())) {
    const double tokens_per_step = batch * m.sequence_length();
    limit("token_budget", m.token_budget() / tokens_per_step,
          "; at most " + format_limit(kMaxBudgetSteps * tokens_per_step, 3) + " tokens",
          format_significant(tokens_per_step, 3) + " tokens");
  }
  if (m.has_epochs() && m.dataset().num_samples() >= 1 && std::isfinite(m.epochs())) {
    const double samples = static_cast<double>(m.dataset().num_samples());
    limit("epochs", m.epochs() * samples / batch,
          "; at most " + format_limit(kMaxBudgetSteps * batch / samples, 3) + " epochs",
          format_significant(batch / samples, 3) + " epochs");
  }
}

// LoRA: a rank, each target named once, and a dense transformer without latent attention or
// multi-token prediction (lora.h adapts the dense layer's four linear layers only).
void check_lora(const FieldChecker& job, const s::Model& model) {
  const FieldChecker lora = job.child("lora");
  const s::Lora& adapters = static_cast<const s::TrainingJob&>(job.message()).lora();
  // Each adapted weight has the hidden size as one side, and A . B cannot exceed the rank of its
  // smaller side: a higher rank only adds weights and work (rank 100,000 on Llama-2-7B gave
  // adapters of 1.5 TiB per GPU).
  if (lora.require("rank") && lora.at_least("rank", 1) && model.has_transformer()) {
    const int hidden = model.transformer().hidden_size();
    if (adapters.rank() > hidden) {
      lora.error("rank", std::to_string(adapters.rank()) + " is above the hidden_size of \"" +
                             model.name() + "\" (" + std::to_string(hidden) +
                             "), the largest rank an adapter's product can have");
    }
  }
  lora.in_range("dropout", 0, 1);
  if (adapters.has_dropout_position() && !(adapters.dropout() > 0)) {
    lora.error("dropout_position", "needs a dropout above 0 (no dropout kernel runs without one)");
  }
  const auto& targets = adapters.target_modules();
  for (int i = 0; i < targets.size(); ++i) {
    if (targets[i] == s::LORA_TARGET_UNSPECIFIED) {
      lora.error("target_modules",
                 "must name a linear layer: LINEAR_QKV, LINEAR_PROJ, "
                 "LINEAR_FC1 or LINEAR_FC2",
                 i);
    } else if (std::find(targets.begin(), targets.begin() + i, targets[i]) != targets.begin() + i) {
      lora.error("target_modules", "names " + s::LoraTarget_Name(targets[i]) + " twice", i);
    }
  }
  if (!model.has_transformer() || model.transformer().has_moe() ||
      model.transformer().has_latent_attention() ||
      model.transformer().has_hybrid_layer_pattern() ||
      model.transformer().multi_token_prediction_layers() > 0) {
    job.error("lora",
              "applies to dense transformers only (no experts, latent attention, hybrid layer "
              "pattern or multi-token prediction)");
  }
  // Muon would orthogonalize the frozen base's weights too (muon_step.h counts every weight).
  if (static_cast<const s::TrainingJob&>(job.message()).optimizer() == s::MUON) {
    job.error("lora", "is not simulated with optimizer MUON");
  }
}

// fp4_overrides: precision FP4; each module named once, in one list, and one `model` has (when
// given); at most the model's layers in 16 bits, and none of a model with a sliding window (whose
// windowed layers are timed apart).
void check_fp4_overrides(const FieldChecker& job, const s::Model* model) {
  const auto& m = static_cast<const s::TrainingJob&>(job.message());
  if (m.precision() != s::FP4) {
    job.error("fp4_overrides", "applies to precision FP4 only");
    return;
  }
  const FieldChecker overrides = job.child("fp4_overrides");
  const s::Fp4Overrides& o = m.fp4_overrides();
  const s::Transformer* t = is_transformer(model) ? &model->transformer() : nullptr;
  // `others`: the list a module of `modules` must not be in too (null: none).
  const auto check_modules = [&](const char* field,
                                 const google::protobuf::RepeatedField<int>& modules,
                                 const google::protobuf::RepeatedField<int>* others) {
    for (int i = 0; i < modules.size(); ++i) {
      const auto module = static_cast<s::QuantizedModule>(modules[i]);
      const std::string name = s::QuantizedModule_Name(module);
      if (module == s::QUANTIZED_MODULE_UNSPECIFIED) {
        overrides.error(field,
                        "must name a module: ATTENTION_QKV, ATTENTION_OUT, LATENT_PROJECTIONS or "
                        "MAMBA_OUT_PROJECTION",
                        i);
      } else if (std::find(modules.begin(), modules.begin() + i, modules[i]) !=
                 modules.begin() + i) {
        overrides.error(field, "names " + name + " twice", i);
      } else if (others != nullptr &&
                 std::find(others->begin(), others->end(), modules[i]) != others->end()) {
        overrides.error(field, name + " is in sixteen_bit_modules too: a module runs one format", i);
      } else if (t != nullptr && !has_quantized_module(*t, module)) {
        overrides.error(field, "\"" + model->name() + "\" has no " + name + " to override", i);
      }
    }
  };
  check_modules("sixteen_bit_modules", o.sixteen_bit_modules(), nullptr);
  check_modules("mxfp8_modules", o.mxfp8_modules(), &o.sixteen_bit_modules());
  if (!overrides.has("sixteen_bit_last_layers") ||
      !overrides.at_least("sixteen_bit_last_layers", 0) || t == nullptr) {
    return;
  }
  if (o.sixteen_bit_last_layers() > t->num_layers()) {
    overrides.error("sixteen_bit_last_layers",
                    "exceeds the " + std::to_string(t->num_layers()) + " layers of \"" +
                        model->name() + "\"");
  } else if (o.sixteen_bit_last_layers() > 0 &&
             (t->has_sliding_window() || t->has_compressed_sparse_attention())) {
    overrides.error("sixteen_bit_last_layers",
                    "is not simulated for a model with a sliding window (\"" + model->name() +
                        "\")");
  }
}

}  // namespace

void check_job(const FieldChecker& job, const s::Model* model) {
  const auto& m = static_cast<const s::TrainingJob&>(job.message());
  job.require("global_batch_size") &&
      job.in_range("global_batch_size", 1, static_cast<double>(kMaxGlobalBatch));
  job.require_enum("precision");
  job.require_enum("optimizer");
  if (m.budget_case() == s::TrainingJob::BUDGET_NOT_SET) {
    job.error_here("needs a budget: token_budget, epochs or steps");
  }
  job.positive("token_budget");
  job.positive("epochs");
  job.at_least("steps", 1);
  if (m.has_epochs() && !(m.has_dataset() && m.dataset().has_num_samples())) {
    job.error("epochs", "needs dataset.num_samples");
  }
  if (m.has_dataset()) {
    job.child("dataset").at_least("num_samples", 1);
    // nan passed where no loader reads it. At most the memory of the largest host the checks
    // allow (a PiB): a sample of 1e300 bytes printed the dataset's size in 300 digits of GiB.
    job.child("dataset").positive("mean_sample_bytes") &&
        job.child("dataset").in_range("mean_sample_bytes", 0,
                                      FieldChecker::kMaxMemory_gib * kBytesPerGibibyte);
  }
  const bool narrow = m.precision() == s::FP8 || m.precision() == s::FP4;
  for (const char* field : {"fp8_recipe", "fp8_parameters"}) {
    if (job.has(field) && !narrow) job.error(field, "applies to precision FP8 or FP4");
  }
  // NVFP4 is the FP4 recipe and FP4 takes no other (its FP8 scales are the block scales).
  if (m.has_fp8_recipe() && narrow && (m.fp8_recipe() == s::NVFP4) != (m.precision() == s::FP4)) {
    job.error("fp8_recipe", m.precision() == s::FP4 ? "precision FP4 takes only NVFP4"
                                                    : "NVFP4 needs precision FP4");
  }
  if (m.sixteen_bit_states() && m.precision() != s::BF16 && m.precision() != s::FP16 &&
      m.precision() != s::FP8) {
    job.error("sixteen_bit_states", "needs precision BF16, FP16 or FP8");
  }
  if (m.bf16_optimizer_moments()) {
    if (m.optimizer() != s::ADAM && m.optimizer() != s::SGD_MOMENTUM && m.optimizer() != s::MUON) {
      job.error("bf16_optimizer_moments",
                "needs an optimizer with moments (ADAM, SGD_MOMENTUM, MUON)");
    } else if (m.precision() == s::FP32 || m.precision() == s::TF32) {
      job.error("bf16_optimizer_moments", "needs precision BF16, FP16, FP8 or FP4 (a master copy)");
    } else if (m.sixteen_bit_states()) {
      job.error("bf16_optimizer_moments", "sixteen_bit_states keeps 16-bit moments already");
    }
  }
  if (job.has("fp4_unfused_hadamard_cast") && m.precision() != s::FP4) {
    job.error("fp4_unfused_hadamard_cast", "applies to precision FP4 only");
  }
  if (m.fp8_activation_input_store()) {
    if (!narrow) {
      job.error("fp8_activation_input_store", "applies to precision FP8 or FP4");
    } else if (model != nullptr && (!model->has_transformer() || model->transformer().has_moe() ||
                                    model->transformer().has_hybrid_layer_pattern())) {
      job.error("fp8_activation_input_store",
                "applies to dense transformers only (no experts or hybrid layer pattern)");
    }
  }
  if (m.fp8_weight_transpose_per_use() &&
      !(m.fp8_parameters() && m.precision() == s::FP8 &&
        (m.fp8_recipe() == s::FP8_RECIPE_UNSPECIFIED || m.fp8_recipe() == s::DELAYED_SCALING ||
         m.fp8_recipe() == s::CURRENT_SCALING))) {
    job.error("fp8_weight_transpose_per_use",
              "needs fp8_parameters under precision FP8 with a per-tensor recipe "
              "(DELAYED_SCALING or CURRENT_SCALING)");
  }
  if (job.has("fp8_attention") && !narrow) {
    job.error("fp8_attention", "applies to precision FP8 or FP4");
  }
  if (job.has("fp8_attention_recipe")) {
    const s::Fp8Recipe recipe = m.fp8_attention_recipe();
    if (!m.fp8_attention()) {
      job.error("fp8_attention_recipe", "needs fp8_attention");
    } else if (recipe != s::DELAYED_SCALING && recipe != s::CURRENT_SCALING) {
      job.error("fp8_attention_recipe",
                "cuDNN's FP8 attention takes DELAYED_SCALING or CURRENT_SCALING (per-tensor "
                "scales)");
    }
  } else if (m.fp8_attention() && m.precision() == s::FP4) {
    job.error("fp8_attention", "under precision FP4 needs fp8_attention_recipe (NVFP4 has no "
                               "attention kernel: DELAYED_SCALING or CURRENT_SCALING)");
  }
  if (m.fp8_attention() && m.fp8_recipe() == s::TORCHAO_TENSORWISE) {
    job.error("fp8_attention", "torchao's Float8 (fp8_recipe TORCHAO_TENSORWISE) converts only "
                               "linear layers: its attention stays 16-bit");
  }
  if (m.unfused_cross_entropy() && m.transformer_engine_cross_entropy()) {
    job.error("unfused_cross_entropy", "excludes transformer_engine_cross_entropy (one loss kernel)");
  }
  if (job.has("torch_cross_entropy") && job.require_enum("torch_cross_entropy") &&
      (m.transformer_engine_cross_entropy() || m.unfused_cross_entropy())) {
    job.error("torch_cross_entropy",
              "excludes transformer_engine_cross_entropy and unfused_cross_entropy (one loss kernel)");
  }
  if (job.has("fp8_output_layer") && (m.precision() != s::FP8 || m.fp8_recipe() != s::MXFP8)) {
    job.error("fp8_output_layer", "applies to precision FP8 with fp8_recipe MXFP8 only");
  }
  if (m.attention_library() == s::FLASH_ATTENTION_2) {
    if (m.fp8_attention()) {
      job.error("attention_library", "FlashAttention-2 has no FP8 kernel (job.fp8_attention)");
    } else if (m.has_flash_attention() && !m.flash_attention()) {
      job.error("attention_library", "needs fused attention (job.flash_attention)");
    }
  }
  // Megatron-Bridge's Kimi-K2 recipes turn FP8 weights off under Muon: they need the distributed
  // optimizer's buffers (v0.5.0 scripts/performance/configs/kimi/kimi_llm_pretrain.py).
  if (m.optimizer() == s::MUON && m.fp8_parameters()) {
    job.error("fp8_parameters", "needs the distributed optimizer, which Muon does not run");
  }
  check_budget_size(job);
  if (m.has_fp4_overrides()) check_fp4_overrides(job, model);
  if (model == nullptr) return;
  if (m.has_expert_routing()) {
    // A model that is not a transformer has no experts either (the default transformer's).
    const RoutingProblem problem = expert_routing_problem(
        is_transformer(model) ? model->transformer() : s::Transformer::default_instance(),
        m.expert_routing());
    if (!problem.reason.empty()) {
      if (problem.field.empty()) {
        job.error("expert_routing", problem.reason);
      } else {
        job.child("expert_routing").error(problem.field, problem.reason);
      }
    }
  }
  if (m.has_lora()) check_lora(job, *model);
  // muon_step.h orthogonalizes the weights of attention and MLP layers, not a Mamba mixer's.
  if (m.optimizer() == s::MUON && is_transformer(model) &&
      model->transformer().has_hybrid_layer_pattern()) {
    job.error("optimizer", "MUON is not simulated for a model with a hybrid_layer_pattern yet");
  }
  if (job.has("mamba_fused_norm_projection") &&
      !(is_transformer(model) && model->transformer().has_mamba())) {
    job.error("mamba_fused_norm_projection",
              "applies to a model with Mamba layers; \"" + model->name() + "\" has none");
  }
  if (is_transformer(model)) {
    if (job.has("separate_projections") && model->transformer().has_latent_attention()) {
      job.error("separate_projections", "applies to query, key and value projections; \"" +
                                            model->name() + "\" has latent attention");
    }
    const int model_modules = model->transformer().multi_token_prediction_layers();
    if (job.has("multi_token_prediction_layers") &&
        job.at_least("multi_token_prediction_layers", 0) &&
        m.multi_token_prediction_layers() > model_modules) {
      job.error("multi_token_prediction_layers",
                "exceeds the model's " + std::to_string(model_modules) +
                    ": a job trains the model's multi-token-prediction modules, fewer or none");
    }
    if (job.require("sequence_length") && job.at_least("sequence_length", 1) &&
        m.sequence_length() > model->transformer().max_sequence_length()) {
      job.error("sequence_length", "exceeds the model's max_sequence_length (" +
                                       std::to_string(model->transformer().max_sequence_length()) +
                                       ")");
    }
  } else {
    if (m.has_token_budget()) job.error("token_budget", "applies to transformers; use epochs");
    // What a transformer's attention, output layer and loss run: nothing of a CNN's step.
    for (const char* field : {"sequence_length", "multi_token_prediction_layers", "flash_attention",
                              "attention_library", "fp8_output_layer",
                              "transformer_engine_cross_entropy", "unfused_cross_entropy",
                              "torch_cross_entropy", "separate_projections"}) {
      if (job.has(field)) job.error(field, "applies to transformers only");
    }
  }
}

void apply_job_to_model(LoadedScenario* loaded) {
  const s::TrainingJob& job = loaded->scenario().job();
  if (!job.has_multi_token_prediction_layers() || !is_transformer(loaded->model)) return;
  loaded->trained_model = std::make_unique<s::Model>(*loaded->model);
  s::Transformer* t = loaded->trained_model->mutable_transformer();
  t->set_multi_token_prediction_layers(job.multi_token_prediction_layers());
  if (job.multi_token_prediction_layers() == 0) {
    t->clear_multi_token_prediction_pattern();
    t->clear_multi_token_prediction_shared();
    t->clear_multi_token_prediction_sixteen_bit();
  }
  loaded->model = loaded->trained_model.get();
}

}  // namespace clustersim
