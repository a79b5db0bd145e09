// Construction of cluster graphs from instance types and fabrics.
#include "sim/net/topology_builder.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sim/net/nccl_tuner.h"
#include "sim/util/lower_case.h"
#include "sim/util/number_format.h"

namespace clustersim {
namespace {

namespace s = schema;

struct LinkClasses {
  const s::LinkClass* nvlink = nullptr;  // the scale-up class: NVLink, or HCCS on Ascend nodes
  const s::LinkClass* pcie = nullptr;
  const s::LinkClass* network = nullptr;
  const s::LinkClass* socket = nullptr;  // between CPU sockets, on multi-socket PCIe hosts
};

const s::LinkClass* find_link_class(const Catalog& catalog, const std::string& name,
                                    std::string* error) {
  const CatalogEntry<s::LinkClass>* entry = catalog.link_classes().find(name);
  if (entry == nullptr && error->empty()) {
    *error = "the catalog has no link_class \"" + name + "\"";
  }
  return entry ? entry->value : nullptr;
}

// The NVLink class of the GPU's generation ("nvlink5") when the catalog has one, else "nvlink".
const s::LinkClass* find_nvlink_class(const Catalog& catalog, const s::Gpu& gpu,
                                      std::string* error) {
  const std::string generation = "nvlink" + std::to_string(gpu.nvlink().generation());
  if (const CatalogEntry<s::LinkClass>* entry = catalog.link_classes().find(generation)) {
    return entry->value;
  }
  return find_link_class(catalog, "nvlink", error);
}

// The scale-up class of the node's GPUs: their NVLink generation's, or "hccs" for Ascend NPUs.
const s::LinkClass* find_scale_up_class(const Catalog& catalog, const s::InstanceType& instance,
                                        const s::Gpu& gpu, std::string* error) {
  if (instance.gpu_interconnect() == s::HCCS) return find_link_class(catalog, "hccs", error);
  return find_nvlink_class(catalog, gpu, error);
}

// Bandwidth of one GPU's scale-up links together, one direction (NVLink or HCCS).
double scale_up_gb_per_s(const s::InstanceType& instance, const s::Gpu& gpu) {
  return instance.gpu_interconnect() == s::HCCS ? gpu.hccs().per_direction_gb_per_s()
                                                : gpu.nvlink().per_direction_gb_per_s();
}

// Everything the builder needs, checked; `error` explains the first thing missing.
struct Inputs {
  const s::InstanceType* instance;
  const s::Gpu* gpu;
  int gpus_per_node;
  int nodes_per_domain = 1;  // consecutive nodes sharing one NVSwitch fabric
  LinkClasses classes;
  double nic_bytes_per_s = 0;  // per NIC vertex
  int nics = 0;                // NIC vertices per node
  int sockets = 1;             // CPU sockets whose PCIe roots the GPUs and NICs split among
  double oversubscription = 1;
};

std::string check_inputs(const ClusterSpec& spec, const Catalog& catalog, Inputs* in) {
  std::string error;
  if (spec.instance == nullptr) return "no instance type";
  in->instance = spec.instance;
  if (!has_gpu(*spec.instance)) return spec.instance->name() + " has no GPU (gpu_count is 0)";
  in->gpu = &catalog.gpu_of(*spec.instance);
  if (spec.nodes < 1) return "nodes must be >= 1, got " + std::to_string(spec.nodes);
  const int available = spec.instance->gpu_count();
  in->gpus_per_node = spec.gpus_per_node == 0 ? available : spec.gpus_per_node;
  if (in->gpus_per_node < 1 || in->gpus_per_node > available) {
    return "gpus per node must be in [1, " + std::to_string(available) + "] for " +
           spec.instance->name() + ", got " + std::to_string(in->gpus_per_node);
  }
  const s::GpuInterconnect intra = spec.instance->gpu_interconnect();
  const bool nvlink_node = intra == s::NVSWITCH || intra == s::NVLINK_HYBRID_CUBE_MESH ||
                           intra == s::NVLINK_BRIDGE_PAIRS || intra == s::HCCS;
  if (nvlink_node) {
    in->classes.nvlink = find_scale_up_class(catalog, *spec.instance, *in->gpu, &error);
  }
  in->nodes_per_domain = nvlink_domain_nodes(*spec.instance);
  if (spec.nvlink_domain_nodes > 0) {
    if (spec.nvlink_domain_nodes > in->nodes_per_domain) {
      return spec.instance->name() + " has NVLink domains of " +
             std::to_string(in->nodes_per_domain) + " node(s), fewer than the " +
             std::to_string(spec.nvlink_domain_nodes) + " asked for";
    }
    in->nodes_per_domain = spec.nvlink_domain_nodes;
  }
  const bool needs_pcie = spec.nodes > 1 || intra == s::PCIE_ONLY ||
                          (intra == s::NVLINK_BRIDGE_PAIRS && in->gpus_per_node > 2);
  if (needs_pcie) {
    in->classes.pcie = find_link_class(catalog, "pcie", &error);
    if (spec.instance->cpu_sockets().count() > 1) {
      in->sockets = spec.instance->cpu_sockets().count();
      in->classes.socket = find_link_class(catalog, "socket", &error);
    }
    if (!in->gpu->has_pcie()) {
      return "GPU \"" + in->gpu->name() + "\" has no pcie link in the catalog, needed for " +
             (spec.nodes > 1 ? "its NICs" : "GPU-to-GPU traffic");
    }
  }
  if (spec.nodes > 1) {
    const s::NodeNetwork& net = spec.instance->network();
    in->classes.network =
        find_link_class(catalog, lower_case(s::NetworkKind_Name(net.kind())), &error);
    if (!net.has_total_gbit_per_s()) {
      return spec.instance->name() + " has no network.total_gbit_per_s in the catalog";
    }
    in->nics = std::min(net.has_nic_count() ? net.nic_count() : 1, in->gpus_per_node);
    in->nic_bytes_per_s = net.total_gbit_per_s() * 1e9 / kBitsPerByte / in->nics;
    if (in->nics < 1) in->nics = 1;
  }
  if (spec.fabric && spec.fabric->has_oversubscription_ratio()) {
    in->oversubscription = spec.fabric->oversubscription_ratio();
  }
  if (spec.oversubscription_override) in->oversubscription = *spec.oversubscription_override;
  if (!(in->oversubscription >= 1 && std::isfinite(in->oversubscription))) {
    return "oversubscription must be finite and >= 1, got " + format_number(in->oversubscription);
  }
  return error;
}

Picoseconds us(double microseconds) { return Picoseconds::from_microseconds(microseconds); }

// GPUs, NVLink and PCIe of one node; returns the node's NIC vertices. `nvswitch` is the NVSwitch
// vertex of the node's NVLink domain, added by the domain's first node (-1 until then).
std::vector<int32_t> build_node(Topology* t, const Inputs& in, int node, bool multi_node,
                                int32_t* nvswitch) {
  const int g = in.gpus_per_node;
  const s::GpuInterconnect intra = in.instance->gpu_interconnect();
  const int32_t first_gpu = node * g;  // GPU vertices come first: vertex id == global GPU index
  if (in.classes.nvlink) {
    const double nvlink = scale_up_gb_per_s(*in.instance, *in.gpu) * kBytesPerGigabyte *
                          in.classes.nvlink->efficiency_fraction();
    if (intra == s::NVLINK_BRIDGE_PAIRS) {
      for (int i = 0; i + 1 < g; i += 2) {
        t->add_link(first_gpu + i, first_gpu + i + 1, nvlink, {}, {}, LinkKind::kNvlink);
      }
    } else {
      if (node % in.nodes_per_domain == 0) {
        *nvswitch = t->add_vertex({VertexKind::kNvSwitch, node, 0});
      }
      for (int i = 0; i < g; ++i)
        t->add_link(first_gpu + i, *nvswitch, nvlink, {}, {}, LinkKind::kNvlink);
    }
  }
  if (!in.classes.pcie) return {};
  const bool switch_per_nic =
      intra == s::NVSWITCH || intra == s::NVLINK_HYBRID_CUBE_MESH || intra == s::HCCS;
  // The pcie link class measures GPU-to-GPU traffic through the host; on NVLink nodes PCIe carries
  // only GPUDirect RDMA to the NIC on the same PCIe switch, measured as part of the network's
  // efficiency, so the network class applies there.
  const double pcie_efficiency = switch_per_nic ? in.classes.network->efficiency_fraction()
                                                : in.classes.pcie->efficiency_fraction();
  const double pcie = in.gpu->pcie().per_direction_gb_per_s() * kBytesPerGigabyte * pcie_efficiency;
  // PCIe switches: one per NIC group on NVSwitch nodes, else one root per CPU socket, GPU i of the
  // instance's on socket i x sockets / gpu_count, each pair of sockets joined by their link.
  const int groups = switch_per_nic ? (multi_node ? in.nics : 1) : in.sockets;
  const int group_span = switch_per_nic ? g : in.instance->gpu_count();
  std::vector<int32_t> pcie_switches;
  for (int k = 0; k < groups; ++k) {
    pcie_switches.push_back(t->add_vertex({VertexKind::kPcieSwitch, node, k}));
  }
  // NCCL's ratings of the GPU-to-GPU PCIe links (its tuner's input, nccl_tuner.h); on NVLink nodes
  // PCIe carries no GPU-to-GPU ring.
  const double nccl_pcie =
      switch_per_nic ? 0 : nccl_pcie_gb_per_s(in.gpu->pcie().generation(), in.gpu->pcie().lanes());
  if (in.classes.socket) {
    const double rate = in.instance->cpu_sockets().link_gb_per_s() * kBytesPerGigabyte *
                        in.classes.socket->efficiency_fraction();
    const Picoseconds latency = us(in.classes.socket->step_latency_us());
    const double nccl_socket = nccl_socket_gb_per_s(in.instance->cpu().model());
    for (int a = 0; a < groups; ++a) {
      for (int b = a + 1; b < groups; ++b) {
        t->add_link(pcie_switches[a], pcie_switches[b], rate, latency, latency, LinkKind::kPcie,
                    nccl_socket);
      }
    }
  }
  for (int i = 0; i < g; ++i) {
    t->add_link(first_gpu + i, pcie_switches[i * groups / group_span], pcie, {}, {},
                LinkKind::kPcie, nccl_pcie);
  }
  std::vector<int32_t> nics;
  for (int k = 0; k < (multi_node ? in.nics : 0); ++k) {
    nics.push_back(t->add_vertex({VertexKind::kNic, node, k}));
    const double nic = in.nic_bytes_per_s * in.classes.network->efficiency_fraction();
    t->add_link(pcie_switches[k * groups / in.nics], nics.back(), std::min(nic, pcie), {}, {},
                LinkKind::kPcie);
  }
  return nics;
}

// Leaf switches joining the nodes' NICs; returns them.
std::vector<int32_t> build_leaves(Topology* t, const Inputs& in, const s::Fabric* fabric,
                                  const std::vector<std::vector<int32_t>>& nics_of_node) {
  const double nic = in.nic_bytes_per_s * in.classes.network->efficiency_fraction();
  const double nic_us = fabric ? fabric->nic_latency_us() : 0;
  const double hop_us = fabric ? fabric->switch_hop_latency_us() : 0;
  const s::FabricTopology kind = fabric ? fabric->topology() : s::SINGLE_SWITCH;
  const int nodes = static_cast<int>(nics_of_node.size());
  const int per_leaf = kind == s::SINGLE_SWITCH ? nodes : fabric->nodes_per_leaf();
  const int groups = (nodes + per_leaf - 1) / per_leaf;
  const int rails = kind == s::RAIL_OPTIMIZED ? in.nics : 1;
  std::vector<int32_t> leaves;  // leaf of (group, rail) at group * rails + rail
  for (int i = 0; i < groups * rails; ++i)
    leaves.push_back(t->add_vertex({VertexKind::kLeafSwitch, -1, i}));
  for (int n = 0; n < nodes; ++n) {
    for (int k = 0; k < in.nics; ++k) {
      const int32_t leaf = leaves[(n / per_leaf) * rails + (kind == s::RAIL_OPTIMIZED ? k : 0)];
      t->set_nic_uplink(nics_of_node[n][k], t->add_link(nics_of_node[n][k], leaf, nic, us(nic_us),
                                                        us(hop_us + nic_us), LinkKind::kNetwork));
    }
  }
  return leaves;
}

// What each leaf of `in`'s nodes sends up to the spine: its NICs over the oversubscription.
double leaf_uplink_bytes_per_s(const Inputs& in, const s::Fabric* fabric, int nodes) {
  const s::FabricTopology kind = fabric ? fabric->topology() : s::SINGLE_SWITCH;
  const int per_leaf = kind == s::SINGLE_SWITCH ? nodes : fabric->nodes_per_leaf();
  const int rails = kind == s::RAIL_OPTIMIZED ? in.nics : 1;
  const double nic = in.nic_bytes_per_s * in.classes.network->efficiency_fraction();
  return per_leaf * in.nics / rails * nic / in.oversubscription;
}

void join_leaves(Topology* t, const std::vector<int32_t>& leaves, int32_t spine, double uplink,
                 const s::Fabric* fabric) {
  const double hop_us = fabric ? fabric->switch_hop_latency_us() : 0;
  for (int32_t leaf : leaves) {
    t->set_leaf_uplink(
        leaf, t->add_link(leaf, spine, uplink, us(hop_us), us(hop_us), LinkKind::kNetwork));
  }
}

// Leaf (and spine) switches joining the nodes' NICs.
void build_fabric(Topology* t, const Inputs& in, const s::Fabric* fabric,
                  const std::vector<std::vector<int32_t>>& nics_of_node) {
  const std::vector<int32_t> leaves = build_leaves(t, in, fabric, nics_of_node);
  if (leaves.size() < 2) return;
  const int32_t spine = t->add_vertex({VertexKind::kSpineSwitch, -1, 0});
  join_leaves(t, leaves, spine,
              leaf_uplink_bytes_per_s(in, fabric, static_cast<int>(nics_of_node.size())), fabric);
}

// Step latency of a link class under `protocol`: Simple's when the class has one.
Picoseconds class_step_latency(const s::LinkClass* link, Protocol protocol) {
  if (link == nullptr) return {};
  const bool simple = protocol == Protocol::kSimple && link->has_simple_step_latency_us();
  return us(simple ? link->simple_step_latency_us() : link->step_latency_us());
}

// NVLink SHARP needs NVSwitches with in-switch reduction: the third generation (NVLink 4,
// Hopper) and later.
bool nvls_capable(const Inputs& in) {
  return in.classes.nvlink && in.instance->gpu_interconnect() == s::NVSWITCH &&
         in.gpu->nvlink().generation() >= 4 &&
         in.classes.nvlink->has_in_switch_reduction_efficiency_fraction();
}

// Step latencies, the tree's and the all-to-alls' bandwidth shares (across and inside NVLink
// domains) and NVLink SHARP from the link classes.
void set_link_class_constants(Topology* t, const Inputs& in) {
  for (Protocol p : {Protocol::kLowLatency, Protocol::kSimple}) {
    t->set_step_latencies(
        p, {class_step_latency(in.classes.nvlink, p), class_step_latency(in.classes.pcie, p),
            class_step_latency(in.classes.network, p)});
  }
  if (in.classes.network && in.classes.network->has_tree_bandwidth_fraction()) {
    t->set_tree_bandwidth_fraction(in.classes.network->tree_bandwidth_fraction());
  }
  if (in.classes.network && in.classes.network->has_all_to_all_bandwidth_fraction()) {
    t->set_all_to_all_bandwidth_fraction(in.classes.network->all_to_all_bandwidth_fraction());
  }
  const s::LinkClass* nvlink = in.classes.nvlink;
  if (nvlink && nvlink->has_all_to_all_bandwidth_fraction()) {
    t->set_domain_all_to_all_bandwidth_fraction(nvlink->all_to_all_bandwidth_fraction());
  }
  if (nvls_capable(in)) {
    t->set_nvls_capable(in.gpu->nvlink().per_direction_gb_per_s() * kBytesPerGigabyte *
                            nvlink->in_switch_reduction_efficiency_fraction(),
                        nvlink->has_in_switch_reduction_operand_gb_per_s()
                            ? nvlink->in_switch_reduction_operand_gb_per_s() * kBytesPerGigabyte
                            : 0);
  }
}

}  // namespace

const s::LinkClass* network_link_class(const s::InstanceType& instance, const Catalog& catalog) {
  const CatalogEntry<s::LinkClass>* entry =
      catalog.link_classes().find(lower_case(s::NetworkKind_Name(instance.network().kind())));
  return entry ? entry->value : nullptr;
}

int nvlink_domain_span_gpus(int nodes, int gpus_per_node, int domain_nodes) {
  const int gpus = nodes * gpus_per_node;
  return nodes <= domain_nodes ? gpus : std::gcd(domain_nodes * gpus_per_node, gpus);
}

TopologyOrError build_topology(const ClusterSpec& spec, const Catalog& catalog) {
  Inputs in{};
  std::string error = check_inputs(spec, catalog, &in);
  if (!error.empty()) return {nullptr, error};
  auto t = std::make_unique<Topology>(spec.nodes, in.gpus_per_node, in.nodes_per_domain);
  for (int n = 0; n < spec.nodes; ++n) {
    for (int i = 0; i < in.gpus_per_node; ++i) t->add_vertex({VertexKind::kGpu, n, i});
  }
  std::vector<std::vector<int32_t>> nics_of_node;
  int32_t nvswitch = -1;
  for (int n = 0; n < spec.nodes; ++n)
    nics_of_node.push_back(build_node(t.get(), in, n, spec.nodes > 1, &nvswitch));
  if (spec.nodes > 1) build_fabric(t.get(), in, spec.fabric, nics_of_node);

  set_link_class_constants(t.get(), in);
  t->set_nccl_host(nccl_compute_capability(in.gpu->architecture()),
                   nccl_intel_cpu(in.instance->cpu().model()));
  return {std::move(t), ""};
}

TopologyOrError build_joined_topology(const std::vector<ClusterSpec>& pools,
                                      const std::vector<double>& pool_uplink_bytes_per_s,
                                      const Catalog& catalog) {
  std::vector<Inputs> ins(pools.size());
  int nodes = 0;
  size_t slowest = 0;
  for (size_t i = 0; i < pools.size(); ++i) {
    // Every pool reaches the others through its NICs, even a pool of one node.
    ClusterSpec networked = pools[i];
    networked.nodes = std::max(2, pools[i].nodes);
    const std::string error = check_inputs(networked, catalog, &ins[i]);
    if (!error.empty()) return {nullptr, pools[i].instance->name() + ": " + error};
    if (ins[i].gpus_per_node != ins[0].gpus_per_node ||
        ins[i].nodes_per_domain != ins[0].nodes_per_domain) {
      return {nullptr, "pools of different GPUs per node or NVLink domains cannot be joined"};
    }
    if (ins[i].nic_bytes_per_s * ins[i].nics < ins[slowest].nic_bytes_per_s * ins[slowest].nics) {
      slowest = i;
    }
    nodes += pools[i].nodes;
  }
  const int g = ins[0].gpus_per_node;
  auto t = std::make_unique<Topology>(nodes, g, ins[0].nodes_per_domain);
  for (int n = 0; n < nodes; ++n) {
    for (int i = 0; i < g; ++i) t->add_vertex({VertexKind::kGpu, n, i});
  }
  std::vector<std::vector<int32_t>> leaves;
  int first = 0;
  for (size_t i = 0; i < pools.size(); ++i) {
    std::vector<std::vector<int32_t>> nics_of_node;
    int32_t nvswitch = -1;
    for (int n = first; n < first + pools[i].nodes; ++n) {
      nics_of_node.push_back(build_node(t.get(), ins[i], n, true, &nvswitch));
    }
    leaves.push_back(build_leaves(t.get(), ins[i], pools[i].fabric, nics_of_node));
    first += pools[i].nodes;
  }
  const int32_t spine = t->add_vertex({VertexKind::kSpineSwitch, -1, 0});
  for (size_t i = 0; i < pools.size(); ++i) {
    double uplink = pool_uplink_bytes_per_s[i] / static_cast<double>(leaves[i].size());
    if (leaves[i].size() > 1) {
      uplink = std::min(uplink, leaf_uplink_bytes_per_s(ins[i], pools[i].fabric, pools[i].nodes));
    }
    join_leaves(t.get(), leaves[i], spine, uplink, pools[i].fabric);
  }
  set_link_class_constants(t.get(), ins[slowest]);
  const bool nvls = std::all_of(ins.begin(), ins.end(), nvls_capable);
  if (!nvls) t->set_nvls_capable(0, 0);
  return {std::move(t), ""};
}

}  // namespace clustersim
