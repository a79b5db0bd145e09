// `clustersim catalog gpus|instances|prices|storage|fabrics|models`: the catalog as a filterable
// table (prices: how many instance types of each provider have a catalog price per billing mode).
#include <algorithm>
#include <array>
#include <iostream>
#include <map>

#include "sim/cost/price_book.h"
#include "sim/util/closest_name.h"
#include "sim/util/lower_case.h"
#include "sim/util/number_format.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_dimensions.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"

namespace clustersim::cli {
namespace {

namespace s = schema;
using Cell = Table::Cell;

struct Filters {
  std::string gpu;       // matches a GPU name (substring) or alias (exact), case-insensitive
  std::string provider;  // aws, aliyun, tencent, onprem, huaweicloud
};

bool gpu_matches(const s::Gpu& gpu, const std::string& filter) {
  if (filter.empty()) return true;
  const std::string wanted = lower_case(filter);
  if (lower_case(gpu.name()).find(wanted) != std::string::npos) return true;
  return std::any_of(gpu.aliases().begin(), gpu.aliases().end(),
                     [&](const std::string& alias) { return lower_case(alias) == wanted; });
}

// The providers --provider takes, lower case: "aws", "aliyun", ...
std::vector<std::string> provider_names() {
  std::vector<std::string> names;
  const google::protobuf::EnumDescriptor* d = s::Provider_descriptor();
  for (int i = 0; i < d->value_count(); ++i) {
    if (d->value(i)->number() == s::PROVIDER_UNSPECIFIED) continue;
    names.push_back(lower_case(d->value(i)->name()));
  }
  return names;
}

bool provider_matches(s::Provider provider, const std::string& filter) {
  return filter.empty() || lower_case(s::Provider_Name(provider)) == lower_case(filter);
}

template <class Message, class Field>
Cell optional_number(const Message& m, bool has, Field value) {
  return has ? Cell(static_cast<double>(value(m))) : Cell();
}

Cell confidence(const s::Source& source) {
  return source.has_confidence() ? Cell(lower_case(s::Confidence_Name(source.confidence())))
                                 : Cell();
}

Table gpu_table(const Catalog& catalog, const Filters& f) {
  Table t{{"name", "GPU", 0},
          {"architecture", "arch", 0},
          {"memory_gib", "mem GiB", 0},
          {"memory_bandwidth_gb_per_s", "HBM GB/s", 0},
          {"fp32_tflops", "FP32", 1},
          {"tf32_tflops", "TF32", 1},
          {"bf16_tflops", "BF16", 1},
          {"fp16_tflops", "FP16", 1},
          {"fp8_tflops", "FP8", 1},
          {"fp4_tflops", "FP4", 1},
          {"nvlink_per_direction_gb_per_s", "NVLink GB/s", 0},
          {"pcie_generation", "PCIe", 0},
          {"tdp_w", "TDP W", 0},
          {"confidence", "source", 0}};
  for (const auto& [name, entry] : catalog.gpus().all()) {
    const s::Gpu& g = *entry.value;
    if (!gpu_matches(g, f.gpu)) continue;
    const s::PeakTflops& p = g.peak_tflops();
    t.add_row({name, g.architecture(), g.memory_gib(), g.memory_bandwidth_gb_per_s(),
               optional_number(p, p.has_fp32(), [](auto& m) { return m.fp32(); }),
               optional_number(p, p.has_tf32(), [](auto& m) { return m.tf32(); }),
               optional_number(p, p.has_bf16(), [](auto& m) { return m.bf16(); }),
               optional_number(p, p.has_fp16(), [](auto& m) { return m.fp16(); }),
               optional_number(p, p.has_fp8(), [](auto& m) { return m.fp8(); }),
               optional_number(p, p.has_fp4(), [](auto& m) { return m.fp4(); }),
               g.has_nvlink() ? Cell(g.nvlink().per_direction_gb_per_s()) : Cell(),
               g.has_pcie() ? Cell(static_cast<double>(g.pcie().generation())) : Cell(),
               optional_number(g, g.has_tdp_w(), [](auto& m) { return m.tdp_w(); }),
               confidence(g.source())});
  }
  return t;
}

// The catalog's price of `instance` under `billing`, or the range of its prices in several
// regions ("18.736-19.539": a scenario chooses one with prices.region).
Cell listed_price(const s::InstanceType& instance, s::BillingMode billing) {
  if (const auto price = catalog_price(instance, billing)) return price->per_hour;
  std::vector<double> regional;
  for (const s::Price* p : catalog_prices(instance, billing, "")) {
    if (const auto price = catalog_price(instance, billing, p->region())) {
      regional.push_back(price->per_hour);
    }
  }
  if (regional.empty()) return Cell();
  const auto [low, high] = std::minmax_element(regional.begin(), regional.end());
  return format_fixed(*low, 3) + "-" + format_fixed(*high, 3);
}

Table instance_table(const Catalog& catalog, const Filters& f) {
  Table t{{"name", "instance", 0},
          {"gpu", "GPU", 0},
          {"gpu_count", "GPUs", 0},
          {"gpu_interconnect", "GPU link", 0},
          {"nvlink_domain_gpus", "NVL domain", 0},
          {"vcpus", "vCPUs", 0},
          {"host_memory_gib", "RAM GiB", 0},
          {"network_kind", "network", 0},
          {"network_gbit_per_s", "Gbit/s", 0},
          {"nic_count", "NICs", 0},
          {"on_demand_per_hour", "on-demand/h", 3},
          {"currency", "cur", 0},
          {"spot_per_hour", "spot/h", 3},
          {"price_confidence", "price src", 0}};
  for (const auto& [name, entry] : catalog.instances().all()) {
    const s::InstanceType& i = *entry.value;
    if (!provider_matches(i.provider(), f.provider) ||
        (!f.gpu.empty() && (!has_gpu(i) || !gpu_matches(catalog.gpu_of(i), f.gpu)))) {
      continue;
    }
    const std::optional<UsedPrice> on_demand = catalog_price(i, s::ON_DEMAND);
    const s::NodeNetwork& n = i.network();
    t.add_row({name, i.gpu(), static_cast<double>(i.gpu_count()),
               s::GpuInterconnect_Name(i.gpu_interconnect()),
               optional_number(i, i.has_nvlink_domain_gpus(),
                               [](auto& m) { return m.nvlink_domain_gpus(); }),
               static_cast<double>(i.vcpus()), i.host_memory_gib(), s::NetworkKind_Name(n.kind()),
               n.has_total_gbit_per_s() ? Cell(n.total_gbit_per_s()) : Cell(),
               n.has_nic_count() ? Cell(static_cast<double>(n.nic_count())) : Cell(),
               listed_price(i, s::ON_DEMAND),
               on_demand ? Cell(s::Currency_Name(on_demand->currency)) : Cell(),
               listed_price(i, s::SPOT),
               on_demand && on_demand->confidence != s::CONFIDENCE_UNSPECIFIED
                   ? Cell(lower_case(s::Confidence_Name(on_demand->confidence)))
                   : Cell()});
  }
  return t;
}

// Per provider: its instance types, and how many of them have a catalog price of each billing mode
// (catalog_price: a discount_fraction counts when an on-demand price gives it a value) or any.
Table price_count_table(const Catalog& catalog, const Filters& f) {
  const s::BillingMode modes[] = {s::ON_DEMAND, s::SUBSCRIPTION_MONTHLY, s::SUBSCRIPTION_YEARLY,
                                  s::SPOT};
  Table t{{"provider", "provider", 0},
          {"instances", "instances", 0},
          {"on_demand", "on-demand", 0},
          {"subscription_monthly", "monthly", 0},
          {"subscription_yearly", "yearly", 0},
          {"spot", "spot", 0},
          {"priced", "any price", 0}};
  std::map<int, std::array<int, 6>> counts;  // provider -> instances, modes..., any
  for (const auto& [name, entry] : catalog.instances().all()) {
    const s::InstanceType& i = *entry.value;
    if (!provider_matches(i.provider(), f.provider)) continue;
    std::array<int, 6>& c = counts[i.provider()];
    ++c[0];
    bool any = false;
    for (int m = 0; m < 4; ++m) {
      const bool priced = catalog_price(i, modes[m]).has_value() ||
                          catalog_prices(i, modes[m], "").size() > 1;  // in several regions
      c[1 + m] += priced;
      any = any || priced;
    }
    c[5] += any;
  }
  for (const auto& [provider, c] : counts) {
    t.add_row({lower_case(s::Provider_Name(static_cast<s::Provider>(provider))),
               static_cast<double>(c[0]), static_cast<double>(c[1]), static_cast<double>(c[2]),
               static_cast<double>(c[3]), static_cast<double>(c[4]), static_cast<double>(c[5])});
  }
  return t;
}

// "min(120 + 0.5*C, 350)" style text of a capacity-scaled limit, C in GiB.
std::string limit_text(const s::CapacityScaledLimit& limit) {
  if (limit.step_size() > 0) {
    std::string text;
    for (const s::CapacityStep& step : limit.step()) {
      text += (text.empty() ? "" : "; ") + std::string(">=") + format_number(step.from_gib()) +
              ": " + format_number(step.value());
    }
    return text;
  }
  std::string text = format_number(limit.base());
  if (limit.per_gib() != 0) {
    const std::string slope = format_number(limit.per_gib()) + "*C";
    text = limit.base() == 0 ? slope : text + " + " + slope;
  }
  if (limit.has_cap()) text = "min(" + text + ", " + format_number(limit.cap()) + ")";
  if (limit.has_floor()) text = "max(" + text + ", " + format_number(limit.floor()) + ")";
  return text;
}

Table storage_table(const Catalog& catalog, const Filters& f) {
  Table t{{"name", "storage", 0},
          {"kind", "kind", 0},
          {"shared_across_nodes", "shared", 0},
          {"capacity_min_gib", "min GiB", 0},
          {"capacity_max_gib", "max GiB", 0},
          {"throughput_mb_per_s", "MB/s (C in GiB)", 0},
          {"iops", "IOPS (C in GiB)", 0},
          {"latency_ms", "latency ms", 2}};
  for (const auto& [name, entry] : catalog.storage().all()) {
    const s::StorageTier& st = *entry.value;
    if (!provider_matches(st.provider(), f.provider)) continue;
    t.add_row({name, s::StorageKind_Name(st.kind()), st.shared_across_nodes(),
               optional_number(st, st.has_capacity_min_gib(),
                               [](auto& m) { return m.capacity_min_gib(); }),
               optional_number(st, st.has_capacity_max_gib(),
                               [](auto& m) { return m.capacity_max_gib(); }),
               st.has_throughput_mb_per_s() ? Cell(limit_text(st.throughput_mb_per_s())) : Cell(),
               st.has_iops() ? Cell(limit_text(st.iops())) : Cell(),
               optional_number(st, st.has_latency_ms(), [](auto& m) { return m.latency_ms(); })});
  }
  return t;
}

Table fabric_table(const Catalog& catalog) {
  Table t{{"name", "fabric", 0},
          {"topology", "topology", 0},
          {"nodes_per_leaf", "nodes/leaf", 0},
          {"oversubscription_ratio", "oversub", 1},
          {"switch_hop_latency_us", "hop us", 2},
          {"nic_latency_us", "NIC us", 2}};
  for (const auto& [name, entry] : catalog.fabrics().all()) {
    const s::Fabric& fb = *entry.value;
    t.add_row(
        {name, s::FabricTopology_Name(fb.topology()),
         optional_number(fb, fb.has_nodes_per_leaf(), [](auto& m) { return m.nodes_per_leaf(); }),
         optional_number(fb, fb.has_oversubscription_ratio(),
                         [](auto& m) { return m.oversubscription_ratio(); }),
         optional_number(fb, fb.has_switch_hop_latency_us(),
                         [](auto& m) { return m.switch_hop_latency_us(); }),
         optional_number(fb, fb.has_nic_latency_us(), [](auto& m) { return m.nic_latency_us(); })});
  }
  return t;
}

Table model_table(const Catalog& catalog) {
  Table t{{"name", "model", 0},
          {"kind", "kind", 0},
          {"num_layers", "layers", 0},
          {"hidden_size", "hidden", 0},
          {"num_attention_heads", "heads", 0},
          {"num_kv_heads", "kv", 0},
          {"ffn_hidden_size", "ffn", 0},
          {"vocab_size", "vocab", 0},
          {"max_sequence_length", "seq", 0},
          {"parameters_billion", "params B", 3},
          // What one token uses (MoE: its routed and shared experts), embedding table included.
          {"active_parameters_billion", "active B", 3},
          {"published_parameter_count", "published", 0}};
  for (const auto& [name, entry] : catalog.models().all()) {
    const s::Model& m = *entry.value;
    const double billions = static_cast<double>(parameter_count(m)) / 1e9;
    const double active = static_cast<double>(active_parameter_count(m, true)) / 1e9;
    const Cell published = m.has_published_parameter_count()
                               ? Cell(static_cast<double>(m.published_parameter_count()))
                               : Cell();
    if (!m.has_transformer()) {
      t.add_row({name, std::string("CNN"), Cell(), Cell(), Cell(), Cell(), Cell(), Cell(), Cell(),
                 billions, active, published});
      continue;
    }
    const s::Transformer& x = m.transformer();
    t.add_row({name, lower_case(s::TransformerKind_Name(x.kind())),
               static_cast<double>(x.num_layers()), static_cast<double>(x.hidden_size()),
               static_cast<double>(x.num_attention_heads()), static_cast<double>(kv_heads(x)),
               static_cast<double>(x.ffn_hidden_size()), static_cast<double>(x.vocab_size()),
               static_cast<double>(x.max_sequence_length()), billions, active, published});
  }
  return t;
}

}  // namespace

int catalog_command(const std::vector<std::string>& args) {
  CommonOptions common;
  Filters filters;
  std::string kind;
  po::options_description options("catalog options");
  add_common_options(&options, &common, "catalog");
  options.add_options()("kind", po::value(&kind)->required(),
                        "gpus, instances, prices, storage, fabrics or models")(
      "gpu", po::value(&filters.gpu), "only entries with this GPU (name part or alias)")(
      "provider", po::value(&filters.provider),
      "only entries of this provider (aws, aliyun, "
      "tencent, onprem, huaweicloud)");
  po::positional_options_description positional;
  positional.add("kind", 1);
  po::variables_map values;
  if (!parse(args, options, positional, &values,
             "clustersim catalog gpus|instances|prices|storage|fabrics|models [options]")) {
    return kExitOk;
  }
  auto format = output_format(common);
  if (!format) return kExitUsage;
  auto catalog = load_catalog(common);
  if (!catalog) return kExitInputError;

  const bool gpu_filter_applies = kind == "gpus" || kind == "instances";
  const bool provider_filter_applies = kind == "instances" || kind == "prices" || kind == "storage";
  if ((!filters.gpu.empty() && !gpu_filter_applies) ||
      (!filters.provider.empty() && !provider_filter_applies)) {
    command_error("catalog") << "--gpu applies to gpus and instances, --provider to "
                                "instances, prices and storage\n";
    return kExitUsage;
  }
  const std::vector<std::string> providers = provider_names();
  if (!filters.provider.empty() && std::find(providers.begin(), providers.end(),
                                             lower_case(filters.provider)) == providers.end()) {
    // Else a typo listed nothing, as if the provider had no entry.
    command_error("catalog") << "--provider: unknown provider \"" << filters.provider << "\""
                             << did_you_mean(lower_case(filters.provider), providers) << "\n";
    return kExitUsage;
  }
  if (!filters.gpu.empty()) {
    // Else a typo listed nothing, as if no entry had that GPU.
    std::vector<std::string> gpu_names;
    bool known = false;
    for (const auto& [name, entry] : catalog->gpus().all()) {
      known = known || gpu_matches(*entry.value, filters.gpu);
      gpu_names.push_back(name);
      for (const std::string& alias : entry.value->aliases()) gpu_names.push_back(alias);
    }
    if (!known) {
      command_error("catalog") << "--gpu: no GPU of the catalog has \"" << filters.gpu
                               << "\" in its name or as an alias"
                               << did_you_mean(filters.gpu, gpu_names) << "\n";
      return kExitUsage;
    }
  }
  Table table;
  if (kind == "gpus")
    table = gpu_table(*catalog, filters);
  else if (kind == "instances")
    table = instance_table(*catalog, filters);
  else if (kind == "prices")
    table = price_count_table(*catalog, filters);
  else if (kind == "storage")
    table = storage_table(*catalog, filters);
  else if (kind == "fabrics")
    table = fabric_table(*catalog);
  else if (kind == "models")
    table = model_table(*catalog);
  else {
    command_error("catalog") << "unknown kind \"" << kind
                             << "\": use gpus, instances, prices, storage, fabrics or models\n";
    return kExitUsage;
  }
  table.print(std::cout, *format);
  return kExitOk;
}

}  // namespace clustersim::cli
