// Remedies for a data stall, each checked on the simulated pipeline.
#include "sim/input/input_advice.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/hw/storage_model.h"
#include "sim/util/units.h"

namespace clustersim {
namespace {

namespace s = schema;

// A remedy "removes" the stall when what is left is below this fraction of the GPU step, and is
// advised at all only when it lowers the stall by at least as much.
constexpr double kNegligibleStall = 0.01;
constexpr int kMaxRefinements = 16;

// A capacity of `tier` at least `gib` that it comes in (capacity_increment: FSx for Lustre's
// 1,200 GiB or a multiple of 2,400; "19208 GiB" was advised, which the volume's checks refuse),
// to 1 GiB. Limits grow with capacity, so the next one up is enough too.
double capacity_it_comes_in(const s::StorageTier& tier, double gib) {
  gib = std::ceil(gib);
  if (!tier.has_capacity_increment()) return gib;
  const double step = tier.capacity_increment().step_gib();
  const double least = tier.has_capacity_min_gib() ? tier.capacity_min_gib() : step;
  return gib <= least ? least : std::ceil(gib / step * (1 - 1e-9)) * step;
}

// The volume of `tier` from `low_gib` up that gives the throughput and IOPS asked on `instance`
// (limits grow with capacity): the smallest capacity that does alone, else the least capacity
// with the throughput and IOPS bought above its baseline where the tier sells them (gp3, whose
// baseline does not grow with capacity, said "cannot at any capacity" of a volume it fed), within
// the tier's ceilings, IOPS per GiB and throughput per IOPS. Only a tier whose entry bounds the
// IOPS it sells per GiB is advised to buy: ESSD AutoPL's constant ceilings need 256 GiB or more
// (its entry's schema limitation), and 135 GiB with 2,834 MB/s bought was advised. Absent when
// neither can.
std::optional<StorageOption> volume_for(const s::StorageTier& tier,
                                        const s::InstanceType& instance, double low_gib,
                                        double bytes_per_s, double iops) {
  const double high_gib = tier.has_capacity_max_gib() ? tier.capacity_max_gib() : 1048576;
  low_gib = std::max(low_gib, tier.capacity_min_gib());
  if (low_gib > high_gib) return std::nullopt;
  const auto enough = [&](const StoragePerformance& p) {
    return p.throughput_bytes_per_s >= bytes_per_s && p.iops >= iops;
  };
  const auto enough_at = [&](double gib) {
    return enough(storage_performance(tier, gib, &instance));
  };
  if (enough_at(high_gib)) {
    double gib = high_gib;
    if (enough_at(low_gib)) {
      gib = low_gib;
    } else {
      double lo = low_gib;  // enough_at(gib), !enough_at(lo)
      while (gib - lo > 1) {
        const double mid = 0.5 * (lo + gib);
        (enough_at(mid) ? gib : lo) = mid;
      }
    }
    gib = capacity_it_comes_in(tier, gib);
    if (gib > high_gib) return std::nullopt;
    return StorageOption{tier.name(), gib};
  }
  if (!tier.has_iops_per_gib()) return std::nullopt;
  s::StorageVolume bought;
  bought.set_tier(tier.name());
  double gib = capacity_it_comes_in(tier, low_gib);
  const StoragePerformance baseline = storage_performance(tier, gib, nullptr);
  const double mb_per_s = std::ceil(bytes_per_s / 1e6);
  double want_iops = std::ceil(iops);
  if (tier.has_throughput_per_iops()) {
    want_iops =
        std::max(want_iops, std::ceil(mb_per_s / tier.throughput_per_iops().max_mb_per_s()));
  }
  if (mb_per_s > baseline.throughput_bytes_per_s / 1e6) {
    if (!tier.has_provisioned_max_throughput_mb_per_s() ||
        mb_per_s > tier.provisioned_max_throughput_mb_per_s()) {
      return std::nullopt;
    }
    bought.set_provisioned_throughput_mb_per_s(mb_per_s);
  }
  if (want_iops > baseline.iops) {
    if (!tier.has_provisioned_max_iops() || want_iops > tier.provisioned_max_iops()) {
      return std::nullopt;
    }
    bought.set_provisioned_iops(want_iops);
    gib = capacity_it_comes_in(tier, std::max(gib, want_iops / tier.iops_per_gib().max()));
  }
  bought.set_capacity_gib(gib);
  if (gib > high_gib || !enough(volume_performance(tier, bought, &instance))) return std::nullopt;
  return StorageOption{tier.name(), gib, bought.provisioned_throughput_mb_per_s(),
                       bought.provisioned_iops()};
}

// The instance of `catalog` with the most vCPUs (the first in name order among equals).
const s::InstanceType* largest_instance(const Catalog& catalog) {
  const s::InstanceType* largest = nullptr;
  for (const auto& [name, entry] : catalog.instances().all()) {
    if (!largest || entry.value->vcpus() > largest->vcpus()) largest = entry.value;
  }
  return largest;
}

// Adds workers (and the vCPUs they run on) until the stall is negligible, from the lower bound
// of both; nothing is simulated when that bound is beyond `largest` (InputAdvice).
void advise_cpu(const InputEstimate& e, const s::InstanceType& largest, InputAdvice* advice) {
  InputPipelineSpec spec = e.setup.spec;
  spec.from_storage = !e.cached.has_value();
  // Free storage so that only the CPU side is sized here.
  spec.storage_bytes_per_s = std::numeric_limits<double>::infinity();
  spec.storage_iops = std::numeric_limits<double>::infinity();
  const double step = spec.gpu_step_s;
  const double cpu_s_per_step = spec.loaders * spec.batch_samples * spec.cpu_s_per_sample;
  const double worker_s_per_batch =
      spec.batch_samples *
      (spec.cpu_s_per_sample +
       (spec.from_storage ? spec.read_latency_s * spec.read_requests_per_sample : 0));
  spec.worker_vcpus = std::max(1, static_cast<int>(std::ceil(cpu_s_per_step / step)));
  spec.workers_per_loader = std::max(1, static_cast<int>(std::ceil(worker_s_per_batch / step)));
  advice->largest_catalog_vcpus = largest.vcpus();
  advice->largest_catalog_instance = largest.name();
  const int processes = std::max(spec.worker_vcpus, spec.workers_per_loader * spec.loaders);
  advice->cpu_beyond_catalog = processes + spec.loaders > largest.vcpus();
  if (!advice->cpu_beyond_catalog) {
    InputPipelineRun run = simulate_input_pipeline(spec);
    for (int i = 0; i < kMaxRefinements && run.stall_per_step_s > kNegligibleStall * step; ++i) {
      spec.workers_per_loader += 1;
      spec.worker_vcpus = std::max(spec.worker_vcpus, spec.workers_per_loader * spec.loaders);
      run = simulate_input_pipeline(spec);
    }
    advice->stall_with_cpu_advice_s = run.stall_per_step_s;
  }
  advice->vcpus_needed = spec.worker_vcpus + spec.loaders;
  advice->workers_per_gpu_needed = spec.workers_per_loader;

  InputPipelineSpec own = e.setup.spec;
  own.from_storage = !e.cached.has_value();
  own.workers_per_loader = std::max(1, own.worker_vcpus / own.loaders);
  advice->workers_per_gpu_within_vcpus = own.workers_per_loader;
  advice->stall_within_vcpus_s = simulate_input_pipeline(own).stall_per_step_s;
}

}  // namespace

InputAdvice advise_input(const Catalog& catalog, const LoadedScenario& scenario,
                         const Configuration& c, const InputEstimate& e) {
  InputAdvice advice;
  advise_cpu(e, *largest_instance(catalog), &advice);

  const InputPipelineSpec& spec = e.setup.spec;
  const s::Dataset& dataset = scenario.scenario().job().dataset();
  const s::StorageVolume& volume = *c.dataset_storage;
  const s::StorageTier& tier = *catalog.storage().find(volume.tier())->value;
  // Nodes reading one volume of a tier: all of them from a shared file system, one from a block
  // volume (each node has its own). Every candidate tier is sized for its own share: a file
  // system advised from a block volume's per-node rate fed 1/16th of 16 nodes.
  const auto readers = [&](const s::StorageTier& t) {
    return t.shared_across_nodes() ? static_cast<double>(c.nodes) : 1.0;
  };
  const double node_samples_per_s = spec.loaders * spec.batch_samples / spec.gpu_step_s;
  const double node_bytes_per_s = node_samples_per_s * spec.read_bytes_per_sample;
  const double node_iops = node_samples_per_s * spec.read_requests_per_sample;
  const double volume_share = readers(tier);
  advice.volume_readers = static_cast<int>(volume_share);
  advice.read_bytes_per_s_needed = node_bytes_per_s * volume_share;
  advice.read_iops_needed = node_iops * volume_share;
  advice.read_bytes_per_s_available = spec.storage_bytes_per_s * volume_share;
  advice.read_iops_available = spec.storage_iops * volume_share;
  const double dataset_gib = e.setup.dataset_bytes / kBytesPerGibibyte;
  advice.volume_needed = volume_for(tier, *c.instance, dataset_gib,
                                    advice.read_bytes_per_s_needed, advice.read_iops_needed);
  // The volume as the scenario has it, with what it bought.
  advice.volume_enough = advice.read_bytes_per_s_available >= advice.read_bytes_per_s_needed &&
                         advice.read_iops_available >= advice.read_iops_needed;
  for (const auto& [name, entry] : catalog.storage().all()) {
    const s::StorageTier& other = *entry.value;
    if (advice.volume_enough || name == tier.name() || other.provider() != tier.provider())
      continue;
    // A tier without a throughput figure cannot be sized (and a shared one is refused).
    if (!other.has_throughput_mb_per_s()) continue;
    const std::optional<StorageOption> option =
        volume_for(other, *c.instance, dataset_gib, node_bytes_per_s * readers(other),
                   node_iops * readers(other));
    if (option) advice.other_tiers.push_back(*option);
  }

  if (dataset.layout() == s::FILE_PER_SAMPLE) {
    InputPipelineSpec shards = spec;
    shards.read_requests_per_sample = spec.read_bytes_per_sample / kReadRequestBytes;
    shards.read_latency_s = 0;
    const double packed = simulate_input_pipeline(shards).stall_per_step_s;
    if (e.from_storage.stall_per_step_s - packed >= kNegligibleStall * spec.gpu_step_s) {
      advice.stall_with_shards_s = packed;
    }
  }

  const s::InstanceType& instance = *c.instance;
  advice.host_memory_gib = instance.host_memory_gib();
  advice.gpu_memory_gib = total_gpu_memory_gib(catalog, instance);
  advice.host_memory_low = advice.host_memory_gib < kHostToGpuMemoryRule * advice.gpu_memory_gib;
  return advice;
}

}  // namespace clustersim
