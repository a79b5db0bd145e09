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

// "H100-SXM5-80GB FP8 dense training" / "L40S-PCIE-48GB dense serving on tensorrt-llm".
std::string key_name(const AccuracyKey& key) {
  const char* kind = key.moe ? "MoE" : "dense";
  if (key.precision.empty()) return key.gpu + " " + kind + " serving on " + key.runtime;
  return key.gpu + " " + key.precision + " " + kind + " training";
}

const char* metric_name(ServingMetric metric) {
  return metric == ServingMetric::kThroughput ? "throughput"
         : metric == ServingMetric::kTtft     ? "TTFT"
                                              : "TPOT";
}

constexpr ServingMetric kServingMetrics[] = {ServingMetric::kThroughput, ServingMetric::kTtft,
                                             ServingMetric::kTpot};

// "mean error TTFT 9.0% (worst 26.6%) / TPOT 3.7% (worst 5.0%) over 8 published load levels of
// ...": the errors of `metrics`, of one set of runs (the first's runs_of), each metric's count
// ("over 614 / 645 published runs ...") where they differ.
std::string errors_text(
    const std::vector<std::pair<ServingMetric, const s::ServingErrors*>>& metrics) {
  std::string text = "mean error ", counts;
  bool same_count = true;
  for (size_t i = 0; i < metrics.size(); ++i) {
    const s::ServingErrors& e = *metrics[i].second;
    text += (i ? " / " : "") + std::string(metric_name(metrics[i].first)) + " " +
            percent(e.mean_abs_pct());
    if (e.has_worst_abs_pct()) text += " (worst " + percent(e.worst_abs_pct()) + ")";
    counts += (i ? " / " : "") + std::to_string(e.runs());
    same_count = same_count && e.runs() == metrics.front().second->runs();
  }
  const s::ServingErrors& first = *metrics.front().second;
  return text + " over " + (same_count ? std::to_string(first.runs()) : counts) + " published " +
         first.runs_of();
}

