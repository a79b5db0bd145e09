// The accuracy evidence file: loading, its checks, the line per key and the tie note.
#include "sim/io/accuracy_evidence.h"

#include <algorithm>
#include <cmath>

#include "sim/io/catalog_reference.h"
#include "sim/io/field_checker.h"
#include "sim/io/text_file.h"
#include "sim/util/number_format.h"

namespace clustersim {

namespace s = schema;

namespace {

// The labels precision_label gives.
const std::vector<std::string>& precision_labels() {
  static const std::vector<std::string> labels = {"FP32", "TF32", "FP16",  "BF16",
                                                  "FP8",  "INT8", "MXFP8", "NVFP4"};
  return labels;
}

std::string percent(double value) { return format_fixed(value, 1) + "%"; }

std::string runs(int n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// "H100-SXM5-80GB FP8 dense training" / "L40S-PCIE-48GB dense serving".
std::string key_name(const AccuracyKey& key) {
  const char* kind = key.moe ? "MoE" : "dense";
  if (key.precision.empty()) return key.gpu + " " + kind + " serving";
  return key.gpu + " " + key.precision + " " + kind + " training";
}

bool has_runs(const s::StepTimeErrors& errors) { return errors.runs() > 0; }

// The checks of one StepTimeErrors: runs >= 0, errors finite and from 0 to 1e6 %.
void check_errors(const FieldChecker& errors) {
  errors.require("runs");
  errors.non_negative("runs");
  errors.in_range("mean_abs_pct", 0, 1e6);
  errors.in_range("worst_abs_pct", 0, 1e6);
}

}  // namespace

std::string precision_label(s::Precision precision, s::Fp8Recipe fp8_recipe) {
  if (precision == s::FP8 && fp8_recipe == s::MXFP8) return "MXFP8";
  if (precision == s::FP4) return "NVFP4";
  return s::Precision_Name(precision);
}

AccuracyEvidence::AccuracyEvidence(s::AccuracyEvidence evidence) : evidence_(std::move(evidence)) {
  for (int i = 0; i < evidence_.training_size(); ++i) {
    const s::TrainingEvidence& t = evidence_.training(i);
    training_.emplace(AccuracyKey{t.gpu(), t.precision(), t.moe()}, i);
  }
  for (int i = 0; i < evidence_.serving_size(); ++i) {
    const s::ServingEvidence& v = evidence_.serving(i);
    serving_.emplace(AccuracyKey{v.gpu(), "", v.moe()}, i);
  }
}

std::unique_ptr<AccuracyEvidence> AccuracyEvidence::load(const std::string& path,
                                                         const Catalog& catalog,
                                                         Diagnostics* diagnostics) {
  auto file = read_text_file<s::AccuracyEvidence>(path, diagnostics);
  if (!file) return nullptr;
  const int errors_before = diagnostics->error_count();
  const FieldChecker root = FieldChecker::root(*file, diagnostics);
  std::map<AccuracyKey, int> seen;
  const auto check_key = [&](const FieldChecker& entry, const char* field, int index,
                             const AccuracyKey& key) {
    if (entry.require("gpu")) resolve_reference(entry, "gpu", -1, key.gpu, catalog.gpus(), "GPU");
    if (!seen.emplace(key, index).second) {
      root.error(field,
                 key_name(key) + " is given twice (also " + root.path(field, seen[key]) + ")",
                 index);
    }
  };
  const s::AccuracyEvidence& m = file->message;
  for (int i = 0; i < m.training_size(); ++i) {
    const s::TrainingEvidence& t = m.training(i);
    const FieldChecker entry = root.child("training", i);
    entry.require("precision");
    const auto& labels = precision_labels();
    if (t.has_precision() &&
        std::find(labels.begin(), labels.end(), t.precision()) == labels.end()) {
      entry.error("precision", "unknown precision \"" + t.precision() + "\"" +
                                   did_you_mean(t.precision(), labels));
    }
    check_key(entry, "training", i, {t.gpu(), t.precision(), t.moe()});
    if (t.has_calibration()) check_errors(entry.child("calibration"));
    if (t.has_checks()) check_errors(entry.child("checks"));
  }
  for (int i = 0; i < m.serving_size(); ++i) {
    const s::ServingEvidence& v = m.serving(i);
    const FieldChecker entry = root.child("serving", i);
    check_key(entry, "serving", i, {v.gpu(), "", v.moe()});
    entry.require("runs");
    entry.non_negative("runs");
    for (const char* field :
         {"throughput_mean_abs_pct", "ttft_mean_abs_pct", "tpot_mean_abs_pct"}) {
      entry.in_range(field, 0, 1e6);
    }
  }
  if (diagnostics->error_count() > errors_before) return nullptr;
  return std::make_unique<AccuracyEvidence>(file->message);
}

const s::TrainingEvidence* AccuracyEvidence::training(const AccuracyKey& key) const {
  const auto it = training_.find(key);
  return it == training_.end() ? nullptr : &evidence_.training(it->second);
}

const s::ServingEvidence* AccuracyEvidence::serving(const AccuracyKey& key) const {
  const auto it = serving_.find(key);
  return it == serving_.end() ? nullptr : &evidence_.serving(it->second);
}

std::string AccuracyEvidence::describe(const AccuracyKey& key, KeyFit fit) const {
  const bool calibrated = fit == KeyFit::kCalibrated;
  std::string text = key_name(key) + ": ";
  if (key.precision.empty()) {
    const s::ServingEvidence* v = serving(key);
    if (!v || v->runs() == 0) {
      return text + "no published run; " +
             (calibrated ? "its runtime constants are fitted on other runs"
                         : "its runtime fit is its form factor's mean (uncalibrated)");
    }
    // The serving evidence is one runtime's: TensorRT-LLM 0.9.0's static-batching calibration.
    const std::string evidence = runs(v->runs(), "published run") +
                                 " of TensorRT-LLM 0.9.0 (serving evidence covers that release "
                                 "only), mean error throughput " +
                                 percent(v->throughput_mean_abs_pct()) + " / TTFT " +
                                 percent(v->ttft_mean_abs_pct()) + " / TPOT " +
                                 percent(v->tpot_mean_abs_pct());
    if (calibrated) return text + "calibrated on " + evidence;
    return text + "uncalibrated (its runtime has no fit of this GPU: its form factor's mean); "
                  "the GPU's calibration: " + evidence;
  }
  // Where the step's fraction is fitted but a kernel efficiency is not (the rows read
  // `calibrated: no`).
  const std::string fraction_only =
      "uncalibrated (not every kernel efficiency of the GPU is fitted); its sustained fraction is "
      "fitted on ";
  const s::TrainingEvidence* t = training(key);
  const bool fitted = t && has_runs(t->calibration());
  const bool checked = t && has_runs(t->checks());
  if (!fitted && !checked) {
    if (fit == KeyFit::kFractionOnly) {
      return text + "no published run; " + fraction_only + "this GPU and precision's other runs";
    }
    return text + "no published run; the step's constants are " +
           (calibrated ? "fitted on this GPU and precision's other runs"
                       : "derived (uncalibrated)");
  }
  if (fitted) {
    const s::StepTimeErrors& c = t->calibration();
    const std::string errors = runs(c.runs(), "published run") + ", mean " +
                               percent(c.mean_abs_pct()) + " / worst " +
                               percent(c.worst_abs_pct()) + " step-time error";
    text += (calibrated ? "calibrated on " : fraction_only) + errors;
  } else if (fit == KeyFit::kFractionOnly) {
    text += "no calibration run, " + fraction_only + "other runs";
  } else {
    text += "no calibration run, the step's constants are " +
            std::string(calibrated ? "fitted on other runs" : "derived (uncalibrated)");
  }
  if (checked) {
    const s::StepTimeErrors& c = t->checks();
    text += "; " + runs(c.runs(), "public check") + " mean " + percent(c.mean_abs_pct());
    if (!fitted) text += " / worst " + percent(c.worst_abs_pct()) + " step-time error";
  }
  return text;
}

std::optional<double> AccuracyEvidence::mean_error_pct(const AccuracyKey& key) const {
  if (key.precision.empty()) {
    const s::ServingEvidence* v = serving(key);
    if (!v || v->runs() == 0) return std::nullopt;
    return v->throughput_mean_abs_pct();
  }
  const s::TrainingEvidence* t = training(key);
  if (!t) return std::nullopt;
  if (has_runs(t->calibration())) return t->calibration().mean_abs_pct();
  if (has_runs(t->checks())) return t->checks().mean_abs_pct();
  return std::nullopt;
}

std::string tie_note(double best, double runner_up, double mean_error_pct,
                     const std::string& runner_up_description) {
  if (!std::isfinite(best) || !std::isfinite(runner_up) || best <= 0) return "";
  const double apart_pct = 100 * std::abs(runner_up - best) / best;
  if (apart_pct >= mean_error_pct) return "";
  return "tied within the model's accuracy (mean error " + percent(mean_error_pct) + ") with " +
         runner_up_description + ": " + percent(apart_pct) + " apart";
}

}  // namespace clustersim
