// Whether a parallel degree splits the model and the job's sequences: why a tensor, pipeline,
// virtual-stage or context-parallel degree cannot, and the checks of the degree fields a scenario
// gives once (parallelism) or as a list (sweep).
#pragma once

#include <string>

#include "sim/io/field_checker.h"
#include "sim/io/scenario_loader.h"

namespace clustersim {

// Why `tp` cannot split `model` (heads, KV heads, hidden or FFN sizes not divisible; not a
// transformer; null counts as none), or "" when it can.
std::string tensor_parallel_problem(int tp, const schema::Model* model);
// Why `pp` pipeline stages cannot split `model` (more stages than layers), or "".
std::string pipeline_parallel_problem(int pp, const schema::Model* model);
// Why `vs` model chunks of an interleaved schedule cannot split each stage of `model` (more
// chunks than layers), or "".
std::string virtual_stages_problem(int vs, const schema::Model* model);
// Why context parallel `cp` with tensor parallel `tp` (and `parallelism`'s context_parallel_comm
// and sequence_parallel) cannot split `job`'s sequences and `model`'s attention: not a
// transformer, unfused attention, the sequence not divisible into the 2 cp chunks of the
// load-balanced causal split (cp chunks otherwise), ALL_TO_ALL heads per tensor-parallel rank not
// divisible by cp, TORCH_ALL_GATHER without a decoder; or "".
std::string context_parallel_problem(int cp, int tp, const schema::Parallelism& parallelism,
                                     const schema::Model* model, const schema::TrainingJob& job);

// Checks a parallelism degree given either in `parallelism.field` or as sweep axis values.
template <class Problem>
void check_degree_values(const FieldChecker& owner, const char* field, Problem problem) {
  const bool repeated = owner.message().GetDescriptor()->FindFieldByName(field)->is_repeated();
  const int count = repeated ? owner.size(field) : (owner.has(field) ? 1 : 0);
  for (int i = 0; i < count; ++i) {
    const int index = repeated ? i : -1;
    const double value = owner.number(field, index);
    if (value < 1) continue;  // reported by at_least
    const std::string why = problem(static_cast<int>(value));
    if (!why.empty()) owner.error(field, why, index);
  }
}

// The degrees shared by Parallelism (one value each) and Sweep (a list each).
void check_parallelism_fields(const FieldChecker& p, const schema::Model* model);

// Each context-parallel degree (of parallelism or the sweep axis) against the job's sequence and
// the model's heads, with each tensor-parallel degree given (1 when auto_parallelism chooses).
void check_context_parallel(const FieldChecker& root, const LoadedScenario& loaded);

}  // namespace clustersim
