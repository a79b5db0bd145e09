// The input pipeline of shipped scenarios: ResNet-50 on 8x A100 with few vCPUs is CPU-bound and
// the advice's vCPUs remove the stall (fewer workers than its lower bound cannot; beyond the
// largest instance only that bound is given); a PL0 disk limits the first epoch and no longer
// matters once the dataset sits in the page cache; small files hit a disk's IOPS, which shards
// lift, while packing is not advised where throughput binds; an LLM reading
// pre-tokenized shards never waits; a shared file system splits its throughput between nodes;
// the storage advice sizes each tier for the nodes reading one volume of it, in capacities the
// tier comes in.
#include "sim/input/input_model.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <memory>

#include "sim/hw/storage_model.h"
#include "sim/input/input_advice.h"
#include "sim/sweep/evaluation.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

struct LoadedJob {
  std::unique_ptr<LoadedScenario> scenario;
  Configuration configuration;
  double gpu_step_s = 0;
};

// The scenario's first configuration and its GPU step without input.
LoadedJob load_shipped(const std::string& path, int nodes = 0) {
  const Catalog& catalog = testing::shipped_catalog();
  Diagnostics diagnostics;
  LoadedJob l;
  l.scenario = load_scenario(testing::source_path(path), catalog, &diagnostics);
  INFO(diagnostics.to_string());
  REQUIRE(l.scenario != nullptr);
  l.configuration = expand_configurations(*l.scenario).valid.at(0);
  if (nodes > 0) {
    l.configuration.nodes = nodes;
    const int dp = nodes * l.configuration.instance->gpu_count();
    l.configuration.parallelism.set_data_parallel(dp);
    l.configuration.parallelism.set_micro_batch_size(
        l.scenario->scenario().job().global_batch_size() / dp);
  }
  Evaluator evaluator(catalog, *l.scenario);
  const Evaluation e = evaluator.evaluate(l.configuration);
  REQUIRE(e.step);
  l.gpu_step_s = e.step->step_s - e.step->data_stall_s;
  return l;
}

InputEstimate estimate(const LoadedJob& l) {
  return estimate_input(
      input_setup(testing::shipped_catalog(), *l.scenario, l.configuration, l.gpu_step_s));
}

TEST_CASE("ResNet-50 on 8x A100 with 32 vCPUs is CPU-bound, the advised vCPUs remove the stall") {
  const LoadedJob l = load_shipped("scenarios/input/resnet50-imagenet-32vcpu.textproto");
  const InputEstimate e = estimate(l);
  REQUIRE(e.cached);
  CHECK(e.cached->limiting == "CPU decode");
  CHECK(e.cached->cpu_utilisation == Approx(1).epsilon(1e-3));
  CHECK(e.data_stall_s > 2 * l.gpu_step_s);
  const InputAdvice advice =
      advise_input(testing::shipped_catalog(), *l.scenario, l.configuration, e);
  CHECK(advice.vcpus_needed > 128);  // more than the whole ebmgn7e node
  CHECK(advice.stall_with_cpu_advice_s <= 0.01 * l.gpu_step_s);
}

// The pipeline the CPU advice sizes: the estimate's, with storage free so that only CPU counts.
InputPipelineSpec cpu_side(const InputEstimate& e) {
  InputPipelineSpec spec = e.setup.spec;
  spec.from_storage = !e.cached.has_value();
  spec.storage_bytes_per_s = std::numeric_limits<double>::infinity();
  spec.storage_iops = std::numeric_limits<double>::infinity();
  return spec;
}

