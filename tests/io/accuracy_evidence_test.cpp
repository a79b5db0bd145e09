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
  static const AccuracyEvidence evidence(parse_message<s::AccuracyEvidence>(R"(
    training { gpu: "H100-SXM5-80GB" precision: "FP8" moe: false
               calibration { runs: 15 mean_abs_pct: 4.2 worst_abs_pct: 10.6 }
               checks { runs: 60 mean_abs_pct: 7.9 worst_abs_pct: 28.4 } }
    training { gpu: "B300-SXM-268GB" precision: "MXFP8" moe: true
               checks { runs: 14 mean_abs_pct: 9.4 worst_abs_pct: 39.8 } }
    serving { gpu: "L40S-PCIE-48GB" moe: false runs: 285 throughput_mean_abs_pct: 4.8
              ttft_mean_abs_pct: 4.7 tpot_mean_abs_pct: 5.0 })"));
  return evidence;
}

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

TEST_CASE("checks alone give their errors and the uncalibrated note, serving its three errors") {
  const AccuracyKey b300{"B300-SXM-268GB", "MXFP8", true};
  CHECK(example().describe(b300, KeyFit::kDerived) ==
        "B300-SXM-268GB MXFP8 MoE training: no calibration run, the step's constants are derived "
        "(uncalibrated); 14 public checks mean 9.4% / worst 39.8% step-time error");
  CHECK(example().mean_error_pct(b300) == 9.4);
  CHECK(example().describe({"L40S-PCIE-48GB", "", false}, KeyFit::kCalibrated) ==
        "L40S-PCIE-48GB dense serving: calibrated on 285 published runs of TensorRT-LLM 0.9.0 "
        "(serving evidence covers that release only), mean error throughput 4.8% / TTFT 4.7% / "
        "TPOT 5.0%");
  CHECK(example().describe({"L4-PCIE-24GB", "", false}, KeyFit::kDerived) ==
        "L4-PCIE-24GB dense serving: no published run; its runtime fit is its form factor's mean "
        "(uncalibrated)");
}

TEST_CASE("a key fitted in part never reads calibrated, and says what its runs fitted") {
  // The rows' `calibrated` column says no (a kernel efficiency a prior: the B200's, V100's): the
  // line says uncalibrated, and what the runs fitted.
  CHECK(example().describe({"H100-SXM5-80GB", "FP8", false}, KeyFit::kFractionOnly) ==
        "H100-SXM5-80GB FP8 dense training: uncalibrated (not every kernel efficiency of the GPU "
        "is fitted); its sustained fraction is fitted on 15 published runs, mean 4.2% / worst "
        "10.6% step-time error; 60 public checks mean 7.9%");
  CHECK(example().describe({"L40S-PCIE-48GB", "", false}, KeyFit::kDerived) ==
        "L40S-PCIE-48GB dense serving: uncalibrated (its runtime has no fit of this GPU: its form "
        "factor's mean); the GPU's calibration: 285 published runs of TensorRT-LLM 0.9.0 (serving "
        "evidence covers that release only), mean error throughput 4.8% / TTFT 4.7% / TPOT 5.0%");
  CHECK(example().mean_error_pct({"H100-SXM5-80GB", "FP8", false}) == 4.2);
  // Without a calibration run (the Ascend 910B's FP16: priors, a fraction fitted on its runs).
  CHECK(example().describe({"H100-SXM5-80GB", "BF16", false}, KeyFit::kFractionOnly) ==
        "H100-SXM5-80GB BF16 dense training: no published run; uncalibrated (not every kernel "
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

TEST_CASE("a damaged evidence file is refused at each bad field") {
  testing::TempDir dir;
  const std::string path =
      dir.write("evidence.textproto", R"(training { gpu: "H100-SXM5-80G" precision: "FP8" }
training { gpu: "A100-SXM4-80GB" precision: "FP9" calibration { runs: -1 mean_abs_pct: 3 } }
serving { gpu: "L40S-PCIE-48GB" runs: 3 }
serving { gpu: "L40S-PCIE-48GB" runs: 4 }
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
             Catch::Contains(":4:") && Catch::Contains("serving[1]: L40S-PCIE-48GB dense "
                                                       "serving is given twice (also serving[0])"));
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
}

}  // namespace
}  // namespace clustersim
