// Metamorphic checks of the training step model ([invariant]): four small scenarios (a dense
// interleaved pipeline with the distributed optimizer, FSDP2, a mixture of experts across two
// nodes, context parallelism), each layout fixed, run again with one input perturbed, and the
// pair checked against what physics says must hold: faster hardware is never slower and moves no
// memory, more HBM keeps a fitting layout fitting, more micro-batches at most double the step,
// more recomputation is never faster nor bigger, fewer layers never slower nor bigger; MFU and
// HFU follow FLOPs / (step x peak). The link the limiting column names, twice as fast, shortens
// the step; the resource that shortens a step the most when 1.25 times faster is one the limiting
// column names. And every collective's bytes sent equal its bytes received.
// tools/explore_invariants.py runs the same relations over the shipped scenarios.
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <sstream>
#include <string>

#include "sim/io/catalog.h"
#include "sim/io/scenario_loader.h"
#include "sim/net/collective.h"
#include "sim/sweep/configuration_space.h"
#include "sim/sweep/evaluation.h"
#include "tests/testing/cluster.h"
#include "tests/testing/shipped_catalog.h"
#include "tests/testing/temp_dir.h"

// A namespace of its own: unity builds join this file with others into one translation unit.
namespace clustersim::step_invariants_test {
namespace {

namespace s = schema;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// Each scenario names its model on a line of its own (fewer_layers edits that model).
struct Scenario {
  const char* name;
  const char* model;
  std::string text;
  int chunks;  // pipeline stages x virtual stages: fewer_layers drops one layer from each
};

const Scenario kScenarios[] = {
    {"dense-interleaved", "gpt-1.7b", R"(
job { global_batch_size: 32 sequence_length: 2048 precision: BF16 optimizer: ADAM steps: 1 }
cluster { instance: "aws.p4d.24xlarge" nodes: 2 }
parallelism { tensor_parallel: 2 pipeline_parallel: 2 virtual_stages: 2
  schedule: INTERLEAVED_ONE_F_ONE_B micro_batch_size: 1 distributed_optimizer: true })",
     4},
    {"fsdp2", "llama3-8b", R"(
job { global_batch_size: 16 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 1 }
cluster { instance: "aws.p5.48xlarge" nodes: 2 }
parallelism { micro_batch_size: 1 zero_stage: 3 fsdp2: true recompute: RECOMPUTE_SELECTIVE })",
     1},
    {"moe-fp8", "qwen3-30b-a3b", R"(
job { global_batch_size: 16 sequence_length: 4096 precision: FP8 optimizer: ADAM steps: 1 }
cluster { instance: "onprem.dgx-h100" nodes: 2 fabric: "ib-rail-optimized" }
parallelism { pipeline_parallel: 2 expert_parallel: 8 micro_batch_size: 1
  distributed_optimizer: true })",
     2},
    {"context-parallel", "llama3-8b-1m", R"(
job { global_batch_size: 8 sequence_length: 16384 precision: BF16 optimizer: ADAM steps: 1 }
cluster { instance: "onprem.dgx-h100" nodes: 1 }
parallelism { tensor_parallel: 4 context_parallel: 2 micro_batch_size: 1
  sequence_parallel: true distributed_optimizer: true })",
     1},
};

std::string scenario_text(const Scenario& scenario, const std::string& parallelism_edit = "") {
  std::string text = std::string("name: \"") + scenario.name + "\"\nmodel: \"" + scenario.model +
                     "\"" + scenario.text;
  if (!parallelism_edit.empty()) {
    text.replace(text.find("parallelism {"), 13, "parallelism { " + parallelism_edit);
  }
  return text;
}

// What one configuration's step gives.
struct Outcome {
  double step_s = 0;  // 0: out of memory
  double memory_bytes = 0;
  double tokens_per_s = 0;
  double mfu = 0, hfu = 0;
  int micro_batches = 0;
  std::string limiting;  // the limiting column (step_limit.h)
};

