// NCCL's ring bandwidth search and its tuner's protocol choice for rings inside one node.
#include "sim/net/nccl_tuner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace clustersim {
namespace {

// Per-channel speeds NCCL's search tries inside a node, GB/s (search.cc speedArrayIntra and
// sm90SpeedArrayIntra).
const std::vector<double> kSpeeds = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
const std::vector<double> kSm90Speeds = {60, 50, 40, 30, 24, 20, 15, 12, 6, 3};
// A ring search keeps at most this many channels (MAXCHANNELS / 2).
constexpr int kMaxChannels = 16;
// A lower speed is tried while above this share of the best solution's (search.cc).
constexpr double kLowerSpeedShare = 0.49;
// Ring latencies in us (tuning.cc baseLat, and hwLat of a PCI ring), by Protocol.
constexpr double kBaseLatencyUs[2] = {6.6, 8.4};
constexpr double kPciHopLatencyUs[2] = {1.0, 5.7};
// LL's bus bandwidth cap inside one node, GB/s (tuning.cc llMaxBws, single node).
constexpr double kLowLatencyMaxGbPerS = 87.7;
constexpr double kLowLatencyMaxGbPerSBeforeAmpere = 39.0;
// NCCL's extra PCIe traffic of GPU peer traffic through an Intel root complex (topo.h).
constexpr double kIntelP2pOverhead = 6.0 / 5.0;
// NCCL rounds bandwidth arithmetic to 1/1000 GB/s (search.cc SUB_ROUND).
constexpr double kRounding = 1e-3;

// The most channels of `speed` every link carries.
int channels_at(const std::vector<NcclLinkLoad>& loads, double speed) {
  int channels = kMaxChannels;
  for (const NcclLinkLoad& load : loads) {
    const double fit = load.rating_gb_per_s / (load.use_per_channel * speed) + kRounding;
    channels = std::min(channels, static_cast<int>(std::floor(fit)));
  }
  return channels;
}

}  // namespace

double nccl_pcie_gb_per_s(int generation, int lanes) {
  if (generation < 1 || lanes < 1) return 0;
  // x100 Mbit/s a lane: 60 at 8 GT/s (generation 3), doubling; GB/s = lanes x that / 80.
  return lanes * 60.0 * std::pow(2.0, generation - 3) / 80;
}

bool nccl_intel_cpu(const std::string& cpu_model) {
  return cpu_model.find("Intel") != std::string::npos;
}

double nccl_socket_gb_per_s(const std::string& cpu_model) {
  if (nccl_intel_cpu(cpu_model)) return 10;                      // SKL_QPI_BW
  if (cpu_model.find("AMD") != std::string::npos) return 16;     // AMD_BW
  return 0;
}

int nccl_compute_capability(const std::string& architecture) {
  static const std::map<std::string, int> kCapabilities = {
      {"Volta", 70}, {"Turing", 75},  {"Ampere", 80},
      {"Ada Lovelace", 89}, {"Hopper", 90}, {"Blackwell", 100}};
  auto it = kCapabilities.find(architecture);
  return it == kCapabilities.end() ? 0 : it->second;
}

double nccl_ring_bus_gb_per_s(const std::vector<NcclLinkLoad>& loads, int compute_capability,
                              double gpu_total_gb_per_s) {
  const std::vector<double>& speeds = compute_capability >= 90 ? kSm90Speeds : kSpeeds;
  size_t i = 0;
  while (i + 1 < speeds.size() && speeds[i] > gpu_total_gb_per_s) ++i;
  double best_speed = 0;
  int best_channels = 0;
  for (; i < speeds.size(); ++i) {
    if (best_channels > 0 && speeds[i] / best_speed <= kLowerSpeedShare) break;
    const int channels = channels_at(loads, speeds[i]);
    if (channels * speeds[i] > best_channels * best_speed) {
      best_speed = speeds[i];
      best_channels = channels;
    }
    if (best_channels * best_speed >= gpu_total_gb_per_s) break;
  }
  if (best_channels == 0) return 0;
  // Second pass: a higher speed on the same channels.
  auto at = std::find(speeds.begin(), speeds.end(), best_speed);
  while (at != speeds.begin() && channels_at(loads, *(at - 1)) >= best_channels) --at;
  return best_channels * *at;
}

