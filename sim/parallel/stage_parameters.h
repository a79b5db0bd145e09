// The parameters one GPU holds of some transformer layers: the dense ones (attention, norms,
// dense and shared-expert MLPs, routers, embedding and head) split over tensor parallelism and
// replicated over data x context parallelism; the routed experts split over expert tensor x
// expert parallelism and replicated over the expert data-parallel group (expert_parallel.h).
#pragma once

#include "sim/io/schema/job.pb.h"
#include "sim/io/schema/model.pb.h"
#include "sim/io/schema/parallelism.pb.h"
#include "sim/workload/parameter_count.h"

namespace clustersim {

struct LocalParameters {
  double dense = 0;   // per GPU, replicated over data x context parallelism
  double expert = 0;  // per GPU, replicated over the expert data-parallel group
  double layers = 0;  // of dense + expert: the transformer layers' (GEMM weights, for FP8)
  double total() const { return dense + expert; }
};

// Layers of `layers` parameters (layer_parameters: routed experts apart), plus `other_dense`
// parameters outside the layers (embedding, head: counted whole, split over TP).
// Requires: `p` with its degrees set and valid.
LocalParameters local_parameters(const schema::Parallelism& p, const LayerParameters& layers,
                                 double other_dense);

// Of `local`, the parameters of `layers` layers of `t` that `job` trains: all of them, or under
// LoRA only the adapters (lora.h), split over tensor parallelism with their base weights and
// replicated over data x context parallelism (dense, 16-bit: none of them FP8 GEMM weights).
// Requires: as local_parameters; `job` passed the scenario checks.
LocalParameters trainable_parameters(const schema::Transformer& t, const schema::TrainingJob& job,
                                     const schema::Parallelism& p, const LocalParameters& local,
                                     int layers);

}  // namespace clustersim
