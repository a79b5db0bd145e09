// How often a run is interrupted under each billing mode: hardware and software faults on every
// node (on demand, subscriptions, spot and owned nodes alike), and on spot the preemptions of the
// rented nodes besides. Both are Poisson processes per node; the job stops at any node's.
#pragma once

#include "sim/cost/run_simulation.h"
#include "sim/io/schema/cost.pb.h"
#include "sim/sweep/configuration_space.h"

namespace clustersim {

// Faults per GPU-hour when the scenario states none: Llama 3's pre-training, 419 unexpected job
// interruptions in a 54-day snapshot on 16,384 H100 (2,048 nodes of 8), Llama Team, "The Llama 3
// Herd of Models", arXiv 2407.21783, section 3.3.4. The 47 planned interruptions of the same
// snapshot (firmware upgrades, configuration and dataset updates an operator schedules) are left
// out. Per GPU because 58.7% of those interruptions were GPU issues (GPU, HBM3, SDC, ...): a node
// of 8 GPUs gets 1.58e-4 per node-hour (a mean of 264 days between a node's faults), one of a
// single GPU an eighth of it.
inline constexpr double kDefaultInterruptionsPerGpuHour = 419.0 / (54 * 24 * 16384.0);

// Whether `cost`'s runs are interrupted by faults: its interruptions_per_node_hour > 0, or absent
// with a checkpoint (the default rate above); a run without checkpoints models no fault.
bool faults_modelled(const schema::Cost& cost);

// The nodes of `configuration` that can be interrupted under `billing` and their mean rate (the
// job's rate over them): faults on every node, at cost.interruptions_per_node_hour or the default
// per GPU; on SPOT, preemptions of the rented nodes besides, their share of the rate in
// preemption_share. {nodes, 0, 0} when nothing interrupts.
struct InterruptionRate {
  int nodes = 1;
  double per_node_hour = 0;
  double preemption_share = 0;  // of the job's interruptions, spot preemptions; the rest faults
  bool operator==(const InterruptionRate&) const = default;
};
InterruptionRate interruption_rate(const schema::Cost& cost, const Configuration& configuration,
                                   schema::BillingMode billing);

}  // namespace clustersim
