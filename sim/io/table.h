// A table of results printed as aligned text, CSV or JSON: the one place that decides how
// every command's output looks, so scripts can rely on --format csv|json everywhere.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

namespace clustersim {

enum class OutputFormat { kTable, kCsv, kJson };

// Parses "table", "csv" or "json"; nullopt otherwise.
std::optional<OutputFormat> parse_output_format(const std::string& text);

class Table {
 public:
  // A cell is empty (unknown), a number, a yes/no or text. Numbers print in the table with the
  // column's decimals, and in full precision in CSV and JSON; yes/no prints as "yes"/"no" in the
  // table and true/false in CSV and JSON.
  using Cell = std::variant<std::monostate, double, bool, std::string>;

  // `key` names the column in CSV headers and JSON keys (schema field names, units in the name);
  // `header` is the short label of the aligned table; `decimals` applies to numbers there.
  struct ColumnSpec {
    std::string key;
    std::string header;
    int decimals = 0;
  };
  Table() = default;
  explicit Table(std::initializer_list<ColumnSpec> columns);
  void add_column(std::string key, std::string header, int decimals = 0);
  void add_columns(std::initializer_list<ColumnSpec> columns);
  // Requires: one cell per column.
  void add_row(std::vector<Cell> cells);
  size_t row_count() const { return rows_.size(); }
  size_t column_count() const { return columns_.size(); }

  void print(std::ostream& out, OutputFormat format) const;

 private:
  struct Column {
    std::string key;
    std::string header;
    int decimals;
  };
  std::string table_text(const Cell& cell, const Column& column) const;
  void print_aligned(std::ostream& out) const;
  void print_csv(std::ostream& out) const;
  void print_json(std::ostream& out) const;
  void print_streaming(std::ostream& out, OutputFormat format) const;

  std::vector<Column> columns_;
  std::vector<std::vector<Cell>> rows_;
};

// CSV or JSON written a row at a time, for outputs too large to hold (every row of a sweep);
// the same text Table::print gives for the same rows.
class StreamingTable {
 public:
  // Writes the CSV header or opens the JSON array. Requires: format is kCsv or kJson; `out`
  // outlives this object.
  StreamingTable(std::ostream* out, OutputFormat format, std::vector<std::string> keys);
  // Requires: one cell per key.
  void add_row(const std::vector<Table::Cell>& cells);
  // Closes the JSON array; call once after the last row.
  void finish();

 private:
  std::ostream* out_;
  OutputFormat format_;
  std::vector<std::string> keys_;
  size_t rows_ = 0;
};

// JSON string literal of `text`, quotes included.
std::string json_quote(const std::string& text);

}  // namespace clustersim
