// One training step of a transformer under a parallelism plan, simulated: per-stage kernel times
// from the compute model, tensor- and context-parallel communication timed on the cluster's
// links, the pipeline schedule, stage-to-stage transfers and data-parallel reduction on the
// network (pipeline_simulation.h). Reports step time, throughput, MFU/HFU and where the time
// goes.
#pragma once

#include <optional>
#include <string>

#include "sim/engine/timeline.h"
#include "sim/hw/compute_model.h"
#include "sim/io/schema/job.pb.h"
#include "sim/io/schema/model.pb.h"
#include "sim/io/schema/parallelism.pb.h"
#include "sim/net/topology.h"
#include "sim/parallel/part_links.h"
#include "sim/parallel/pipeline_simulation.h"

namespace clustersim {

struct StepResult {
  double step_s = 0;
  double tokens_per_s = 0;  // 0 for a model without tokens (a CNN): its rows leave it empty
  double samples_per_s = 0;
  double mfu = 0;  // model FLOPs / (step x GPUs x peak); a decoder's attention counted causal
  double hfu = 0;  // with recomputed FLOPs
  // Where the time of the stage that finishes last goes (seconds, summing to step_s, but
  // collective_stretch_s and expert_compute_s, parts of compute_s):
  int critical_stage = 0;
  // kernels on its compute stream, with what the SMs of the overlapped data-parallel and ZeRO-3
  // collectives beside them added (collective_sm_contention.h)
  double compute_s = 0;
  // Of compute_s: what the overlapped collectives' SMs added to the kernels (the stage's
  // collective_stretch). It lasts as the collectives do, so a faster link shortens it: the
  // limiting column weighs it as data-parallel communication (step_limit.h).
  double collective_stretch_s = 0;
  // Of its task work (its busy time: the kernels, the tensor- and context-parallel collectives
  // and amax all-reduces inside its tasks), the share done beside data-parallel collectives the
  // step waited on: those that outlast its last backward, and ZeRO-3's gathers the compute idled
  // for (StageTimeline::work_beside_collectives / busy): from their spell's or chain's start the
  // step waits on them, so the limiting column weighs that share of the kernels and of the
  // tensor- and context-parallel parts as data-parallel communication.
  double work_beside_collectives_share = 0;
  double tensor_comm_s = 0;  // tensor-parallel collectives (on the critical path)
  double context_comm_s = 0;  // context-parallel K/V exchange not hidden behind attention
  double expert_comm_s = 0;   // expert-parallel dispatch and combine all-to-alls
  double expert_compute_s = 0;  // the routed experts' kernels: a part of compute_s
  double bubble_s = 0;       // waiting for other stages
  // gradient reduction not hidden behind the backward, ZeRO-3 gathers, the parameter all-gather
  // of a sharded optimizer not hidden behind the next step's first forwards, delayed scaling's
  // amax all-reduces (over the tensor x data x context-parallel group)
  double data_comm_s = 0;
  // Of data_comm_s: the ZeRO-3 waits DeepSpeed 2021's fetch rate ended (its coordinator, not a
  // link: StageTimeline::fetch_paced_wait); the limiting column names that rate for it.
  double fetch_paced_wait_s = 0;
  double optimizer_s = 0;  // the optimizer step on this GPU's shard
  double data_stall_s = 0;   // GPUs waiting for their input batches (sim/input), added last
  // Of expert_comm_s: how long the critical stage's all-to-alls' traffic across NVLink domains
  // (an expert-parallel group crossing a domain's edge) was in flight on the scale-out network;
  // and the most of any stage's (a stage the critical one waits for: in its bubble).
  double expert_scale_out_s = 0;
  double expert_scale_out_most_s = 0;
  // The kind of link that binds the traffic of the stage with the most (StageTimeline).
  LinkKind expert_scale_out_link = LinkKind::kNetwork;
  // Where the tensor-parallel group timed crosses an NVLink domain's edge (tensor_comm_s is then
  // collectives over the scale-out network), the kind of link that binds their traffic; none
  // inside one domain.
  std::optional<LinkKind> tensor_crossing_link;
  // The kind of link each communicating part binds on, weighed together where parts share one.
  PartLinks part_links;
  std::string limiting;      // what limits the step (step_limit.h)
};

// Requires: a transformer; `parallelism` fully resolved (a sweep configuration) and valid;
// `topology` holds all tp x cp x pp x dp GPUs; `compute` for the job's precision on its GPU.
// `timeline`, when given, receives the step's spans (pipeline_simulation.h).
StepResult simulate_step(const schema::Model& model, const schema::TrainingJob& job,
                         const schema::Parallelism& parallelism, const Topology& topology,
                         const ComputeModel& compute, Timeline* timeline = nullptr);

// Per stage, over the step: kernels, tensor-, context- and expert-parallel communication on the
// critical path of its compute stream, the routed experts' part of the kernels, and delayed
// scaling's amax all-reduces on that stream (data-parallel communication in the breakdown).
struct StageShares {
  std::vector<double> compute_s, tensor_comm_s, context_comm_s, expert_comm_s, expert_compute_s,
      amax_comm_s;
  // Where the tensor-parallel group timed (stage 0's first) crosses an NVLink domain's edge, the
  // kind of link that binds its traffic (StageGroups::tensor_crossing_link); none inside one.
  std::optional<LinkKind> tensor_crossing_link;
  // Of the groups of stage 0 (part_links.h), from the collectives' algorithms as the step ran
  // them: set after the run.
  PartLinks part_links;
};

// The step time of a simulated pipeline and where the time of the stage that finishes last goes,
// given each stage's shares of the step; `limiting` named (step_limit.h).
StepResult pipeline_breakdown(const PipelineTimeline& stages, const StageShares& shares);

// Fills tokens and samples per second, MFU and HFU of a transformer's step of r->step_s on GPUs
// whose peaks add up to `peak_flops` (FLOP/s), `recomputed_layers` fully recomputed layers per
// micro-batch; names what limits the step in `limiting` (step_limit.h).
void set_transformer_rates(const schema::Model& model, const schema::TrainingJob& job,
                           const schema::Parallelism& parallelism, double recomputed_layers,
                           double peak_flops, StepResult* r);

}  // namespace clustersim
