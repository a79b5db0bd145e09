// Whether a spot preemption is met by a checkpoint saved within its provider's interruption
// notice (cost.checkpoint.save_on_preemption_notice, the catalog's provider entries): only where
// one checkpoint write fits in the notice. Faults give no notice.
#pragma once

#include <optional>
#include <string>

#include "sim/cost/cost_model.h"

namespace clustersim {

struct NoticeSave {
  bool enabled = false;            // the scenario saves on a notice
  std::optional<double> notice_s;  // the provider's notice; absent: none known
  double write_s = 0;              // one checkpoint write
  bool fits = false;               // enabled, with a notice known and the write within it
};

// The notice save of a configuration of `provider`'s instances whose checkpoint write takes
// `write_s`.
NoticeSave notice_save(const CostModel& model, schema::Provider provider, double write_s);

// "yes: 41 s in 120 s", "no: 150 s > 120 s", "no: no notice known"; "" when not enabled.
std::string describe(const NoticeSave& save);

}  // namespace clustersim
