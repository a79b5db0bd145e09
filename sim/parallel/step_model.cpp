// Stage work from layer or CNN kernels, then the pipeline on the engine, then the step's metrics.
// A transformer's stages come from transformer_stages.h; the optimizer step is memory-bound
// (optimizer_step.h).
#include "sim/parallel/step_model.h"

#include <algorithm>
#include <cmath>

#include "sim/parallel/layer_times.h"
#include "sim/parallel/optimizer_step.h"
#include "sim/parallel/pipeline_schedule.h"
#include "sim/parallel/pipeline_simulation.h"
#include "sim/parallel/step_limit.h"
#include "sim/parallel/transformer_stages.h"
#include "sim/workload/cnn_ops.h"
#include "sim/workload/lora.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_flops.h"

namespace clustersim {
namespace {

namespace s = schema;
using K = LayerOp::Kind;

StepResult simulate_transformer_step(const s::Model& model, const s::TrainingJob& job,
                                     const s::Parallelism& p, const Topology& topology,
                                     const ComputeModel& compute, Timeline* timeline) {
  TransformerPlan stages = transformer_plan(model, job, p, topology, compute);
  const PipelineTimeline run = simulate_pipeline(stages.plan, topology, timeline);
  stages.part_links = part_links(topology, stages.plan, stages.tensor_crossing_link,
                                 run.data_parallel_algorithms());
  StepResult r = pipeline_breakdown(run, stages);
  const double gpus = static_cast<double>(p.tensor_parallel()) * p.context_parallel() *
                      p.pipeline_parallel() * p.data_parallel();
  set_transformer_rates(model, job, p, stages.recomputed_layers, compute.peak_flops() * gpus, &r);
  return r;
}

// PyTorch DDP's default gradient bucket: bucket_cap_mb = 25 (torch.nn.parallel.
// DistributedDataParallel).
constexpr double kDdpBucketBytes = 25.0 * 1024 * 1024;

// A CNN trains data-parallel: one stage, its kernels from the layer list, gradients all-reduced
// in DDP buckets overlapped with the last backward.
StepResult simulate_cnn_step(const s::Model& model, const s::TrainingJob& job,
                             const s::Parallelism& p, const Topology& topology,
                             const ComputeModel& compute, Timeline* timeline) {
  const std::vector<LayerOp> ops = cnn_forward_ops(model.cnn(), p.micro_batch_size());
  const LayerTimes times = time_layer(ops, compute, {}, s::RECOMPUTE_NONE);
  double forward_flops = 0;
  for (const LayerOp& op : ops) {
    if (op.kind == K::kMatmul) forward_flops += 2.0 * op.m * op.n * op.k * op.count;
  }
  const double params = static_cast<double>(parameter_count(model));
  PipelinePlan plan;
  plan.micro_batches = static_cast<int>(micro_batches_per_replica(job, p));
  plan.data_parallel = p.data_parallel();
  plan.overlap_gradient_reduce = !p.has_overlap_gradient_reduce() || p.overlap_gradient_reduce();
  StageWork w;
  w.forward = times.forward.total();
  w.backward = times.backward.total();
  w.gradient_bytes = 4 * params;
  w.gradient_buckets = std::max(1, static_cast<int>(std::ceil(w.gradient_bytes / kDdpBucketBytes)));
  w.optimizer = compute.memory_bound(
      optimizer_bytes_per_parameter(job.optimizer(), job.precision()) * params);
  w.gpu_sms = compute.gpu().streaming_multiprocessors();
  plan.work.push_back(w);
  const double compute_s =
      (times.forward.compute + times.backward.compute).seconds() * plan.micro_batches;
  StepResult r =
      pipeline_breakdown(simulate_pipeline(plan, topology, timeline),
                         {{compute_s}, {0.0}, {0.0}, {0.0}, {0.0}, {0.0}, {}, {}});
  r.samples_per_s = job.global_batch_size() / r.step_s;  // images: a CNN has no tokens
  r.mfu = r.hfu = 3 * forward_flops / p.micro_batch_size() * job.global_batch_size() /
                  (compute.peak_flops() * p.data_parallel() * r.step_s);
  return r;
}

}  // namespace

StepResult pipeline_breakdown(const PipelineTimeline& stages, const StageShares& shares) {
  StepResult r;
  r.step_s = stages.step.seconds();
  for (size_t i = 0; i < stages.stages.size(); ++i) {
    if (stages.stages[i].end > stages.stages[r.critical_stage].end) {
      r.critical_stage = static_cast<int>(i);
    }
  }
  const StageTimeline& c = stages.stages[r.critical_stage];
  const int critical = r.critical_stage;
  r.collective_stretch_s = c.collective_stretch.seconds();
  r.compute_s = shares.compute_s[critical] + r.collective_stretch_s;
  if (c.busy > Picoseconds(0)) {
    r.work_beside_collectives_share =
        std::min(1.0, c.work_beside_collectives.seconds() / c.busy.seconds());
  }
  r.tensor_comm_s = shares.tensor_comm_s[critical];
  r.context_comm_s = shares.context_comm_s[critical];
  r.expert_comm_s = shares.expert_comm_s[critical] + c.expert_network_wait.seconds();
  r.expert_compute_s = shares.expert_compute_s[critical];
  const double amax = shares.amax_comm_s[critical];
  // Clamped: rounding of the per-layer ZeRO-3 segments leaves a few femtoseconds either way.
  r.bubble_s = std::max(0.0, c.last_backward_end.seconds() - r.compute_s - r.tensor_comm_s -
                                 r.context_comm_s - r.expert_comm_s - amax -
                                 c.parameter_wait.seconds());
  // The parameter all-gather after a sharded optimizer step, where the next step's first
  // forwards do not hide it, is data-parallel communication too.
  r.data_comm_s = (c.gradients_reduced - c.last_backward_end).seconds() +
                  c.parameter_wait.seconds() + (c.end - c.optimizer_end).seconds() + amax;
  r.fetch_paced_wait_s = c.fetch_paced_wait.seconds();
  r.optimizer_s = (c.optimizer_end - c.gradients_reduced).seconds();
  r.expert_scale_out_s = c.expert_scale_out.seconds();
  for (const StageTimeline& stage : stages.stages) {
    if (stage.expert_scale_out.seconds() > r.expert_scale_out_most_s) {
      r.expert_scale_out_most_s = stage.expert_scale_out.seconds();
      r.expert_scale_out_link = stage.expert_scale_out_link;
    }
  }
  r.tensor_crossing_link = shares.tensor_crossing_link;
  r.part_links = shares.part_links;
  r.limiting = limiting_part(r);
  return r;
}

void set_transformer_rates(const s::Model& model, const s::TrainingJob& job,
                           const s::Parallelism& p, double recomputed_layers, double peak_flops,
                           StepResult* r) {
  const double tokens = static_cast<double>(job.global_batch_size()) * job.sequence_length();
  r->tokens_per_s = tokens / r->step_s;
  r->samples_per_s = job.global_batch_size() / r->step_s;
  const s::Transformer& t = model.transformer();
  TransformerFlops flops = transformer_flops(t, job.sequence_length());
  if (job.has_lora()) add_lora_flops(t, job, &flops);
  double hardware_per_token =
      flops.model_per_token() + flops.layer_forward_per_token * recomputed_layers;
  if (p.recompute() == s::RECOMPUTE_SELECTIVE) {
    hardware_per_token += flops.num_layers * flops.attention_forward_per_token;
  }
  const double peak = peak_flops * r->step_s;
  r->mfu = flops.model_per_token() * tokens / peak;
  r->hfu = hardware_per_token * tokens / peak;
  r->limiting = limiting_part(*r);
}

StepResult simulate_step(const s::Model& model, const s::TrainingJob& job, const s::Parallelism& p,
                         const Topology& topology, const ComputeModel& compute,
                         Timeline* timeline) {
  if (model.has_cnn()) return simulate_cnn_step(model, job, p, topology, compute, timeline);
  return simulate_transformer_step(model, job, p, topology, compute, timeline);
}

}  // namespace clustersim
