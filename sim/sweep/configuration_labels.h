// A configuration in words, the one place a result row's configuration is named: each command's
// line about a configuration (sweep's fastest, cheapest and ties, run's trace, cost, the OOM
// message's closest, regress's gone and new rows, plot's points and bars) says it with these.
// Its cluster and layout, then its other choices: those at their default only where they vary
// among the rows it is told apart from, so two rows never read alike and a line stays short.
#pragma once

#include <string>
#include <vector>

#include "sim/sweep/result_row.h"

namespace clustersim {

// Which of the choices beyond a row's layout (configuration_labels.cpp lists them: pool
// placement, optimizer sharding, recomputation, schedule, sequence parallelism, input storage,
// dataloader workers, checkpoint volume) take two values or more among the rows noted.
class ChoiceSpread {
 public:
  void note(const ResultRow& row);
  bool varies(size_t choice) const { return choice < varies_.size() && varies_[choice]; }

 private:
  ResultRow first_;            // the first row noted (empty before)
  std::vector<bool> varies_;  // per choice
};

// The spread of `rows`' choices.
ChoiceSpread choice_spread(const std::vector<const ResultRow*>& rows);

// A row's cluster and parallel layout: "aws.p5.48xlarge x 16, TP 1 CP 2 PP 1 DP 64 shard 16 EP 8
// mbs 1 v 2" (CP, the hybrid-sharding group, EP and virtual stages only where they split
// anything, so their absence says 1; a mix: its instance column, "aws.p5.48xlarge x 2 +
// aws.p4d.24xlarge x 4, TP ...").
std::string describe_layout(const ResultRow& row);

// A row's configuration: its layout, then each choice that is not at its default or that varies
// in `spread`, in this order: a mix's pools ("pools as data-parallel replicas", "pools as
// pipeline stages (first on aws.p5.48xlarge x 2)": the pools' order is the stages'), optimizer
// sharding ("dist opt", "ZeRO 1"; default ZeRO 0), recomputation (default RECOMPUTE_NONE),
// schedule (default ONE_F_ONE_B), sequence parallelism ("SP", "no SP"), the input pipeline's
// storage volume ("aliyun.essd.pl1 200 GiB") and workers ("6 workers/GPU"), the checkpoint volume
// ("checkpoints on aws.ebs.gp3 1000 GiB"); then its billing where it has one: "aws.p5.48xlarge x
// 16, TP 1 PP 1 DP 128 mbs 1, dist opt, RECOMPUTE_FULL, ON_DEMAND".
std::string describe_configuration(const ResultRow& row, const ChoiceSpread& spread = {});

// The labels that tell apart the configurations a chart draws together (plot's breakdown bars).
struct ConfigurationLabels {
  // The choices every row shares, "dist opt, RECOMPUTE_SELECTIVE, ONE_F_ONE_B" (empty when none,
  // or for a single row, whose label says everything).
  std::string shared;
  std::vector<std::string> labels;  // one per row, in order
};

// Each row's label is its describe_layout, then, in describe_configuration's order, those of its
// choices that differ among `rows` (at their default too); the choices all share, in the same
// order and at their default too, are `shared`. A row without a dataloader has no storage or
// workers, one without checkpoints no checkpoint volume.
ConfigurationLabels configuration_labels(const std::vector<ResultRow>& rows);

}  // namespace clustersim
