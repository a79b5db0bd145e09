// The seal's header text ("clustersim results file", format, bytes, crc32), NUL-padded to 512
// bytes; the checksum is zlib's CRC-32 over the bytes after the header, read in 1 MiB pieces.
#include "sim/sweep/results_seal.h"

#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace clustersim {
namespace {

constexpr char kFirstLine[] = "clustersim results file";
constexpr int kFormat = 1;

// CRC-32 of the bytes of `in` from kResultsSealBytes to its end; false when reading fails.
bool checksum_after_seal(std::istream& in, uint32_t* crc) {
  std::vector<char> piece(1 << 20);
  uLong value = crc32(0, nullptr, 0);
  in.seekg(static_cast<std::streamoff>(kResultsSealBytes));
  while (in) {
    in.read(piece.data(), static_cast<std::streamsize>(piece.size()));
    const std::streamsize got = in.gcount();
    if (got > 0) value = crc32(value, reinterpret_cast<const Bytef*>(piece.data()), static_cast<uInt>(got));
  }
  if (in.bad()) return false;
  *crc = static_cast<uint32_t>(value);
  return true;
}

std::string header_text(uint64_t bytes, uint32_t crc) {
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", crc);
  std::ostringstream text;
  text << kFirstLine << "\nformat " << kFormat << "\nbytes " << bytes << "\ncrc32 " << hex
       << " (of the bytes after these " << kResultsSealBytes << ")\n";
  return text.str();
}

}  // namespace

bool seal_results_file(const std::string& path, std::string* error) {
  std::error_code size_error;
  const uint64_t bytes = std::filesystem::file_size(path, size_error);
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  uint32_t crc = 0;
  if (size_error || bytes < kResultsSealBytes || !file || !checksum_after_seal(file, &crc)) {
    *error = "cannot read back " + path + " to seal it";
    return false;
  }
  std::string header = header_text(bytes, crc);
  header.resize(kResultsSealBytes, '\0');
  file.clear();
  file.seekp(0);
  file.write(header.data(), static_cast<std::streamsize>(header.size()));
  file.flush();
  if (!file) {
    *error = "cannot write " + path + " (disk full?)";
    return false;
  }
  return true;
}

bool check_results_seal(const std::string& path, std::string* error) {
  std::ifstream file(path, std::ios::binary);
  std::error_code size_error;
  const uint64_t bytes = std::filesystem::file_size(path, size_error);
  if (!file || size_error) {
    *error = path + ": cannot open it";
    return false;
  }
  std::string header(kResultsSealBytes, '\0');
  file.read(header.data(), static_cast<std::streamsize>(header.size()));
  const std::string first_line = std::string(kFirstLine) + "\n";
  if (bytes < kResultsSealBytes || header.compare(0, first_line.size(), first_line) != 0) {
    // `--out r.csv` (or .json) writes the rows alone; "rerun the sweep" did not say how.
    if (path.ends_with(".csv") || path.ends_with(".json")) {
      *error = path + ": not a clustersim results file: a CSV or JSON export holds the rows "
               "only; plot, merge and regress read the HDF5 file --out FILE.h5 writes";
      return false;
    }
    *error = path + ": not a clustersim results file (its first bytes are not a clustersim "
             "header; files written by another program, or by clustersim before results files "
             "were sealed, are not read: rerun the sweep that made it)";
    return false;
  }
  int format = 0;
  unsigned long long sealed_bytes = 0;
  unsigned crc = 0;
  if (std::sscanf(header.c_str() + first_line.size(), "format %d\nbytes %llu\ncrc32 %8x", &format,
                  &sealed_bytes, &crc) != 3 ||
      format != kFormat) {
    *error = path + ": its clustersim header is damaged or of another format (this version "
             "reads format " + std::to_string(kFormat) + ")";
    return false;
  }
  if (sealed_bytes != bytes) {
    *error = path + ": holds " + std::to_string(bytes) + " bytes but was written with " +
             std::to_string(sealed_bytes) + " (a truncated or extended copy)";
    return false;
  }
  uint32_t actual = 0;
  if (!checksum_after_seal(file, &actual)) {
    *error = path + ": cannot read it";
    return false;
  }
  if (actual != crc) {
    *error = path + ": damaged: its contents no longer match the checksum clustersim wrote (a "
             "disk or copy error, or an edit by another program); rerun the sweep that made it";
    return false;
  }
  return true;
}

}  // namespace clustersim
