// Serves a list of requests with identical replicas behind a load balancer, on the engine: each
// request goes, when it arrives, to the replica with the fewest requests waiting or running (the
// lowest index among equals; blind to the replicas' prefix caches, so a prefix's requests spread
// over every replica and each replica computes it once) or, with PREFIX_AWARE routing, to the
// replica prefix_routing.h picks, and every replica runs its scheduler (replica.h).
// Disaggregated: a prefill pool so balanced prefills each request, which then goes (its KV cache
// over kv_transfer.h's links) to the decode replica with the fewest requests waiting, running or
// on their way. The requests come from a source: a list fixed in advance (open loop) or a client
// whose users send as their earlier requests finish (closed_loop.h). Under attention data
// parallelism each replica is a lockstep group of GPUs (attention_dp_group.h). Each replica tells
// the balancer its load when it changes (least_loaded.h): a choice costs O(log replicas); a
// replica is constructed when first sent a request, so replicas left idle cost a few bytes each
// (the balancer's) and nothing per request. Deterministic.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/serve/attention_data_parallel.h"
#include "sim/serve/iteration_model.h"
#include "sim/serve/kv_transfer.h"
#include "sim/serve/replica.h"
#include "sim/serve/traffic.h"

namespace clustersim {

struct ServingOutcome {
  std::vector<RequestRecord> records;  // per request, in the requests' order
  Picoseconds end;                     // when the last event ran
  double busy_fraction = 0;            // mean over GPUs of iterating time / end
  double kv_fraction = 0;              // mean over GPUs of the KV cache in use
  double peak_kv_committed = 0;        // continuous: the most of one replica's KV cache held or
                                       // promised at once (Replica::peak_committed_fraction)
  int64_t iterations = 0;
  int64_t preemptions = 0;
  // The sum over replicas (and prefill replicas) of the most requests each one's batches held at
  // once: what the deployment can hold in service, its max_batch_size or fewer where the KV cache
  // admits fewer.
  int64_t peak_batched = 0;
  // Replicas (attention-data-parallel groups, prefill and decode replicas) sent any request, and
  // the most with a request waiting, running or (decode) on its way at once.
  int64_t replicas_used = 0, peak_busy_replicas = 0;
  // Disaggregated: KV-cache bytes over every GPU, and decode iterations that ran prompt tokens
  // (a preempted request's recomputation).
  double kv_bytes_sent = 0, kv_bytes_received = 0;
  int64_t decode_prompt_iterations = 0;
  // Speculative decoding: tokens kept by verifications, and verifications (0: off).
  int64_t accepted_tokens = 0, verifications = 0;
};

// Where the requests come from, and when. Request ids are indices into requests().
class RequestSource {
 public:
  virtual ~RequestSource() = default;
  // The requests made so far, in the order made; the vector's address never changes.
  virtual const std::vector<Request>& requests() const = 0;
  // Puts the arrivals on `sim`: each request is handed to `arrive` at its arrival time.
  virtual void start(Simulation* sim, std::function<void(int32_t request)> arrive) = 0;
  // Request `request` produced its last token now.
  virtual void finished(int32_t request) = 0;
};

// Open loop: a list of requests in arrival order, one arrival scheduled at a time (the queue stays
// small however many requests there are). Borrows the list.
class OpenLoopArrivals final : public RequestSource, public EventHandler {
 public:
  explicit OpenLoopArrivals(const std::vector<Request>* requests) : requests_(requests) {}
  const std::vector<Request>& requests() const override { return *requests_; }
  void start(Simulation* sim, std::function<void(int32_t request)> arrive) override;
  void finished(int32_t) override {}

 private:
  void schedule_next();
  void on_event(uint64_t tag) override;

  const std::vector<Request>* requests_;
  Simulation* sim_ = nullptr;
  std::function<void(int32_t)> arrive_;
  size_t next_ = 0;
};

// A pool of a disaggregated deployment. Borrowed; the model outlives the simulation.
struct ServingPoolSpec {
  const IterationModel* model = nullptr;
  ReplicaSettings settings;  // continuous batching; hand_off is set by the simulation
  PoolPlacement placement;
};

// The records are indexed as the source's requests. Requires: a source not started; replicas >=
// 1; settings that let the longest request fit (else it would wait forever: the caller checks
// the memory first).
ServingOutcome simulate_serving(RequestSource* source, const IterationModel& model,
                                const ReplicaSettings& settings, int replicas,
                                schema::PrefixRouting routing = schema::LEAST_LOADED);
// Open loop: `requests` in arrival order.
ServingOutcome simulate_serving(const std::vector<Request>& requests, const IterationModel& model,
                                const ReplicaSettings& settings, int replicas);

// Attention data parallelism: `replicas` groups of model.ranks() GPUs (attention_dp_group.h),
// each arrival to the group with the fewest requests outstanding (the lowest index among
// equals). `settings`: one GPU's. Requires: a source not started; replicas >= 1; continuous
// batching; the longest request fits one GPU's KV cache.
ServingOutcome simulate_attention_data_parallel(RequestSource* source,
                                                const AttentionDataParallelModel& model,
                                                const ReplicaSettings& settings, int replicas);

// Requires: a source not started; both pools with replicas and continuous batching;
// `kv_bytes_per_token` of the whole model; the pools' placements on `topology` (null: a free,
// infinitely fast link); every request's KV cache fits a decode replica.
ServingOutcome simulate_disaggregated(RequestSource* source, const ServingPoolSpec& prefill,
                                      const ServingPoolSpec& decode, double kv_bytes_per_token,
                                      const Topology* topology);
// Open loop: `requests` in arrival order.
ServingOutcome simulate_disaggregated(const std::vector<Request>& requests,
                                      const ServingPoolSpec& prefill,
                                      const ServingPoolSpec& decode, double kv_bytes_per_token,
                                      const Topology* topology);

}  // namespace clustersim
