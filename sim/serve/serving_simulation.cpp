// The load balancer and the arrivals on the engine; the hand-off between pools.
#include "sim/serve/serving_simulation.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "sim/serve/attention_dp_group.h"
#include "sim/serve/least_loaded.h"
#include "sim/serve/prefix_routing.h"
#include "sim/util/check.h"

namespace clustersim {
namespace {

// Replicas, or attention-data-parallel groups (attention_dp_group.h), each constructed when the
// balancer first sends it a request: a unit never sent one has no state to keep (its load stays 0,
// it schedules nothing, and its counts and shares, all 0, add nothing to the outcome's sums), so
// that a pool of far more units than the traffic keeps busy costs its used units' memory alone.
template <typename Unit>
class PoolOf {
 public:
  PoolOf(size_t units, std::function<std::unique_ptr<Unit>(size_t unit)> make)
      : units_(units), make_(std::move(make)) {}
  Unit* operator[](size_t unit) {
    if (!units_[unit]) {
      units_[unit] = make_(unit);
      ++used_;
    }
    return units_[unit].get();
  }
  // Calls f on each unit sent a request, in index order.
  template <typename F>
  void for_each_used(F f) const {
    for (const auto& u : units_) {
      if (u) f(*u);
    }
  }
  int64_t used() const { return used_; }

