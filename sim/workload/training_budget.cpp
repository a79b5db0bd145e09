// Steps from a token, epoch or step budget.
#include "sim/workload/training_budget.h"

#include <cmath>

namespace clustersim {

double budget_steps(const schema::TrainingJob& job) {
  const double batch = job.global_batch_size();
  switch (job.budget_case()) {
    case schema::TrainingJob::kTokenBudget:
      return std::ceil(job.token_budget() / (batch * job.sequence_length()));
    case schema::TrainingJob::kEpochs:
      return std::ceil(job.epochs() * static_cast<double>(job.dataset().num_samples()) / batch);
    case schema::TrainingJob::kSteps:
      return static_cast<double>(job.steps());
    case schema::TrainingJob::BUDGET_NOT_SET:
      break;
  }
  return 0;
}

}  // namespace clustersim
