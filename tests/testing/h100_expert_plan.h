// A training step's plan of a shipped model on one p5.48xlarge (8 H100, DP 8, BF16, 4096-token
// micro-batches of one sequence), with the H100's expert-layer host fields cleared and then set
// from `gpu_extra`: for tests of what the host and the streams of eager expert layers change.
#pragma once

#include <string>

#include "sim/parallel/transformer_stages.h"
#include "tests/testing/cluster.h"
#include "tests/testing/parse_message.h"

namespace clustersim::testing {

// `model` with `plan_extra` appended to the parallelism's text, `micro_batches` per replica,
// `gpu_extra` merged into the catalog's H100 and `job_extra` appended to the job's text.
inline TransformerPlan h100_expert_plan(const std::string& model, const std::string& plan_extra,
                                        const std::string& gpu_extra, int micro_batches,
                                        const std::string& job_extra = "") {
  const Catalog& catalog = shipped_catalog();
  auto topology = shipped_cluster("aws.p5.48xlarge", 1);
  auto p = parse_message<schema::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 1 context_parallel: 1 micro_batch_size: 1 "
      "virtual_stages: 1 zero_stage: 0 schedule: ONE_F_ONE_B recompute: RECOMPUTE_NONE "
      "data_parallel: 8 " +
      plan_extra);
  const auto job = parse_message<schema::TrainingJob>(
      "global_batch_size: " + std::to_string(8 * micro_batches) +
      " sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 1 " + job_extra);
  schema::Gpu gpu = catalog.gpu_of(*catalog.instances().find("aws.p5.48xlarge")->value);
  gpu.clear_expert_layer_sync_us_per_expert();
  gpu.clear_expert_layer_issue_us();
  gpu.MergeFrom(parse_message<schema::Gpu>(gpu_extra));
  const ComputeModel compute(gpu, schema::BF16, *catalog.runtimes().find("default")->value,
                             KernelSetting::kTrainingStep);
  return transformer_plan(*catalog.models().find(model)->value, job, p, *topology, compute);
}

}  // namespace clustersim::testing