Outcome evaluate(const Catalog& catalog, const std::string& text) {
  const testing::TempDir dir;
  Diagnostics diagnostics;
  const auto loaded = load_scenario(dir.write("s.textproto", text), catalog, &diagnostics);
  INFO(text << "\n" << diagnostics.to_string());
  REQUIRE(loaded != nullptr);
  const ExpandedConfigurations space = expand_configurations(*loaded);
  REQUIRE(space.valid.size() == 1);
  Evaluator evaluator(catalog, *loaded);
  const Evaluation e = evaluator.evaluate(space.valid.front());
  Outcome o;
  o.memory_bytes = e.memory.total_bytes();
  if (e.step) {
    o.step_s = e.step->step_s;
    o.tokens_per_s = e.step->tokens_per_s;
    o.mfu = e.step->mfu;
    o.hfu = e.step->hfu;
    o.limiting = e.step->limiting;
  }
  return o;
}

// The entries of the shipped catalog files under `folder` as written (before the load-time
// derivations), for copies to edit.
s::CatalogFile shipped_entries(const std::string& folder) {
  s::CatalogFile all;
  std::vector<std::filesystem::path> files;
  for (const auto& f : std::filesystem::directory_iterator(testing::source_path(folder))) {
    if (f.path().extension() == ".textproto") files.push_back(f.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    s::CatalogFile file;
    REQUIRE(google::protobuf::TextFormat::ParseFromString(text.str(), &file));
    all.MergeFrom(file);
  }
  return all;
}

// Multiplies every double field set in `message` (not its sub-messages) by `factor`.
void scale_doubles(Message* message, double factor) {
  const auto* reflection = message->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(*message, &fields);
  for (const FieldDescriptor* f : fields) {
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE && !f->is_repeated()) {
      reflection->SetDouble(message, f, reflection->GetDouble(*message, f) * factor);
    }
  }
}

// `gpu`'s NVLink bandwidth x `factor`, where it has NVLink (A100 PCIe cards have none).
void scale_nvlink(s::Gpu* gpu, double factor) {
  if (gpu->has_nvlink()) scale_doubles(gpu->mutable_nvlink(), factor);
}

// The shipped catalog with the entries `edit` writes replacing theirs (the warnings that say so
// are expected; nothing else may be reported).
std::unique_ptr<Catalog> catalog_with(const std::function<void(s::CatalogFile*)>& edit) {
  s::CatalogFile replaced;
  edit(&replaced);
  const testing::TempDir dir;
  std::string text;
  REQUIRE(google::protobuf::TextFormat::PrintToString(replaced, &text));
  dir.write("replaced.textproto", text);
  Diagnostics diagnostics;
  auto catalog = Catalog::load(
      {testing::source_path("models"), testing::source_path("topologies"), dir.path()},
      &diagnostics);
  INFO(diagnostics.to_string());
  REQUIRE_FALSE(diagnostics.has_errors());
  return catalog;
}

// The GPUs of the scenarios' instances, as written, each edited by `edit`.
std::function<void(s::CatalogFile*)> each_gpu(std::function<void(s::Gpu*)> edit) {
  return [edit](s::CatalogFile* out) {
    static const s::CatalogFile topologies = shipped_entries("topologies");
    for (const s::Gpu& gpu : topologies.gpu()) {
      for (const char* used : {"A100-SXM4-40GB", "H100-SXM5-80GB", "A100-PCIE-80GB"}) {
        if (gpu.name() == used) edit(&(*out->add_gpu() = gpu));
      }
    }
  };
}

// The NICs of the scenarios' instances, as written, `factor` times faster.
void faster_nics(double factor, s::CatalogFile* out) {
  static const s::CatalogFile topologies = shipped_entries("topologies");
  for (const s::InstanceType& i : topologies.instance()) {
    for (const char* used : {"aws.p4d.24xlarge", "aws.p5.48xlarge", "onprem.dgx-h100"}) {
      if (i.name() == used) scale_doubles((*out->add_instance() = i).mutable_network(), factor);
    }
  }
}

enum class Relation { kFaster, kMoreCapacity };

struct HardwareChange {
  const char* name;
  std::function<void(s::CatalogFile*)> edit;
  Relation relation;
  double peak_factor;  // what the peak of the job's precision took: MFU's denominator
  bool read_by_all = false;  // every scenario's step must move (the kernels read it)
};

