// Tests of cluster graphs: their structure, and routes checked against Dijkstra over the whole
// graph (the hierarchical router must find a cheapest path for every pair of GPUs).
#include "sim/net/topology.h"

#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/property_map/function_property_map.hpp>
#include <catch2/catch.hpp>
#include <set>

#include "tests/testing/cluster.h"

namespace clustersim {
namespace {

using testing::shipped_cluster;

// Cost of the cheapest path between every pair of GPUs, by Boost's Dijkstra on the whole graph.
std::vector<std::vector<int>> whole_graph_costs(const Topology& t) {
  const auto& g = t.graph();
  std::vector<int> weights(t.links().size());
  for (size_t l = 0; l < weights.size(); ++l) weights[l] = t.link_cost(static_cast<int32_t>(l));
  auto weight_map = boost::make_function_property_map<Topology::Graph::edge_descriptor>(
      [&](const Topology::Graph::edge_descriptor& e) { return weights[g[e]]; });
  std::vector<std::vector<int>> costs;
  for (int from = 0; from < t.gpu_count(); ++from) {
    std::vector<int> distance(boost::num_vertices(g));
    boost::dijkstra_shortest_paths(g, t.gpu_vertex(from),
                                   boost::weight_map(weight_map).distance_map(distance.data()));
    costs.emplace_back(distance.begin(), distance.begin() + t.gpu_count());
  }
  return costs;
}

int route_cost(const Topology& t, int from, int to) {
  int cost = 0;
  for (int32_t link : t.route(from, to)) cost += t.link_cost(link);
  return cost;
}

// Every route is connected, goes from `from` to `to`, and is as cheap as the whole-graph search.
void check_routes(const Topology& t) {
  const auto costs = whole_graph_costs(t);
  for (int from = 0; from < t.gpu_count(); ++from) {
    for (int to = 0; to < t.gpu_count(); ++to) {
      if (from == to) continue;
      const auto& route = t.route(from, to);
      REQUIRE(!route.empty());
      CHECK(t.links()[route.front()].from == t.gpu_vertex(from));
      CHECK(t.links()[route.back()].to == t.gpu_vertex(to));
      for (size_t i = 0; i + 1 < route.size(); ++i) {
        CHECK(t.links()[route[i]].to == t.links()[route[i + 1]].from);
      }
      INFO("from " << from << " to " << to);
      CHECK(route_cost(t, from, to) == costs[from][to]);
    }
  }
}

TEST_CASE("a p4d node pair has GPUs, NVSwitches, PCIe switches per NIC, NICs and one switch") {
  auto t = shipped_cluster("aws.p4d.24xlarge", 2);
  std::map<VertexKind, int> count;
  for (auto v : boost::make_iterator_range(boost::vertices(t->graph())))
    ++count[t->graph()[v].kind];
  CHECK(count[VertexKind::kGpu] == 16);
  CHECK(count[VertexKind::kNvSwitch] == 2);
  CHECK(count[VertexKind::kPcieSwitch] == 8);  // 4 NICs (EFA) per node, one PCIe switch each
  CHECK(count[VertexKind::kNic] == 8);
  CHECK(count[VertexKind::kLeafSwitch] == 1);
  // Per node: 8 NVLink + 8 GPU-PCIe + 4 PCIe-NIC links, and 8 NIC-switch links: both directions.
  CHECK(t->links().size() == 2 * (2 * (8 + 8 + 4) + 8));
}

TEST_CASE("GPUs of one NVSwitch node talk over NVLink, not PCIe") {
  auto t = shipped_cluster("aws.p4d.24xlarge", 1);
  for (int32_t link : t->route(0, 1)) CHECK(t->links()[link].kind == LinkKind::kNvlink);
  CHECK(t->route(0, 1).size() == 2);
}

TEST_CASE("routes are cheapest paths on every kind of node and fabric") {
  SECTION("NVSwitch nodes, single switch") {
    check_routes(*shipped_cluster("aws.p4d.24xlarge", 3));
  }
  SECTION("NVSwitch nodes, rail-optimized") {
    check_routes(*shipped_cluster("aws.p5.48xlarge", 2, 0, "ib-rail-optimized"));
  }
  SECTION("PCIe-only nodes, 2:1 Clos") {
    check_routes(*shipped_cluster("aws.g5.48xlarge", 3, 4, "clos-2to1"));
  }
  SECTION("V100 NVLink nodes") { check_routes(*shipped_cluster("aws.p3dn.24xlarge", 2)); }
  SECTION("two-socket PCIe nodes, NVLink pairs") {
    check_routes(*shipped_cluster("onprem.h100-nvl-8", 1));
  }
  SECTION("two-socket PCIe nodes, 4 NICs, 2:1 Clos") {
    check_routes(*shipped_cluster("aws.g6e.48xlarge", 3, 0, "clos-2to1"));
  }
  SECTION("NVLink domains of 3 trays, the last one partial, rail-optimized") {
    check_routes(*shipped_cluster("onprem.gb200-nvl72", 5, 0, "ib-rail-optimized", 3));
  }
}

TEST_CASE("an NVL72 rack's 18 trays share one NVSwitch, GPUs of two racks share no NVLink") {
  // 20 trays: one full rack (72 GPUs) and 2 trays (8 GPUs) of a second.
  auto t = shipped_cluster("onprem.gb200-nvl72", 20);
  std::map<VertexKind, int> count;
  for (auto v : boost::make_iterator_range(boost::vertices(t->graph())))
    ++count[t->graph()[v].kind];
  CHECK(count[VertexKind::kGpu] == 80);
  CHECK(count[VertexKind::kNvSwitch] == 2);
  CHECK(count[VertexKind::kNic] == 80);  // a ConnectX-7 per GPU
  CHECK(t->nodes_per_domain() == 18);
  CHECK(t->domains() == 2);
  CHECK(t->domain_gpu_count(0) == 72);
  CHECK(t->domain_gpu_count(1) == 8);
  // GPU 0 (tray 0) to GPU 71 (tray 17): through the rack's NVSwitch only.
  CHECK(t->route(0, 71).size() == 2);
  for (int32_t link : t->route(0, 71)) CHECK(t->links()[link].kind == LinkKind::kNvlink);
  CHECK(t->route_kind(0, 71) == LinkKind::kNvlink);
  // GPU 0 to GPU 72 (the second rack): over the network; no NVLink joins the racks.
  CHECK(t->route_kind(0, 72) == LinkKind::kNetwork);
  const auto& g = t->graph();
  for (const LinkInfo& link : t->links()) {
    if (link.kind != LinkKind::kNvlink) continue;
    CHECK(t->domain_of_node(g[link.from].node) == t->domain_of_node(g[link.to].node));
  }
}

TEST_CASE("a job may use fewer trays of each NVLink domain, never more") {
  auto t = shipped_cluster("onprem.gb200-nvl72", 32, 0, "", 16);  // 2 racks of 16 trays used
  CHECK(t->domains() == 2);
  CHECK(t->domain_of(63) == 0);
  CHECK(t->domain_of(64) == 1);
  CHECK(t->route_kind(63, 64) == LinkKind::kNetwork);
  const Catalog& catalog = testing::shipped_catalog();
  ClusterSpec spec;
  spec.instance = catalog.instances().find("onprem.gb200-nvl72")->value;
  spec.nodes = 4;
  spec.nvlink_domain_nodes = 19;
  CHECK(build_topology(spec, catalog).error ==
        "onprem.gb200-nvl72 has NVLink domains of 18 node(s), fewer than the 19 asked for");
}

TEST_CASE("the tensor-parallel span: a domain's GPUs, all of them when the cluster is one") {
  CHECK(nvlink_domain_span_gpus(4, 8, 1) == 8);     // 4 DGX nodes: TP inside a node
  CHECK(nvlink_domain_span_gpus(16, 4, 18) == 64);  // 16 trays of one NVL72
  CHECK(nvlink_domain_span_gpus(36, 4, 18) == 72);  // two full racks
  CHECK(nvlink_domain_span_gpus(20, 4, 18) == 8);   // a rack and 2 trays: gcd(72, 80)
}

TEST_CASE("between nodes, traffic arrives on the destination GPU's own rail (NCCL's PXN)") {
  // Rail-optimized p5: GPU i of node 0 to GPU j != i of node 1 can cross on rail i or rail j
  // (NVLink on the other side), or via the spine, all at the same cost; NCCL moves the data over
  // NVLink to GPU j of node 0 and sends it on rail j: no spine, NIC j at both ends.
  auto t = shipped_cluster("aws.p5.48xlarge", 2, 0, "ib-rail-optimized");
  const auto& g = t->graph();
  for (int i = 0; i < 8; ++i) {
    for (int j = 8; j < 16; ++j) {
      INFO(i << " -> " << j);
      std::vector<int32_t> nics;
      for (int32_t link : t->route(i, j)) {
        const VertexInfo& to = g[static_cast<size_t>(t->links()[link].to)];
        CHECK(to.kind != VertexKind::kSpineSwitch);
        if (to.kind == VertexKind::kNic) nics.push_back(to.index);
      }
      CHECK(nics == std::vector<int32_t>{j - 8, j - 8});
    }
  }
}

TEST_CASE("equal-cost routes spread over the choices, deterministically") {
  // Rail-optimized p5: every pair of GPUs on two nodes takes its own NVLink detour.
  auto a = shipped_cluster("aws.p5.48xlarge", 2, 0, "ib-rail-optimized");
  auto b = shipped_cluster("aws.p5.48xlarge", 2, 0, "ib-rail-optimized");
  std::set<std::vector<int32_t>> distinct_first_hops;
  for (int i = 0; i < 8; ++i) {
    for (int j = 8; j < 16; ++j) {
      CHECK(a->route(i, j) == b->route(i, j));
      distinct_first_hops.insert({a->route(i, j)[0], a->route(i, j)[1]});
    }
  }
  CHECK(distinct_first_hops.size() > 8);  // not every pair leaves through its own PCIe switch
}

TEST_CASE("GPUs of two CPU sockets talk through both roots and the socket link, others not") {
  // onprem.l40-8: 8 L40 on PCIe, cpu_sockets { count: 2 link_gb_per_s: 64 }.
  const Catalog& catalog = testing::shipped_catalog();
  const schema::LinkClass& socket = *catalog.link_classes().find("socket")->value;
  auto t = shipped_cluster("onprem.l40-8", 1);
  std::map<VertexKind, int> count;
  for (auto v : boost::make_iterator_range(boost::vertices(t->graph())))
    ++count[t->graph()[v].kind];
  CHECK(count[VertexKind::kPcieSwitch] == 2);
  CHECK(t->links().size() == 2 * (8 + 1));
  for (auto [from, to] : {std::pair{0, 3}, std::pair{4, 7}}) CHECK(t->route(from, to).size() == 2);
  for (auto [from, to] : {std::pair{3, 4}, std::pair{7, 0}}) {
    const auto& route = t->route(from, to);
    REQUIRE(route.size() == 3);
    const LinkInfo& middle = t->links()[route[1]];
    CHECK(middle.capacity_bytes_per_s == Approx(64e9 * socket.efficiency_fraction()));
    CHECK(middle.latency == Picoseconds::from_microseconds(socket.step_latency_us()));
    CHECK(t->route_latency(from, to) == middle.latency);
  }
  CHECK(t->route_latency(0, 3) == Picoseconds());
}

TEST_CASE("a route's hardware latency is the sum of its hops") {
  // ib-rail-optimized: NIC 0.6 us per end, 0.13 us per switch hop; same rail: one leaf.
  auto t = shipped_cluster("aws.p5.48xlarge", 2, 0, "ib-rail-optimized");
  const auto& route = t->route(0, 8);
  Picoseconds sum;
  for (int32_t link : route) sum += t->links()[link].latency;
  CHECK(t->route_latency(0, 8) == sum);
  CHECK(t->route_kind(0, 8) == LinkKind::kNetwork);
  CHECK(t->route_kind(0, 1) == LinkKind::kNvlink);
}

}  // namespace
}  // namespace clustersim
