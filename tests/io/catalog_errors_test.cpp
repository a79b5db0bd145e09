// Tests that each class of wrong catalog entry is reported with file, line, field path and why.
#include <catch2/catch.hpp>
#include <filesystem>

#include "sim/io/catalog.h"
#include "tests/testing/catalog_snippets.h"
#include "tests/testing/temp_dir.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::gpu_entry;
using testing::instance_entry;
using testing::TempDir;
using testing::test_instance_fields;
using testing::transformer_model;

// Diagnostics of loading one catalog file with `contents` (file name "c.textproto").
std::string catalog_errors(const std::string& contents) {
  TempDir dir;
  dir.write("c.textproto", contents);
  Diagnostics diagnostics;
  Catalog::load({dir.path()}, &diagnostics);
  return dir.relative(diagnostics.to_string());
}

TEST_CASE("valid fixtures load without any diagnostic") {
  CHECK(catalog_errors(gpu_entry() + instance_entry(test_instance_fields())) == "");
}

TEST_CASE("a negative bandwidth names the field and its value") {
  std::string text = gpu_entry();
  text.replace(text.find("memory_bandwidth_gb_per_s: 2000"), 31, "memory_bandwidth_gb_per_s: -5");
  CHECK(catalog_errors(text) ==
        "c.textproto:5:3: gpu[0].memory_bandwidth_gb_per_s: must be > 0, got -5\n");
}

TEST_CASE("a CUDA total above the GPU's label memory is an error at its field") {
  CHECK(catalog_errors(gpu_entry("  cuda_total_memory_gib: 81")) ==
        "c.textproto:9:3: gpu[0].cuda_total_memory_gib: must not exceed memory_gib (80): the "
        "driver exposes part of the device's memory, not more\n");
  CHECK(catalog_errors(gpu_entry("  cuda_total_memory_gib: 0")) ==
        "c.textproto:9:3: gpu[0].cuda_total_memory_gib: must be > 0, got 0\n");
  CHECK(catalog_errors(gpu_entry("  cuda_total_memory_gib: 79.11")) == "");
}

TEST_CASE("a sustained compute fraction above 1 is an error at its field") {
  CHECK(catalog_errors(gpu_entry("  sustained_compute_fraction: 1.3")) ==
        "c.textproto:9:3: gpu[0].sustained_compute_fraction: must be in [0.01, 1], got 1.3\n");
}

TEST_CASE("an attention efficiency's precision is FP8 on a GPU with an FP8 peak") {
  const auto entry = [](const std::string& precision) {
    return gpu_entry("  attention_efficiency { pass: FORWARD causal: true head_dim: 128 "
                     "max_fraction: 0.5 half_rate_keys: 100 precision: " + precision + " }");
  };
  CHECK(catalog_errors(entry("BF16")) ==
        "c.textproto:9:105: gpu[0].attention_efficiency[0].precision: must be FP8 (absent: the "
        "16-bit kernel)\n");
  CHECK(catalog_errors(entry("FP8")) ==
        "c.textproto:9:105: gpu[0].attention_efficiency[0].precision: FP8 on a GPU without an FP8 "
        "peak\n");
  // FlashAttention-2's entries are 16-bit: it has no FP8 kernel.
  CHECK(catalog_errors(entry("FP8 library: FLASH_ATTENTION_2")) ==
        "c.textproto:9:105: gpu[0].attention_efficiency[0].precision: FlashAttention-2 has no FP8 "
        "kernel\n");
}

// A half-rate point of 1e308 keys crashed serve (a kernel's time overflowed into an event in the
// past).
TEST_CASE("an attention efficiency's half-rate point is at most a million keys") {
  CHECK(catalog_errors(gpu_entry("  attention_efficiency { pass: FORWARD causal: true head_dim: "
                                 "128 max_fraction: 0.5 half_rate_keys: 1e308 }")) ==
        "c.textproto:9:85: gpu[0].attention_efficiency[0].half_rate_keys: must be in [0, "
        "1048576], got 1e+308\n");
}

TEST_CASE("an attention efficiency's own sustained fraction is in [0.01, 1]") {
  CHECK(catalog_errors(gpu_entry("  attention_efficiency { pass: FORWARD causal: true head_dim: "
                                 "128 max_fraction: 0.5 half_rate_keys: 100 library: "
                                 "FLASH_ATTENTION_2 sustained_fraction: 1.2 }")) ==
        "c.textproto:9:132: gpu[0].attention_efficiency[0].sustained_fraction: must be in [0.01, "
        "1], got 1.2\n");
}

TEST_CASE("an attention entry scaled from another head dimension names its base and one ratio") {
  const std::string base =
      "  attention_efficiency { pass: BACKWARD causal: true head_dim: 128 max_fraction: 0.6 "
      "half_rate_keys: 700 }\n";
  const auto scaled = [](const std::string& fields) {
    return "  attention_efficiency { pass: BACKWARD causal: true head_dim: 64 " + fields + " }";
  };
  // Loads: 0.6 x 0.625 at the base's half_rate_keys (checked in compute_model_test.cpp).
  CHECK(catalog_errors(
            gpu_entry(base + scaled("scaled_from_head_dim: 128 head_dim_ratio: 0.625"))) == "");
  CHECK(catalog_errors(gpu_entry(base + scaled("scaled_from_head_dim: 128"))) ==
        "c.textproto:10:3: gpu[0].attention_efficiency[1].head_dim_ratio: is required\n");
  CHECK(catalog_errors(gpu_entry(
            base + scaled("scaled_from_head_dim: 128 head_dim_ratio: 0.6 max_fraction: 0.4"))) ==
        "c.textproto:10:113: gpu[0].attention_efficiency[1].max_fraction: give it or "
        "scaled_from_head_dim, not both\n");
  CHECK(catalog_errors(gpu_entry(base + scaled("head_dim_ratio: 0.6 max_fraction: 0.4 "
                                               "half_rate_keys: 10"))) ==
        "c.textproto:10:67: gpu[0].attention_efficiency[1].head_dim_ratio: needs "
        "scaled_from_head_dim\n");
  // No base: another head dimension, or another mask.
  CHECK(catalog_errors(gpu_entry(base + scaled("scaled_from_head_dim: 256 head_dim_ratio: 0.6"))) ==
        "c.textproto:10:67: gpu[0].attention_efficiency[1].scaled_from_head_dim: no entry of this "
        "pass, mask, precision and library at head dimension 256 with a max_fraction of its own\n");
  CHECK(catalog_errors(gpu_entry(
            "  attention_efficiency { pass: BACKWARD causal: false head_dim: 128 max_fraction: 0.6 "
            "half_rate_keys: 700 }\n" +
            scaled("scaled_from_head_dim: 128 head_dim_ratio: 0.6"))) ==
        "c.textproto:10:67: gpu[0].attention_efficiency[1].scaled_from_head_dim: no entry of this "
        "pass, mask, precision and library at head dimension 128 with a max_fraction of its own\n");
  CHECK(catalog_errors(gpu_entry(base + scaled("scaled_from_head_dim: 128 head_dim_ratio: 2"))) ==
        "c.textproto:10:93: gpu[0].attention_efficiency[1].head_dim_ratio: puts max_fraction above "
        "1 (1.2)\n");
}

TEST_CASE("a GPU's attention dropout gives both passes' fractions, each in [0.01, 1]") {
  CHECK(catalog_errors(gpu_entry("  attention_dropout { forward_fraction: 1.2 }")) ==
        "c.textproto:9:23: gpu[0].attention_dropout.forward_fraction: must be in [0.01, 1], got "
        "1.2\n"
        "c.textproto:9:3: gpu[0].attention_dropout.backward_fraction: is required\n");
  CHECK(catalog_errors(gpu_entry(
            "  attention_dropout { forward_fraction: 0.9 backward_fraction: 0 }")) ==
        "c.textproto:9:45: gpu[0].attention_dropout.backward_fraction: must be in [0.01, 1], got "
        "0\n");
  CHECK(catalog_errors(gpu_entry(
            "  attention_dropout { forward_fraction: 0.9 backward_fraction: 0.8 }")) == "");
}

TEST_CASE("a GPU's power limit gives both limits, the lower first, a fraction and a source") {
  const std::string source = " source { citation: \"a paper\" }";
  CHECK(catalog_errors(gpu_entry("  power_limit { watts: 500 reference_watts: 700 "
                                 "step_throughput_fraction: 0.9" + source + " }")) == "");
  CHECK(catalog_errors(gpu_entry("  power_limit { watts: 700 reference_watts: 500 "
                                 "step_throughput_fraction: 0.9" + source + " }")) ==
        "c.textproto:9:28: gpu[0].power_limit.reference_watts: must exceed watts (the lower "
        "limit this GPU runs at)\n");
  CHECK(catalog_errors(gpu_entry("  power_limit { watts: 500 reference_watts: 700 "
                                 "step_throughput_fraction: 1.2 }")) ==
        "c.textproto:9:49: gpu[0].power_limit.step_throughput_fraction: must be in [0.01, 1], "
        "got 1.2\n"
        "c.textproto:9:3: gpu[0].power_limit.source: is required\n");
}

// A training runtime entry (line 1 of its text: "runtime {"; `extra` on line 7).
std::string runtime_entry(const std::string& extra = "") {
  return "runtime {\n  name: \"default\"\n  cuda_context_gib: 0.4\n  communicator_gib: 0.6\n"
         "  allocator_overhead_fraction: 0.05\n  " +
         testing::kSource + "\n" + extra + "\n}\n";
}

TEST_CASE("a runtime's memory reserve beyond a PiB is refused") {
  // A CUDA context of 1e300 GiB printed a step's memory as inf and its shortfall as
  // -9223372036854775808 GiB.
  std::string huge = runtime_entry();
  huge.replace(huge.find("cuda_context_gib: 0.4"), 21, "cuda_context_gib: 1e300");
  CHECK_THAT(catalog_errors(huge),
             Catch::StartsWith("c.textproto:3:3: runtime[0].cuda_context_gib: must be in [0, "
                               "1048576], got 1e+300\n"));
}

