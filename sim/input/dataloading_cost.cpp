// Per-sample CPU cost of a data-loader worker, and the checks of the catalog entries behind it.
#include "sim/input/dataloading_cost.h"

#include "sim/io/entry_checks.h"
#include "sim/util/lower_case.h"

namespace clustersim {
namespace {

namespace s = schema;

constexpr double kMinReferenceJpegBytes = 1 << 10;
constexpr double kMaxReferenceJpegBytes = 1 << 26;

// How much longer than at the entry's reference clock a thread of `instance` takes.
double clock_factor(const s::DataloadingCost& cost, const s::InstanceType& instance) {
  if (!instance.cpu().has_clock_ghz()) return 1;
  return cost.reference_clock_ghz() / instance.cpu().clock_ghz();
}

}  // namespace

void check_dataloading_cost(const FieldChecker& entry) {
  entry.require("name");
  entry.require("cpu_model_match");
  entry.require("reference_clock_ghz") && entry.clock_ghz("reference_clock_ghz");
  // The decode rate is of JPEGs of this mean size, and a sample's decode scales with its size
  // over it: from a thumbnail's 1 KiB to a 100-megapixel photograph's tens of MiB (ImageNet's
  // 132 KiB). A reference of one byte made an ImageNet JPEG 113,044 references to decode, and the
  // input command's advice, whose work grows with a sample's CPU time, ran past a minute; one of
  // 1e300 decoded every JPEG in no time.
  entry.require_positive("reference_jpeg_bytes") &&
      entry.in_range("reference_jpeg_bytes", kMinReferenceJpegBytes, kMaxReferenceJpegBytes);
  // Rates within FieldChecker's bounds: a JPEG decode rate of 1e-300 per second made a sample
  // outlast the clock the simulation spans.
  for (const char* field : {"jpeg_decode_per_s", "random_resized_crop_per_s",
                            "horizontal_flip_per_s", "normalize_per_s", "tokenize_mb_per_s",
                            "memcpy_gb_per_s"}) {
    entry.require_rate(field);
  }
  if (entry.require_positive("worker_efficiency") && entry.number("worker_efficiency") > 1) {
    entry.error("worker_efficiency", "must be <= 1 (a worker is at best as fast as one thread)");
  }
  check_source(entry);
}

const s::DataloadingCost* find_dataloading_cost(const Catalog& catalog,
                                                const s::InstanceType& instance) {
  if (!instance.cpu().has_model()) return nullptr;
  const std::string model = lower_case(instance.cpu().model());
  for (const auto& [name, entry] : catalog.dataloading_costs().all()) {
    for (const std::string& match : entry.value->cpu_model_match()) {
      if (model.find(lower_case(match)) != std::string::npos) return entry.value;
    }
  }
  return nullptr;
}

double host_copy_s(const s::DataloadingCost& cost, const s::InstanceType& instance, double bytes) {
  return bytes / (cost.memcpy_gb_per_s() * 1e9) * clock_factor(cost, instance);
}

SampleCpuCost sample_cpu_cost(const s::DataloadingCost& cost, const s::InstanceType& instance,
                              const s::Dataset& dataset, double tensor_bytes) {
  // One thread's seconds at the reference clock; the collate copy into the batch is always paid.
  double thread_s = tensor_bytes / (cost.memcpy_gb_per_s() * 1e9);
  SampleCpuCost result;
  switch (dataset.format()) {
    case s::JPEG_IMAGE:
      // Decode time grows with the compressed size (entropy decoding dominates); the crop, flip
      // and normalize work on the model's input size.
      thread_s +=
          dataset.mean_sample_bytes() / cost.reference_jpeg_bytes() / cost.jpeg_decode_per_s() +
          1 / cost.random_resized_crop_per_s() + 1 / cost.horizontal_flip_per_s() +
          1 / cost.normalize_per_s();
      result.stage = "CPU decode";
      break;
    case s::RAW_TEXT:
      thread_s += dataset.mean_sample_bytes() / (cost.tokenize_mb_per_s() * 1e6);
      result.stage = "CPU tokenize";
      break;
    default:
      result.stage = "CPU collate";
      break;
  }
  result.worker_s = thread_s * clock_factor(cost, instance) / cost.worker_efficiency();
  return result;
}

}  // namespace clustersim
