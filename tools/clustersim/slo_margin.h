// How far the cheapest deployment meets its service-level objectives by, weighed against the
// model's error on its GPU: a deployment that meets a p99 objective by less than the model's mean
// error of that latency on published runs meets it only as far as the model can tell, so serve
// names beside it the cheapest deployment meeting every objective by more than that error.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/io/accuracy_evidence.h"
#include "sim/io/schema/serving.pb.h"
#include "sim/sweep/result_row.h"
#include "tools/clustersim/accuracy_notes.h"

namespace clustersim::cli {

// One objective of a row against the model's error of its latency.
struct ObjectiveMargin {
  std::string objective;  // "p99 TTFT"
  double limit_ms = 0;
  double value_ms = 0;  // the verdict's p99 (the worst sample's where there are several)
  double margin_pct = 0;  // (limit - value) / limit, in percent
  double error_pct = 0;   // the model's mean error of that latency for the row's GPUs
  // Whose error: "the H100-SXM5-80GB's checks on tensorrt-llm-1.0", "the L40-PCIE-48GB's
  // calibration on tensorrt-llm, the largest of its kind, as the L4-PCIE-24GB has none".
  std::string error_source;
  bool within_error() const { return margin_pct < error_pct; }
};

// The objective of `slo` that `row` (serving columns over `samples` traffic samples) meets by the
// least beyond the model's error (margin minus error), with the errors of the row's GPUs from
// `evidence` for the row's runtime (AccuracyKeys): a GPU's own TTFT or TPOT mean error (E2E: the
// larger of the two) on its runtime, else on the runtime it extends (said so), or, for a GPU
// without either, the largest mean error of the GPUs of its kind on the first of those with one.
// Absent where `slo` sets no objective or no GPU of the row has an error to weigh.
std::optional<ObjectiveMargin> binding_margin(const ResultRow& row, const schema::Slo& slo,
                                              int samples, const AccuracyEvidence& evidence,
                                              const AccuracyKeys& keys);

// What serve says under its cheapest answer (each a "margin" line of the table, the "margin" answer
// column of JSON and CSV): the margin of `cheapest` and, where it lies within the model's error,
// the cheapest of `rows` (status ok, priced) meeting every objective beyond it, or that none does.
// Empty without an objective or an error to weigh.
std::vector<std::string> margin_lines(const std::vector<ResultRow>& rows, const ResultRow& cheapest,
                                      const schema::Slo& slo, int samples,
                                      const AccuracyEvidence& evidence, const AccuracyKeys& keys,
                                      const std::string& currency);

}  // namespace clustersim::cli