std::vector<HardwareChange> hardware_changes() {
  return {
      {"every peak x1.25",
       each_gpu([](s::Gpu* g) { scale_doubles(g->mutable_peak_tflops(), 1.25); }),
       Relation::kFaster, 1.25, true},
      {"HBM bandwidth x1.25",
       each_gpu([](s::Gpu* g) {
         g->set_memory_bandwidth_gb_per_s(g->memory_bandwidth_gb_per_s() * 1.25);
       }),
       Relation::kFaster, 1, true},
      {"NVLink x1.25", each_gpu([](s::Gpu* g) { scale_nvlink(g, 1.25); }),
       Relation::kFaster, 1},
      {"PCIe x1.25", each_gpu([](s::Gpu* g) { scale_doubles(g->mutable_pcie(), 1.25); }),
       Relation::kFaster, 1},
      {"NICs x1.25",
       [](s::CatalogFile* out) {
         faster_nics(1.25, out);
       },
       Relation::kFaster, 1},
      {"link latencies x0.5",
       [](s::CatalogFile* out) {
         static const s::CatalogFile topologies = shipped_entries("topologies");
         for (const s::LinkClass& l : topologies.link_class()) {
           s::LinkClass* copy = out->add_link_class();
           *copy = l;
           if (copy->has_step_latency_us()) copy->set_step_latency_us(l.step_latency_us() / 2);
           if (copy->has_simple_step_latency_us()) {
             copy->set_simple_step_latency_us(l.simple_step_latency_us() / 2);
           }
         }
       },
       Relation::kFaster, 1},
      {"HBM capacity x1.5", each_gpu([](s::Gpu* g) {
         g->set_memory_gib(g->memory_gib() * 1.5);
         if (g->has_cuda_total_memory_gib()) {
           g->set_cuda_total_memory_gib(g->cuda_total_memory_gib() * 1.5);
         }
       }),
       Relation::kMoreCapacity, 1},
  };
}

// Relative tolerance: what the picosecond clock and sums in another order may leave.
constexpr double kTolerance = 1e-9;

TEST_CASE("faster hardware is never slower and moves no memory", "[invariant]") {
  const Catalog& shipped = testing::shipped_catalog();
  std::vector<Outcome> base;
  for (const Scenario& scenario : kScenarios) {
    base.push_back(evaluate(shipped, scenario_text(scenario)));
    REQUIRE(base.back().step_s > 0);  // each fits as shipped
  }
  for (const HardwareChange& change : hardware_changes()) {
    const auto catalog = catalog_with(change.edit);
    for (size_t i = 0; i < std::size(kScenarios); ++i) {
      INFO(kScenarios[i].name << ", " << change.name);
      const Outcome& before = base[i];
      const Outcome after = evaluate(*catalog, scenario_text(kScenarios[i]));
      CHECK(after.memory_bytes == Approx(before.memory_bytes).epsilon(kTolerance));
      REQUIRE(after.step_s > 0);
      if (change.read_by_all) {
        CHECK(after.step_s < before.step_s);  // an input the step ignores is a bug too
      } else if (change.relation == Relation::kFaster) {
        CHECK(after.step_s <= before.step_s * (1 + kTolerance));
      } else {
        CHECK(after.step_s == Approx(before.step_s).epsilon(kTolerance));
      }
      // The model's and the hardware's FLOPs do not move: MFU x step x peak stays put.
      CHECK(after.mfu * after.step_s * change.peak_factor ==
            Approx(before.mfu * before.step_s).epsilon(kTolerance));
      CHECK(after.hfu * after.step_s * change.peak_factor ==
            Approx(before.hfu * before.step_s).epsilon(kTolerance));
    }
  }
}

