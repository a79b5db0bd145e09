// Exposed all-to-all time of a combined forward and backward, and the layouts that allow it.
#include "sim/parallel/expert_comm_overlap.h"

#include <algorithm>

#include "sim/parallel/collective_sm_contention.h"
#include "sim/parallel/dualpipe_schedule.h"
#include "sim/parallel/expert_parallel.h"

namespace clustersim {
namespace {

// What of `communication` outlasts `compute` beside it, slowed by the SMs it takes.
Picoseconds exposed(Picoseconds communication, Picoseconds compute, double sm_share) {
  const Picoseconds slowed =
      compute + Picoseconds(static_cast<int64_t>(sm_share * communication.count()));
  return std::max(communication, slowed) - compute;
}

// Megatron-Core's DeepEP default (transformer_config.py moe_deepep_num_sms): 20 SMs.
constexpr int kDefaultDispatcherSms = 20;

}  // namespace

Picoseconds combined_exposed_all_to_all(const ExpertPassPhases& f, const ExpertPassPhases& b,
                                        double sm_share) {
  return exposed(b.combine, f.pre_dispatch, sm_share) +
         exposed(f.dispatch + b.dispatch, b.experts + f.experts, sm_share) +
         exposed(f.combine, b.pre_dispatch, sm_share);
}

double expert_communication_sm_share(const schema::Parallelism& p, const schema::Gpu& gpu) {
  const int sms = gpu.streaming_multiprocessors();
  if (sms == 0) return 0.0;
  const int taken = p.has_expert_communication_sms() ? p.expert_communication_sms()
                    : p.expert_dispatcher() == schema::EXPERT_NODE_DEDUPLICATED
                        ? kDefaultDispatcherSms
                        : kNcclCollectiveCtas;
  return static_cast<double>(taken) / sms;
}

std::string expert_overlap_problem(const schema::Parallelism& p) {
  if (!p.overlap_expert_communication()) return "";
  if (expert_layout(p).expert_parallel < 2) {
    return "overlapping expert communication needs expert parallel > 1";
  }
  if (p.recompute() == schema::RECOMPUTE_FULL) {
    return "overlapping expert communication cannot run with full recomputation";
  }
  if (p.pipeline_parallel() > 1 && p.schedule() != schema::INTERLEAVED_ONE_F_ONE_B &&
      !is_dualpipe(p.schedule())) {
    return "overlapping expert communication with pipeline parallel > 1 needs the interleaved "
           "or the DualPipe schedule";
  }
  return "";
}

}  // namespace clustersim
