// `clustersim input SCENARIO`: the input pipeline of each configuration of a scenario whose job
// has a dataloader: the data stall of an epoch read from storage and of later epochs read from
// the page cache, the busy fraction of each stage, the limiting one, and what removes it (vCPUs
// and workers, a storage tier or capacity, packing files into shards, host memory).
#include <cmath>
#include <iostream>

#include "sim/input/input_advice.h"
#include "sim/input/input_model.h"
#include "sim/sweep/evaluation.h"
#include "sim/sweep/runnable.h"
#include "sim/util/number_format.h"
#include "sim/util/units.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"

namespace clustersim::cli {
namespace {

namespace s = schema;

std::string percent(double fraction) { return format_fixed(100 * fraction, 0) + "%"; }
std::string seconds(double value) { return format_fixed(value, 3) + " s"; }

void print_run(const std::string& what, const InputPipelineRun& run, bool from_storage) {
  std::cout << "  " << what << ": step " << seconds(run.step_period_s) << ", data stall "
            << seconds(run.stall_per_step_s) << ", limited by "
            << (run.limiting.empty() ? "the GPU step" : run.limiting) << "\n    busy: ";
  if (from_storage) std::cout << "storage " << percent(run.storage_utilisation) << ", ";
  std::cout << "CPU " << percent(run.cpu_utilisation) << ", workers "
            << percent(run.worker_utilisation) << ", pinned copy " << percent(run.pin_utilisation)
            << ", PCIe " << percent(run.pcie_utilisation) << "\n";
}

// " at C GiB", and what it buys above the baseline: the fields a volume writes.
std::string storage_option(const StorageOption& o) {
  std::string text = " at " + format_number(o.capacity_gib) + " GiB";
  const char* joint = " with ";
  if (o.provisioned_throughput_mb_per_s > 0) {
    text += joint + std::string("provisioned_throughput_mb_per_s ") +
            format_number(o.provisioned_throughput_mb_per_s);
    joint = " and ";
  }
  if (o.provisioned_iops > 0) {
    text += joint + std::string("provisioned_iops ") + format_number(o.provisioned_iops);
  }
  return text;
}

void print_advice(const Configuration& c, const InputEstimate& e, const InputAdvice& a) {
  const s::StorageVolume& volume = *c.dataset_storage;
  const InputPipelineSpec& spec = e.setup.spec;
  std::cout << "  advice:\n    CPU: ";
  if (a.cpu_beyond_catalog) {
    std::cout << "at least " << a.vcpus_needed << " vCPUs on a node and workers_per_gpu "
              << a.workers_per_gpu_needed << " (a step's CPU and worker seconds over the step); "
              << "not simulated: more vCPUs or worker processes than the largest instance has ("
              << a.largest_catalog_instance << ", " << a.largest_catalog_vcpus << " vCPUs)";
  } else {
    std::cout << a.vcpus_needed << " vCPUs on a node with workers_per_gpu "
              << a.workers_per_gpu_needed << " keep up (stall left "
              << seconds(a.stall_with_cpu_advice_s) << ")";
  }
  std::cout << "; the job has " << e.setup.node_vcpus << " vCPUs and workers_per_gpu "
            << spec.workers_per_loader << "; with workers_per_gpu "
            << a.workers_per_gpu_within_vcpus << " (one per vCPU it has) the stall is "
            << seconds(a.stall_within_vcpus_s) << "\n";
  // Several nodes read one shared file system together, each its own block volume.
  const bool shared = a.volume_readers > 1;
  std::cout << "    storage: the GPUs "
            << (c.nodes == 1 ? ""
                : shared     ? "of all " + std::to_string(c.nodes) + " nodes "
                             : "of each of the " + std::to_string(c.nodes) + " nodes ")
            << "read " << format_fixed(a.read_bytes_per_s_needed / 1e6, 0) << " MB/s in "
            << format_fixed(a.read_iops_needed, 0) << " IOPS; " << volume.tier()
            << (c.nodes == 1 ? "" : shared ? " (one file system)" : " (a volume per node)")
            << " at " << format_number(volume.capacity_gib()) << " GiB gives "
            << format_fixed(a.read_bytes_per_s_available / 1e6, 0) << " MB/s, "
            << (std::isinf(a.read_iops_available)
                    ? "no IOPS limit"
                    : format_fixed(a.read_iops_available, 0) + " IOPS")
            << "\n      ";
  if (a.volume_enough) {
    std::cout << "enough at this capacity";
  } else if (!a.volume_needed) {
    std::cout << volume.tier() << " cannot at any capacity";
  } else {
    std::cout << volume.tier() << " does" << storage_option(*a.volume_needed);
  }
  for (const StorageOption& o : a.other_tiers) std::cout << "; " << o.tier << storage_option(o);
  std::cout << "\n";
  if (a.stall_with_shards_s) {
    std::cout << "    layout: packed into shards, an epoch from storage stalls "
              << seconds(*a.stall_with_shards_s) << " per step (now "
              << seconds(e.from_storage.stall_per_step_s) << ")\n";
  }
  std::cout << "    host memory: " << format_number(a.host_memory_gib) << " GiB for GPUs with "
            << format_number(a.gpu_memory_gib) << " GiB"
            << (a.host_memory_low ? ": WARNING below the 1.5-2x rule of thumb of cloud guides"
                                  : " (at least the 1.5x rule of thumb)")
            << "\n";
}

// The report's figures as table columns, for --format csv|json (one row per configuration).
Table input_table() {
  Table table = layout_table();
  table.add_columns({{"fits", "fits"},
                     {"gpu_step_s", "GPU step s", 3},
                     {"batch_samples_per_gpu", "samples/GPU"},
                     {"storage_epoch_stall_s", "stall s", 3},
                     {"storage_epoch_limiting", "limiting"},
                     {"storage_utilisation", "storage", 2},
                     {"cpu_utilisation", "CPU", 2},
                     {"cached_epoch_stall_s", "cached stall s", 3},
                     {"cached_epoch_limiting", "cached limiting"},
                     {"epochs", "epochs", 1},
                     {"data_stall_s", "job stall s", 3},
                     {"mfu", "MFU", 3},
                     {"vcpus_needed", "vCPUs needed"},
                     {"workers_per_gpu_needed", "workers needed"},
                     {"read_mb_per_s_needed", "MB/s needed", 0},
                     {"read_iops_needed", "IOPS needed", 0},
                     {"read_mb_per_s_available", "MB/s", 0},
                     {"read_iops_available", "IOPS", 0},
                     {"capacity_gib_needed", "GiB needed", 0},
                     {"sharded_epoch_stall_s", "sharded stall s", 3},
                     {"host_memory_gib", "host GiB", 0},
                     {"host_memory_low", "host low"}});
  return table;
}

// Requires: estimate and advice when e.step (else null; the cells after "fits" stay empty).
std::vector<Table::Cell> input_cells(const Configuration& c, const Evaluation& e,
                                     const InputEstimate* estimate, const InputAdvice* a,
                                     size_t columns) {
  using Cell = Table::Cell;
  std::vector<Cell> cells = layout_cells(c);
  cells.emplace_back(e.step.has_value());
  if (!e.step) {
    cells.resize(columns);
    return cells;
  }
  const InputPipelineRun& storage = estimate->from_storage;
  const std::optional<InputPipelineRun>& cached = estimate->cached;
  const auto number = [&](double value) { cells.emplace_back(value); };
  const auto maybe = [&](const std::optional<double>& value) {
    if (value) {
      cells.emplace_back(*value);
    } else {
      cells.emplace_back();
    }
  };
  number(e.step->step_s - e.step->data_stall_s);
  number(static_cast<double>(estimate->setup.spec.batch_samples));
  number(storage.stall_per_step_s);
  cells.emplace_back(storage.limiting);
  number(storage.storage_utilisation);
  number(storage.cpu_utilisation);
  maybe(cached ? std::optional(cached->stall_per_step_s) : std::nullopt);
  if (cached) {
    cells.emplace_back(cached->limiting);
  } else {
    cells.emplace_back();
  }
  number(estimate->setup.epochs);
  number(e.step->data_stall_s);
  number(e.step->mfu);
  // Beyond the catalog's largest instance the advice is a lower bound, not a simulated answer.
  const auto simulated = [&](int count) {
    maybe(a->cpu_beyond_catalog ? std::nullopt : std::optional(static_cast<double>(count)));
  };
  simulated(a->vcpus_needed);
  simulated(a->workers_per_gpu_needed);
  number(a->read_bytes_per_s_needed / 1e6);
  number(a->read_iops_needed);
  number(a->read_bytes_per_s_available / 1e6);
  maybe(std::isinf(a->read_iops_available) ? std::nullopt
                                           : std::optional(a->read_iops_available));
  maybe(a->volume_needed ? std::optional(a->volume_needed->capacity_gib) : std::nullopt);
  maybe(a->stall_with_shards_s);
  number(a->host_memory_gib);
  cells.emplace_back(a->host_memory_low);
  return cells;
}

}  // namespace

int input_command(const std::vector<std::string>& args) {
  int exit_code = kExitOk;
  auto inputs =
      load_scenario_command(args, "input", "configurations to report (0: all)", &exit_code);
  if (!inputs) return exit_code;
  const LoadedScenario& loaded = *inputs->scenario;
  if (!loaded.scenario().job().has_dataloader()) {
    std::cerr << inputs->path << ": job.dataloader: not set, so the GPUs are assumed fed\n";
    return kExitInputError;
  }
  const ExpandedConfigurations space = expand_configurations(loaded);
  const Runnability runnable = check_scenario_runs(*inputs);
  if (runnable.valid == 0) return kExitInputError;
  const bool report = inputs->format == OutputFormat::kTable;
  Table table = input_table();
  const std::optional<size_t> shown =
      evaluate_each(*inputs, space, [&](const Configuration& c, const Evaluation& e) {
        if (!report) {
          if (!e.step) {
            return table.add_row(input_cells(c, e, nullptr, nullptr, table.column_count()));
          }
          const InputEstimate estimate = estimate_input(input_setup(
              *inputs->catalog, loaded, c, e.step->step_s - e.step->data_stall_s));
          const InputAdvice advice = advise_input(*inputs->catalog, loaded, c, estimate);
          return table.add_row(input_cells(c, e, &estimate, &advice, table.column_count()));
        }
        std::cout << describe(c);
        if (!e.step) {
          std::cout << ": does not fit in GPU memory\n";
          return;
        }
        const double gpu_step_s = e.step->step_s - e.step->data_stall_s;
        const InputEstimate estimate =
            estimate_input(input_setup(*inputs->catalog, loaded, c, gpu_step_s));
        const InputSetup& setup = estimate.setup;
        std::cout << ": GPU step " << seconds(gpu_step_s) << ", " << setup.spec.batch_samples
                  << " samples per GPU\n";
        print_run("epoch from storage", estimate.from_storage, true);
        const double dataset_gib = setup.dataset_bytes / kBytesPerGibibyte;
        const double cache_gib = setup.page_cache_bytes / kBytesPerGibibyte;
        if (estimate.cached) {
          print_run("later epochs from the page cache", *estimate.cached, false);
        } else {
          std::cout << "  page cache: " << format_fixed(dataset_gib, 1) << " GiB dataset, "
                    << format_fixed(cache_gib, 1) << " GiB of host memory beyond the GPUs'"
                    << (setup.cached_after_first_epoch ? " (fits; the job makes one epoch)"
                                                       : ": every epoch reads storage")
                    << "\n";
        }
        std::cout << "  job (" << format_fixed(setup.epochs, 1) << " epochs): data stall "
                  << seconds(e.step->data_stall_s) << " per step, step " << seconds(e.step->step_s)
                  << ", MFU " << format_fixed(e.step->mfu, 3)
                  << " (fed: " << format_fixed(e.step->mfu * e.step->step_s / gpu_step_s, 3)
                  << ")\n";
        print_advice(c, estimate, advise_input(*inputs->catalog, loaded, c, estimate));
      });
  if (!shown) return kExitInputError;
  if (!report) table.print(std::cout, inputs->format);
  if (report && *shown < space.valid.size()) {
    std::cout << "... " << space.valid.size() - *shown << " more (--limit 0 reports all)\n";
  }
  return runnable.runs ? kExitOk : kExitInputError;
}

}  // namespace clustersim::cli
