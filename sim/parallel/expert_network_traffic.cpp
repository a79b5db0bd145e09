// The NIC-crossing pairs of a stage's expert all-to-alls and their bytes.
#include "sim/parallel/expert_network_traffic.h"

#include <algorithm>

#include "sim/net/collective_algorithms.h"
#include "sim/util/check.h"

namespace clustersim {

std::vector<std::vector<int>> domain_parts(const Topology& topology,
                                           const std::vector<int>& group) {
  std::vector<std::vector<int>> parts;
  std::vector<int> domain_of_part;
  for (int gpu : group) {
    const int d = topology.domain_of(gpu);
    size_t part = 0;
    while (part < domain_of_part.size() && domain_of_part[part] != d) ++part;
    if (part == domain_of_part.size()) {
      domain_of_part.push_back(d);
      parts.emplace_back();
    }
    parts[part].push_back(gpu);
  }
  return parts;
}

std::vector<std::vector<int>> domain_rails(const std::vector<std::vector<int>>& parts) {
  const bool even = std::all_of(parts.begin(), parts.end(), [&](const std::vector<int>& p) {
    return p.size() == parts.front().size();
  });
  std::vector<std::vector<int>> rails;
  if (parts.size() < 2 || !even) return rails;
  for (size_t place = 0; place < parts.front().size(); ++place) {
    rails.emplace_back();
    for (const std::vector<int>& part : parts) rails.back().push_back(part[place]);
  }
  return rails;
}

ExpertNetworkTraffic expert_network_traffic(const Topology& topology, const ExpertLayout& layout,
                                            const std::vector<int>& stage_gpus,
                                            const std::vector<double>& rail_shares,
                                            int tensor_parallel, int ranks) {
  ExpertNetworkTraffic traffic;
  const int etp = layout.expert_tensor_parallel, ep = layout.expert_parallel;
  if (ep < 2) return traffic;
  CLUSTERSIM_CHECK(ranks == tensor_parallel || etp % tensor_parallel == 0,
                   "expert-parallel groups that a replicated network cannot stand for");
  const double across = 1 / topology.all_to_all_bandwidth_fraction();
  // Every pair of `gpus` in different domains, each moving `per_edge`, into its kind.
  const auto add_pairs = [&](const std::vector<int>& gpus, double per_edge) {
    for (int from : gpus) {
      for (int to : gpus) {
        if (from == to || topology.route_kind(from, to) != LinkKind::kNetwork) continue;
        auto kind = std::find_if(
            traffic.kinds.begin(), traffic.kinds.end(),
            [&](const ExpertNetworkTraffic::Kind& k) { return k.edge_bytes_per_byte >= per_edge; });
        if (kind == traffic.kinds.end() || kind->edge_bytes_per_byte != per_edge) {
          kind = traffic.kinds.insert(kind, {{}, per_edge});
        }
        kind->edges.emplace_back(from, to);
        traffic.latency = std::max(traffic.latency, step_latency(from, to, topology));
      }
    }
  };
  for (int edp = 0; edp < layout.expert_data_parallel(); ++edp) {
    for (int e = 0; e < etp; ++e) {
      const std::vector<int> locals = expert_parallel_group(layout, e + etp * ep * edp);
      if (locals.front() % tensor_parallel >= ranks) continue;
      std::vector<int> group;
      for (int local : locals) group.push_back(stage_gpus[local]);
      const std::vector<std::vector<int>> parts = domain_parts(topology, group);
      const double share = parts.size() < rail_shares.size() ? rail_shares[parts.size()] : 0;
      const std::vector<std::vector<int>> rails = domain_rails(parts);
      if (share <= 0 || rails.empty()) {
        add_pairs(group, across / static_cast<double>(group.size()));
        continue;
      }
      for (const std::vector<int>& rail : rails) {
        add_pairs(rail, across * share / static_cast<double>(rail.size()));
      }
    }
  }
  return traffic;
}

}  // namespace clustersim
