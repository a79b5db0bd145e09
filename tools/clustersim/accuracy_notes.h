// What run, sweep, cost and serve say of their predictions' accuracy (sim/io/accuracy_evidence.h):
// the shipped evidence loaded from the project root, a line per GPU, precision (serving: runtime)
// and kind of their rows after the table, those lines as JSON keys of every row, and the tie note
// of a ranking whose best and runner-up lie within the model's accuracy (or whose lead no
// published run weighs): a line under the table's summary, the "tie" key of the best row in JSON.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/io/accuracy_evidence.h"
#include "sim/io/catalog.h"
#include "sim/io/scenario_loader.h"
#include "sim/io/table.h"
#include "sim/sweep/ranking_leaders.h"
#include "sim/sweep/result_row.h"

namespace clustersim::cli {

// The evidence file under `root` (kAccuracyEvidencePath). Null, with a warning, when the file
// does not exist (predictions then print without their accuracy); an error (printed, and
// `*failed` set) when it does not read or check.
std::unique_ptr<AccuracyEvidence> load_accuracy_evidence(const std::string& root,
                                                         const Catalog& catalog, bool* failed);

// The keys of the rows of one scenario: each GPU of an instance label ("aws.p5.48xlarge", a mix's
// "aws.p5.48xlarge x 2 + aws.p4d.24xlarge x 4") with the job's precision label and kind
// (serving: no precision), each with how much of it is fitted (KeyFit), calibrated exactly when its
// rows' `calibrated` column says so, from the same source: a training step's compute constants
// all fitted for the GPU (sustained_fraction.h compute_constants_fitted, which
// ComputeModel::calibrated is), else its sustained fraction alone (step_sustained_fraction_fitted)
// or nothing; a serving row's `calibrated` (the runtime's own fit of the GPU).
class AccuracyKeys {
 public:
  // Serving keys of deployments on `runtime` (a ServingRuntime's name).
  AccuracyKeys(const Catalog& catalog, bool moe, std::string runtime)
      : catalog_(&catalog), moe_(moe), runtime_(std::move(runtime)) {}
  // Training keys of steps in `precision` under `fp8_recipe`.
  AccuracyKeys(const Catalog& catalog, schema::Precision precision, schema::Fp8Recipe fp8_recipe,
               bool moe)
      : catalog_(&catalog), precision_(precision), fp8_recipe_(fp8_recipe), moe_(moe) {}
  // The keys of one row's instance label.
  std::vector<AccuracyKey> of(const std::string& instance_label) const;
  // Notes a row of training keys: its keys, each as fitted as its GPU and precision are.
  void note(const std::string& instance_label);
  // Notes a serving row: its keys, fitted when the row is `calibrated` (every row of a key must
  // be).
  void note(const std::string& instance_label, bool calibrated);
  const std::map<AccuracyKey, KeyFit>& all() const { return fitted_; }
  // The key's accuracy line (AccuracyEvidence::describe of its fit), and where the catalog's
  // source of its GPU is second-hand (Confidence UNVERIFIED: the Blackwell entries, the A10G), a
  // last part saying so: the peaks its times scale with are not read in a primary source.
  std::string line(const AccuracyEvidence& evidence, const AccuracyKey& key, KeyFit fit) const;

 private:
  const Catalog* catalog_;
  std::optional<schema::Precision> precision_;  // absent: serving
  schema::Fp8Recipe fp8_recipe_ = schema::FP8_RECIPE_UNSPECIFIED;
  bool moe_;
  std::string runtime_;  // serving: the deployments' runtime
  std::map<AccuracyKey, KeyFit> fitted_;
};

// The keys of a training scenario's rows: its job's precision label, its model's kind.
AccuracyKeys training_accuracy_keys(const Catalog& catalog, const LoadedScenario& scenario);

// Notes `row` (a training sweep's columns) in `keys` when it was simulated.
void note_result_row(const ResultRow& row, AccuracyKeys* keys);

// "accuracy    LINE" per key, after a table (nothing without evidence).
void print_accuracy(std::ostream& out, const AccuracyEvidence* evidence, const AccuracyKeys& keys);

// A row's JSON keys "accuracy" (the lines of its instance label's keys, joined by " | "),
// "accuracy_mean_error_pct" (the largest mean error of those keys; empty when one has none) and
// "tie" (the tie notes of a ranking whose best the row is, joined by " | "; empty elsewhere).
inline const std::vector<std::string>& accuracy_keys() {
  static const std::vector<std::string> keys = {"accuracy", "accuracy_mean_error_pct", "tie"};
  return keys;
}

// The tie notes (tie_line) of the rankings' best rows, each row known by its configuration index
// (its first cell) and its billing mode.
class TieNotes {
 public:
  // Adds `note` (when not empty) to the row of `index` under `billing`.
  void add(double index, const std::string& billing, const std::string& note);
  // The notes of that row, joined by " | "; empty when none.
  std::string of(double index, const std::string& billing) const;
  // Every note, in the order added: the lines print_ties prints.
  const std::vector<std::string>& all() const { return all_; }