// The errors of `metric` in `entry`, or null where it scores none.
const s::ServingErrors* metric_errors(const s::ServingEvidence& entry, ServingMetric metric) {
  const bool has = metric == ServingMetric::kThroughput ? entry.has_throughput()
                   : metric == ServingMetric::kTtft     ? entry.has_ttft()
                                                        : entry.has_tpot();
  if (!has) return nullptr;
  const s::ServingErrors& e = metric == ServingMetric::kThroughput ? entry.throughput()
                              : metric == ServingMetric::kTtft     ? entry.ttft()
                                                                   : entry.tpot();
  return e.runs() > 0 ? &e : nullptr;
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

AccuracyEvidence::AccuracyEvidence(s::AccuracyEvidence evidence,
                                   std::map<std::string, std::string> base_runtimes)
    : evidence_(std::move(evidence)), base_runtimes_(std::move(base_runtimes)) {
  for (int i = 0; i < evidence_.training_size(); ++i) {
    const s::TrainingEvidence& t = evidence_.training(i);
    training_.emplace(AccuracyKey{t.gpu(), t.precision(), t.moe()}, i);
  }
  for (int i = 0; i < evidence_.serving_size(); ++i) {
    const s::ServingEvidence& v = evidence_.serving(i);
    serving_.emplace(AccuracyKey{v.gpu(), "", v.moe(), v.runtime()}, i);
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
    if (entry.require("runtime")) {
      resolve_reference(entry, "runtime", -1, v.runtime(), catalog.serving_runtimes(),
                        "serving runtime");
    }
    check_key(entry, "serving", i, {v.gpu(), "", v.moe(), v.runtime()});
    for (const char* metric : {"throughput", "ttft", "tpot"}) {
      if (!entry.has(metric)) continue;
      const FieldChecker errors = entry.child(metric);
      check_errors(errors);
      errors.require("mean_abs_pct");
      errors.require("runs_of");
    }
  }
  if (diagnostics->error_count() > errors_before) return nullptr;
  std::map<std::string, std::string> base_runtimes;
  for (const auto& [name, runtime] : catalog.serving_runtimes().all()) {
    if (runtime.value->has_extends()) base_runtimes.emplace(name, runtime.value->extends());
  }
  return std::make_unique<AccuracyEvidence>(file->message, std::move(base_runtimes));
}

const s::TrainingEvidence* AccuracyEvidence::training(const AccuracyKey& key) const {
  const auto it = training_.find(key);
  return it == training_.end() ? nullptr : &evidence_.training(it->second);
}

const s::ServingEvidence* AccuracyEvidence::serving_entry(const AccuracyKey& key) const {
  const auto it = serving_.find(key);
  return it == serving_.end() ? nullptr : &evidence_.serving(it->second);
}

std::string AccuracyEvidence::base_runtime(const std::string& runtime) const {
  const auto it = base_runtimes_.find(runtime);
  return it == base_runtimes_.end() ? "" : it->second;
}

std::optional<ServingErrorsFound> AccuracyEvidence::serving_errors(const AccuracyKey& key,
                                                                   ServingMetric metric) const {
  AccuracyKey at = key;
  for (const bool fallback : {false, true}) {
    if (at.runtime.empty()) break;
    if (const s::ServingEvidence* entry = serving_entry(at)) {
      if (const s::ServingErrors* errors = metric_errors(*entry, metric)) {
        return ServingErrorsFound{errors, entry, fallback};
      }
    }
    at.runtime = base_runtime(at.runtime);
  }
  return std::nullopt;
}

std::optional<ServingErrorsFound> AccuracyEvidence::largest_serving_errors(
    const AccuracyKey& key, ServingMetric metric) const {
  std::string runtime = key.runtime;
  for (const bool fallback : {false, true}) {
    if (runtime.empty()) break;
    std::optional<ServingErrorsFound> largest;
    for (const s::ServingEvidence& entry : evidence_.serving()) {
      if (entry.runtime() != runtime || entry.moe() != key.moe) continue;
      const s::ServingErrors* errors = metric_errors(entry, metric);
      if (errors && (!largest || errors->mean_abs_pct() > largest->errors->mean_abs_pct())) {
        largest = ServingErrorsFound{errors, &entry, fallback};
      }
    }
    if (largest) return largest;
    runtime = base_runtime(runtime);
  }
  return std::nullopt;
}

std::string AccuracyEvidence::describe(const AccuracyKey& key, KeyFit fit) const {
  const bool calibrated = fit == KeyFit::kCalibrated;
  std::string text = key_name(key) + ": ";
  if (key.precision.empty()) {
    text += calibrated ? "calibrated (its runtime has a fit of this GPU)"
                       : "uncalibrated (its runtime has no fit of this GPU: its form factor's "
                         "mean)";
    // The metrics in groups of one entry's set of runs (runs_of), in metric order; those no
    // runtime scores last.
    std::vector<std::pair<ServingErrorsFound,
                          std::vector<std::pair<ServingMetric, const s::ServingErrors*>>>>
        groups;
    std::vector<ServingMetric> none;
    for (const ServingMetric metric : kServingMetrics) {
      const std::optional<ServingErrorsFound> found = serving_errors(key, metric);
      if (!found) {
        none.push_back(metric);
        continue;
      }
      const auto same = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
        return g.first.entry == found->entry &&
               g.second.front().second->runs_of() == found->errors->runs_of();
      });
      if (same == groups.end()) {
        groups.push_back({*found, {{metric, found->errors}}});
      } else {
        same->second.push_back({metric, found->errors});
      }
    }
    const auto names = [](const std::vector<ServingMetric>& metrics) {
      std::string joined;
      for (size_t i = 0; i < metrics.size(); ++i) {
        joined += (i ? " / " : "") + std::string(metric_name(metrics[i]));
      }
      return joined;
    };
    const std::string base = base_runtime(key.runtime);
    for (const auto& [found, metrics] : groups) {
      const char* what = found.entry->calibration() ? "calibration" : "checks no fit reads";
      if (!found.fallback) {
        text += std::string("; ") + what + ": " + errors_text(metrics);
        continue;
      }
      std::vector<ServingMetric> missing;
      for (const auto& m : metrics) missing.push_back(m.first);
      text += "; no published " + names(missing) + " on " + key.runtime + ": those of " +
              found.entry->runtime() + ", whose constants it takes (" + what +
              "): " + errors_text(metrics);
    }
    if (!none.empty()) {
      text += "; no published " + names(none) + " on " + key.runtime +
              (base.empty() ? "" : " or on " + base + ", which it extends") +
              ": the model's error of those is unknown";
    }
    return text;
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
    // Runs of the other kind (dense or MoE) of this GPU and precision, which its fit reads; where
    // there are none, its constants are another GPU's or precision's (the H200's BF16 step the
    // H100's), and the line must not claim runs of its own.
    const s::TrainingEvidence* other = training({key.gpu, key.precision, !key.moe, key.runtime});
    const std::string fitted_on =
        other && (has_runs(other->calibration()) || has_runs(other->checks()))
            ? "this GPU and precision's other runs"
            : "runs of other GPUs or precisions (none of this GPU in this precision)";
    if (fit == KeyFit::kFractionOnly) {
      return text + "no published run; " + fraction_only + fitted_on;
    }
    return text + "no published run; the step's constants are " +
           (calibrated ? "fitted on " + fitted_on : std::string("derived (uncalibrated)"));
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
    const std::optional<ServingErrorsFound> found = serving_errors(key, ServingMetric::kThroughput);
    if (!found) return std::nullopt;
    return found->errors->mean_abs_pct();
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

std::string unweighed_lead_note(double best, double runner_up, const AccuracyKey& unknown,
                                const std::string& runner_up_description) {
  if (!std::isfinite(best) || !std::isfinite(runner_up) || best <= 0) return "";
  return "leads " + runner_up_description + " by " +
         percent(100 * std::abs(runner_up - best) / best) +
         ", a margin the model's accuracy cannot weigh (" + key_name(unknown) +
         " has no published run)";
}

}  // namespace clustersim
