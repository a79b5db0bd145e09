// HDF5 encoding of result rows: integers as int64, reals as double (NaN = empty), yes/no as
// int8, text as fixed-length 64-byte strings, in a chunked, deflate-compressed dataset that
// grows as rows are appended. Object timestamps are off, so equal content gives equal files.
#include "sim/sweep/results_file.h"

#include <hdf5.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

namespace clustersim {
namespace {

using Kind = ResultColumn::Kind;

constexpr char kDataset[] = "results";
constexpr size_t kTextBytes = 64;
constexpr hsize_t kChunkRows = 1024;

// Turns off HDF5's printing of its error stack; this file reports errors itself.
void silence_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

size_t cell_bytes(Kind kind) {
  switch (kind) {
    case Kind::kInteger:
    case Kind::kReal:
      return 8;
    case Kind::kBool:
      return 1;
    case Kind::kText:
      return kTextBytes;
  }
  return 0;
}

// Byte offset of each column in a packed row, and the row's size.
struct Layout {
  std::vector<size_t> offsets;
  size_t row_bytes = 0;
  Layout() {
    for (const ResultColumn& column : result_columns()) {
      offsets.push_back(row_bytes);
      row_bytes += cell_bytes(column.kind);
    }
  }
};
const Layout& layout() {
  static const Layout instance;
  return instance;
}

// The compound type of a packed row (caller closes it).
hid_t row_type() {
  const hid_t type = H5Tcreate(H5T_COMPOUND, layout().row_bytes);
  const hid_t text = H5Tcopy(H5T_C_S1);
  H5Tset_size(text, kTextBytes);
  H5Tset_strpad(text, H5T_STR_NULLPAD);
  const auto& columns = result_columns();
  for (size_t i = 0; i < columns.size(); ++i) {
    const hid_t member = columns[i].kind == Kind::kInteger ? H5T_NATIVE_INT64
                         : columns[i].kind == Kind::kReal  ? H5T_NATIVE_DOUBLE
                         : columns[i].kind == Kind::kBool  ? H5T_NATIVE_INT8
                                                           : text;
    H5Tinsert(type, columns[i].key.c_str(), layout().offsets[i], member);
  }
  H5Tclose(text);
  return type;
}

void pack(const ResultRow& row, char* out) {
  const auto& columns = result_columns();
  for (size_t i = 0; i < columns.size(); ++i) {
    char* at = out + layout().offsets[i];
    switch (columns[i].kind) {
      case Kind::kInteger: {
        const auto value = static_cast<int64_t>(row_number(row, static_cast<int>(i)));
        std::memcpy(at, &value, 8);
        break;
      }
      case Kind::kReal: {
        const double value = row_number(row, static_cast<int>(i));
        std::memcpy(at, &value, 8);
        break;
      }
      case Kind::kBool:
        *at = static_cast<char>(row_number(row, static_cast<int>(i)) != 0);
        break;
      case Kind::kText: {
        const std::string& text = row_text(row, static_cast<int>(i));
        std::memset(at, 0, kTextBytes);
        std::memcpy(at, text.data(), std::min(text.size(), kTextBytes));
        break;
      }
    }
  }
}

ResultRow unpack(const char* in) {
  const auto& columns = result_columns();
  ResultRow row(columns.size());
  for (size_t i = 0; i < columns.size(); ++i) {
    const char* at = in + layout().offsets[i];
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
        const std::string text(at, strnlen(at, kTextBytes));
        if (!text.empty()) row[i] = text;
        break;
      }
    }
  }
  return row;
}

bool write_string_attribute(hid_t object, const std::string& name, const std::string& value) {
  if (H5Aexists(object, name.c_str()) > 0) H5Adelete(object, name.c_str());
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, std::max<size_t>(1, value.size()));
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attribute = H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT);
  const std::string padded = value.empty() ? std::string(1, '\0') : value;
  const bool ok = attribute >= 0 && H5Awrite(attribute, type, padded.data()) >= 0;
  if (attribute >= 0) H5Aclose(attribute);
  H5Sclose(space);
  H5Tclose(type);
  return ok;
}