 private:
  std::map<std::pair<double, std::string>, std::string> notes_;
  std::vector<std::string> all_;
};

// The cells of every accuracy key (accuracy_keys()) of a row of `instance_label`, the
// configuration `index` under `billing`: the lines and mean error of its keys, then its notes in
// `ties` (empty when none). Requires: `evidence` is not null.
std::vector<Table::Cell> accuracy_key_cells(const AccuracyEvidence& evidence,
                                            const AccuracyKeys& keys, const TieNotes& ties,
                                            const std::string& instance_label, double index,
                                            const std::string& billing);

// The table of `keys` of `rows` (of `columns`: result_columns() or serving_columns(), each with
// "billing"), with, when `json` and there is evidence, the accuracy keys of each row (its instance
// label in column `instance`, its tie notes in `ties`) after them, and last every column of
// `trailing`, whose cells each row holds after those of `columns` (serve's answer columns).
Table table_with_accuracy(const std::vector<ResultColumn>& columns, std::vector<std::string> keys,
                          const std::vector<ResultRow>& rows, int instance, bool json,
                          const AccuracyEvidence* evidence, const AccuracyKeys& accuracy,
                          const TieNotes& ties = {},
                          const std::vector<ResultColumn>& trailing = {});

// The mean error two rows' predictions share: the larger of their keys' (AccuracyEvidence
// mean_error_pct); absent when a key has none or there is no evidence.
std::optional<double> shared_mean_error_pct(const AccuracyEvidence* evidence,
                                            const AccuracyKeys& keys, const std::string& label_a,
                                            const std::string& label_b);

// "THE_BEST is tied within the model's accuracy ... with RUNNER_UP: X% apart" (`what`: "the
// fastest", "the cheapest"), when tie_note finds the two tied; where a key of either row has no
// published run, "THE_BEST leads RUNNER_UP by X%, a margin ... cannot weigh (...)"
// (unweighed_lead_note); empty otherwise.
std::string tie_line(const AccuracyEvidence* evidence, const AccuracyKeys& keys, const char* what,
                     const std::string& best_label, double best,
                     const std::string& runner_up_label, double runner_up,
                     const std::string& runner_up_description);

// A ranked row as a tie note weighs it: its configuration's index and billing mode (the row that
// carries the note), its instance label (its accuracy keys), its figure on the ranking (smaller is
// better) and its configuration in words (how the note names a runner-up).
struct TieContender {
  double index;
  std::string billing;
  std::string instance_label;
  double figure;
  std::string description;
};

// Adds to `ties`, on the best row's, the note (tie_line) that a ranking's best (`what`: "the
// fastest", "the cheapest") is tied with its runner-up, the best row of another configuration;
// nothing when there is none or the two are not tied. `contender(entry)` gives a `leaders` entry's
// TieContender.
template <typename Entry, typename Contender>
void add_ranking_tie(const AccuracyEvidence* evidence, const AccuracyKeys& keys, const char* what,
                     const RankingLeaders<Entry>& leaders, const Contender& contender,
                     TieNotes* ties) {
  if (!leaders.runner_up()) return;
  const TieContender best = contender(*leaders.best()), next = contender(*leaders.runner_up());
  ties->add(best.index, best.billing,
            tie_line(evidence, keys, what, best.instance_label, best.figure, next.instance_label,
                     next.figure, next.description));
}

// "tie         NOTE" per note of `ties`, under a ranking's summary lines.
void print_ties(std::ostream& out, const TieNotes& ties);

}  // namespace clustersim::cli
