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
// every domain at its c-th GPU, so each channel crosses the network through a different NIC
// (ring_channels.h, which keeps each ring's channels per topology).
#include <optional>

#include "sim/net/collective_algorithms.h"
#include "sim/net/nccl_tuner.h"
#include "sim/net/ring_channels.h"

namespace clustersim {

void start_ring(Network* network, const Collective& c, std::function<void()> done) {
  const Topology& t = network->topology();
  const bool chain = c.op == CollectiveOp::kBroadcast;
  const RingChannels& ring = t.ring_channels().channels(c.gpus, chain, t);
  const auto n = static_cast<double>(c.gpus.size());
  const auto channels = static_cast<int>(ring.channels.size());
  const double per_edge = ring_bytes_per_edge(c);
  const int steps = (c.op == CollectiveOp::kAllReduce ? 2 : 1) * (static_cast<int>(n) - 1);
  // Inside one node over PCIe, the protocol NCCL's tuner picks (nccl_tuner.h) for the whole ring.
  std::optional<Protocol> tuned;
  // One domain: its GPUs are c.gpus, in the order given.
  if (ring.domains == 1 && nccl_tunes_ring(c.gpus, t)) {
    const double bus = nccl_ring_bus_gb_per_s(c.gpus, t);
    if (bus > 0) {
      tuned = nccl_ring_protocol(c.op, static_cast<int>(n), bus, t.nccl_compute_capability(),
                                 c.bytes);
    }
  }
  auto channel_done = after_all(channels, std::move(done));
  for (const RingChannel& channel : ring.channels) {
    const ProtocolLatencies latencies = pipelined_latencies(
        channel.step_latency_sum, static_cast<int64_t>(channel.edges.size()), steps);
    if (tuned) {
      start_on_protocol(network, channel.edges, per_edge / channels, latencies, *tuned,
                        channel_done);
    } else {
      start_with_protocol(network, channel.edges, per_edge / channels, latencies, channel_done);
    }
  }
}

double ring_bytes_per_edge(const Collective& c) {
  const auto n = static_cast<double>(c.gpus.size());
  if (c.op == CollectiveOp::kAllReduce) return 2 * (n - 1) / n * c.bytes;
  if (c.op == CollectiveOp::kBroadcast) return c.bytes;  // the whole buffer down the chain
  return (n - 1) / n * c.bytes;
}

}  // namespace clustersim
