// The kind of link that binds collectives run at once (collectives_binding_link): each one's
// transfers, as its algorithm's own code lays them out, prepared on an idle network that weighs
// their bytes on every link they cross.
#include "sim/net/collective_algorithms.h"
#include "sim/net/ring_channels.h"
#include "sim/util/check.h"

namespace clustersim {

LinkKind collectives_binding_link(const Topology& t, std::span<const Collective> collectives) {
  Simulation idle;
  Network network(&idle, &t);
  std::vector<Network::PreparedLoad> loads;
  for (const Collective& c : collectives) {
    switch (c.algorithm) {
      case CollectiveAlgorithm::kRing: {
        const std::vector<RingChannel>& channels =
            t.ring_channels().channels(c.gpus, c.op == CollectiveOp::kBroadcast, t).channels;
        for (const RingChannel& channel : channels) {
          loads.push_back({network.prepare_coupled(channel.edges),
                           ring_bytes_per_edge(c) / static_cast<double>(channels.size())});
        }
        break;
      }
      case CollectiveAlgorithm::kTree: {
        const std::vector<TreeHalf> halves = double_binary_trees(c.gpus, t);
        for (const TreeHalf& half : halves) {
          loads.push_back({network.prepare_coupled(half.edges()),
                           c.bytes / static_cast<double>(halves.size())});
        }
        break;
      }
      case CollectiveAlgorithm::kNvls:
        // Every GPU's links to the switches carry S (1 + 1/n) each way alike.
        loads.push_back({network.prepare_coupled(nvls_edges(c.gpus)), c.bytes});
        break;
      case CollectiveAlgorithm::kAuto:
      case CollectiveAlgorithm::kHierarchical:
      case CollectiveAlgorithm::kDirect:
        CLUSTERSIM_CHECK(false, "a binding link of an algorithm other than ring, tree or NVLS");
    }
  }
  return network.prepared_binding_link(loads);
}

LinkKind ring_binding_link(const Topology& t, const std::vector<int>& gpus) {
  const Collective ring{CollectiveOp::kAllReduce, gpus, 1, CollectiveAlgorithm::kRing};
  return collectives_binding_link(t, std::span(&ring, 1));
}

}  // namespace clustersim
