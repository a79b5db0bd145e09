// Building modeled clusters from the shipped catalog (plus optional extra catalog text) in tests.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "sim/net/topology_builder.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim::testing {

// The topology of `nodes` x `instance` in the shipped catalog (`nvlink_domain_nodes` of each
// multi-node NVLink domain used, 0: all). Requires: it builds.
inline std::unique_ptr<Topology> shipped_cluster(const std::string& instance, int nodes,
                                                 int gpus_per_node = 0,
                                                 const std::string& fabric = "",
                                                 int nvlink_domain_nodes = 0) {
  const Catalog& catalog = shipped_catalog();
  ClusterSpec spec;
  spec.instance = catalog.instances().find(instance)->value;
  spec.nodes = nodes;
  spec.gpus_per_node = gpus_per_node;
  spec.nvlink_domain_nodes = nvlink_domain_nodes;
  if (!fabric.empty()) spec.fabric = catalog.fabrics().find(fabric)->value;
  TopologyOrError built = build_topology(spec, catalog);
  INFO(built.error);
  REQUIRE(built.topology != nullptr);
  return std::move(built.topology);
}

// Every GPU of the topology, in order.
inline std::vector<int> all_gpus(const Topology& t) { return t.first_gpus(); }

}  // namespace clustersim::testing
