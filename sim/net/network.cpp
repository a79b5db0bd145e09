// Routing transfers onto shared link capacities.
#include "sim/net/network.h"

#include <map>

#include "sim/util/check.h"

namespace clustersim {

Network::Network(Simulation* sim, const Topology* topology)
    : sim_(sim),
      topology_(topology),
      links_(sim),
      sent_(topology->gpu_count(), 0),
      received_(topology->gpu_count(), 0) {
  for (const LinkInfo& link : topology->links()) links_.add_constraint(link.capacity_bytes_per_s);
}

void Network::start_coupled(const std::vector<std::pair<int, int>>& edges, double bytes_per_edge,
                            Picoseconds latency, std::function<void()> done) {
  std::map<int32_t, int32_t> multiplicity;  // ordered: the same edges give the same uses
  for (auto [from, to] : edges) {
    CLUSTERSIM_CHECK(from != to, "a transfer from a GPU to itself");
    for (int32_t link : topology_->route(from, to)) ++multiplicity[link];
    sent_[from] += bytes_per_edge;
    received_[to] += bytes_per_edge;
  }
  std::vector<MaxMinFair::Use> uses;
  for (auto [link, count] : multiplicity) uses.push_back({link, count});
  links_.start(bytes_per_edge, std::move(uses), latency, std::move(done));
}

void Network::start_on_links(std::vector<MaxMinFair::Use> uses, double bytes, Picoseconds latency,
                             std::function<void()> done) {
  links_.start(bytes, std::move(uses), latency, std::move(done));
}

void Network::count_bytes(int gpu, double sent, double received) {
  sent_[gpu] += sent;
  received_[gpu] += received;
}

}  // namespace clustersim
