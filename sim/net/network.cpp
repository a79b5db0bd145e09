// Routing transfers onto shared link capacities.
#include "sim/net/network.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <map>

#include "sim/net/replicated_routes.h"
#include "sim/util/check.h"
#include "sim/util/fnv1a.h"

namespace clustersim {
Network::Network(Simulation* sim, const Topology* topology, int replicas)
    : sim_(sim),
      topology_(topology),
      replicas_(replicas),
      links_(sim, topology->link_capacities()),
      sent_(topology->gpu_count(), 0),
      received_(topology->gpu_count(), 0) {
  if (replicas > 1) {
    symmetry_ = &topology->rank_symmetry();
    CLUSTERSIM_CHECK(
        std::has_single_bit(static_cast<unsigned>(replicas)) && replicas <= symmetry_->max_ranks(),
        "replicas the topology's rank symmetry does not allow");
  }
}

void Network::start_coupled(const std::vector<std::pair<int, int>>& edges, double bytes_per_edge,
                            Picoseconds latency, std::function<void()> done) {
  for (auto [from, to] : edges) count_edge(from, to, bytes_per_edge);
  links_.start_interned(bytes_per_edge, coupled_uses(edges).uses, latency, std::move(done));
}

double Network::stage_coupled(const std::vector<std::pair<int, int>>& edges,
                              double bytes_per_edge) {
  for (auto [from, to] : edges) count_edge(from, to, bytes_per_edge);
  const CoupledUses& coupled = coupled_uses(edges);
  staged_ = coupled.uses;
  return coupled.idle_rate;
}

void Network::start_staged(double wire_bytes_per_edge, Picoseconds latency,
                           std::function<void()> done) {
  links_.start_interned(wire_bytes_per_edge, staged_, latency, std::move(done));
}

size_t Network::EdgesHash::operator()(const std::vector<std::pair<int, int>>& edges) const {
  Fnv1a hash;
  for (auto [from, to] : edges) {
    hash.add(static_cast<uint32_t>(from));
    hash.add(static_cast<uint32_t>(to));
  }
  return static_cast<size_t>(hash.value());
}

const Network::CoupledUses& Network::coupled_uses(const std::vector<std::pair<int, int>>& edges) {
  auto [it, inserted] = coupled_uses_.try_emplace(edges);
  if (inserted) {
    uses_.clear();
    for (auto [from, to] : edges) append_route(from, to);
    merge_uses(&uses_);
    const std::vector<double>& capacities = topology_->link_capacities();
    double rate = std::numeric_limits<double>::infinity();
    for (const MaxMinFair::Use& use : uses_) {
      rate = std::min(rate, capacities[use.constraint] / use.multiplicity);
    }
    it->second = {links_.intern_uses(uses_), rate};
  }
  return it->second;
}

int32_t Network::prepare_coupled(const std::vector<std::pair<int, int>>& edges) {
  CLUSTERSIM_CHECK(!edges.empty(), "a coupled transfer without an edge");
  std::map<int, int> from, to;
  for (auto [a, b] : edges) {
    ++from[a];
    ++to[b];
  }
  prepared_.push_back(
      {coupled_uses(edges).uses, {from.begin(), from.end()}, {to.begin(), to.end()}});
  return static_cast<int32_t>(prepared_.size() - 1);
}

int64_t Network::start_prepared(int32_t prepared, double bytes_per_edge, Picoseconds latency,
                                std::function<void()> done) {
  const Prepared& p = prepared_.at(prepared);
  for (auto [gpu, n] : p.edges_from) count_bytes(gpu, n * bytes_per_edge, 0);
  for (auto [gpu, n] : p.edges_to) count_bytes(gpu, 0, n * bytes_per_edge);
  return links_.start_interned(bytes_per_edge, p.uses, latency, std::move(done));
}

Picoseconds Network::prepared_time_alone(const std::vector<PreparedLoad>& loads,
                                         Picoseconds latency) const {
  Simulation idle;
  SharedBandwidth links(&idle, topology_->link_capacities());
  Picoseconds end;
  for (const PreparedLoad& load : loads) {
    const int32_t uses = links.intern_uses(links_.uses(prepared_.at(load.prepared).uses));
    links.start_interned(load.bytes_per_edge, uses, latency, [&] { end = idle.now(); });
  }
  idle.run();
  return end;
}

LinkKind Network::prepared_binding_link(const std::vector<PreparedLoad>& loads) const {
  std::map<int32_t, double> bytes;  // by link
  for (const PreparedLoad& load : loads) {
    for (const MaxMinFair::Use& use : links_.uses(prepared_.at(load.prepared).uses)) {
      bytes[use.constraint] += load.bytes_per_edge * use.multiplicity;
    }
  }
  CLUSTERSIM_CHECK(!bytes.empty(), "a binding link of no transfer");
  // Seconds each link takes for its bytes alone; the most, within rounding, binds.
  double most = 0;
  for (auto [link, b] : bytes) most = std::max(most, b / topology_->link_capacities()[link]);
  constexpr double kTie = 1e-9;  // relative: equal capacities computed along different paths
  LinkKind binding = LinkKind::kNvlink;
  bool found = false;
  for (auto [link, b] : bytes) {
    if (b / topology_->link_capacities()[link] < most * (1 - kTie)) continue;
    const LinkKind kind = topology_->links()[link].kind;
    if (!found || kind == LinkKind::kNetwork) binding = kind;
    found = true;
  }
  return binding;
}

int64_t Network::start_transfer(int from, int to, double bytes, Picoseconds latency,
                                std::function<void()> done) {
  const int32_t uses = route_uses(from, to);
  count_edge(from, to, bytes);
  return links_.start_interned(bytes, uses, latency, std::move(done));
}

int32_t Network::route_uses(int from, int to) {
  const uint64_t key = (static_cast<uint64_t>(from) << 32) | static_cast<uint32_t>(to);
  auto [it, inserted] = route_uses_.try_emplace(key);
  if (inserted) {
    uses_.clear();
    append_route(from, to);
    merge_uses(&uses_);
    it->second = links_.intern_uses(uses_);
  }
  return it->second;
}

void Network::count_edge(int from, int to, double bytes) {
  for (int r = 0; r < replicas_; ++r) {
    sent_[from + r] += bytes;
    received_[to + r] += bytes;
  }
}

void Network::append_route(int from, int to) {
  CLUSTERSIM_CHECK(from != to, "a transfer from a GPU to itself");
  if (replicas_ == 1) {
    for (int32_t link : topology_->route(from, to)) uses_.push_back({link, 1});
    return;
  }
  const std::vector<MaxMinFair::Use>& folded = replicated_route(from, to);
  uses_.insert(uses_.end(), folded.begin(), folded.end());
}

const std::vector<MaxMinFair::Use>& Network::replicated_route(int from, int to) {
  const ReplicatedRoutes::Route& route =
      topology_->replicated_routes().route(from, to, replicas_, *topology_);
  symmetric_ = symmetric_ && route.symmetric;
  if (!symmetric_) sim_->stop();
  return route.uses;
}

void Network::start_on_links(const std::vector<MaxMinFair::Use>& uses, double bytes,
                             Picoseconds latency, std::function<void()> done) {
  uses_ = uses;
  if (replicas_ > 1) fold_replicas(*symmetry_, replicas_, &uses_);
  links_.start(bytes, uses_, latency, std::move(done));
}

void Network::fingerprint(StateFingerprint* f) const {
  if (!symmetric_) f->make_incomparable();
  links_.fingerprint(f);
}

void Network::count_bytes(int gpu, double sent, double received) {
  for (int r = 0; r < replicas_; ++r) {
    sent_[gpu + r] += sent;
    received_[gpu + r] += received;
  }
}

}  // namespace clustersim
