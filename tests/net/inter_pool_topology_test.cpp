// Tests of the network between a mix's pools (sim/net/inter_pool_topology.h): each rule's pool
// links from the catalog, and an all-reduce over them against the ring's closed form.
#include "sim/net/inter_pool_topology.h"

#include <catch2/catch.hpp>

#include "sim/net/collective.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

namespace s = schema;

using testing::shipped_instance;

TEST_CASE("pool links follow the inter-pool rule: same fabric, slowest common network, stated") {
  const Catalog& catalog = testing::shipped_catalog();
  const s::LinkClass& efa = *catalog.link_classes().find("efa")->value;
  const double p5_node = 3200e9 / 8 * efa.efficiency_fraction();
  const double p4d_node = 400e9 / 8 * efa.efficiency_fraction();
  const std::vector<PoolEndpoint> pools = {{&shipped_instance("aws.p5.48xlarge"), 2},
                                           {&shipped_instance("aws.p4d.24xlarge"), 4}};
  s::InterPoolNetwork network;
  InterPoolLinks same = inter_pool_links(pools, network, nullptr, catalog);
  REQUIRE(same.error.empty());
  CHECK(same.bytes_per_s[0] == Approx(2 * p5_node));
  CHECK(same.bytes_per_s[1] == Approx(4 * p4d_node));
  network.set_kind(s::InterPoolNetwork::SLOWEST_COMMON);
  InterPoolLinks slowest = inter_pool_links(pools, network, nullptr, catalog);
  CHECK(slowest.bytes_per_s[0] == Approx(2 * p4d_node));
  CHECK(slowest.bytes_per_s[1] == Approx(4 * p4d_node));
  network.set_kind(s::InterPoolNetwork::STATED);
  network.set_bandwidth_gbit_per_s(100);
  network.set_latency_us(500);
  InterPoolLinks stated = inter_pool_links(pools, network, nullptr, catalog);
  CHECK(stated.bytes_per_s[0] == Approx(100e9 / 8));
  CHECK(stated.bytes_per_s[1] == Approx(100e9 / 8));
  // A ring all-reduce of S over two endpoints: each sends S/2 twice, through the slower link,
  // in 2 steps, each at most the stated one-way latency plus the link class's step latency.
  const std::unique_ptr<Topology> topology = inter_pool_topology(stated);
  const double bytes = 1e9;
  const Picoseconds t = collective_time(
      *topology, {CollectiveOp::kAllReduce, {0, 1}, bytes, CollectiveAlgorithm::kRing});
  const double bandwidth_s = bytes / (100e9 / 8);
  CHECK(t.seconds() >= bandwidth_s);
  CHECK(t.seconds() <= bandwidth_s * 1.01 + 2 * (500e-6 + 100e-6));
}

TEST_CASE("a pool whose instance has no network cannot reach the other pools") {
  s::InstanceType lonely = shipped_instance("aws.p4d.24xlarge");
  lonely.mutable_network()->clear_total_gbit_per_s();
  const InterPoolLinks links =
      inter_pool_links({{&shipped_instance("aws.p5.48xlarge"), 1}, {&lonely, 1}},
                       s::InterPoolNetwork(), nullptr, testing::shipped_catalog());
  CHECK(links.error ==
        "aws.p4d.24xlarge has no network to reach the other pools (network.total_gbit_per_s is "
        "missing in the catalog)");
}

}  // namespace
}  // namespace clustersim
