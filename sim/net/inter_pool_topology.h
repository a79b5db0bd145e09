// The network between the pools of a mix (a cluster made of several instance types): one
// endpoint per pool standing for all its GPUs, each joined to the others through one link whose
// capacity is what the pool can send to the other pools (its nodes' NICs on the shared fabric, the
// slowest common network, or a stated inter-pool link). The gradients of a mix's data-parallel
// replicas cross it once each pool has reduced its own (sim/parallel/pool_step.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/io/catalog.h"
#include "sim/io/schema/scenario.pb.h"
#include "sim/net/topology_builder.h"

namespace clustersim {

struct PoolEndpoint {
  const schema::InstanceType* instance = nullptr;  // with GPUs and a network in the catalog
  int nodes = 1;
};

// What one pool sends to the others per second and the one-way latency of its link, by the
// rule of `network` (scenario.proto, InterPoolNetwork) over `fabric` (null: one non-blocking
// switch). Requires: every pool's instance has network.total_gbit_per_s and a link class for its
// network kind (else the error names what is missing).
struct InterPoolLinks {
  std::vector<double> bytes_per_s;  // per pool
  Picoseconds nic_latency, hop_latency;
  const schema::LinkClass* link_class = nullptr;  // of the slowest pool's network (step latency)
  std::string error;
};
InterPoolLinks inter_pool_links(const std::vector<PoolEndpoint>& pools,
                                const schema::InterPoolNetwork& network,
                                const schema::Fabric* fabric, const Catalog& catalog);

// The links as one data-parallel replica's crossings see them in a pipeline across the pools:
// every replica sends its activations and gradients between stages at the same times, and only
// replica 0's sends are simulated (sim/parallel/pipeline_simulation.h's symmetry), so over a
// pool's one link to the others they get a 1 / `replicas` share of it, what max-min fairness
// gives each of `replicas` identical sets of flows there. Requires: replicas >= 1.
InterPoolLinks shared_by_replicas(InterPoolLinks links, int replicas);

// The topology of the links: pool i is GPU i (node i), with one NIC on a switch shared by all
// pools; its NIC link has the pool's capacity, so an all-reduce over GPUs 0..P-1 moves each
// pool's share at the pace of the slowest pool link. Requires: links.error is empty.
std::unique_ptr<Topology> inter_pool_topology(const InterPoolLinks& links);

}  // namespace clustersim