TEST_CASE("twice the micro-batches at most double the step, the same memory", "[invariant]") {
  const Catalog& catalog = testing::shipped_catalog();
  for (const Scenario& scenario : kScenarios) {
    INFO(scenario.name);
    std::string doubled = scenario_text(scenario);
    const size_t at = doubled.find("global_batch_size: ") + 19;
    const size_t end = doubled.find(' ', at);
    doubled.replace(at, end - at, std::to_string(2 * std::stoi(doubled.substr(at, end - at))));
    const Outcome before = evaluate(catalog, scenario_text(scenario));
    const Outcome after = evaluate(catalog, doubled);
    // step(2n) = 2 step(n) - (what a step pays once: its last gradient reduction, optimizer).
    CHECK(after.step_s <= 2 * before.step_s * (1 + kTolerance));
    CHECK(after.tokens_per_s >= before.tokens_per_s * (1 - kTolerance));
    // Every scenario has at least as many micro-batches as pipeline chunks: the same in flight.
    CHECK(after.memory_bytes == Approx(before.memory_bytes).epsilon(kTolerance));
  }
}

// The scenario with `recompute` (RECOMPUTE_NONE, _SELECTIVE or _FULL) in place of its own.
std::string with_recompute(const Scenario& scenario, const std::string& recompute) {
  std::string text = scenario_text(scenario);
  const std::string own = "recompute: RECOMPUTE_SELECTIVE";
  const size_t at = text.find(own);
  if (at != std::string::npos) return text.replace(at, own.size(), "recompute: " + recompute);
  return scenario_text(scenario, "recompute: " + recompute);
}

TEST_CASE("more recomputation is never faster and never holds more memory", "[invariant]") {
  const Catalog& catalog = testing::shipped_catalog();
  for (const Scenario& scenario : kScenarios) {
    const Outcome none = evaluate(catalog, with_recompute(scenario, "RECOMPUTE_NONE"));
    const Outcome selective = evaluate(catalog, with_recompute(scenario, "RECOMPUTE_SELECTIVE"));
    const Outcome full = evaluate(catalog, with_recompute(scenario, "RECOMPUTE_FULL"));
    INFO(scenario.name << ": none " << none.step_s << " s " << none.memory_bytes
                       << " B, selective " << selective.step_s << " s " << selective.memory_bytes
                       << " B, full " << full.step_s << " s " << full.memory_bytes << " B");
    CHECK(selective.memory_bytes <= none.memory_bytes * (1 + kTolerance));
    CHECK(full.memory_bytes < selective.memory_bytes);
    CHECK(selective.step_s >= none.step_s * (1 - kTolerance));
    CHECK(full.step_s > selective.step_s);
    // The model's FLOPs stay; the hardware's grow with what is recomputed.
    CHECK(full.mfu * full.step_s == Approx(none.mfu * none.step_s).epsilon(kTolerance));
    CHECK(full.hfu * full.step_s > selective.hfu * selective.step_s);
    CHECK(selective.hfu * selective.step_s >= none.hfu * none.step_s * (1 - kTolerance));
  }
}

TEST_CASE("a model with fewer layers is never slower and never bigger", "[invariant]") {
  const auto catalog = catalog_with([](s::CatalogFile* out) {
    static const s::CatalogFile models = shipped_entries("models");
    for (const Scenario& scenario : kScenarios) {
      for (const s::Model& m : models.model()) {
        if (m.name() != scenario.model) continue;
        s::Model* copy = out->add_model();
        *copy = m;
        copy->mutable_transformer()->set_num_layers(m.transformer().num_layers() -
                                                    scenario.chunks);
        // The published counts are of the whole model.
        const auto* reflection = copy->GetReflection();
        std::vector<const FieldDescriptor*> fields;
        reflection->ListFields(*copy, &fields);
        for (const FieldDescriptor* f : fields) {
          if (f->name().rfind("published_", 0) == 0) reflection->ClearField(copy, f);
        }
      }
    }
  });
  for (const Scenario& scenario : kScenarios) {
    INFO(scenario.name);
    const Outcome before = evaluate(testing::shipped_catalog(), scenario_text(scenario));
    const Outcome after = evaluate(*catalog, scenario_text(scenario));
    CHECK(after.step_s <= before.step_s * (1 + kTolerance));
    CHECK(after.memory_bytes <= before.memory_bytes * (1 + kTolerance));
  }
}

