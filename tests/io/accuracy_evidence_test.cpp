// Tests of the accuracy evidence (sim/io/accuracy_evidence.h): its keys, the line printed for a
// calibrated and an uncalibrated GPU and precision, the tie note's threshold, the checks of a
// damaged file, and the shipped file against the shipped catalog.
#include "sim/io/accuracy_evidence.h"

#include <catch2/catch.hpp>
#include <limits>

#include "tests/testing/parse_message.h"
#include "tests/testing/shipped_catalog.h"
#include "tests/testing/temp_dir.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::parse_message;
using testing::shipped_catalog;

const AccuracyEvidence& example() {
  static const AccuracyEvidence evidence(
      parse_message<s::AccuracyEvidence>(R"(
    training { gpu: "H100-SXM5-80GB" precision: "FP8" moe: false
               calibration { runs: 15 mean_abs_pct: 4.2 worst_abs_pct: 10.6 }
               checks { runs: 60 mean_abs_pct: 7.9 worst_abs_pct: 28.4 } }
    training { gpu: "B300-SXM-268GB" precision: "MXFP8" moe: true
               checks { runs: 14 mean_abs_pct: 9.4 worst_abs_pct: 39.8 } }
    serving { runtime: "tensorrt-llm" gpu: "L40S-PCIE-48GB" moe: false calibration: true
              throughput { runs: 285 mean_abs_pct: 4.8 runs_of: "runs of 0.9.0" }
              ttft { runs: 285 mean_abs_pct: 4.7 runs_of: "runs of 0.9.0" }
              tpot { runs: 285 mean_abs_pct: 5.0 runs_of: "runs of 0.9.0" } }
    serving { runtime: "tensorrt-llm" gpu: "H100-SXM5-80GB" moe: false calibration: true
              throughput { runs: 614 mean_abs_pct: 6.0 runs_of: "runs of 0.9.0" }
              ttft { runs: 614 mean_abs_pct: 6.4 runs_of: "runs of 0.9.0" }
              tpot { runs: 614 mean_abs_pct: 5.9 runs_of: "runs of 0.9.0" } }
    serving { runtime: "tensorrt-llm-1.0" gpu: "H100-SXM5-80GB" moe: false calibration: false
              throughput { runs: 31 mean_abs_pct: 5.0 worst_abs_pct: 16.0
                           runs_of: "runs at maximum load" }
              ttft { runs: 8 mean_abs_pct: 9.0 worst_abs_pct: 26.6 runs_of: "load levels" }
              tpot { runs: 8 mean_abs_pct: 3.7 worst_abs_pct: 5.0 runs_of: "load levels" } }
    serving { runtime: "tensorrt-llm-1.0" gpu: "L40S-PCIE-48GB" moe: false calibration: false
              throughput { runs: 10 mean_abs_pct: 12.0 worst_abs_pct: 20.0
                           runs_of: "runs at maximum load" } })"),
      std::map<std::string, std::string>{{"tensorrt-llm-1.0", "tensorrt-llm"}});
  return evidence;
}

const AccuracyKey l40s{"L40S-PCIE-48GB", "", false, "tensorrt-llm"};

TEST_CASE("a step's precision label names the recipe where the fitted fraction does") {
  CHECK(precision_label(s::FP8, s::MXFP8) == "MXFP8");
  CHECK(precision_label(s::FP8, s::DELAYED_SCALING) == "FP8");
  CHECK(precision_label(s::FP8, s::FP8_RECIPE_UNSPECIFIED) == "FP8");
  CHECK(precision_label(s::FP4, s::NVFP4) == "NVFP4");
  CHECK(precision_label(s::BF16, s::FP8_RECIPE_UNSPECIFIED) == "BF16");
}

