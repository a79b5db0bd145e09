// An attention-data-parallel replica's GPUs, their request assignment and lockstep iterations.
#include "sim/serve/attention_dp_group.h"

#include <algorithm>

#include "sim/util/check.h"

namespace clustersim {

AttentionDataParallelGroup::AttentionDataParallelGroup(Simulation* sim,
                                                       const AttentionDataParallelModel* model,
                                                       const ReplicaSettings& settings,
                                                       const std::vector<Request>* requests,
                                                       std::vector<RequestRecord>* records)
    : sim_(sim),
      model_(model),
      requests_(requests),
      max_batch_(settings.max_batch),
      on_outstanding_(settings.on_outstanding) {
  const int n = model->ranks();
  active_requests_.assign(n, 0);
  active_prompt_tokens_.assign(n, 0);
  works_.resize(n);
  for (int g = 0; g < n; ++g) {
    ReplicaSettings gpu = settings;
    gpu.lockstep = true;
    gpu.on_outstanding = nullptr;  // the group's is its own
    gpu.on_finish = [this, g, outer = settings.on_finish](int32_t request) {
      --active_requests_[g];
      active_prompt_tokens_[g] -= (*requests_)[request].input_tokens;
      if (outer) outer(request);
    };
    gpus_.push_back(std::make_unique<Replica>(sim, &model->rank_model(), gpu, requests, records));
  }
}

void AttentionDataParallelGroup::arrive(int32_t index) {
  new_.push_back(index);
  if (on_outstanding_) on_outstanding_(outstanding());
  if (!iterating_) sim_->request_settle(this);
}

int64_t AttentionDataParallelGroup::outstanding() const {
  int64_t total = static_cast<int64_t>(new_.size());
  for (const auto& g : gpus_) total += g->outstanding();
  return total;
}

double AttentionDataParallelGroup::kv_block_seconds() const {
  double total = 0;
  for (const auto& g : gpus_) total += g->kv_block_seconds();
  return total / static_cast<double>(gpus_.size());
}

int64_t AttentionDataParallelGroup::preemptions() const {
  int64_t total = 0;
  for (const auto& g : gpus_) total += g->preemptions();
  return total;
}

int64_t AttentionDataParallelGroup::peak_batched() const {
  int64_t sum = 0;
  for (const auto& g : gpus_) sum += g->peak_batched();
  return sum;
}

double AttentionDataParallelGroup::peak_committed_fraction() const {
  double most = 0;
  for (const auto& g : gpus_) most = std::max(most, g->peak_committed_fraction());
  return most;
}

int AttentionDataParallelGroup::gpu_of(int32_t index) const {
  return static_cast<size_t>(index) < assigned_gpu_.size() ? assigned_gpu_[index] : -1;
}

void AttentionDataParallelGroup::assign_new_requests() {
  if (new_.empty()) return;
  const auto n = static_cast<int64_t>(gpus_.size());
  int64_t active = 0, most = 0;
  for (int64_t a : active_requests_) {
    active += a;
    most = std::max(most, a);
  }
  // The executor fetches no more than the GPUs' free slots, in arrival order.
  const auto fetched = static_cast<size_t>(
      std::clamp<int64_t>(n * max_batch_ - active, 0, static_cast<int64_t>(new_.size())));
  if (fetched == 0) return;
  std::vector<int32_t> batch(new_.begin(), new_.begin() + static_cast<std::ptrdiff_t>(fetched));
  new_.erase(new_.begin(), new_.begin() + static_cast<std::ptrdiff_t>(fetched));
  const int64_t expected =
      std::max<int64_t>((active + static_cast<int64_t>(fetched) + n - 1) / n, most);
  std::stable_sort(batch.begin(), batch.end(), [&](int32_t a, int32_t b) {
    return (*requests_)[a].input_tokens > (*requests_)[b].input_tokens;
  });
  for (int32_t request : batch) {
    int best = -1;
    for (int g = 0; g < n; ++g) {
      if (active_requests_[g] >= expected) continue;
      if (best < 0 || active_prompt_tokens_[g] < active_prompt_tokens_[best] ||
          (active_prompt_tokens_[g] == active_prompt_tokens_[best] &&
           active_requests_[g] < active_requests_[best])) {
        best = g;
      }
    }
    CLUSTERSIM_CHECK(best >= 0, "no GPU below the expected active requests");
    ++active_requests_[best];
    active_prompt_tokens_[best] += (*requests_)[request].input_tokens;
    if (static_cast<size_t>(request) >= assigned_gpu_.size()) assigned_gpu_.resize(request + 1, -1);
    assigned_gpu_[request] = static_cast<int16_t>(best);
    gpus_[best]->arrive(request);
  }
}

void AttentionDataParallelGroup::try_start() {
  if (iterating_) return;
  assign_new_requests();
  bool any = false;
  for (size_t g = 0; g < gpus_.size(); ++g) {
    const bool formed = gpus_[g]->form_step();
    works_[g] = formed ? gpus_[g]->step_work() : IterationWork{};
    any = any || formed;
  }
  if (!any) return;
  iterating_ = true;
  took_ = model_->iteration(works_);
  sim_->schedule_after(took_, this, 0);
}

void AttentionDataParallelGroup::on_event(uint64_t /*tag*/) {
  busy_ += took_;
  ++iterations_;
  const int64_t before = on_outstanding_ ? outstanding() : 0;
  for (const auto& g : gpus_) g->end_step(took_);
  if (on_outstanding_ && outstanding() != before) on_outstanding_(outstanding());
  iterating_ = false;
  try_start();
}

}  // namespace clustersim