// scenarios/mixtral_unbalanced_router.textproto's EP 8 layout (TP 2, PP 2, DP 8) on 4 p5: the
// expert all-to-alls cross the nodes, over 8 EFA NICs of 400 Gbit/s a node (47.75 GB/s each at
// the efa class's 0.955), each behind a PCIe 5 x16 link (63 GB/s, 60.2 at 0.955).
const char kMixtralAcrossNodes[] = R"(name: "mixtral-ep8"
model: "mixtral-8x7b"
job { global_batch_size: 256 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 1
  expert_routing { max_violation: 0.5 } }
cluster { instance: "aws.p5.48xlarge" nodes: 4 }
parallelism { tensor_parallel: 2 pipeline_parallel: 2 expert_parallel: 8 micro_batch_size: 1
  distributed_optimizer: true sequence_parallel: true gradient_reduce_in_fp32: false })";

// p5's NICs `nics` times as fast, and its GPU's PCIe `pcie` times, its NVLink `nvlink` times.
std::function<void(s::CatalogFile*)> p5_links(double nics, double pcie, double nvlink = 1) {
  return [nics, pcie, nvlink](s::CatalogFile* out) {
    static const s::CatalogFile topologies = shipped_entries("topologies");
    for (const s::InstanceType& i : topologies.instance()) {
      if (i.name() != "aws.p5.48xlarge") continue;
      s::InstanceType* copy = out->add_instance();
      *copy = i;
      scale_doubles(copy->mutable_network(), nics);
    }
    each_gpu([pcie, nvlink](s::Gpu* g) {
      scale_doubles(g->mutable_pcie(), pcie);
      scale_nvlink(g, nvlink);
    })(out);
  };
}

TEST_CASE("the link the limiting column names, twice as fast, shortens the step",
          "[invariant]") {
  const std::string crossing =
      "compute, then expert-parallel all-to-all across NVLink domains ";
  const Outcome shipped = evaluate(testing::shipped_catalog(), kMixtralAcrossNodes);
  const Outcome nics2 = evaluate(*catalog_with(p5_links(2, 1)), kMixtralAcrossNodes);
  const Outcome nics4 = evaluate(*catalog_with(p5_links(4, 1)), kMixtralAcrossNodes);
  const Outcome nics2_pcie2 = evaluate(*catalog_with(p5_links(2, 2)), kMixtralAcrossNodes);
  INFO("steps " << shipped.step_s << ", NICs x2 " << nics2.step_s << ", x4 " << nics4.step_s
                << ", NICs and PCIe x2 " << nics2_pcie2.step_s);
  // As shipped the NICs bind: twice their bandwidth moves the traffic at PCIe's 60.2 GB/s, not
  // 47.75, and the step 3.5% shorter (10.013 -> 9.667 s).
  CHECK(shipped.limiting == crossing + "(scale-out network)");
  CHECK(nics2.step_s < shipped.step_s * 0.98);
  // Then PCIe binds: more NIC bandwidth moves nothing, more PCIe does.
  CHECK(nics2.limiting == crossing + "(PCIe between GPU and NIC)");
  CHECK(nics4.step_s == Approx(nics2.step_s).epsilon(kTolerance));
  CHECK(nics4.limiting == nics2.limiting);
  CHECK(nics2_pcie2.step_s < nics2.step_s * 0.98);
  CHECK(nics2_pcie2.limiting == crossing + "(scale-out network)");
}

// Llama-2-7B tensor-parallel over two p5 (TP 16): each layer's all-gathers and reduce-scatters
// run as NCCL's 8 ring channels, each crossing the network through its own NIC (47.75 GB/s) and
// passing 7 NVLink hops on each GPU's 360 GB/s.
const char kTensorAcrossNodes[] = R"(name: "tp16"
model: "llama2-7b"
job { global_batch_size: 4 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 1 }
cluster { instance: "aws.p5.48xlarge" nodes: 2 }
parallelism { tensor_parallel: 16 micro_batch_size: 1 sequence_parallel: true
  distributed_optimizer: true })";