TEST_CASE("a calibrated GPU and precision print their runs' errors, checks beside them") {
  const AccuracyKey key{"H100-SXM5-80GB", "FP8", false};
  CHECK(example().describe(key, KeyFit::kCalibrated) ==
        "H100-SXM5-80GB FP8 dense training: calibrated on 15 published runs, mean 4.2% / worst "
        "10.6% step-time error; 60 public checks mean 7.9%");
  CHECK(example().mean_error_pct(key) == 4.2);
}

TEST_CASE("a GPU and precision without a published run say so, and whether they are derived") {
  CHECK(example().describe({"B300-SXM-268GB", "NVFP4", true}, KeyFit::kDerived) ==
        "B300-SXM-268GB NVFP4 MoE training: no published run; the step's constants are derived "
        "(uncalibrated)");
  CHECK(example().describe({"H100-SXM5-80GB", "FP8", true}, KeyFit::kCalibrated) ==
        "H100-SXM5-80GB FP8 MoE training: no published run; the step's constants are fitted on "
        "this GPU and precision's other runs");
  CHECK_FALSE(example().mean_error_pct({"B300-SXM-268GB", "NVFP4", true}));
}

TEST_CASE("a calibrated GPU with no run of its own in the precision never claims runs of its own") {
  // The H200's BF16 step takes the H100's fitted fraction (no H200 BF16 run, dense or MoE): the
  // line said "fitted on this GPU and precision's other runs", which a buyer comparing the H200
  // with the H100 reads as H200 evidence. Its FP8 MoE key has the dense FP8 checks beside it.
  const AccuracyEvidence evidence(parse_message<s::AccuracyEvidence>(R"(
    training { gpu: "H200-SXM-141GB" precision: "FP8" moe: false
               checks { runs: 4 mean_abs_pct: 0.9 worst_abs_pct: 1.1 } })"));
  CHECK(evidence.describe({"H200-SXM-141GB", "BF16", false}, KeyFit::kCalibrated) ==
        "H200-SXM-141GB BF16 dense training: no published run; the step's constants are fitted "
        "on runs of other GPUs or precisions (none of this GPU in this precision)");
  CHECK(evidence.describe({"H200-SXM-141GB", "FP8", true}, KeyFit::kCalibrated) ==
        "H200-SXM-141GB FP8 MoE training: no published run; the step's constants are fitted on "
        "this GPU and precision's other runs");
}

TEST_CASE("checks alone give their errors and the uncalibrated note, serving its three errors") {
  const AccuracyKey b300{"B300-SXM-268GB", "MXFP8", true};
  CHECK(example().describe(b300, KeyFit::kDerived) ==
        "B300-SXM-268GB MXFP8 MoE training: no calibration run, the step's constants are derived "
        "(uncalibrated); 14 public checks mean 9.4% / worst 39.8% step-time error");
  CHECK(example().mean_error_pct(b300) == 9.4);
  CHECK(example().describe(l40s, KeyFit::kCalibrated) ==
        "L40S-PCIE-48GB dense serving on tensorrt-llm: calibrated (its runtime has a fit of this "
        "GPU); calibration: mean error throughput 4.8% / TTFT 4.7% / TPOT 5.0% over 285 published "
        "runs of 0.9.0");
  CHECK(example().mean_error_pct(l40s) == 4.8);
}

TEST_CASE("serving prints the evidence of its own runtime, and says where it falls back") {
  // The later runtime's checks, each metric with the runs that score it; the calibration's
  // errors of the runtime it extends never stand in where it has its own.
  const AccuracyKey h100{"H100-SXM5-80GB", "", false, "tensorrt-llm-1.0"};
  CHECK(example().describe(h100, KeyFit::kCalibrated) ==
        "H100-SXM5-80GB dense serving on tensorrt-llm-1.0: calibrated (its runtime has a fit of "
        "this GPU); checks no fit reads: mean error throughput 5.0% (worst 16.0%) over 31 "
        "published runs at maximum load; checks no fit reads: mean error TTFT 9.0% (worst 26.6%) "
        "/ TPOT 3.7% (worst 5.0%) over 8 published load levels");
  CHECK(example().mean_error_pct(h100) == 5.0);
  CHECK(example().mean_error_pct({"H100-SXM5-80GB", "", false, "tensorrt-llm"}) == 6.0);
  // Throughput checked on the L40S, its latencies not: those are the base runtime's calibration,
  // said so.
  const AccuracyKey l40s_1_0{"L40S-PCIE-48GB", "", false, "tensorrt-llm-1.0"};
  CHECK(example().describe(l40s_1_0, KeyFit::kDerived) ==
        "L40S-PCIE-48GB dense serving on tensorrt-llm-1.0: uncalibrated (its runtime has no fit of "
        "this GPU: its form factor's mean); checks no fit reads: mean error throughput 12.0% "
        "(worst 20.0%) over 10 published runs at maximum load; no published TTFT / TPOT on "
        "tensorrt-llm-1.0: those of tensorrt-llm, whose constants it takes (calibration): mean "
        "error TTFT 4.7% / TPOT 5.0% over 285 published runs of 0.9.0");
  const auto ttft = example().serving_errors(l40s_1_0, ServingMetric::kTtft);
  REQUIRE(ttft);
  CHECK(ttft->fallback);
  CHECK(ttft->entry->runtime() == "tensorrt-llm");
  CHECK(ttft->errors->mean_abs_pct() == 4.7);
  // A GPU neither runtime has run: nothing, said so.
  const AccuracyKey a100{"A100-SXM4-80GB", "", false, "tensorrt-llm-1.0"};
  CHECK(example().describe(a100, KeyFit::kCalibrated) ==
        "A100-SXM4-80GB dense serving on tensorrt-llm-1.0: calibrated (its runtime has a fit of "
        "this GPU); no published throughput / TTFT / TPOT on tensorrt-llm-1.0 or on "
        "tensorrt-llm, which it extends: the model's error of those is unknown");
  CHECK_FALSE(example().mean_error_pct(a100));
  // A runtime no evidence covers and that extends none.
  const AccuracyKey vllm{"H100-SXM5-80GB", "", false, "vllm"};
  CHECK(example().describe(vllm, KeyFit::kDerived) ==
        "H100-SXM5-80GB dense serving on vllm: uncalibrated (its runtime has no fit of this GPU: "
        "its form factor's mean); no published throughput / TTFT / TPOT on vllm: the model's "
        "error of those is unknown");
  CHECK_FALSE(example().mean_error_pct(vllm));
}

TEST_CASE("a GPU without serving evidence takes the largest of its kind on its own runtime first") {
  // The A100 on 1.0: the 1.0 TTFT errors are the H100's (9.0%), not the calibration's L40S/H100.
  const AccuracyKey a100{"A100-SXM4-80GB", "", false, "tensorrt-llm-1.0"};
  const auto ttft = example().largest_serving_errors(a100, ServingMetric::kTtft);
  REQUIRE(ttft);
  CHECK_FALSE(ttft->fallback);
  CHECK(ttft->entry->gpu() == "H100-SXM5-80GB");
  CHECK(ttft->errors->mean_abs_pct() == 9.0);
  // The same on the calibration's runtime: the larger of the L40S's and H100's (6.4%).
  const auto calibration = example().largest_serving_errors(
      {"A100-SXM4-80GB", "", false, "tensorrt-llm"}, ServingMetric::kTtft);
  REQUIRE(calibration);
  CHECK(calibration->errors->mean_abs_pct() == 6.4);
  // No MoE entry on either runtime.
  CHECK_FALSE(example().largest_serving_errors({"A100-SXM4-80GB", "", true, "tensorrt-llm-1.0"},
                                               ServingMetric::kTtft));
}

TEST_CASE("a key fitted in part never reads calibrated, and says what its runs fitted") {
  // The rows' `calibrated` column says no (a kernel efficiency a prior: the B200's, V100's): the
  // line says uncalibrated, and what the runs fitted.
  CHECK(example().describe({"H100-SXM5-80GB", "FP8", false}, KeyFit::kFractionOnly) ==
        "H100-SXM5-80GB FP8 dense training: uncalibrated (not every kernel efficiency of the GPU "
        "is fitted); its sustained fraction is fitted on 15 published runs, mean 4.2% / worst "
        "10.6% step-time error; 60 public checks mean 7.9%");
  CHECK(example().describe(l40s, KeyFit::kDerived) ==
        "L40S-PCIE-48GB dense serving on tensorrt-llm: uncalibrated (its runtime has no fit of "
        "this GPU: its form factor's mean); calibration: mean error throughput 4.8% / TTFT 4.7% / "
        "TPOT 5.0% over 285 published runs of 0.9.0");
  CHECK(example().mean_error_pct({"H100-SXM5-80GB", "FP8", false}) == 4.2);
  // Without a published run of the GPU in the precision, of either kind (the Ascend 910B's FP16:
  // priors, the A100's fraction): the fraction is another GPU's, not fitted on runs of its own.
  CHECK(example().describe({"H100-SXM5-80GB", "BF16", false}, KeyFit::kFractionOnly) ==
        "H100-SXM5-80GB BF16 dense training: no published run; uncalibrated (not every kernel "
        "efficiency of the GPU is fitted); its sustained fraction is fitted on runs of other GPUs "
        "or precisions (none of this GPU in this precision)");
  CHECK(example().describe({"H100-SXM5-80GB", "FP8", true}, KeyFit::kFractionOnly) ==
        "H100-SXM5-80GB FP8 MoE training: no published run; uncalibrated (not every kernel "
        "efficiency of the GPU is fitted); its sustained fraction is fitted on this GPU and "
        "precision's other runs");
  CHECK(example().describe({"B300-SXM-268GB", "MXFP8", true}, KeyFit::kFractionOnly) ==
        "B300-SXM-268GB MXFP8 MoE training: no calibration run, uncalibrated (not every kernel "
        "efficiency of the GPU is fitted); its sustained fraction is fitted on other runs; 14 "
        "public checks mean 9.4% / worst 39.8% step-time error");
}

TEST_CASE("two best rows are tied when they lie closer than the mean error, not otherwise") {
  CHECK(tie_note(100, 103, 4.2, "B") ==
        "tied within the model's accuracy (mean error 4.2%) with B: 3.0% apart");
  CHECK(tie_note(100, 104.2, 4.2, "B").empty());  // as far apart as the error: not tied
  CHECK(tie_note(100, 110, 8, "B").empty());
  CHECK(tie_note(100, std::numeric_limits<double>::infinity(), 8, "B").empty());
}

TEST_CASE("a lead no published run weighs is said so, with its margin and the key without a run") {
  // B200 BF16 (no run) cheapest at 209,130 against the H200's 229,314: no tie note could be
  // given, and none read as a clear lead.
  CHECK(unweighed_lead_note(209130, 229314, {"B200-SXM-180GB", "BF16", false}, "H200 x 8") ==
        "leads H200 x 8 by 9.7%, a margin the model's accuracy cannot weigh (B200-SXM-180GB BF16 "
        "dense training has no published run)");
  CHECK(unweighed_lead_note(100, std::numeric_limits<double>::infinity(),
                            {"B200-SXM-180GB", "BF16", false}, "B")
            .empty());
  CHECK(unweighed_lead_note(0, 1, {"B200-SXM-180GB", "BF16", false}, "B").empty());
}

TEST_CASE("a damaged evidence file is refused at each bad field") {
  testing::TempDir dir;
  const std::string path =
      dir.write("evidence.textproto", R"(training { gpu: "H100-SXM5-80G" precision: "FP8" }
training { gpu: "A100-SXM4-80GB" precision: "FP9" calibration { runs: -1 mean_abs_pct: 3 } }
serving { runtime: "tensorrt-llm" gpu: "L40S-PCIE-48GB" throughput { runs: 3 mean_abs_pct: 1
                                                                     runs_of: "r" } }
serving { runtime: "tensorrt-llm" gpu: "L40S-PCIE-48GB" ttft { runs: 4 runs_of: "r" } }
serving { runtime: "tensorrt-llm-2" gpu: "L40S-PCIE-48GB" }
)");
  Diagnostics diagnostics;
  CHECK(AccuracyEvidence::load(path, shipped_catalog(), &diagnostics) == nullptr);
  const std::string text = diagnostics.to_string();
  INFO(text);
  CHECK_THAT(text, Catch::Contains(":1:") &&
                       Catch::Contains(
                           "unknown GPU \"H100-SXM5-80G\" (did you mean \"H100-SXM5-80GB\"?)"));
  CHECK_THAT(text, Catch::Contains("training[1].precision: unknown precision \"FP9\""));
  CHECK_THAT(text, Catch::Contains("training[1].calibration.runs"));
  CHECK_THAT(text,
             Catch::Contains(":5:") && Catch::Contains("serving[1]: L40S-PCIE-48GB dense "
                                                       "serving on tensorrt-llm is given twice "
                                                       "(also serving[0])"));
  CHECK_THAT(text, Catch::Contains("serving[1].ttft.mean_abs_pct"));
  CHECK_THAT(text, Catch::Contains(":6:") &&
                       Catch::Contains("unknown serving runtime \"tensorrt-llm-2\""));
}

TEST_CASE("the shipped evidence loads against the shipped catalog and covers the calibration") {
  Diagnostics diagnostics;
  const auto evidence = AccuracyEvidence::load(testing::source_path(kAccuracyEvidencePath),
                                               shipped_catalog(), &diagnostics);
  INFO(diagnostics.to_string());
  REQUIRE(evidence != nullptr);
  CHECK(diagnostics.all().empty());
  // The DGX-H100's FP8 dense runs are calibration rows; the B300's MXFP8 MoE runs checks only.
  const s::TrainingEvidence* h100 = evidence->training({"H100-SXM5-80GB", "FP8", false});
  REQUIRE(h100 != nullptr);
  CHECK(h100->calibration().runs() >= 15);
  CHECK(h100->checks().runs() > 0);
  const s::TrainingEvidence* b300 = evidence->training({"B300-SXM-268GB", "MXFP8", true});
  REQUIRE(b300 != nullptr);
  CHECK_FALSE(b300->has_calibration());
  CHECK(b300->checks().runs() >= 14);
  // Serving on the H100: the calibration's runtime its static-batching calibration, the later
  // release's its checks at maximum load and NIM's latency against concurrency (8 levels).
  const AccuracyKey calibration{"H100-SXM5-80GB", "", false, "tensorrt-llm"};
  const auto static_ttft = evidence->serving_errors(calibration, ServingMetric::kTtft);
  REQUIRE(static_ttft);
  CHECK(static_ttft->entry->calibration());
  CHECK(static_ttft->errors->runs() >= 600);
  const AccuracyKey later{"H100-SXM5-80GB", "", false, "tensorrt-llm-1.0"};
  const auto throughput = evidence->serving_errors(later, ServingMetric::kThroughput);
  const auto ttft = evidence->serving_errors(later, ServingMetric::kTtft);
  REQUIRE(throughput);
  REQUIRE(ttft);
  CHECK_FALSE(throughput->fallback);
  CHECK_FALSE(throughput->entry->calibration());
  CHECK(throughput->errors->runs() >= 19);
  CHECK_FALSE(ttft->fallback);
  CHECK(ttft->errors->runs() == 8);
}

}  // namespace
}  // namespace clustersim
