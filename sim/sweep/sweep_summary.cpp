// Naming what changed between an interrupted sweep's identity and a resumed one's (or between
// two shards' to merge).
#include "sim/sweep/sweep_summary.h"

#include <vector>

namespace clustersim {

std::string sweep_identity_changes(const SweepSummary& recorded, const SweepSummary& now,
                                   const std::string& recorded_as, const std::string& now_as) {
  // "X then, Y now", each "none" when empty.
  const auto then_and_now = [&](const std::string& then, const std::string& current) {
    const auto shown = [](const std::string& text) { return text.empty() ? "none" : text; };
    return shown(then) + " " + recorded_as + ", " + shown(current) + " " + now_as;
  };
  std::vector<std::string> changes;
  if (recorded.scenario_text != now.scenario_text) changes.push_back("the scenario file's text");
  if (recorded.catalog != now.catalog) changes.push_back("the catalog (its fingerprint)");
  if (recorded.prices != now.prices) changes.push_back("the --prices file's text");
  if (recorded.tool_version != now.tool_version) {
    changes.push_back("the clustersim version (" +
                      then_and_now(recorded.tool_version, now.tool_version) + ")");
  }
  if (recorded.candidates != now.candidates) {
    changes.push_back("the number of candidates (" +
                      then_and_now(std::to_string(recorded.candidates),
                                   std::to_string(now.candidates)) +
                      ")");
  }
  if (recorded.shard != now.shard || recorded.shard_count != now.shard_count) {
    changes.push_back("the shard (" +
                      then_and_now(std::to_string(recorded.shard + 1) + "/" +
                                       std::to_string(recorded.shard_count),
                                   std::to_string(now.shard + 1) + "/" +
                                       std::to_string(now.shard_count)) +
                      ")");
  }
  if (recorded.options != now.options) {
    changes.push_back("the options (" + then_and_now(recorded.options, now.options) + ")");
  }
  if (recorded.other_inputs != now.other_inputs) {
    changes.push_back("the files the scenario reads (" +
                      then_and_now(recorded.other_inputs, now.other_inputs) + ")");
  }
  std::string text;
  for (size_t i = 0; i < changes.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == changes.size() ? " and " : ", ") + changes[i];
  }
  return text;
}

}  // namespace clustersim
