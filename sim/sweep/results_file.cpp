// HDF5 encoding of result rows and summaries: a chunked, deflate-compressed compound dataset
// written in blocks of kBlockRows rows, typed attributes. Object timestamps are off, so equal
// content gives equal files.
#include "sim/sweep/results_file.h"

#include <hdf5.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>

#include "sim/io/output_file.h"
#include "sim/sweep/results_seal.h"
#include "sim/util/check.h"

namespace clustersim {
namespace {

using Kind = ResultColumn::Kind;

constexpr char kDataset[] = "results";
constexpr hsize_t kBlockRows = 1024;  // rows per write, and per chunk of the dataset

// Turns off HDF5's printing of its error stack; this file reports errors itself.
void silence_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

// An HDF5 identifier closed by `close` when it goes out of scope.
struct Id {
  hid_t id;
  herr_t (*close)(hid_t);
  Id(hid_t value, herr_t (*closer)(hid_t)) : id(value), close(closer) {}
  ~Id() {
    if (id >= 0) close(id);
  }
  Id(Id&& other) noexcept : id(other.id), close(other.close) { other.id = -1; }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  Id& operator=(Id&&) = delete;
  operator hid_t() const { return id; }
};

Id text_type() {
  Id type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  return type;
}

// HDF5's FALSE/TRUE enum over int8: what h5py reads as numpy bool.
Id bool_type() {
  Id type(H5Tenum_create(H5T_NATIVE_INT8), H5Tclose);
  for (int8_t value : {0, 1}) H5Tenum_insert(type, value ? "TRUE" : "FALSE", &value);
  return type;
}

size_t cell_bytes(Kind kind) {
  switch (kind) {
    case Kind::kInteger:
    case Kind::kReal:
      return 8;
    case Kind::kBool:
      return 1;
    case Kind::kText:
      return sizeof(const char*);
  }
  return 0;
}

// The columns of a results file and the byte offset of each in a packed row, and the row's size.
struct RowFormat {
  const std::vector<ResultColumn>& columns;
  std::vector<size_t> offsets;
  size_t row_bytes = 0;
  explicit RowFormat(const std::vector<ResultColumn>& c) : columns(c) {
    for (const ResultColumn& column : columns) {
      offsets.push_back(row_bytes);
      row_bytes += cell_bytes(column.kind);
    }
  }
};

// The compound type of a packed row (in memory and in the file); with `present`, of those
// columns only (the others' bytes left as they are when rows are read into it).
Id row_type(const RowFormat& f, const std::vector<bool>* present = nullptr) {
  Id type(H5Tcreate(H5T_COMPOUND, f.row_bytes), H5Tclose);
  const Id text = text_type();
  const Id boolean = bool_type();
  const auto& columns = f.columns;
  for (size_t i = 0; i < columns.size(); ++i) {
    if (present && !(*present)[i]) continue;
    const hid_t member = columns[i].kind == Kind::kInteger ? H5T_NATIVE_INT64
                         : columns[i].kind == Kind::kReal  ? H5T_NATIVE_DOUBLE
                         : columns[i].kind == Kind::kBool  ? boolean.id
                                                           : text.id;
    H5Tinsert(type, columns[i].key.c_str(), f.offsets[i], member);
  }
  return type;
}

// Packs `row` into `out`; text cells point into the row's strings, which must outlive `out`.
void pack(const RowFormat& f, const ResultRow& row, char* out) {
  static const char kEmpty[] = "";
  const auto& columns = f.columns;
  for (size_t i = 0; i < columns.size(); ++i) {
    char* at = out + f.offsets[i];
    const int column = static_cast<int>(i);
    switch (columns[i].kind) {
      case Kind::kInteger: {
        const double number = row_number(row, column);
        CLUSTERSIM_CHECK(std::isfinite(number), "an integer result cell without a value");
        const auto value = static_cast<int64_t>(number);
        std::memcpy(at, &value, 8);
        break;
      }
      case Kind::kReal: {
        const double value = row_number(row, column);
        std::memcpy(at, &value, 8);
        break;
      }
      case Kind::kBool:
        *at = static_cast<char>(row_number(row, column) == 1);
        break;
      case Kind::kText: {
        const std::string* text = std::get_if<std::string>(&row[i]);
        const char* pointer = text ? text->c_str() : kEmpty;
        std::memcpy(at, &pointer, sizeof pointer);
        break;
      }
    }
  }
}

ResultRow unpack(const RowFormat& f, const char* in) {
  const auto& columns = f.columns;
  ResultRow row(columns.size());
  for (size_t i = 0; i < columns.size(); ++i) {
    const char* at = in + f.offsets[i];
    switch (columns[i].kind) {
      case Kind::kInteger: {
        int64_t value;
        std::memcpy(&value, at, 8);
        row[i] = static_cast<double>(value);
        break;
      }
      case Kind::kReal: {
        double value;
        std::memcpy(&value, at, 8);
        if (!std::isnan(value)) row[i] = value;
        break;
      }
      case Kind::kBool:
        row[i] = *at != 0;
        break;
      case Kind::kText: {
        const char* text;
        std::memcpy(&text, at, sizeof text);
        if (text && *text) row[i] = std::string(text);
        break;
      }
    }
  }
  return row;
}

// Writes attribute `name` of `object`: `count` values of `type` (a scalar when count < 0; an
// empty array has HDF5's null dataspace).
bool write_attribute(hid_t object, const char* name, hid_t type, const void* data,
                     hssize_t count = -1) {
  const hsize_t size = count < 0 ? 0 : static_cast<hsize_t>(count);
  const Id space(count < 0    ? H5Screate(H5S_SCALAR)
                 : size == 0 ? H5Screate(H5S_NULL)
                             : H5Screate_simple(1, &size, nullptr),
                 H5Sclose);
  const Id attribute(H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  return attribute >= 0 && (count == 0 || H5Awrite(attribute, type, data) >= 0);
}

bool write_text(hid_t object, const char* name, const std::string& value) {
  const char* pointer = value.c_str();
  return write_attribute(object, name, text_type(), &pointer);
}

bool write_integer(hid_t object, const char* name, int64_t value) {
  return write_attribute(object, name, H5T_NATIVE_INT64, &value);
}

bool write_summary(hid_t file, const SweepSummary& s) {
  bool ok = true;
  for (auto [name, value] : {std::pair{"scenario_name", &s.scenario_name},
                             {"scenario_text", &s.scenario_text},
                             {"tool_version", &s.tool_version},
                             {"catalog", &s.catalog},
                             {"prices", &s.prices}}) {
    ok = ok && write_text(file, name, *value);
  }
  // Only when set (a serving sizing's --max-rate or trace): a training sweep's file, and every
  // file written before they were recorded, has neither.
  for (auto [name, value] : {std::pair{"options", &s.options}, {"other_inputs", &s.other_inputs}}) {
    if (!value->empty()) ok = ok && write_text(file, name, *value);
  }
  for (auto [name, value] : {std::pair{"candidates", s.candidates},
                             {"shard", int64_t{s.shard} + 1},
                             {"shard_count", int64_t{s.shard_count}},
                             {"next_index", s.next_index},
                             {"configurations", s.configurations},
                             {"rows", s.rows},
                             {"simulated", s.simulated}}) {
    ok = ok && write_integer(file, name, value);
  }
  const int8_t complete = s.complete;
  ok = ok && write_attribute(file, "complete", bool_type(), &complete);
  std::vector<const char*> reasons;
  std::vector<int64_t> counts;
  for (const auto& [reason, count] : s.pruned) {
    reasons.push_back(reason.c_str());
    counts.push_back(count);
  }
  const auto n = static_cast<hssize_t>(counts.size());
  return ok && write_attribute(file, "pruned_reasons", text_type(), reasons.data(), n) &&
         write_attribute(file, "pruned_counts", H5T_NATIVE_INT64, counts.data(), n);
}

// Reads the attributes of a summary, each checked for its type; false with `*error` naming the
// first that is missing or of another type.
class AttributeReader {
 public:
  explicit AttributeReader(hid_t object) : object_(object) {}

  bool text(const char* name, std::string* value) {
    std::vector<std::string> values;
    if (!texts(name, &values, /*scalar=*/true)) return false;
    *value = values.front();
    return true;
  }
  // A text written only when set: "" when the file lacks it.
  bool optional_text(const char* name, std::string* value) {
    value->clear();
    return H5Aexists(object_, name) <= 0 || text(name, value);
  }
  template <class Integer>
  bool integer(const char* name, Integer* value) {
    std::vector<int64_t> values;
    if (!integers(name, &values, /*scalar=*/true)) return false;
    *value = static_cast<Integer>(values.front());
    return true;
  }
  bool boolean(const char* name, bool* value) {
    const Id attribute = open(name, H5T_ENUM, true);
    int8_t stored = 0;
    if (attribute < 0 || H5Aread(attribute, bool_type(), &stored) < 0) return fail(name);
    *value = stored != 0;
    return true;
  }
  bool texts(const char* name, std::vector<std::string>* values, bool scalar = false) {
    const Id attribute = open(name, H5T_STRING, scalar);
    if (attribute < 0) return fail(name);
    std::vector<char*> pointers(elements(attribute), nullptr);
    if (!pointers.empty() && H5Aread(attribute, text_type(), pointers.data()) < 0) {
      return fail(name);
    }
    for (char* p : pointers) {
      values->push_back(p ? p : "");
      H5free_memory(p);
    }
    return true;
  }
  bool integers(const char* name, std::vector<int64_t>* values, bool scalar = false) {
    const Id attribute = open(name, H5T_INTEGER, scalar);
    if (attribute < 0) return fail(name);
    values->assign(elements(attribute), 0);
    return values->empty() || H5Aread(attribute, H5T_NATIVE_INT64, values->data()) >= 0 ||
           fail(name);
  }
  const std::string& error() const { return error_; }

 private:
  // The attribute, or -1 when it is missing, of another type class or (scalar) not a scalar.
  Id open(const char* name, H5T_class_t type_class, bool scalar) {
    if (H5Aexists(object_, name) <= 0) return Id(-1, H5Aclose);
    Id attribute(H5Aopen(object_, name, H5P_DEFAULT), H5Aclose);
    const Id type(H5Aget_type(attribute), H5Tclose);
    const Id space(H5Aget_space(attribute), H5Sclose);
    const bool shape_ok = !scalar || H5Sget_simple_extent_type(space) == H5S_SCALAR;
    if (H5Tget_class(type) != type_class || !shape_ok) return Id(-1, H5Aclose);
    if (type_class == H5T_STRING && H5Tis_variable_str(type) <= 0) return Id(-1, H5Aclose);
    return attribute;
  }
  static size_t elements(hid_t attribute) {
    const Id space(H5Aget_space(attribute), H5Sclose);
    return static_cast<size_t>(H5Sget_simple_extent_npoints(space));
  }
  bool fail(const char* name) {
    error_ = std::string("attribute ") + name + " is missing or not of this version's type";
    return false;
  }
  hid_t object_;
  std::string error_;
};

bool read_summary(hid_t file, SweepSummary* s, std::string* error) {
  AttributeReader a(file);
  std::vector<std::string> reasons;
  std::vector<int64_t> counts;
  const bool ok =
      a.text("scenario_name", &s->scenario_name) && a.text("scenario_text", &s->scenario_text) &&
      a.text("tool_version", &s->tool_version) && a.text("catalog", &s->catalog) &&
      a.text("prices", &s->prices) && a.optional_text("options", &s->options) &&
      a.optional_text("other_inputs", &s->other_inputs) &&
      a.integer("candidates", &s->candidates) &&
      a.integer("shard", &s->shard) && a.integer("shard_count", &s->shard_count) &&
      a.integer("next_index", &s->next_index) && a.integer("configurations", &s->configurations) &&
      a.integer("rows", &s->rows) && a.integer("simulated", &s->simulated) &&
      a.boolean("complete", &s->complete) && a.texts("pruned_reasons", &reasons) &&
      a.integers("pruned_counts", &counts);
  if (!ok) {
    *error = a.error();
    return false;
  }
  if (reasons.size() != counts.size() || s->shard < 1 || s->shard > s->shard_count) {
    *error = "attributes pruned_reasons/pruned_counts or shard/shard_count disagree";
    return false;
  }
  --s->shard;
  for (size_t i = 0; i < reasons.size(); ++i) s->pruned[reasons[i]] += counts[i];
  return true;
}

// Rows the dataset holds.
hsize_t stored_rows(hid_t dataset) {
  const Id space(H5Dget_space(dataset), H5Sclose);
  hsize_t rows = 0;
  H5Sget_simple_extent_dims(space, &rows, nullptr);
  return rows;
}

// Which of this version's columns the dataset's rows hold, each of its type; nullopt when they
// hold a column this version lacks, one of another type, or no configuration index (column 0).
// A file written before a column was added lacks it.
std::optional<std::vector<bool>> stored_columns(const RowFormat& f, hid_t dataset) {
  const Id stored(H5Dget_type(dataset), H5Tclose);
  if (H5Tget_class(stored) != H5T_COMPOUND) return std::nullopt;
  const Id current = row_type(f);
  std::vector<bool> present(f.columns.size(), false);
  for (int m = 0; m < H5Tget_nmembers(stored); ++m) {
    char* name = H5Tget_member_name(stored, static_cast<unsigned>(m));
    const int i = name ? column_index(f.columns, name) : -1;
    H5free_memory(name);
    if (i < 0 || present[i]) return std::nullopt;
    const Id stored_member(H5Tget_member_type(stored, static_cast<unsigned>(m)), H5Tclose);
    const Id member(H5Tget_member_type(current, static_cast<unsigned>(i)), H5Tclose);
    if (H5Tequal(stored_member, member) <= 0) return std::nullopt;
    present[i] = true;
  }
  if (!present[0]) return std::nullopt;
  return present;
}

}  // namespace

struct ResultsWriter::Handles {
  explicit Handles(const std::vector<ResultColumn>& columns) : format(columns) {}
  RowFormat format;
  hid_t file = -1;
  hid_t dataset = -1;
  hid_t type = -1;
  bool committed = false;
  std::string temporary;
  ~Handles() {
    if (type >= 0) H5Tclose(type);
    if (dataset >= 0) H5Dclose(dataset);
    if (file >= 0) H5Fclose(file);
    std::error_code ignored;
    if (!committed) std::filesystem::remove(temporary, ignored);
  }
};

ResultsWriter::ResultsWriter(std::string path, std::unique_ptr<Handles> handles)
    : path_(std::move(path)), handles_(std::move(handles)) {}

ResultsWriter::~ResultsWriter() = default;

std::unique_ptr<ResultsWriter> ResultsWriter::create(const std::string& path, std::string* error,
                                                     const std::vector<ResultColumn>& columns) {
  if (!check_output_path(path, error)) return nullptr;
  silence_hdf5();
  auto handles = std::make_unique<Handles>(columns);
  handles->temporary = temporary_path(path);
  const Id creation(H5Pcreate(H5P_FILE_CREATE), H5Pclose);
  H5Pset_obj_track_times(creation, false);
  H5Pset_userblock(creation, kResultsSealBytes);
  handles->file = H5Fcreate(handles->temporary.c_str(), H5F_ACC_TRUNC, creation, H5P_DEFAULT);
  if (handles->file < 0) {
    *error = "cannot create " + handles->temporary + " (is its directory writable?)";
    return nullptr;
  }
  handles->type = H5Tcopy(row_type(handles->format));
  const hsize_t initial = 0, unlimited = H5S_UNLIMITED;
  const Id space(H5Screate_simple(1, &initial, &unlimited), H5Sclose);
  const Id properties(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_chunk(properties, 1, &kBlockRows);
  H5Pset_shuffle(properties);
  H5Pset_deflate(properties, 4);
  H5Pset_obj_track_times(properties, false);
  handles->dataset = H5Dcreate2(handles->file, kDataset, handles->type, space, H5P_DEFAULT,
                                properties, H5P_DEFAULT);
  if (handles->dataset < 0) {
    *error = "cannot create the results dataset in " + handles->temporary;
    return nullptr;
  }
  return std::unique_ptr<ResultsWriter>(new ResultsWriter(path, std::move(handles)));
}

bool ResultsWriter::write_block(std::string* error) {
  if (block_.empty()) return true;
  const RowFormat& f = handles_->format;
  std::vector<char> packed(block_.size() * f.row_bytes);
  for (size_t i = 0; i < block_.size(); ++i) pack(f, block_[i], packed.data() + i * f.row_bytes);
  const hsize_t start = static_cast<hsize_t>(rows_), count = block_.size(), total = start + count;
  bool ok = H5Dset_extent(handles_->dataset, &total) >= 0;
  const Id file_space(H5Dget_space(handles_->dataset), H5Sclose);
  const Id memory_space(H5Screate_simple(1, &count, nullptr), H5Sclose);
  ok = ok && H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &start, nullptr, &count, nullptr) >= 0;
  ok = ok && H5Dwrite(handles_->dataset, handles_->type, memory_space, file_space, H5P_DEFAULT,
                      packed.data()) >= 0;
  if (!ok) {
    *error = "cannot write to " + handles_->temporary + " (disk full?)";
    return false;
  }
  rows_ += static_cast<int64_t>(block_.size());
  block_.clear();
  return true;
}

bool ResultsWriter::append(const std::vector<ResultRow>& rows, std::string* error) {
  for (const ResultRow& row : rows) {
    block_.push_back(row);
    if (block_.size() == kBlockRows && !write_block(error)) return false;
  }
  return true;
}

bool ResultsWriter::commit(const SweepSummary& summary, std::string* error) {
  if (!write_block(error)) return false;
  CLUSTERSIM_CHECK(summary.rows == rows_, "a summary that does not count the file's rows");
  if (!write_summary(handles_->file, summary) || H5Fflush(handles_->file, H5F_SCOPE_GLOBAL) < 0) {
    *error = "cannot write the attributes of " + handles_->temporary + " (disk full?)";
    return false;
  }
  H5Tclose(handles_->type);
  H5Dclose(handles_->dataset);
  const bool closed = H5Fclose(handles_->file) >= 0;
  handles_->type = handles_->dataset = handles_->file = -1;
  if (!closed) {
    *error = "cannot write " + handles_->temporary + " (disk full?)";
    return false;
  }
  if (!seal_results_file(handles_->temporary, error) || !publish_output(path_, error)) return false;
  handles_->committed = true;
  return true;
}

bool read_results(const std::string& path, ResultsFile* out, std::string* error,
                  const std::vector<ResultColumn>& columns) {
  if (!check_results_seal(path, error)) return false;
  silence_hdf5();
  const RowFormat f(columns);
  const Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (file < 0) {
    *error = path + ": cannot open as an HDF5 file";
    return false;
  }
  const Id dataset(H5Dopen2(file, kDataset, H5P_DEFAULT), H5Dclose);
  const std::optional<std::vector<bool>> present =
      dataset < 0 ? std::nullopt : stored_columns(f, dataset);
  if (!present) {
    *error = path + ": not a results file of this version of clustersim (columns differ)";
    return false;
  }
  std::string why;
  if (!read_summary(file, &out->summary, &why)) {
    *error = path + ": not a results file of this version of clustersim (" + why + ")";
    return false;
  }
  const hsize_t rows = stored_rows(dataset);
  if (static_cast<int64_t>(rows) != out->summary.rows) {
    *error = path + ": holds " + std::to_string(rows) + " rows but its rows attribute says " +
             std::to_string(out->summary.rows) + " (a damaged or hand-edited file)";
    return false;
  }
  std::vector<char> packed(rows * f.row_bytes);  // zeros: a column the file lacks reads as none
  const Id type = row_type(f, &*present);
  const Id space(H5Dget_space(dataset), H5Sclose);
  if (rows > 0 && H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, packed.data()) < 0) {
    *error = path + ": cannot read its rows";
    return false;
  }
  out->absent_columns.clear();
  for (size_t c = 0; c < columns.size(); ++c) {
    if (!(*present)[c]) out->absent_columns.push_back(columns[c].key);
  }
  out->rows.clear();
  out->rows.reserve(rows);
  for (hsize_t i = 0; i < rows; ++i) {
    ResultRow& row = out->rows.emplace_back(unpack(f, packed.data() + i * f.row_bytes));
    for (size_t c = 0; c < columns.size(); ++c) {
      if (!(*present)[c]) row[c] = Table::Cell();
    }
  }
  if (rows > 0) H5Dvlen_reclaim(type, space, H5P_DEFAULT, packed.data());
  return true;
}

}  // namespace clustersim
