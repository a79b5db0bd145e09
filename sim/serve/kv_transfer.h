// The KV cache of a prefilled request crossing from its prefill replica to its decode replica in
// a disaggregated deployment, on the deployment's topology: NVLink when both replicas sit in one
// node, else the NICs and the fabric, every transfer sharing the links it crosses with the others
// in flight (network.h's max-min fair sharing on the engine).
//
// Not thread-safe; one per simulation, which (with the topology) must outlive it.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "sim/engine/simulation.h"
#include "sim/net/network.h"
#include "sim/net/topology.h"

namespace clustersim {

// Where a pool's replicas sit: replica r holds GPUs first_gpu[r] .. first_gpu[r] + gpus - 1.
struct PoolPlacement {
  std::vector<int> first_gpu;
  int gpus = 1;
  int replicas() const { return static_cast<int>(first_gpu.size()); }
};

class KvTransfers {
 public:
  // `topology` null: a free, infinitely fast link (every transfer arrives the instant it starts).
  // Requires: the placements' GPUs on `topology`, the pools' GPUs disjoint.
  KvTransfers(Simulation* sim, const Topology* topology, PoolPlacement prefill,
              PoolPlacement decode);

  // Sends `bytes` from prefill replica `p` to decode replica `d`, split evenly over
  // n = max(prefill GPUs, decode GPUs) GPU pairs (each rank sends its shard of the heads and
  // layers), pair k from the prefill replica's GPU k mod its GPUs to the decode replica's GPU
  // k mod its GPUs, each after its route's latency. Calls `done` once every pair has arrived.
  void send(int p, int d, double bytes, std::function<void()> done);

  double bytes_sent() const;      // over every GPU, so far
  double bytes_received() const;

 private:
  PoolPlacement prefill_, decode_;
  std::unique_ptr<Network> network_;  // null: the free link
  double free_bytes_ = 0;             // moved over the free link
};

}  // namespace clustersim
