// Why a configuration cannot run (configuration_problem): its GPUs against the sweep's
// constraints, its degrees against the GPUs and the global batch, the pipeline's layout, a mix's
// pools, and the combinations of options the simulated runtimes refuse.
#include "sim/sweep/configuration_checks.h"

#include <algorithm>
#include <string>
#include <utility>

#include "sim/io/degree_checks.h"
#include "sim/net/topology_builder.h"
#include "sim/parallel/deepspeed_pipeline.h"
#include "sim/parallel/dualpipe_schedule.h"
#include "sim/parallel/expert_comm_overlap.h"
#include "sim/parallel/expert_parallel.h"
#include "sim/parallel/pipeline_across_pools.h"
#include "sim/parallel/pipeline_layout.h"
#include "sim/workload/moe_layer.h"

namespace clustersim {
namespace {

namespace s = schema;

// Tensor parallelism stays inside the NVLink domains of each pool.
ConfigurationProblem tensor_span_problem(const PoolMix& pools, const s::Parallelism& p) {
  for (const PoolShare& pool : pools) {
    const int span =
        nvlink_domain_span_gpus(pool.nodes, pool.gpus_per_node, pool.nvlink_domain_nodes);
    if (span % p.tensor_parallel() != 0) {
      return {"tensor parallelism spans NVLink domains of a pool (it stays inside one pool)",
              "parallelism.tensor_parallel",
              "TP " + std::to_string(p.tensor_parallel()) + " against NVLink domains of " +
                  std::to_string(span) + " GPUs on " + pool.instance->name()};
    }
  }
  return {};
}

// Why the stages of `c`'s pipeline cannot sit on its pools in order, each pool holding whole
// stages of TP x CP x DP GPUs (parallel/pipeline_across_pools.h); empty if they can.
ConfigurationProblem pipeline_across_pools_problem(const Configuration& c,
                                                   const LoadedScenario& scenario) {
  const s::Parallelism& p = c.parallelism;
  const PoolMix& pools = *c.pools;
  const std::string pool_field =
      scenario.scenario().sweep().pool_size() > 0 ? "sweep.pool" : "cluster.pool";
  for (const PoolShare& pool : pools) {
    if (pool.gpus_per_node != pools.front().gpus_per_node ||
        pool.nvlink_domain_nodes != pools.front().nvlink_domain_nodes) {
      return {"pipeline across pools needs the same GPUs per node and NVLink domain in every pool",
              pool_field,
              pools.front().instance->name() + " has " +
                  std::to_string(pools.front().gpus_per_node) + " GPUs per node, " +
                  pool.instance->name() + " " + std::to_string(pool.gpus_per_node)};
    }
  }
  const int stage_gpus = c.stage_gpus();
  for (const PoolShare& pool : pools) {
    if (pool.gpus() % stage_gpus != 0) {
      return {"a pool does not hold whole pipeline stages (TP x CP x DP GPUs each)",
              "parallelism.pipeline_parallel",
              "TP " + std::to_string(p.tensor_parallel()) + " x CP " +
                  std::to_string(p.context_parallel()) + " x DP " +
                  std::to_string(p.data_parallel()) + " = " + std::to_string(stage_gpus) +
                  " against the " + std::to_string(pool.gpus()) + " GPUs of " +
                  pool.instance->name() + " x " + std::to_string(pool.nodes)};
    }
  }
  ConfigurationProblem span = tensor_span_problem(pools, p);
  if (!span.empty()) return span;
  const bool other_split = p.has_first_stage_layers() || p.has_last_stage_layers() ||
                           p.embedding_in_pipeline_split() || p.loss_in_pipeline_split();
  if (other_split && p.stage_layers_size() == 0) {
    return {
        "a pipeline across pools splits its layers by speed or by stage_layers, not by "
        "first/last stage layers or the embedding/loss split",
        p.has_first_stage_layers() || p.has_last_stage_layers()
            ? "parallelism.first_stage_layers"
            : "parallelism.embedding_in_pipeline_split"};
  }
  if (scenario.scenario().parallelism().rank_order() == s::TP_PP_DP) {
    return {"a pipeline across pools places each stage's replicas together (TP_DP_PP)",
            "parallelism.rank_order"};
  }
  return {};
}

// Why ZeRO-3 over a mix's data-parallel pools cannot run as simulated (pool_step.h: one group
// spanning the pools, every rank in every layer's collectives); empty if it can.
ConfigurationProblem zero3_pools_problem(const Configuration& c, int64_t micro_batches,
                                         const std::string& per_mix) {
  const s::Parallelism& p = c.parallelism;
  if (micro_batches % p.data_parallel() != 0 ||
      (p.schedule() == s::INTERLEAVED_ONE_F_ONE_B &&
       (micro_batches / p.data_parallel()) % p.pipeline_parallel() != 0)) {
    return {
        "ZeRO-3 over data-parallel pools runs every replica's micro-batches in lockstep (each "
        "layer's gathers and reduce-scatters span the pools): the micro-batches must split "
        "evenly over the replicas (interleaved: in groups of one per stage)",
        "parallelism.micro_batch_size", per_mix};
  }
  if (p.rank_order() == s::TP_DP_PP) {
    return {"ZeRO-3 over data-parallel pools places each replica inside one pool (TP_PP_DP)",
            "parallelism.rank_order"};
  }
  const int shard = p.data_parallel_shard();
  for (const PoolShare& pool : *c.pools) {
    const int replicas = *pool_replicas(pool, p);  // whole: mix_problem checked it first
    if (shard > 0 && shard < p.data_parallel() && replicas % shard != 0) {
      return {"hybrid sharding's groups over data-parallel pools must lie inside each pool",
              "parallelism.data_parallel_shard",
              std::to_string(shard) + " replicas against the " + std::to_string(replicas) + " of " +
                  pool.instance->name() + " x " + std::to_string(pool.nodes)};
    }
  }
  return {};
}

// Why the layout of `c`, a mix, cannot run on its pools (pool_step.h); empty if it can.
ConfigurationProblem mix_problem(const Configuration& c, const LoadedScenario& scenario) {
  const s::Parallelism& p = c.parallelism;
  if (p.pool_placement() == s::PIPELINE_ACROSS_POOLS) {
    return pipeline_across_pools_problem(c, scenario);
  }
  for (const PoolShare& pool : *c.pools) {
    if (!pool_replicas(pool, p)) {
      const int model_parallel =
          p.tensor_parallel() * p.context_parallel() * p.pipeline_parallel();
      return {"tensor x context x pipeline parallel does not divide every pool's GPUs",
              "parallelism.pipeline_parallel",
              std::to_string(model_parallel) + " does not divide the " +
                  std::to_string(pool.gpus()) + " GPUs of " + pool.instance->name() + " x " +
                  std::to_string(pool.nodes)};
    }
  }
  ConfigurationProblem span = tensor_span_problem(*c.pools, p);
  if (!span.empty()) return span;
  // Each pool's replicas hold every expert: its expert-parallel groups lie inside it.
  const ExpertLayout experts = expert_layout(p);
  const int expert_group = experts.expert_tensor_parallel * experts.expert_parallel;
  for (const PoolShare& pool : *c.pools) {
    const int stage_gpus = p.tensor_parallel() * p.context_parallel() * *pool_replicas(pool, p);
    if (stage_gpus % expert_group != 0) {
      return {"expert tensor x expert parallel does not divide a pool's GPUs of a pipeline stage "
              "(each pool holds every expert)",
              p.has_expert_parallel() ? "parallelism.expert_parallel"
                                      : "parallelism.expert_tensor_parallel",
              "ETP " + std::to_string(experts.expert_tensor_parallel) + " x EP " +
                  std::to_string(experts.expert_parallel) + " against the " +
                  std::to_string(stage_gpus) + " GPUs of a stage on " + pool.instance->name() +
                  " x " + std::to_string(pool.nodes)};
    }
  }
  const int64_t batch = scenario.scenario().job().global_batch_size();
  if (batch % p.micro_batch_size() != 0) {
    return {"micro-batch size does not divide the global batch", "parallelism.micro_batch_size"};
  }
  if (batch / p.micro_batch_size() < p.data_parallel()) {
    return {"fewer micro-batches than data-parallel replicas of the mix",
            "parallelism.micro_batch_size"};
  }
  const int64_t micro_batches = batch / p.micro_batch_size();
  const std::string per_mix = std::to_string(micro_batches) + " micro-batches over " +
                              std::to_string(p.data_parallel()) + " replicas";
  // Megatron's interleaved schedule runs a replica's micro-batches in groups of one per stage:
  // the pools are dealt whole groups, at least one per replica.
  if (p.schedule() == s::INTERLEAVED_ONE_F_ONE_B &&
      (micro_batches % p.pipeline_parallel() != 0 ||
       micro_batches / p.pipeline_parallel() < p.data_parallel())) {
    return {
        "interleaving in a mix of data-parallel pools needs the micro-batches in groups of "
        "one per pipeline stage, at least one group per replica",
        "parallelism.micro_batch_size",
        per_mix + " on " + std::to_string(p.pipeline_parallel()) + " stages"};
  }
  if (p.zero_stage() == 3) {
    ConfigurationProblem sharding = zero3_pools_problem(c, micro_batches, per_mix);
    if (!sharding.empty()) return sharding;
  }
  if (p.pipeline_runs() > 1) {
    return {"pipeline runs are not simulated in a mix yet", "parallelism.pipeline_runs"};
  }
  return {};
}

// Activation offload (activation_offload.h) as Megatron-Core allows it (TransformerConfig's checks:
// fewer offloaded layers than the model has, no pipeline parallelism, no recomputation), and as
// it is simulated: under ZeRO-3, whose tasks run layer by layer.
ConfigurationProblem activation_offload_problem(const Configuration& c,
                                                const LoadedScenario& scenario) {
  const s::Parallelism& p = c.parallelism;
  const int offloaded = p.activation_offload_layers();
  if (offloaded <= 0) return {};
  const char* field = "parallelism.activation_offload_layers";
  if (p.pipeline_parallel() > 1) {
    return {"activation offload needs one pipeline stage (Megatron-Core has no offload with "
            "pipeline parallelism)",
            field, "pipeline_parallel " + std::to_string(p.pipeline_parallel())};
  }
  if (p.recompute() == s::RECOMPUTE_SELECTIVE || p.recompute() == s::RECOMPUTE_FULL) {
    return {"activation offload cannot be combined with recomputation (Megatron-Core)", field};
  }
  if (p.zero_stage() != 3 || p.data_parallel() < 2) {
    return {"activation offload is simulated under zero_stage 3 over 2 or more data-parallel "
            "ranks only",
            field, "zero_stage " + std::to_string(p.zero_stage()) + ", data_parallel " +
                       std::to_string(p.data_parallel())};
  }
  const int layers = scenario.model->transformer().num_layers();
  if (offloaded >= layers) {
    return {"activation offload needs fewer layers than the stage has (Megatron-Core)", field,
            std::to_string(offloaded) + " offloaded, the stage has " + std::to_string(layers) +
                " layers: at most " + std::to_string(layers - 1)};
  }
  return {};
}

// Megatron-Core's fine-grained activation offloading (activation_offload_modules) as simulated:
// on ZeRO-3's layer-by-layer tasks (activation_offload.h's copy streams), one pipeline stage.
ConfigurationProblem offload_modules_problem(const s::Parallelism& p,
                                             const LoadedScenario& scenario) {
  if (p.activation_offload_modules_size() == 0) return {};
  const char* field = "parallelism.activation_offload_modules";
  if (p.zero_stage() != 3 || p.data_parallel() < 2) {
    return {
        "fine-grained activation offload is simulated under zero_stage 3 over 2 or more "
        "data-parallel ranks only",
        field,
        "zero_stage " + std::to_string(p.zero_stage()) + ", data_parallel " +
            std::to_string(p.data_parallel())};
  }
  if (p.pipeline_parallel() > 1) {
    return {"fine-grained activation offload is simulated on one pipeline stage only", field,
            "pipeline_parallel " + std::to_string(p.pipeline_parallel())};
  }
  // Each expert layer's copy has a window up to the next one's (activation_offload.h).
  if (!scenario.model->has_transformer()) return {};  // refused by the scenario's checks
  const s::Transformer& t = scenario.model->transformer();
  const int experts = moe_layers_in(t, 0, t.num_layers());
  if (experts >= t.num_layers()) {
    return {
        "fine-grained offload of the fused grouped MLP is simulated with fewer expert layers "
        "than layers (each copy's window ends at the next offloaded layer's)",
        field, std::to_string(experts) + " expert layers of " + std::to_string(t.num_layers())};
  }
  return {};
}

// ZeRO-3 of a mixture-of-experts model (zero_stage 3), as simulated: PyTorch FSDP2 as NeMo
// AutoModel's MoE parallelizer runs it (components/moe/parallelizer.py @ 36044ad3: the routed
// experts one fully_shard module over the expert data-parallel ranks, the rest of each block one
// over the data x context ranks), with the combinations that parallelizer refuses refused here.
ConfigurationProblem fsdp2_expert_problem(const s::Parallelism& p) {
  if (!p.fsdp2()) {
    return {"ZeRO-3 of expert layers is simulated as FSDP2 only (DeepSpeed's is not)",
            "parallelism.fsdp2"};
  }
  // Megatron FSDP's Hybrid-FSDP (shard_optimizer_across_replicas) runs Megatron-Core's tensor
  // parallelism, so AutoModel's two tensor-parallel refusals below are not its.
  const bool hybrid_fsdp = p.shard_optimizer_across_replicas();
  // parallelize_model: "enable_async_tensor_parallel=True is not supported by the custom MoE TP
  // path".
  if (!hybrid_fsdp && p.overlap_tensor_communication()) {
    return {"FSDP2 of expert layers runs no asynchronous tensor parallelism (AutoModel's MoE "
            "parallelizer refuses it)",
            "parallelism.overlap_tensor_communication"};
  }
  // Its tensor parallelism keeps attention and the router replicated, without sequence
  // parallelism (_resolve_moe_tp_plan); the step's MoE layers shard them as Megatron-Core does.
  if (!hybrid_fsdp && p.tensor_parallel() > 1) {
    return {"FSDP2 of expert layers with tensor parallel > 1 is not simulated (AutoModel's MoE "
            "tensor parallelism replicates attention and the router)",
            "parallelism.tensor_parallel",
            "tensor_parallel " + std::to_string(p.tensor_parallel())};
  }
  if (p.data_parallel_shard() > 0 && !hybrid_fsdp) {
    return {
        "hybrid sharding of expert layers is simulated as Megatron FSDP's Hybrid-FSDP only "
        "(shard_optimizer_across_replicas)",
        "parallelism.data_parallel_shard"};
  }
  // Each group one replica of every expert: the experts whole on their GPUs, their expert
  // data-parallel group the groups' ranks holding them.
  const int shard = p.data_parallel_shard();
  if (hybrid_fsdp && shard > 0 && p.data_parallel() % shard == 0) {
    const ExpertLayout experts = expert_layout(p);
    if (experts.expert_data_parallel() != p.data_parallel() / shard) {
      return {
          "Hybrid-FSDP of expert layers is simulated with one replica of each expert per "
          "hybrid-sharding group only (ETP x EP = the group's GPUs)",
          "parallelism.data_parallel_shard",
          "groups of " + std::to_string(shard * p.tensor_parallel() * p.context_parallel()) +
              " GPUs (data_parallel_shard " + std::to_string(shard) + " x TP x CP) against ETP " +
              std::to_string(experts.expert_tensor_parallel) + " x EP " +
              std::to_string(experts.expert_parallel)};
    }
  }
  if (p.activation_offload_layers() > 0) {
    return {"activation offload of expert layers is not simulated",
            "parallelism.activation_offload_layers"};
  }
  // The combined steps' two passes are not run layer by layer (zero3_traffic.h).
  if (p.overlap_expert_communication()) {
    return {"the expert all-to-all overlap is not simulated under ZeRO-3",
            "parallelism.overlap_expert_communication"};
  }
  return {};
}

// Megatron-Core's defer_embedding_wgrad_compute where the step can run it: its own checks
// (model_parallel_config.py: "Cannot defer embedding wgrad compute when pipeline model parallel is
// not used"; gradient accumulation fusion, which Megatron FSDP and a frozen output layer do not
// give it), Transformer Engine's MXFP8 output layer refusing the buffers
// (extensions/transformer_engine.py; NVIDIA/Megatron-LM d98e8a64), and Megatron-Bridge switching
// it off under Megatron FSDP (scripts/performance/utils/overrides.py
// _set_megatron_fsdp_overrides).
ConfigurationProblem output_weight_gradient_deferral_problem(const s::Parallelism& p,
                                                             const LoadedScenario& scenario) {
  const char* field = "parallelism.defer_output_weight_gradient";
  if (p.pipeline_parallel() < 2) {
    return {"deferring output weight gradients needs pipeline parallel > 1", field};
  }
  if (!scenario.model->has_transformer()) {
    return {"deferring output weight gradients applies to transformers only", field};
  }
  if (p.zero_stage() >= 3) {
    return {"deferring output weight gradients is not run under ZeRO-3 or Megatron FSDP", field,
            "zero_stage " + std::to_string(p.zero_stage())};
  }
  const s::TrainingJob& job = scenario.scenario().job();
  if (job.has_lora()) {
    return {"deferring output weight gradients needs a trained output layer (LoRA freezes it)",
            field};
  }
  if (job.fp8_output_layer()) {
    return {"Transformer Engine's narrow output layer cannot defer its weight gradients", field,
            "job.fp8_output_layer"};
  }
  return {};
}

// DualPipe and DualPipeV as their source runs them (dualpipe_schedule.h dualpipe_problem), on
// transformers, and without the options simulated for Megatron's schedules only.
ConfigurationProblem dualpipe_configuration_problem(const Configuration& c,
                                                    const LoadedScenario& scenario,
                                                    int64_t micro_batches) {
  const s::Parallelism& p = c.parallelism;
  const std::string name = s::PipelineSchedule_Name(p.schedule());
  if (!scenario.model->has_transformer()) {
    return {name + " applies to transformers only", "parallelism.schedule"};
  }
  if (c.is_mix()) {
    return {name + " is not simulated in a mix of pools", "parallelism.schedule",
            cluster_label(c)};
  }
  const int pp = p.pipeline_parallel();
  if (!dualpipe_problem(p.schedule(), pp, 2L * pp).empty()) {
    return {dualpipe_problem(p.schedule(), pp, 2L * pp), "parallelism.pipeline_parallel",
            "pipeline parallel " + std::to_string(pp)};
  }
  std::string batches = dualpipe_problem(p.schedule(), pp, micro_batches);
  if (!batches.empty()) {
    return {std::move(batches), "parallelism.micro_batch_size",
            std::to_string(micro_batches) + " micro-batches per replica on " +
                std::to_string(pp) + " stages"};
  }
  if (p.pipeline_runs() > 1) {
    return {name + " runs one schedule a step", "parallelism.pipeline_runs"};
  }
  if (p.zero_stage() >= 3) {
    return {name + " is not simulated under ZeRO-3 or Megatron FSDP", "parallelism.zero_stage"};
  }
  if (p.defer_output_weight_gradient()) {
    return {name + " splits every backward's weight gradients itself: no deferred output layer",
            "parallelism.defer_output_weight_gradient"};
  }
  return {};
}

}  // namespace

ConfigurationProblem configuration_problem(const Configuration& c, const LoadedScenario& scenario) {
  const s::Parallelism& p = c.parallelism;
  const s::Sweep& sweep = scenario.scenario().sweep();
  // Listed once: a repeat of an earlier candidate, counted before any other reason. Data-parallel
  // pools' replicas share the batch by speed whatever the pools' order (pool_step.h); a pipeline
  // across pools in another order puts other pools' stages first, so it is another candidate.
  using Seen = Configuration::PoolsSeen;
  if (c.pools_seen == Seen::kSameOrder) {
    return {
        "the same configuration as an earlier candidate: the same pools from another sweep.pool",
        "sweep.pool", cluster_label(c)};
  }
  if (c.pools_seen == Seen::kOtherOrder && p.pool_placement() != s::PIPELINE_ACROSS_POOLS) {
    return {"the same configuration as an earlier candidate: data-parallel pools in another order",
            "sweep.pool", cluster_label(c)};
  }
  const std::string gpus = std::to_string(c.gpus()) + " GPUs";
  if (sweep.has_constraints()) {
    const s::Constraints& limits = sweep.constraints();
    if (limits.has_min_gpus() && c.gpus() < limits.min_gpus()) {
      return {"fewer GPUs than constraints.min_gpus", "sweep.constraints.min_gpus", gpus};
    }
    if (limits.has_max_gpus() && c.gpus() > limits.max_gpus()) {
      return {"more GPUs than constraints.max_gpus", "sweep.constraints.max_gpus", gpus};
    }
  }
  // In 64 bits: data_parallel 2147483647 overflowed an int (undefined; in Release the product
  // wrapped and only happened to differ from the GPUs).
  const int64_t model_parallel =
      int64_t{p.tensor_parallel()} * p.context_parallel() * p.pipeline_parallel();
  if (c.gpus() % model_parallel != 0) {
    return {"tensor x context x pipeline parallel does not divide the GPUs",
            "parallelism.pipeline_parallel",
            "TP " + std::to_string(p.tensor_parallel()) + " x CP " +
                std::to_string(p.context_parallel()) + " x PP " +
                std::to_string(p.pipeline_parallel()) + " = " + std::to_string(model_parallel) +
                " against " + gpus};
  }
  if (p.data_parallel() * model_parallel != c.gpus()) {
    return {"tensor x context x pipeline x data parallel differs from the GPUs",
            "parallelism.data_parallel",
            std::to_string(model_parallel) + " x " + std::to_string(p.data_parallel()) +
                " against " + gpus};
  }
  const bool across_pools = p.pool_placement() == s::PIPELINE_ACROSS_POOLS;
  if (across_pools && !c.is_mix()) {
    return {"pipeline across pools needs two or more pools", "parallelism.pool_placement",
            cluster_label(c)};
  }
  if (c.is_mix()) {
    ConfigurationProblem mix = mix_problem(c, scenario);
    if (!mix.empty()) return mix;
  }
  const int64_t per_step = int64_t{p.micro_batch_size()} * p.data_parallel();
  const int64_t batch = scenario.scenario().job().global_batch_size();
  if ((!c.is_mix() || across_pools) && batch % per_step != 0) {
    return {"micro-batch x data parallel does not divide the global batch",
            "parallelism.micro_batch_size",
            std::to_string(p.micro_batch_size()) + " x " + std::to_string(p.data_parallel()) +
                " does not divide " + std::to_string(batch)};
  }
  const bool interleaved = p.schedule() == s::INTERLEAVED_ONE_F_ONE_B;
  if (interleaved != (p.virtual_stages() > 1)) {
    return {"virtual stages > 1 if and only if the schedule is interleaved",
            "parallelism.virtual_stages"};
  }
  if (scenario.model->has_transformer()) {
    const int layers = scenario.model->transformer().num_layers();
    // A pipeline across pools splits its layers by speed unless they are given: as even a split
    // as whole layers allow stands for it here (an interleaved one listed per chunk).
    std::string layout = across_pools && p.stage_layers_size() == 0
                             ? pipeline_layout_problem(layers, with_even_stage_layers(layers, p))
                             : pipeline_layout_problem(layers, p);
    if (!layout.empty() && p.stage_layers_size() > 0) {
      return {"stage_layers do not lay out the pipeline", "parallelism.stage_layers",
              std::move(layout)};
    }
    if (!layout.empty()) return {std::move(layout), "parallelism.pipeline_parallel"};
    // Megatron's interleaved schedule runs the micro-batches in groups of one per stage.
    // (A mix of data-parallel pools deals them by speed: mix_problem checks its groups.)
    const int64_t micro_batches = batch / per_step;
    if (interleaved && (!c.is_mix() || across_pools) &&
        micro_batches % p.pipeline_parallel() != 0) {
      return {"interleaving needs micro-batches divisible by pipeline stages",
              "parallelism.pipeline_parallel",
              std::to_string(micro_batches) + " micro-batches per replica"};
    }
  } else if (p.recompute() == s::RECOMPUTE_SELECTIVE || p.recompute() == s::RECOMPUTE_FULL) {
    // A CNN's step keeps every activation (step_model.cpp simulate_cnn_step).
    return {"recomputation is simulated for transformers only", "parallelism.recompute",
            s::Recompute_Name(p.recompute())};
  }
  const int runs = std::max(1, p.pipeline_runs());
  if (runs > 1) {
    const int64_t micro_batches = batch / per_step;
    if (p.pipeline_parallel() < 2) {
      return {"pipeline runs need pipeline parallel > 1", "parallelism.pipeline_runs"};
    }
    if (micro_batches % runs != 0 ||
        (interleaved && (micro_batches / runs) % p.pipeline_parallel() != 0)) {
      return {"pipeline runs do not divide the micro-batches into runs of whole schedules",
              "parallelism.pipeline_runs",
              std::to_string(runs) + " runs of " + std::to_string(micro_batches) +
                  " micro-batches per replica" +
                  (interleaved ? ", each a multiple of the " +
                                     std::to_string(p.pipeline_parallel()) + " stages"
                               : std::string())};
    }
  }
  if (is_dualpipe(p.schedule())) {
    ConfigurationProblem dual = dualpipe_configuration_problem(c, scenario, batch / per_step);
    if (!dual.empty()) return dual;
  }
  if (p.defer_output_weight_gradient()) {
    ConfigurationProblem deferral = output_weight_gradient_deferral_problem(p, scenario);
    if (!deferral.empty()) return deferral;
  }
  if (p.sequence_parallel() && p.tensor_parallel() == 1) {
    return {"sequence parallelism needs tensor parallel > 1", "parallelism.sequence_parallel"};
  }
  const ExpertLayout experts = expert_layout(p);
  if (!expert_layout_problem(experts).empty()) {
    return {"expert tensor x expert parallel does not divide the GPUs of a pipeline stage",
            p.has_expert_parallel() ? "parallelism.expert_parallel"
                                    : "parallelism.expert_tensor_parallel",
            "ETP " + std::to_string(experts.expert_tensor_parallel) + " x EP " +
                std::to_string(experts.expert_parallel) + " against the " +
                std::to_string(experts.stage_gpus) + " GPUs of a stage (TP " +
                std::to_string(p.tensor_parallel()) + " x CP " +
                std::to_string(p.context_parallel()) + " x DP " +
                std::to_string(p.data_parallel()) + ")"};
  }
  if (p.has_expert_combine_sms() && experts.expert_tensor_parallel > 1) {
    return {"HybridEP's combine floor needs expert_tensor_parallel 1",
            "parallelism.expert_combine_sms",
            "ETP " + std::to_string(experts.expert_tensor_parallel) +
                (p.has_expert_tensor_parallel() ? "" : " (absent: the tensor parallel degree)")};
  }
  // Muon's layer-wise optimizer shards the states itself, beside plain Megatron DDP
  // (LayerWiseDistributedOptimizer: "keep all megatron distributed-optimizer related options
  // OFF").
  if (scenario.scenario().job().optimizer() == s::MUON) {
    if (p.distributed_optimizer()) {
      return {"Muon's layer-wise optimizer runs without the distributed optimizer",
              "parallelism.distributed_optimizer"};
    }
    if (p.zero_stage() >= 1) {
      return {"Muon's layer-wise optimizer runs without ZeRO", "parallelism.zero_stage"};
    }
  }
  if (scenario.model->has_transformer() && scenario.model->transformer().has_moe()) {
    // Megatron-Core's arguments: "When using MoE and tensor parallelism, sequence parallelism
    // must be used".
    if (p.tensor_parallel() > 1 && !p.sequence_parallel()) {
      return {"expert layers with tensor parallel > 1 need sequence parallelism",
              "parallelism.sequence_parallel"};
    }
    if (p.zero_stage() >= 3) {
      if (ConfigurationProblem fsdp2 = fsdp2_expert_problem(p); !fsdp2.empty()) return fsdp2;
    }
  }
  // A ZeRO-3 runtime's options, which would be silently ignored under another zero_stage.
  const std::pair<const char*, bool> zero3_only[] = {
      {"zero3_synchronous_fetch", p.zero3_synchronous_fetch()},
      {"keep_fp8_transpose_cache", p.keep_fp8_transpose_cache()},
      {"fsdp2", p.fsdp2()},
      {"data_parallel_shard", p.has_data_parallel_shard()}};
  for (const auto& [field, set] : zero3_only) {
    if (set && p.zero_stage() != 3) {
      return {"a ZeRO-3 runtime's option needs zero_stage 3", std::string("parallelism.") + field,
              "zero_stage " + std::to_string(p.zero_stage())};
    }
  }
  if (p.data_parallel_shard() > 0 && p.data_parallel() % p.data_parallel_shard() != 0) {
    return {"hybrid sharding's groups must divide the data-parallel ranks",
            "parallelism.data_parallel_shard",
            "data_parallel_shard " + std::to_string(p.data_parallel_shard()) + " against DP " +
                std::to_string(p.data_parallel())};
  }
  // Megatron FSDP's Hybrid-FSDP: its optimizer sharding across groups needs groups (Megatron-LM
  // refuses outer_dp_sharding_strategy "optim" with one distributed optimizer instance) and the
  // full sharding within them ("optim_grads_params"), and runs each layer as one FSDP unit.
  if (p.shard_optimizer_across_replicas()) {
    const char* field = "parallelism.shard_optimizer_across_replicas";
    if (p.zero_stage() != 3 || !p.fsdp2()) {
      return {
          "Hybrid-FSDP needs zero_stage 3 with fsdp2", field,
          "zero_stage " + std::to_string(p.zero_stage()) + (p.fsdp2() ? ", fsdp2" : ", no fsdp2")};
    }
    if (p.data_parallel_shard() <= 0 || p.data_parallel_shard() >= p.data_parallel()) {
      return {"Hybrid-FSDP needs hybrid-sharding groups: data_parallel_shard below data_parallel",
              field,
              "data_parallel_shard " +
                  (p.has_data_parallel_shard() ? std::to_string(p.data_parallel_shard())
                                               : std::string("absent")) +
                  ", DP " + std::to_string(p.data_parallel())};
    }
    if (p.fsdp2_keep_forward_gather() || p.fsdp2_defer_gradient_sync()) {
      return {"Hybrid-FSDP runs Megatron FSDP, not AutoModel's FSDP2 options", field,
              p.fsdp2_keep_forward_gather() ? "fsdp2_keep_forward_gather"
                                            : "fsdp2_defer_gradient_sync"};
    }
  }
  ConfigurationProblem offload = activation_offload_problem(c, scenario);
  if (!offload.empty()) return offload;
  ConfigurationProblem offload_modules = offload_modules_problem(p, scenario);
  if (!offload_modules.empty()) return offload_modules;
  std::string deepspeed = deepspeed_pipeline_problem(p, scenario.scenario().job().precision());
  if (!deepspeed.empty()) {
    return {std::move(deepspeed), "parallelism.deepspeed_pipeline_engine"};
  }
  std::string overlap = expert_overlap_problem(p);
  if (!overlap.empty()) return {std::move(overlap), "parallelism.overlap_expert_communication"};
  std::string context = context_parallel_problem(p.context_parallel(), p.tensor_parallel(), p,
                                                 scenario.model, scenario.scenario().job());
  if (context.empty()) return {};
  return {std::move(context), "parallelism.context_parallel"};
}

}  // namespace clustersim
