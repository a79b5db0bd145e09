// The catalog: every named GPU, instance type, storage tier, fabric and model, loaded from catalog
// directories (the shipped models/ and topologies/, then the user's --catalog directories),
// checked, and cross-referenced.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/io/field_checker.h"
#include "sim/io/schema/catalog.pb.h"
#include "sim/io/text_file.h"
#include "sim/util/diagnostics.h"

namespace clustersim {

// One entry and where it was written.
template <class T>
struct CatalogEntry {
  const T* value = nullptr;
  SourceLocation where;
};

// Entries of one kind by unique name, in name order.
template <class T>
class NamedEntries {
 public:
  const CatalogEntry<T>* find(std::string_view name) const {
    auto it = by_name_.find(std::string(name));
    return it == by_name_.end() ? nullptr : &it->second;
  }
  const std::map<std::string, CatalogEntry<T>>& all() const { return by_name_; }
  std::vector<std::string> names() const {
    std::vector<std::string> result;
    for (const auto& [name, entry] : by_name_) result.push_back(name);
    return result;
  }
  std::map<std::string, CatalogEntry<T>>& mutable_all() { return by_name_; }

 private:
  std::map<std::string, CatalogEntry<T>> by_name_;
};

// Whether an instance type has GPUs (a CPU-only one has gpu_count 0 and no gpu).
inline bool has_gpu(const schema::InstanceType& instance) { return instance.gpu_count() > 0; }

// Whether `model` is a transformer (null is not).
inline bool is_transformer(const schema::Model* model) {
  return model && model->has_transformer();
}

// Whether a GPU's efficiencies are priors rather than fits (its efficiency_source is UNVERIFIED):
// its results are uncalibrated and scenarios on it are warned.
inline bool efficiencies_are_priors(const schema::Gpu& gpu) {
  return gpu.has_efficiency_source() && gpu.efficiency_source().confidence() == schema::UNVERIFIED;
}

// Immutable after load(); safe to share between threads.
class Catalog {
 public:
  // Loads every *.textproto file under each directory (recursively, in path order; directories
  // in the order given). Every problem is reported to `diagnostics`: a file that does not parse
  // or defines no entries, an entry that fails its checks, the same name twice within one directory, a reference to an
  // unknown entry (with the closest name). A later directory's entry with the same name as an
  // earlier directory's replaces it, with a warning saying so: this is how users override prices.
  // Returns the catalog even when there were errors (callers check diagnostics->has_errors()).
  static std::unique_ptr<Catalog> load(const std::vector<std::string>& directories,
                                       Diagnostics* diagnostics);

  const NamedEntries<schema::Gpu>& gpus() const { return gpus_; }
  const NamedEntries<schema::InstanceType>& instances() const { return instances_; }
  const NamedEntries<schema::StorageTier>& storage() const { return storage_; }
  const NamedEntries<schema::Fabric>& fabrics() const { return fabrics_; }
  const NamedEntries<schema::Model>& models() const { return models_; }
  const NamedEntries<schema::LinkClass>& link_classes() const { return link_classes_; }
  const NamedEntries<schema::Runtime>& runtimes() const { return runtimes_; }
  const NamedEntries<schema::ServingRuntime>& serving_runtimes() const {
    return serving_runtimes_;
  }
  const NamedEntries<schema::DataloadingCost>& dataloading_costs() const {
    return dataloading_costs_;
  }
  const NamedEntries<schema::ProviderTerms>& providers() const { return providers_; }

  // One line per loaded file: its name (under its directory's name) and a hash of its content
  // as read (without the values derived at load), so results can say which catalog produced them
  // and a regression which file changed.
  std::string fingerprint() const;

  // The GPU of a loaded instance type. Requires: the catalog loaded without errors and
  // has_gpu(instance).
  const schema::Gpu& gpu_of(const schema::InstanceType& instance) const;