TEST_CASE("the runtime's defaults are computed, never written") {
  // The GPU entry takes lines 1-13, the runtime starts on line 14 (`extra` on line 20).
  const std::string fitted = gpu_entry(
      "  matmul_efficiency { precision: BF16 max_fraction: 0.7 overhead_us: 8 }\n"
      "  memory_efficiency_fraction: 0.8\n  flash_attention_fraction: 0.4\n"
      "  sustained_compute_fraction: 0.8");
  CHECK(catalog_errors(fitted + runtime_entry("  default_sustained_compute_fraction: 0.8")) ==
        "c.textproto:20:3: runtime[0].default_sustained_compute_fraction: is computed at load "
        "from the fitted GPUs' sustained_compute_fraction: remove it (set a GPU's own "
        "sustained_compute_fraction instead)\n");
  CHECK(catalog_errors(fitted + runtime_entry("  default_matmul_max_fraction: 0.744\n"
                                              "  default_flash_attention_fraction: 0.413")) ==
        "c.textproto:20:3: runtime[0].default_matmul_max_fraction: is computed at load from the "
        "fitted GPUs' matmul_efficiency.max_fraction: remove it (set a GPU's own "
        "matmul_efficiency.max_fraction instead)\n"
        "c.textproto:21:3: runtime[0].default_flash_attention_fraction: is computed at load from "
        "the fitted GPUs' flash_attention_fraction: remove it (set a GPU's own "
        "flash_attention_fraction instead)\n");
  CHECK(catalog_errors(fitted + runtime_entry("  default_matmul_overhead_us: 7.9\n"
                                              "  default_memory_efficiency_fraction: 0.867")) ==
        "c.textproto:20:3: runtime[0].default_matmul_overhead_us: is computed at load from the "
        "fitted GPUs' matmul_efficiency.overhead_us: remove it (set a GPU's own "
        "matmul_efficiency.overhead_us instead)\n"
        "c.textproto:21:3: runtime[0].default_memory_efficiency_fraction: is computed at load "
        "from the fitted GPUs' memory_efficiency_fraction: remove it (set a GPU's own "
        "memory_efficiency_fraction instead)\n");
  // A GPU lacking one of the fits (here flash_attention_fraction) does not count.
  CHECK(catalog_errors(gpu_entry("  matmul_efficiency { precision: BF16 max_fraction: 0.7 "
                                 "overhead_us: 8 }\n  memory_efficiency_fraction: 0.8\n"
                                 "  sustained_compute_fraction: 0.8") +
                       runtime_entry()) ==
        "c.textproto:13:1: runtime[0]: no GPU of the catalog has fitted efficiencies (not priors, "
        "with a 16-bit matmul_efficiency, memory_efficiency_fraction, flash_attention_fraction "
        "and sustained_compute_fraction) to take the runtime's defaults from\n");
}

TEST_CASE("a transferred sustained fraction needs its reference's fits and no fitted value") {
  const auto transfer = [](const std::string& fields, const std::string& reference) {
    return gpu_entry("  matmul_efficiency { precision: BF16 max_fraction: 0.8 overhead_us: 6 " +
                     fields + "\n    sustained_transfer { from_precision: FP8 reference_gpu: \"" +
                     reference + "\" } }");
  };
  CHECK(catalog_errors(transfer("", "TestGPU-80G")) ==
        "c.textproto:10:46: gpu[0].matmul_efficiency[0].sustained_transfer.reference_gpu: unknown "
        "GPU \"TestGPU-80G\" (did you mean \"TestGPU-80GB\"?)\n");
  // Its own FP8 fraction missing is an error; the reference's, a warning (a user's replacement
  // of the reference GPU leaves the steps to the runtime's default).
  CHECK(catalog_errors(transfer("", "TestGPU-80GB")) ==
        "c.textproto:10:26: gpu[0].matmul_efficiency[0].sustained_transfer.from_precision: GPU "
        "\"TestGPU-80GB\" has no fitted sustained fraction of FP8 steps\n"
        "c.textproto:10:46: warning: gpu[0].matmul_efficiency[0].sustained_transfer.reference_gpu: "
        "GPU \"TestGPU-80GB\" has no fitted sustained fraction of BF16 steps: BF16 steps take the "
        "runtime's default\n"
        "c.textproto:10:46: warning: gpu[0].matmul_efficiency[0].sustained_transfer.reference_gpu: "
        "GPU \"TestGPU-80GB\" has no fitted sustained fraction of FP8 steps: BF16 steps take the "
        "runtime's default\n");
  std::string own = transfer("sustained_fraction: 0.5", "TestGPU-80GB");
  own.replace(own.find("from_precision: FP8"), 19, "from_precision: BF16");
  CHECK(catalog_errors(own) ==
        "c.textproto:9:72: gpu[0].matmul_efficiency[0].sustained_fraction: is computed from "
        "sustained_transfer: give one or the other\n"
        "c.textproto:10:26: gpu[0].matmul_efficiency[0].sustained_transfer.from_precision: is "
        "this entry's own precision\n");
}

TEST_CASE("a server transfer names known GPUs with the fits and replaces the GPU's fractions") {
  // The taker (TestGPU-80GB) first: its transfer on line 9, its fields from line 10; the named
  // GPUs after it.
  const auto named = [](const std::string& name, const std::string& fields) {
    std::string entry = gpu_entry(fields);
    return entry.replace(entry.find("TestGPU-80GB"), 12, name);
  };
  const std::string fitted = named("Fit-80GB",
                                   "  matmul_efficiency { precision: FP8 max_fraction: 0.8 "
                                   "overhead_us: 6 sustained_fraction: 0.5 }");
  const auto taker = [&](const std::string& transfer, const std::string& fields = "") {
    return gpu_entry("  sustained_server_transfer { " + transfer + " }\n" + fields) + fitted +
           named("Bare-80GB", "");
  };
  CHECK(catalog_errors(taker("same_chip: \"Fit-80G\" ratio_of: \"Fit-80GB\" ratio_to: "
                             "\"Fit-80GB\" ratio_precision: FP8")) ==
        "c.textproto:9:31: gpu[0].sustained_server_transfer.same_chip: unknown GPU \"Fit-80G\" "
        "(did you mean \"Fit-80GB\"?)\n");
  CHECK(catalog_errors(taker("ratio_of: \"Fit-80GB\" ratio_to: \"Fit-80GB\"")) ==
        "c.textproto:9:3: gpu[0].sustained_server_transfer.same_chip: is required\n"
        "c.textproto:9:3: gpu[0].sustained_server_transfer.ratio_precision: is required\n");
  // A ratio GPU without the fit, or a same_chip without the entry's precision, is a warning (a
  // user's replacement entry): the steps take the runtime's default.
  CHECK(catalog_errors(taker("same_chip: \"Fit-80GB\" ratio_of: \"Bare-80GB\" ratio_to: "
                             "\"Fit-80GB\" ratio_precision: FP8",
                             "  matmul_efficiency { precision: FP8 max_fraction: 0.8 "
                             "overhead_us: 6 }")) ==
        "c.textproto:9:53: warning: gpu[0].sustained_server_transfer.ratio_of: GPU \"Bare-80GB\" "
        "has no fitted sustained fraction of FP8 steps: this GPU's steps take the runtime's "
        "default\n");
  CHECK(catalog_errors(taker("same_chip: \"Bare-80GB\" ratio_of: \"Fit-80GB\" ratio_to: "
                             "\"Fit-80GB\" ratio_precision: FP8",
                             "  matmul_efficiency { precision: FP8 max_fraction: 0.8 "
                             "overhead_us: 6 }")) ==
        "c.textproto:9:31: warning: gpu[0].sustained_server_transfer.same_chip: GPU \"Bare-80GB\" "
        "has no sustained fraction of FP8 steps: FP8 steps take the runtime's default\n");
  // A chain (here the GPU itself) and fractions of its own beside the transfer are errors.
  CHECK(catalog_errors(taker("same_chip: \"TestGPU-80GB\" ratio_of: \"Fit-80GB\" ratio_to: "
                             "\"Fit-80GB\" ratio_precision: FP8")) ==
        "c.textproto:9:31: gpu[0].sustained_server_transfer.same_chip: GPU \"TestGPU-80GB\" takes "
        "its sustained fractions from another server itself\n");
  CHECK(catalog_errors(taker("same_chip: \"Fit-80GB\" ratio_of: \"Fit-80GB\" ratio_to: "
                             "\"Fit-80GB\" ratio_precision: FP8",
                             "  sustained_compute_fraction: 0.5\n  matmul_efficiency { precision: "
                             "FP8 max_fraction: 0.8 overhead_us: 6 sustained_fraction: 0.5 }")) ==
        "c.textproto:11:71: gpu[0].matmul_efficiency[0].sustained_fraction: is computed from "
        "sustained_server_transfer: give one or the other\n"
        "c.textproto:10:3: gpu[0].sustained_compute_fraction: is computed from "
        "sustained_server_transfer: give one or the other\n");
}

TEST_CASE("a GPU takes attention entries only from a fitted GPU of its architecture and peaks") {
  // A reference unlike it is a warning (a user's replacement of the reference GPU): the GPU keeps
  // its flat fraction.
  // The reference: TestGPU-80GB (lines 1-11) with one fitted entry; the taker from line 12, its
  // attention_efficiency_from on line 21.
  const std::string reference = gpu_entry(
      "  architecture: \"Ampere\"\n  attention_efficiency { pass: FORWARD causal: false "
      "head_dim: 128 max_fraction: 0.6 half_rate_keys: 100 }");
  const auto taker = [](const std::string& from, const std::string& peaks,
                        const std::string& extra = "") {
    std::string text = gpu_entry("  architecture: \"Ampere\"\n  attention_efficiency_from: \"" +
                                 from + "\"" + extra);
    text.replace(text.find("TestGPU-80GB"), 12, "TestGPU-96GB");
    text.replace(text.find("bf16: 312 fp16: 312"), 19, peaks);
    return text;
  };
  CHECK(catalog_errors(reference + taker("TestGPU-80GB", "bf16: 312 fp16: 312")) == "");
  CHECK(catalog_errors(reference + taker("TestGPU-8GB", "bf16: 312 fp16: 312")) ==
        "c.textproto:21:3: gpu[1].attention_efficiency_from: unknown GPU \"TestGPU-8GB\" (did "
        "you mean \"TestGPU-80GB\"?)\n");
  CHECK(catalog_errors(reference + taker("TestGPU-80GB", "bf16: 400 fp16: 400")) ==
        "c.textproto:21:3: warning: gpu[1].attention_efficiency_from: cannot take GPU "
        "\"TestGPU-80GB\"'s: its BF16 and FP16 peaks differ from this GPU's; fused attention runs "
        "at this GPU's flash_attention_fraction\n");
  std::string hopper = reference;
  hopper.replace(hopper.find("Ampere"), 6, "Hopper");
  CHECK(catalog_errors(hopper + taker("TestGPU-80GB", "bf16: 312 fp16: 312")) ==
        "c.textproto:21:3: warning: gpu[1].attention_efficiency_from: cannot take GPU "
        "\"TestGPU-80GB\"'s: its architecture is \"Hopper\", not \"Ampere\"; fused attention runs "
        "at this GPU's flash_attention_fraction\n");
  CHECK(catalog_errors(reference +
                       taker("TestGPU-80GB", "bf16: 312 fp16: 312",
                             "\n  attention_efficiency { pass: FORWARD causal: true head_dim: 128 "
                             "max_fraction: 0.5 half_rate_keys: 100 }")) ==
        "c.textproto:21:3: gpu[1].attention_efficiency_from: this GPU has attention_efficiency "
        "entries: give one or the other\n");
}

