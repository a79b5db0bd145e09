// What a sweep records about itself beside its rows: the scenario (name and full text), the tool
// and catalog versions, which shard, how far it got, and the counts. Enough to resume it, to
// merge shards and to tell a regression what changed. Results files store it as typed attributes
// (results_file.h), the journal of a running sweep as records (sweep_journal.h); both keep the
// options and other inputs that change the rows, to refuse resuming or merging against others.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace clustersim {

// The most shards a sweep or sizing is split into: ten times the 10^5 parallel pods of a
// Kubernetes Indexed Job (kubernetes/kubernetes#98812, pkg/apis/batch/types.go), so every job
// array a scheduler runs fits.
inline constexpr int kMaxShards = 1 << 20;

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
  // The command-line options that change the rows (serve: "--max-rate"), and a fingerprint of
  // the other files the scenario reads (a serving trace's requests); "" when none (a training
  // sweep's).
  std::string options;
  std::string other_inputs;
  // Progress.
  int64_t next_index = 0;      // candidates below this index (of this shard) are done
  int64_t configurations = 0;  // valid configurations evaluated
  int64_t rows = 0;            // result rows: one per configuration and billing mode
  int64_t simulated = 0;       // configurations whose step was simulated (the others were OOM)
  std::map<std::string, int64_t> pruned;  // reason -> candidates
  bool complete = false;

  bool operator==(const SweepSummary&) const = default;
};

// What differs between the identity of a sweep that was interrupted (`recorded`) and of the one
// now asked to resume it (`now`), as a list a user can act on ("the scenario file's text, the
// options (--max-rate then, none now)"); "" when they are the same shard of the same sweep.
// `recorded_as` and `now_as` name the two sides in the values it quotes: a merge compares two
// shard files ("the options (--max-rate in a.h5, none here)").
std::string sweep_identity_changes(const SweepSummary& recorded, const SweepSummary& now,
                                   const std::string& recorded_as = "then",
                                   const std::string& now_as = "now");

}  // namespace clustersim
