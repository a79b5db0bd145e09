// The load balancer and the arrivals on the engine; the hand-off between pools.
#include "sim/serve/serving_simulation.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "sim/serve/attention_dp_group.h"
#include "sim/serve/prefix_routing.h"
#include "sim/util/check.h"

namespace clustersim {
namespace {

// Replicas, or attention-data-parallel groups (attention_dp_group.h).
template <typename Unit>
using PoolOf = std::vector<std::unique_ptr<Unit>>;
using Pool = PoolOf<Replica>;

// Index of the replica with the least outstanding work plus `incoming` (lowest among equals).
template <typename Unit>
size_t least_loaded(const PoolOf<Unit>& pool, const std::vector<int64_t>& incoming) {
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
template <typename Unit>
void add_pool(const PoolOf<Unit>& pool, int replica_gpus, int total_gpus, ServingOutcome* outcome) {
  const double span = outcome->end.seconds();
  for (const auto& r : pool) {
    outcome->iterations += r->iterations();
    outcome->preemptions += r->preemptions();
    outcome->accepted_tokens += r->accepted_tokens();
    outcome->verifications += r->verifications();
    outcome->peak_kv_committed = std::max(outcome->peak_kv_committed, r->peak_committed_fraction());
    outcome->peak_batched += r->peak_batched();
    if (span > 0) {
      outcome->busy_fraction += r->busy().seconds() / span * replica_gpus / total_gpus;
      outcome->kv_fraction += r->kv_block_seconds() / span * replica_gpus / total_gpus;
    }
  }
}

// Starts `source`, handing each arrival to the least loaded replica of `pool`, or the one
// `router` picks (its record made first when the source makes requests as it goes).
template <typename Unit>
void start_arrivals(RequestSource* source, Simulation* sim, PoolOf<Unit>* pool,
                    std::vector<RequestRecord>* records, PrefixAwareRouter* router = nullptr) {
  records->resize(source->requests().size());
  source->start(sim, [source, pool, records, router](int32_t request) {
    if (static_cast<size_t>(request) >= records->size()) records->resize(request + 1);
    size_t replica = 0;
    if (router != nullptr) {
      std::vector<int64_t> loads;
      for (const auto& r : *pool) loads.push_back(r->outstanding());
      replica = router->route(source->requests()[request], loads);
    } else {
      replica = least_loaded<Unit>(*pool, {});
    }
    (*pool)[replica]->arrive(request);
  });
}

// `settings` telling `source` when each request finishes.
ReplicaSettings reporting_to(RequestSource* source, ReplicaSettings settings) {
  settings.on_finish = [source](int32_t request) { source->finished(request); };
  return settings;
}

}  // namespace

void OpenLoopArrivals::start(Simulation* sim, std::function<void(int32_t request)> arrive) {
  sim_ = sim;
  arrive_ = std::move(arrive);
  schedule_next();
}

void OpenLoopArrivals::schedule_next() {
  if (next_ >= requests_->size()) return;
  sim_->schedule_at(Picoseconds::from_seconds((*requests_)[next_].arrival_s), this, next_);
  ++next_;
}

void OpenLoopArrivals::on_event(uint64_t tag) {
  schedule_next();  // before the replica reacts, so equal-time arrivals keep their order
  arrive_(static_cast<int32_t>(tag));
}

ServingOutcome simulate_serving(const std::vector<Request>& requests, const IterationModel& model,
                                const ReplicaSettings& settings, int replicas) {
  OpenLoopArrivals source(&requests);
  return simulate_serving(&source, model, settings, replicas);
}

ServingOutcome simulate_serving(RequestSource* source, const IterationModel& model,
                                const ReplicaSettings& settings, int replicas,
                                schema::PrefixRouting routing) {
  ServingOutcome outcome;
  Simulation sim;
  Pool pool;
  const ReplicaSettings reporting = reporting_to(source, settings);
  for (int r = 0; r < replicas; ++r) {
    pool.push_back(std::make_unique<Replica>(&sim, &model, reporting, &source->requests(),
                                             &outcome.records));
  }
  std::optional<PrefixAwareRouter> router;
  if (routing == schema::PREFIX_AWARE) router.emplace(replicas);
  start_arrivals(source, &sim, &pool, &outcome.records, router ? &*router : nullptr);
  sim.run();
  outcome.end = sim.now();
  add_pool(pool, 1, replicas, &outcome);
  return outcome;
}

ServingOutcome simulate_attention_data_parallel(RequestSource* source,
                                                const AttentionDataParallelModel& model,
                                                const ReplicaSettings& settings, int replicas) {
  ServingOutcome outcome;
  Simulation sim;
  PoolOf<AttentionDataParallelGroup> pool;
  const ReplicaSettings reporting = reporting_to(source, settings);
  for (int r = 0; r < replicas; ++r) {
    pool.push_back(std::make_unique<AttentionDataParallelGroup>(
        &sim, &model, reporting, &source->requests(), &outcome.records));
  }
  start_arrivals(source, &sim, &pool, &outcome.records);
  sim.run();
  outcome.end = sim.now();
  add_pool(pool, 1, replicas, &outcome);
  return outcome;
}

ServingOutcome simulate_disaggregated(const std::vector<Request>& requests,
                                      const ServingPoolSpec& prefill,
                                      const ServingPoolSpec& decode, double kv_bytes_per_token,
                                      const Topology* topology) {
  OpenLoopArrivals source(&requests);
  return simulate_disaggregated(&source, prefill, decode, kv_bytes_per_token, topology);
}

ServingOutcome simulate_disaggregated(RequestSource* source, const ServingPoolSpec& prefill,
                                      const ServingPoolSpec& decode, double kv_bytes_per_token,
                                      const Topology* topology) {
  CLUSTERSIM_CHECK(prefill.settings.batching == schema::CONTINUOUS &&
                       decode.settings.batching == schema::CONTINUOUS,
                   "disaggregated serving with static batching");
  ServingOutcome outcome;
  const std::vector<Request>& requests = source->requests();
  Simulation sim;
  KvTransfers links(&sim, topology, prefill.placement, decode.placement);
  Pool prefills, decodes;
  std::vector<int64_t> incoming(decode.placement.replicas(), 0);  // KV caches on their way
  for (int d = 0; d < decode.placement.replicas(); ++d) {
    decodes.push_back(std::make_unique<Replica>(&sim, decode.model,
                                                reporting_to(source, decode.settings), &requests,
                                                &outcome.records));
  }
  for (int p = 0; p < prefill.placement.replicas(); ++p) {
    ReplicaSettings settings = reporting_to(source, prefill.settings);
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
  start_arrivals(source, &sim, &prefills, &outcome.records);
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
