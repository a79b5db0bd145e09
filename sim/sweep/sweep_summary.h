// What a sweep records about itself beside its rows: the scenario (name and full text), the tool
// and catalog versions, which shard, how far it got, and the counts. Enough to resume it, to
// merge shards and to tell a regression what changed. Results files store it as typed attributes
// (results_file.h), the journal of a running sweep as records (sweep_journal.h), which also
// keeps the options and other inputs that change the rows, to refuse resuming against others.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace clustersim {

struct SweepSummary {
  // Identity: what was swept, with which tool and catalog.
  std::string scenario_name;
  std::string scenario_text;
  std::string tool_version;
  std::string catalog;     // Catalog::fingerprint()
  std::string prices;      // text of the --prices file, "" without one
  int64_t candidates = 0;  // of the whole space (every shard)
  int shard = 0;           // 0-based
  int shard_count = 1;
  // Kept by the journal only (a results file has neither): the command-line options that change
  // the rows (serve: "--max-rate"), and a fingerprint of the other files the scenario reads (a
  // serving trace's requests).
  std::string options;
  std::string other_inputs;
  // Progress.
  int64_t next_index = 0;      // candidates below this index (of this shard) are done
  int64_t configurations = 0;  // valid configurations evaluated
  int64_t rows = 0;            // result rows: one per configuration and billing mode
  int64_t simulated = 0;       // configurations whose step was simulated (the others were OOM)
  std::map<std::string, int64_t> pruned;  // reason -> candidates
  bool complete = false;

  // Whether `other` comes from the same scenario, catalog, prices and tool (rows comparable).
  bool same_sweep(const SweepSummary& other) const {
    return scenario_text == other.scenario_text && catalog == other.catalog &&
           prices == other.prices && tool_version == other.tool_version &&
           candidates == other.candidates;
  }
  bool operator==(const SweepSummary&) const = default;
};

// What differs between the identity of a sweep that was interrupted (`recorded`) and of the one
// now asked to resume it (`now`), as a list a user can act on ("the scenario file's text, the
// options (--max-rate then, none now)"); "" when they are the same shard of the same sweep.
std::string sweep_identity_changes(const SweepSummary& recorded, const SweepSummary& now);

}  // namespace clustersim
