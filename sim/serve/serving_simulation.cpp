// The load balancer and the arrivals on the engine; the hand-off between pools.
#include "sim/serve/serving_simulation.h"

#include <algorithm>
#include <memory>

#include "sim/util/check.h"

namespace clustersim {
namespace {

// Schedules one arrival at a time (the queue stays small however many requests there are) and
// hands each to the least loaded replica.
using Pool = std::vector<std::unique_ptr<Replica>>;

// Index of the replica with the least outstanding work plus `incoming` (lowest among equals).
size_t least_loaded(const Pool& pool, const std::vector<int64_t>& incoming) {
  size_t best = 0;
  const auto load = [&](size_t i) {
    return pool[i]->outstanding() + (incoming.empty() ? 0 : incoming[i]);
  };
  for (size_t i = 1; i < pool.size(); ++i) {
    if (load(i) < load(best)) best = i;
  }
  return best;
}

// Adds a pool's counts and its GPU-weighted busy and KV shares (of `total_gpus`) to `outcome`.
void add_pool(const Pool& pool, int replica_gpus, int total_gpus, ServingOutcome* outcome) {
  const double span = outcome->end.seconds();
  for (const auto& r : pool) {
    outcome->iterations += r->iterations();
    outcome->preemptions += r->preemptions();
    outcome->peak_kv_committed = std::max(outcome->peak_kv_committed, r->peak_committed_fraction());
    if (span > 0) {
      outcome->busy_fraction += r->busy().seconds() / span * replica_gpus / total_gpus;
      outcome->kv_fraction += r->kv_block_seconds() / span * replica_gpus / total_gpus;
    }
  }
}

class Arrivals final : public EventHandler {
 public:
  Arrivals(Simulation* sim, const std::vector<Request>* requests,
           Pool* replicas)
      : sim_(sim), requests_(requests), replicas_(replicas) {}

  void start() { schedule_next(); }

 private:
  void schedule_next() {
    if (next_ >= requests_->size()) return;
    sim_->schedule_at(Picoseconds::from_seconds((*requests_)[next_].arrival_s), this, next_);
    ++next_;
  }
  void on_event(uint64_t tag) override {
    Replica* target = (*replicas_)[least_loaded(*replicas_, {})].get();
    schedule_next();  // before the replica reacts, so equal-time arrivals keep their order
    target->arrive(static_cast<int32_t>(tag));
  }

  Simulation* sim_;
  const std::vector<Request>* requests_;
  Pool* replicas_;
  size_t next_ = 0;
};

}  // namespace

ServingOutcome simulate_serving(const std::vector<Request>& requests, const IterationModel& model,
                                const ReplicaSettings& settings, int replicas) {
  ServingOutcome outcome;
  outcome.records.resize(requests.size());
  Simulation sim;
  Pool pool;
  for (int r = 0; r < replicas; ++r) {
    pool.push_back(std::make_unique<Replica>(&sim, &model, settings, &requests, &outcome.records));
  }
  Arrivals arrivals(&sim, &requests, &pool);
  arrivals.start();
  sim.run();
  outcome.end = sim.now();
  add_pool(pool, 1, replicas, &outcome);
  return outcome;
}

ServingOutcome simulate_disaggregated(const std::vector<Request>& requests,
                                      const ServingPoolSpec& prefill,
                                      const ServingPoolSpec& decode, double kv_bytes_per_token,
                                      const Topology* topology) {
  CLUSTERSIM_CHECK(prefill.settings.batching == schema::CONTINUOUS &&
                       decode.settings.batching == schema::CONTINUOUS,
                   "disaggregated serving with static batching");
  ServingOutcome outcome;
  outcome.records.resize(requests.size());
  Simulation sim;
  KvTransfers links(&sim, topology, prefill.placement, decode.placement);
  Pool prefills, decodes;
  std::vector<int64_t> incoming(decode.placement.replicas(), 0);  // KV caches on their way
  for (int d = 0; d < decode.placement.replicas(); ++d) {
    decodes.push_back(std::make_unique<Replica>(&sim, decode.model, decode.settings, &requests,
                                                &outcome.records));
  }
  for (int p = 0; p < prefill.placement.replicas(); ++p) {
    ReplicaSettings settings = prefill.settings;
    settings.hand_off = [&, p](int32_t request, int64_t blocks) {
      const size_t d = least_loaded(decodes, incoming);
      ++incoming[d];
      const Picoseconds start = sim.now();
      const double bytes = kv_bytes_per_token * requests[request].input_tokens;
      links.send(p, static_cast<int>(d), bytes, [&, p, d, request, blocks, start] {
        outcome.records[request].kv_transfer = sim.now() - start;
        prefills[p]->release(blocks);
        --incoming[d];
        decodes[d]->accept_prefilled(request);
      });
    };
    prefills.push_back(
        std::make_unique<Replica>(&sim, prefill.model, settings, &requests, &outcome.records));
  }
  Arrivals arrivals(&sim, &requests, &prefills);
  arrivals.start();
  sim.run();
  outcome.end = sim.now();
  const int gpus = prefill.placement.gpus * prefill.placement.replicas() +
                   decode.placement.gpus * decode.placement.replicas();
  add_pool(prefills, prefill.placement.gpus, gpus, &outcome);
  add_pool(decodes, decode.placement.gpus, gpus, &outcome);
  for (const auto& r : decodes) outcome.decode_prompt_iterations += r->prompt_iterations();
  outcome.kv_bytes_sent = links.bytes_sent();
  outcome.kv_bytes_received = links.bytes_received();
  return outcome;
}

}  // namespace clustersim
