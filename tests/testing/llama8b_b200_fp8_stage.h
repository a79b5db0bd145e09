// The first stage's work of one FP8 training step of Llama 3 8B on one DGX B200 (DP 8 with the
// distributed optimizer, FP8 weights, one sequence of 4096 tokens a micro-batch), for tests of
// what Transformer Engine's recipes change in a step: `job_fields` is appended to the job's text
// (e.g. "fp8_recipe: MXFP8 fp8_output_layer: true"); and the compute model of that step's GPU.
#pragma once

#include <string>

#include "sim/parallel/transformer_stages.h"
#include "tests/testing/cluster.h"
#include "tests/testing/parse_message.h"

namespace clustersim::testing {

// A DGX B200 GPU's kernels inside an FP8 training step of `recipe`, from the shipped catalog.
inline ComputeModel dgx_b200_fp8_compute(schema::Fp8Recipe recipe) {
  const Catalog& catalog = shipped_catalog();
  return ComputeModel(catalog.gpu_of(*catalog.instances().find("onprem.dgx-b200")->value),
                      schema::FP8, *catalog.runtimes().find("default")->value,
                      KernelSetting::kTrainingStep, recipe);
}

inline StageWork llama8b_b200_fp8_stage(const std::string& job_fields) {
  const Catalog& catalog = shipped_catalog();
  auto topology = shipped_cluster("onprem.dgx-b200", 1);
  const auto p = parse_message<schema::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 1 context_parallel: 1 data_parallel: 8 "
      "micro_batch_size: 1 virtual_stages: 1 zero_stage: 0 schedule: ONE_F_ONE_B "
      "recompute: RECOMPUTE_NONE distributed_optimizer: true");
  const auto job = parse_message<schema::TrainingJob>(
      "global_batch_size: 8 sequence_length: 4096 precision: FP8 optimizer: ADAM steps: 1 "
      "fp8_parameters: true " +
      job_fields);
  const ComputeModel compute = dgx_b200_fp8_compute(job.fp8_recipe());
  return transformer_plan(*catalog.models().find("llama3-8b")->value, job, p, *topology, compute)
      .plan.work[0];
}

}  // namespace clustersim::testing