// A replacement entry correcting only the FP8 peak keeps the reference's 16-bit curves (it lost
// them all: a float8 CP 8 step at 256k tokens 2.6% slower for an FP8 peak x1.25,
// results/validation.md "Invariant checks of the training step model"), and the reverse.
TEST_CASE("a GPU whose peaks differ in one precision takes the attention entries of the other") {
  const std::string entries =
      "  architecture: \"Hopper\"\n"
      "  attention_efficiency { pass: FORWARD causal: false head_dim: 128 max_fraction: 0.6 "
      "half_rate_keys: 100 }\n"
      "  attention_efficiency { pass: FORWARD causal: false head_dim: 128 max_fraction: 0.5 "
      "half_rate_keys: 100 precision: FP8 }";
  std::string reference = gpu_entry(entries);
  reference.replace(reference.find("fp16: 312"), 9, "fp16: 312 fp8: 624");
  const auto taker_with = [](const std::string& peaks) {
    std::string text = gpu_entry("  architecture: \"Hopper\"\n  attention_efficiency_from: "
                                 "\"TestGPU-80GB\"");
    text.replace(text.find("TestGPU-80GB"), 12, "TestGPU-96GB");
    text.replace(text.find("bf16: 312 fp16: 312"), 19, peaks);
    return text;
  };
  const auto taken = [&](const std::string& peaks, std::string* warnings) {
    TempDir dir;
    dir.write("c.textproto", reference + taker_with(peaks));
    Diagnostics diagnostics;
    const auto catalog = Catalog::load({dir.path()}, &diagnostics);
    *warnings = dir.relative(diagnostics.to_string());
    std::vector<s::Precision> precisions;
    for (const auto& e : catalog->gpus().find("TestGPU-96GB")->value->attention_efficiency()) {
      precisions.push_back(e.precision());
    }
    return precisions;
  };
  std::string warnings;
  CHECK(taken("bf16: 312 fp16: 312 fp8: 624", &warnings) ==
        std::vector<s::Precision>{s::PRECISION_UNSPECIFIED, s::FP8});
  CHECK(warnings == "");
  CHECK(taken("bf16: 312 fp16: 312 fp8: 780", &warnings) ==
        std::vector<s::Precision>{s::PRECISION_UNSPECIFIED});
  CHECK(warnings ==
        "c.textproto:22:3: warning: gpu[1].attention_efficiency_from: takes GPU \"TestGPU-80GB\"'s "
        "16-bit entries only: its FP8 peak differs from this GPU's; FP8 fused attention runs at the "
        "16-bit entries\n");
  CHECK(taken("bf16: 400 fp16: 400 fp8: 624", &warnings) == std::vector<s::Precision>{s::FP8});
  CHECK(taken("bf16: 400 fp16: 400 fp8: 780", &warnings).empty());
}

// gpu_count 0 is a CPU-only instance type: naming a GPU or an interconnect for it is an error.
TEST_CASE("zero GPUs with a GPU named is an error at the GPU fields") {
  CHECK(catalog_errors(gpu_entry() +
                       instance_entry(test_instance_fields("onprem.x", "TestGPU-80GB", "0"))) ==
        "c.textproto:14:3: instance[0].gpu: applies to instances with GPUs (gpu_count is 0)\n"
        "c.textproto:16:3: instance[0].gpu_interconnect: applies to instances with GPUs "
        "(gpu_count is 0)\n");
}

TEST_CASE("a CPU-only instance type loads without GPU fields") {
  CHECK(catalog_errors(instance_entry("  name: \"onprem.cpu\"\n  provider: ONPREM\n  gpu_count: 0\n"
                                      "  vcpus: 32\n  host_memory_gib: 256\n"
                                      "  network { kind: TCP_ETHERNET }")) == "");
}

// 2^31 vCPUs hung `input` (its advice simulates a worker per vCPU); a clock of 1e-300 GHz crashed
// it with an event in the past.
TEST_CASE("an instance's vCPUs and CPU clock are bounded") {
  CHECK(catalog_errors(instance_entry("  name: \"onprem.cpu\"\n  provider: ONPREM\n  gpu_count: 0\n"
                                      "  vcpus: 2147483647\n  host_memory_gib: 256\n"
                                      "  cpu { clock_ghz: 1e-300 }\n"
                                      "  network { kind: TCP_ETHERNET }")) ==
        "c.textproto:5:3: instance[0].vcpus: must be in [1, 4096], got 2147483647\n"
        "c.textproto:7:9: instance[0].cpu.clock_ghz: must be in [0.1, 10], got 1e-300\n");
}

// A cap of 1e-300 MB/s made a storage read take forever (an internal error under `input`): a
// tier's limits are rates (what they give at a volume's size is checked where a scenario names
// one: cli.input_volume_too_small_for_a_rate).
TEST_CASE("a storage tier's limits are rates") {
  const std::string tier =
      "storage {\n  name: \"aliyun.t\"\n  provider: ALIYUN\n  kind: BLOCK_SSD\n"
      "  capacity_min_gib: 20\n  latency_ms: 0.2\n  source { citation: \"c\" }\n";
  CHECK(catalog_errors(tier + "  throughput_mb_per_s { base: 120 per_gib: 0.5 cap: 1e-300 }\n"
                              "  iops { base: -1 per_gib: 1e308 cap: 1000 }\n}\n") ==
        "c.textproto:8:48: storage[0].throughput_mb_per_s.cap: must be in [0.001, 1e+09], got "
        "1e-300\n"
        "c.textproto:9:10: storage[0].iops.base: must be in [0, 1e+09], got -1\n"
        "c.textproto:9:19: storage[0].iops.per_gib: must be in [0, 1e+09], got 1e+308\n");
  CHECK(catalog_errors(tier + "  iops { base: 0 per_gib: 0.5 cap: 1000 }\n}\n") == "");
}

// A tier's price: a currency, a positive capacity rate, and rates for bought performance only
// where the tier sells it (provisioned_max_*), each bounded so that no cost overflows.
TEST_CASE("a storage tier's price is checked at its fields") {
  const std::string tier =
      "storage {\n  name: \"aws.t\"\n  provider: AWS\n  kind: BLOCK_SSD\n"
      "  throughput_mb_per_s { base: 131.072 }\n  source { citation: \"c\" }\n";
  const std::string sold = "  provisioned_max_throughput_mb_per_s: 1048.576\n";
  const auto priced = [&](const std::string& performance, const std::string& price) {
    return tier + performance + "  price {\n" + price + "    source { citation: \"p\" }\n  }\n}\n";
  };
  CHECK(catalog_errors(priced(sold,
                              "    currency: USD per_gib_month: 0.08\n"
                              "    per_provisioned_mib_per_s_month: 0.04\n")) == "");
  CHECK(catalog_errors(priced(sold, "    per_gib_month: -1\n")) ==
        "c.textproto:8:3: storage[0].price.currency: is required\n"
        "c.textproto:9:5: storage[0].price.per_gib_month: must be > 0, got -1\n");
  CHECK(catalog_errors(priced(sold, "    currency: USD per_gib_month: 1e300\n")) ==
        "c.textproto:9:19: storage[0].price.per_gib_month: must be in [0, 1000], got 1e+300\n");
  CHECK(catalog_errors(priced("",
                              "    currency: USD per_gib_month: 0.08\n"
                              "    per_provisioned_iops_month: 0.005\n")) ==
        "c.textproto:9:5: storage[0].price.per_provisioned_iops_month: prices performance the "
        "tier does not sell (it has no provisioned_max_iops)\n");
  CHECK(catalog_errors(priced(sold,
                              "    currency: USD per_gib_month: 0.08\n"
                              "    per_provisioned_mib_per_s_month: -0.04\n")) ==
        "c.textproto:10:5: storage[0].price.per_provisioned_mib_per_s_month: must be >= 0, got "
        "-0.04\n");
}

// A tier's capacity step and throughput per IOPS: positive, the step within the tier's largest
// capacity, the bound per IOPS only beside the iops it bounds by, each with its source.
TEST_CASE("a storage tier's capacity step and throughput and IOPS bounds are checked at their fields") {
  const std::string tier =
      "storage {\n  name: \"aws.t\"\n  provider: AWS\n  kind: PARALLEL_FS\n"
      "  capacity_max_gib: 4800\n  throughput_mb_per_s { per_gib: 0.1 }\n"
      "  source { citation: \"c\" }\n";
  CHECK(catalog_errors(tier + "  capacity_increment { step_gib: 2400 source { citation: \"s\" } "
                              "}\n}\n") == "");
  CHECK(catalog_errors(tier + "  capacity_increment { step_gib: 9600 source { citation: \"s\" } "
                              "}\n}\n") ==
        "c.textproto:8:24: storage[0].capacity_increment.step_gib: must be <= capacity_max_gib "
        "(4800)\n");
  CHECK(catalog_errors(tier + "  capacity_increment { source { citation: \"s\" } }\n}\n") ==
        "c.textproto:8:3: storage[0].capacity_increment.step_gib: is required\n");
  CHECK(catalog_errors(tier + "  capacity_increment { step_gib: 2400 }\n}\n") ==
        "c.textproto:8:3: warning: storage[0].capacity_increment.source: has no source: say where "
        "its numbers come from\n");
  CHECK(catalog_errors(tier + "  throughput_per_iops { max_mb_per_s: 0.262144 source { citation: "
                              "\"s\" } }\n}\n") ==
        "c.textproto:8:3: storage[0].throughput_per_iops: bounds throughput by IOPS, which the "
        "tier does not give (it has no iops)\n");
  CHECK(catalog_errors(tier + "  iops { base: 3000 }\n  throughput_per_iops { max_mb_per_s: 0 "
                              "source { citation: \"s\" } }\n}\n") ==
        "c.textproto:9:25: storage[0].throughput_per_iops.max_mb_per_s: must be > 0, got 0\n");
  CHECK(catalog_errors(tier + "  iops_per_gib { max: 500 source { citation: \"s\" } }\n}\n") ==
        "c.textproto:8:3: storage[0].iops_per_gib: bounds provisioned IOPS, which the tier does "
        "not sell (it has no provisioned_max_iops)\n");
  CHECK(catalog_errors(tier + "  provisioned_max_iops: 16000\n  iops_per_gib { max: -1 source { "
                              "citation: \"s\" } }\n}\n") ==
        "c.textproto:9:18: storage[0].iops_per_gib.max: must be > 0, got -1\n");
}

TEST_CASE("a storage tier's name is not empty, its citation warned of when empty") {
  // "" loaded an entry no scenario can name, beside the one it was meant to replace; an empty
  // citation printed a price's source as "()" (tools/input_audit.py).
  const auto tier = [](const std::string& name, const std::string& citation) {
    return "storage {\n  name: \"" + name + "\"\n  provider: ALIYUN\n  kind: BLOCK_SSD\n"
           "  capacity_min_gib: 20\n  latency_ms: 0.2\n  source { citation: \"" + citation +
           "\" }\n  throughput_mb_per_s { base: 120 }\n  iops { base: 1000 }\n}\n";
  };
  CHECK(catalog_errors(tier("", "c")) == "c.textproto:2:3: storage[0].name: is empty\n");
  CHECK(catalog_errors(tier("aliyun.t", "")) ==
        "c.textproto:7:12: warning: storage[0].source.citation: is empty\n");
}

