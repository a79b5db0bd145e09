// Routing transfers onto shared link capacities.
#include "sim/net/network.h"

#include <algorithm>

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
  links_on_routes_.clear();
  for (auto [from, to] : edges) add_route(from, to, bytes_per_edge);
  start_on_routes(bytes_per_edge, latency, std::move(done));
}

void Network::start_transfer(int from, int to, double bytes, Picoseconds latency,
                             std::function<void()> done) {
  links_on_routes_.clear();
  add_route(from, to, bytes);
  start_on_routes(bytes, latency, std::move(done));
}

void Network::add_route(int from, int to, double bytes) {
  CLUSTERSIM_CHECK(from != to, "a transfer from a GPU to itself");
  const std::vector<int32_t>& route = topology_->route(from, to);
  links_on_routes_.insert(links_on_routes_.end(), route.begin(), route.end());
  sent_[from] += bytes;
  received_[to] += bytes;
}

void Network::start_on_routes(double bytes, Picoseconds latency, std::function<void()> done) {
  // Uses in increasing link order, each link once with its count: the same edges give the same
  // uses whatever their order.
  std::sort(links_on_routes_.begin(), links_on_routes_.end());
  uses_.clear();
  for (int32_t link : links_on_routes_) {
    if (!uses_.empty() && uses_.back().constraint == link) {
      ++uses_.back().multiplicity;
    } else {
      uses_.push_back({link, 1});
    }
  }
  links_.start(bytes, uses_, latency, std::move(done));
}

void Network::start_on_links(const std::vector<MaxMinFair::Use>& uses, double bytes,
                             Picoseconds latency, std::function<void()> done) {
  links_.start(bytes, uses, latency, std::move(done));
}

void Network::count_bytes(int gpu, double sent, double received) {
  sent_[gpu] += sent;
  received_[gpu] += received;
}

}  // namespace clustersim
