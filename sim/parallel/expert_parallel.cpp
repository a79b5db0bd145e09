// Expert-parallel and expert data-parallel groups of a pipeline stage (see expert_parallel.h).
#include "sim/parallel/expert_parallel.h"

#include <algorithm>

#include "sim/util/check.h"
#include "sim/workload/moe_layer.h"

namespace clustersim {

ExpertLayout expert_layout(const schema::Parallelism& p) {
  const int tp = std::max(1, p.tensor_parallel());
  return {p.has_expert_tensor_parallel() ? p.expert_tensor_parallel() : tp,
          p.has_expert_parallel() ? p.expert_parallel() : 1,
          tp * std::max(1, p.context_parallel()) * std::max(1, p.data_parallel())};
}

std::string expert_layout_problem(const ExpertLayout& layout) {
  if (layout.expert_tensor_parallel < 1 || layout.expert_parallel < 1 || layout.stage_gpus < 1) {
    return "expert degrees and stage GPUs must be at least 1";
  }
  const int expert_model_parallel = layout.expert_tensor_parallel * layout.expert_parallel;
  if (layout.stage_gpus % expert_model_parallel != 0) {
    return "expert tensor x expert parallel (" + std::to_string(expert_model_parallel) +
           ") does not divide the " + std::to_string(layout.stage_gpus) +
           " GPUs of a pipeline stage (tensor x data parallel)";
  }
  return "";
}

std::string expert_parallel_problem(int expert_parallel, const schema::Model* model) {
  if (expert_parallel == 1) return "";
  if (model == nullptr || !model->has_transformer() || !model->transformer().has_moe()) {
    return "expert parallelism needs a model with experts (moe)";
  }
  const int experts = model->transformer().moe().num_experts();
  if (experts % expert_parallel != 0) {
    return std::to_string(expert_parallel) + " does not divide the model's num_experts (" +
           std::to_string(experts) + ")";
  }
  return "";
}

std::string expert_tensor_parallel_problem(int expert_tensor_parallel,
                                           const schema::Model* model) {
  if (expert_tensor_parallel == 1) return "";
  if (model == nullptr || !model->has_transformer() || !model->transformer().has_moe()) {
    return "expert tensor parallelism needs a model with experts (moe)";
  }
  const int64_t width = expert_ffn_hidden_size(model->transformer());
  if (width % expert_tensor_parallel != 0) {
    return std::to_string(expert_tensor_parallel) + " does not divide the experts' FFN width (" +
           std::to_string(width) + ")";
  }
  return "";
}

namespace {

// rank = etp + ETP x (ep + EP x edp)
struct ExpertRank {
  int etp, ep, edp;
};

ExpertRank expert_rank(const ExpertLayout& layout, int rank) {
  CLUSTERSIM_CHECK(expert_layout_problem(layout).empty(), "an invalid expert layout");
  CLUSTERSIM_CHECK(rank >= 0 && rank < layout.stage_gpus, "a rank outside the stage");
  const int etp = layout.expert_tensor_parallel, ep = layout.expert_parallel;
  return {rank % etp, rank / etp % ep, rank / (etp * ep)};
}

int stage_rank(const ExpertLayout& layout, ExpertRank r) {
  return r.etp + layout.expert_tensor_parallel * (r.ep + layout.expert_parallel * r.edp);
}

}  // namespace

std::vector<int> expert_parallel_group(const ExpertLayout& layout, int rank) {
  ExpertRank r = expert_rank(layout, rank);
  std::vector<int> group;
  for (r.ep = 0; r.ep < layout.expert_parallel; ++r.ep) group.push_back(stage_rank(layout, r));
  return group;
}

std::vector<int> expert_data_parallel_group(const ExpertLayout& layout, int rank) {
  ExpertRank r = expert_rank(layout, rank);
  std::vector<int> group;
  for (r.edp = 0; r.edp < layout.expert_data_parallel(); ++r.edp) {
    group.push_back(stage_rank(layout, r));
  }
  return group;
}

}  // namespace clustersim
