// The checks of a scenario's parallelism: degrees, the pipeline's split and recomputation against
// the model's layers, expert, ZeRO-3 and overlap options, and the SMs kernels reserve.
#include "sim/io/parallelism_checks.h"

#include <string>

#include "sim/io/degree_checks.h"
#include "sim/parallel/expert_parallel.h"

namespace clustersim {
namespace {

namespace s = schema;

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

// Megatron-Core's fine-grained activation offloading (activation_offload_modules): each module
// named once, a module the layers have and keep (its zero_stage, data-parallel and pipeline
// degrees, sweep axes, are each configuration's problem: configuration_checks.cpp).
void check_offload_modules(const FieldChecker& p, const s::Parallelism& m) {
  const char* field = "activation_offload_modules";
  if (m.activation_offload_modules_size() == 0) return;
  for (int i = 0; i < m.activation_offload_modules_size(); ++i) {
    const int module = m.activation_offload_modules(i);
    const std::string name = s::ActivationOffloadModule_Name(module);
    if (module == s::ACTIVATION_OFFLOAD_MODULE_UNSPECIFIED) {
      p.error(field, name + " names no module", i);
      continue;
    }
    for (int j = 0; j < i; ++j) {
      if (m.activation_offload_modules(j) == module) p.error(field, name + " is listed twice", i);
    }
    if (module == s::OFFLOAD_FUSED_EXPERT_MLP && !m.fused_expert_mlp()) {
      p.error(field, name + " needs fused_expert_mlp (the fused grouped MLP's FC1 output)", i);
    }
  }
  if (m.recompute() == s::RECOMPUTE_FULL) {
    p.error(field,
            "cannot be combined with recompute RECOMPUTE_FULL (a rerun layer keeps its "
            "input only)");
  }
  for (int module : m.recompute_modules()) {
    if (module == s::RECOMPUTE_MOE) {
      p.error(field,
              "cannot be combined with recompute_modules RECOMPUTE_MOE (the rerun expert "
              "layer keeps its input only)");
    }
  }
  if (m.activation_offload_layers() > 0) {
    p.error(field, "cannot be combined with activation_offload_layers (not simulated)");
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
          "recompute_latent_up_projection", "compiled_recompute", "activation_offload_layers",
          "activation_offload_modules"}) {
      if (p.has(field)) p.error(field, "applies to transformers only");
    }
  }
  if (!is_transformer(model)) return;
  const int layers = model->transformer().num_layers();
  // recompute_num_layers past the layers recomputed every layer, as its absence does: 2^31 - 1
  // was taken so, silently (tools/input_audit.py).
  for (const char* field : {"first_stage_layers", "last_stage_layers", "recompute_num_layers"}) {
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

}  // namespace

void check_parallelism(const FieldChecker& p, const s::Model* model) {
  const auto& m = static_cast<const s::Parallelism&>(p.message());
  check_parallelism_fields(p, model);
  p.at_least("data_parallel", 1);
  p.at_least("expert_tensor_parallel", 1);
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
  check_offload_modules(p, m);
  // cuda_graphed_expert_layers and fsdp2_expert_reduce_in_weight_type on a dense model were
  // accepted and changed nothing (only expert layers read them).
  for (const char* field : {"expert_dispatcher", "fused_expert_mlp", "single_launch_grouped_experts",
                            "cuda_graphed_expert_layers", "fsdp2_expert_reduce_in_weight_type"}) {
    if (p.has(field) && model != nullptr &&
        !(model->has_transformer() && model->transformer().has_moe())) {
      p.error(field, "applies to mixture-of-experts models only");
    }
  }
  if (m.recompute_latent_up_projection()) {
    if (is_transformer(model) && !model->transformer().has_latent_attention() &&
        !model->transformer().has_compressed_sparse_attention()) {
      p.error("recompute_latent_up_projection",
              "needs a model with latent_attention or compressed_sparse_attention; \"" +
                  model->name() + "\" has neither");
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
  for (int i = 0; i < m.recompute_modules_size(); ++i) {
    const int module = m.recompute_modules(i);
    const bool experts = module == s::RECOMPUTE_MOE || module == s::RECOMPUTE_MOE_ACT;
    if (experts && is_transformer(model) && !model->transformer().has_moe()) {
      p.error("recompute_modules",
              std::string(s::RecomputeModule_Name(module)) +
                  " needs a mixture-of-experts model; \"" + model->name() + "\" has no moe",
              i);
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
  // At least 1 MiB: Apex's bucket_cap_mb counts whole megabytes, and smaller buckets would ask
  // for millions of collectives a step; at most a PiB (FieldChecker::kMaxMemory_gib), more than
  // any model's gradients (1e300 was taken as one bucket and printed no sign of it).
  if (p.at_least("optimizer_bucket_mib", 1) &&
      p.in_range("optimizer_bucket_mib", 1, FieldChecker::kMaxMemory_gib * 1024) &&
      p.has("optimizer_bucket_mib") &&
      !m.distributed_optimizer()) {
    p.error("optimizer_bucket_mib", "is a sharded optimizer's (Apex's): needs distributed_optimizer");
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

}  // namespace clustersim
