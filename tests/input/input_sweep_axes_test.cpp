// The sweep's input-pipeline axes (dataset_storage, dataloader_workers_per_gpu): they multiply the
// candidates, each configuration's input pipeline reads its own volume with its own workers, and
// every mistake in them is an error at its file, line and field.
#include <catch2/catch.hpp>
#include <limits>

#include "sim/input/input_model.h"
#include "sim/sweep/evaluation.h"
#include "tests/testing/scenario_text.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

using testing::TempDir;

// ResNet-50 on ImageNet JPEGs on one 8x A100 node in a 32-vCPU container; `sweep` from line 12.
std::string resnet_scenario(const std::string& sweep, const std::string& dataloader =
                                                          "dataloader { workers_per_gpu: 3 "
                                                          "cpu_limit_vcpus: 32 }") {
  return R"(model: "resnet50"
job {
  global_batch_size: 2048 precision: FP16 optimizer: SGD_MOMENTUM epochs: 90
  dataset {
    num_samples: 1281167 mean_sample_bytes: 113044 layout: FILE_PER_SAMPLE format: JPEG_IMAGE
    storage { tier: "aliyun.essd.pl1" capacity_gib: 200 }
  }
  )" + dataloader +
         R"(
}
cluster { instance: "aliyun.ecs.ebmgn7e.32xlarge" nodes: 1 }
parallelism { micro_batch_size: 256 }
)" + sweep;
}

struct Loaded {
  TempDir dir;
  Diagnostics diagnostics;
  std::unique_ptr<LoadedScenario> scenario;
};

std::unique_ptr<Loaded> load(const std::string& text) {
  auto l = std::make_unique<Loaded>();
  l->scenario =
      load_scenario(l->dir.write("s.textproto", text), testing::shipped_catalog(), &l->diagnostics);
  return l;
}

TEST_CASE("the input axes multiply the candidates, workers vary fastest") {
  const auto plain = load(resnet_scenario(""));
  const auto swept = load(resnet_scenario(R"(sweep {
  micro_batch_size: [128, 256]
  dataset_storage: [{ tier: "aliyun.essd.pl0" capacity_gib: 200 },
                    { tier: "aliyun.essd.pl3" capacity_gib: 1300 }]
  dataloader_workers_per_gpu: [1, 2, 3]
})"));
  INFO(swept->diagnostics.to_string());
  REQUIRE(plain->scenario);
  REQUIRE(swept->scenario);
  const ConfigurationSpace one(*plain->scenario);
  const ConfigurationSpace space(*swept->scenario);
  CHECK(one.size() == 1);
  CHECK(space.size() == 2 * 2 * 3);
  // Without the axes the job's own volume and workers.
  CHECK(one.at(0).dataset_storage->tier() == "aliyun.essd.pl1");
  CHECK(one.at(0).dataloader_workers_per_gpu == 3);
  const Configuration second_volume = space.at(3);  // mbs 128, pl3, 1 worker
  CHECK(second_volume.parallelism.micro_batch_size() == 128);
  CHECK(second_volume.dataset_storage->tier() == "aliyun.essd.pl3");
  CHECK(second_volume.dataset_storage->capacity_gib() == 1300);
  CHECK(second_volume.dataloader_workers_per_gpu == 1);
  const Configuration last = space.at(11);
  CHECK(last.parallelism.micro_batch_size() == 256);
  CHECK(last.dataloader_workers_per_gpu == 3);
}

TEST_CASE("a job without a dataloader has no input choices and cannot sweep them") {
  CHECK_THAT(testing::scenario_errors(
                 resnet_scenario("sweep {\n  dataloader_workers_per_gpu: [2, 4]\n}\n", "")),
             Catch::Contains("s.textproto:13:3: sweep.dataloader_workers_per_gpu: sweeps the input "
                             "pipeline, which needs job.dataloader"));
}

TEST_CASE("workers below one, repeated values and empty input axes are errors at their field") {
  const std::string errors = testing::scenario_errors(resnet_scenario(R"(sweep {
  dataloader_workers_per_gpu: [2, 0, 2]
  dataset_storage: [{ tier: "aliyun.essd.pl0" capacity_gib: 200 },
                    { capacity_gib: 200 tier: "aliyun.essd.pl0" }]
}
)"));
  CHECK_THAT(errors, Catch::Contains("s.textproto:13:35: sweep.dataloader_workers_per_gpu[1]: "
                                     "must be >= 1, got 0"));
  CHECK_THAT(errors, Catch::Contains("s.textproto:13:38: sweep.dataloader_workers_per_gpu[2]: 2 "
                                     "is listed twice"));
  CHECK_THAT(errors, Catch::Contains("s.textproto:15:21: sweep.dataset_storage[1]: { tier: "
                                     "\"aliyun.essd.pl0\" capacity_gib: 200 } is listed twice"));
  CHECK_THAT(testing::scenario_errors(resnet_scenario("sweep {\n  dataset_storage: []\n}\n")),
             Catch::Contains("s.textproto:13:3: dataset_storage: is an empty list"));
}