TEST_CASE("an instance without gpu_count needs a GPU") {
  CHECK(
      catalog_errors(instance_entry("  name: \"onprem.cpu\"\n  provider: ONPREM\n"
                                    "  gpu_interconnect: PCIE_ONLY\n  vcpus: 32\n"
                                    "  host_memory_gib: 256\n  network { kind: TCP_ETHERNET }")) ==
      "c.textproto:1:1: instance[0].gpu: is required\n"
      "c.textproto:1:1: instance[0].gpu_count: is required\n");
}

TEST_CASE("an NVLink domain must be whole nodes of NVSwitch-joined GPUs") {
  CHECK(catalog_errors(gpu_entry() +
                       instance_entry(test_instance_fields() + "\n  nvlink_domain_gpus: 12")) ==
        "c.textproto:21:3: instance[0].nvlink_domain_gpus: 12 GPUs do not divide into nodes of 8 "
        "(gpu_count)\n");
  std::string pcie = test_instance_fields() + "\n  nvlink_domain_gpus: 16";
  pcie.replace(pcie.find("NVSWITCH"), 8, "PCIE_ONLY");
  CHECK(catalog_errors(gpu_entry() + instance_entry(pcie)) ==
        "c.textproto:21:3: instance[0].nvlink_domain_gpus: needs gpu_interconnect NVSWITCH or "
        "HCCS, not PCIE_ONLY\n");
  CHECK(catalog_errors(gpu_entry() +
                       instance_entry(test_instance_fields() + "\n  nvlink_domain_gpus: 20")) ==
        "c.textproto:21:3: instance[0].nvlink_domain_gpus: 20 GPUs do not divide into nodes of 8 "
        "(gpu_count)\n");
  CHECK(catalog_errors(gpu_entry() + instance_entry(test_instance_fields() +
                                                    "\n  nvlink_domain_gpus: 64")) == "");
}

TEST_CASE("CPU sockets split PCIe-joined GPUs evenly and need their link's rate") {
  std::string pcie = test_instance_fields();
  pcie.replace(pcie.find("NVSWITCH"), 8, "PCIE_ONLY");
  const auto errors = [](const std::string& fields, const std::string& sockets) {
    return catalog_errors(gpu_entry() +
                          instance_entry(fields + "\n  cpu_sockets { " + sockets + " }"));
  };
  CHECK(errors(pcie, "count: 2 link_gb_per_s: 64") == "");
  CHECK(errors(pcie, "count: 1") == "");
  CHECK(errors(pcie, "count: 3 link_gb_per_s: 64") ==
        "c.textproto:21:17: instance[0].cpu_sockets.count: 3 sockets do not split 8 GPUs "
        "(gpu_count) evenly\n");
  CHECK(errors(pcie, "count: 2") ==
        "c.textproto:21:3: instance[0].cpu_sockets.link_gb_per_s: is required\n");
  CHECK(errors(pcie, "count: 2 link_gb_per_s: -1") ==
        "c.textproto:21:26: instance[0].cpu_sockets.link_gb_per_s: must be > 0, got -1\n");
  CHECK(errors(pcie, "count: 0") ==
        "c.textproto:21:17: instance[0].cpu_sockets.count: must be >= 1, got 0\n");
  CHECK(errors(test_instance_fields(), "count: 2 link_gb_per_s: 64") ==
        "c.textproto:21:3: instance[0].cpu_sockets: needs gpu_interconnect PCIE_ONLY or "
        "NVLINK_BRIDGE_PAIRS, not NVSWITCH\n");
  CHECK(catalog_errors("link_class { name: \"socket\" efficiency_fraction: 0.4 step_latency_us: 1 "
                       "simple_step_latency_us: 2 " +
                       testing::kSource + " }") ==
        "c.textproto:1:73: link_class[0].simple_step_latency_us: does not apply to the socket "
        "class\n");
}

// Issue 17: the fields of Ascend NPUs (HCCS links) and of priors standing in for fits.
TEST_CASE("efficiency priors must say so and must describe efficiencies the GPU gives") {
  const std::string priors = "  efficiency_source { citation: \"prior\" confidence: UNVERIFIED }";
  CHECK(catalog_errors(gpu_entry(priors)) ==
        "c.textproto:9:3: gpu[0].efficiency_source: describes efficiencies the GPU does not give "
        "(matmul_efficiency, memory_efficiency_fraction, flash_attention_fraction, "
        "attention_efficiency, sustained_compute_fraction)\n");
  CHECK(catalog_errors(gpu_entry("  memory_efficiency_fraction: 0.8\n"
                                 "  efficiency_source { citation: \"prior\" }")) ==
        "c.textproto:10:3: gpu[0].efficiency_source.confidence: is required\n");
  CHECK(catalog_errors(gpu_entry("  memory_efficiency_fraction: 0.8\n" + priors)) == "");
}

TEST_CASE("a link faster than 1e9 GB/s is refused") {
  // NVLink at 1e300 GB/s stopped a run with "internal error: an event scheduled in the past".
  std::string fast = gpu_entry();
  fast.replace(fast.find("per_direction_gb_per_s: 300"), 27, "per_direction_gb_per_s: 1e300");
  CHECK(catalog_errors(fast) ==
        "c.textproto:7:36: gpu[0].nvlink.per_direction_gb_per_s: must be in [0.001, 1e+09], "
        "got 1e+300\n");
}

TEST_CASE("HCCS links are checked, exclude NVLink and are needed by an HCCS instance") {
  CHECK(catalog_errors(gpu_entry("  hccs { links: 7 per_direction_gb_per_s: -196 }")) ==
        "c.textproto:9:3: gpu[0].hccs: a GPU has nvlink or hccs, not both\n"
        "c.textproto:9:19: gpu[0].hccs.per_direction_gb_per_s: must be > 0, got -196\n");
  std::string hccs = test_instance_fields();
  hccs.replace(hccs.find("NVSWITCH"), 8, "HCCS");
  CHECK(catalog_errors(gpu_entry() + instance_entry(hccs)) ==
        "c.textproto:16:3: instance[0].gpu_interconnect: is HCCS but GPU \"TestGPU-80GB\" has no "
        "hccs\n");
  CHECK(catalog_errors("link_class { name: \"hccs\" efficiency_fraction: 0.8 step_latency_us: 1 "
                       "tree_bandwidth_fraction: 0.7 " +
                       testing::kSource + " }") ==
        "c.textproto:1:71: link_class[0].tree_bandwidth_fraction: applies to the network classes "
        "only\n");
  // NCCL's all-to-all share: on the network classes between NVLink domains, on the NVLink ones
  // inside them; in range.
  CHECK(catalog_errors("link_class { name: \"nvlink\" efficiency_fraction: 0.8 step_latency_us: 1 "
                       "all_to_all_bandwidth_fraction: 0 " +
                       testing::kSource + " }") ==
        "c.textproto:1:73: link_class[0].all_to_all_bandwidth_fraction: must be in [0.01, 1], got "
        "0\n");
  CHECK(catalog_errors("link_class { name: \"pcie\" efficiency_fraction: 0.8 step_latency_us: 1 "
                       "all_to_all_bandwidth_fraction: 0.5 " +
                       testing::kSource + " }") ==
        "c.textproto:1:71: link_class[0].all_to_all_bandwidth_fraction: applies to the network "
        "and nvlink classes only\n");
}

TEST_CASE("a serving runtime's overheads, KV re-read and matmul fractions are range-checked") {
  const std::string runtime =
      "serving_runtime {\n  name: \"rt\"\n  iteration_overhead_us: 1\n"
      "  memory_overhead_gib: 1\n  tensor_parallel_memory_gib: 1\n  allreduce_overhead_us: -2\n"
      "  static_prefill_overhead_us: 1e308\n"
      "  gpu { gpu: \"TestGPU-80GB\" compute_fraction: 0.9 memory_fraction: 0.9\n"
      "        layer_overhead_us: 40 kv_reread_fraction: 1.5 fp8_matmul_fraction: 1.2\n"
      "        expert_matmul_fraction: 0 fp8_kv_reread_fraction: 2 }\n}\n";
  CHECK(catalog_errors(gpu_entry() + runtime) ==
        "c.textproto:16:3: serving_runtime[0].allreduce_overhead_us: must be in [0, 1000000], "
        "got -2\n"
        "c.textproto:17:3: serving_runtime[0].static_prefill_overhead_us: must be in [0, "
        "1000000], got 1e+308\n"
        "c.textproto:19:31: serving_runtime[0].gpu[0].kv_reread_fraction: must be in [0, 1], "
        "got 1.5\n"
        "c.textproto:20:35: serving_runtime[0].gpu[0].fp8_kv_reread_fraction: must be in [0, 1], "
        "got 2\n"
        "c.textproto:19:55: serving_runtime[0].gpu[0].fp8_matmul_fraction: must be in [0.01, 1], "
        "got 1.2\n"
        "c.textproto:20:9: serving_runtime[0].gpu[0].expert_matmul_fraction: must be in [0.01, 1], "
        "got 0\n"
        "c.textproto:11:1: warning: serving_runtime[0].source: has no source: say where its "
        "numbers come from\n");
}

// 1e308 us of expert-layer sync, or an iteration overhead of 2^31 us, made a simulation's event
// land in the past (an internal error): a catalog latency is at most a second.
TEST_CASE("a GPU's expert-layer latencies and a matmul overhead are at most a second") {
  CHECK(catalog_errors(gpu_entry("  expert_layer_sync_us_per_expert: 1e308\n"
                                 "  expert_layer_issue_us: 2147483647\n"
                                 "  expert_combine_us_per_source: -1")) ==
        "c.textproto:9:3: gpu[0].expert_layer_sync_us_per_expert: must be in [0, 1000000], "
        "got 1e+308\n"
        "c.textproto:10:3: gpu[0].expert_layer_issue_us: must be in [0, 1000000], "
        "got 2147483647\n"
        "c.textproto:11:3: gpu[0].expert_combine_us_per_source: must be in [0, 1000000], got -1\n");
}

TEST_CASE("a GPU's sync_mma_fraction and a runtime's expert row tile are range-checked") {
  const std::string runtime =
      "serving_runtime {\n  name: \"rt\"\n  iteration_overhead_us: 1\n"
      "  memory_overhead_gib: 1\n  tensor_parallel_memory_gib: 1\n  expert_matmul_row_tile: 0\n"
      "  source { citation: \"c\" }\n}\n";
  CHECK(catalog_errors(gpu_entry("  sync_mma_fraction: 1.5") + runtime) ==
        "c.textproto:9:3: gpu[0].sync_mma_fraction: must be in [0.01, 1], got 1.5\n"
        "c.textproto:16:3: serving_runtime[0].expert_matmul_row_tile: must be >= 1, got 0\n"
        "c.textproto:11:1: serving_runtime[0]: has no fitted GPU (gpu { ... }) to take the "
        "defaults of the GPUs without a fit from\n");
}

