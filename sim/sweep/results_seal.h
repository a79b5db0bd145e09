// The seal of a results file: its first 512 bytes, the HDF5 user block (which libhdf5 skips and
// h5py, pandas and h5dump read past), hold a short text header naming clustersim, the file's byte
// length and the CRC-32 of every byte after the header. A results file is checked against its seal
// before libhdf5 reads any of it: libhdf5 trusts its metadata, and a damaged file (a flipped bit,
// a truncated copy, an edit by another program) can crash or hang it. With the seal such a file is
// refused with its cause instead.
#pragma once

#include <cstdint>
#include <string>

namespace clustersim {

// Bytes of the user block the seal occupies (HDF5's smallest: a power of two, at least 512).
inline constexpr uint64_t kResultsSealBytes = 512;

// Writes the seal of the closed HDF5 file at `path`, created with a user block of
// kResultsSealBytes. Returns false with `*error` set when the file cannot be read or written.
bool seal_results_file(const std::string& path, std::string* error);

// Whether the file at `path` carries a clustersim seal that matches its bytes. Returns false with
// `*error` saying why not (naming the file): too short, no clustersim header, another length, a
// checksum that differs.
bool check_results_seal(const std::string& path, std::string* error);

}  // namespace clustersim
