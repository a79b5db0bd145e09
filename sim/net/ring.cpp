// Ring all-reduce, reduce-scatter and all-gather, and the pipelined chain of broadcast.
//
// A ring of n GPUs moves, over each of its n edges, 2(n-1)/n of the buffer for all-reduce and
// (n-1)/n for reduce-scatter and all-gather, in 2(n-1) or n-1 steps. NCCL pipelines the steps,
// so every edge is busy at the pace of the slowest: the ring is one coupled transfer, and its
// time is 2(n-1)/n x S / B + 2(n-1) x step latency on an idle ring of bandwidth B (the closed form
// the tests check). The data crosses the ring's hops one after the other, so the steps' latency
// is the hops' (pipelined_latency): across nodes, most steps run at NVLink latency and only those
// over the network at its own, as NCCL's tuner counts them. Each channel runs NCCL's protocol for
// its size: low latency for small buffers, Simple for large ones; inside one node over PCIe the
// one NCCL's tuner picks (nccl_tuner.h), elsewhere by the engine's own rates
// (start_with_protocol). Across NVLink domains (nodes, or the trays of an NVL72 rack: NCCL's
// nodes) the data is split over one ring per GPU of a domain (NCCL's channels); channel c enters
// every domain at its c-th GPU, so each channel crosses the network through a different NIC.
#include <algorithm>
#include <optional>
#include <span>

#include "sim/net/collective_algorithms.h"
#include "sim/net/nccl_tuner.h"

namespace clustersim {
namespace {

// The ring order of channel `channel` into `order`: NVLink domains in order, each domain's GPUs
// rotated by `channel`.
void channel_order(const DomainGroups& domains, int channel, std::vector<int>* order) {
  order->clear();
  for (size_t i = 0; i < domains.size(); ++i) {
    const std::span<const int> domain = domains[i];
    const size_t shift = static_cast<size_t>(channel) % domain.size();
    order->insert(order->end(), domain.begin() + static_cast<std::ptrdiff_t>(shift), domain.end());
    order->insert(order->end(), domain.begin(),
                  domain.begin() + static_cast<std::ptrdiff_t>(shift));
  }
}

}  // namespace

void start_ring(Network* network, const Collective& c, std::function<void()> done) {
  const Topology& t = network->topology();
  const DomainGroups domains = group_by_domain(c.gpus, t);
  const auto n = static_cast<double>(c.gpus.size());
  int channels = 1;
  if (domains.size() > 1) {
    channels = static_cast<int>(domains[0].size());
    for (size_t i = 0; i < domains.size(); ++i) {
      channels = std::min(channels, static_cast<int>(domains[i].size()));
    }
  }
  const bool chain = c.op == CollectiveOp::kBroadcast;
  double per_edge = c.bytes;  // broadcast: the whole buffer down the chain
  int steps = static_cast<int>(n) - 1;
  if (c.op == CollectiveOp::kAllReduce) {
    per_edge = 2 * (n - 1) / n * c.bytes;
    steps = 2 * (static_cast<int>(n) - 1);
  } else if (c.op != CollectiveOp::kBroadcast) {
    per_edge = (n - 1) / n * c.bytes;
  }
  // Inside one node over PCIe, the protocol NCCL's tuner picks (nccl_tuner.h) for the whole ring.
  std::optional<Protocol> tuned;
  // One domain: its GPUs are c.gpus, in the order given.
  if (domains.size() == 1 && nccl_tunes_ring(c.gpus, t)) {
    const double bus = nccl_ring_bus_gb_per_s(c.gpus, t);
    if (bus > 0) {
      tuned = nccl_ring_protocol(c.op, static_cast<int>(n), bus, t.nccl_compute_capability(),
                                 c.bytes);
    }
  }
  auto channel_done = after_all(channels, std::move(done));
  std::vector<int> order;  // of the channel being started, reused by the next
  std::vector<std::pair<int, int>> edges;
  for (int channel = 0; channel < channels; ++channel) {
    channel_order(domains, channel, &order);
    if (chain)
      std::rotate(order.begin(), std::find(order.begin(), order.end(), c.gpus[0]), order.end());
    edges.clear();
    for (size_t i = 0; i + 1 < order.size(); ++i) edges.emplace_back(order[i], order[i + 1]);
    if (!chain) edges.emplace_back(order.back(), order.front());
    const ProtocolLatencies latencies = pipelined_latencies(edges, steps, t);
    if (tuned) {
      start_on_protocol(network, edges, per_edge / channels, latencies, *tuned, channel_done);
    } else {
      start_with_protocol(network, edges, per_edge / channels, latencies, channel_done);
    }
  }
}

}  // namespace clustersim
