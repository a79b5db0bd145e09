// The accuracy lines, JSON keys and tie notes of run, sweep, cost and serve.
#include "tools/clustersim/accuracy_notes.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "sim/hw/sustained_fraction.h"
#include "sim/util/text_width.h"
#include "tools/clustersim/command_line.h"

namespace clustersim::cli {

std::unique_ptr<AccuracyEvidence> load_accuracy_evidence(const std::string& root,
                                                         const Catalog& catalog, bool* failed) {
  *failed = false;
  const std::string path = root + "/" + kAccuracyEvidencePath;
  std::error_code unused;
  if (!std::filesystem::exists(path, unused)) {
    std::cerr << path
              << ": warning: no such file: predictions print without their accuracy on "
                 "published runs (tools/accuracy_tables.py --write-evidence makes it)\n";
    return nullptr;
  }
  Diagnostics diagnostics;
  auto evidence = AccuracyEvidence::load(path, catalog, &diagnostics);
  print_diagnostics(diagnostics);
  *failed = evidence == nullptr;
  return evidence;
}

std::vector<AccuracyKey> AccuracyKeys::of(const std::string& instance_label) const {
  std::vector<AccuracyKey> keys;
  size_t start = 0;
  while (start <= instance_label.size()) {
    size_t end = instance_label.find(" + ", start);
    if (end == std::string::npos) end = instance_label.size();
    std::string name = instance_label.substr(start, end - start);
    name = name.substr(0, name.find(" x "));  // a pool's "INSTANCE x NODES"
    const auto* instance = catalog_->instances().find(name);
    if (instance && has_gpu(*instance->value)) {
      AccuracyKey key{instance->value->gpu(),
                      precision_ ? precision_label(*precision_, fp8_recipe_) : "", moe_, runtime_};
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    }
    start = end + 3;
  }
  return keys;
}

void AccuracyKeys::note(const std::string& instance_label) {
  for (const AccuracyKey& key : of(instance_label)) {
    if (fitted_.count(key)) continue;
    const schema::Gpu& gpu = *catalog_->gpus().find(key.gpu)->value;
    fitted_.emplace(key,
                    compute_constants_fitted(gpu, *precision_, /*training_step=*/true, fp8_recipe_)
                        ? KeyFit::kCalibrated
                    : step_sustained_fraction_fitted(gpu, *precision_, fp8_recipe_)
                        ? KeyFit::kFractionOnly
                        : KeyFit::kDerived);
  }
}

void AccuracyKeys::note(const std::string& instance_label, bool calibrated) {
  for (const AccuracyKey& key : of(instance_label)) {
    const KeyFit fit = calibrated ? KeyFit::kCalibrated : KeyFit::kDerived;
    const auto [it, added] = fitted_.emplace(key, fit);
    if (!added && !calibrated) it->second = fit;
  }
}

std::string AccuracyKeys::line(const AccuracyEvidence& evidence, const AccuracyKey& key,
                               KeyFit fit) const {
  std::string text = evidence.describe(key, fit);
  const auto* gpu = catalog_->gpus().find(key.gpu);
  if (gpu && gpu->value->source().confidence() == schema::UNVERIFIED) {
    text += "; the GPU's specs are second-hand (its catalog source is unverified: check its "
            "peaks against the vendor's datasheet)";
  }
  return text;
}

AccuracyKeys training_accuracy_keys(const Catalog& catalog, const LoadedScenario& scenario) {
  const schema::TrainingJob& job = scenario.scenario().job();
  return AccuracyKeys(catalog, job.precision(), job.fp8_recipe(),
                      is_transformer(scenario.model) && scenario.model->transformer().has_moe());
}

void note_result_row(const ResultRow& row, AccuracyKeys* keys) {
  static const int instance = result_column("instance"), step = result_column("step_s");
  const double s = row_number(row, step);
  if (s == s) keys->note(row_text(row, instance));
}

// The widest an accuracy line prints: a terminal of 100 columns, as the project's sources.
constexpr size_t kAccuracyColumns = 100;

void print_accuracy(std::ostream& out, const AccuracyEvidence* evidence, const AccuracyKeys& keys) {
  if (!evidence) return;
  // Each "; "-separated part of a description on a line of its own under the label, wrapped to
  // kAccuracyColumns, its continuation lines indented two columns more.
  const std::string label = "accuracy    ", indent(label.size(), ' ');
  for (const auto& [key, fitted] : keys.all()) {
    const std::string text = keys.line(*evidence, key, fitted);
    for (size_t from = 0; from <= text.size();) {
      const size_t end = std::min(text.find("; ", from), text.size());
      const std::vector<std::string> lines =
          wrap_columns(text.substr(from, end - from), kAccuracyColumns - indent.size() - 2);
      for (size_t i = 0; i < lines.size(); ++i) {
        out << (from == 0 && i == 0 ? label : indent) << (i > 0 ? "  " : "") << lines[i] << "\n";
      }
      from = end + 2;
    }
  }
}

namespace {

// The "accuracy" and "accuracy_mean_error_pct" cells of a row of `instance_label`.
std::vector<Table::Cell> accuracy_cells(const AccuracyEvidence& evidence, const AccuracyKeys& keys,
                                        const std::string& instance_label) {
  std::string text;
  std::optional<double> error = 0.0;
  for (const AccuracyKey& key : keys.of(instance_label)) {
    const auto noted = keys.all().find(key);
    const KeyFit fit = noted == keys.all().end() ? KeyFit::kCalibrated : noted->second;
    text += (text.empty() ? "" : " | ") + keys.line(evidence, key, fit);
    const std::optional<double> mean = evidence.mean_error_pct(key);
    error = mean && error ? std::optional(std::max(*error, *mean)) : std::nullopt;
  }
  if (text.empty()) return {Table::Cell(), Table::Cell()};
  return {text, error ? Table::Cell(*error) : Table::Cell()};
}

}  // namespace

std::vector<Table::Cell> accuracy_key_cells(const AccuracyEvidence& evidence,
                                            const AccuracyKeys& keys, const TieNotes& ties,
                                            const std::string& instance_label, double index,
                                            const std::string& billing) {
  std::vector<Table::Cell> cells = accuracy_cells(evidence, keys, instance_label);
  const std::string tie = ties.of(index, billing);
  cells.push_back(tie.empty() ? Table::Cell() : Table::Cell(tie));
  return cells;
}

void TieNotes::add(double index, const std::string& billing, const std::string& note) {
  if (note.empty()) return;
  std::string& notes = notes_[{index, billing}];
  notes += (notes.empty() ? "" : " | ") + note;
  all_.push_back(note);
}

std::string TieNotes::of(double index, const std::string& billing) const {
  const auto it = notes_.find({index, billing});
  return it == notes_.end() ? "" : it->second;
}

Table table_with_accuracy(const std::vector<ResultColumn>& columns, std::vector<std::string> keys,
                          const std::vector<ResultRow>& rows, int instance, bool json,
                          const AccuracyEvidence* evidence, const AccuracyKeys& accuracy,
                          const TieNotes& ties, const std::vector<ResultColumn>& trailing) {
  std::vector<ResultColumn> with = columns;
  with.insert(with.end(), trailing.begin(), trailing.end());
  const auto add_trailing_keys = [&] {
    for (const ResultColumn& column : trailing) keys.push_back(column.key);
  };
  if (!json || !evidence) {
    add_trailing_keys();
    return column_table(with, keys, rows);
  }
  with.push_back(identity_column("accuracy", "accuracy", ResultColumn::Kind::kText));
  with.push_back(figure_column("accuracy_mean_error_pct", "accuracy err %", 1));
  with.push_back(identity_column("tie", "tie", ResultColumn::Kind::kText));
  keys.insert(keys.end(), accuracy_keys().begin(), accuracy_keys().end());
  add_trailing_keys();
  const int billing = column_index(columns, "billing");
  std::vector<ResultRow> extended = rows;
  for (ResultRow& row : extended) {
    const std::vector<Table::Cell> cells =
        accuracy_key_cells(*evidence, accuracy, ties, row_text(row, instance), row_number(row, 0),
                           row_text(row, billing));
    row.insert(row.end(), cells.begin(), cells.end());
  }
  return column_table(with, keys, extended);
}

std::optional<double> shared_mean_error_pct(const AccuracyEvidence* evidence,
                                            const AccuracyKeys& keys, const std::string& label_a,
                                            const std::string& label_b) {
  if (!evidence) return std::nullopt;
  std::vector<AccuracyKey> both = keys.of(label_a);
  const std::vector<AccuracyKey> b = keys.of(label_b);
  both.insert(both.end(), b.begin(), b.end());
  if (both.empty()) return std::nullopt;
  double largest = 0;
  for (const AccuracyKey& key : both) {
    const std::optional<double> mean = evidence->mean_error_pct(key);
    if (!mean) return std::nullopt;
    largest = std::max(largest, *mean);
  }
  return largest;
}

std::string tie_line(const AccuracyEvidence* evidence, const AccuracyKeys& keys, const char* what,
                     const std::string& best_label, double best,
                     const std::string& runner_up_label, double runner_up,
                     const std::string& runner_up_description) {
  const std::optional<double> error =
      shared_mean_error_pct(evidence, keys, best_label, runner_up_label);
  if (!error) {
    // A key without a published run: the lead is said not to be weighed (none without evidence
    // or keys, where shared_mean_error_pct has nothing to weigh either).
    if (!evidence) return "";
    for (const std::string* label : {&best_label, &runner_up_label}) {
      for (const AccuracyKey& key : keys.of(*label)) {
        if (evidence->mean_error_pct(key)) continue;
        const std::string note = unweighed_lead_note(best, runner_up, key, runner_up_description);
        return note.empty() ? "" : std::string(what) + " " + note;
      }
    }
    return "";
  }
  const std::string note = tie_note(best, runner_up, *error, runner_up_description);
  return note.empty() ? "" : std::string(what) + " is " + note;
}

void print_ties(std::ostream& out, const TieNotes& ties) {
  for (const std::string& note : ties.all()) out << "tie         " << note << "\n";
}

}  // namespace clustersim::cli