TEST_CASE("a serving runtime that extends another names a known base and fits no GPU itself") {
  const std::string base =
      "serving_runtime {\n  name: \"rt\"\n  iteration_overhead_us: 1\n"
      "  memory_overhead_gib: 1\n  tensor_parallel_memory_gib: 1\n"
      "  gpu { gpu: \"TestGPU-80GB\" compute_fraction: 0.9 memory_fraction: 0.9 "
      "layer_overhead_us: 40 }\n"
      "  source { citation: \"c\" }\n}\n";
  CHECK(catalog_errors(gpu_entry() + base +
                       "serving_runtime { name: \"later\" extends: \"rt\" "
                       "grouped_attention_max_query_heads_per_kv: 32 source { citation: \"c\" } }\n")
            .empty());
  CHECK(catalog_errors(gpu_entry() + base +
                       "serving_runtime { name: \"later\" extends: \"tr\" "
                       "grouped_attention_max_query_heads_per_kv: 0 source { citation: \"c\" }\n"
                       "  gpu { gpu: \"TestGPU-80GB\" compute_fraction: 0.9 } }\n") ==
        "c.textproto:19:47: serving_runtime[1].grouped_attention_max_query_heads_per_kv: must be "
        ">= 1, got 0\n"
        "c.textproto:20:3: serving_runtime[1].gpu: is taken from the runtime it extends: fit the "
        "base instead\n"
        "c.textproto:19:33: serving_runtime[1].extends: unknown serving runtime \"tr\" (did you "
        "mean \"rt\"?)\n");
}

TEST_CASE("a serving runtime's capacity policy, when given, is a policy") {
  CHECK(catalog_errors(gpu_entry() +
                       "serving_runtime { name: \"rt\" extends: \"base\"\n"
                       "  capacity_policy: CAPACITY_POLICY_UNSPECIFIED source { citation: \"c\" } }\n")
            .find("c.textproto:12:3: serving_runtime[0].capacity_policy: must be set to a value "
                  "other than CAPACITY_POLICY_UNSPECIFIED\n") != std::string::npos);
}

TEST_CASE("a serving runtime's grouped kernel takes one group size or a limit, not both") {
  CHECK(catalog_errors(gpu_entry() +
                       "serving_runtime { name: \"rt\" grouped_attention_query_heads_per_kv: 8\n"
                       "  grouped_attention_max_query_heads_per_kv: 32 }\n") ==
        "c.textproto:12:3: serving_runtime[0].grouped_attention_max_query_heads_per_kv: cannot be "
        "given together with \"grouped_attention_query_heads_per_kv\": give one or the other\n");
}

TEST_CASE("a serving runtime's default fits are computed, never written") {
  // The GPU entry takes lines 1-10, the runtime starts on line 11 (`extra` from line 17).
  const auto runtime = [](const std::string& extra) {
    return gpu_entry() +
           "serving_runtime {\n  name: \"rt\"\n  iteration_overhead_us: 1\n"
           "  memory_overhead_gib: 1\n  tensor_parallel_memory_gib: 1\n"
           "  source { citation: \"c\" }\n" +
           extra + "\n}\n";
  };
  const std::string fitted =
      "  gpu { gpu: \"TestGPU-80GB\" compute_fraction: 0.9 memory_fraction: 0.9 "
      "layer_overhead_us: 40 }\n";
  CHECK(catalog_errors(runtime(fitted)) == "");
  CHECK(catalog_errors(runtime(fitted +
                               "  default_fit { form_factor: SXM compute_fraction: 0.934 "
                               "memory_fraction: 0.882 layer_overhead_us: 47 }")) ==
        "c.textproto:18:3: serving_runtime[0].default_fit[0]: is computed at load, per form "
        "factor, from the fitted GPUs' fits (gpu): remove it (fit a GPU in gpu instead)\n");
  // A GPU's fit takes the GPU's form factor.
  CHECK(catalog_errors(runtime(
            "  gpu { gpu: \"TestGPU-80GB\" form_factor: PCIE compute_fraction: 0.9 "
            "memory_fraction: 0.9 layer_overhead_us: 40 }")) ==
        "c.textproto:17:29: serving_runtime[0].gpu[0].form_factor: is taken from the GPU: remove "
        "it\n");
}

TEST_CASE("an unknown GPU reference suggests the closest name") {
  CHECK(catalog_errors(gpu_entry() +
                       instance_entry(test_instance_fields("onprem.x", "TestGPU-80G"))) ==
        "c.textproto:14:3: instance[0].gpu: unknown GPU \"TestGPU-80G\" (did you mean "
        "\"TestGPU-80GB\"?)\n");
}

TEST_CASE("a missing required field is reported at its message") {
  CHECK(catalog_errors("gpu {\n  name: \"g\"\n  form_factor: PCIE\n  memory_gib: 16\n" +
                       testing::kSource + "\n  peak_tflops { fp16: 65 }\n}\n") ==
        "c.textproto:1:1: gpu[0].memory_bandwidth_gb_per_s: is required\n");
}

TEST_CASE("an NVIDIA GPU needs a positive SM count, another vendor's may leave it out") {
  CHECK(catalog_errors(gpu_entry("  vendor: \"NVIDIA\"")) ==
        "c.textproto:1:1: gpu[0].streaming_multiprocessors: is required\n");
  CHECK(catalog_errors(gpu_entry("  vendor: \"NVIDIA\" streaming_multiprocessors: 0")) ==
        "c.textproto:9:20: gpu[0].streaming_multiprocessors: must be > 0, got 0\n");
  CHECK(catalog_errors(gpu_entry("  vendor: \"NVIDIA\" streaming_multiprocessors: 132")) == "");
  CHECK(catalog_errors(gpu_entry("  vendor: \"Huawei\"")) == "");
}

// 2^31 SMs, links or lanes, a TDP of 1e308 W or a measured matmul of 1e-300 TFLOP/s loaded as a
// GPU: each is bounded a few times beyond the largest built.
TEST_CASE("a GPU's SMs, links, lanes, TDP and measured matmul are physically bounded") {
  const auto with_links = [](std::string text, const std::string& links) {
    return text.replace(text.find("links: 12"), 9, "links: " + links);
  };
  CHECK(catalog_errors(
            with_links(gpu_entry("  streaming_multiprocessors: 2147483647 tdp_w: 1e308\n"
                                 "  pcie { generation: 5 lanes: 64 per_direction_gb_per_s: 64 }\n"
                                 "  measured_matmul { bf16_tflops: 1e-300 }"),
                       "100")) ==
        "c.textproto:9:41: gpu[0].tdp_w: must be in [0, 5000], got 1e+308\n"
        "c.textproto:9:3: gpu[0].streaming_multiprocessors: must be in [1, 1024], got "
        "2147483647\n"
        "c.textproto:7:26: gpu[0].nvlink.links: must be in [1, 72], got 100\n"
        "c.textproto:10:24: gpu[0].pcie.lanes: must be in [1, 32], got 64\n"
        "c.textproto:11:21: gpu[0].measured_matmul.bf16_tflops: must be in [0.001, 1e+09], got "
        "1e-300\n");
  CHECK(catalog_errors(
            with_links(gpu_entry("  streaming_multiprocessors: 1024 tdp_w: 5000\n"
                                 "  pcie { generation: 5 lanes: 32 per_direction_gb_per_s: 64 }"),
                       "72")) == "");
}

TEST_CASE("an UNSPECIFIED enum value counts as missing") {
  std::string text = gpu_entry();
  text.replace(text.find("form_factor: SXM"), 16, "form_factor: FORM_FACTOR_UNSPECIFIED");
  CHECK(catalog_errors(text) ==
        "c.textproto:3:3: gpu[0].form_factor: must be set to a value other "
        "than FORM_FACTOR_UNSPECIFIED\n");
}

TEST_CASE("the same name twice in one directory is an error naming the first place") {
  CHECK(catalog_errors(gpu_entry() + gpu_entry()) ==
        "c.textproto:11:1: gpu[1]: duplicate name \"TestGPU-80GB\", first defined at "
        "c.textproto:1:1\n");
}

TEST_CASE("an entry in a later directory replaces one of an earlier directory, with a warning") {
  TempDir shipped, user;
  shipped.write("a.textproto", gpu_entry());
  user.write("b.textproto", gpu_entry("tdp_w: 500"));
  Diagnostics diagnostics;
  auto catalog = Catalog::load({shipped.path(), user.path()}, &diagnostics);
  CHECK_FALSE(diagnostics.has_errors());
  REQUIRE(diagnostics.all().size() == 1);
  CHECK(diagnostics.all()[0].message.find("replaces the entry at " + shipped.path()) == 13 + 2);
  CHECK(catalog->gpus().find("TestGPU-80GB")->value->tdp_w() == 500);
}

TEST_CASE("an instance name must carry its provider's prefix") {
  CHECK(catalog_errors(gpu_entry() + instance_entry(test_instance_fields("aws.test8"))) ==
        "c.textproto:12:3: instance[0].name: must start with \"onprem.\" for provider ONPREM\n");
}

TEST_CASE("a measured matmul above the GPU's peak is a transcription error") {
  CHECK(catalog_errors(gpu_entry("measured_matmul { bf16_tflops: 400 }")) ==
        "c.textproto:9:19: gpu[0].measured_matmul.bf16_tflops: measured 400 exceeds the peak of "
        "312\n");
}

TEST_CASE("a spot range whose maximum is below its minimum is rejected") {
  CHECK(catalog_errors(gpu_entry() + instance_entry(test_instance_fields() +
                                                    "\n  price { billing: SPOT currency: USD "
                                                    "per_hour: 9 per_hour_max: 5 }")) ==
        "c.textproto:21:51: instance[0].price[1].per_hour_max: must be >= per_hour (9)\n");
}

TEST_CASE("a price beyond a million an hour is refused, not priced at inf") {
  // 1e308 an hour x nodes x hours overflowed: every cost printed inf.
  CHECK(catalog_errors(gpu_entry() + instance_entry(test_instance_fields() +
                                                    "\n  price { billing: SPOT currency: USD "
                                                    "per_hour: 1e308 }")) ==
        "c.textproto:21:39: instance[0].price[1].per_hour: must be in [0, 1000000], got 1e+308\n");
  CHECK(catalog_errors(gpu_entry() + instance_entry(test_instance_fields() +
                                                    "\n  price { billing: SPOT currency: USD "
                                                    "per_hour: 9 per_hour_max: inf }")) ==
        "c.textproto:21:51: instance[0].price[1].per_hour_max: must be a finite number > 0, got inf\n");
}

