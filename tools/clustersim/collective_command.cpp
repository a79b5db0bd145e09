// `clustersim collective`: simulates one collective over a sweep of sizes on a modeled cluster and
// prints it exactly in the layout of nccl-tests' *_perf programs, so users hold it next to their
// own nccl-tests output and their parsers read both; --format csv|json gives the same figures as a
// table with the algorithm of each size.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "sim/io/scenario_loader.h"
#include "sim/net/collective.h"
#include "sim/net/topology_builder.h"
#include "sim/util/closest_name.h"
#include "sim/util/number_format.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"

namespace clustersim::cli {
namespace {

// The largest size: a terabyte crosses even a 1 Gbit/s NIC in hours, far inside the simulated
// clock's 107 days.
constexpr double kMaxSizeBytes = 1024.0 * 1024 * 1024 * 1024;
// The most sizes one run prints (nccl-tests' 8 B to 8 GiB by 2 are 31).
constexpr int kMaxSizes = 1000;

// "8", "64K", "8M", "1G" (binary multiples, as nccl-tests reads -b and -e); nullopt if malformed
// or larger than kMaxSizeBytes.
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
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos ||
      digits.size() > 15) {  // more digits than any size up to kMaxSizeBytes has
    return std::nullopt;
  }
  const double size = std::stod(digits) * scale;
  if (size > kMaxSizeBytes) return std::nullopt;
  return size;
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
  std::string min_size;  // empty: kDefaultMinBytes, raised to one element per rank
  std::string max_size = "8G";
  double factor = 2;
};

struct SizeResult {
  double size_bytes;
  double count;  // elements per rank, as nccl-tests counts them
  CollectiveAlgorithm algorithm;
  double seconds, algbw, busbw;
};

// The smallest size when --min is not given: where the usual nccl-tests sweep starts (-b 8 -e 8G
// -f 2, as kMaxSizes above).
constexpr double kDefaultMinBytes = 8;
constexpr double kElementBytes = 4;  // a float, the type nccl-tests' rows count

// Whether the collective splits its size over the ranks (each rank's buffer is size / ranks).
bool splits_over_ranks(CollectiveOp op) {
  return op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter ||
         op == CollectiveOp::kAllToAll;
}

// What each rank's buffer holds a whole number of: a float, or, where the size is split over the
// ranks, 16 bytes (4 floats), to which nccl-tests trims such buffers (NVIDIA/nccl-tests 29f4114,
// 2024-12-18: "trim buffer sizes to be multiples of 16 bytes"; 4 elements since 2022).
double rank_granule_bytes(CollectiveOp op) { return splits_over_ranks(op) ? 16 : kElementBytes; }

// The least size with a count above 0 (7 bytes of all_to_all over 6 GPUs printed "0").
double least_size_bytes(CollectiveOp op, int ranks) {
  return rank_granule_bytes(op) * (splits_over_ranks(op) ? ranks : 1);
}

// The size nccl-tests moves and prints for a requested one: each rank's buffer rounded down to
// its granule, times the ranks where the size is split over them. 200 bytes of all_gather over 8
// GPUs are 128 (4 floats a rank); the requested size was simulated beside the rounded count.
double moved_size_bytes(CollectiveOp op, double size_bytes, int ranks) {
  const double least = least_size_bytes(op, ranks);
  return std::floor(size_bytes / least) * least;
}

// nccl-tests' count column: float elements of each rank's buffer of a moved size.
double elements_per_rank(CollectiveOp op, double moved_bytes, int ranks) {
  return moved_bytes / kElementBytes / (splits_over_ranks(op) ? ranks : 1);
}

