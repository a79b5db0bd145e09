// Loading, name indexing and cross-reference checks of the catalog.
#include "sim/io/catalog.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "sim/hw/sustained_fraction.h"
#include "sim/input/dataloading_cost.h"
#include "sim/io/entry_checks.h"
#include "sim/io/catalog_reference.h"
#include "sim/io/field_checker.h"
#include "sim/serve/serving_default_fit.h"
#include "sim/util/closest_name.h"
#include "sim/util/fnv1a.h"
#include "sim/util/number_format.h"

namespace clustersim {
namespace {

namespace fs = std::filesystem;
namespace s = schema;

std::vector<std::string> textproto_files(const std::string& directory, Diagnostics* diagnostics) {
  std::vector<std::string> paths;
  std::error_code error;
  if (!fs::is_directory(directory, error)) {
    // A file given for a directory was reported as a directory that does not exist.
    diagnostics->add_error({directory, 0, 0}, "",
                           fs::exists(directory, error)
                               ? "is not a directory: a catalog is a directory of .textproto files"
                               : "catalog directory does not exist");
    return paths;
  }
  bool named_any = false;  // a .textproto file, readable or not
  for (fs::recursive_directory_iterator it(directory, error), end; !error && it != end;
       it.increment(error)) {
    if (it->path().extension() != ".textproto") continue;
    // With the error code: a symlink loop (or an entry whose status the process may not read)
    // threw std::filesystem_error out of every command.
    std::error_code status_error;
    const bool regular = it->is_regular_file(status_error);
    if (regular) paths.push_back(it->path().string());
    named_any = named_any || regular || status_error;
    if (status_error) {
      diagnostics->add_error({it->path().string(), 0, 0}, "",
                             "cannot read: " + status_error.message());
    }
  }
  if (error) {
    diagnostics->add_error({directory, 0, 0}, "", "cannot list: " + error.message());
  } else if (!named_any) {
    // An empty directory (or one of .txt files: a wrong path, an unsaved copy) added nothing to
    // the catalog without a word.
    diagnostics->add_error({directory, 0, 0}, "",
                           "holds no catalog files: a catalog is a directory of .textproto files");
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// Adds entry `index` of `field` under its name; reports a duplicate within one directory and
// notes a replacement of an entry from an earlier directory.
template <class T>
void index_entry(const FieldChecker& root, const char* field, int index, const T& value,
                 int directory, std::map<std::string, int>* directory_of_name,
                 NamedEntries<T>* entries, Diagnostics* diagnostics) {
  if (!value.has_name()) return;  // reported by the entry's checks
  const SourceLocation where = root.location(field, index);
  auto& all = entries->mutable_all();
  auto existing = all.find(value.name());
  const std::string key = std::string(field) + "/" + value.name();
  if (existing != all.end()) {
    if ((*directory_of_name)[key] == directory) {
      root.error(field,
                 "duplicate name \"" + value.name() + "\", first defined at " +
                     existing->second.where.to_string(),
                 index);
      return;
    }
    diagnostics->add_warning(
        where, root.path(field, index),
        "\"" + value.name() + "\" replaces the entry at " + existing->second.where.to_string());
  }
  all[value.name()] = CatalogEntry<T>{&value, where};
  (*directory_of_name)[key] = directory;
}

// The entry a head-dimension-scaled attention entry takes its curve from
// (AttentionEfficiency.scaled_from_head_dim): the same pass, mask, precision and library at that
// head dimension, with values of its own.
const s::AttentionEfficiency* scaled_attention_base(const s::Gpu& gpu,
                                                    const s::AttentionEfficiency& scaled) {
  for (const s::AttentionEfficiency& e : gpu.attention_efficiency()) {
    if (!e.has_scaled_from_head_dim() && e.head_dim() == scaled.scaled_from_head_dim() &&
        e.pass() == scaled.pass() && e.causal() == scaled.causal() &&
        e.precision() == scaled.precision() && e.library() == scaled.library()) {
      return &e;
    }
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<Catalog> Catalog::load(const std::vector<std::string>& directories,
                                       Diagnostics* diagnostics) {
  auto catalog = std::unique_ptr<Catalog>(new Catalog());
  for (size_t d = 0; d < directories.size(); ++d) {
    for (const std::string& path : textproto_files(directories[d], diagnostics)) {
      auto file = read_text_file<s::CatalogFile>(path, diagnostics);
      if (!file) continue;
      std::filesystem::path directory = std::filesystem::path(directories[d]).lexically_normal();
      if (!directory.has_filename()) directory = directory.parent_path();  // "dir/" -> "dir"
      catalog->file_names_.push_back(
          (directory.filename() / std::filesystem::path(path).lexically_relative(directory))
              .string());
      catalog->add_file(std::move(file), static_cast<int>(d), diagnostics);
    }
  }
  catalog->check_references(diagnostics);
  catalog->fingerprint_ = catalog->hash_files();
  catalog->derive_fitted_values(diagnostics);
  catalog->resolve_serving_extensions(diagnostics);
  catalog->derive_serving_defaults(diagnostics);
  return catalog;
}

std::string Catalog::fingerprint() const { return fingerprint_; }

std::string Catalog::hash_files() const {
  std::string text;
  for (size_t i = 0; i < files_.size(); ++i) {
    std::string bytes;
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    files_[i]->message.SerializeToCodedStream(&coded);
    coded.Trim();
    Fnv1a hash;
    for (unsigned char byte : bytes) hash.add(byte);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash.value()));
    text += file_names_[i] + " " + hex + "\n";
  }
  return text;
}

void Catalog::add_file(std::unique_ptr<TextFile<s::CatalogFile>> file, int directory,
                       Diagnostics* diagnostics) {
  const FieldChecker root = FieldChecker::root(*file, diagnostics);
  const s::CatalogFile& m = file->message;
  // An empty file (or one of comments only: a truncated copy, an unsaved edit) added nothing and
  // replaced nothing without a word.
  if (m.ByteSizeLong() == 0) {
    root.error_here(
        "defines no entries: a catalog file lists gpu, instance, storage, fabric, model, "
        "link_class, runtime, serving_runtime, dataloading_cost or provider entries");
  }
  add_entries(root, "gpu", m.gpu(), check_gpu, directory, &gpus_, diagnostics);
  add_entries(root, "instance", m.instance(), check_instance, directory, &instances_, diagnostics);
  add_entries(root, "storage", m.storage(), check_storage, directory, &storage_, diagnostics);
  add_entries(root, "fabric", m.fabric(), check_fabric, directory, &fabrics_, diagnostics);
  add_entries(root, "model", m.model(), check_model, directory, &models_, diagnostics);
  add_entries(root, "link_class", m.link_class(), check_link_class, directory, &link_classes_,
              diagnostics);
  add_entries(root, "runtime", m.runtime(), check_runtime, directory, &runtimes_, diagnostics);
  add_entries(root, "serving_runtime", m.serving_runtime(), check_serving_runtime, directory,
              &serving_runtimes_, diagnostics);
  add_entries(root, "dataloading_cost", m.dataloading_cost(), check_dataloading_cost, directory,
              &dataloading_costs_, diagnostics);
  add_entries(root, "provider", m.provider(), check_provider, directory, &providers_, diagnostics);
  files_.push_back(std::move(file));
}

template <class T>
void Catalog::add_entries(const FieldChecker& root, const char* field,
                          const google::protobuf::RepeatedPtrField<T>& values,
                          void (*check)(const FieldChecker&), int directory,
                          NamedEntries<T>* entries, Diagnostics* diagnostics) {
  for (int i = 0; i < values.size(); ++i) {
    check(root.child(field, i));
    index_entry(root, field, i, values.Get(i), directory, &directory_of_name_, entries,
                diagnostics);
  }
}

void Catalog::check_references(Diagnostics* diagnostics) const {
  for (const auto& file : files_) {
    const FieldChecker root = FieldChecker::root(*file, diagnostics);
    for (int i = 0; i < file->message.instance_size(); ++i) {
      const s::InstanceType& instance = file->message.instance(i);
      const FieldChecker entry = root.child("instance", i);
      if (!instance.has_gpu()) continue;
      const CatalogEntry<s::Gpu>* gpu = gpus_.find(instance.gpu());
      if (gpu == nullptr) {
        entry.error("gpu", "unknown GPU \"" + instance.gpu() + "\"" +
                               did_you_mean(instance.gpu(), gpus_.names()));
        continue;
      }
      if (instance.gpu_interconnect() == s::NVSWITCH && !gpu->value->has_nvlink()) {
        entry.error("gpu_interconnect",
                    "is NVSWITCH but GPU \"" + instance.gpu() + "\" has no nvlink");
      }
      if (instance.gpu_interconnect() == s::HCCS && !gpu->value->has_hccs()) {
        entry.error("gpu_interconnect", "is HCCS but GPU \"" + instance.gpu() + "\" has no hccs");
      }
      // A provider reports slightly less than the label (ECC, driver reserve), never more.
      if (instance.has_gpu_memory_gib() &&
          instance.gpu_memory_gib() > 1.02 * gpu->value->memory_gib()) {
        entry.error("gpu_memory_gib", "exceeds the memory of GPU \"" + instance.gpu() + "\"");
      }
    }
    for (int i = 0; i < file->message.serving_runtime_size(); ++i) {
      const s::ServingRuntime& runtime = file->message.serving_runtime(i);
      for (int g = 0; g < runtime.gpu_size(); ++g) {
        const std::string& name = runtime.gpu(g).gpu();
        if (!name.empty() && gpus_.find(name) == nullptr) {
          root.child("serving_runtime", i)
              .child("gpu", g)
              .error("gpu", "unknown GPU \"" + name + "\"" + did_you_mean(name, gpus_.names()));
        }
      }
    }
    for (int i = 0; i < file->message.gpu_size(); ++i) {
      for (int a = 0; a < file->message.gpu(i).aliases_size(); ++a) {
        const std::string& alias = file->message.gpu(i).aliases(a);
        if (gpus_.find(alias) != nullptr) {
          root.child("gpu", i).error("aliases", "\"" + alias + "\" is the name of a GPU", a);
        }
      }
    }
  }
}

bool Catalog::check_transfer(const FieldChecker& transfer, const s::Gpu& gpu,
                             s::Precision precision) const {
  const auto& m = static_cast<const s::SustainedTransfer&>(transfer.message());
  const CatalogEntry<s::Gpu>* reference = nullptr;
  if (m.has_reference_gpu() && (reference = gpus_.find(m.reference_gpu())) == nullptr) {
    transfer.error("reference_gpu", "unknown GPU \"" + m.reference_gpu() + "\"" +
                                        did_you_mean(m.reference_gpu(), gpus_.names()));
    return false;
  }
  bool derivable = true;
  if (!step_sustained_fraction_fitted(gpu, m.from_precision())) {
    transfer.error("from_precision", "GPU \"" + gpu.name() +
                                         "\" has no fitted sustained fraction of " +
                                         s::Precision_Name(m.from_precision()) + " steps");
    derivable = false;
  }
  if (reference == nullptr) return derivable;
  // A reference without the fits (a user's replacement entry) leaves the steps to the default.
  for (const s::Precision p : {precision, m.from_precision()}) {
    if (!step_sustained_fraction_fitted(*reference->value, p)) {
      transfer.warning("reference_gpu",
                       "GPU \"" + m.reference_gpu() + "\" has no fitted sustained fraction of " +
                           s::Precision_Name(p) + " steps: " + s::Precision_Name(precision) +
                           " steps take the runtime's default");
      derivable = false;
    }
  }
  return derivable;
}

void Catalog::derive_server_transfer(const FieldChecker& transfer, s::Gpu* gpu) const {
  const s::SustainedServerTransfer& m = gpu->sustained_server_transfer();
  const auto find = [&](const char* field, const std::string& name) -> const s::Gpu* {
    if (name.empty()) return nullptr;  // required: reported by the entry's checks
    return resolve_reference(transfer, field, -1, name, gpus_, "GPU");
  };
  const s::Gpu *same = find("same_chip", m.same_chip()), *of = find("ratio_of", m.ratio_of()),
               *to = find("ratio_to", m.ratio_to());
  if (same == nullptr || of == nullptr || to == nullptr) return;
  if (same->has_sustained_server_transfer()) {
    transfer.error("same_chip", "GPU \"" + m.same_chip() +
                                    "\" takes its sustained fractions from another server itself");
    return;
  }
  // A ratio GPU or same_chip without the fractions (a user's replacement entry) leaves the steps
  // to the runtime's default.
  const std::string ratio = s::Precision_Name(m.ratio_precision());
  bool ratio_fitted = true;
  for (const auto& [field, ratio_gpu] : {std::pair("ratio_of", of), std::pair("ratio_to", to)}) {
    if (!step_sustained_fraction_fitted(*ratio_gpu, m.ratio_precision())) {
      transfer.warning(field, "GPU \"" + ratio_gpu->name() +
                                  "\" has no fitted sustained fraction of " + ratio +
                                  " steps: this GPU's steps take the runtime's default");
      ratio_fitted = false;
    }
  }
  if (!ratio_fitted) return;
  for (s::MatmulEfficiency& e : *gpu->mutable_matmul_efficiency()) {
    if (!step_sustained_fraction(*same, e.precision())) {
      transfer.warning("same_chip", "GPU \"" + m.same_chip() + "\" has no sustained fraction of " +
                                        s::Precision_Name(e.precision()) + " steps: " +
                                        s::Precision_Name(e.precision()) +
                                        " steps take the runtime's default");
      continue;
    }
    const auto carried = [&](s::Fp8Recipe recipe) {
      return server_transferred_sustained_fraction(*same, *of, *to, m.ratio_precision(),
                                                   e.precision(), recipe);
    };
    e.set_sustained_fraction(carried(s::FP8_RECIPE_UNSPECIFIED));
    const s::MatmulEfficiency* same_e = matmul_efficiency(*same, e.precision());
    if (same_e != nullptr && same_e->has_mxfp8_sustained_fraction()) {
      e.set_mxfp8_sustained_fraction(carried(s::MXFP8));
    }
  }
}

namespace {

// Whether `gpu` can run `entry` of another GPU's at the same fraction of its peak: the peaks of
// the entry's precision equal (an FP8 entry: the FP8 peaks; a 16-bit one: BF16 and FP16).
bool same_attention_peaks(const s::Gpu& gpu, const s::Gpu& from, const s::AttentionEfficiency& entry) {
  const s::PeakTflops &a = gpu.peak_tflops(), &b = from.peak_tflops();
  if (entry.precision() == s::FP8) return a.fp8() == b.fp8();
  return a.bf16() == b.bf16() && a.fp16() == b.fp16();
}

}  // namespace

const s::Gpu* Catalog::attention_source(const FieldChecker& field, const s::Gpu& gpu) const {
  const s::Gpu* source = resolve_reference(field, "attention_efficiency_from", -1,
                                           gpu.attention_efficiency_from(), gpus_, "GPU");
  if (source == nullptr) return nullptr;
  if (gpu.attention_efficiency_size() > 0) {
    field.error("attention_efficiency_from",
                "this GPU has attention_efficiency entries: give one or the other");
    return nullptr;
  }
  const s::Gpu& from = *source;
  // A reference unlike this GPU (a user's replacement entry) leaves it at its flat fraction; one
  // whose peaks differ only in some precisions gives the entries of the others.
  bool sixteen_bit = false, fp8 = false, sixteen_bit_taken = false, fp8_taken = false;
  for (const s::AttentionEfficiency& e : from.attention_efficiency()) {
    const bool taken = same_attention_peaks(gpu, from, e);
    (e.precision() == s::FP8 ? fp8 : sixteen_bit) = true;
    (e.precision() == s::FP8 ? fp8_taken : sixteen_bit_taken) = taken;
  }
  const std::string sixteen_bit_peaks = "BF16 and FP16 peaks differ", fp8_peak = "FP8 peak differs";
  std::string why;
  if (from.attention_efficiency_size() == 0 || from.has_attention_efficiency_from()) {
    why = "it has no fitted attention_efficiency entries of its own";
  } else if (from.architecture().empty() || from.architecture() != gpu.architecture()) {
    why = "its architecture is \"" + from.architecture() + "\", not \"" + gpu.architecture() +
          "\"";
  } else if (!sixteen_bit_taken && !fp8_taken) {
    why = "its " +
          (sixteen_bit && fp8 ? "BF16, FP16 and FP8 peaks differ"
                              : sixteen_bit ? sixteen_bit_peaks : fp8_peak) +
          " from this GPU's";
  }
  if (why.empty()) {
    if (sixteen_bit && fp8 && sixteen_bit_taken != fp8_taken) {
      field.warning("attention_efficiency_from",
                    "takes GPU \"" + gpu.attention_efficiency_from() + "\"'s " +
                        (fp8_taken ? "FP8" : "16-bit") + " entries only: its " +
                        (fp8_taken ? sixteen_bit_peaks : fp8_peak) + " from this GPU's" +
                        (fp8_taken ? "; 16-bit fused attention runs at this GPU's "
                                     "flash_attention_fraction"
                                   : "; FP8 fused attention runs at the 16-bit entries"));
    }
    return &from;
  }
  field.warning("attention_efficiency_from",
                "cannot take GPU \"" + gpu.attention_efficiency_from() + "\"'s: " + why +
                    "; fused attention runs at this GPU's flash_attention_fraction");
  return nullptr;
}

void Catalog::derive_fitted_values(Diagnostics* diagnostics) {
  for (const auto& file : files_) {
    const FieldChecker root = FieldChecker::root(*file, diagnostics);
    for (int i = 0; i < file->message.gpu_size(); ++i) {
      s::Gpu* gpu = file->message.mutable_gpu(i);
      if (gpu->has_attention_efficiency_from()) {
        const s::Gpu* from = attention_source(root.child("gpu", i), *gpu);
        if (from != nullptr) {
          for (const s::AttentionEfficiency& e : from->attention_efficiency()) {
            if (same_attention_peaks(*gpu, *from, e)) *gpu->add_attention_efficiency() = e;
          }
          if (from->has_attention_dropout() && !gpu->has_attention_dropout()) {
            *gpu->mutable_attention_dropout() = from->attention_dropout();
          }
        }
      }
      for (int j = 0; j < gpu->attention_efficiency_size(); ++j) {
        s::AttentionEfficiency* e = gpu->mutable_attention_efficiency(j);
        // Those with values of their own: an error (entry_checks.cpp), or derived already (taken
        // from another GPU's).
        if (!e->has_scaled_from_head_dim() || !e->has_head_dim_ratio() || e->has_max_fraction()) {
          continue;
        }
        const s::AttentionEfficiency* base = scaled_attention_base(*gpu, *e);
        const double fraction = base ? base->max_fraction() * e->head_dim_ratio() : 0;
        if (base != nullptr && fraction <= 1) {
          e->set_max_fraction(fraction);
          e->set_half_rate_keys(base->half_rate_keys());
        } else if (!gpu->has_attention_efficiency_from()) {  // else reported at the source
          const FieldChecker field = root.child("gpu", i).child("attention_efficiency", j);
          if (base == nullptr) {
            field.error("scaled_from_head_dim",
                        "no entry of this pass, mask, precision and library at head dimension " +
                            std::to_string(e->scaled_from_head_dim()) +
                            " with a max_fraction of its own");
          } else {
            field.error("head_dim_ratio",
                        "puts max_fraction above 1 (" + format_number(fraction) + ")");
          }
        }
      }
      for (int j = 0; j < gpu->matmul_efficiency_size(); ++j) {
        s::MatmulEfficiency* e = gpu->mutable_matmul_efficiency(j);
        if (!e->has_sustained_transfer() || e->has_sustained_fraction()) continue;
        if (!check_transfer(
                root.child("gpu", i).child("matmul_efficiency", j).child("sustained_transfer"),
                *gpu, e->precision())) {
          continue;
        }
        const s::SustainedTransfer& transfer = e->sustained_transfer();
        e->set_sustained_fraction(transferred_sustained_fraction(
            *gpu, transfer.from_precision(),
            transfer.has_reference_gpu() ? gpus_.find(transfer.reference_gpu())->value : nullptr,
            e->precision()));
      }
    }
  }
  for (const auto& file : files_) {
    const FieldChecker root = FieldChecker::root(*file, diagnostics);
    for (int i = 0; i < file->message.gpu_size(); ++i) {
      s::Gpu* gpu = file->message.mutable_gpu(i);
      if (gpu->has_sustained_server_transfer()) {
        derive_server_transfer(root.child("gpu", i).child("sustained_server_transfer"), gpu);
      }
    }
  }
  std::vector<const s::Gpu*> gpus;
  for (const auto& [name, entry] : gpus_.all()) gpus.push_back(entry.value);
  std::vector<std::pair<const google::protobuf::FieldDescriptor*, double>> defaults;
  for (const RuntimeDefault& d : runtime_defaults()) {
    const std::optional<double> value = runtime_default(gpus, d);
    if (!value) break;  // none fitted: the same for every value
    defaults.emplace_back(s::Runtime::descriptor()->FindFieldByName(d.field), *value);
  }
  for (const auto& file : files_) {
    const FieldChecker root = FieldChecker::root(*file, diagnostics);
    for (int i = 0; i < file->message.runtime_size(); ++i) {
      s::Runtime* runtime = file->message.mutable_runtime(i);
      for (const auto& [field, value] : defaults) {
        runtime->GetReflection()->SetDouble(runtime, field, value);
      }
      if (defaults.empty()) {
        root.child("runtime", i)
            .error_here(
                "no GPU of the catalog has fitted efficiencies (not priors, with a 16-bit "
                "matmul_efficiency, memory_efficiency_fraction, flash_attention_fraction and "
                "sustained_compute_fraction) to take the runtime's defaults from");
      }
    }
  }
}

void Catalog::resolve_serving_extensions(Diagnostics* diagnostics) {
  for (const auto& file : files_) {
    const FieldChecker root = FieldChecker::root(*file, diagnostics);
    for (int i = 0; i < file->message.serving_runtime_size(); ++i) {
      s::ServingRuntime* runtime = file->message.mutable_serving_runtime(i);
      if (!runtime->has_extends()) continue;
      const FieldChecker entry = root.child("serving_runtime", i);
      const CatalogEntry<s::ServingRuntime>* base = serving_runtimes_.find(runtime->extends());
      if (base == nullptr) {
        entry.error("extends", "unknown serving runtime \"" + runtime->extends() + "\"" +
                                   did_you_mean(runtime->extends(), serving_runtimes_.names()));
        continue;
      }
      if (base->value->has_extends()) {
        entry.error("extends", "\"" + runtime->extends() + "\" extends another runtime itself");
        continue;
      }
      s::ServingRuntime resolved = *base->value;
      resolved.clear_source();
      resolved.MergeFrom(*runtime);
      *runtime = std::move(resolved);
    }
  }
}

void Catalog::derive_serving_defaults(Diagnostics* diagnostics) {
  for (const auto& file : files_) {
    const FieldChecker root = FieldChecker::root(*file, diagnostics);
    for (int i = 0; i < file->message.serving_runtime_size(); ++i) {
      s::ServingRuntime* runtime = file->message.mutable_serving_runtime(i);
      std::vector<FittedServingGpu> fitted;
      for (const s::ServingGpuFit& fit : runtime->gpu()) {
        const CatalogEntry<s::Gpu>* gpu = gpus_.find(fit.gpu());
        if (gpu != nullptr) fitted.push_back({&fit, gpu->value->form_factor()});
      }
      std::vector<s::ServingGpuFit> defaults = serving_default_fits(fitted);
      if (defaults.empty()) {
        root.child("serving_runtime", i)
            .error_here("has no fitted GPU (gpu { ... }) to take the defaults of the GPUs "
                        "without a fit from");
      }
      runtime->clear_default_fit();
      for (s::ServingGpuFit& d : defaults) *runtime->add_default_fit() = std::move(d);
    }
  }
}

const s::Gpu& Catalog::gpu_of(const s::InstanceType& instance) const {
  return *gpus_.find(instance.gpu())->value;
}

int nvlink_domain_nodes(const s::InstanceType& instance) {
  return instance.has_nvlink_domain_gpus() ? instance.nvlink_domain_gpus() / instance.gpu_count()
                                           : 1;
}

}  // namespace clustersim
