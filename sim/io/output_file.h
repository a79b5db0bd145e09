// Output files that appear under their final name only when complete: written under a temporary
// name beside the final one ("<path>.tmp"), then renamed into place (rename(2) is atomic within a
// file system). A crash, a full disk or an error leaves no half-written file at the final name,
// only, at worst, the temporary one, which the next write of the same path replaces.
#pragma once

#include <fstream>
#include <string>
#include <vector>

namespace clustersim {

// The temporary name a complete `path` is written under before it is renamed into place.
std::string temporary_path(const std::string& path);

// Whether `path` can be written as a file: not an existing directory, its directory exists, and
// it is none of the command's `inputs` (empty names skipped). Returns false with `*error` ("PATH
// is a directory", "no directory DIR for PATH", "PATH is an input of this command"). Cheap:
// for checking a command's outputs before any work.
bool check_output_path(const std::string& path, std::string* error,
                       const std::vector<std::string>& inputs = {});

// Makes the directory `path` (and its parents) unless it exists. Returns false with `*error`
// ("cannot create DIR: Not a directory") when it cannot. For a command's output directory, before
// any work.
bool make_output_directory(const std::string& path, std::string* error);

// Moves the finished temporary file of `path` into place. Returns false with `*error` set.
bool publish_output(const std::string& path, std::string* error);

// Writes `text` as the whole file `path` through an OutputFile. Returns false with `*error`.
bool write_output_file(const std::string& path, const std::string& text, std::string* error);

// A text file written through stream() and published by commit(); destroyed without a commit, it
// removes its temporary file.
class OutputFile {
 public:
  OutputFile() = default;
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Creates the temporary file. Returns false with `*error` when `path` cannot be written.
  bool open(const std::string& path, std::string* error);
  // Valid between a successful open() and commit(). A write error shows at commit().
  std::ostream& stream() { return out_; }
  // Flushes, closes and renames the file into place. Returns false with `*error` ("cannot write
  // PATH: No space left on device") when any write failed; the temporary file is then removed.
  bool commit(std::string* error);

 private:
  std::string path_;
  std::ofstream out_;
  bool open_ = false;
};

}  // namespace clustersim
