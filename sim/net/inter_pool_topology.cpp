// The links between a mix's pools and their topology.
#include "sim/net/inter_pool_topology.h"

#include <algorithm>

#include "sim/util/check.h"

namespace clustersim {
namespace {

namespace s = schema;

// One node's network to other nodes, bytes per second at its link class's efficiency.
double node_bytes_per_s(const s::InstanceType& instance, const s::LinkClass& link_class) {
  return instance.network().total_gbit_per_s() * 1e9 / kBitsPerByte *
         link_class.efficiency_fraction();
}

}  // namespace

InterPoolLinks inter_pool_links(const std::vector<PoolEndpoint>& pools,
                                const s::InterPoolNetwork& network, const s::Fabric* fabric,
                                const Catalog& catalog) {
  InterPoolLinks links;
  std::vector<double> per_node;
  size_t slowest = 0;
  for (const PoolEndpoint& pool : pools) {
    const s::LinkClass* link_class = network_link_class(*pool.instance, catalog);
    if (!pool.instance->network().has_total_gbit_per_s() || link_class == nullptr) {
      links.error = pool.instance->name() + " has no network to reach the other pools (" +
                    (link_class ? "network.total_gbit_per_s" : "a link class of its network kind") +
                    " is missing in the catalog)";
      return links;
    }
    per_node.push_back(node_bytes_per_s(*pool.instance, *link_class));
    if (per_node.back() < per_node[slowest]) slowest = per_node.size() - 1;
  }
  links.link_class = network_link_class(*pools[slowest].instance, catalog);
  const double oversubscription =
      fabric && fabric->has_oversubscription_ratio() ? fabric->oversubscription_ratio() : 1;
  const double nic_us = fabric ? fabric->nic_latency_us() : 0;
  const double hop_us = fabric ? fabric->switch_hop_latency_us() : 0;
  links.nic_latency = Picoseconds::from_microseconds(nic_us);
  links.hop_latency = Picoseconds::from_microseconds(hop_us);
  const s::InterPoolNetwork::Kind kind = network.kind();
  for (size_t i = 0; i < pools.size(); ++i) {
    const double node =
        kind == s::InterPoolNetwork::SLOWEST_COMMON ? per_node[slowest] : per_node[i];
    double bytes = pools[i].nodes * node / oversubscription;
    if (kind == s::InterPoolNetwork::STATED) {
      bytes = std::min(pools[i].nodes * node, network.bandwidth_gbit_per_s() * 1e9 / kBitsPerByte);
    }
    links.bytes_per_s.push_back(bytes);
  }
  if (kind == s::InterPoolNetwork::STATED && network.has_latency_us()) {
    links.nic_latency = Picoseconds::from_microseconds(network.latency_us() / 2);
    links.hop_latency = Picoseconds(0);
  }
  return links;
}

InterPoolLinks shared_by_replicas(InterPoolLinks links, int replicas) {
  CLUSTERSIM_CHECK(replicas >= 1, "a pipeline has at least one replica");
  for (double& bytes : links.bytes_per_s) bytes /= replicas;
  return links;
}

std::unique_ptr<Topology> inter_pool_topology(const InterPoolLinks& links) {
  const int pools = static_cast<int>(links.bytes_per_s.size());
  auto t = std::make_unique<Topology>(pools, 1, 1);
  for (int i = 0; i < pools; ++i) t->add_vertex({VertexKind::kGpu, i, 0});
  const int32_t hub = t->add_vertex({VertexKind::kLeafSwitch, -1, 0});
  for (int i = 0; i < pools; ++i) {
    const int32_t nic = t->add_vertex({VertexKind::kNic, i, 0});
    // The pool's GPUs reach its NICs at the NICs' pace: the NIC link is the bottleneck.
    t->add_link(i, nic, links.bytes_per_s[i], {}, {}, LinkKind::kPcie);
    t->set_nic_uplink(nic, t->add_link(nic, hub, links.bytes_per_s[i], links.nic_latency,
                                       links.hop_latency + links.nic_latency, LinkKind::kNetwork));
  }
  for (Protocol p : {Protocol::kLowLatency, Protocol::kSimple}) {
    const bool simple = p == Protocol::kSimple && links.link_class->has_simple_step_latency_us();
    t->set_step_latencies(
        p, {{},
            {},
            Picoseconds::from_microseconds(simple ? links.link_class->simple_step_latency_us()
                                                  : links.link_class->step_latency_us())});
  }
  if (links.link_class->has_tree_bandwidth_fraction()) {
    t->set_tree_bandwidth_fraction(links.link_class->tree_bandwidth_fraction());
  }
  if (links.link_class->has_all_to_all_bandwidth_fraction()) {
    t->set_all_to_all_bandwidth_fraction(links.link_class->all_to_all_bandwidth_fraction());
  }
  return t;
}

}  // namespace clustersim