TEST_CASE("a tensor-parallel group across two p5 names the link its ring is short of",
          "[invariant]") {
  const std::string crossing = "tensor-parallel communication across NVLink domains ";
  const Outcome shipped = evaluate(testing::shipped_catalog(), kTensorAcrossNodes);
  const Outcome nics2 = evaluate(*catalog_with(p5_links(2, 1)), kTensorAcrossNodes);
  const Outcome nics2_nvlink = evaluate(*catalog_with(p5_links(2, 1, 1.25)), kTensorAcrossNodes);
  const Outcome nics2_5 = evaluate(*catalog_with(p5_links(2.5, 1)), kTensorAcrossNodes);
  const Outcome nvlink2_nics2 = evaluate(*catalog_with(p5_links(2, 1, 2)), kTensorAcrossNodes);
  const Outcome nvlink2_nics2_pcie =
      evaluate(*catalog_with(p5_links(2, 1.25, 2)), kTensorAcrossNodes);
  INFO("steps " << shipped.step_s << ", NICs x2 " << nics2.step_s << " (NVLink x1.25 "
                << nics2_nvlink.step_s << ", NICs x2.5 " << nics2_5.step_s
                << "), NICs and NVLink x2 " << nvlink2_nics2.step_s << " (PCIe x1.25 "
                << nvlink2_nics2_pcie.step_s << ")");
  // As shipped a channel's NIC binds (1 / 47.75 GB/s > 7 / 360 per byte).
  CHECK(shipped.limiting == crossing + "(scale-out network)");
  // NICs x2 (95.5 GB/s): the NVLink hops bind; more NVLink shortens the step, more NIC does not.
  CHECK(nics2.limiting == crossing + "(NVLink inside each domain)");
  CHECK(nics2_nvlink.step_s < nics2.step_s * (1 - 1e-3));
  CHECK(nics2_5.step_s == Approx(nics2.step_s).epsilon(kTolerance));
  // And NVLink x2 (720 GB/s): the PCIe link to the NIC (60.2 GB/s) binds.
  CHECK(nvlink2_nics2.limiting == crossing + "(PCIe between GPU and NIC)");
  CHECK(nvlink2_nics2_pcie.step_s < nvlink2_nics2.step_s * (1 - 1e-3));
}

// Llama-2-7B data-parallel with ZeRO-3 over 8 PCIe A100s: the layers' gathers and
// reduce-scatters over PCIe run beside most of the kernels, their SMs slowing them. Under full
// recomputation that slowdown alone weighs less than the kernels, but each forward and
// recomputed forward layer waits for its gather, the gathers running back to back: the kernels
// beside them only lengthen the waits (PCIe x1.25 saves 12.1% of the step, the GPU 7.9%).
// At TP 2 (DP 4) the tensor-parallel all-reduces cross PCIe too: neither part outweighs the
// kernels, both together do, and PCIe shortens both.
std::string sharded_over_pcie(const char* recompute, int tensor_parallel = 1) {
  return R"(name: "zero3-pcie"
model: "llama2-7b"
job { global_batch_size: 16 sequence_length: 4096 precision: FP16 optimizer: ADAM steps: 1 }
cluster { instance: "huaweicloud.p3.16xlarge.8" nodes: 1 }
parallelism { micro_batch_size: 1 zero_stage: 3 recompute: )" +
         std::string(recompute) +
         (tensor_parallel > 1 ? " tensor_parallel: " + std::to_string(tensor_parallel) : "") + " }";
}

// GPT 1.7B data-parallel over two p4d (DP 16, the distributed optimizer): the gradient
// reduce-scatters across the nodes' 4 x 100 Gb/s EFA outlast the last backward they start
// beside. At 2 micro-batches a replica the step waits on them from their start (the NICs x1.25
// save 11.1% of the step, the GPU 8.0%); at 4 the kernels before them weigh more (the GPU saves
// 12.7%, the NICs 6.6%).
std::string reduce_scattered_over_efa(int global_batch) {
  return R"(name: "dp16-p4d"
model: "gpt-1.7b"
job { global_batch_size: )" +
         std::to_string(global_batch) + R"( sequence_length: 2048 precision: BF16 optimizer: ADAM
  steps: 1 }
