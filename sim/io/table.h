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

  std::vector<Column> columns_;
  std::vector<std::vector<Cell>> rows_;
};

// JSON string literal of `text`, quotes included.
std::string json_quote(const std::string& text);

}  // namespace clustersim
