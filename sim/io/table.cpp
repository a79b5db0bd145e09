// Rendering of result tables as aligned text, CSV (RFC 4180 quoting) and JSON (array of objects).
#include "sim/io/table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/util/check.h"
#include "sim/util/number_format.h"

namespace clustersim {
namespace {

bool is_number(const Table::Cell& cell) { return std::holds_alternative<double>(cell); }

std::string csv_quote(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// Full-precision text of a cell for CSV and JSON; "" for an empty cell.
std::string exact_text(const Table::Cell& cell) {
  if (is_number(cell)) return format_number(std::get<double>(cell));
  if (std::holds_alternative<bool>(cell)) return std::get<bool>(cell) ? "true" : "false";
  if (std::holds_alternative<std::string>(cell)) return std::get<std::string>(cell);
  return "";
}

}  // namespace

std::optional<OutputFormat> parse_output_format(const std::string& text) {
  if (text == "table") return OutputFormat::kTable;
  if (text == "csv") return OutputFormat::kCsv;
  if (text == "json") return OutputFormat::kJson;
  return std::nullopt;
}

std::string json_quote(const std::string& text) {
  std::string quoted = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        quoted += "\\\"";
        break;
      case '\\':
        quoted += "\\\\";
        break;
      case '\n':
        quoted += "\\n";
        break;
      case '\t':
        quoted += "\\t";
        break;
      case '\r':
        quoted += "\\r";
        break;
      default:
        if (c < 0x20) {
          char escape[8];
          std::snprintf(escape, sizeof escape, "\\u%04x", c);
          quoted += escape;
        } else {
          quoted += static_cast<char>(c);
        }
    }
  }
  return quoted + "\"";
}

Table::Table(std::initializer_list<ColumnSpec> columns) { add_columns(columns); }

void Table::add_columns(std::initializer_list<ColumnSpec> columns) {
  for (const ColumnSpec& c : columns) add_column(c.key, c.header, c.decimals);
}

void Table::add_column(std::string key, std::string header, int decimals) {
  columns_.push_back({std::move(key), std::move(header), decimals});
}

void Table::add_row(std::vector<Cell> cells) {
  CLUSTERSIM_CHECK(cells.size() == columns_.size(), "Table::add_row: one cell per column");
  rows_.push_back(std::move(cells));
}

std::string Table::table_text(const Cell& cell, const Column& column) const {
  if (is_number(cell)) return format_fixed(std::get<double>(cell), column.decimals);
  if (std::holds_alternative<bool>(cell)) return std::get<bool>(cell) ? "yes" : "no";
  if (std::holds_alternative<std::string>(cell)) return std::get<std::string>(cell);
  return "-";
}

void Table::print(std::ostream& out, OutputFormat format) const {
  switch (format) {
    case OutputFormat::kTable:
      print_aligned(out);
      break;
    case OutputFormat::kCsv:
      print_csv(out);
      break;
    case OutputFormat::kJson:
      print_json(out);
      break;
  }
}

void Table::print_aligned(std::ostream& out) const {
  std::vector<size_t> width(columns_.size());
  std::vector<bool> numeric(columns_.size(), true);
  for (size_t c = 0; c < columns_.size(); ++c) {
    width[c] = columns_[c].header.size();
    for (const auto& row : rows_) {
      width[c] = std::max(width[c], table_text(row[c], columns_[c]).size());
      if (!is_number(row[c]) && !std::holds_alternative<std::monostate>(row[c])) {
        numeric[c] = false;
      }
    }
  }
  auto print_line = [&](auto text_of) {
    std::string line;
    for (size_t c = 0; c < columns_.size(); ++c) {
      std::string text = text_of(c);
      std::string pad(width[c] - text.size(), ' ');
      line += (c ? "  " : "") + (numeric[c] ? pad + text : text + pad);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  };
  print_line([&](size_t c) { return columns_[c].header; });
  for (const auto& row : rows_)
    print_line([&](size_t c) { return table_text(row[c], columns_[c]); });
}

void Table::print_csv(std::ostream& out) const { print_streaming(out, OutputFormat::kCsv); }

void Table::print_json(std::ostream& out) const { print_streaming(out, OutputFormat::kJson); }

void Table::print_streaming(std::ostream& out, OutputFormat format) const {
  std::vector<std::string> keys;
  for (const Column& column : columns_) keys.push_back(column.key);
  StreamingTable stream(&out, format, std::move(keys));
  for (const auto& row : rows_) stream.add_row(row);
  stream.finish();
}

StreamingTable::StreamingTable(std::ostream* out, OutputFormat format,
                               std::vector<std::string> keys)
    : out_(out), format_(format), keys_(std::move(keys)) {
  if (format_ == OutputFormat::kCsv) {
    for (size_t c = 0; c < keys_.size(); ++c) *out_ << (c ? "," : "") << csv_quote(keys_[c]);
    *out_ << "\n";
  } else {
    *out_ << "[";
  }
}

void StreamingTable::add_row(const std::vector<Table::Cell>& cells) {
  std::ostream& out = *out_;
  if (format_ == OutputFormat::kCsv) {
    for (size_t c = 0; c < keys_.size(); ++c) {
      out << (c ? "," : "") << csv_quote(exact_text(cells[c]));
    }
    out << "\n";
  } else {
    out << (rows_ ? ",\n " : "\n ") << "{";
    for (size_t c = 0; c < keys_.size(); ++c) {
      const Table::Cell& cell = cells[c];
      out << (c ? ", " : "") << json_quote(keys_[c]) << ": ";
      if ((is_number(cell) && std::isfinite(std::get<double>(cell))) ||
          std::holds_alternative<bool>(cell)) {
        out << exact_text(cell);
      } else if (std::holds_alternative<std::string>(cell)) {
        out << json_quote(std::get<std::string>(cell));
      } else {
        out << "null";
      }
    }
    out << "}";
  }
  ++rows_;
}

void StreamingTable::finish() {
  if (format_ == OutputFormat::kJson) *out_ << (rows_ == 0 ? "]\n" : "\n]\n");
}

}  // namespace clustersim