TEST_CASE("the CPU advice keeps up, and fewer workers stall at least as workers' throughput says") {
  const LoadedJob l = load_shipped("scenarios/input/resnet50-imagenet-32vcpu.textproto");
  const InputEstimate e = estimate(l);
  const InputAdvice advice =
      advise_input(testing::shipped_catalog(), *l.scenario, l.configuration, e);
  REQUIRE_FALSE(advice.cpu_beyond_catalog);
  InputPipelineSpec spec = cpu_side(e);
  const int advised_vcpus = advice.vcpus_needed - spec.loaders;
  const double step = spec.gpu_step_s;
  // Every count from one worker per GPU, brute force, on the advised vCPUs and beyond the advice
  // with a vCPU per worker, as the search adds them: the stall never grows with workers; below
  // the advice a worker's batch takes longer than the workers' share of steps (so the search may
  // start at that bound); at the advice the stall is what the advice says.
  double previous = std::numeric_limits<double>::infinity();
  for (int w = 1; w <= advice.workers_per_gpu_needed + 4; ++w) {
    spec.workers_per_loader = w;
    spec.worker_vcpus = w <= advice.workers_per_gpu_needed
                            ? advised_vcpus
                            : std::max(advised_vcpus, w * spec.loaders);
    const double stall = simulate_input_pipeline(spec).stall_per_step_s;
    INFO("workers per GPU " << w);
    CHECK(stall <= previous);
    const double worker_bound = spec.batch_samples * spec.cpu_s_per_sample / w - step;
    if (w < advice.workers_per_gpu_needed) {
      CHECK(stall >= worker_bound * (1 - 1e-9));
      CHECK(stall > 0);
    }
    if (w == advice.workers_per_gpu_needed) CHECK(stall == advice.stall_with_cpu_advice_s);
    if (w >= advice.workers_per_gpu_needed) CHECK(stall <= 0.01 * step);
    previous = stall;
  }
}

TEST_CASE("beyond the catalog's largest instance the CPU advice is its lower bound, unsimulated") {
  const LoadedJob l = load_shipped("scenarios/input/resnet50-imagenet-32vcpu.textproto");
  InputEstimate e = estimate(l);
  const InputAdvice shipped =
      advise_input(testing::shipped_catalog(), *l.scenario, l.configuration, e);
  CHECK_FALSE(shipped.cpu_beyond_catalog);
  // JPEGs 100x ImageNet's: a step's decode needs 100x the CPU seconds.
  e.setup.spec.cpu_s_per_sample *= 100;
  const InputAdvice advice =
      advise_input(testing::shipped_catalog(), *l.scenario, l.configuration, e);
  CHECK(advice.cpu_beyond_catalog);
  CHECK(advice.largest_catalog_instance == "onprem.gh200-4");
  CHECK(advice.largest_catalog_vcpus == 288);
  const InputPipelineSpec& spec = e.setup.spec;
  const double cpu_s_per_step = spec.loaders * spec.batch_samples * spec.cpu_s_per_sample;
  CHECK(advice.vcpus_needed ==
        static_cast<int>(std::ceil(cpu_s_per_step / spec.gpu_step_s)) + spec.loaders);
  CHECK(advice.workers_per_gpu_needed ==
        static_cast<int>(std::ceil(cpu_s_per_step / spec.loaders / spec.gpu_step_s)));
  CHECK(advice.vcpus_needed - spec.loaders > 99 * (shipped.vcpus_needed - spec.loaders));
  CHECK(advice.stall_with_cpu_advice_s == 0);  // not known, so not claimed
  // What the job's own vCPUs give is still simulated, and it stalls far more than before.
  CHECK(advice.stall_within_vcpus_s > 50 * shipped.stall_within_vcpus_s);
}

TEST_CASE("with 12 workers per GPU on 128 vCPUs the workers limit, one per vCPU stalls less") {
  const LoadedJob l = load_shipped("scenarios/input/resnet50-imagenet-essd-pl1.textproto");
  const InputEstimate e = estimate(l);
  REQUIRE(e.cached);
  CHECK(e.cached->limiting == "dataloader workers");
  const InputAdvice advice =
      advise_input(testing::shipped_catalog(), *l.scenario, l.configuration, e);
  CHECK(advice.workers_per_gpu_within_vcpus == (128 - 8) / 8);
  CHECK(advice.stall_within_vcpus_s < e.cached->stall_per_step_s);
  CHECK(advice.stall_within_vcpus_s > 0);  // 120 vCPUs still cannot feed 8 A100s
}

TEST_CASE("the data stall enters the step, its throughput and MFU, and names the stage") {
  const LoadedJob l = load_shipped("scenarios/input/resnet50-imagenet-32vcpu.textproto");
  Evaluator evaluator(testing::shipped_catalog(), *l.scenario);
  const StepResult step = *evaluator.evaluate(l.configuration).step;
  CHECK(step.step_s == Approx(l.gpu_step_s + step.data_stall_s).epsilon(1e-12));
  CHECK(step.data_stall_s == Approx(estimate(l).data_stall_s).epsilon(1e-12));
  CHECK(step.samples_per_s == Approx(2048 / step.step_s).epsilon(1e-9));
  CHECK(step.limiting == "CPU decode");
}

