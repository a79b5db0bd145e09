// Builds a cluster's Topology from catalog entries: an instance type (its GPUs, how they are
// joined inside the node, its NICs), a fabric between nodes, and the link classes' efficiencies.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/io/catalog.h"
#include "sim/net/topology.h"

namespace clustersim {

struct ClusterSpec {
  const schema::InstanceType* instance = nullptr;
  int nodes = 1;
  int gpus_per_node = 0;        // 0: all of the instance's GPUs
  int nvlink_domain_nodes = 0;  // nodes of each NVLink domain used; 0: the instance's domain
  const schema::Fabric* fabric = nullptr;           // null: every NIC on one non-blocking switch
  std::optional<double> oversubscription_override;  // replaces the fabric's ratio
};

struct TopologyOrError {
  std::unique_ptr<Topology> topology;
  std::string error;  // non-empty when topology is null: what is wrong with the request
};

// Requires: `catalog` loaded without errors and outlives nothing (the topology copies numbers).
//
// Inside a node: NVSWITCH (and, approximated as a switch with each GPU's total NVLink bandwidth,
// NVLINK_HYBRID_CUBE_MESH, and HCCS with each NPU's HCCS bandwidth and the "hccs" link class)
// joins every GPU to one NVSwitch vertex, shared by all the nodes of a
// multi-node NVLink domain (instance.nvlink_domain_gpus: the trays of an NVL72 rack);
// NVLINK_BRIDGE_PAIRS adds an NVLink between GPUs 2k and 2k+1; every GPU also has its PCIe link.
// NVLink capacities use the link class of the GPU's NVLink generation ("nvlink5") when the
// catalog has one, else "nvlink". NVSwitch nodes have one PCIe
// switch per NIC group (GPU-to-NIC affinity: GPU i uses group i*K/g of K = min(NICs, GPUs));
// other nodes have one host bridge for all GPUs and NICs, or with instance.cpu_sockets one per
// socket (GPUs and NICs split evenly in order), every two sockets joined by a link of the
// socket's link_gb_per_s at the "socket" link class's efficiency, its step_latency_us the link's
// latency each way.
// Between nodes: SINGLE_SWITCH, CLOS (leaves of nodes_per_leaf nodes, uplinks = downlinks /
// oversubscription to an aggregated spine) or RAIL_OPTIMIZED (NIC k of each node on rail leaf k).
TopologyOrError build_topology(const ClusterSpec& spec, const Catalog& catalog);

// The pools of a mix as one cluster (a pipeline across them): each pool's nodes, in order, built
// as build_topology builds them and joined by their own leaves; every leaf of pool i goes up to
// one spine shared by all pools at pool_uplink_bytes_per_s[i] over its leaves (its fabric's uplink
// at most), so traffic between pools crosses the inter-pool network
// (net/inter_pool_topology.h's capacities). Step latencies and the tree's share are those of the
// pool with the slowest network; NVLink SHARP only where every pool has it.
// Requires: every pool the same GPUs per node and NVLink domain nodes (else an error).
TopologyOrError build_joined_topology(const std::vector<ClusterSpec>& pools,
                                      const std::vector<double>& pool_uplink_bytes_per_s,
                                      const Catalog& catalog);

// The link class of the network between nodes of `instance` (by its network kind: "efa",
// "infiniband", ...); null when the catalog has none.
const schema::LinkClass* network_link_class(const schema::InstanceType& instance,
                                            const Catalog& catalog);

// What a tensor-parallel degree must divide for its groups (consecutive GPUs) to stay inside one
// NVLink domain of a cluster of `nodes` nodes using `gpus_per_node` GPUs each, `domain_nodes`
// nodes per domain: all GPUs when the cluster is one domain, else the greatest common divisor of
// a domain's and the cluster's GPUs (the last domain may be partial).
int nvlink_domain_span_gpus(int nodes, int gpus_per_node, int domain_nodes);

}  // namespace clustersim
