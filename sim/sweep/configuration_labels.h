// Labels that tell apart the configurations a chart draws together (plot's breakdown bars): each
// row's cluster and layout, then the choices that differ among the rows drawn; what they all
// share is said once.
#pragma once

#include <string>
#include <vector>

#include "sim/sweep/result_row.h"

namespace clustersim {

struct ConfigurationLabels {
  // The choices every row shares, "dist opt, RECOMPUTE_SELECTIVE, ONE_F_ONE_B" (empty when none,
  // or for a single row, whose label says everything).
  std::string shared;
  std::vector<std::string> labels;  // one per row, in order
};

// Each row's label is its cluster and parallel layout, "aws.p5.48xlarge x 16, TP 1 PP 1 DP 128
// mbs 2" (" v 2" after it with virtual stages), then, in this order, those of its other choices
// that differ among `rows`: a mix's pools ("pools as pipeline stages" or "pools as data-parallel
// replicas"), optimizer sharding ("dist opt", "ZeRO 1"), recomputation, schedule, sequence
// parallelism ("SP", "no SP"), the input pipeline's storage volume ("aliyun.essd.pl1 200 GiB")
// and dataloader workers ("6 workers/GPU"), the checkpoint volume ("checkpoints on aws.ebs.gp3
// 1000 GiB"); the choices all share, in the same order, are `shared`. A row without a dataloader
// has no storage or workers, one without checkpoints no checkpoint volume.
ConfigurationLabels configuration_labels(const std::vector<ResultRow>& rows);

}  // namespace clustersim
