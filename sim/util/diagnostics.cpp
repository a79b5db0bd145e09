// Formatting and collection of input diagnostics.
#include "sim/util/diagnostics.h"

namespace clustersim {

std::string SourceLocation::to_string() const {
  std::string text = file.empty() ? "<input>" : file;
  if (line > 0) {
    text += ":" + std::to_string(line);
    if (column > 0) text += ":" + std::to_string(column);
  }
  return text;
}

std::string Diagnostic::to_string() const {
  std::string text = where.to_string() + ": ";
  if (severity == Severity::kWarning) text += "warning: ";
  if (!field_path.empty()) text += field_path + ": ";
  return text + message;
}

void Diagnostics::add_error(SourceLocation where, std::string field_path, std::string message) {
  list_.push_back({Severity::kError, std::move(where), std::move(field_path), std::move(message)});
  ++error_count_;
}

void Diagnostics::add_warning(SourceLocation where, std::string field_path, std::string message) {
  list_.push_back(
      {Severity::kWarning, std::move(where), std::move(field_path), std::move(message)});
}

void Diagnostics::append(const Diagnostics& other) {
  for (const Diagnostic& d : other.list_) list_.push_back(d);
  error_count_ += other.error_count_;
}

std::string Diagnostics::to_string() const {
  std::string text;
  for (const Diagnostic& d : list_) text += d.to_string() + "\n";
  return text;
}

}  // namespace clustersim