 private:
  std::string hash_files() const;  // fingerprint()'s text, of the messages as they are now
  void add_file(std::unique_ptr<TextFile<schema::CatalogFile>> file, int directory,
                Diagnostics* diagnostics);
  // Checks each entry of `values` (the repeated `field` of a file) and indexes it by name.
  template <class T>
  void add_entries(const FieldChecker& root, const char* field,
                   const google::protobuf::RepeatedPtrField<T>& values,
                   void (*check)(const FieldChecker&), int directory, NamedEntries<T>* entries,
                   Diagnostics* diagnostics);
  void check_references(Diagnostics* diagnostics) const;
  // Writes the values the catalog computes from its fitted GPUs (sim/hw/sustained_fraction.h) into
  // the loaded entries: each GPU's attention entries (and attention_dropout, where it has none of
  // its own) taken from another GPU (Gpu.attention_efficiency_from), its transferred sustained
  // fractions (MatmulEfficiency.sustained_transfer), then those carried over from the same chip
  // in another server (Gpu.sustained_server_transfer, on the transferred ones), then every
  // runtime's defaults (runtime_defaults()).
  void derive_fitted_values(Diagnostics* diagnostics);
  // Writes into every serving runtime that extends another (ServingRuntime.extends) its base's
  // fields under its own; an error for an unknown base or one that extends another itself.
  void resolve_serving_extensions(Diagnostics* diagnostics);
  // Writes every serving runtime's default fits, the means of its fitted GPUs' by form factor
  // (sim/serve/serving_default_fit.h); an error for a runtime without a fitted GPU.
  void derive_serving_defaults(Diagnostics* diagnostics);
  // Whether a transfer's fraction can be derived: its reference GPU known (else an error) with
  // both precisions fitted (else a warning: the steps take the runtime's default), this GPU's
  // `from_precision` fitted (else an error).
  bool check_transfer(const FieldChecker& transfer, const schema::Gpu& gpu,
                      schema::Precision precision) const;
  // Writes a GPU's fractions carried over from the same chip in another server (`transfer`, its
  // Gpu.sustained_server_transfer) into its matmul_efficiency entries: an error under `transfer`
  // for an unknown GPU or a same_chip that takes its own from another server, a warning (those
  // steps take the runtime's default) for a ratio GPU without a fitted ratio_precision fraction
  // or a same_chip without a fraction of an entry's precision.
  void derive_server_transfer(const FieldChecker& transfer, schema::Gpu* gpu) const;
  // The GPU whose attention entries `gpu` takes (Gpu.attention_efficiency_from), or null: with an
  // error under `field` for an unknown GPU or `gpu` with entries of its own, a warning for a GPU
  // without fitted entries of its own, of another architecture or other peaks in every precision
  // its entries are fitted in (a user's replacement entry: `gpu` keeps its flat fraction). Of a
  // GPU whose peaks differ in one of the two (16-bit: BF16 and FP16; FP8), `gpu` takes the other's
  // entries only, with a warning (derive_fitted_values copies those).
  const schema::Gpu* attention_source(const FieldChecker& field, const schema::Gpu& gpu) const;

  std::vector<std::unique_ptr<TextFile<schema::CatalogFile>>> files_;
  std::vector<std::string> file_names_;           // of files_, e.g. "topologies/gpus.textproto"
  std::string fingerprint_;                       // of the files as read (before derivation)
  std::map<std::string, int> directory_of_name_;  // "kind/name" -> directory index
  NamedEntries<schema::Gpu> gpus_;
  NamedEntries<schema::InstanceType> instances_;
  NamedEntries<schema::StorageTier> storage_;
  NamedEntries<schema::Fabric> fabrics_;
  NamedEntries<schema::Model> models_;
  NamedEntries<schema::LinkClass> link_classes_;
  NamedEntries<schema::Runtime> runtimes_;
  NamedEntries<schema::ServingRuntime> serving_runtimes_;
  NamedEntries<schema::DataloadingCost> dataloading_costs_;
  NamedEntries<schema::ProviderTerms> providers_;
};

// Nodes of one NVLink domain of `instance`: nvlink_domain_gpus over its GPUs per node, 1 when the
// domain is one node. Requires: a checked entry.
int nvlink_domain_nodes(const schema::InstanceType& instance);

}  // namespace clustersim