TEST_CASE("the data stall is drawn before the step's first forward, the step after it") {
  const LoadedJob l = load_shipped("scenarios/input/resnet50-imagenet-32vcpu.textproto");
  Evaluator evaluator(testing::shipped_catalog(), *l.scenario);
  Timeline traced;
  const StepResult step = *evaluator.evaluate(l.configuration, &traced).step;
  REQUIRE(step.data_stall_s > 0);
  REQUIRE(traced.spans().size() > 1);
  const TimelineSpan& wait = traced.spans().front();
  CHECK(wait.group == "input pipeline (every node alike)");
  CHECK(wait.track == "data loader");
  CHECK(wait.name == "data stall: waiting for the batches (CPU decode limits)");
  CHECK(wait.start == Picoseconds(0));
  CHECK(wait.end == Picoseconds::from_seconds(step.data_stall_s));
  Picoseconds first = Picoseconds::max(), last(0);
  for (size_t i = 1; i < traced.spans().size(); ++i) {
    CHECK(traced.spans()[i].group != wait.group);
    first = std::min(first, traced.spans()[i].start);
    last = std::max(last, traced.spans()[i].end);
  }
  CHECK(first == wait.end);  // the step's first forward waits for the batch
  CHECK(last.seconds() == Approx(step.step_s).epsilon(1e-12));
}

TEST_CASE("a timeline begun with a wait: every span later by it, the wait first from 0") {
  Timeline t;
  t.add("stage 0", "compute", "forward mb 0", Picoseconds(0), Picoseconds(5));
  t.add("stage 1", "compute", "forward mb 0", Picoseconds(7), Picoseconds(9));
  t.begin_with_wait("input", "data loader", "stall", Picoseconds(3));
  REQUIRE(t.spans().size() == 3);
  CHECK(t.spans()[0].name == "stall");
  CHECK(t.spans()[0].start == Picoseconds(0));
  CHECK(t.spans()[0].end == Picoseconds(3));
  CHECK(t.spans()[1].start == Picoseconds(3));
  CHECK(t.spans()[1].end == Picoseconds(8));
  CHECK(t.spans()[2].start == Picoseconds(10));
  CHECK(t.spans()[2].end == Picoseconds(12));
}

TEST_CASE("a PL0 disk limits the first epoch, from the page cache the disk no longer matters") {
  const InputEstimate pl0 =
      estimate(load_shipped("scenarios/input/resnet50-imagenet-essd-pl0.textproto"));
  const InputEstimate pl3 =
      estimate(load_shipped("scenarios/input/resnet50-imagenet-essd-pl3.textproto"));
  // 113 KB JPEGs: PL0's 150 MB/s at 200 GiB binds before its 4200 IOPS.
  CHECK(pl0.from_storage.limiting == "storage throughput");
  CHECK(pl0.from_storage.stall_per_step_s > pl3.from_storage.stall_per_step_s);
  REQUIRE(pl0.cached);
  REQUIRE(pl3.cached);
  // Equal up to the rounding of the GPU step recovered from the step with its stall.
  CHECK(pl0.cached->stall_per_step_s == Approx(pl3.cached->stall_per_step_s).epsilon(1e-9));
  CHECK(pl0.cached->limiting != "storage throughput");
}

TEST_CASE("small files on PL0 are IOPS-bound at exactly the disk's IOPS, shards lift it") {
  const LoadedJob l = load_shipped("tests/data/input/thumbnails_on_pl0.textproto");
  const InputEstimate e = estimate(l);
  CHECK(e.from_storage.limiting == "storage IOPS");
  // PL0 at 800 GiB: min{1800 + 12 x 800, 10000} = 10000 IOPS, one request per 12 kB JPEG.
  CHECK(2048 / e.from_storage.step_period_s == Approx(10000).epsilon(1e-6));
  const InputAdvice advice =
      advise_input(testing::shipped_catalog(), *l.scenario, l.configuration, e);
  REQUIRE(advice.stall_with_shards_s);
  CHECK(*advice.stall_with_shards_s < e.from_storage.stall_per_step_s);
}

TEST_CASE("packing into shards is not advised where the storage's throughput binds") {
  // 113 KB JPEGs on PL0: its 150 MB/s binds, not its IOPS, so shards read the same bytes as
  // slowly, and the advice leaves packing out.
  const LoadedJob l = load_shipped("scenarios/input/resnet50-imagenet-essd-pl0.textproto");
  const InputEstimate e = estimate(l);
  REQUIRE(e.from_storage.limiting == "storage throughput");
  REQUIRE(e.from_storage.stall_per_step_s > 0.5);
  const InputAdvice advice =
      advise_input(testing::shipped_catalog(), *l.scenario, l.configuration, e);
  CHECK_FALSE(advice.stall_with_shards_s);
}

