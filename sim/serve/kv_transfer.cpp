// KV-cache transfers between pools on the network model.
#include "sim/serve/kv_transfer.h"

#include <algorithm>
#include <numeric>

namespace clustersim {

KvTransfers::KvTransfers(Simulation* sim, const Topology* topology, PoolPlacement prefill,
                         PoolPlacement decode)
    : prefill_(std::move(prefill)), decode_(std::move(decode)) {
  if (topology != nullptr) network_ = std::make_unique<Network>(sim, topology);
}

void KvTransfers::send(int p, int d, double bytes, std::function<void()> done) {
  if (!network_) {
    free_bytes_ += bytes;
    done();
    return;
  }
  const int pairs = std::max(prefill_.gpus, decode_.gpus);
  auto left = std::make_shared<int>(pairs);
  auto arrived = [left, done = std::move(done)] {
    if (--*left == 0) done();
  };
  const Topology& topology = network_->topology();
  for (int k = 0; k < pairs; ++k) {
    const int from = prefill_.first_gpu[p] + k % prefill_.gpus;
    const int to = decode_.first_gpu[d] + k % decode_.gpus;
    network_->start_transfer(from, to, bytes / pairs, topology.route_latency(from, to), arrived);
  }
}

double KvTransfers::bytes_sent() const {
  if (!network_) return free_bytes_;
  const std::vector<double>& v = network_->bytes_sent();
  return std::accumulate(v.begin(), v.end(), 0.0);
}

double KvTransfers::bytes_received() const {
  if (!network_) return free_bytes_;
  const std::vector<double>& v = network_->bytes_received();
  return std::accumulate(v.begin(), v.end(), 0.0);
}

}  // namespace clustersim