std::vector<NcclLinkLoad> nccl_ring_loads(const std::vector<int>& ring, const Topology& t) {
  std::map<int32_t, NcclLinkLoad> by_link;  // crossings of the same link add up
  for (size_t k = 0; k < ring.size(); ++k) {
    const std::vector<int32_t>& route = t.route(ring[k], ring[(k + 1) % ring.size()]);
    // A hop under one root (no link between roots) through an Intel root complex.
    bool across_roots = false;
    for (int32_t link : route) {
      const LinkInfo& info = t.links()[link];
      across_roots |= t.graph()[info.from].kind == VertexKind::kPcieSwitch &&
                      t.graph()[info.to].kind == VertexKind::kPcieSwitch;
    }
    const double use = t.nccl_intel_roots() && !across_roots ? kIntelP2pOverhead : 1;
    for (int32_t link : route) {
      const double rating = t.links()[link].nccl_gb_per_s;
      if (rating <= 0) continue;  // not rated: NVLink, never a ring's bound next to PCIe
      by_link.try_emplace(link, NcclLinkLoad{rating, 0}).first->second.use_per_channel += use;
    }
  }
  std::vector<NcclLinkLoad> loads;
  for (const auto& [link, load] : by_link) loads.push_back(load);
  return loads;
}

bool nccl_tunes_ring(const std::vector<int>& ring, const Topology& t) {
  if (t.nccl_compute_capability() == 0 || ring.size() < 2) return false;
  bool pcie = false;
  for (size_t k = 0; k < ring.size(); ++k) {
    const int from = ring[k], to = ring[(k + 1) % ring.size()];
    if (t.domain_of(from) != t.domain_of(ring[0])) return false;
    pcie |= t.route_kind(from, to) == LinkKind::kPcie;
  }
  return pcie;
}

double nccl_ring_bus_gb_per_s(const std::vector<int>& ring, const Topology& t) {
  double gpu_total = 0;
  for (auto [edge, end] = boost::out_edges(t.gpu_vertex(ring[0]), t.graph()); edge != end;
       ++edge) {
    const LinkInfo& link = t.links()[t.graph()[*edge]];
    gpu_total = link.kind == LinkKind::kNvlink || link.nccl_gb_per_s <= 0
                    ? std::numeric_limits<double>::infinity()
                    : std::max(gpu_total, link.nccl_gb_per_s);
  }
  const std::vector<NcclLinkLoad> loads = nccl_ring_loads(ring, t);
  if (loads.empty()) return 0;
  return nccl_ring_bus_gb_per_s(loads, t.nccl_compute_capability(), gpu_total);
}

double nccl_ring_time_us(CollectiveOp op, int ranks, double bus_gb_per_s, int compute_capability,
                         Protocol protocol, double bytes) {
  const int steps = op == CollectiveOp::kAllReduce   ? 2 * (ranks - 1)
                    : op == CollectiveOp::kBroadcast ? ranks
                                                     : ranks - 1;
  const auto p = static_cast<size_t>(protocol);
  double bus = bus_gb_per_s;
  if (protocol == Protocol::kLowLatency) {
    const double cap =
        compute_capability >= 80 ? kLowLatencyMaxGbPerS : kLowLatencyMaxGbPerSBeforeAmpere;
    bus = std::min(cap, bus / (op == CollectiveOp::kAllReduce ? 4.0 : 3.0));
  }
  const double algorithm_gb_per_s = bus * ranks / steps;
  const int hops = op == CollectiveOp::kBroadcast ? 1 : steps;
  const double latency_us = kBaseLatencyUs[p] + hops * kPciHopLatencyUs[p];
  return latency_us + bytes / (1000 * algorithm_gb_per_s);
}

Protocol nccl_ring_protocol(CollectiveOp op, int ranks, double bus_gb_per_s,
                            int compute_capability, double bytes) {
  const double low =
      nccl_ring_time_us(op, ranks, bus_gb_per_s, compute_capability, Protocol::kLowLatency, bytes);
  const double simple =
      nccl_ring_time_us(op, ranks, bus_gb_per_s, compute_capability, Protocol::kSimple, bytes);
  return simple < low ? Protocol::kSimple : Protocol::kLowLatency;
}

}  // namespace clustersim