TEST_CASE("LLM pre-training from pre-tokenized shards never waits for data") {
  const LoadedJob l = load_shipped("scenarios/input/llm-pretrain-tokenized-shards.textproto");
  const InputEstimate e = estimate(l);
  CHECK(e.from_storage.stall_per_step_s == 0);
  CHECK(e.data_stall_s == 0);
  CHECK(e.limiting.empty());
}

TEST_CASE("a shared file system's throughput is split between the nodes reading it") {
  const LoadedJob one = load_shipped("scenarios/input/resnet50-imagenet-nas.textproto");
  const LoadedJob four = load_shipped("scenarios/input/resnet50-imagenet-nas.textproto", 4);
  const InputSetup a =
      input_setup(testing::shipped_catalog(), *one.scenario, one.configuration, one.gpu_step_s);
  const InputSetup b =
      input_setup(testing::shipped_catalog(), *four.scenario, four.configuration, four.gpu_step_s);
  CHECK(b.spec.storage_bytes_per_s == Approx(a.spec.storage_bytes_per_s / 4));
  CHECK(b.spec.storage_iops == Approx(a.spec.storage_iops / 4));
}

// The rate one node's GPUs read from storage: samples per step over the step, times their bytes.
double node_read_bytes_per_s(const InputEstimate& e) {
  const InputPipelineSpec& spec = e.setup.spec;
  return spec.loaders * spec.batch_samples / spec.gpu_step_s * spec.read_bytes_per_sample;
}

// The job of `path` on its dataset volume sized as `advised` says: its capacity, and the
// throughput and IOPS bought where the advice buys them. Held here, as the job points at it.
struct AdviceApplied {
  LoadedJob job;
  schema::StorageVolume volume;
};
std::unique_ptr<AdviceApplied> apply_advice(const std::string& path,
                                            const StorageOption& advised) {
  auto a = std::make_unique<AdviceApplied>();
  a->job = load_shipped(path);
  a->volume = *a->job.configuration.dataset_storage;
  a->volume.set_capacity_gib(advised.capacity_gib);
  if (advised.provisioned_throughput_mb_per_s > 0)
    a->volume.set_provisioned_throughput_mb_per_s(advised.provisioned_throughput_mb_per_s);
  if (advised.provisioned_iops > 0) a->volume.set_provisioned_iops(advised.provisioned_iops);
  a->job.configuration.dataset_storage = &a->volume;
  return a;
}

const StorageOption* option(const InputAdvice& advice, const std::string& tier) {
  for (const StorageOption& o : advice.other_tiers) {
    if (o.tier == tier) return &o;
  }
  return nullptr;
}

TEST_CASE("every tier the advice names is sized for the nodes that read one volume of it") {
  const Catalog& catalog = testing::shipped_catalog();
  // 4 nodes, each with its own PL1 disk: a NAS file system must feed all 4 (it fed 1 of them).
  const LoadedJob l = load_shipped("scenarios/input/resnet50-imagenet-essd-pl1.textproto", 4);
  const InputEstimate e = estimate(l);
  const double node = node_read_bytes_per_s(e);
  const InputAdvice advice = advise_input(catalog, *l.scenario, l.configuration, e);
  CHECK(advice.volume_readers == 1);
  CHECK(advice.read_bytes_per_s_needed == Approx(node));
  const StorageOption* nas = option(advice, "aliyun.nas.performance");
  REQUIRE(nas);
  const schema::StorageTier& tier = *catalog.storage().find(nas->tier)->value;
  CHECK(storage_performance(tier, nas->capacity_gib, l.configuration.instance)
            .throughput_bytes_per_s >= 4 * node);
  // The smallest such capacity, to 1 GiB.
  CHECK(storage_performance(tier, nas->capacity_gib - 1, l.configuration.instance)
            .throughput_bytes_per_s < 4 * node);

  // The other way: 4 nodes on one NAS; a PL3 disk per node needs only one node's rate, which it
  // gives (it was left out, sized for all 4 nodes' 11 GB/s beyond its 4 GB/s).
  const LoadedJob n = load_shipped("scenarios/input/resnet50-imagenet-nas.textproto", 4);
  const InputEstimate f = estimate(n);
  const InputAdvice shared = advise_input(catalog, *n.scenario, n.configuration, f);
  CHECK(shared.volume_readers == 4);
  CHECK(shared.read_bytes_per_s_needed == Approx(4 * node_read_bytes_per_s(f)));
  const StorageOption* pl3 = option(shared, "aliyun.essd.pl3");
  REQUIRE(pl3);
  const schema::StorageTier& essd = *catalog.storage().find("aliyun.essd.pl3")->value;
  CHECK(storage_performance(essd, pl3->capacity_gib, n.configuration.instance)
            .throughput_bytes_per_s >= node_read_bytes_per_s(f));
}

