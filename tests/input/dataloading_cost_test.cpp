// Per-sample CPU costs against the catalog's rates, the CPU-model matching, and the entry checks.
#include "sim/input/dataloading_cost.h"

#include <catch2/catch.hpp>

#include "tests/testing/parse_message.h"
#include "tests/testing/shipped_catalog.h"
#include "tests/testing/temp_dir.h"

namespace clustersim {
namespace {

using testing::shipped_instance;

TEST_CASE("instances find the dataloading cost of their CPU family") {
  const Catalog& catalog = testing::shipped_catalog();
  CHECK(find_dataloading_cost(catalog, shipped_instance("aws.p4d.24xlarge"))->name() ==
        "intel-xeon");
  CHECK(find_dataloading_cost(catalog, shipped_instance("aws.p5.48xlarge"))->name() == "amd-epyc");
  CHECK(find_dataloading_cost(catalog, shipped_instance("tencent.GT4.41XLARGE948"))->name() ==
        "amd-epyc");
}

TEST_CASE("a JPEG costs decode (scaled by its size) + augmentation + collate, per worker") {
  const Catalog& catalog = testing::shipped_catalog();
  const schema::InstanceType& p4d = shipped_instance("aws.p4d.24xlarge");  // Intel at 3.0 GHz
  const schema::DataloadingCost& cost = *find_dataloading_cost(catalog, p4d);
  const auto dataset = testing::parse_message<schema::Dataset>(
      "mean_sample_bytes: 269796 format: JPEG_IMAGE");  // twice the reference JPEG
  const double tensor_bytes = 602112;                   // 3 x 224 x 224 float32
  const double thread_s = 2.0 / cost.jpeg_decode_per_s() + 1 / cost.random_resized_crop_per_s() +
                          1 / cost.horizontal_flip_per_s() + 1 / cost.normalize_per_s() +
                          tensor_bytes / (cost.memcpy_gb_per_s() * 1e9);
  const SampleCpuCost sample = sample_cpu_cost(cost, p4d, dataset, tensor_bytes);
  CHECK(sample.worker_s ==
        Approx(thread_s * cost.reference_clock_ghz() / 3.0 / cost.worker_efficiency()));
  CHECK(sample.stage == "CPU decode");
}

TEST_CASE("raw text costs its tokenization, pre-tokenized samples only their collate") {
  const schema::InstanceType& p5 = shipped_instance("aws.p5.48xlarge");  // AMD at 3.6 GHz
  const schema::DataloadingCost& cost = *find_dataloading_cost(testing::shipped_catalog(), p5);
  const double scale = cost.reference_clock_ghz() / 3.6 / cost.worker_efficiency();
  const double collate_s = 32768 / (cost.memcpy_gb_per_s() * 1e9);
  const auto text =
      testing::parse_message<schema::Dataset>("mean_sample_bytes: 16384 format: RAW_TEXT");
  const SampleCpuCost tokenize = sample_cpu_cost(cost, p5, text, 32768);
  CHECK(tokenize.worker_s ==
        Approx((16384 / (cost.tokenize_mb_per_s() * 1e6) + collate_s) * scale));
  CHECK(tokenize.stage == "CPU tokenize");
  const auto tokens =
      testing::parse_message<schema::Dataset>("mean_sample_bytes: 8192 format: PRETOKENIZED");
  CHECK(sample_cpu_cost(cost, p5, tokens, 32768).worker_s == Approx(collate_s * scale));
}

TEST_CASE("a worker efficiency above 1 is an error at its field") {
  testing::TempDir dir;
  dir.write("c.textproto", R"(dataloading_cost {
  name: "x" cpu_model_match: "Intel" reference_clock_ghz: 3 jpeg_decode_per_s: 500
  reference_jpeg_bytes: 1e5 random_resized_crop_per_s: 1000 horizontal_flip_per_s: 1e4
  normalize_per_s: 1000 tokenize_mb_per_s: 1 memcpy_gb_per_s: 10
  worker_efficiency: 1.2
  source { citation: "test fixture" confidence: READ }
})");
  Diagnostics diagnostics;
  Catalog::load({dir.path()}, &diagnostics);
  CHECK_THAT(
      diagnostics.to_string(),
      Catch::Contains("c.textproto:5:3: dataloading_cost[0].worker_efficiency: must be <= 1"));
}

// A clock or a rate of 1e-300 made a worker's sample outlast the simulation's clock (an internal
// error under `input`): each is bounded like the catalog's other clocks and rates.
TEST_CASE("a data-loading cost's clock and rates are bounded") {
  testing::TempDir dir;
  dir.write("c.textproto", R"(dataloading_cost {
  name: "x" cpu_model_match: "Intel" reference_clock_ghz: 1e-300 jpeg_decode_per_s: 1e-300
  reference_jpeg_bytes: 1e5 random_resized_crop_per_s: 1000 horizontal_flip_per_s: 1e4
  normalize_per_s: 1000 tokenize_mb_per_s: 1 memcpy_gb_per_s: 1e308 worker_efficiency: 0.9
  source { citation: "test fixture" confidence: READ }
})");
  Diagnostics diagnostics;
  Catalog::load({dir.path()}, &diagnostics);
  CHECK(dir.relative(diagnostics.to_string()) ==
        "c.textproto:2:38: dataloading_cost[0].reference_clock_ghz: must be in [0.1, 10], got "
        "1e-300\n"
        "c.textproto:2:66: dataloading_cost[0].jpeg_decode_per_s: must be in [0.001, 1e+09], "
        "got 1e-300\n"
        "c.textproto:4:46: dataloading_cost[0].memcpy_gb_per_s: must be in [0.001, 1e+09], got "
        "1e+308\n");
}

// A reference JPEG of one byte made an ImageNet sample 113,044 references to decode (the input
// command ran past a minute), one of 1e300 bytes decoded it in no time (tools/input_audit.py).
TEST_CASE("a data-loading cost's reference JPEG is from 1 KiB to 64 MiB") {
  for (const auto& [bytes, error] :
       {std::pair<std::string, std::string>{"1", "got 1\n"}, {"1e300", "got 1e+300\n"}}) {
    testing::TempDir dir;
    dir.write("c.textproto", R"(dataloading_cost {
  name: "x" cpu_model_match: "Intel" reference_clock_ghz: 3 jpeg_decode_per_s: 500
  reference_jpeg_bytes: )" + bytes + R"( random_resized_crop_per_s: 1000 horizontal_flip_per_s: 1e4
  normalize_per_s: 1000 tokenize_mb_per_s: 1 memcpy_gb_per_s: 10 worker_efficiency: 0.9
  source { citation: "test fixture" confidence: READ }
})");
    Diagnostics diagnostics;
    Catalog::load({dir.path()}, &diagnostics);
    CHECK(dir.relative(diagnostics.to_string()) ==
          "c.textproto:3:3: dataloading_cost[0].reference_jpeg_bytes: must be in [1024, "
          "67108864], " + error);
  }
}

}  // namespace
}  // namespace clustersim
