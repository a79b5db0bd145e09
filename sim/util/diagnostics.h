// Problems found in user input: where they were written (file, line, column, field path) and why.
// Loading collects every problem it finds instead of stopping at the first one.
#pragma once

#include <string>
#include <vector>

namespace clustersim {

// A position in a user's file. Line and column are 1-based; 0 means unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  // "file:line:col", "file:line" or "file", as much as is known.
  std::string to_string() const;
};

enum class Severity { kError, kWarning };

struct Diagnostic {
  Severity severity = Severity::kError;
  SourceLocation where;
  std::string field_path;  // e.g. "instance[3].network.total_gbit_per_s"; empty for syntax errors
  std::string message;

  // "file:line:col: field.path: message", with "warning: " before the path for warnings.
  std::string to_string() const;
};

// An ordered list of diagnostics. Not thread-safe; each loader owns one.
class Diagnostics {
 public:
  void add_error(SourceLocation where, std::string field_path, std::string message);
  void add_warning(SourceLocation where, std::string field_path, std::string message);
  void append(const Diagnostics& other);

  bool has_errors() const { return error_count_ > 0; }
  int error_count() const { return error_count_; }
  const std::vector<Diagnostic>& all() const { return list_; }

  // Every diagnostic, one per line, in the order found.
  std::string to_string() const;

 private:
  std::vector<Diagnostic> list_;
  int error_count_ = 0;
};

}  // namespace clustersim
