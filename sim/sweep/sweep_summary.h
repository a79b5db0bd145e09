// What a results file records about the sweep that wrote it, as its attributes: the scenario
// (name and full text), the tool and catalog versions, which shard, how far it got, and the
// counts. Enough to resume it, to merge shards and to tell a regression what changed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "sim/sweep/results_file.h"

namespace clustersim {

struct SweepSummary {
  std::string scenario_name;
  std::string scenario_text;
  std::string tool_version;
  std::string catalog;     // Catalog::fingerprint()
  std::string prices;      // text of the --prices file, "" without one
  int64_t candidates = 0;  // of the whole space (every shard)
  int shard = 0;           // 0-based
  int shard_count = 1;
  int64_t next_index = 0;  // candidates below this index (of this shard) are done
  int64_t rows = 0;
  int64_t simulated = 0;
  std::map<std::string, int64_t> pruned;  // reason -> count
  bool complete = false;

  // Whether `other` comes from the same scenario, catalog, prices and tool (rows comparable).
  bool same_sweep(const SweepSummary& other) const {
    return scenario_text == other.scenario_text && catalog == other.catalog &&
           prices == other.prices && tool_version == other.tool_version &&
           candidates == other.candidates;
  }
};

ResultAttributes to_attributes(const SweepSummary& summary);
// Nullopt (with `*error`) when an attribute is missing or malformed.
std::optional<SweepSummary> from_attributes(const ResultAttributes& attributes, std::string* error);

}  // namespace clustersim
