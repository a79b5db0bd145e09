// Expert parallelism: how a pipeline stage's GPUs split a mixture-of-experts layer's experts, as
// Megatron-Core maps ranks (megatron/core/parallel_state.py, the expert RankGenerator of order
// "tp-ep-dp-pp" with expert_tensor_parallel in the place of tensor_parallel). A stage's GPUs,
// numbered in the dense order r = tp_rank + TP x (cp_rank + CP x dp_rank), are re-read for the
// experts as r = etp_rank + ETP x (ep_rank + EP x edp_rank): each expert-parallel group of EP GPUs
// (same etp and edp rank) holds num_experts / EP experts per GPU and exchanges tokens all-to-all;
// each expert is split over ETP GPUs and replicated over the expert data-parallel group of
// EDP = stage GPUs / (ETP x EP), over which its gradients are reduced.
#pragma once

#include <string>
#include <vector>

#include "sim/io/schema/model.pb.h"
#include "sim/io/schema/parallelism.pb.h"

namespace clustersim {

struct ExpertLayout {
  int expert_tensor_parallel = 1;  // ETP
  int expert_parallel = 1;         // EP
  int stage_gpus = 1;              // TP x CP x DP: the GPUs of one pipeline stage

  // EDP. Requires: expert_layout_problem(*this) is "".
  int expert_data_parallel() const {
    return stage_gpus / (expert_tensor_parallel * expert_parallel);
  }
};

// The layout of `p` (degrees set): expert_tensor_parallel, absent: tensor_parallel (Megatron-Core's
// default); expert_parallel, absent: 1; the stage's GPUs tensor x context x data parallel.
ExpertLayout expert_layout(const schema::Parallelism& p);

// Why a layout cannot be: a degree below 1, or ETP x EP not dividing the stage's GPUs; "" if none.
std::string expert_layout_problem(const ExpertLayout& layout);

// Why EP cannot split `model`'s experts: a model without experts (EP > 1), or EP not dividing
// num_experts; "" if it can.
std::string expert_parallel_problem(int expert_parallel, const schema::Model* model);

// Why ETP cannot split each expert: ETP not dividing the expert FFN width (Megatron splits the
// expert MLP by columns and rows, as the dense MLP); "" if it can.
std::string expert_tensor_parallel_problem(int expert_tensor_parallel, const schema::Model* model);

// The stage-local ranks (dense order) of the expert-parallel group holding stage rank `rank`, in
// expert-parallel rank order.
// Requires: expert_layout_problem(layout) is "" and 0 <= rank < layout.stage_gpus.
std::vector<int> expert_parallel_group(const ExpertLayout& layout, int rank);

// The stage-local ranks of the expert data-parallel group of `rank` (its expert's replicas).
// Requires: as expert_parallel_group.
std::vector<int> expert_data_parallel_group(const ExpertLayout& layout, int rank);

}  // namespace clustersim
