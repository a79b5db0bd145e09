// Interruption rates per billing mode: faults on every node, spot preemptions on rented nodes.
#include "sim/cost/interruption_rate.h"

namespace clustersim {

namespace s = schema;

bool faults_modelled(const s::Cost& cost) {
  return cost.has_interruptions_per_node_hour() ? cost.interruptions_per_node_hour() > 0
                                                : cost.has_checkpoint();
}

InterruptionRate interruption_rate(const s::Cost& cost, const Configuration& configuration,
                                   s::BillingMode billing) {
  double faults_per_hour = 0;  // the job's, all nodes together
  if (faults_modelled(cost)) {
    faults_per_hour = cost.has_interruptions_per_node_hour()
                          ? configuration.nodes * cost.interruptions_per_node_hour()
                          : configuration.gpus() * kDefaultInterruptionsPerGpuHour;
  }
  // Owned nodes are not spot instances: only the rented ones are preempted.
  const int preemptible = billing == s::SPOT && cost.preemptions_per_instance_hour() > 0
                              ? configuration.rented_nodes()
                              : 0;
  const double per_hour = faults_per_hour + preemptible * cost.preemptions_per_instance_hour();
  // Without faults only the preemptible nodes draw interruptions (the same runs, seed for seed,
  // as before faults were modelled); with them every node does.
  const int nodes = faults_per_hour > 0 ? configuration.nodes
                    : preemptible > 0   ? preemptible
                                        : configuration.nodes;
  const double preemptions_per_hour = preemptible * cost.preemptions_per_instance_hour();
  return {nodes, per_hour / nodes, per_hour > 0 ? preemptions_per_hour / per_hour : 0};
}

}  // namespace clustersim
