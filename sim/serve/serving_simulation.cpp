// The load balancer and the arrivals on the engine.
#include "sim/serve/serving_simulation.h"

#include <memory>

namespace clustersim {
namespace {

// Schedules one arrival at a time (the queue stays small however many requests there are) and
// hands each to the least loaded replica.
class Arrivals final : public EventHandler {
 public:
  Arrivals(Simulation* sim, const std::vector<Request>* requests,
           std::vector<std::unique_ptr<Replica>>* replicas)
      : sim_(sim), requests_(requests), replicas_(replicas) {}

  void start() { schedule_next(); }

 private:
  void schedule_next() {
    if (next_ >= requests_->size()) return;
    sim_->schedule_at(Picoseconds::from_seconds((*requests_)[next_].arrival_s), this, next_);
    ++next_;
  }
  void on_event(uint64_t tag) override {
    Replica* target = (*replicas_)[0].get();
    for (const auto& r : *replicas_) {
      if (r->outstanding() < target->outstanding()) target = r.get();
    }
    schedule_next();  // before the replica reacts, so equal-time arrivals keep their order
    target->arrive(static_cast<int32_t>(tag));
  }

  Simulation* sim_;
  const std::vector<Request>* requests_;
  std::vector<std::unique_ptr<Replica>>* replicas_;
  size_t next_ = 0;
};

}  // namespace

ServingOutcome simulate_serving(const std::vector<Request>& requests, const IterationModel& model,
                                const ReplicaSettings& settings, int replicas) {
  ServingOutcome outcome;
  outcome.records.resize(requests.size());
  Simulation sim;
  std::vector<std::unique_ptr<Replica>> pool;
  for (int r = 0; r < replicas; ++r) {
    pool.push_back(std::make_unique<Replica>(&sim, &model, settings, &requests, &outcome.records));
  }
  Arrivals arrivals(&sim, &requests, &pool);
  arrivals.start();
  sim.run();
  outcome.end = sim.now();
  const double span = outcome.end.seconds();
  for (const auto& r : pool) {
    outcome.iterations += r->iterations();
    outcome.preemptions += r->preemptions();
    if (span > 0) {
      outcome.busy_fraction += r->busy().seconds() / span / replicas;
      outcome.kv_fraction += r->kv_block_seconds() / span / replicas;
    }
  }
  return outcome;
}

}  // namespace clustersim
