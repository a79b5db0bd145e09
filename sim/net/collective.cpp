// Collective requests: names, checks, the automatic choice of algorithm and dispatch.
#include "sim/net/collective.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "sim/net/collective_algorithms.h"
#include "sim/net/idle_collective_times.h"
#include "sim/util/number_format.h"

namespace clustersim {
namespace {

const std::map<std::string, CollectiveOp> kOps = {
    {"all_reduce", CollectiveOp::kAllReduce}, {"reduce_scatter", CollectiveOp::kReduceScatter},
    {"all_gather", CollectiveOp::kAllGather}, {"broadcast", CollectiveOp::kBroadcast},
    {"all_to_all", CollectiveOp::kAllToAll},  {"send_recv", CollectiveOp::kSendRecv}};
const std::map<std::string, CollectiveAlgorithm> kAlgorithms = {
    {"auto", CollectiveAlgorithm::kAuto}, {"ring", CollectiveAlgorithm::kRing},
    {"tree", CollectiveAlgorithm::kTree}, {"hierarchical", CollectiveAlgorithm::kHierarchical},
    {"nvls", CollectiveAlgorithm::kNvls}, {"direct", CollectiveAlgorithm::kDirect}};

template <class Map, class Value>
std::string name_of(const Map& map, Value value) {
  for (const auto& [name, v] : map) {
    if (v == value) return name;
  }
  return "?";
}

// Why `algorithm` does not apply to `c`, or "".
std::string algorithm_problem(const Collective& c, CollectiveAlgorithm algorithm,
                              const Topology& t) {
  const bool point_to_point = c.op == CollectiveOp::kAllToAll || c.op == CollectiveOp::kSendRecv;
  const std::string name = collective_algorithm_name(algorithm);
  switch (algorithm) {
    case CollectiveAlgorithm::kAuto:
      return "";
    case CollectiveAlgorithm::kDirect:
      return point_to_point ? "" : "direct applies to all_to_all and send_recv";
    case CollectiveAlgorithm::kRing:
      return point_to_point ? "ring does not apply to " + collective_op_name(c.op) : "";
    case CollectiveAlgorithm::kTree:
    case CollectiveAlgorithm::kHierarchical: {
      if (c.op != CollectiveOp::kAllReduce) return name + " applies to all_reduce only";
      const auto domains = gpus_by_domain(c.gpus, t);
      if (domains.size() < 2) return name + " needs GPUs in two or more NVLink domains (nodes)";
      if (algorithm == CollectiveAlgorithm::kHierarchical) {
        for (const auto& domain : domains) {
          if (domain.size() != domains[0].size())
            return "hierarchical needs as many GPUs in every NVLink domain";
        }
        if (domains[0].size() < 2) return "hierarchical needs two or more GPUs per NVLink domain";
      }
      return "";
    }
    case CollectiveAlgorithm::kNvls:
      if (c.op != CollectiveOp::kAllReduce) return "nvls applies to all_reduce only";
      if (t.nvls_capacity() <= 0) {
        return "nvls needs NVLink SHARP: NVLink 4 or later GPUs on NVSwitches, which this "
               "instance lacks";
      }
      if (gpus_by_domain(c.gpus, t).size() != 1) return "nvls works within one NVLink domain";
      return "";
  }
  return "";
}

}  // namespace

std::optional<CollectiveOp> parse_collective_op(const std::string& name) {
  auto it = kOps.find(name);
  return it == kOps.end() ? std::nullopt : std::optional(it->second);
}

std::optional<CollectiveAlgorithm> parse_collective_algorithm(const std::string& name) {
  auto it = kAlgorithms.find(name);
  return it == kAlgorithms.end() ? std::nullopt : std::optional(it->second);
}

std::string collective_op_name(CollectiveOp op) { return name_of(kOps, op); }
std::string collective_algorithm_name(CollectiveAlgorithm a) { return name_of(kAlgorithms, a); }

double bus_bandwidth_factor(CollectiveOp op, int gpus) {
  const double n = gpus;
  switch (op) {
    case CollectiveOp::kAllReduce:
      return 2 * (n - 1) / n;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
    case CollectiveOp::kAllToAll:
      return (n - 1) / n;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kSendRecv:
      return 1;
  }
  return 1;
}

std::string collective_problem(const Collective& c, const Topology& t) {
  if (c.gpus.size() < 2) {
    return "a collective needs at least two GPUs, got " + std::to_string(c.gpus.size());
  }
  if (c.op == CollectiveOp::kSendRecv && c.gpus.size() != 2) {
    return "send_recv needs exactly two GPUs, sender first";
  }
  std::set<int> seen;
  for (int gpu : c.gpus) {
    if (gpu < 0 || gpu >= t.gpu_count()) {
      return "GPU " + std::to_string(gpu) + " is not in the cluster (0.." +
             std::to_string(t.gpu_count() - 1) + ")";
    }
    if (!seen.insert(gpu).second) return "GPU " + std::to_string(gpu) + " appears twice";
  }
  if (!(c.bytes > 0)) return "the size must be > 0 bytes, got " + format_number(c.bytes);
  return algorithm_problem(c, c.algorithm, t);
}

CollectiveAlgorithm choose_algorithm(const Collective& c, const Topology& t) {
  if (c.algorithm != CollectiveAlgorithm::kAuto) return c.algorithm;
  if (c.op == CollectiveOp::kAllToAll || c.op == CollectiveOp::kSendRecv) {
    return CollectiveAlgorithm::kDirect;
  }
  CollectiveAlgorithm best = CollectiveAlgorithm::kRing;
  Picoseconds best_time = Picoseconds::max();
  // NCCL's algorithms only: hierarchical is not one of them (its closest, NVLS-tree, is not
  // modelled), so it runs only when asked for.
  for (CollectiveAlgorithm a :
       {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kTree, CollectiveAlgorithm::kNvls}) {
    if (!algorithm_problem(c, a, t).empty()) continue;
    Collective candidate = c;
    candidate.algorithm = a;
    const Picoseconds time = collective_time(t, candidate);
    if (time < best_time) {
      best_time = time;
      best = a;
    }
  }
  return best;
}

void start_collective(Network* network, const Collective& c, std::function<void()> done) {
  switch (choose_algorithm(c, network->topology())) {
    case CollectiveAlgorithm::kRing:
      return start_ring(network, c, std::move(done));
    case CollectiveAlgorithm::kTree:
      return start_tree(network, c, std::move(done));
    case CollectiveAlgorithm::kHierarchical:
      return start_hierarchical(network, c, std::move(done));
    case CollectiveAlgorithm::kNvls:
      return start_nvls(network, c, std::move(done));
    case CollectiveAlgorithm::kDirect:
    case CollectiveAlgorithm::kAuto:
      return start_direct(network, c, std::move(done));
  }
}

Picoseconds collective_time(const Topology& topology, const Collective& c) {
  return concurrent_collectives_time(topology, std::span(&c, 1));
}

Picoseconds concurrent_collectives_time(const Topology& topology,
                                        std::span<const Collective> collectives) {
  IdleCollectiveTimes& kept = topology.idle_collective_times();
  if (const std::optional<Picoseconds> time = kept.find(collectives)) return *time;
  Simulation sim;
  Network network(&sim, &topology);
  Picoseconds last(0);
  for (const Collective& c : collectives) {
    start_collective(&network, c, [&] { last = std::max(last, sim.now()); });
  }
  sim.run();
  kept.keep(collectives, last);
  return last;
}

std::function<void()> after_all(int count, std::function<void()> done) {
  // `done` lives in the shared count, not in the callback: the callback is copied once per part
  // (ring channel, tensor-parallel rank), and copying it then copies one pointer, not a chain of
  // nested callbacks (an allocation per level).
  struct Pending {
    int remaining;
    std::function<void()> done;
  };
  auto pending = std::make_shared<Pending>(Pending{count, std::move(done)});
  return [pending] {
    if (--pending->remaining == 0) pending->done();
  };
}

DomainGroups group_by_domain(const std::vector<int>& gpus, const Topology& t) {
  // Called for every collective the simulation starts: a counting sort into one list. Each
  // domain's place in the result and its GPU count first (the count of the i-th at begin[i + 1]),
  // then those counts turned into where each domain starts; placing a GPU advances its domain's
  // begin[i + 1], which so ends where domain i ends, i.e. where domain i + 1 starts.
  std::vector<int> index_of_domain(t.domains(), -1);
  DomainGroups groups;
  std::vector<int>& begin = groups.begin;
  begin.reserve(gpus.size() + 1);
  begin.push_back(0);
  for (int gpu : gpus) {
    int& index = index_of_domain[t.domain_of(gpu)];
    if (index < 0) {
      index = static_cast<int>(begin.size()) - 1;
      begin.push_back(0);
    }
    ++begin[index + 1];
  }
  int start = 0;
  for (size_t i = 1; i < begin.size(); ++i) start += std::exchange(begin[i], start);
  groups.gpus.resize(gpus.size());
  for (int gpu : gpus) groups.gpus[begin[index_of_domain[t.domain_of(gpu)] + 1]++] = gpu;
  return groups;
}

std::vector<std::vector<int>> gpus_by_domain(const std::vector<int>& gpus, const Topology& t) {
  const DomainGroups groups = group_by_domain(gpus, t);
  std::vector<std::vector<int>> domains;
  domains.reserve(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) {
    domains.emplace_back(groups[i].begin(), groups[i].end());
  }
  return domains;
}

namespace {

Picoseconds software_latency(const StepLatencies& s, LinkKind kind) {
  return kind == LinkKind::kNetwork ? s.network : kind == LinkKind::kNvlink ? s.nvlink : s.pcie;
}

ProtocolLatencies edge_latencies(int from, int to, const Topology& t) {
  const Topology::RouteInfo& route = t.route_info(from, to);
  return {software_latency(t.step_latencies(Protocol::kLowLatency), route.kind) + route.latency,
          software_latency(t.step_latencies(Protocol::kSimple), route.kind) + route.latency};
}

}  // namespace

Picoseconds step_latency(int from, int to, const Topology& t) {
  return edge_latencies(from, to, t).low;
}

Picoseconds slowest_step_latency(const std::vector<std::pair<int, int>>& edges, const Topology& t) {
  return slowest_step_latencies(edges, t).low;
}

ProtocolLatencies slowest_step_latencies(const std::vector<std::pair<int, int>>& edges,
                                         const Topology& t) {
  ProtocolLatencies slowest;
  for (auto [from, to] : edges) {
    const ProtocolLatencies edge = edge_latencies(from, to, t);
    slowest = {std::max(slowest.low, edge.low), std::max(slowest.simple, edge.simple)};
  }
  return slowest;
}

ProtocolLatencies summed_step_latencies(const std::vector<std::pair<int, int>>& edges,
                                        const Topology& t) {
  ProtocolLatencies sum;
  for (auto [from, to] : edges) {
    const ProtocolLatencies edge = edge_latencies(from, to, t);
    sum = {sum.low + edge.low, sum.simple + edge.simple};
  }
  return sum;
}

ProtocolLatencies pipelined_latencies(ProtocolLatencies sum, int64_t hops, int64_t steps) {
  return {Picoseconds(sum.low.count() * steps / hops),
          Picoseconds(sum.simple.count() * steps / hops)};
}

namespace {

// LL moves 8 bytes of data with 8 bytes of flags (NCCL's tuner halves its bandwidth).
constexpr double kLowLatencyWireFactor = 2;

// Starts the transfer Network::stage_coupled has just staged, on `protocol`.
void start_staged_on(Network* network, double bytes_per_edge, ProtocolLatencies latencies,
                     Protocol protocol, std::function<void()> done, double bandwidth_fraction) {
  const bool low = protocol == Protocol::kLowLatency;
  network->start_staged((low ? kLowLatencyWireFactor : 1) * bytes_per_edge / bandwidth_fraction,
                        low ? latencies.low : latencies.simple, std::move(done));
}

}  // namespace

void start_on_protocol(Network* network, const std::vector<std::pair<int, int>>& edges,
                       double bytes_per_edge, ProtocolLatencies latencies, Protocol protocol,
                       std::function<void()> done, double bandwidth_fraction) {
  network->stage_coupled(edges, bytes_per_edge);
  start_staged_on(network, bytes_per_edge, latencies, protocol, std::move(done),
                  bandwidth_fraction);
}

void start_with_protocol(Network* network, const std::vector<std::pair<int, int>>& edges,
                         double bytes_per_edge, ProtocolLatencies latencies,
                         std::function<void()> done, double bandwidth_fraction) {
  const double rate = network->stage_coupled(edges, bytes_per_edge) * bandwidth_fraction;
  const double low = latencies.low.seconds() + kLowLatencyWireFactor * bytes_per_edge / rate;
  const double simple = latencies.simple.seconds() + bytes_per_edge / rate;
  const bool use_low = latencies.low < latencies.simple && low < simple;
  start_staged_on(network, bytes_per_edge, latencies,
                  use_low ? Protocol::kLowLatency : Protocol::kSimple, std::move(done),
                  bandwidth_fraction);
}

}  // namespace clustersim
