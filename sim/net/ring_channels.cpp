// A ring's channels from its GPU list, and the rings kept per topology.
#include "sim/net/ring_channels.h"

#include <algorithm>

#include "sim/util/fnv1a.h"

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

RingChannels build_ring_channels(const std::vector<int>& gpus, bool chain, const Topology& t) {
  const DomainGroups domains = group_by_domain(gpus, t);
  size_t channels = 1;
  if (domains.size() > 1) {
    channels = domains[0].size();
    for (size_t i = 0; i < domains.size(); ++i) channels = std::min(channels, domains[i].size());
  }
  RingChannels ring{domains.size(), std::vector<RingChannel>(channels)};
  std::vector<int> order;  // of the channel being built, reused by the next
  for (size_t channel = 0; channel < channels; ++channel) {
    channel_order(domains, static_cast<int>(channel), &order);
    if (chain)
      std::rotate(order.begin(), std::find(order.begin(), order.end(), gpus[0]), order.end());
    std::vector<std::pair<int, int>>& edges = ring.channels[channel].edges;
    edges.reserve(order.size());
    for (size_t i = 0; i + 1 < order.size(); ++i) edges.emplace_back(order[i], order[i + 1]);
    if (!chain) edges.emplace_back(order.back(), order.front());
    ring.channels[channel].step_latency_sum = summed_step_latencies(edges, t);
  }
  return ring;
}

size_t RingChannelCache::GpusHash::operator()(std::span<const int> gpus) const {
  Fnv1a hash;
  for (int gpu : gpus) hash.add(static_cast<uint32_t>(gpu));
  return static_cast<size_t>(hash.value());
}

bool RingChannelCache::SameGpus::operator()(std::span<const int> a, std::span<const int> b) const {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

const RingChannels& RingChannelCache::channels(const std::vector<int>& gpus, bool chain,
                                               const Topology& t) {
  Rings& rings = rings_[chain ? 1 : 0];
  if (auto it = rings.find(std::span(gpus)); it != rings.end()) return it->second;
  RingChannels built = build_ring_channels(gpus, chain, t);
  const size_t edges = built.channels.size() * built.channels[0].edges.size();
  if (edges_kept_ + edges > kMaxEdges) {
    for (Rings& kept : rings_) kept.clear();
    edges_kept_ = 0;
  }
  edges_kept_ += edges;
  return rings.emplace(gpus, std::move(built)).first->second;
}

}  // namespace clustersim