TEST_CASE("the advised capacities are ones the tier comes in, and applied they feed the GPUs") {
  const Catalog& catalog = testing::shipped_catalog();
  const LoadedJob l = load_shipped("tests/data/input/images_on_fsx_2400gib.textproto");
  const InputEstimate e = estimate(l);
  REQUIRE(e.from_storage.limiting == "storage throughput");
  const InputAdvice advice = advise_input(catalog, *l.scenario, l.configuration, e);
  // 125 MB/s per TiB: the GPUs' rate over 125/1024 MB/s per GiB, up to the next 2,400 GiB (it
  // was advised to the GiB, 19,208, which the volume's checks refuse).
  const double gib = advice.read_bytes_per_s_needed / 1e6 / (125.0 / 1024);
  REQUIRE(advice.volume_needed);
  CHECK(advice.volume_needed->capacity_gib == std::ceil(gib / 2400) * 2400);
  for (const StorageOption& o : advice.other_tiers) {
    const schema::StorageTier& tier = *catalog.storage().find(o.tier)->value;
    if (!tier.has_capacity_increment()) continue;
    INFO(o.tier << " at " << o.capacity_gib);
    const double step = tier.capacity_increment().step_gib();
    CHECK((o.capacity_gib == tier.capacity_min_gib() ||
           std::fmod(o.capacity_gib, step) == 0));
  }
  // Applied, the storage no longer stalls the first epoch: what is left is the workers'.
  const auto applied =
      apply_advice("tests/data/input/images_on_fsx_2400gib.textproto", *advice.volume_needed);
  const InputEstimate fed = estimate(applied->job);
  CHECK(fed.from_storage.storage_utilisation < 1);
  CHECK(fed.from_storage.limiting != "storage throughput");
}

TEST_CASE("gp3 feeds the GPUs with throughput and IOPS bought above its baseline, as advised") {
  const Catalog& catalog = testing::shipped_catalog();
  const LoadedJob l = load_shipped("tests/data/input/shards_on_gp3_baseline.textproto");
  const InputEstimate e = estimate(l);
  REQUIRE(e.from_storage.limiting == "storage throughput");
  const InputAdvice advice = advise_input(catalog, *l.scenario, l.configuration, e);
  CHECK_FALSE(advice.volume_enough);
  // It said "cannot at any capacity": gp3's baseline does not grow with capacity.
  REQUIRE(advice.volume_needed);
  const StorageOption& gp3 = *advice.volume_needed;
  // The dataset's 24 GiB; the GPUs' MB/s, and IOPS for both their requests and that throughput
  // at gp3's 0.262144 MB/s per IOPS.
  const double mb_per_s = std::ceil(advice.read_bytes_per_s_needed / 1e6);
  CHECK(gp3.capacity_gib == std::ceil(e.setup.dataset_bytes / kBytesPerGibibyte));
  CHECK(gp3.provisioned_throughput_mb_per_s == mb_per_s);
  CHECK(gp3.provisioned_iops ==
        std::max(std::ceil(advice.read_iops_needed), std::ceil(mb_per_s / 0.262144)));
  // Applied, the storage no longer limits, and the advice finds the volume enough.
  const auto applied = apply_advice("tests/data/input/shards_on_gp3_baseline.textproto", gp3);
  const InputEstimate fed = estimate(applied->job);
  CHECK(fed.from_storage.limiting != "storage throughput");
  CHECK(fed.from_storage.stall_per_step_s < e.from_storage.stall_per_step_s);
  const InputAdvice after = advise_input(catalog, *applied->job.scenario, applied->job.configuration, fed);
  CHECK(after.volume_enough);
  CHECK(after.other_tiers.empty());
}

}  // namespace
}  // namespace clustersim