TEST_CASE("two prices of one billing mode in one region are refused but in two regions allowed") {
  // The first was used silently; a scenario now chooses among regions (prices.region).
  CHECK(catalog_errors(gpu_entry() + instance_entry(test_instance_fields() +
                                                    "\n  price { billing: SPOT currency: USD "
                                                    "per_hour: 9 region: \"x\" }"
                                                    "\n  price { billing: SPOT currency: USD "
                                                    "per_hour: 8 region: \"x\" }")) ==
        "c.textproto:22:3: instance[0].price[2]: a second SPOT price for region \"x\": give each "
        "price of a billing mode its own region\n");
  CHECK(catalog_errors(gpu_entry() + instance_entry(test_instance_fields() +
                                                    "\n  price { billing: SPOT currency: USD "
                                                    "per_hour: 9 }"
                                                    "\n  price { billing: SPOT currency: CNY "
                                                    "per_hour: 60 }")) ==
        "c.textproto:22:3: instance[0].price[2]: a second SPOT price without a region: give each "
        "price of a billing mode its own region\n");
  CHECK(catalog_errors(gpu_entry() + instance_entry(test_instance_fields() +
                                                    "\n  price { billing: SPOT currency: USD "
                                                    "per_hour: 9 region: \"x\" }"
                                                    "\n  price { billing: SPOT currency: USD "
                                                    "per_hour: 8 region: \"y\" }"))
            .empty());
}

TEST_CASE("a price needs exactly one of per_hour or discount_fraction") {
  CHECK(catalog_errors(gpu_entry() + instance_entry(test_instance_fields() +
                                                    "\n  price { billing: SPOT currency: USD }")) ==
        "c.textproto:21:3: instance[0].price[1]: give exactly one of per_hour or "
        "discount_fraction\n");
}

TEST_CASE("GQA heads that do not divide the attention heads are rejected") {
  CHECK(catalog_errors(transformer_model("m", "num_kv_heads: 5")) ==
        "c.textproto:7:5: model[0].transformer.num_kv_heads: must divide num_attention_heads "
        "(32), got 5\n");
}

TEST_CASE("a shape that does not give the published parameter count is rejected") {
  // Llama-2-7B's shape gives 6,738,415,616; 6,700,000,000 claimed with 4 digits is too far.
  CHECK(catalog_errors(transformer_model("m", "",
                                         "published_parameter_count: 6700000000 "
                                         "published_significant_digits: 4")) ==
        "c.textproto:9:3: model[0].published_parameter_count: the shape gives 6738415616 "
        "parameters, 0.573% off the published 6700000000\n");
  CHECK(catalog_errors(transformer_model("m", "", "published_parameter_count: 6738415616")) == "");
  CHECK(catalog_errors(transformer_model("m", "",
                                         "published_parameter_count: 6700000000 "
                                         "published_significant_digits: 2")) == "");
}

TEST_CASE("a hybrid pattern must have a known letter per layer and the blocks it names") {
  const std::string mamba = " mamba { num_heads: 64 head_dim: 64 state_dim: 128 num_groups: 8 }";
  const std::string letters = std::string(16, 'M') + std::string(15, '*');
  CHECK(
      catalog_errors(transformer_model("m", "hybrid_layer_pattern: \"" + letters + "\"" + mamba)) ==
      "c.textproto:7:5: model[0].transformer.hybrid_layer_pattern: has 31 letters, one a "
      "layer: num_layers is 32\n");
  CHECK(catalog_errors(
            transformer_model("m", "hybrid_layer_pattern: \"" + letters + "X\"" + mamba)) ==
        "c.textproto:7:5: model[0].transformer.hybrid_layer_pattern: letter 32 is 'X': one of 'M' "
        "(Mamba), '*' (attention), '-' (MLP), 'E' (experts)\n");
  CHECK(catalog_errors(transformer_model("m", "hybrid_layer_pattern: \"" + letters + "E\"")) ==
        "c.textproto:7:5: model[0].transformer.hybrid_layer_pattern: has 'M' layers: needs mamba\n"
        "c.textproto:7:5: model[0].transformer.hybrid_layer_pattern: has 'E' layers: needs moe\n");
  CHECK(catalog_errors(transformer_model("m", "hybrid_layer_pattern: \"" + letters +
                                                  "-\" mamba { num_heads: 64 head_dim: 64 "
                                                  "state_dim: 128 num_groups: 6 }")) ==
        "c.textproto:7:112: model[0].transformer.mamba.num_groups: must divide num_heads (64), "
        "got 6\n");
  CHECK(catalog_errors(transformer_model("m", mamba)) ==
        "c.textproto:7:6: model[0].transformer.mamba: applies with hybrid_layer_pattern\n");
  CHECK(catalog_errors(
            transformer_model("m", "hybrid_layer_pattern: \"" + letters + "-\"" + mamba)) == "");
}

TEST_CASE("a hybrid pattern places its experts itself: no layer interval") {
  const std::string mamba = " mamba { num_heads: 64 head_dim: 64 state_dim: 128 num_groups: 8 }";
  const std::string letters = std::string(16, 'M') + std::string(15, '*') + "E";
  CHECK(catalog_errors(transformer_model(
            "m", "hybrid_layer_pattern: \"" + letters + "\"" + mamba +
                     " moe { num_experts: 8 experts_per_token: 1 layer_interval: 2 }")) ==
        "c.textproto:7:170: model[0].transformer.moe.layer_interval: does not apply with "
        "hybrid_layer_pattern\n");
}

TEST_CASE("a hybrid model's multi-token prediction needs a pattern of known, described blocks") {
  const std::string mamba = " mamba { num_heads: 64 head_dim: 64 state_dim: 128 num_groups: 8 }";
  const std::string hybrid =
      " hybrid_layer_pattern: \"" + std::string(16, 'M') + std::string(16, '*') + "\"" + mamba;
  CHECK(catalog_errors(transformer_model("m", "multi_token_prediction_layers: 2" + hybrid)) ==
        "c.textproto:7:5: model[0].transformer.multi_token_prediction_layers: needs "
        "multi_token_prediction_pattern with hybrid_layer_pattern (the blocks of each module, "
        "e.g. \"*E\")\n");
  CHECK(catalog_errors(transformer_model(
            "m",
            "multi_token_prediction_pattern: \"*X\" multi_token_prediction_layers: 2" + hybrid)) ==
        "c.textproto:7:5: model[0].transformer.multi_token_prediction_pattern: letter 2 is 'X': "
        "one of 'M' (Mamba), '*' (attention), '-' (MLP), 'E' (experts)\n");
  CHECK(catalog_errors(transformer_model(
            "m",
            "multi_token_prediction_pattern: \"*E\" multi_token_prediction_layers: 2" + hybrid)) ==
        "c.textproto:7:5: model[0].transformer.multi_token_prediction_pattern: has 'E' layers: "
        "needs moe\n");
  CHECK(catalog_errors(transformer_model("m", "multi_token_prediction_pattern: \"*\"" + hybrid)) ==
        "c.textproto:7:5: model[0].transformer.multi_token_prediction_pattern: applies with "
        "multi_token_prediction_layers > 0\n");
  CHECK(catalog_errors(transformer_model(
            "m", "multi_token_prediction_pattern: \"*\" multi_token_prediction_layers: 1")) ==
        "c.textproto:7:5: model[0].transformer.multi_token_prediction_pattern: applies with "
        "hybrid_layer_pattern (a non-hybrid module is one layer of the last kind)\n");
  CHECK(catalog_errors(transformer_model("m", "multi_token_prediction_shared: true")) ==
        "c.textproto:7:5: model[0].transformer.multi_token_prediction_shared: applies with "
        "multi_token_prediction_layers > 0\n");
  CHECK(catalog_errors(transformer_model(
            "m",
            "multi_token_prediction_pattern: \"*-M\" multi_token_prediction_layers: 2 "
            "multi_token_prediction_shared: true multi_token_prediction_sixteen_bit: true" +
                hybrid)) == "");
}

TEST_CASE("a mixture of experts routing more experts per token than it has is rejected") {
  CHECK(catalog_errors(transformer_model("m", "moe { num_experts: 8 experts_per_token: 9 }")) ==
        "c.textproto:7:26: model[0].transformer.moe.experts_per_token: must not exceed "
        "num_experts (8)\n");
}

TEST_CASE("MoE widths, shared experts and dense first layers are checked") {
  CHECK(catalog_errors(
            transformer_model("m",
                              "moe { num_experts: 8 experts_per_token: 2 expert_ffn_hidden_size: 0 "
                              "num_shared_experts: -1 first_dense_layers: 32 }")) ==
        "c.textproto:7:47: model[0].transformer.moe.expert_ffn_hidden_size: must be >= 1, got 0\n"
        "c.textproto:7:73: model[0].transformer.moe.num_shared_experts: must be >= 0, got -1\n"
        "c.textproto:7:96: model[0].transformer.moe.first_dense_layers: must be less than "
        "num_layers (32): no layer has experts\n");
}

TEST_CASE("latent attention needs its ranks and excludes GQA head fields") {
  CHECK(catalog_errors(transformer_model(
            "m",
            "num_kv_heads: 8\n    latent_attention { kv_lora_rank: 512 qk_rope_head_dim: 0 }")) ==
        "c.textproto:8:5: model[0].transformer.latent_attention.qk_nope_head_dim: is required\n"
        "c.textproto:8:42: model[0].transformer.latent_attention.qk_rope_head_dim: must be >= 1, "
        "got 0\n"
        "c.textproto:8:5: model[0].transformer.latent_attention.v_head_dim: is required\n"
        "c.textproto:7:5: model[0].transformer.num_kv_heads: does not apply with latent_attention "
        "(its own head dimensions)\n");
}

TEST_CASE("QKV biases are part of linear_bias: one of the two") {
  CHECK(catalog_errors(transformer_model("m", "linear_bias: true qkv_bias: true")) ==
        "c.textproto:7:23: model[0].transformer.qkv_bias: is part of linear_bias (every "
        "projection's bias): set one\n");
}

TEST_CASE("a sliding window needs its width, and a period of at least 2 where it has one") {
  CHECK(catalog_errors(transformer_model("m", "sliding_window { window_tokens: 0 }")) ==
        "c.textproto:7:22: model[0].transformer.sliding_window.window_tokens: must be >= 1, "
        "got 0\n");
  CHECK(catalog_errors(transformer_model(
            "m", "sliding_window { window_tokens: 128 full_attention_every: 1 }")) ==
        "c.textproto:7:41: model[0].transformer.sliding_window.full_attention_every: must be >= 2, "
        "got 1\n");
  // Without a period every layer attends within the window (Mistral 7B).
  CHECK(catalog_errors(transformer_model("m", "sliding_window { window_tokens: 4096 }")) == "");
}

TEST_CASE("a chunked window must fit in the model's longest sequence") {
  // Llama 4's chunks of 8192 in a model of 4096 positions at most.
  CHECK(catalog_errors(transformer_model(
            "m", "sliding_window { window_tokens: 4096 full_attention_every: 4 chunked: true }")) ==
        "");
  CHECK(catalog_errors(transformer_model(
            "m", "sliding_window { window_tokens: 8192 full_attention_every: 4 chunked: true }")) ==
        "c.textproto:7:22: model[0].transformer.sliding_window.window_tokens: a chunk must not "
        "exceed max_sequence_length (4096)\n");
}

