// Looking up a kernel of a layer's kernel list by name in tests.
#pragma once

#include <string>
#include <vector>

#include "sim/workload/layer_ops.h"

namespace clustersim::testing {

// The first op of `ops` called `name`, or null.
inline const LayerOp* find_op(const std::vector<LayerOp>& ops, const std::string& name) {
  for (const LayerOp& op : ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

}  // namespace clustersim::testing