// The text nccl-tests' *_perf programs print, so their parsers read ours: '#' header lines, a row
// per size with out-of-place and in-place groups (equal: a simulation has no in-place effect)
// and #wrong "N/A" (no data is checked, as nccl-tests prints with -c 0), then the footer with
// the average bus bandwidth. Which algorithm each size used is in the header.
void print_nccl_tests_layout(const Options& o, CollectiveOp op, int gpus,
                             const std::vector<SizeResult>& results) {
  const bool reduces = op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter;
  const char* redop = reduces ? "sum" : "none";
  const int root = op == CollectiveOp::kBroadcast ? 0 : -1;
  std::printf("# clustersim collective (simulated): %s on %d x %s (%d GPUs), fabric %s\n",
              o.op.c_str(), o.nodes, o.instance.c_str(), gpus,
              o.fabric.empty() ? "single-switch" : o.fabric.c_str());
  std::printf("# nThread 1 nGpus %d minBytes %.0f maxBytes %.0f step: %g(factor) warmup iters: 0 "
              "iters: 1 agg iters: 1 validation: 0 graph: 0\n",
              gpus, results.front().size_bytes, results.back().size_bytes, o.factor);
  for (size_t i = 0; i < results.size();) {  // runs of sizes with one algorithm
    size_t j = i;
    while (j + 1 < results.size() && results[j + 1].algorithm == results[i].algorithm) ++j;
    std::printf("# algorithm %s: %.0f to %.0f bytes\n",
                collective_algorithm_name(results[i].algorithm).c_str(), results[i].size_bytes,
                results[j].size_bytes);
    i = j + 1;
  }
  std::printf("#\n# %10s  %12s  %8s  %6s  %6s           out-of-place                       "
              "in-place          \n",
              "", "", "", "", "");
  std::printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size",
              "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time",
              "algbw", "busbw", "#wrong");
  std::printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)",
              "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
              "(GB/s)", "");
  double busbw_sum = 0;
  for (const SizeResult& r : results) {
    const double us = r.seconds * 1e6;
    const int decimals = us >= 10000 ? 0 : us >= 100 ? 1 : 2;
    std::printf("%12.0f  %12.0f  %8s  %6s  %6d", r.size_bytes, r.count, "float", redop, root);
    for (int group = 0; group < 2; ++group) {  // out-of-place, in-place
      std::printf("  %7.*f  %6.2f  %6.2f  %5s", decimals, us, r.algbw, r.busbw, "N/A");
    }
    std::printf("\n");
    busbw_sum += 2 * r.busbw;
  }
  std::printf("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %g \n#\n",
              busbw_sum / (2.0 * static_cast<double>(results.size())));
}

