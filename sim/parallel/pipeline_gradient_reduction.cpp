// The data-parallel tail of a pipeline's step on the engine (PipelineRun, pipeline_run.h): gradient
// buckets filled across each chunk's last backward and reduced one after another, the tied
// embedding's all-reduce between the first and the last stage, the optimizer, and the parameter
// all-gather after it.
#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

#include "sim/net/collective.h"
#include "sim/net/collective_algorithms.h"
#include "sim/parallel/collective_sm_contention.h"
#include "sim/parallel/expert_parallel.h"
#include "sim/parallel/parameter_gather_overlap.h"
#include "sim/parallel/pipeline_run.h"

namespace clustersim {

// Buckets of gradients: when overlapped, a model chunk's share of them becomes ready across
// that chunk's last backward (which starts now, `work` long alone): Megatron-Core reduces each
// chunk's gradients after its last micro-batch (grad_sync_func in the interleaved schedule,
// megatron/core/pipeline_parallel/schedules.py), so with interleaving the reductions run under
// the other chunks' remaining backwards. Each bucket is reduced after the previous one (NCCL
// runs a group's collectives in order). A bucket is full when the backward's work has passed
// its share, at the pace the collectives' SMs leave the backward (collective_sm_contention.h),
// the last one at the backward's end (Megatron-Core launches a bucket's collective from its last
// gradient's hook, register_grad_ready in megatron/core/distributed/
// distributed_data_parallel.py, NVIDIA/Megatron-LM 0011998; its last bucket holds the first
// layers'): a backward slowed by the reductions beside it fills its buckets later, and the last
// bucket's reduction follows its end.
void PipelineRun::start_gradient_reduction(int r, Picoseconds work) {
  const StageWork& w = plan_.work[r];
  Reduction& pending = reductions_[r];
  pending.buckets = plan_.data_parallel > 1 && !zero3_[r]
                        ? (plan_.overlap_gradient_reduce ? w.gradient_buckets : w.optimizer_buckets)
                        : 0;
  if (pending.buckets == 0 || !plan_.overlap_gradient_reduce) return;
  pending.chunk_buckets = std::max(1, pending.buckets / plan_.chunks);
  pending.buckets = pending.chunk_buckets * plan_.chunks;
  pending.filling = true;
  pending.filled = 0;
  pending.backward_work = work;
  arm_bucket(r);
}

// Schedules the filling backward's next bucket but its last (which its end fills) at the time
// its work reaches it at the present pace; none while every SM is held (the next change of the
// collectives arms it again).
void PipelineRun::arm_bucket(int r) {
  Reduction& p = reductions_[r];
  if (!p.filling || p.filled + 1 >= p.chunk_buckets) {
    p.armed = false;
    return;
  }
  const Picoseconds share(p.backward_work.count() * (p.filled + 1) / p.chunk_buckets);
  // A backward whose all-to-alls run on the network fills a bucket in the compute segment that
  // reaches it, or (in an all-to-all) as the next one starts.
  const Stage& s = stages_[r];
  if (s.segment % 2 == 1 || share > compute_end(r)) {
    p.armed = false;
    return;
  }
  const std::optional<Picoseconds> at =
      contention_[r].reaches(now(), std::max(Picoseconds(0), share - s.offset));
  if (p.armed && at == p.bucket_at) return;
  p.armed = at.has_value();
  if (!at) return;
  p.bucket_at = *at;
  schedule_at(*at, kBucketReady, r);
}

void PipelineRun::bucket_filled(int r) {
  Reduction& p = reductions_[r];
  if (!p.armed || p.bucket_at != now()) return;  // moved by a collective's start or end
  p.armed = false;
  ++p.filled;
  bucket_ready(r);
  arm_bucket(r);
}

// The chunk's last backward has ended: its buckets not yet filled are.
void PipelineRun::finish_filling(int r) {
  Reduction& p = reductions_[r];
  if (!p.filling) return;
  p.filling = false;
  p.armed = false;
  for (; p.filled < p.chunk_buckets; ++p.filled) bucket_ready(r);
}

// Stage r's last task has ended: its gradients are final, or once the weight-gradient GEMMs it
// deferred have run after it on the compute stream (Megatron-Core runs them after the
// schedule's last send, before finalize_model_grads waits for the reductions; the buckets were
// launched from the backwards' hooks as they are without them).
void PipelineRun::finish_backwards(int r) {
  const Picoseconds drain = plan_.deferred_drain(r);
  if (drain <= Picoseconds(0)) return backward_done(r);
  Stage& s = stages_[r];
  s.draining = true;
  s.started = now();
  timeline_.stages[r].busy += drain;
  if (const auto end = contention_[r].start(now(), drain)) schedule_at(*end, kTaskEnd, r);
}

void PipelineRun::backward_done(int r) {
  reductions_[r].backward_done = true;
  contention_[r].record_work_beside_spell(now());
  if (plan_.deepspeed_exchange && ties(r) && !tied_.done) return reach_tied_reduction(r);
  reduce_gradients(r);
}

// Not overlapped, every bucket is ready once the backwards are done (Apex's grad_sync in its
// step, or Megatron's after the pipeline): reduced one after another.
void PipelineRun::reduce_gradients(int r) {
  if (plan_.data_parallel > 1 && !plan_.overlap_gradient_reduce && !zero3_[r]) {
    while (reductions_[r].ready < reductions_[r].buckets) bucket_ready(r);
  }
  maybe_step_optimizer(r);
}

// Whether stage r holds a copy of the tied word embedding whose gradient it all-reduces.
bool PipelineRun::ties(int r) const {
  return plan_.tied_embedding_gradient_bytes > 0 && plan_.stages > 1 &&
         (r == 0 || r == plan_.stages - 1);
}

// Stage r's gradients are final for the tied all-reduce (DeepSpeed: its backwards; Megatron: its
// data-parallel reduction too); once both stages' are, the all-reduce runs, then each goes on.
void PipelineRun::reach_tied_reduction(int r) {
  if (tied_.reached[r != 0]) return;
  tied_.reached[r != 0] = true;
  if (!tied_.reached[0] || !tied_.reached[1]) return;
  const Picoseconds start = now();
  const int last = plan_.stages - 1;
  // One pair per simulated tensor-parallel rank, of replica 0 and context-parallel rank 0: the
  // other replicas' and context ranks' pairs are on other GPUs and their links and run alike, as
  // the data-parallel collectives take one group for all (a step of 128 replicas otherwise
  // starts 128 times the collectives for the same time).
  auto all = after_all(ranks_, [this, last, start] {
    if (record_) record(0, "data parallel", "tied embedding", start);
    tied_.done = true;
    for (int stage : {0, last}) {
      if (plan_.deepspeed_exchange) {
        reduce_gradients(stage);
      } else {
        maybe_step_optimizer(stage);
      }
    }
  });
  for (int rank = 0; rank < ranks_; ++rank) {
    start_collective(net_,
                     {CollectiveOp::kAllReduce,
                      {plan_.gpu(0, 0, rank), plan_.gpu(0, last, rank)},
                      plan_.tied_embedding_gradient_bytes, CollectiveAlgorithm::kAuto},
                     all);
  }
}

void PipelineRun::bucket_ready(int r) {
  ++reductions_[r].ready;
  launch_next_bucket(r);
}

void PipelineRun::launch_next_bucket(int r) {
  Reduction& pending = reductions_[r];
  if (pending.in_flight || pending.launched >= pending.ready) return;
  pending.in_flight = true;
  ++pending.launched;
  const StageWork& w = plan_.work[r];
  const CollectiveOp op = plan_.shard_gradients && !plan_.all_reduce_gradients
                              ? CollectiveOp::kReduceScatter
                              : CollectiveOp::kAllReduce;
  replica_collectives(r, op, w.gradient_bytes / pending.buckets,
                      w.expert_gradient_bytes / pending.buckets, [this, r] {
                        Reduction& p = reductions_[r];
                        p.in_flight = false;
                        ++p.done;
                        launch_next_bucket(r);
                        maybe_step_optimizer(r);
                      });
}

// A bucket's dense share over the data x context-parallel replicas and, beside it, its routed
// experts' share over their expert data-parallel group (Megatron-Core keeps expert parameters
// in buffers of their own, reduced over that group); `done` when both are.
void PipelineRun::replica_collectives(int r, CollectiveOp op, double dense_bytes,
                                      double expert_bytes, std::function<void()> done,
                                      DataParallelGroup group) {
  if (expert_bytes <= 0 || plan_.experts.expert_data_parallel() <= 1) {
    return data_parallel_collective(r, op, dense_bytes, std::move(done), group);
  }
  auto both = after_all(2, std::move(done));
  data_parallel_collective(r, op, dense_bytes, both, group);
  expert_data_parallel_collective(r, op, expert_bytes, both);
}

// Records stage r's data-parallel collective `op` begun at `start` and ending now on `track`,
// drawn earlier by the stage's drawn_earlier. Requires: recording.
void PipelineRun::record_data_parallel(int r, const char* track, CollectiveOp op,
                                       Picoseconds start) {
  const Picoseconds earlier = stages_[r].drawn_earlier;
  record(r, track, collective_op_name(op), start - earlier, now() - earlier);
}

// One collective per simulated tensor-parallel rank of stage r over the expert data-parallel
// group of the same stage-local rank (expert_parallel.h; the stage's other expert groups, on
// other GPUs and their links, run alike).
void PipelineRun::expert_data_parallel_collective(int r, CollectiveOp op, double bytes,
                                                  std::function<void()> done) {
  const Picoseconds start = now();
  auto all = after_all(ranks_, [this, r, op, start, done = holding_sms(r, std::move(done))] {
    if (record_) record_data_parallel(r, "expert data parallel", op, start);
    done();
  });
  const int tcp = plan_.tensor_parallel * plan_.context_parallel;
  for (int rank = 0; rank < ranks_; ++rank) {
    std::vector<int> group;
    for (int local : expert_data_parallel_group(plan_.experts, rank)) {
      group.push_back(plan_.gpu(local / tcp, r, local % tcp));
    }
    Collective c{op, group, bytes, CollectiveAlgorithm::kAuto};
    c.algorithm = choose_algorithm(c, net_->topology());
    timeline_.stages[r].data_parallel_algorithms.add(DataParallelGroup::kExperts, c.algorithm);
    start_collective(net_, c, all);
  }
}

// One collective per tensor-parallel rank of stage r (simulated) and data-parallel `group`
// (hybrid sharding's groups, or its ranks holding one shard, all at once), over the replicas'
// context-parallel ranks.
void PipelineRun::data_parallel_collective(int r, CollectiveOp op, double bytes,
                                           std::function<void()> done, DataParallelGroup group) {
  const Picoseconds start = now();
  const int shard = group == DataParallelGroup::kAll || plan_.data_parallel_shard <= 0
                        ? plan_.data_parallel
                        : plan_.data_parallel_shard;
  const int replicas = plan_.data_parallel / shard;
  // Each collective's replicas d: a group's consecutive ones, or one shard's in every group.
  std::vector<std::vector<int>> replica_sets;
  if (group == DataParallelGroup::kReplicas) {
    for (int j = 0; j < shard; ++j) {
      for (int c = 0; c < plan_.context_parallel; ++c) {
        replica_sets.emplace_back();
        for (int g = 0; g < replicas; ++g) replica_sets.back().push_back(g * shard + j);
      }
    }
  } else {
    for (int g = 0; g < replicas; ++g) {
      replica_sets.emplace_back();
      for (int j = 0; j < shard; ++j) replica_sets.back().push_back(g * shard + j);
    }
  }
  auto all = after_all(ranks_ * static_cast<int>(replica_sets.size()),
                       [this, r, op, start, done = holding_sms(r, std::move(done))] {
                         if (record_) record_data_parallel(r, "data parallel", op, start);
                         done();
                       });
  for (int rank = 0; rank < ranks_; ++rank) {
    for (size_t set = 0; set < replica_sets.size(); ++set) {
      std::vector<int> members;
      for (int d : replica_sets[set]) {
        if (group == DataParallelGroup::kReplicas) {
          const int c = static_cast<int>(set) % plan_.context_parallel;
          members.push_back(plan_.gpu(d, r, c * plan_.tensor_parallel + rank));
          continue;
        }
        for (int c = 0; c < plan_.context_parallel; ++c) {
          members.push_back(plan_.gpu(d, r, c * plan_.tensor_parallel + rank));
        }
      }
      if (members.size() < 2) {
        // A group of one GPU (hybrid sharding's groups of one rank, without context parallelism)
        // holds the whole tensor already: nothing moves, and the collective ends now.
        net_->simulation().call_after(Picoseconds(0), all);
        continue;
      }
      Collective c{op, members, bytes, CollectiveAlgorithm::kAuto};
      // Every group of a kind has the same shape on the cluster: choose once per size.
      auto [it, inserted] =
          algorithms_.try_emplace({static_cast<int>(op) * 3 + static_cast<int>(group), bytes});
      if (inserted) it->second = choose_algorithm(c, net_->topology());
      c.algorithm = it->second;
      timeline_.stages[r].data_parallel_algorithms.add(group, c.algorithm);
      start_collective(net_, c, all);
    }
  }
}

void PipelineRun::maybe_step_optimizer(int r) {
  Reduction& pending = reductions_[r];
  if (!pending.backward_done || pending.done < pending.buckets || pending.optimizer_started)
    return;
  if (zero3_[r] && zero3_[r]->reductions_pending()) return;
  if (ties(r) && !tied_.done) return reach_tied_reduction(r);
  pending.optimizer_started = true;
  timeline_.stages[r].gradients_reduced = now();
  schedule(plan_.work[r].optimizer, kOptimizerEnd, r);
}

void PipelineRun::optimizer_done(int r) {
  const StageWork& w = plan_.work[r];
  if (record_) record(r, "compute", "optimizer", now() - w.optimizer);
  timeline_.stages[r].optimizer_end = now();
  if (w.parameter_gather_bytes + w.expert_parameter_gather_bytes <= 0 ||
      plan_.data_parallel <= 1) {
    timeline_.stages[r].end = now();
    return;
  }
  // Overlapped, they run beside the next step's first forwards: in the steady state this step's
  // first forwards ran beside the previous step's, drawn there.
  if (plan_.overlap_parameter_gather) stages_[r].drawn_earlier = now();
  gather_parameters(r, parameter_gathers(r), now());
}

// The all-gathers of the updated parameters: Apex's buckets (its step gathers each bucket after
// its shard's update); overlapped with the next forwards, Megatron-Core's gradient buckets, whose
// parameters it gathers bucket by bucket ahead of their layers (parameter_gather_overlap.h);
// else one collective.
int PipelineRun::parameter_gathers(int r) const {
  const StageWork& w = plan_.work[r];
  if (w.optimizer_buckets > 1 || !plan_.overlap_parameter_gather) return w.optimizer_buckets;
  return w.gradient_buckets;
}

// The updated parameters all-gathered in `left` more buckets, one after another (Hybrid-FSDP's
// across the hybrid-sharding groups, among the ranks holding one shard).
void PipelineRun::gather_parameters(int r, int left, Picoseconds optimizer_end) {
  const StageWork& w = plan_.work[r];
  const int buckets = parameter_gathers(r);
  const DataParallelGroup group =
      w.zero3.optimizer_across_replicas ? DataParallelGroup::kReplicas : DataParallelGroup::kAll;
  replica_collectives(
      r, CollectiveOp::kAllGather, w.parameter_gather_bytes / buckets,
      w.expert_parameter_gather_bytes / buckets,
      [this, r, left, buckets, optimizer_end] {
        if (left > 1) return gather_parameters(r, left - 1, optimizer_end);
        Picoseconds end = now();
        // The gathers run ahead of the next step's first forward of each chunk (the chunks'
        // first forwards in the interleaved schedule), which they slow and wait for.
        if (plan_.overlap_parameter_gather) {
          Picoseconds first_forwards(0);
          for (int c = 0; c < plan_.chunks; ++c) first_forwards += plan_.chunk_forward(r, c);
          end = optimizer_end + parameter_gather_exposed(end - optimizer_end, buckets,
                                                         first_forwards, plan_.work[r].gpu_sms);
          // What they add to the step, drawn as the compute's wait after the optimizer.
          stages_[r].drawn_earlier = Picoseconds(0);
          if (record_ && end > optimizer_end) {
            record(r, "compute", "waiting for the parameter all-gather", optimizer_end, end);
          }
        }
        timeline_.stages[r].end = end;
      },
      group);
}

}  // namespace clustersim
