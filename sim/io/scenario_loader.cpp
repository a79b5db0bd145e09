// Checks of a scenario: its job, cluster, parallelism and sweep axes, against the model and the
// candidate instances it names.
#include "sim/io/scenario_loader.h"

#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "sim/cost/cost_checks.h"
#include "sim/input/input_checks.h"
#include "sim/io/axis_ranges.h"
#include "sim/io/catalog_reference.h"
#include "sim/io/field_checker.h"
#include "sim/parallel/activation_offload.h"
#include "sim/parallel/expert_parallel.h"
#include "sim/sweep/axis_values.h"
#include "sim/sweep/fixed_layout_check.h"
#include "sim/sweep/pool_checks.h"
#include "sim/util/number_format.h"
#include "sim/workload/expert_load.h"
#include "sim/workload/transformer_dimensions.h"

namespace clustersim {
namespace {

namespace s = schema;

bool is_transformer(const s::Model* model) { return model && model->has_transformer(); }

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
  lora.require("rank") && lora.at_least("rank", 1);
  lora.in_range("dropout", 0, 1);
  const auto& targets = static_cast<const s::TrainingJob&>(job.message()).lora().target_modules();
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
    job.child("dataset").positive("mean_sample_bytes");  // nan passed where no loader reads it
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
  if (job.has("fp4_unfused_hadamard_cast") && m.precision() != s::FP4) {
    job.error("fp4_unfused_hadamard_cast", "applies to precision FP4 only");
  }
  if (job.has("fp8_attention") && m.precision() != s::FP8) {
    job.error("fp8_attention", "applies to precision FP8 only");
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

// The model as the job trains it (LoadedScenario::model): a copy of the catalog's when the job
// sets its own multi_token_prediction_layers, which check_job has found sound.
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

}  // namespace

// A tensor-parallel degree must split the attention heads (and KV heads) evenly.
std::string tensor_parallel_problem(int tp, const schema::Model* model) {
  if (!is_transformer(model)) {
    return tp == 1 ? "" : "tensor parallelism applies to transformers only";
  }
  const s::Transformer& t = model->transformer();
  const int64_t kv = kv_heads(t);
  if (t.num_attention_heads() % tp != 0) {
    return std::to_string(tp) + " does not divide the model's num_attention_heads (" +
           std::to_string(t.num_attention_heads()) + ")";
  }
  if (kv % tp != 0) {
    return std::to_string(tp) + " does not divide the model's num_kv_heads (" + std::to_string(kv) +
           ")";
  }
  // Megatron-Core's MambaMixer splits its heads and its B/C groups by tensor-parallel rank.
  if (t.has_mamba()) {
    for (auto [size, field] : {std::pair{t.mamba().num_heads(), "mamba.num_heads"},
                               std::pair{t.mamba().num_groups(), "mamba.num_groups"}}) {
      if (size % tp != 0) {
        return std::to_string(tp) + " does not divide the model's " + field + " (" +
               std::to_string(size) + ")";
      }
    }
  }
  // Megatron splits the hidden state (sequence parallelism, row-parallel outputs) and the FFN by
  // tensor-parallel rank.
  for (auto [size, field] : {std::pair{t.hidden_size(), "hidden_size"},
                             std::pair{t.ffn_hidden_size(), "ffn_hidden_size"}}) {
    if (size % tp != 0) {
      return std::to_string(tp) + " does not divide the model's " + field + " (" +
             std::to_string(size) + ")";
    }
  }
  return "";
}

std::string pipeline_parallel_problem(int pp, const schema::Model* model) {
  if (!is_transformer(model)) {
    return pp == 1 ? "" : "pipeline parallelism applies to transformers only";
  }
  const int layers = model->transformer().num_layers();
  return pp <= layers ? ""
                      : std::to_string(pp) + " exceeds the model's num_layers (" +
                            std::to_string(layers) + ")";
}

// Model chunks of an interleaved schedule: a stage's layers split into at most its layers.
std::string virtual_stages_problem(int vs, const schema::Model* model) {
  if (!is_transformer(model)) return "";
  const int layers = model->transformer().num_layers();
  return vs <= layers ? ""
                      : std::to_string(vs) + " exceeds the model's num_layers (" +
                            std::to_string(layers) + ")";
}

std::string context_parallel_problem(int cp, int tp, const s::Parallelism& p,
                                     const s::Model* model, const s::TrainingJob& job) {
  if (cp == 1) return "";
  if (!is_transformer(model)) return "context parallelism applies to transformers only";
  if (job.has_flash_attention() && !job.flash_attention()) {
    return "context parallelism needs fused attention (job.flash_attention)";
  }
  const s::Transformer& t = model->transformer();
  if (t.has_sliding_window()) {
    return "context parallelism with sliding-window attention is not simulated yet";
  }
  if (t.has_hybrid_layer_pattern()) {
    return "context parallelism of a hybrid model's layers is not simulated yet";
  }
  const int seq = job.sequence_length();
  const s::ContextParallelComm comm = p.context_parallel_comm();
  if (comm == s::TORCH_ALL_GATHER && t.kind() != s::DECODER) {
    return "TORCH_ALL_GATHER needs a decoder's causal attention (PyTorch's load balancing "
           "requires is_causal)";
  }
  const bool all_to_all = comm == s::ALL_TO_ALL;
  // The load-balanced causal split cuts each sequence into 2 CP chunks.
  const int64_t chunks = t.kind() == s::DECODER && !all_to_all ? 2 * int64_t{cp} : cp;
  if (seq % chunks != 0) {
    return std::to_string(cp) + " needs the sequence length (" + std::to_string(seq) +
           ") divisible by " + std::to_string(chunks) +
           (chunks > cp ? " (2 chunks per rank for the causal load balance)" : "");
  }
  if (p.sequence_parallel() && (seq / cp) % tp != 0) {
    return std::to_string(cp) + " leaves " + std::to_string(seq / cp) +
           " tokens per rank, not divisible by tensor parallel " + std::to_string(tp) +
           " (sequence parallelism)";
  }
  const int64_t kv = kv_heads(t);
  if (all_to_all && ((t.num_attention_heads() / tp) % cp != 0 || (kv / tp) % cp != 0)) {
    return "ALL_TO_ALL needs the attention and KV heads per tensor-parallel rank (" +
           std::to_string(t.num_attention_heads() / tp) + " and " + std::to_string(kv / tp) +
           ") divisible by " + std::to_string(cp);
  }
  return "";
}

namespace {

// "1, 2, 4": integers as a message lists them.
template <class Integers>
std::string comma_list(const Integers& values) {
  std::string text;
  for (const auto value : values) text += (text.empty() ? "" : ", ") + std::to_string(value);
  return text;
}

// Checks a parallelism degree given either in `parallelism.field` or as sweep axis values.
template <class Problem>
void check_degree_values(const FieldChecker& owner, const char* field, Problem problem) {
  const bool repeated = owner.message().GetDescriptor()->FindFieldByName(field)->is_repeated();
  const int count = repeated ? owner.size(field) : (owner.has(field) ? 1 : 0);
  for (int i = 0; i < count; ++i) {
    const int index = repeated ? i : -1;
    const double value = owner.number(field, index);
    if (value < 1) continue;  // reported by at_least
    const std::string why = problem(static_cast<int>(value));
    if (!why.empty()) owner.error(field, why, index);
  }
}

// The degrees shared by Parallelism (one value each) and Sweep (a list each).
void check_parallelism_fields(const FieldChecker& p, const s::Model* model) {
  for (const char* f : {"tensor_parallel", "pipeline_parallel", "context_parallel",
                        "micro_batch_size", "virtual_stages", "data_parallel_shard"}) {
    p.at_least(f, 1);
  }
  p.in_range("zero_stage", 0, 3);
  check_degree_values(p, "tensor_parallel",
                      [&](int tp) { return tensor_parallel_problem(tp, model); });
  check_degree_values(p, "pipeline_parallel",
                      [&](int pp) { return pipeline_parallel_problem(pp, model); });
  check_degree_values(p, "virtual_stages",
                      [&](int vs) { return virtual_stages_problem(vs, model); });
}

// Layers listed per stage: each at least 1 (at least 0 when listed per model chunk: one count per
// stage x virtual stage of an interleaved schedule), adding up to the model's `layers`, alone
// (their count against the pipeline's stages is a configuration's: sweep/configuration_checks.h).
void check_stage_layers(const FieldChecker& p, int layers) {
  const auto& m = static_cast<const s::Parallelism&>(p.message());
  if (m.stage_layers_size() == 0) return;
  if (m.has_first_stage_layers() || m.has_last_stage_layers() || m.embedding_in_pipeline_split() ||
      m.loss_in_pipeline_split()) {
    p.error("stage_layers",
            "cannot be combined with first/last_stage_layers or "
            "embedding/loss_in_pipeline_split");
  }
  const bool per_chunk =
      m.schedule() == s::INTERLEAVED_ONE_F_ONE_B && m.virtual_stages() > 1 &&
      m.stage_layers_size() == int64_t{m.pipeline_parallel()} * m.virtual_stages();
  const int least = per_chunk ? 0 : 1;
  int64_t sum = 0;  // counts up to 2^31 - 1 each: an int sum wraps, and could wrap to num_layers
  for (int i = 0; i < m.stage_layers_size(); ++i) {
    if (m.stage_layers(i) < least) {
      p.error("stage_layers",
              "must be at least " + std::to_string(least) + ", got " +
                  std::to_string(m.stage_layers(i)),
              i);
    }
    sum += m.stage_layers(i);
  }
  if (sum != layers) {
    p.error("stage_layers", "add up to " + std::to_string(sum) + " layers, the model has " +
                                std::to_string(layers) + " (num_layers)");
  }
}

// Uneven layouts and block recomputation against the model's layers.
void check_pipeline_split(const FieldChecker& p, const s::Model* model) {
  const auto& m = static_cast<const s::Parallelism&>(p.message());
  p.at_least("recompute_num_layers", 1);
  p.at_least("activation_offload_layers", 0);
  p.at_least("first_stage_layers", 0);
  p.at_least("last_stage_layers", 0);
  if (m.has_recompute_num_layers() && m.has_recompute() && m.recompute() != s::RECOMPUTE_FULL) {
    p.error("recompute_num_layers", "applies to recompute RECOMPUTE_FULL only");
  }
  const bool uneven = m.has_first_stage_layers() || m.has_last_stage_layers();
  if (uneven && (m.embedding_in_pipeline_split() || m.loss_in_pipeline_split())) {
    p.error(m.has_first_stage_layers() ? "first_stage_layers" : "last_stage_layers",
            "cannot be combined with embedding_in_pipeline_split or loss_in_pipeline_split "
            "(Megatron-Core allows one or the other)");
  }
  if (model != nullptr && !is_transformer(model)) {
    // Settings of a transformer's tensor-parallel GEMMs, context-parallel attention, pipeline
    // split and layer recomputation: a CNN trains data parallel only, keeping every activation
    // (its recompute value is each configuration's problem, recompute being a sweep axis).
    for (const char* field :
         {"overlap_tensor_communication", "context_parallel_comm", "embedding_in_pipeline_split",
          "loss_in_pipeline_split", "recompute_num_layers", "recompute_modules",
          "recompute_latent_up_projection", "compiled_recompute", "activation_offload_layers"}) {
      if (p.has(field)) p.error(field, "applies to transformers only");
    }
  }
  if (!is_transformer(model)) return;
  const int layers = model->transformer().num_layers();
  for (const char* field : {"first_stage_layers", "last_stage_layers"}) {
    if (p.has(field) && p.number(field) > layers) {
      p.error(field, std::to_string(static_cast<int>(p.number(field))) +
                         " exceeds the model's num_layers (" + std::to_string(layers) + ")");
    }
  }
  if (m.first_stage_layers() + m.last_stage_layers() > layers && m.first_stage_layers() <= layers &&
      m.last_stage_layers() <= layers) {
    p.error("last_stage_layers", "with first_stage_layers (" +
                                     std::to_string(m.first_stage_layers()) + ") exceeds the "
                                     "model's num_layers (" + std::to_string(layers) + ")");
  }
  check_stage_layers(p, layers);
}

void check_parallelism(const FieldChecker& p, const s::Model* model) {
  const auto& m = static_cast<const s::Parallelism&>(p.message());
  check_parallelism_fields(p, model);
  p.at_least("data_parallel", 1);
  p.at_least("expert_parallel", 1);
  p.at_least("expert_tensor_parallel", 1);
  check_degree_values(p, "expert_parallel",
                      [&](int ep) { return expert_parallel_problem(ep, model); });
  check_degree_values(p, "expert_tensor_parallel",
                      [&](int etp) { return expert_tensor_parallel_problem(etp, model); });
  p.at_least("expert_communication_sms", 1);
  if (m.has_expert_communication_sms() && !m.overlap_expert_communication()) {
    p.error("expert_communication_sms", "applies with overlap_expert_communication only");
  }
  p.at_least("expert_combine_sms", 1);
  for (const char* field : {"tensor_overlap_attention_out_sms", "tensor_overlap_mlp_down_sms"}) {
    p.at_least(field, 1);
    if (p.has(field) && !(m.overlap_tensor_communication() && m.sequence_parallel())) {
      p.error(field, "applies with overlap_tensor_communication and sequence_parallel only");
    }
  }
  if (m.has_expert_combine_sms() && m.expert_dispatcher() != s::EXPERT_NODE_DEDUPLICATED) {
    p.error("expert_combine_sms",
            "applies with expert_dispatcher EXPERT_NODE_DEDUPLICATED only (HybridEP's kernels)");
  }
  // Its expert_tensor_parallel 1 (absent: the tensor parallel degree, a sweep axis): each
  // configuration's problem (configuration_checks.cpp).
  if (m.has_shared_experts_side_stream() && model != nullptr &&
      !(is_transformer(model) && model->transformer().moe().num_shared_experts() > 0)) {
    p.error("shared_experts_side_stream",
            "applies to a model with shared experts; \"" + model->name() + "\" has none");
  } else if (m.shared_experts_side_stream() && m.overlap_expert_communication()) {
    p.error("shared_experts_side_stream",
            "cannot be combined with overlap_expert_communication (not simulated)");
  }
  if (m.expert_paged_stash() && !m.fused_expert_mlp()) {
    p.error("expert_paged_stash", "applies with fused_expert_mlp only");
  }
  for (const char* field :
       {"expert_dispatcher", "fused_expert_mlp", "single_launch_grouped_experts"}) {
    if (p.has(field) && model != nullptr &&
        !(model->has_transformer() && model->transformer().has_moe())) {
      p.error(field, "applies to mixture-of-experts models only");
    }
  }
  if (m.recompute_latent_up_projection()) {
    if (is_transformer(model) && !model->transformer().has_latent_attention()) {
      p.error("recompute_latent_up_projection",
              "needs a model with latent_attention; \"" + model->name() + "\" has none");
    }
    if (m.recompute() == s::RECOMPUTE_FULL) {
      p.error("recompute_latent_up_projection",
              "cannot be combined with recompute RECOMPUTE_FULL (which reruns whole layers)");
    }
  }
  if (m.compiled_recompute() && is_transformer(model) &&
      (model->transformer().has_moe() || model->transformer().has_latent_attention() ||
       model->transformer().has_hybrid_layer_pattern() ||
       model->transformer().multi_token_prediction_layers() > 0)) {
    p.error("compiled_recompute",
            "is simulated for dense transformers only (no experts, latent attention, hybrid "
            "layer pattern or multi-token prediction); \"" +
                model->name() + "\" is not one");
  }
  if (m.recompute_modules_size() > 0 && m.recompute() == s::RECOMPUTE_FULL) {
    p.error("recompute_modules",
            "cannot be combined with recompute RECOMPUTE_FULL (which reruns whole layers)");
  }
  for (int module : m.recompute_modules()) {
    const bool experts = module == s::RECOMPUTE_MOE || module == s::RECOMPUTE_MOE_ACT;
    if (experts && is_transformer(model) && !model->transformer().has_moe()) {
      p.error("recompute_modules", std::string(s::RecomputeModule_Name(module)) +
                                       " needs a mixture-of-experts model; \"" + model->name() +
                                       "\" has no moe");
    }
  }
  if (m.distributed_optimizer() && m.zero_stage() > 0) {
    p.error("distributed_optimizer", "and zero_stage both shard optimizer states: choose one");
  }
  // zero3_synchronous_fetch, keep_fp8_transpose_cache and fsdp2 outside zero_stage 3: each
  // configuration's problem (configuration_checks.cpp), zero_stage being a sweep axis.
  if (m.fsdp2() && m.zero3_synchronous_fetch()) {
    p.error("fsdp2", "and zero3_synchronous_fetch are two ZeRO-3 runtimes: choose one");
  }
  if (m.fsdp2_keep_forward_gather() && !m.fsdp2()) {
    p.error("fsdp2_keep_forward_gather", "is an FSDP2 option: needs fsdp2");
  }
  if (m.fsdp2_expert_reduce_in_weight_type() && !m.fsdp2()) {
    p.error("fsdp2_expert_reduce_in_weight_type", "is an FSDP2 option: needs fsdp2");
  }
  // Resharding after each forward while nothing is resharded after the backwards would gather a
  // layer a varying number of times: not simulated.
  if (m.fsdp2_defer_gradient_sync() && !m.fsdp2_keep_forward_gather()) {
    p.error("fsdp2_defer_gradient_sync", "needs fsdp2_keep_forward_gather (and fsdp2)");
  }
  // Dividing the micro-batches and pipeline_parallel > 1: each configuration's problem
  // (configuration_checks.cpp), both being sweep axes.
  p.at_least("pipeline_runs", 1);
  if (m.pipeline_runs() > 1 && m.deepspeed_pipeline_engine()) {
    p.error("pipeline_runs", "is torch.distributed.pipelining's: not with deepspeed_pipeline_engine");
  }
  // Pipeline parallel > 1, zero_stage, LoRA and the output layer's precision: each
  // configuration's problem (configuration_checks.cpp).
  p.at_least("output_weight_gradient_deferral_limit", 0);
  if (m.has_output_weight_gradient_deferral_limit() && !m.defer_output_weight_gradient()) {
    p.error("output_weight_gradient_deferral_limit",
            "applies with defer_output_weight_gradient only");
  }
  if (m.defer_output_weight_gradient() && m.deepspeed_pipeline_engine()) {
    p.error("defer_output_weight_gradient",
            "is Megatron-Core's: not with deepspeed_pipeline_engine");
  }
  if (m.defer_output_weight_gradient() && m.pipeline_runs() > 1) {
    p.error("defer_output_weight_gradient",
            "is Megatron-Core's, one pipeline schedule a step: not with pipeline_runs");
  }
  // Megatron's gradient-buffer passes. A zero_stage that a sweep lists: each configuration's,
  // where gradient_buffer_pass_bytes charges none.
  for (const char* pass :
       {"zero_gradient_buffer", "check_for_nan_in_grad", "gradient_scaling"}) {
    if (!p.has(pass)) continue;
    if (m.deepspeed_pipeline_engine()) {
      p.error(pass, "is Megatron's data-parallel wrapper's: not with deepspeed_pipeline_engine");
    } else if (m.zero_stage() > 0) {
      p.error(pass, "is Megatron's data-parallel wrapper's: not with a zero_stage");
    }
  }
  if (m.has_virtual_stages() && m.virtual_stages() > 1 &&
      m.schedule() != s::INTERLEAVED_ONE_F_ONE_B) {
    p.error("virtual_stages", "needs schedule INTERLEAVED_ONE_F_ONE_B");
  }
  check_pipeline_split(p, model);
}

void check_auto_parallelism(const FieldChecker& sweep, const s::Scenario& scenario,
                            const s::Model* model) {
  for (const char* listed : {"tensor_parallel", "pipeline_parallel", "context_parallel",
                             "micro_batch_size", "virtual_stages", "schedule"}) {
    if (sweep.has(listed)) sweep.error(listed, "cannot be listed beside auto_parallelism");
  }
  if (scenario.parallelism().has_data_parallel()) {
    sweep.error("auto_parallelism", "derives data parallelism: remove parallelism.data_parallel");
  }
  const FieldChecker automatic = sweep.child("auto_parallelism");
  automatic.at_least("micro_batch_size", 1);
  automatic.at_least("max_pipeline_parallel", 1);
  automatic.at_least("max_virtual_stages", 1);
  // Each chunk holds a layer: more chunks than layers give no layout, and 2^31 - 1 of them took
  // the enumeration 2^31 tries a layout.
  check_degree_values(automatic, "max_virtual_stages",
                      [&](int vs) { return virtual_stages_problem(vs, model); });
  automatic.at_least("max_context_parallel", 1);
  if (scenario.sweep().auto_parallelism().hybrid_sharding() && sweep.has("data_parallel_shard")) {
    sweep.error("data_parallel_shard",
                "cannot be listed beside auto_parallelism.hybrid_sharding (which chooses it)");
  }
}

// Hybrid sharding swept (its axis or auto_parallelism.hybrid_sharding) needs ZeRO-3 among the
// sweep's stages.
void check_hybrid_sharding_stage(const FieldChecker& sweep, const s::Scenario& scenario) {
  const s::Sweep& w = scenario.sweep();
  const std::vector<int> stages =
      axis_values<int>(w.zero_stage(), scenario.parallelism().zero_stage());
  if (std::find(stages.begin(), stages.end(), 3) != stages.end()) return;
  const std::string why =
      "hybrid sharding needs zero_stage 3 among the sweep's ZeRO stages "
      "(parallelism.zero_stage or sweep.zero_stage), which are " +
      comma_list(stages);
  if (w.data_parallel_shard_size() > 0) sweep.error("data_parallel_shard", why);
  if (w.auto_parallelism().hybrid_sharding()) {
    sweep.child("auto_parallelism").error("hybrid_sharding", why);
  }
}

// Caps on the nodes to be had of an instance type ("at most 2 p5 on spot").
void check_availability(const FieldChecker& constraints, const Catalog& catalog) {
  const auto& m = static_cast<const s::Constraints&>(constraints.message());
  for (int i = 0; i < m.availability_size(); ++i) {
    const FieldChecker cap = constraints.child("availability", i);
    cap.require("max_nodes") && cap.at_least("max_nodes", 0);
    if (cap.require("instance")) {
      resolve_reference(cap, "instance", -1, m.availability(i).instance(), catalog.instances(),
                        "instance type");
    }
  }
}

void check_constraints(const FieldChecker& constraints) {
  const auto& m = static_cast<const s::Constraints&>(constraints.message());
  constraints.at_least("min_gpus", 1);
  constraints.at_least("max_gpus", 1);
  constraints.positive("max_time_to_train_hours");
  constraints.positive("max_cost");
  if (m.has_min_gpus() && m.has_max_gpus() && m.min_gpus() > m.max_gpus()) {
    constraints.error("max_gpus", "is below min_gpus (" + std::to_string(m.min_gpus()) +
                                      "): no configuration can satisfy both");
  }
  if (m.has_max_cost()) constraints.require_enum("currency");
  if (m.has_currency() && !m.has_max_cost()) {
    constraints.error("currency", "applies to max_cost, which is not given");
  }
}

void check_sweep(const FieldChecker& sweep, const s::Scenario& scenario, const s::Model* model,
                 const Catalog& catalog) {
  sweep.distinct_lists(s::AxisRange::descriptor());  // ranges add to the axes checked here
  if (scenario.sweep().has_constraints()) check_availability(sweep.child("constraints"), catalog);
  check_parallelism_fields(sweep, model);
  sweep.at_least("nodes", 1);
  if (scenario.sweep().has_auto_parallelism()) check_auto_parallelism(sweep, scenario, model);
  if (scenario.sweep().data_parallel_shard_size() > 0 ||
      scenario.sweep().auto_parallelism().hybrid_sharding()) {
    check_hybrid_sharding_stage(sweep, scenario);
  }
  if (scenario.sweep().has_constraints()) check_constraints(sweep.child("constraints"));
}

// Every candidate's GPU must support the job's precision.
void check_precision(const FieldChecker& owner, const char* field, int index,
                     const s::InstanceType& instance, const Catalog& catalog,
                     s::Precision precision) {
  const s::PeakTflops& peak = catalog.gpu_of(instance).peak_tflops();
  const bool supported = precision == s::FP32   ? peak.has_fp32()
                         : precision == s::TF32 ? peak.has_tf32()
                         : precision == s::FP16 ? peak.has_fp16()
                         : precision == s::BF16 ? peak.has_bf16()
                         : precision == s::FP8  ? peak.has_fp8()
                         : precision == s::FP4  ? peak.has_fp4()
                         : precision == s::INT8 ? peak.has_int8_tops()
                                                : false;
  if (!supported) {
    owner.error(field,
                "GPU \"" + instance.gpu() + "\" of \"" + instance.name() + "\" has no " +
                    s::Precision_Name(precision) + " support (job.precision)",
                index);
  }
}

// MXFP8's 32-element block scales are in the tensor cores of Blackwell and later, which also
// brought FP4: a GPU with an FP4 peak has them.
void check_fp8_recipe(const FieldChecker& root, const s::InstanceType& instance,
                      const Catalog& catalog, const s::TrainingJob& job) {
  const s::Gpu& gpu = catalog.gpu_of(instance);
  if (job.precision() == s::FP8 && job.fp8_recipe() == s::MXFP8 && !gpu.peak_tflops().has_fp4()) {
    root.child("job").error("fp8_recipe",
                            "MXFP8 needs block-scaled FP8 tensor cores (Blackwell or later); GPU \"" +
                                gpu.name() + "\" (" + gpu.architecture() + ") of \"" +
                                instance.name() + "\" has none (use CURRENT_SCALING, "
                                "DELAYED_SCALING or BLOCKWISE)");
  }
}

// Each context-parallel degree (of parallelism or the sweep axis) against the job's sequence and
// the model's heads, with each tensor-parallel degree given (1 when auto_parallelism chooses).
void check_context_parallel(const FieldChecker& root, const LoadedScenario& loaded) {
  const s::Scenario& m = loaded.scenario();
  std::vector<int> tps = {m.parallelism().has_tensor_parallel() ? m.parallelism().tensor_parallel()
                                                                : 1};
  if (m.sweep().tensor_parallel_size() > 0) {
    tps.assign(m.sweep().tensor_parallel().begin(), m.sweep().tensor_parallel().end());
  }
  const bool swept = m.sweep().context_parallel_size() > 0;
  const FieldChecker owner = swept ? root.child("sweep") : root.child("parallelism");
  const int count = swept ? m.sweep().context_parallel_size() : 1;
  for (int i = 0; i < count; ++i) {
    const int cp = swept ? m.sweep().context_parallel(i) : m.parallelism().context_parallel();
    for (int tp : tps) {
      if (cp < 1 || tp < 1) continue;  // reported by at_least
      const std::string why = context_parallel_problem(cp, tp, m.parallelism(), loaded.model, m.job());
      if (why.empty()) continue;
      owner.error("context_parallel", why, swept ? i : -1);
      break;
    }
  }
}

// cluster.nvlink_domain_nodes needs an instance whose NVLink domain spans that many nodes.
void check_nvlink_domain_nodes(const FieldChecker& root, const s::Cluster& cluster,
                               const s::InstanceType& instance) {
  if (!cluster.has_nvlink_domain_nodes() || cluster.nvlink_domain_nodes() < 1) return;
  const int domain_nodes = nvlink_domain_nodes(instance);
  if (cluster.nvlink_domain_nodes() > domain_nodes) {
    root.child("cluster").error(
        "nvlink_domain_nodes",
        std::to_string(cluster.nvlink_domain_nodes()) + " is more than the " +
            std::to_string(domain_nodes) + " node(s) of an NVLink domain of \"" + instance.name() +
            "\"" + (instance.has_nvlink_domain_gpus() ? "" : " (it has no nvlink_domain_gpus)"));
  }
}

// A candidate on a GPU whose efficiencies are priors (efficiencies_are_priors) gets a warning: its
// times, and the costs made of them, are unverified.
void warn_prior_efficiencies(const FieldChecker& owner, int index, const s::InstanceType& instance,
                             const Catalog& catalog) {
  const s::Gpu& gpu = catalog.gpu_of(instance);
  if (!efficiencies_are_priors(gpu)) return;
  const bool second_hand = gpu.source().confidence() == s::UNVERIFIED;
  owner.warning("instance",
                "\"" + instance.name() + "\" runs on \"" + gpu.name() +
                    "\", whose efficiencies are priors, not fitted" +
                    (second_hand ? ", and whose peaks are second-hand" : "") + " (" +
                    gpu.efficiency_source().citation() +
                    "): its times and costs are unverified (rows marked calibrated: no)",
                index);
}

// The fields of a cluster of one instance type cannot describe pools.
void check_pools_alone(const FieldChecker& root, const s::Scenario& m) {
  const FieldChecker cluster = root.child("cluster");
  for (const char* field : {"instance", "nodes", "gpus_per_node", "nvlink_domain_nodes"}) {
    if (cluster.has(field)) {
      cluster.error(field, "cannot be given beside pools (a pool names its instance and nodes)");
    }
  }
  const FieldChecker sweep = root.child("sweep");
  for (const char* field : {"instance", "nodes"}) {
    if (sweep.has(field)) {
      sweep.error(field, "cannot be swept beside sweep.pool (its nodes are the axis)");
    }
  }
  if (m.sweep().pool_size() > 0 && m.cluster().pool_size() > 0) {
    sweep.error("pool", "replaces cluster.pool: give one of them");
  }
  if (m.parallelism().has_data_parallel()) {
    root.child("parallelism").error("data_parallel", "is derived per pool in a mix: remove it");
  }
  if (m.has_model() && m.job().has_dataloader()) {
    root.child("job").error("dataloader", "is not simulated on a cluster of pools yet");
  }
}

void check_inter_pool(const FieldChecker& cluster, const s::Cluster& m) {
  if (!m.has_inter_pool()) return;
  const FieldChecker network = cluster.child("inter_pool");
  const bool stated = m.inter_pool().kind() == s::InterPoolNetwork::STATED;
  if (stated) {
    network.require_rate("bandwidth_gbit_per_s");
  } else if (network.has("bandwidth_gbit_per_s")) {
    network.error("bandwidth_gbit_per_s", "applies to kind STATED");
  }
  if (!stated && network.has("latency_us")) network.error("latency_us", "applies to kind STATED");
  network.latency_us("latency_us");
}

// A pool's instance, node counts and owned nodes (cluster.pool[i] or sweep.pool[i]).
void check_pool(const FieldChecker& pool, const std::string& name, const Catalog& catalog,
                const s::Scenario& m, bool swept, LoadedScenario* loaded) {
  pool.at_least("owned_nodes", 0);
  if (swept) pool.at_least("nodes", 0);
  const int owned = static_cast<int>(pool.has("owned_nodes") ? pool.number("owned_nodes") : 0);
  if (swept) {
    if (pool.require("nodes")) {
      for (int i = 0; i < pool.size("nodes"); ++i) {
        if (pool.number("nodes", i) < owned) {
          pool.error("nodes", "is below owned_nodes (" + std::to_string(owned) + ")", i);
        }
      }
    }
  } else if (pool.require("nodes") && pool.at_least("nodes", 1) && pool.number("nodes") < owned) {
    pool.error("owned_nodes", "exceeds the pool's nodes");
  }
  if (!pool.require("instance")) return;
  const s::InstanceType* instance =
      resolve_reference(pool, "instance", -1, name, catalog.instances(), "instance type");
  if (instance == nullptr) return;
  if (!has_gpu(*instance)) {
    pool.error("instance",
               "\"" + name + "\" has no GPU (gpu_count is 0): a pool needs GPUs to train");
    return;
  }
  if (m.job().has_precision() && m.job().precision() != s::PRECISION_UNSPECIFIED) {
    check_precision(pool, "instance", -1, *instance, catalog, m.job().precision());
  }
  loaded->pool_instances.push_back(instance);
  warn_prior_efficiencies(pool, -1, *instance, catalog);
}

// Pools: every pool's instance has GPUs, at most one pool list, no field of a one-type cluster.
void check_pools(const FieldChecker& root, const Catalog& catalog, LoadedScenario* loaded) {
  const s::Scenario& m = loaded->scenario();
  check_pools_alone(root, m);
  check_inter_pool(root.child("cluster"), m.cluster());
  const bool swept = m.sweep().pool_size() > 0;
  const FieldChecker owner = swept ? root.child("sweep") : root.child("cluster");
  const int count = swept ? m.sweep().pool_size() : m.cluster().pool_size();
  for (int i = 0; i < count; ++i) {
    const std::string& name = swept ? m.sweep().pool(i).instance() : m.cluster().pool(i).instance();
    check_pool(owner.child("pool", i), name, catalog, m, swept, loaded);
  }
  if (static_cast<int>(loaded->pool_instances.size()) != count) loaded->pool_instances.clear();
  loaded->instances = loaded->pool_instances;
  if (is_transformer(loaded->model) || loaded->model == nullptr) return;
  root.error("model", "\"" + m.model() + "\": a cluster of pools trains transformers only");
}

// Activation offload copies over the GPU's link to host memory, which the catalog must give.
void check_host_link(const FieldChecker& root, const s::InstanceType& instance,
                     const Catalog& catalog) {
  const s::Parallelism& p = static_cast<const s::Scenario&>(root.message()).parallelism();
  if (p.activation_offload_layers() <= 0) return;
  const s::Gpu& gpu = catalog.gpu_of(instance);
  if (host_link_bytes_per_s(gpu) > 0) return;
  root.child("parallelism")
      .error("activation_offload_layers",
             "needs a link to host memory: \"" + gpu.name() + "\" of \"" + instance.name() +
                 "\" has neither host_link nor pcie in the catalog");
}

void resolve_instances(const FieldChecker& root, const Catalog& catalog, LoadedScenario* loaded) {
  const s::Scenario& m = loaded->scenario();
  const bool swept = m.has_sweep() && m.sweep().instance_size() > 0;
  const FieldChecker owner = swept ? root.child("sweep") : root.child("cluster");
  const int count = swept ? m.sweep().instance_size() : 1;
  for (int i = 0; i < count; ++i) {
    const int index = swept ? i : -1;
    const std::string& name = swept ? m.sweep().instance(i) : m.cluster().instance();
    const s::InstanceType* instance =
        resolve_reference(owner, "instance", index, name, catalog.instances(), "instance type");
    if (instance == nullptr) continue;
    if (!has_gpu(*instance)) {
      owner.error("instance", "\"" + name + "\" has no GPU (gpu_count is 0): it cannot train",
                  index);
      continue;
    }
    loaded->instances.push_back(instance);
    warn_prior_efficiencies(owner, index, *instance, catalog);
    if (m.cluster().has_gpus_per_node() && m.cluster().gpus_per_node() > instance->gpu_count()) {
      root.child("cluster").error("gpus_per_node", std::to_string(m.cluster().gpus_per_node()) +
                                                       " is more than the " +
                                                       std::to_string(instance->gpu_count()) +
                                                       " GPUs of \"" + instance->name() + "\"");
    }
    if (m.job().has_precision() && m.job().precision() != s::PRECISION_UNSPECIFIED) {
      check_precision(owner, "instance", index, *instance, catalog, m.job().precision());
      check_fp8_recipe(root, *instance, catalog, m.job());
    }
    check_nvlink_domain_nodes(root, m.cluster(), *instance);
    check_host_link(root, *instance, catalog);
  }
}

// A published measurement to compare with (validate scores TFLOP/s per GPU): a group to score it
// in, finite positive figures, and the FLOPs convention of the TFLOP/s (Megatron-Bridge v0.3.x's
// transformer formula not for a hybrid model, its hybrid formula only for one without a sliding
// window: the releases disagree on a window).
void check_published(const FieldChecker& published, const s::Published& figures,
                     const s::Model* model) {
  published.require("group");
  published.figure("step_time_s");
  published.figure("tokens_per_s_per_gpu");
  published.require("tflops_per_gpu") && published.figure("tflops_per_gpu");
  if (!published.require_enum("flops_convention") || model == nullptr) return;
  const s::Transformer& t = model->transformer();
  if (t.has_hybrid_layer_pattern() &&
      figures.flops_convention() == s::Published::MODEL_FLOPS_CAUSAL_BRIDGE_V03) {
    published.error("flops_convention",
                    "MODEL_FLOPS_CAUSAL_BRIDGE_V03 is not for hybrid models "
                    "(MODEL_FLOPS_CAUSAL_BRIDGE_HYBRID is)");
  }
  if (figures.flops_convention() == s::Published::MODEL_FLOPS_CAUSAL_BRIDGE_HYBRID &&
      (!t.has_hybrid_layer_pattern() || t.has_sliding_window())) {
    published.error("flops_convention",
                    "MODEL_FLOPS_CAUSAL_BRIDGE_HYBRID is only for a hybrid model "
                    "(hybrid_layer_pattern) without a sliding window");
  }
}

// Every mix must have at most kMaxConfigurationGpus GPUs: the largest pools together.
void check_pools_size(const FieldChecker& root, const LoadedScenario& loaded) {
  const s::Scenario& m = loaded.scenario();
  const bool swept = m.sweep().pool_size() > 0;
  int64_t gpus = 0;
  for (size_t i = 0; i < loaded.pool_instances.size(); ++i) {
    int64_t nodes = 0;
    if (swept) {
      for (int n : m.sweep().pool(static_cast<int>(i)).nodes()) nodes = std::max<int64_t>(nodes, n);
    } else {
      nodes = m.cluster().pool(static_cast<int>(i)).nodes();
    }
    gpus += nodes * loaded.pool_instances[i]->gpu_count();
  }
  if (gpus <= kMaxConfigurationGpus) return;
  (swept ? root.child("sweep") : root.child("cluster"))
      .error("pool", "the largest mix has " + std::to_string(gpus) + " GPUs, more than the " +
                         std::to_string(kMaxConfigurationGpus) + " a configuration may have");
}

// Every candidate cluster (instance x nodes) must have at most kMaxConfigurationGpus GPUs.
void check_cluster_size(const FieldChecker& root, const LoadedScenario& loaded) {
  const s::Scenario& m = loaded.scenario();
  if (!loaded.pool_instances.empty()) return check_pools_size(root, loaded);
  const bool swept = m.has_sweep() && m.sweep().nodes_size() > 0;
  const FieldChecker owner = swept ? root.child("sweep") : root.child("cluster");
  const int count = swept ? m.sweep().nodes_size() : 1;
  for (const s::InstanceType* instance : loaded.instances) {
    const int64_t per_node = loaded.gpus_per_node(*instance);
    for (int i = 0; i < count; ++i) {
      const int64_t nodes = swept ? m.sweep().nodes(i) : m.cluster().nodes();
      if (nodes * per_node <= kMaxConfigurationGpus) continue;
      owner.error("nodes",
                  std::to_string(nodes) + " nodes of \"" + instance->name() + "\" are " +
                      std::to_string(nodes * per_node) + " GPUs, more than the " +
                      std::to_string(kMaxConfigurationGpus) +
                      " a configuration may have (at most " +
                      std::to_string(kMaxConfigurationGpus / std::max<int64_t>(per_node, 1)) +
                      " nodes)",
                  swept ? i : -1);
      return;
    }
  }
}

// Each sweep.data_parallel_shard value must divide the data-parallel degree of some candidate: the
// scenario's data_parallel, or the GPUs of an instance x nodes over a listed TP x CP x PP (any of
// their divisors under auto_parallelism). A mix is left to each configuration (no ZeRO-3 there).
void check_shard_axis(const FieldChecker& root, const LoadedScenario& loaded) {
  const s::Scenario& m = loaded.scenario();
  const s::Sweep& w = m.sweep();
  if (w.data_parallel_shard_size() == 0 || !loaded.pool_instances.empty()) return;
  const s::Parallelism& p = m.parallelism();
  std::set<int64_t> degrees;  // data-parallel degrees, or under auto_parallelism the GPU counts
  for (const s::InstanceType* instance : loaded.instances) {
    const int64_t per_node = loaded.gpus_per_node(*instance);
    for (int nodes : axis_values<int>(w.nodes(), m.cluster().nodes())) {
      const int64_t gpus = nodes * per_node;
      if (p.has_data_parallel() || w.has_auto_parallelism()) {
        if (gpus > 0) degrees.insert(p.has_data_parallel() ? p.data_parallel() : gpus);
        continue;
      }
      for (int tp : axis_values<int>(w.tensor_parallel(), std::max(p.tensor_parallel(), 1))) {
        for (int cp : axis_values<int>(w.context_parallel(), std::max(p.context_parallel(), 1))) {
          for (int pp :
               axis_values<int>(w.pipeline_parallel(), std::max(p.pipeline_parallel(), 1))) {
            const int64_t model_parallel = int64_t{tp} * cp * pp;
            if (gpus > 0 && gpus % model_parallel == 0) degrees.insert(gpus / model_parallel);
          }
        }
      }
    }
  }
  if (degrees.empty()) return;  // no layout divides the GPUs: each configuration says why
  const std::string listed = comma_list(degrees);
  const FieldChecker sweep = root.child("sweep");
  for (int i = 0; i < w.data_parallel_shard_size(); ++i) {
    const int shard = w.data_parallel_shard(i);
    if (shard < 1 ||
        std::any_of(degrees.begin(), degrees.end(), [&](int64_t d) { return d % shard == 0; })) {
      continue;
    }
    sweep.error("data_parallel_shard",
                std::to_string(shard) + " divides none of the sweep's " +
                    (w.has_auto_parallelism() && !p.has_data_parallel()
                         ? "GPU counts (" + listed + "), so no data-parallel degree"
                         : "data-parallel degrees (" + listed + ")"),
                i);
  }
}

void check_cluster(const FieldChecker& root, const Catalog& catalog, LoadedScenario* loaded) {
  const s::Scenario& m = loaded->scenario();
  if (m.cluster().pool_size() > 0 || m.sweep().pool_size() > 0) {
    if (m.cluster().has_fabric()) {
      loaded->fabric = resolve_reference(root.child("cluster"), "fabric", -1, m.cluster().fabric(),
                                         catalog.fabrics(), "fabric");
    }
    return check_pools(root, catalog, loaded);
  }
  if (m.cluster().has_inter_pool()) {
    root.child("cluster").error("inter_pool", "applies to a cluster of pools");
  }
  const bool swept_instances = m.has_sweep() && m.sweep().instance_size() > 0;
  const bool swept_nodes = m.has_sweep() && m.sweep().nodes_size() > 0;
  if (!m.has_cluster()) {
    if (!swept_instances || !swept_nodes) root.error("cluster", "is required");
  } else {
    const FieldChecker cluster = root.child("cluster");
    if (!swept_instances) cluster.require("instance");
    if (!swept_nodes) cluster.require("nodes");
    cluster.at_least("nodes", 1);
    cluster.at_least("gpus_per_node", 1);
    cluster.at_least("nvlink_domain_nodes", 1);
    if (m.cluster().has_fabric()) {
      loaded->fabric = resolve_reference(cluster, "fabric", -1, m.cluster().fabric(),
                                         catalog.fabrics(), "fabric");
    }
  }
  if (swept_instances || (m.has_cluster() && m.cluster().has_instance())) {
    resolve_instances(root, catalog, loaded);
  }
}

// The SMs communication kernels reserve (expert_communication_sms, expert_combine_sms,
// tensor_overlap_attention_out_sms, tensor_overlap_mlp_down_sms) are taken from the GPU's own,
// leaving the rest to the computation beside them: fewer than every candidate GPU has.
void check_reserved_sms(const FieldChecker& root, const Catalog& catalog,
                        const LoadedScenario& loaded) {
  const s::InstanceType* fewest = nullptr;
  int sms = 0;
  for (const s::InstanceType* instance : loaded.instances) {
    const int count = catalog.gpu_of(*instance).streaming_multiprocessors();
    if (count > 0 && (fewest == nullptr || count < sms)) {
      fewest = instance;
      sms = count;
    }
  }
  if (fewest == nullptr) return;
  const FieldChecker parallelism = root.child("parallelism");
  for (const char* field : {"expert_communication_sms", "expert_combine_sms",
                            "tensor_overlap_attention_out_sms", "tensor_overlap_mlp_down_sms"}) {
    if (!parallelism.has(field) || parallelism.number(field) < sms) continue;
    parallelism.error(field, std::to_string(static_cast<int64_t>(parallelism.number(field))) +
                                 " is not fewer than the " + std::to_string(sms) + " SMs of \"" +
                                 fewest->gpu() + "\" of \"" + fewest->name() + "\"");
  }
}

}  // namespace

std::unique_ptr<LoadedScenario> load_scenario(const std::string& path, const Catalog& catalog,
                                              Diagnostics* diagnostics) {
  const int errors_before = diagnostics->error_count();
  auto loaded = std::make_unique<LoadedScenario>();
  loaded->file = read_text_file<s::Scenario>(path, diagnostics);
  if (!loaded->file) return nullptr;
  const s::Scenario& m = loaded->scenario();
  const FieldChecker root = FieldChecker::root(*loaded->file, diagnostics);

  if (root.require("model")) {
    loaded->model = resolve_reference(root, "model", -1, m.model(), catalog.models(), "model");
  }
  if (root.require("job")) check_job(root.child("job"), loaded->model);
  if (diagnostics->error_count() == errors_before) apply_job_to_model(loaded.get());
  check_cluster(root, catalog, loaded.get());
  if (m.has_parallelism()) {
    check_parallelism(root.child("parallelism"), loaded->model);
    check_reserved_sms(root, catalog, *loaded);
  }
  // torchao's Float8 all-gather is FSDP2's (torchtitan's Float8Handler enables it only where the
  // data-parallel ranks shard the model).
  if (m.job().fp8_recipe() == s::TORCHAO_TENSORWISE && m.job().fp8_parameters() &&
      !m.parallelism().fsdp2()) {
    root.child("job").error("fp8_parameters",
                            "under fp8_recipe TORCHAO_TENSORWISE is torchao's Float8 all-gather of "
                            "FSDP2: needs parallelism.fsdp2");
  }
  if (m.has_sweep()) {
    expand_axis_ranges(root.child("sweep"), loaded->file->message.mutable_sweep());
    check_sweep(root.child("sweep"), m, loaded->model, catalog);
  }
  if (loaded->model && (m.parallelism().has_context_parallel() ||
                        m.sweep().context_parallel_size() > 0)) {
    check_context_parallel(root, *loaded);
  }
  check_cluster_size(root, *loaded);
  if (m.has_sweep()) check_shard_axis(root, *loaded);
  if (m.has_published()) check_published(root.child("published"), m.published(), loaded->model);
  check_input(root, catalog, *loaded);
  if (m.has_cost()) check_cost(root.child("cost"), catalog, *loaded);
  // The layout against the pools and the cluster once everything it needs is known to be sound.
  if (diagnostics->error_count() == errors_before && !loaded->pool_instances.empty()) {
    check_pool_layout(root, catalog, *loaded);
  }
  if (diagnostics->error_count() == errors_before && loaded->model) {
    check_fixed_layout(root, *loaded);
  }

  if (diagnostics->error_count() != errors_before) return nullptr;
  return loaded;
}

}  // namespace clustersim
