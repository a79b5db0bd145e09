// Temporary names, the checks before writing, and the rename into place.
#include "sim/io/output_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace clustersim {

namespace fs = std::filesystem;

std::string temporary_path(const std::string& path) { return path + ".tmp"; }

bool check_output_path(const std::string& path, std::string* error,
                       const std::vector<std::string>& inputs) {
  std::error_code ignored;
  if (path.empty()) {
    *error = "an empty output path";
    return false;
  }
  if (fs::is_directory(path, ignored)) {
    *error = path + " is a directory";
    return false;
  }
  const fs::path directory = fs::path(path).parent_path();
  if (!directory.empty() && !fs::is_directory(directory, ignored)) {
    *error = "no directory " + directory.string() + " for " + path;
    return false;
  }
  // `run S --trace S` replaced the scenario with its trace.
  for (const std::string& input : inputs) {
    if (!input.empty() && fs::equivalent(path, input, ignored)) {
      *error = path + (path == input ? " is" : " is " + input + ",") +
               " an input of this command: write to another file";
      return false;
    }
  }
  return true;
}

bool make_output_directory(const std::string& path, std::string* error) {
  std::error_code failure;
  fs::create_directories(path, failure);
  if (failure) {
    *error = "cannot create " + path + ": " + failure.message();
    return false;
  }
  return true;
}

bool publish_output(const std::string& path, std::string* error) {
  std::error_code failure;
  fs::rename(temporary_path(path), path, failure);
  if (failure) {
    *error = "cannot rename " + temporary_path(path) + " to " + path + ": " + failure.message();
    return false;
  }
  return true;
}

OutputFile::~OutputFile() {
  if (!open_) return;
  out_.close();
  std::error_code ignored;
  fs::remove(temporary_path(path_), ignored);
}

bool OutputFile::open(const std::string& path, std::string* error) {
  if (!check_output_path(path, error)) return false;
  path_ = path;
  out_.open(temporary_path(path), std::ios::binary | std::ios::trunc);
  if (!out_) {
    *error = "cannot create " + temporary_path(path) + ": " + std::strerror(errno);
    return false;
  }
  open_ = true;
  return true;
}

bool OutputFile::commit(std::string* error) {
  out_.flush();
  const int flush_errno = out_ ? 0 : errno;
  out_.close();
  if (!out_ || flush_errno != 0) {
    *error = "cannot write " + path_ + ": " +
             (flush_errno != 0 ? std::strerror(flush_errno) : "write error");
    return false;  // the destructor removes the temporary file
  }
  open_ = false;
  if (publish_output(path_, error)) return true;
  std::error_code ignored;
  fs::remove(temporary_path(path_), ignored);
  return false;
}

bool write_output_file(const std::string& path, const std::string& text, std::string* error) {
  OutputFile file;
  if (!file.open(path, error)) return false;
  file.stream() << text;
  return file.commit(error);
}

}  // namespace clustersim
