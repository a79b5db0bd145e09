// Point-to-point collectives: send/recv is one transfer; all-to-all sends S/n from every GPU to
// every other at once, each pair its own transfer sharing the links max-min fairly. A transfer
// between NVLink domains moves its bytes / the network's all_to_all_bandwidth_fraction, one inside
// a domain (unless the flex dispatcher's kernels move it) / the NVLink class's, so that each
// reaches that share of the ring's bandwidth on its links (as nvls.cpp scales its bytes).
#include "sim/net/collective_algorithms.h"

namespace clustersim {

void start_direct(Network* network, const Collective& c, std::function<void()> done) {
  const Topology& t = network->topology();
  if (c.op == CollectiveOp::kSendRecv) {
    const int from = c.gpus[0], to = c.gpus[1];
    network->start_transfer(from, to, c.bytes, step_latency(from, to, t), std::move(done));
    return;
  }
  const auto n = static_cast<int>(c.gpus.size());
  auto all = after_all(n * (n - 1), std::move(done));
  const double across_domains = 1 / t.all_to_all_bandwidth_fraction();
  const double inside_domain =
      c.dispatcher_kernels ? 1 : 1 / t.domain_all_to_all_bandwidth_fraction();
  for (int from : c.gpus) {
    for (int to : c.gpus) {
      if (from == to) continue;
      const LinkKind kind = t.route_kind(from, to);
      const double share = kind == LinkKind::kNetwork  ? across_domains
                           : kind == LinkKind::kNvlink ? inside_domain
                                                       : 1;
      network->start_transfer(from, to, c.bytes / n * share, step_latency(from, to, t), all);
    }
  }
}

}  // namespace clustersim