TEST_CASE("a swept volume is checked like the job's: its tier, capacity and provider") {
  const std::string errors = testing::scenario_errors(resnet_scenario(R"(sweep {
  dataset_storage { tier: "aliyun.essd.pl11" capacity_gib: 200 }
  dataset_storage { tier: "aliyun.essd.pl1" capacity_gib: 100 }
  dataset_storage { tier: "aws.ebs.gp3" capacity_gib: 200 }
}
)"));
  CHECK_THAT(errors, Catch::Contains("s.textproto:13:21: sweep.dataset_storage[0].tier: unknown "
                                     "storage tier \"aliyun.essd.pl11\" (did you mean "
                                     "\"aliyun.essd.pl1\"?)"));
  CHECK_THAT(errors, Catch::Contains("s.textproto:14:45: sweep.dataset_storage[1].capacity_gib: "
                                     "the dataset (134.9 GiB) does not fit in 100 GiB"));
  CHECK_THAT(errors, Catch::Contains("s.textproto:15:21: sweep.dataset_storage[2].tier: "
                                     "\"aws.ebs.gp3\" belongs to AWS; instance "
                                     "aliyun.ecs.ebmgn7e.32xlarge (ALIYUN) cannot mount it"));
}

// The shipped storage x workers sweep: 2x A10 reading ImageNet JPEGs from the disk every epoch.
struct TierWorkersSweep {
  std::unique_ptr<LoadedScenario> scenario;
  std::unique_ptr<ConfigurationSpace> space;
  std::unique_ptr<Evaluator> evaluator;
  TierWorkersSweep() {
    Diagnostics diagnostics;
    scenario = load_scenario(
        testing::source_path("scenarios/input/resnet50-imagenet-tier-workers.textproto"),
        testing::shipped_catalog(), &diagnostics);
    INFO(diagnostics.to_string());
    REQUIRE(scenario);
    space = std::make_unique<ConfigurationSpace>(*scenario);
    evaluator = std::make_unique<Evaluator>(testing::shipped_catalog(), *scenario);
  }
  // The configurations reading `tier` at `capacity_gib`, in sweep order (workers rising).
  std::vector<Configuration> reading(const std::string& tier, double capacity_gib) const {
    std::vector<Configuration> found;
    for (int64_t i = 0; i < space->size(); ++i) {
      Configuration c = space->at(i);
      if (c.dataset_storage->tier() == tier && c.dataset_storage->capacity_gib() == capacity_gib) {
        found.push_back(std::move(c));
      }
    }
    return found;
  }
};

TEST_CASE(
    "more workers cut the data stall to 0, loader-bound, the step is the loaders' batch time") {
  TierWorkersSweep sweep;
  const std::vector<Configuration> configs = sweep.reading("aliyun.essd.pl1", 500);
  REQUIRE(configs.size() == 7);  // workers 2, 4, ..., 14
  // ESSD PL1 at 500 GiB (catalog formula): min(120 + 0.5 x 500, 350) = 350 MB/s,
  // min(1800 + 50 x 500, 50000) = 26,800 IOPS, 0.2 ms per request; one request per 113 kB JPEG.
  const double read_s = std::max(113044 / 350e6, 1 / 26800.0) + 0.2e-3;
  double previous_stall = std::numeric_limits<double>::infinity();
  for (const Configuration& c : configs) {
    const Evaluation e = sweep.evaluator->evaluate(c);
    REQUIRE(e.step);
    const double stall = e.step->data_stall_s;
    // Non-increasing, up to the engine's picosecond rounding once the loaders keep up.
    CHECK(stall <= previous_stall + 1e-12);
    previous_stall = stall;
    const InputSetup setup = input_setup(testing::shipped_catalog(), *sweep.scenario, c,
                                         e.step->step_s - e.step->data_stall_s);
    REQUIRE_FALSE(setup.cached_after_first_epoch);  // every epoch reads the disk
    REQUIRE(setup.spec.batch_samples == 256);
    REQUIRE(setup.spec.workers_per_loader == c.dataloader_workers_per_gpu);
    // Each worker reads, then decodes, the 256 samples of its batch; W workers per GPU (2W of the
    // node's 30 worker vCPUs, no contention) deliver W batches per batch time.
    const double loader_step_s =
        256 * (read_s + setup.spec.cpu_s_per_sample) / c.dataloader_workers_per_gpu;
    INFO("workers per GPU " << c.dataloader_workers_per_gpu);
    const double gpu_step_s = e.step->step_s - stall;
    if (loader_step_s > gpu_step_s) {
      CHECK(e.step->step_s == Approx(loader_step_s).epsilon(1e-9));
      CHECK(e.step->limiting == "dataloader workers");
    } else {  // the loaders keep up: no stall beyond the picosecond rounding of the engine
      CHECK(stall == Approx(0).margin(1e-12 * gpu_step_s));
    }
  }
  const StepResult two = *sweep.evaluator->evaluate(configs.front()).step;
  CHECK(two.data_stall_s > two.step_s / 2);  // 2 workers per GPU: GPUs idle most of the step
  CHECK(previous_stall == Approx(0).margin(1e-15));  // 14 workers per GPU keep up
}

TEST_CASE("the storage axis: a slower tier stalls more, at exactly its throughput") {
  TierWorkersSweep sweep;
  const Configuration pl0 = sweep.reading("aliyun.essd.pl0", 200).back();  // 14 workers per GPU
  const Configuration pl1 = sweep.reading("aliyun.essd.pl1", 500).back();
  REQUIRE(pl0.dataloader_workers_per_gpu == 14);
  const StepResult slow = *sweep.evaluator->evaluate(pl0).step;
  const StepResult fast = *sweep.evaluator->evaluate(pl1).step;
  CHECK(slow.data_stall_s > fast.data_stall_s);
  CHECK(slow.limiting == "storage throughput");
  // ESSD PL0 at 200 GiB: min(100 + 0.25 x 200, 180) = 150 MB/s for 512 JPEGs of 113,044 B a step.
  CHECK(slow.step_s == Approx(512 * 113044 / 150e6).epsilon(1e-6));
}

}  // namespace
}  // namespace clustersim