TEST_CASE("a window and its full-attention period are within the sequence and the layers") {
  // 2^31 - 1 of either was taken, every layer then attending fully (tools/input_audit.py).
  CHECK(catalog_errors(transformer_model("m", "sliding_window { window_tokens: 8192 }")) ==
        "c.textproto:7:22: model[0].transformer.sliding_window.window_tokens: a window must not "
        "exceed max_sequence_length (4096)\n");
  CHECK(catalog_errors(transformer_model(
            "m", "sliding_window { window_tokens: 128 full_attention_every: 33 }")) ==
        "c.textproto:7:41: model[0].transformer.sliding_window.full_attention_every: 33 is more "
        "than the model's 32 layers: no layer would attend fully (omit it for that)\n");
  CHECK(catalog_errors(transformer_model(
            "m", "sliding_window { window_tokens: 128 full_attention_every: 32 }")) == "");
}

TEST_CASE("a Mamba chunk is at most the longest sequence") {
  // 2^31 - 1 was taken, the scan then one chunk (tools/input_audit.py).
  const std::string letters = std::string(16, 'M') + std::string(16, '*');
  const auto mamba = [&](const std::string& chunk) {
    return transformer_model("m", "hybrid_layer_pattern: \"" + letters +
                                      "\" mamba { num_heads: 64 head_dim: 64 state_dim: 128 "
                                      "num_groups: 8 chunk_size: " + chunk + " }");
  };
  CHECK(catalog_errors(mamba("4096")) == "");
  CHECK(catalog_errors(mamba("2147483647")) ==
        "c.textproto:7:126: model[0].transformer.mamba.chunk_size: 2147483647 is more than "
        "max_sequence_length (4096) tokens\n");
}

TEST_CASE("a sliding window is causal: decoders only") {
  std::string encoder =
      transformer_model("m", "sliding_window { window_tokens: 128 full_attention_every: 2 }");
  encoder.replace(encoder.find("DECODER"), 7, "ENCODER");
  CHECK(catalog_errors(encoder) ==
        "c.textproto:7:5: model[0].transformer.sliding_window: applies to DECODER models only\n");
}

TEST_CASE("experts every n-th layer need an interval of 1 to num_layers") {
  CHECK(catalog_errors(transformer_model(
            "m", "moe { num_experts: 8 experts_per_token: 1 layer_interval: 32 }")) == "");
  CHECK(catalog_errors(transformer_model(
            "m", "moe { num_experts: 8 experts_per_token: 1 layer_interval: 33 }")) ==
        "c.textproto:7:47: model[0].transformer.moe.layer_interval: must not exceed num_layers "
        "(32): no layer has experts\n");
  CHECK(catalog_errors(transformer_model(
            "m", "moe { num_experts: 8 experts_per_token: 1 layer_interval: 0 }")) ==
        "c.textproto:7:47: model[0].transformer.moe.layer_interval: must be >= 1, got 0\n");
  // With dense first layers: layer 31 (32 a multiple of 4) has experts after 31 dense ones, none
  // after 31 with an interval of 3 (the last multiple, 30, is layer 29).
  CHECK(catalog_errors(
            transformer_model("m",
                              "moe { num_experts: 8 experts_per_token: 1 first_dense_layers: 31 "
                              "layer_interval: 4 }")) == "");
  CHECK(catalog_errors(
            transformer_model("m",
                              "moe { num_experts: 8 experts_per_token: 1 first_dense_layers: 30 "
                              "layer_interval: 3 }")) ==
        "c.textproto:7:70: model[0].transformer.moe.layer_interval: leaves no layer with experts "
        "after the 30 first_dense_layers of 32\n");
}

TEST_CASE("an activation clamp must be positive and needs a gated activation") {
  CHECK(catalog_errors(transformer_model("m", "activation_clamp: 7.0")) == "");
  CHECK(catalog_errors(transformer_model("m", "activation_clamp: 0")) ==
        "c.textproto:7:5: model[0].transformer.activation_clamp: must be > 0, got 0\n");
  std::string gelu = transformer_model("m", "activation_clamp: 7.0");
  gelu.replace(gelu.find("SWIGLU"), 6, "GELU");
  CHECK(catalog_errors(gelu) ==
        "c.textproto:7:5: model[0].transformer.activation_clamp: applies to gated activations "
        "(SWIGLU, GEGLU) only\n");
}

TEST_CASE("a GLU gate's sigmoid scale must be positive and needs SWIGLU") {
  CHECK(catalog_errors(transformer_model("m", "glu_gate_sigmoid_scale: 1.702")) == "");
  CHECK(catalog_errors(transformer_model("m", "glu_gate_sigmoid_scale: -1")) ==
        "c.textproto:7:5: model[0].transformer.glu_gate_sigmoid_scale: must be > 0, got -1\n");
  std::string geglu = transformer_model("m", "glu_gate_sigmoid_scale: 1.702");
  geglu.replace(geglu.find("SWIGLU"), 6, "GEGLU");
  CHECK(catalog_errors(geglu) ==
        "c.textproto:7:5: model[0].transformer.glu_gate_sigmoid_scale: applies to SWIGLU only\n");
}

TEST_CASE("a YaRN factor must be finite, exceed 1 and needs a rotary embedding of query and key heads") {
  CHECK(catalog_errors(transformer_model("m", "yarn_rotary_factor: 32")) == "");
  CHECK(catalog_errors(transformer_model("m", "yarn_rotary_factor: 1")) ==
        "c.textproto:7:5: model[0].transformer.yarn_rotary_factor: must be finite and > 1 (a "
        "factor of 1 is no YaRN scaling), got 1\n");
  // nan compares false with 1: it passed the check before.
  CHECK(catalog_errors(transformer_model("m", "yarn_rotary_factor: nan")) ==
        "c.textproto:7:5: model[0].transformer.yarn_rotary_factor: must be finite and > 1 (a "
        "factor of 1 is no YaRN scaling), got nan\n");
  std::string learned = transformer_model("m", "yarn_rotary_factor: 32");
  learned.replace(learned.find("ROTARY"), 6, "LEARNED");
  CHECK(catalog_errors(learned) ==
        "c.textproto:7:5: model[0].transformer.yarn_rotary_factor: applies with "
        "position_embedding ROTARY only\n");
  // Only the query and key heads of multi-head / grouped-query attention take the eager rotation.
  CHECK(catalog_errors(
            transformer_model("m",
                              "yarn_rotary_factor: 40\n    latent_attention { kv_lora_rank: 512 "
                              "qk_nope_head_dim: 128 qk_rope_head_dim: 64 v_head_dim: 128 }")) ==
        "c.textproto:7:5: model[0].transformer.yarn_rotary_factor: is not simulated with "
        "latent_attention\n");
}

// DeepSeek V4's attention on the 32-layer test shape (lines 7 to 11): `ratios` one a layer, then
// `rest` on line 10; `o_groups` and `rope` on line 8.
std::string compressed_attention(const std::string& ratios, const std::string& rest = "",
                                 const std::string& o_groups = "4",
                                 const std::string& rope = "64") {
  return "compressed_sparse_attention {\n      q_lora_rank: 1024 head_dim: 128 qk_rope_head_dim: " +
         rope + " o_lora_rank: 512 o_groups: " + o_groups +
         " window_tokens: 128\n      compress_ratios: [" + ratios + "]\n      " + rest +
         "\n    }";
}

// 32 ratios: two window-only layers, then 4 and 128 alternating.
std::string ratios32(const std::string& last = "128") {
  std::string out = "0, 0";
  for (int i = 2; i < 31; ++i) out += i % 2 == 0 ? ", 4" : ", 128";
  return out + ", " + last;
}

const char* const kIndexer = "index_n_heads: 8 index_head_dim: 64 index_topk: 256 ";

TEST_CASE("compressed attention's window and top-k are within the sequence, its modules the "
          "layers") {
  // 2^31 - 1 of the window or the top-k was taken as the whole sequence, and as many
  // prediction modules aborted the step (tools/input_audit.py).
  std::string wide = compressed_attention(ratios32(), "index_n_heads: 8 index_head_dim: 64 "
                                                      "index_topk: 5000 ");
  wide.replace(wide.find("window_tokens: 128"), 18, "window_tokens: 4097");
  CHECK(catalog_errors(transformer_model("m", wide)) ==
        "c.textproto:8:89: model[0].transformer.compressed_sparse_attention.window_tokens: 4097 "
        "is more than max_sequence_length (4096) tokens\n"
        "c.textproto:10:43: model[0].transformer.compressed_sparse_attention.index_topk: 5000 is "
        "more than max_sequence_length (4096) tokens\n");
  CHECK(catalog_errors(transformer_model(
            "m", compressed_attention(ratios32(), kIndexer) +
                     " multi_token_prediction_layers: 33")) ==
        "c.textproto:11:7: model[0].transformer.multi_token_prediction_layers: 33 modules are "
        "more than the 32 layers of the model (each module is one layer)\n");
}

TEST_CASE("compressed sparse attention is checked field by field") {
  CHECK(catalog_errors(transformer_model("m", compressed_attention(ratios32(), kIndexer) +
                                                  " hyper_connections { streams: 4 "
                                                  "sinkhorn_iterations: 20 }")) == "");
  // One ratio a layer, each of those Megatron-Core builds.
  CHECK(catalog_errors(transformer_model("m", compressed_attention("0, 4", kIndexer))) ==
        "c.textproto:9:7: model[0].transformer.compressed_sparse_attention.compress_ratios: has 2 "
        "entries, one a layer: num_layers is 32\n");
  CHECK(catalog_errors(transformer_model("m", compressed_attention(ratios32("8"), kIndexer))) ==
        "c.textproto:9:146: model[0].transformer.compressed_sparse_attention.compress_ratios[31]: "
        "is 8: 0 (window only), 4 (indexed compressed keys) or 128 (all compressed keys)\n");
  // The indexer with ratio-4 layers, and only then.
  CHECK(catalog_errors(transformer_model("m", compressed_attention(ratios32()))) ==
        "c.textproto:7:5: model[0].transformer.compressed_sparse_attention.index_n_heads: is "
        "required\n"
        "c.textproto:7:5: model[0].transformer.compressed_sparse_attention.index_head_dim: is "
        "required\n"
        "c.textproto:7:5: model[0].transformer.compressed_sparse_attention.index_topk: is "
        "required\n");
  std::string window_only = "0";
  for (int i = 1; i < 32; ++i) window_only += ", 128";
  CHECK(catalog_errors(
            transformer_model("m", compressed_attention(window_only, "index_topk: 8 "))) ==
        "c.textproto:10:7: model[0].transformer.compressed_sparse_attention.index_topk: applies to "
        "the indexer of ratio-4 layers, and compress_ratios has none\n");
  // Its shape: groups of heads, a rotary part inside the head.
  CHECK(catalog_errors(transformer_model("m", compressed_attention(ratios32(), kIndexer, "5"))) ==
        "c.textproto:8:77: model[0].transformer.compressed_sparse_attention.o_groups: must divide "
        "num_attention_heads (32), got 5\n");
  CHECK(catalog_errors(
            transformer_model("m", compressed_attention(ratios32(), kIndexer, "4", "128"))) ==
        "c.textproto:8:39: model[0].transformer.compressed_sparse_attention.qk_rope_head_dim: must "
        "be less than head_dim (128), got 128\n");
  // No other attention's fields beside it.
  CHECK(catalog_errors(transformer_model(
            "m", "num_kv_heads: 8 " + compressed_attention(ratios32(), kIndexer))) ==
        "c.textproto:7:5: model[0].transformer.num_kv_heads: does not apply with "
        "compressed_sparse_attention\n");
}

