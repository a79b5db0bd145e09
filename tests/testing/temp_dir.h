// A fresh temporary directory for a test's input files, removed with its contents at scope exit.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace clustersim::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "clustersim-test-XXXXXX");
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

  // Writes `contents` to `name` inside the directory (creating subdirectories); returns its path.
  std::string write(const std::string& name, const std::string& contents) const {
    const std::filesystem::path file = std::filesystem::path(path_) / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << contents;
    return file.string();
  }

  // `messages` with this directory's path removed from the front of every file name in it.
  std::string relative(std::string messages) const {
    for (size_t at; (at = messages.find(path_ + "/")) != std::string::npos;) {
      messages.erase(at, path_.size() + 1);
    }
    return messages;
  }

 private:
  std::string path_;
};

// The shipped catalog directories of this source tree.
inline std::string source_path(const std::string& relative) {
  return std::string(CLUSTERSIM_SOURCE_DIR) + "/" + relative;
}

}  // namespace clustersim::testing