int run(const Options& o, const CommonOptions& common, OutputFormat format) {
  auto op = parse_collective_op(o.op);
  auto algorithm = parse_collective_algorithm(o.algorithm);
  auto min_size = o.min_size.empty() ? kDefaultMinBytes : parse_size(o.min_size);
  auto max_size = parse_size(o.max_size);
  std::string problem;
  if (!op)
    problem = "--op: unknown collective \"" + o.op +
              "\": use all_reduce, reduce_scatter, all_gather, broadcast, all_to_all or send_recv";
  else if (!algorithm)
    problem = "--algo: unknown algorithm \"" + o.algorithm +
              "\": use auto, ring, tree, hierarchical, nvls or direct";
  else if (!min_size || !max_size)
    problem = "--min/--max: sizes are whole numbers with an optional K, M or G, at most 1024G";
  else if (*min_size > *max_size)
    problem = "--min must not exceed --max";
  else if (!(o.factor > 1))
    problem = "--factor must be > 1";
  else if (*min_size > 0 && std::log(*max_size / *min_size) / std::log(o.factor) >= kMaxSizes)
    problem = "--factor " + format_number(o.factor) + " makes more than " +
              std::to_string(kMaxSizes) + " sizes from --min to --max";
  if (!problem.empty()) {
    command_error("collective") << problem << "\n";
    return kExitUsage;
  }
  auto catalog = load_catalog(common);
  if (!catalog) return kExitInputError;
  ClusterSpec spec;
  if (const auto* entry = catalog->instances().find(o.instance)) spec.instance = entry->value;
  if (!spec.instance) {
    command_error("collective") << "--instance: unknown instance type \"" << o.instance << "\""
                                << did_you_mean(o.instance, catalog->instances().names()) << "\n";
    return kExitUsage;
  }
  if (!o.fabric.empty()) {
    const auto* entry = catalog->fabrics().find(o.fabric);
    if (!entry) {
      command_error("collective") << "--fabric: unknown fabric \"" << o.fabric << "\""
                                  << did_you_mean(o.fabric, catalog->fabrics().names()) << "\n";
      return kExitUsage;
    }
    spec.fabric = entry->value;
  }
  const int64_t gpus =
      int64_t{o.nodes} * (o.gpus_per_node > 0 ? o.gpus_per_node : spec.instance->gpu_count());
  if (gpus > kMaxConfigurationGpus) {
    command_error("collective") << "--nodes: " << o.nodes << " nodes are " << gpus
                                << " GPUs, more than the " << kMaxConfigurationGpus
                                << " a configuration may have\n";
    return kExitUsage;
  }
  spec.nodes = o.nodes;
  spec.gpus_per_node = o.gpus_per_node;
  spec.nvlink_domain_nodes = o.nvlink_domain_nodes;
  spec.oversubscription_override = o.oversubscription;
  TopologyOrError built = build_topology(spec, *catalog);
  if (!built.topology) {
    command_error("collective") << built.error << "\n";
    return kExitUsage;
  }
  const Topology& topology = *built.topology;
  const double least = least_size_bytes(*op, topology.gpu_count());
  const std::string per_rank =
      " bytes of " + o.op + " over " + std::to_string(topology.gpu_count()) + " GPUs" +
      (splits_over_ranks(*op)
           ? " are less than the 16 bytes (4 floats) per rank nccl-tests trims each rank's buffer to"
           : " are less than one 4-byte float element per rank") +
      " (a count of 0)";
  if (o.min_size.empty()) {
    min_size = std::max(*min_size, least);
  } else if (*min_size < least) {
    command_error("collective") << "--min: " << format_number(*min_size) << per_rank
                                << ": give --min >= " << format_number(least) << "\n";
    return kExitUsage;
  }
  if (*max_size < *min_size) {  // only where the default --min was raised to `least`
    command_error("collective") << "--max: " << format_number(*max_size) << per_rank
                                << ": give --max >= " << format_number(least) << "\n";
    return kExitUsage;
  }
  std::vector<SizeResult> results;
  for (double requested = *min_size; requested <= *max_size; requested *= o.factor) {
    const double size = moved_size_bytes(*op, requested, topology.gpu_count());
    Collective c{*op, topology.first_gpus(), size, *algorithm};
    if (const std::string why = collective_problem(c, topology); !why.empty()) {
      command_error("collective") << why << "\n";
      return kExitUsage;
    }
    c.algorithm = choose_algorithm(c, topology);
    const double seconds = collective_time(topology, c).seconds();
    const double algbw = size / seconds / kBytesPerGigabyte;
    results.push_back({size, elements_per_rank(*op, size, topology.gpu_count()), c.algorithm,
                       seconds, algbw, algbw * bus_bandwidth_factor(*op, topology.gpu_count())});
  }
  if (format == OutputFormat::kTable) {
    print_nccl_tests_layout(o, *op, topology.gpu_count(), results);
    return kExitOk;
  }
  Table table{{"size_bytes", "size(B)"},
              {"count", "count"},
              {"type", "type"},
              {"algorithm", "algo"},
              {"time_us", "time(us)", 2},
              {"algbw_gb_per_s", "algbw(GB/s)", 2},
              {"busbw_gb_per_s", "busbw(GB/s)", 2}};
  for (const SizeResult& r : results) {
    table.add_row({r.size_bytes, r.count, std::string("float"),
                   collective_algorithm_name(r.algorithm), r.seconds * 1e6, r.algbw, r.busbw});
  }
  table.print(std::cout, format);
  return kExitOk;
}

}  // namespace

int collective_command(const std::vector<std::string>& args) {
  CommonOptions common;
  Options o;
  po::options_description options("collective options");
  add_common_options(&options, &common, "collective");
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
      "min", po::value(&o.min_size),
      "smallest size (bytes; K, M, G; default 8, or 16 bytes per rank where the size is split "
      "over the ranks: all_gather, reduce_scatter, all_to_all)")(
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