herr_t collect_attribute(hid_t object, const char* name, const H5A_info_t*, void* data) {
  auto* attributes = static_cast<ResultAttributes*>(data);
  const hid_t attribute = H5Aopen(object, name, H5P_DEFAULT);
  const hid_t type = H5Aget_type(attribute);
  std::string value(H5Tget_size(type), '\0');
  H5Aread(attribute, type, value.data());
  value.resize(strnlen(value.data(), value.size()));
  (*attributes)[name] = value;
  H5Tclose(type);
  H5Aclose(attribute);
  return 0;
}

ResultAttributes read_attributes(hid_t file) {
  ResultAttributes attributes;
  H5Aiterate2(file, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_attribute, &attributes);
  return attributes;
}

// Rows the dataset holds.
hsize_t stored_rows(hid_t dataset) {
  const hid_t space = H5Dget_space(dataset);
  hsize_t rows = 0;
  H5Sget_simple_extent_dims(space, &rows, nullptr);
  H5Sclose(space);
  return rows;
}

// Whether the dataset's row type has exactly this version's columns.
bool same_columns(hid_t dataset) {
  const hid_t stored = H5Dget_type(dataset);
  const hid_t expected = row_type();
  const bool equal = H5Tequal(stored, expected) > 0;
  H5Tclose(expected);
  H5Tclose(stored);
  return equal;
}

}  // namespace

struct ResultsWriter::Handles {
  hid_t file = -1;
  hid_t dataset = -1;
  hid_t type = -1;
  ~Handles() {
    if (type >= 0) H5Tclose(type);
    if (dataset >= 0) H5Dclose(dataset);
    if (file >= 0) H5Fclose(file);
  }
};

std::string partial_path(const std::string& path) { return path + ".partial"; }

ResultsWriter::ResultsWriter(std::string path, std::unique_ptr<Handles> handles)
    : path_(std::move(path)), handles_(std::move(handles)) {}

ResultsWriter::~ResultsWriter() = default;

std::unique_ptr<ResultsWriter> ResultsWriter::create(const std::string& path, std::string* error) {
  silence_hdf5();
  auto handles = std::make_unique<Handles>();
  const hid_t creation = H5Pcreate(H5P_FILE_CREATE);
  H5Pset_obj_track_times(creation, false);
  handles->file = H5Fcreate(partial_path(path).c_str(), H5F_ACC_TRUNC, creation, H5P_DEFAULT);
  H5Pclose(creation);
  if (handles->file < 0) {
    *error = "cannot create " + partial_path(path) +
             " (does the directory exist and is it "
             "writable?)";
    return nullptr;
  }
  handles->type = row_type();
  const hsize_t initial = 0, unlimited = H5S_UNLIMITED;
  const hid_t space = H5Screate_simple(1, &initial, &unlimited);
  const hid_t properties = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(properties, 1, &kChunkRows);
  H5Pset_shuffle(properties);
  H5Pset_deflate(properties, 4);
  H5Pset_obj_track_times(properties, false);
  handles->dataset = H5Dcreate2(handles->file, kDataset, handles->type, space, H5P_DEFAULT,
                                properties, H5P_DEFAULT);
  H5Pclose(properties);
  H5Sclose(space);
  if (handles->dataset < 0) {
    *error = "cannot create the results dataset in " + partial_path(path);
    return nullptr;
  }
  return std::unique_ptr<ResultsWriter>(new ResultsWriter(path, std::move(handles)));
}

