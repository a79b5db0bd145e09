// `clustersim collective`: simulates one collective over a sweep of sizes on a modeled cluster and
// prints it in the layout of nccl-tests (size, count, type, time, algbw, busbw), so users can hold
// it next to their own nccl-tests output.
#include <cctype>
#include <iostream>

#include "sim/net/collective.h"
#include "sim/net/topology_builder.h"
#include "sim/util/closest_name.h"
#include "sim/util/number_format.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"

namespace clustersim::cli {
namespace {

// "8", "64K", "8M", "1G" (binary multiples, as nccl-tests reads -b and -e); nullopt if malformed.
std::optional<double> parse_size(const std::string& text) {
  if (text.empty()) return std::nullopt;
  double scale = 1;
  std::string digits = text;
  switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K':
      scale = 1024.0;
      break;
    case 'M':
      scale = 1024.0 * 1024;
      break;
    case 'G':
      scale = 1024.0 * 1024 * 1024;
      break;
    default:
      break;
  }
  if (scale != 1) digits.pop_back();
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stod(digits) * scale;
}

struct Options {
  std::string op = "all_reduce";
  std::string algorithm = "auto";
  std::string instance;
  std::string fabric;
  int nodes = 1;
  int gpus_per_node = 0;
  int nvlink_domain_nodes = 0;
  std::optional<double> oversubscription;  // --oversubscription, when given
  std::string min_size = "8";
  std::string max_size = "8G";
  double factor = 2;
};

int run(const Options& o, const CommonOptions& common, OutputFormat format) {
  auto op = parse_collective_op(o.op);
  auto algorithm = parse_collective_algorithm(o.algorithm);
  auto min_size = parse_size(o.min_size), max_size = parse_size(o.max_size);
  std::string problem;
  if (!op)
    problem = "--op: unknown collective \"" + o.op +
              "\": use all_reduce, reduce_scatter, all_gather, broadcast, all_to_all or send_recv";
  else if (!algorithm)
    problem = "--algo: unknown algorithm \"" + o.algorithm +
              "\": use auto, ring, tree, hierarchical, nvls or direct";
  else if (!min_size || !max_size)
    problem = "--min/--max: sizes are whole numbers with an optional K, M or G";
  else if (*min_size > *max_size)
    problem = "--min must not exceed --max";
  else if (!(o.factor > 1))
    problem = "--factor must be > 1";
  if (!problem.empty()) {
    std::cerr << "clustersim collective: " << problem << "\n";
    return kExitUsage;
  }
  auto catalog = load_catalog(common);
  if (!catalog) return kExitInputError;
  ClusterSpec spec;
  if (const auto* entry = catalog->instances().find(o.instance)) spec.instance = entry->value;
  if (!spec.instance) {
    std::cerr << "clustersim collective: --instance: unknown instance type \"" << o.instance << "\""
              << did_you_mean(o.instance, catalog->instances().names()) << "\n";
    return kExitUsage;
  }
  if (!o.fabric.empty()) {
    const auto* entry = catalog->fabrics().find(o.fabric);
    if (!entry) {
      std::cerr << "clustersim collective: --fabric: unknown fabric \"" << o.fabric << "\""
                << did_you_mean(o.fabric, catalog->fabrics().names()) << "\n";
      return kExitUsage;
    }
    spec.fabric = entry->value;
  }
  spec.nodes = o.nodes;
  spec.gpus_per_node = o.gpus_per_node;
  spec.nvlink_domain_nodes = o.nvlink_domain_nodes;
  spec.oversubscription_override = o.oversubscription;
  TopologyOrError built = build_topology(spec, *catalog);
  if (!built.topology) {
    std::cerr << "clustersim collective: " << built.error << "\n";
    return kExitUsage;
  }
  const Topology& topology = *built.topology;
  Table table{{"size_bytes", "size(B)"},
              {"count", "count"},
              {"type", "type"},
              {"algorithm", "algo"},
              {"time_us", "time(us)", 2},
              {"algbw_gb_per_s", "algbw(GB/s)", 2},
              {"busbw_gb_per_s", "busbw(GB/s)", 2}};
  for (double size = *min_size; size <= *max_size; size *= o.factor) {
    Collective c{*op, topology.first_gpus(), size, *algorithm};
    if (const std::string why = collective_problem(c, topology); !why.empty()) {
      std::cerr << "clustersim collective: " << why << "\n";
      return kExitUsage;
    }
    const CollectiveAlgorithm chosen = choose_algorithm(c, topology);
    c.algorithm = chosen;
    const double seconds = collective_time(topology, c).seconds();
    const double algbw = size / seconds / kBytesPerGigabyte;
    table.add_row({size, size / 4, std::string("float"), collective_algorithm_name(chosen),
                   seconds * 1e6, algbw, algbw * bus_bandwidth_factor(*op, topology.gpu_count())});
  }
  if (format == OutputFormat::kTable) {
    std::cout << "# clustersim collective: " << o.op << " on " << o.nodes << " x " << o.instance
              << " (" << topology.gpu_count() << " GPUs), fabric "
              << (o.fabric.empty() ? "single-switch" : o.fabric) << "\n";
  }
  table.print(std::cout, format);
  return kExitOk;
}

}  // namespace

int collective_command(const std::vector<std::string>& args) {
  CommonOptions common;
  Options o;
  po::options_description options("collective options");
  add_common_options(&options, &common);
  options.add_options()(
      "op", po::value(&o.op)->default_value(o.op),
      "all_reduce, reduce_scatter, all_gather, broadcast, all_to_all or send_recv")(
      "instance", po::value(&o.instance)->required(), "instance type, e.g. aws.p4d.24xlarge")(
      "nodes", po::value(&o.nodes)->default_value(1), "number of nodes")(
      "gpus-per-node", po::value(&o.gpus_per_node)->default_value(0),
      "GPUs used per node (0: all)")(
      "nvlink-domain-nodes", po::value(&o.nvlink_domain_nodes)->default_value(0),
      "nodes used of each multi-node NVLink domain, e.g. 16 trays of an NVL72 (0: all)")(
      "fabric", po::value(&o.fabric), "fabric between nodes (default: one non-blocking switch)")(
      "oversubscription", po::value<double>()->notifier([&o](double r) { o.oversubscription = r; }),
      "leaf oversubscription ratio (>= 1), replacing the fabric's")(
      "algo", po::value(&o.algorithm)->default_value(o.algorithm),
      "auto, ring, tree, hierarchical, nvls or direct")(
      "min", po::value(&o.min_size)->default_value(o.min_size), "smallest size (bytes; K, M, G)")(
      "max", po::value(&o.max_size)->default_value(o.max_size), "largest size")(
      "factor", po::value(&o.factor)->default_value(2), "size multiplier between rows");
  po::variables_map values;
  if (!parse(args, options, {}, &values,
             "clustersim collective --instance NAME [--nodes N] [--op OP] [options]")) {
    return kExitOk;
  }
  auto format = output_format(common);
  if (!format) return kExitUsage;
  return run(o, common, *format);
}

}  // namespace clustersim::cli
