// Steps and tokens of a training budget.
#include "sim/cost/training_budget.h"

#include <cmath>

#include "sim/util/number_format.h"

namespace clustersim {

namespace s = schema;

double budget_steps(const s::TrainingJob& job) {
  const double batch = job.global_batch_size();
  switch (job.budget_case()) {
    case s::TrainingJob::kTokenBudget:
      return std::ceil(job.token_budget() / (batch * job.sequence_length()));
    case s::TrainingJob::kEpochs:
      return std::ceil(job.epochs() * static_cast<double>(job.dataset().num_samples()) / batch);
    case s::TrainingJob::kSteps:
      return static_cast<double>(job.steps());
    case s::TrainingJob::BUDGET_NOT_SET:
      break;
  }
  return 0;
}

double budget_tokens(const s::TrainingJob& job, double steps) {
  return steps * job.global_batch_size() * job.sequence_length();
}

std::string describe_budget(const s::TrainingJob& job, double steps) {
  const double whole = std::floor(steps);
  switch (job.budget_case()) {
    case s::TrainingJob::kTokenBudget:
      return format_limit(budget_tokens(job, whole), 3) + " tokens";
    case s::TrainingJob::kEpochs:
      return format_limit(whole * job.global_batch_size() /
                               static_cast<double>(job.dataset().num_samples()),
                           3) +
             " epochs";
    default:
      return format_limit(whole, 3) + " steps";
  }
}

}  // namespace clustersim
