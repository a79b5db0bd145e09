// Sweep summaries as string attributes: numbers in decimal, pruning reasons one per line as
// "count<TAB>reason".
#include "sim/sweep/sweep_summary.h"

#include <algorithm>
#include <sstream>

namespace clustersim {

ResultAttributes to_attributes(const SweepSummary& s) {
  std::string pruned;
  for (const auto& [reason, count] : s.pruned)
    pruned += std::to_string(count) + "\t" + reason + "\n";
  return {{"scenario_name", s.scenario_name},
          {"scenario_text", s.scenario_text},
          {"tool_version", s.tool_version},
          {"catalog", s.catalog},
          {"prices", s.prices},
          {"candidates", std::to_string(s.candidates)},
          {"shard", std::to_string(s.shard + 1) + "/" + std::to_string(s.shard_count)},
          {"next_index", std::to_string(s.next_index)},
          {"rows", std::to_string(s.rows)},
          {"simulated", std::to_string(s.simulated)},
          {"pruned", pruned},
          {"complete", s.complete ? "yes" : "no"}};
}

std::optional<SweepSummary> from_attributes(const ResultAttributes& a, std::string* error) {
  const auto get = [&](const char* name) -> const std::string* {
    const auto it = a.find(name);
    if (it == a.end()) *error = std::string("attribute ") + name + " is missing";
    return it == a.end() ? nullptr : &it->second;
  };
  const auto integer = [&](const char* name, int64_t* value) {
    const std::string* text = get(name);
    if (!text) return false;
    std::istringstream in(*text);
    if (!(in >> *value) || !in.eof()) {
      *error = std::string("attribute ") + name + " is not a whole number: " + *text;
      return false;
    }
    return true;
  };
  SweepSummary s;
  for (auto [name, field] : {std::pair{"scenario_name", &s.scenario_name},
                             {"scenario_text", &s.scenario_text},
                             {"tool_version", &s.tool_version},
                             {"catalog", &s.catalog},
                             {"prices", &s.prices}}) {
    const std::string* text = get(name);
    if (!text) return std::nullopt;
    *field = *text;
  }
  if (!integer("candidates", &s.candidates) || !integer("next_index", &s.next_index) ||
      !integer("rows", &s.rows) || !integer("simulated", &s.simulated)) {
    return std::nullopt;
  }
  const std::string* shard = get("shard");
  const std::string* pruned = get("pruned");
  const std::string* complete = get("complete");
  if (!shard || !pruned || !complete) return std::nullopt;
  char slash = 0;
  std::istringstream shard_in(*shard);
  if (!(shard_in >> s.shard >> slash >> s.shard_count) || slash != '/' || s.shard < 1 ||
      s.shard > s.shard_count) {
    *error = "attribute shard is not K/N: " + *shard;
    return std::nullopt;
  }
  --s.shard;
  std::istringstream lines(*pruned);
  for (std::string line; std::getline(lines, line);) {
    const size_t tab = std::min(line.find('\t'), line.size());
    int64_t count = 0;
    std::istringstream count_in(line.substr(0, tab));
    if (!(count_in >> count)) {
      *error = "attribute pruned has a line without a count: " + line;
      return std::nullopt;
    }
    s.pruned[line.substr(tab + 1)] += count;
  }
  s.complete = *complete == "yes";
  return s;
}

}  // namespace clustersim
