// Checks of GPU, instance-type, storage-tier and fabric entries.
#include "sim/io/entry_checks.h"

#include <algorithm>
#include <set>

#include "sim/hw/sustained_fraction.h"
#include "sim/io/schema/catalog.pb.h"
#include "sim/util/closest_name.h"
#include "sim/util/lower_case.h"
#include "sim/util/number_format.h"

namespace clustersim {
namespace {

namespace s = schema;

const s::Gpu& as_gpu(const FieldChecker& c) { return static_cast<const s::Gpu&>(c.message()); }

// Upper bounds of a GPU's counts and power, a few times the largest built, so that 2^31 SMs or
// 1e308 W is a located error rather than a GPU. The largest in topologies/gpus.textproto: 160 SMs
// (B300, GB300; AMD's MI300X data sheet gives 304 compute units), 18 NVLink links (H100 to
// GB300), 16 PCIe lanes (the widest link the PCIe 1.0-5.0 base specifications define is x32),
// 1,200 W (GB200). The SM count sets the SM share of expert kernels and reserved SMs, the lanes
// NCCL's choice of paths; the links and the TDP are listed only.
constexpr double kMaxStreamingMultiprocessors = 1024;
constexpr double kMaxGpuLinks = 72;
constexpr double kMaxPcieLanes = 32;
constexpr double kMaxGpusPerServer = 16;  // an HGX-2's, the most of one host
constexpr double kMaxTdpW = 5000;

// The longest spot interruption notice a provider entry may state: an hour, twelve times the
// longest shipped (Alibaba Cloud's five minutes), so that 1e300 s is a located error, not a notice.
constexpr double kMaxSpotInterruptionNoticeSeconds = 3600;

// A measured matmul rate above the GPU's peak for the same precision is a transcription error.
void check_measured_matmul(const FieldChecker& gpu) {
  if (!gpu.has("measured_matmul") || !gpu.has("peak_tflops")) return;
  const FieldChecker measured = gpu.child("measured_matmul");
  const s::PeakTflops& peak = as_gpu(gpu).peak_tflops();
  const struct {
    const char* field;
    bool has_peak;
    double peak;
  } rows[] = {
      {"bf16_tflops", peak.has_bf16(), peak.bf16()},
      {"fp16_tflops", peak.has_fp16(), peak.fp16()},
      {"fp8_tflops", peak.has_fp8(), peak.fp8()},
  };
  for (const auto& row : rows) {
    if (!measured.has(row.field) || !measured.rate(row.field)) continue;
    if (!row.has_peak) {
      measured.error(row.field, "the GPU has no peak_tflops for this precision");
    } else if (measured.number(row.field) > row.peak) {
      measured.error(row.field, "measured " + format_number(measured.number(row.field)) +
                                    " exceeds the peak of " + format_number(row.peak));
    }
  }
}

std::string provider_prefix(s::Provider provider) {
  switch (provider) {
    case s::AWS:
      return "aws.";
    case s::ALIYUN:
      return "aliyun.";
    case s::TENCENT:
      return "tencent.";
    case s::ONPREM:
      return "onprem.";
    case s::HUAWEICLOUD:
      return "huaweicloud.";
    default:
      return "";
  }
}

void check_limit(const FieldChecker& storage, const char* field) {
  if (!storage.has(field)) return;
  const FieldChecker limit = storage.child(field);
  // Rates (a cap of 1e-300 MB/s made a read take forever, an internal error); what they give at
  // a volume's capacity is checked where a scenario names one (input_checks.cpp).
  for (const char* part : {"base", "per_gib", "floor"}) {
    limit.in_range(part, 0, FieldChecker::kMaxRate);
  }
  limit.rate("cap");
  if (limit.has("floor") && limit.has("cap") && limit.number("floor") > limit.number("cap")) {
    limit.error("floor", "must not exceed cap (" + format_number(limit.number("cap")) + ")");
  }
  const bool formula = limit.has("base") || limit.has("per_gib");
  if (formula == (limit.size("step") > 0)) {
    limit.error_here("give either a formula (base, per_gib) or a step table, not both or neither");
  }
  double previous = -1;
  for (int i = 0; i < limit.size("step"); ++i) {
    const FieldChecker step = limit.child("step", i);
    if (step.require("from_gib") && step.non_negative("from_gib")) {
      if (step.number("from_gib") <= previous) step.error("from_gib", "steps must ascend");
      previous = step.number("from_gib");
    }
    step.require("value") && step.rate("value");
  }
}

// A multi-node NVLink domain is whole nodes of NVSwitch-joined GPUs (or of HCCS-joined NPUs on a
// supernode's Unified Bus switches).
void check_nvlink_domain(const FieldChecker& instance) {
  const auto& m = static_cast<const s::InstanceType&>(instance.message());
  if (!m.has_nvlink_domain_gpus() || !instance.at_least("nvlink_domain_gpus", 1)) return;
  if (m.has_gpu_interconnect() && m.gpu_interconnect() != s::NVSWITCH &&
      m.gpu_interconnect() != s::HCCS) {
    instance.error("nvlink_domain_gpus", "needs gpu_interconnect NVSWITCH or HCCS, not " +
                                             s::GpuInterconnect_Name(m.gpu_interconnect()));
  } else if (m.gpu_count() > 0 && m.nvlink_domain_gpus() % m.gpu_count() != 0) {
    instance.error("nvlink_domain_gpus", std::to_string(m.nvlink_domain_gpus()) +
                                             " GPUs do not divide into nodes of " +
                                             std::to_string(m.gpu_count()) + " (gpu_count)");
  }
}

// Priors stand in for fitted efficiencies: they must say so (a confidence) and there must be some.
void check_efficiency_source(const FieldChecker& gpu) {
  if (!gpu.has("efficiency_source")) return;
  const FieldChecker source = gpu.child("efficiency_source");
  source.require("citation");
  source.require_enum("confidence");
  bool any = false;
  for (const char* f :
       {"matmul_efficiency", "memory_efficiency_fraction", "flash_attention_fraction",
        "attention_efficiency", "sustained_compute_fraction"}) {
    any = any || gpu.has(f);
  }
  if (!any) {
    gpu.error("efficiency_source",
              "describes efficiencies the GPU does not give (matmul_efficiency, "
              "memory_efficiency_fraction, flash_attention_fraction, attention_efficiency, "
              "sustained_compute_fraction)");
  }
}

// A precision's sustained fraction carried over from another GPU replaces the fitted ones; the
// catalog computes it once every GPU is loaded (Catalog::derive_fitted_values).
void check_sustained_transfer(const FieldChecker& efficiency) {
  for (const char* f : {"sustained_fraction", "mxfp8_sustained_fraction"}) {
    if (efficiency.has(f)) {
      efficiency.error(f, "is computed from sustained_transfer: give one or the other");
    }
  }
  const FieldChecker transfer = efficiency.child("sustained_transfer");
  if (transfer.require_enum("from_precision") &&
      static_cast<const s::SustainedTransfer&>(transfer.message()).from_precision() ==
          static_cast<const s::MatmulEfficiency&>(efficiency.message()).precision()) {
    transfer.error("from_precision", "is this entry's own precision");
  }
}

// A GPU's sustained fractions carried over from the same chip in another server replace its own;
// the catalog computes them once every GPU is loaded (Catalog::derive_fitted_values).
void check_sustained_server_transfer(const FieldChecker& gpu) {
  for (int i = 0; i < gpu.size("matmul_efficiency"); ++i) {
    const FieldChecker e = gpu.child("matmul_efficiency", i);
    for (const char* f : {"sustained_fraction", "mxfp8_sustained_fraction", "sustained_transfer"}) {
      if (e.has(f)) e.error(f, "is computed from sustained_server_transfer: give one or the other");
    }
  }
  if (gpu.has("sustained_compute_fraction")) {
    gpu.error("sustained_compute_fraction",
              "is computed from sustained_server_transfer: give one or the other");
  }
  const FieldChecker transfer = gpu.child("sustained_server_transfer");
  for (const char* f : {"same_chip", "ratio_of", "ratio_to"}) transfer.require(f);
  transfer.require_enum("ratio_precision");
}

}  // namespace

void check_price(const FieldChecker& price) {
  price.require_enum("billing");
  price.require_enum("currency");
  const bool absolute = price.has("per_hour"), relative = price.has("discount_fraction");
  if (absolute == relative) price.error_here("give exactly one of per_hour or discount_fraction");
  price.positive("per_hour") && price.in_range("per_hour", 0, kMaxPricePerHour);
  price.in_range("discount_fraction", 0, 1);
  if (price.has("per_hour_max") && price.positive("per_hour_max") &&
      price.in_range("per_hour_max", 0, kMaxPricePerHour) && absolute &&
      price.number("per_hour_max") < price.number("per_hour")) {
    price.error("per_hour_max",
                "must be >= per_hour (" + format_number(price.number("per_hour")) + ")");
  }
  if (price.has("source")) check_source(price);
}

void check_source(const FieldChecker& entry) {
  if (!entry.has("source")) {
    entry.warning("source", "has no source: say where its numbers come from");
    return;
  }
  const FieldChecker source = entry.child("source");
  // Written as "" it printed a price's source as "()" without a word (tools/input_audit.py).
  if (static_cast<const s::Source&>(source.message()).citation().empty()) {
    source.warning("citation", "is empty");
  }
}

void check_gpu(const FieldChecker& gpu) {
  gpu.require("name");
  gpu.require_enum("form_factor");
  gpu.require_positive("memory_gib") && gpu.memory_gib("memory_gib");
  if (gpu.positive("cuda_total_memory_gib") && gpu.memory_gib("cuda_total_memory_gib") &&
      as_gpu(gpu).cuda_total_memory_gib() > as_gpu(gpu).memory_gib()) {
    gpu.error("cuda_total_memory_gib",
              "must not exceed memory_gib (" + format_number(as_gpu(gpu).memory_gib()) +
                  "): the driver exposes part of the device's memory, not more");
  }
  gpu.require_rate("memory_bandwidth_gb_per_s");
  gpu.positive("tdp_w") && gpu.in_range("tdp_w", 0, kMaxTdpW);
  if (as_gpu(gpu).vendor() == "NVIDIA") gpu.require("streaming_multiprocessors");
  gpu.positive("streaming_multiprocessors") &&
      gpu.in_range("streaming_multiprocessors", 1, kMaxStreamingMultiprocessors);
  if (gpu.require("peak_tflops")) {
    const FieldChecker peak = gpu.child("peak_tflops");
    for (const char* f : {"fp32", "tf32", "fp16", "bf16", "fp8", "int8_tops", "fp4"})
      peak.rate(f);
    if (!peak.has("fp16") && !peak.has("bf16")) {
      peak.error_here("needs fp16 or bf16: training is modeled in mixed precision");
    }
  }
  if (gpu.has("nvlink")) {
    const FieldChecker link = gpu.child("nvlink");
    link.require("generation") && link.in_range("generation", 1, 5);
    link.require_positive("links") && link.in_range("links", 1, kMaxGpuLinks);
    link.require_rate("per_direction_gb_per_s");
  }
  if (gpu.has("hccs")) {
    if (gpu.has("nvlink")) gpu.error("hccs", "a GPU has nvlink or hccs, not both");
    const FieldChecker link = gpu.child("hccs");
    link.require("links") && link.in_range("links", 1, kMaxGpuLinks);
    link.require_rate("per_direction_gb_per_s");
  }
  if (gpu.has("pcie")) {
    const FieldChecker pcie = gpu.child("pcie");
    pcie.require("generation") && pcie.in_range("generation", 1, 6);
    pcie.positive("lanes") && pcie.in_range("lanes", 1, kMaxPcieLanes);
    pcie.require_rate("per_direction_gb_per_s");
  }
  if (gpu.has("host_link")) {
    // NVLink-C2C: one Grace CPU's link shared by its superchip's 2 GPUs (GB200, GB300); at most a
    // server's GPUs (16) share one. 2^31 - 1 of them left each GPU a rate no offload copy ended
    // within the clock's span, and aborted the step (tools/input_audit.py).
    const FieldChecker link = gpu.child("host_link");
    link.require_rate("per_direction_gb_per_s");
    link.in_range("gpus_sharing", 1, kMaxGpusPerServer);
  }
  check_measured_matmul(gpu);
  for (int i = 0; i < gpu.size("matmul_efficiency"); ++i) {
    const FieldChecker e = gpu.child("matmul_efficiency", i);
    e.require_enum("precision");
    e.require("max_fraction") && e.in_range("max_fraction", 0.01, 1);
    e.require("overhead_us") && e.latency_us("overhead_us");
    e.in_range("sustained_fraction", 0.01, 1);
    if (e.has("sustained_transfer")) check_sustained_transfer(e);
  }
  if (gpu.has("sustained_server_transfer")) check_sustained_server_transfer(gpu);
  for (int i = 0; i < gpu.size("attention_efficiency"); ++i) {
    const FieldChecker e = gpu.child("attention_efficiency", i);
    e.require_enum("pass");
    e.require("causal");
    e.require("head_dim") && e.at_least("head_dim", 1);
    if (e.has("scaled_from_head_dim")) {
      e.at_least("scaled_from_head_dim", 1);
      e.require("head_dim_ratio") && e.in_range("head_dim_ratio", 0.01, 4);
      for (const char* own : {"max_fraction", "half_rate_keys"}) {
        if (e.has(own)) e.error(own, "give it or scaled_from_head_dim, not both");
      }
    } else {
      if (e.has("head_dim_ratio")) e.error("head_dim_ratio", "needs scaled_from_head_dim");
      e.require("max_fraction") && e.in_range("max_fraction", 0.01, 1);
      // At most a million-token context's keys (the fits are at most 1,679): 1e308 made a
      // kernel's time overflow into an event in the past.
      e.require("half_rate_keys") && e.in_range("half_rate_keys", 0, 1 << 20);
    }
    e.in_range("sustained_fraction", 0.01, 1);
    if (e.has("precision") &&
        static_cast<const s::AttentionEfficiency&>(e.message()).precision() != s::FP8) {
      e.error("precision", "must be FP8 (absent: the 16-bit kernel)");
    } else if (e.has("precision") &&
               static_cast<const s::AttentionEfficiency&>(e.message()).library() ==
                   s::FLASH_ATTENTION_2) {
      e.error("precision", "FlashAttention-2 has no FP8 kernel");
    } else if (e.has("precision") && as_gpu(gpu).peak_tflops().fp8() <= 0) {
      e.error("precision", "FP8 on a GPU without an FP8 peak");
    }
  }
  if (gpu.has("attention_dropout")) {
    const FieldChecker dropout = gpu.child("attention_dropout");
    dropout.require("forward_fraction") && dropout.in_range("forward_fraction", 0.01, 1);
    dropout.require("backward_fraction") && dropout.in_range("backward_fraction", 0.01, 1);
  }
  if (gpu.has("power_limit")) {
    const FieldChecker power = gpu.child("power_limit");
    const auto& limit = static_cast<const s::PowerLimit&>(power.message());
    power.require_positive("watts");
    if (power.require_positive("reference_watts") && limit.watts() >= limit.reference_watts()) {
      power.error("reference_watts", "must exceed watts (the lower limit this GPU runs at)");
    }
    power.require("step_throughput_fraction") &&
        power.in_range("step_throughput_fraction", 0.01, 1);
    power.require("source");
  }
  gpu.in_range("memory_efficiency_fraction", 0.01, 1);
  gpu.in_range("flash_attention_fraction", 0.01, 1);
  gpu.in_range("sync_mma_fraction", 0.01, 1);
  gpu.in_range("sustained_compute_fraction", 0.01, 1);
  // Each a latency at most kMaxLatency_us: 1e308 us made a step's event land in the past.
  gpu.latency_us("expert_layer_sync_us_per_expert");
  gpu.latency_us("expert_layer_issue_us");
  gpu.latency_us("expert_combine_us_per_source");
  check_efficiency_source(gpu);
  check_source(gpu);
}

// CPU sockets split PCIe-joined GPUs evenly; between sockets they need the socket link's rate.
void check_cpu_sockets(const FieldChecker& instance) {
  const auto& m = static_cast<const s::InstanceType&>(instance.message());
  if (!m.has_cpu_sockets()) return;
  const FieldChecker sockets = instance.child("cpu_sockets");
  if (!sockets.require("count") || !sockets.at_least("count", 1)) return;
  const int count = m.cpu_sockets().count();
  if (count > 1) {
    sockets.require_rate("link_gb_per_s");
  } else {
    sockets.rate("link_gb_per_s");
  }
  if (m.has_gpu_interconnect() && m.gpu_interconnect() != s::PCIE_ONLY &&
      m.gpu_interconnect() != s::NVLINK_BRIDGE_PAIRS) {
    instance.error("cpu_sockets", "needs gpu_interconnect PCIE_ONLY or NVLINK_BRIDGE_PAIRS, not " +
                                      s::GpuInterconnect_Name(m.gpu_interconnect()));
  } else if (m.gpu_count() > 0 && m.gpu_count() % count != 0) {
    sockets.error("count", std::to_string(count) + " sockets do not split " +
                               std::to_string(m.gpu_count()) + " GPUs (gpu_count) evenly");
  }
}

void check_instance(const FieldChecker& instance) {
  const auto& m = static_cast<const s::InstanceType&>(instance.message());
  instance.require("name");
  if (instance.require_enum("provider") && m.has_name() &&
      m.name().rfind(provider_prefix(m.provider()), 0) != 0) {
    instance.error("name", "must start with \"" + provider_prefix(m.provider()) +
                               "\" for provider " + s::Provider_Name(m.provider()));
  }
  // A CPU-only instance type has gpu_count 0 and no GPU fields.
  const bool cpu_only = m.has_gpu_count() && m.gpu_count() == 0;
  if (cpu_only) {
    for (const char* f : {"gpu", "gpu_memory_gib", "gpu_interconnect"}) {
      if (instance.has(f)) instance.error(f, "applies to instances with GPUs (gpu_count is 0)");
    }
  } else {
    instance.require("gpu");
    instance.require("gpu_count") && instance.at_least("gpu_count", 1);
  }
  instance.positive("gpu_memory_gib") && instance.memory_gib("gpu_memory_gib");
  if (!cpu_only && instance.require_enum("gpu_interconnect") && m.has_gpu_count()) {
    const bool single = m.gpu_interconnect() == s::SINGLE_GPU;
    if (single != (m.gpu_count() == 1)) {
      instance.error("gpu_interconnect",
                     single ? "is SINGLE_GPU but gpu_count is " + std::to_string(m.gpu_count())
                            : "must be SINGLE_GPU when gpu_count is 1");
    }
  }
  check_nvlink_domain(instance);
  check_cpu_sockets(instance);
  // 2^31 vCPUs hung the input command's advice.
  instance.require("vcpus") && instance.in_range("vcpus", 1, kMaxVcpus);
  instance.require_positive("host_memory_gib") && instance.memory_gib("host_memory_gib");
  if (instance.has("cpu")) instance.child("cpu").clock_ghz("clock_ghz");
  if (instance.require("network")) {
    const FieldChecker net = instance.child("network");
    net.require_enum("kind");
    net.rate("total_gbit_per_s");
    net.rate("tcp_gbit_per_s");
    net.at_least("nic_count", 1);
  }
  if (instance.has("local_disks")) {
    const FieldChecker disks = instance.child("local_disks");
    disks.require("count") && disks.at_least("count", 1);
    disks.require_positive("each_gb");
  }
  if (instance.has("block_storage_caps")) {
    instance.child("block_storage_caps").rate("bandwidth_mb_per_s");
    instance.child("block_storage_caps").rate("iops");
  }
  // One price of a billing mode per region: a scenario chooses among regions (prices.region),
  // and two prices of one region could not be told apart.
  std::set<std::pair<int, std::string>> seen;
  for (int i = 0; i < instance.size("price"); ++i) {
    check_price(instance.child("price", i));
    const s::Price& p = m.price(i);
    if (!seen.insert({p.billing(), p.region()}).second) {
      instance.error("price",
                     "a second " + s::BillingMode_Name(p.billing()) + " price " +
                         (p.region().empty() ? std::string("without a region")
                                             : "for region \"" + p.region() + "\"") +
                         ": give each price of a billing mode its own region",
                     i);
    }
  }
  check_source(instance);
}

// A tier's price: a currency, a capacity rate, and a rate for bought performance only where the
// tier sells it (its provisioned_max_* ceiling), each finite and at most kMaxStoragePricePerMonth.
void check_storage_price(const FieldChecker& price, const FieldChecker& storage) {
  price.require_enum("currency");
  price.require_positive("per_gib_month") &&
      price.in_range("per_gib_month", 0, kMaxStoragePricePerMonth);
  const auto sold = [&](const char* rate, const char* ceiling) {
    if (!price.has(rate)) return;
    if (!storage.has(ceiling)) {
      price.error(rate, std::string("prices performance the tier does not sell (it has no ") +
                            ceiling + ")");
      return;
    }
    price.non_negative(rate) && price.in_range(rate, 0, kMaxStoragePricePerMonth);
  };
  sold("per_provisioned_mib_per_s_month", "provisioned_max_throughput_mb_per_s");
  sold("per_provisioned_iops_month", "provisioned_max_iops");
  check_source(price);
}

// A tier's capacity step: positive, at most its largest capacity, with its source.
void check_capacity_increment(const FieldChecker& storage) {
  const FieldChecker increment = storage.child("capacity_increment");
  if (increment.require_positive("step_gib") && storage.has("capacity_max_gib") &&
      increment.number("step_gib") > storage.number("capacity_max_gib")) {
    increment.error("step_gib", "must be <= capacity_max_gib (" +
                                    format_number(storage.number("capacity_max_gib")) + ")");
  }
  check_source(increment);
}

void check_storage(const FieldChecker& storage) {
  storage.require("name");
  storage.require_enum("provider");
  storage.require_enum("kind");
  storage.positive("capacity_min_gib");
  storage.positive("capacity_max_gib");
  if (storage.has("capacity_min_gib") && storage.has("capacity_max_gib") &&
      storage.number("capacity_min_gib") > storage.number("capacity_max_gib")) {
    storage.error("capacity_max_gib", "must be >= capacity_min_gib (" +
                                          format_number(storage.number("capacity_min_gib")) + ")");
  }
  if (!storage.has("throughput_mb_per_s") && !storage.has("iops")) {
    storage.error_here("needs throughput_mb_per_s or iops");
  }
  check_limit(storage, "throughput_mb_per_s");
  check_limit(storage, "iops");
  storage.rate("provisioned_max_throughput_mb_per_s");
  storage.positive("provisioned_max_iops");
  storage.positive("latency_ms") &&
      storage.in_range("latency_ms", 0, FieldChecker::kMaxLatency_us / 1000);
  check_source(storage);
  if (storage.has("price")) check_storage_price(storage.child("price"), storage);
  if (storage.has("capacity_increment")) check_capacity_increment(storage);
  if (storage.has("throughput_per_iops")) {
    const FieldChecker ratio = storage.child("throughput_per_iops");
    if (!storage.has("iops")) {
      storage.error("throughput_per_iops",
                    "bounds throughput by IOPS, which the tier does not give (it has no iops)");
    }
    ratio.require("max_mb_per_s") && ratio.rate("max_mb_per_s");
    check_source(ratio);
  }
  if (storage.has("iops_per_gib")) {
    const FieldChecker ratio = storage.child("iops_per_gib");
    if (!storage.has("provisioned_max_iops")) {
      storage.error("iops_per_gib",
                    "bounds provisioned IOPS, which the tier does not sell (it has no "
                    "provisioned_max_iops)");
    }
    ratio.require_positive("max");
    check_source(ratio);
  }
}

void check_provider(const FieldChecker& provider) {
  const auto& m = static_cast<const s::ProviderTerms&>(provider.message());
  provider.require("name");
  if (provider.require_enum("provider") && provider.has("name")) {
    const std::string key = lower_case(s::Provider_Name(m.provider()));
    if (m.name() != key) {
      provider.error("name", "must be \"" + key + "\", the provider's name in lower case");
    }
  }
  if (provider.has("spot_interruption_notice_s")) {
    if (m.provider() == s::ONPREM) {
      provider.error("spot_interruption_notice_s", "applies to rented spot instances, not ONPREM");
    }
    provider.positive("spot_interruption_notice_s") &&
        provider.in_range("spot_interruption_notice_s", 0, kMaxSpotInterruptionNoticeSeconds);
  }
  // A figure that decides whether a preemption loses work says where it is published.
  if (provider.has("spot_interruption_notice_s") && !provider.has("source")) {
    provider.error("source",
                   "is required with a spot_interruption_notice_s: cite the provider's "
                   "documentation");
  } else {
    check_source(provider);
  }
}

void check_fabric(const FieldChecker& fabric) {
  const auto& m = static_cast<const s::Fabric&>(fabric.message());
  fabric.require("name");
  fabric.require_enum("topology");
  if (m.topology() == s::CLOS || m.topology() == s::RAIL_OPTIMIZED) {
    fabric.require("nodes_per_leaf");
  }
  fabric.at_least("nodes_per_leaf", 1);
  fabric.at_least("oversubscription_ratio", 1);
  fabric.latency_us("switch_hop_latency_us");
  fabric.latency_us("nic_latency_us");
  check_source(fabric);
}

void check_link_class(const FieldChecker& link) {
  static const std::vector<std::string> kNames = {
      "nvlink", "nvlink2", "nvlink3",    "nvlink4",      "nvlink5", "pcie",  "efa",
      "roce",   "erdma",   "infiniband", "tcp_ethernet", "hccs",    "socket"};
  const auto& m = static_cast<const s::LinkClass&>(link.message());
  if (link.require("name") && std::find(kNames.begin(), kNames.end(), m.name()) == kNames.end()) {
    link.error("name", "unknown link class \"" + m.name() + "\"" + did_you_mean(m.name(), kNames));
  }
  link.require("efficiency_fraction") && link.in_range("efficiency_fraction", 0.01, 1);
  link.require("step_latency_us") && link.latency_us("step_latency_us");
  link.latency_us("simple_step_latency_us");
  link.in_range("in_switch_reduction_efficiency_fraction", 0.01, 1);
  link.rate("in_switch_reduction_operand_gb_per_s");
  const bool nvlink = m.name().rfind("nvlink", 0) == 0;
  const bool scale_up = nvlink || m.name() == "hccs" || m.name() == "pcie" || m.name() == "socket";
  // The socket class's step latency is its links' own, the same under every protocol.
  if (link.has("simple_step_latency_us") && m.name() == "socket") {
    link.error("simple_step_latency_us", "does not apply to the socket class");
  }
  link.in_range("tree_bandwidth_fraction", 0.01, 1);
  if (link.has("tree_bandwidth_fraction") && scale_up) {
    link.error("tree_bandwidth_fraction", "applies to the network classes only");
  }
  link.in_range("all_to_all_bandwidth_fraction", 0.01, 1);
  if (link.has("all_to_all_bandwidth_fraction") && scale_up && !nvlink) {
    link.error("all_to_all_bandwidth_fraction", "applies to the network and nvlink classes only");
  }
  for (const char* field :
       {"in_switch_reduction_efficiency_fraction", "in_switch_reduction_operand_gb_per_s"}) {
    if (link.has(field) && !nvlink) link.error(field, "applies to the nvlink classes only");
  }
  check_source(link);
}

void check_runtime(const FieldChecker& runtime) {
  runtime.require("name");
  runtime.require("cuda_context_gib") && runtime.memory_gib("cuda_context_gib");
  runtime.require("communicator_gib") && runtime.memory_gib("communicator_gib");
  runtime.require("allocator_overhead_fraction") &&
      runtime.in_range("allocator_overhead_fraction", 0, 1);
  for (const RuntimeDefault& d : runtime_defaults()) {
    if (runtime.has(d.field)) {
      runtime.error(d.field, std::string("is computed at load from the fitted GPUs' ") +
                                 d.gpu_field + ": remove it (set a GPU's own " + d.gpu_field +
                                 " instead)");
    }
  }
  check_source(runtime);
}

namespace {

void check_serving_fit(const FieldChecker& fit) {
  fit.require("compute_fraction") && fit.in_range("compute_fraction", 0.01, 1);
  fit.require("memory_fraction") && fit.in_range("memory_fraction", 0.01, 1);
  fit.require("layer_overhead_us") && fit.latency_us("layer_overhead_us");
  fit.memory_gib("memory_overhead_gib");
  fit.memory_gib("tensor_parallel_memory_gib");
  fit.in_range("kv_reread_fraction", 0, 1);
  fit.in_range("fp8_kv_reread_fraction", 0, 1);
  fit.in_range("fp8_matmul_fraction", 0.01, 1);
  fit.in_range("expert_matmul_fraction", 0.01, 1);
  fit.latency_us("expert_layer_overhead_us");
}

}  // namespace

void check_serving_runtime(const FieldChecker& runtime) {
  runtime.require("name");
  runtime.at_least("grouped_attention_max_query_heads_per_kv", 1);
  runtime.at_least("max_beam_width", 1);
  if (runtime.has("capacity_policy")) runtime.require_enum("capacity_policy");
  if (runtime.has("extends")) {  // its base's constants and fits (Catalog::resolve_extensions)
    if (runtime.size("gpu") > 0) {
      runtime.error("gpu", "is taken from the runtime it extends: fit the base instead");
    }
    check_source(runtime);
    return;
  }
  // Latencies at most kMaxLatency_us: an iteration overhead of 2^31 us made a serving
  // simulation's event land in the past.
  runtime.require("iteration_overhead_us") && runtime.latency_us("iteration_overhead_us");
  runtime.latency_us("allreduce_overhead_us");
  runtime.latency_us("static_prefill_overhead_us");
  runtime.require("memory_overhead_gib") && runtime.memory_gib("memory_overhead_gib");
  runtime.require("tensor_parallel_memory_gib") &&
      runtime.memory_gib("tensor_parallel_memory_gib");
  runtime.at_least("grouped_attention_head_dim", 1);
  runtime.at_least("grouped_attention_query_heads_per_kv", 1);
  runtime.at_least("expert_matmul_row_tile", 1);
  std::set<std::string> gpus;
  for (int i = 0; i < runtime.size("gpu"); ++i) {
    const FieldChecker fit = runtime.child("gpu", i);
    const auto& m = static_cast<const s::ServingGpuFit&>(fit.message());
    if (fit.require("gpu") && !gpus.insert(m.gpu()).second) {
      fit.error("gpu", "\"" + m.gpu() + "\" is fitted twice");
    }
    if (fit.has("form_factor")) fit.error("form_factor", "is taken from the GPU: remove it");
    check_serving_fit(fit);
  }
  for (int i = 0; i < runtime.size("default_fit"); ++i) {
    runtime.error("default_fit",
                  "is computed at load, per form factor, from the fitted GPUs' fits (gpu): "
                  "remove it (fit a GPU in gpu instead)",
                  i);
  }
  check_source(runtime);
}

}  // namespace clustersim