cluster { instance: "aws.p4d.24xlarge" nodes: 2 }
parallelism { micro_batch_size: 1 distributed_optimizer: true })";
}

// A resource 1.25 times faster, as tools/explore_labels.py makes it: the GPU's peaks, its HBM
// bandwidth, both (the kernels), or a link at every size (bandwidth x1.25, the step latencies of
// its link classes / 1.25: no protocol choice moves).
struct FasterResource {
  const char* name;
  std::function<void(s::CatalogFile*)> edit;
};

// The link classes of `names` with their step latencies / `factor`.
void faster_link_classes(std::initializer_list<const char*> names, double factor,
                         s::CatalogFile* out) {
  static const s::CatalogFile topologies = shipped_entries("topologies");
  for (const s::LinkClass& l : topologies.link_class()) {
    if (std::find(names.begin(), names.end(), l.name()) == names.end()) continue;
    s::LinkClass* copy = out->add_link_class();
    *copy = l;
    if (copy->has_step_latency_us()) copy->set_step_latency_us(l.step_latency_us() / factor);
    if (copy->has_simple_step_latency_us()) {
      copy->set_simple_step_latency_us(l.simple_step_latency_us() / factor);
    }
  }
}

std::vector<FasterResource> faster_resources() {
  constexpr double f = 1.25;
  return {
      {"peaks", each_gpu([](s::Gpu* g) { scale_doubles(g->mutable_peak_tflops(), f); })},
      {"HBM", each_gpu([](s::Gpu* g) {
         g->set_memory_bandwidth_gb_per_s(g->memory_bandwidth_gb_per_s() * f);
       })},
      {"GPU", each_gpu([](s::Gpu* g) {
         scale_doubles(g->mutable_peak_tflops(), f);
         g->set_memory_bandwidth_gb_per_s(g->memory_bandwidth_gb_per_s() * f);
       })},
      {"NVLink",
       [](s::CatalogFile* out) {
         each_gpu([](s::Gpu* g) { scale_nvlink(g, f); })(out);
         faster_link_classes({"nvlink", "nvlink3", "nvlink5"}, f, out);
       }},
      {"PCIe",
       [](s::CatalogFile* out) {
         each_gpu([](s::Gpu* g) { scale_doubles(g->mutable_pcie(), f); })(out);
         faster_link_classes({"pcie", "socket"}, f, out);
       }},
      {"NICs",
       [](s::CatalogFile* out) {
         faster_nics(f, out);
         static const s::CatalogFile topologies = shipped_entries("topologies");
         faster_link_classes({"efa", "infiniband"}, f, out);
         for (const s::Fabric& fabric : topologies.fabric()) {
           s::Fabric* copy = out->add_fabric();
           *copy = fabric;
           copy->set_nic_latency_us(fabric.nic_latency_us() / f);
           copy->set_switch_hop_latency_us(fabric.switch_hop_latency_us() / f);
         }
       }},
  };
}

// The resources a label names (tools/explore_labels.py label_classes, where the write-up in
// results/validation.md says why): the kernels run at the peaks or at HBM bandwidth, one class;
// a tensor-parallel group inside a node on its NVLink; data-parallel traffic on whichever link
// its route takes; a crossing on the link in its parenthesis, after "compute, then " on the
// kernels; a link parts share on that link.
std::vector<std::string> named_resources(const std::string& label) {
  if (label == "compute" || label.rfind("compute, then ", 0) == 0) return {"peaks", "HBM", "GPU"};
  if (label == "tensor-parallel communication") return {"NVLink"};
  if (label == "data-parallel communication") return {"NVLink", "PCIe", "NICs"};
  if (label.ends_with("(scale-out network)")) return {"NICs"};
  if (label.ends_with("(PCIe between GPU and NIC)")) return {"PCIe"};
  if (label.starts_with("PCIe shared by ")) return {"PCIe"};
  if (label.starts_with("NVLink shared by ")) return {"NVLink"};
  if (label.starts_with("scale-out network shared by ")) return {"NICs"};
  return {};
}