std::unique_ptr<ResultsWriter> ResultsWriter::reopen(const std::string& path, std::string* error) {
  silence_hdf5();
  auto handles = std::make_unique<Handles>();
  handles->file = H5Fopen(partial_path(path).c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (handles->file < 0) {
    *error = "no interrupted sweep to resume: cannot open " + partial_path(path);
    return nullptr;
  }
  handles->dataset = H5Dopen2(handles->file, kDataset, H5P_DEFAULT);
  if (handles->dataset < 0 || !same_columns(handles->dataset)) {
    *error = partial_path(path) + " is not a results file of this version of clustersim";
    return nullptr;
  }
  handles->type = row_type();
  const hsize_t rows = stored_rows(handles->dataset);
  auto writer = std::unique_ptr<ResultsWriter>(new ResultsWriter(path, std::move(handles)));
  writer->rows_ = static_cast<int64_t>(rows);
  writer->attributes_ = read_attributes(writer->handles_->file);
  return writer;
}

bool ResultsWriter::append(const std::vector<ResultRow>& rows, std::string* error) {
  if (rows.empty()) return true;
  std::vector<char> packed(rows.size() * layout().row_bytes);
  for (size_t i = 0; i < rows.size(); ++i) pack(rows[i], packed.data() + i * layout().row_bytes);
  const hsize_t start = static_cast<hsize_t>(rows_), count = rows.size(), total = start + count;
  bool ok = H5Dset_extent(handles_->dataset, &total) >= 0;
  const hid_t file_space = H5Dget_space(handles_->dataset);
  const hid_t memory_space = H5Screate_simple(1, &count, nullptr);
  ok = ok && H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &start, nullptr, &count, nullptr) >= 0;
  ok = ok && H5Dwrite(handles_->dataset, handles_->type, memory_space, file_space, H5P_DEFAULT,
                      packed.data()) >= 0;
  H5Sclose(memory_space);
  H5Sclose(file_space);
  ok = ok && H5Fflush(handles_->file, H5F_SCOPE_GLOBAL) >= 0;
  if (!ok) {
    *error = "cannot write to " + partial_path(path_) + " (disk full?)";
    return false;
  }
  rows_ += static_cast<int64_t>(rows.size());
  return true;
}

bool ResultsWriter::set_attributes(const ResultAttributes& attributes, std::string* error) {
  for (const auto& [name, value] : attributes) {
    if (!write_string_attribute(handles_->file, name, value)) {
      *error = "cannot write attribute " + name + " to " + partial_path(path_);
      return false;
    }
    attributes_[name] = value;
  }
  return true;
}

bool ResultsWriter::commit(std::string* error) {
  handles_.reset();
  std::error_code failure;
  std::filesystem::rename(partial_path(path_), path_, failure);
  if (failure) {
    *error = "cannot rename " + partial_path(path_) + " to " + path_ + ": " + failure.message();
    return false;
  }
  return true;
}

bool read_results(const std::string& path, ResultsFile* out, std::string* error) {
  silence_hdf5();
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) {
    *error = path + ": cannot open as an HDF5 file";
    return false;
  }
  const hid_t dataset = H5Dopen2(file, kDataset, H5P_DEFAULT);
  if (dataset < 0 || !same_columns(dataset)) {
    if (dataset >= 0) H5Dclose(dataset);
    H5Fclose(file);
    *error = path + ": not a results file of this version of clustersim (columns differ)";
    return false;
  }
  out->attributes = read_attributes(file);
  const hsize_t rows = stored_rows(dataset);
  std::vector<char> packed(rows * layout().row_bytes);
  const hid_t type = row_type();
  const bool ok =
      rows == 0 || H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, packed.data()) >= 0;
  H5Tclose(type);
  H5Dclose(dataset);
  H5Fclose(file);
  if (!ok) {
    *error = path + ": cannot read its rows";
    return false;
  }
  out->rows.clear();
  out->rows.reserve(rows);
  for (hsize_t i = 0; i < rows; ++i)
    out->rows.push_back(unpack(packed.data() + i * layout().row_bytes));
  return true;
}

}  // namespace clustersim