 private:
  std::vector<std::unique_ptr<Unit>> units_;
  std::function<std::unique_ptr<Unit>(size_t)> make_;
  int64_t used_ = 0;
};
using Pool = PoolOf<Replica>;

// `settings` telling `loads` each unit's outstanding requests, unit `unit` of them.
ReplicaSettings reporting_load(ReplicaSettings settings, LeastLoaded* loads, size_t unit) {
  settings.on_outstanding = [loads, unit](int64_t outstanding) { loads->set(unit, outstanding); };
  return settings;
}

// Adds a pool's counts and its GPU-weighted busy and KV shares (of `total_gpus`) to `outcome`.
template <typename Unit>
void add_pool(const PoolOf<Unit>& pool, int replica_gpus, int total_gpus, ServingOutcome* outcome) {
  const double span = outcome->end.seconds();
  outcome->replicas_used += pool.used();
  pool.for_each_used([&](const Unit& r) {
    outcome->iterations += r.iterations();
    outcome->preemptions += r.preemptions();
    outcome->accepted_tokens += r.accepted_tokens();
    outcome->verifications += r.verifications();
    outcome->peak_kv_committed = std::max(outcome->peak_kv_committed, r.peak_committed_fraction());
    outcome->peak_batched += r.peak_batched();
    if (span > 0) {
      outcome->busy_fraction += r.busy().seconds() / span * replica_gpus / total_gpus;
      outcome->kv_fraction += r.kv_block_seconds() / span * replica_gpus / total_gpus;
    }
  });
}

// Starts `source`, handing each arrival to the least loaded replica of `pool` (`loads`: their
// outstanding requests), or the one `router` picks (its record made first when the source makes
// requests as it goes).
template <typename Unit>
void start_arrivals(RequestSource* source, Simulation* sim, PoolOf<Unit>* pool,
                    const LeastLoaded* loads, std::vector<RequestRecord>* records,
                    PrefixAwareRouter* router = nullptr) {
  records->resize(source->requests().size());
  source->start(sim, [source, pool, loads, records, router](int32_t request) {
    if (static_cast<size_t>(request) >= records->size()) records->resize(request + 1);
    const size_t replica =
        router != nullptr ? router->route(source->requests()[request], *loads) : loads->least();
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
  LeastLoaded loads(replicas, routing == schema::PREFIX_AWARE);
  const ReplicaSettings reporting = reporting_to(source, settings);
  Pool pool(replicas, [&](size_t r) {
    return std::make_unique<Replica>(&sim, &model, reporting_load(reporting, &loads, r),
                                     &source->requests(), &outcome.records);
  });
  std::optional<PrefixAwareRouter> router;
  if (routing == schema::PREFIX_AWARE) router.emplace(replicas);
  start_arrivals(source, &sim, &pool, &loads, &outcome.records, router ? &*router : nullptr);
  sim.run();
  outcome.end = sim.now();
  add_pool(pool, 1, replicas, &outcome);
  outcome.peak_busy_replicas = loads.peak_busy();
  return outcome;
}

ServingOutcome simulate_attention_data_parallel(RequestSource* source,
                                                const AttentionDataParallelModel& model,
                                                const ReplicaSettings& settings, int replicas) {
  ServingOutcome outcome;
  Simulation sim;
  LeastLoaded loads(replicas);
  const ReplicaSettings reporting = reporting_to(source, settings);
  PoolOf<AttentionDataParallelGroup> pool(replicas, [&](size_t r) {
    return std::make_unique<AttentionDataParallelGroup>(
        &sim, &model, reporting_load(reporting, &loads, r), &source->requests(),
        &outcome.records);
  });
  start_arrivals(source, &sim, &pool, &loads, &outcome.records);
  sim.run();
  outcome.end = sim.now();
  add_pool(pool, 1, replicas, &outcome);
  outcome.peak_busy_replicas = loads.peak_busy();
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
  // A decode replica's load: its requests outstanding and the KV caches on their way to it.
  std::vector<int64_t> incoming(decode.placement.replicas(), 0);
  BusyUnits busy;  // of both pools
  LeastLoaded decode_loads(decode.placement.replicas(), false, &busy);
  LeastLoaded prefill_loads(prefill.placement.replicas(), false, &busy);
  const ReplicaSettings decode_settings = reporting_to(source, decode.settings);
  Pool decodes(decode.placement.replicas(), [&](size_t d) {
    ReplicaSettings settings = decode_settings;
    settings.on_outstanding = [&decode_loads, &incoming, d](int64_t outstanding) {
      decode_loads.set(d, outstanding + incoming[d]);
    };
    return std::make_unique<Replica>(&sim, decode.model, settings, &requests, &outcome.records);
  });
  const ReplicaSettings prefill_settings = reporting_to(source, prefill.settings);
  // Declared before its units' hand-offs, which name it.
  std::optional<Pool> prefills;
  prefills.emplace(prefill.placement.replicas(), [&](size_t p) {
    ReplicaSettings settings = reporting_load(prefill_settings, &prefill_loads, p);
    settings.hand_off = [&, p](int32_t request, int64_t blocks) {
      const size_t d = decode_loads.least();
      ++incoming[d];
      decode_loads.set(d, decode_loads.load(d) + 1);
      const Picoseconds start = sim.now();
      const double bytes = kv_bytes_per_token * requests[request].input_tokens;
      links.send(static_cast<int>(p), static_cast<int>(d), bytes,
                 [&, p, d, request, blocks, start] {
                   outcome.records[request].kv_transfer = sim.now() - start;
                   (*prefills)[p]->release(blocks);
                   --incoming[d];
                   decode_loads.set(d, decode_loads.load(d) - 1);
                   decodes[d]->accept_prefilled(request);  // its on_outstanding adds it back
                 });
    };
    return std::make_unique<Replica>(&sim, prefill.model, settings, &requests, &outcome.records);
  });
  start_arrivals(source, &sim, &*prefills, &prefill_loads, &outcome.records);
  sim.run();
  outcome.end = sim.now();
  const int gpus = prefill.placement.gpus * prefill.placement.replicas() +
                   decode.placement.gpus * decode.placement.replicas();
  add_pool(*prefills, prefill.placement.gpus, gpus, &outcome);
  add_pool(decodes, decode.placement.gpus, gpus, &outcome);
  outcome.peak_busy_replicas = busy.peak;
  decodes.for_each_used(
      [&](const Replica& r) { outcome.decode_prompt_iterations += r.prompt_iterations(); });
  outcome.kv_bytes_sent = links.bytes_sent();
  outcome.kv_bytes_received = links.bytes_received();
  return outcome;
}

}  // namespace clustersim