TEST_CASE("the resource that shortens the step the most is one the limiting column names",
          "[invariant]") {
  const std::vector<FasterResource> resources = faster_resources();
  std::vector<std::unique_ptr<Catalog>> catalogs;
  for (const FasterResource& resource : resources) catalogs.push_back(catalog_with(resource.edit));
  const std::string texts[] = {scenario_text(kScenarios[0]), scenario_text(kScenarios[1]),
                               scenario_text(kScenarios[2]), kTensorAcrossNodes,
                               sharded_over_pcie("RECOMPUTE_SELECTIVE"),
                               sharded_over_pcie("RECOMPUTE_FULL"),
                               sharded_over_pcie("RECOMPUTE_SELECTIVE", 2),
                               reduce_scattered_over_efa(32),
                               reduce_scattered_over_efa(64)};
  for (const std::string& text : texts) {
    const Outcome base = evaluate(testing::shipped_catalog(), text);
    const std::vector<std::string> named = named_resources(base.limiting);
    REQUIRE_FALSE(named.empty());
    std::string best;
    double best_saving = 0, named_saving = 0;
    std::ostringstream savings;
    for (size_t i = 0; i < resources.size(); ++i) {
      const double saving = 1 - evaluate(*catalogs[i], text).step_s / base.step_s;
      savings << resources[i].name << " " << 100 * saving << "% ";
      if (saving > best_saving) best_saving = saving, best = resources[i].name;
      if (std::find(named.begin(), named.end(), resources[i].name) != named.end()) {
        named_saving = std::max(named_saving, saving);
      }
    }
    INFO(text.substr(0, text.find('\n')) << ": '" << base.limiting << "'; " << savings.str());
    // A near-tie (the parts are weighed alone, a speed-up also moves what overlaps them): the
    // named resource saves at least 90% of the best's saving.
    CHECK(named_saving >= 0.9 * best_saving);
  }
}

TEST_CASE("every collective's bytes sent equal its bytes received", "[invariant]") {
  const std::unique_ptr<Topology> topologies[] = {
      testing::shipped_cluster("aws.p5.48xlarge", 1),     // NVSwitch, NVLS
      testing::shipped_cluster("aws.p4d.24xlarge", 3),    // NVLink and EFA, three nodes
      testing::shipped_cluster("aws.g5.48xlarge", 2),     // PCIe inside, TCP between
      testing::shipped_cluster("onprem.gb200-nvl72", 2),  // a multi-node NVLink domain
  };
  int checked = 0;
  for (const auto& topology : topologies) {
    const std::vector<int> gpus = testing::all_gpus(*topology);
    for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter,
                            CollectiveOp::kAllGather, CollectiveOp::kBroadcast,
                            CollectiveOp::kAllToAll, CollectiveOp::kSendRecv}) {
      for (CollectiveAlgorithm algorithm :
           {CollectiveAlgorithm::kAuto, CollectiveAlgorithm::kRing, CollectiveAlgorithm::kTree,
            CollectiveAlgorithm::kHierarchical, CollectiveAlgorithm::kNvls,
            CollectiveAlgorithm::kDirect}) {
        for (double bytes : {4096.0, 3e8}) {
          Collective c{op, gpus, bytes, algorithm};
          // Send/recv: the first GPU to the last (across nodes where there are several).
          if (op == CollectiveOp::kSendRecv) c.gpus = {gpus.front(), gpus.back()};
          if (!collective_problem(c, *topology).empty()) continue;
          INFO(collective_op_name(op) << " " << collective_algorithm_name(algorithm) << " "
                                      << bytes << " B on " << gpus.size() << " GPUs");
          Simulation sim;
          Network net(&sim, topology.get());
          start_collective(&net, c, [] {});
          sim.run();
          const auto& sent = net.bytes_sent();
          const auto& received = net.bytes_received();
          const double total_sent = std::accumulate(sent.begin(), sent.end(), 0.0);
          CHECK(total_sent > 0);
          CHECK(total_sent ==
                Approx(std::accumulate(received.begin(), received.end(), 0.0)).epsilon(1e-12));
          ++checked;
        }
      }
    }
  }
  CHECK(checked >= 60);
}

}  // namespace
}  // namespace clustersim::step_invariants_test