TEST_CASE("hyper-connections and hash-routed layers are checked") {
  CHECK(catalog_errors(transformer_model(
            "m", "hyper_connections { streams: 1 sinkhorn_iterations: 0 }")) ==
        "c.textproto:7:25: model[0].transformer.hyper_connections.streams: must be >= 2, got 1\n"
        "c.textproto:7:36: model[0].transformer.hyper_connections.sinkhorn_iterations: must be "
        ">= 1, got 0\n");
  CHECK(catalog_errors(transformer_model(
            "m", "moe { num_experts: 8 experts_per_token: 2 hash_routed_layers: 3 }")) == "");
  CHECK(catalog_errors(transformer_model("m",
                                         "moe { num_experts: 8 experts_per_token: 2 "
                                         "first_dense_layers: 1 hash_routed_layers: 3 }")) ==
        "c.textproto:7:69: model[0].transformer.moe.hash_routed_layers: routes the first layers' "
        "experts: needs every layer with experts (first_dense_layers 0, layer_interval 1)\n");
  CHECK(catalog_errors(transformer_model(
            "m", "moe { num_experts: 8 experts_per_token: 2 hash_routed_layers: 33 }")) ==
        "c.textproto:7:47: model[0].transformer.moe.hash_routed_layers: must not exceed "
        "num_layers (32)\n");
}

TEST_CASE("a published active count the shape does not give is rejected") {
  // Llama-2-7B is dense: its active count is its total, 6,738,415,616 (6,607,343,616 without
  // the 32000 x 4096 embedding table).
  CHECK(catalog_errors(transformer_model("m", "",
                                         "published_active_parameter_count: 6607343616 "
                                         "published_active_excludes_embedding: true")) == "");
  CHECK(catalog_errors(transformer_model("m", "", "published_active_excludes_embedding: true")) ==
        "c.textproto:9:3: model[0].published_active_excludes_embedding: applies with "
        "published_active_parameter_count, which is not given\n");
  CHECK(
      catalog_errors(transformer_model("m", "", "published_active_parameter_count: 6607343616")) ==
      "c.textproto:9:3: model[0].published_active_parameter_count: the shape gives 6738415616 "
      "parameters, 1.984% off the published 6607343616\n");
}

TEST_CASE("a GPU's host link has a rate and is shared by at most a server's GPUs") {
  // 2^31 - 1 GPUs on the link left each a rate no offload copy ended at, and aborted the step
  // (tools/input_audit.py).
  CHECK(catalog_errors(gpu_entry("  host_link { per_direction_gb_per_s: 450 gpus_sharing: 2 }")) ==
        "");
  CHECK(catalog_errors(gpu_entry(
            "  host_link { per_direction_gb_per_s: 0 gpus_sharing: 2147483647 }")) ==
        "c.textproto:9:15: gpu[0].host_link.per_direction_gb_per_s: must be > 0, got 0\n"
        "c.textproto:9:41: gpu[0].host_link.gpus_sharing: must be in [1, 16], got 2147483647\n");
}

TEST_CASE("a CNN's input is at most 65,536 pixels a side") {
  // 2^31 - 1 was taken, the step's FLOPs then beyond any sense (tools/input_audit.py).
  CHECK(catalog_errors(R"(model {
  name: "tiny"
  cnn {
    input_height: 2147483647 input_width: 8 input_channels: 3
    layer { conv { out_channels: 4 kernel: 3 } }
  }
)" + testing::kSource + "\n}\n") ==
        "c.textproto:4:5: model[0].cnn.input_height: must be in [1, 65536], got 2147483647\n");
}

TEST_CASE("a CNN layer's border and stride are refused at that layer") {
  CHECK(catalog_errors(R"(model {
  name: "tiny"
  cnn {
    input_height: 8 input_width: 8 input_channels: 3
    layer { conv { out_channels: 4 kernel: 3 padding: 2147483647 } }
  }
)" + testing::kSource + "\n}\n") ==
        "c.textproto:5:5: model[0].cnn.layer[0]: padding 2147483647 is not below the kernel (3): "
        "its outermost windows would see padding alone\n");
}

TEST_CASE("a CNN whose kernel outgrows its input is rejected at that layer") {
  CHECK(catalog_errors(R"(model {
  name: "tiny"
  cnn {
    input_height: 8 input_width: 8 input_channels: 3
    layer { conv { out_channels: 4 kernel: 3 stride: 2 } }
    layer { conv { out_channels: 4 kernel: 5 } }
  }
)" + testing::kSource + "\n}\n") ==
        "c.textproto:6:5: model[0].cnn.layer[1]: kernel 5 is larger than the padded input 3\n");
}

TEST_CASE("a residual whose branches disagree in shape is rejected") {
  CHECK(catalog_errors(R"(model {
  name: "tiny"
  cnn {
    input_height: 8 input_width: 8 input_channels: 4
    layer { residual { body { conv { out_channels: 8 kernel: 1 } } } }
  }
)" + testing::kSource + "\n}\n") ==
        "c.textproto:5:5: model[0].cnn.layer[0]: body output 8x8x8 does not match shortcut output "
        "4x8x8\n");
}

TEST_CASE("every problem is reported, not only the first") {
  std::string text = gpu_entry();
  text.replace(text.find("memory_gib: 80"), 14, "memory_gib: 0");
  text.replace(text.find("memory_bandwidth_gb_per_s: 2000"), 31, "memory_bandwidth_gb_per_s: nan");
  CHECK(catalog_errors(text) ==
        "c.textproto:4:3: gpu[0].memory_gib: must be > 0, got 0\n"
        "c.textproto:5:3: gpu[0].memory_bandwidth_gb_per_s: must be a finite number > 0, "
        "got nan\n");
}

TEST_CASE("an entry without a source gets a warning") {
  Diagnostics diagnostics;
  TempDir dir;
  dir.write("c.textproto", R"(fabric { name: "f" topology: SINGLE_SWITCH })");
  Catalog::load({dir.path()}, &diagnostics);
  CHECK_FALSE(diagnostics.has_errors());
  REQUIRE(diagnostics.all().size() == 1);
  CHECK(diagnostics.all()[0].to_string().find(
            "c.textproto:1:1: warning: fabric[0].source: has no source") != std::string::npos);
}

// Such a file (a truncated copy, an unsaved edit) added and replaced nothing without a word.
TEST_CASE("a catalog file that defines no entries is an error naming it") {
  TempDir dir;
  for (const std::string text : {"", "  \n", "# the H100 overrides, to come\n"}) {
    const std::string file = dir.write("c.textproto", text);
    Diagnostics diagnostics;
    Catalog::load({dir.path()}, &diagnostics);
    CHECK(diagnostics.to_string() ==
          file + ":1:1: defines no entries: a catalog file lists gpu, instance, storage, fabric, "
                 "model, link_class, runtime, serving_runtime, dataloading_cost or provider entries\n");
  }
}

TEST_CASE("a missing catalog directory, or a file given for one, is an error") {
  Diagnostics diagnostics;
  Catalog::load({"/nonexistent-catalog"}, &diagnostics);
  CHECK(diagnostics.to_string() == "/nonexistent-catalog: catalog directory does not exist\n");
  // A file given as --catalog: it was reported as a directory that does not exist.
  TempDir dir;
  const std::string file = dir.write("c.textproto", "");
  Diagnostics file_given;
  Catalog::load({file}, &file_given);
  CHECK(file_given.to_string() ==
        file + ": is not a directory: a catalog is a directory of .textproto files\n");
}

// Such a directory (empty, or of .txt files: a wrong path, an unsaved copy) added nothing to the
// catalog without a word.
TEST_CASE("a catalog directory holding no .textproto file is an error naming it") {
  TempDir dir;
  Diagnostics empty;
  Catalog::load({dir.path()}, &empty);
  const std::string error =
      ": holds no catalog files: a catalog is a directory of .textproto files\n";
  CHECK(empty.to_string() == dir.path() + error);
  dir.write("h100_overrides.txt", "gpu { name: \"H100\" }");
  Diagnostics text_files;
  Catalog::load({dir.path()}, &text_files);
  CHECK(text_files.to_string() == dir.path() + error);
}

TEST_CASE("a catalog file that is a symlink loop is an error at its path, not an abort") {
  // Its status threw std::filesystem_error: every command aborted (so did --catalog /, at an
  // entry of /proc).
  TempDir dir;
  const std::string loop = dir.path() + "/loop.textproto";
  std::filesystem::create_symlink("loop.textproto", loop);
  Diagnostics diagnostics;
  Catalog::load({dir.path()}, &diagnostics);
  CHECK(diagnostics.to_string() == loop + ": cannot read: Too many levels of symbolic links\n");
}

TEST_CASE("a provider entry is keyed by its provider, its notice sourced and in range") {
  const auto entry = [](const std::string& name, const std::string& fields) {
    return "provider {\n  name: \"" + name + "\"\n  provider: AWS\n" + fields + "}\n";
  };
  const std::string source = "  source { citation: \"the provider's guide\" }\n";
  CHECK(catalog_errors(entry("aws", "  spot_interruption_notice_s: 120\n" + source)) == "");
  CHECK(catalog_errors(entry("amazon", source)) ==
        "c.textproto:2:3: provider[0].name: must be \"aws\", the provider's name in lower case\n");
  CHECK(catalog_errors(entry("aws", "  spot_interruption_notice_s: -1\n" + source)) ==
        "c.textproto:4:3: provider[0].spot_interruption_notice_s: must be > 0, got -1\n");
  CHECK(catalog_errors(entry("aws", "  spot_interruption_notice_s: nan\n" + source)) ==
        "c.textproto:4:3: provider[0].spot_interruption_notice_s: must be a finite number > 0, "
        "got nan\n");
  CHECK(catalog_errors(entry("aws", "  spot_interruption_notice_s: 1e9\n" + source)) ==
        "c.textproto:4:3: provider[0].spot_interruption_notice_s: must be in [0, 3600], got "
        "1e+09\n");
  CHECK(catalog_errors(entry("aws", "  spot_interruption_notice_s: 120\n")) ==
        "c.textproto:1:1: provider[0].source: is required with a spot_interruption_notice_s: cite "
        "the provider's documentation\n");
  CHECK(catalog_errors("provider {\n  name: \"onprem\"\n  provider: ONPREM\n"
                       "  spot_interruption_notice_s: 120\n" + source + "}\n") ==
        "c.textproto:4:3: provider[0].spot_interruption_notice_s: applies to rented spot "
        "instances, not ONPREM\n");
}

}  // namespace
}  // namespace clustersim
