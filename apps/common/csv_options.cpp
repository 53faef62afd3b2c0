#include "csv_options.hpp"

#include <string>

#include "arguments.hpp"
#include "errors.hpp"
#include "option_values.hpp"

namespace knn::app {

namespace {

char parse_delimiter(const std::string& text) {
  if (text == "\\t" || text == "tab") return '\t';
  if (text.size() != 1 || text[0] == '"' || text[0] == '\n' || text[0] == '\r')
    throw option_error("delimiter", quote(text) + " is not a single character (use \\t or tab for a tab)");
  return text[0];
}

}  // namespace

void add_csv_options(cxxopts::Options& o) {
  // clang-format off
  o.add_options("input")
    ("label", "label column by name or 0-based index, negative from the end (default: the last column)", cxxopts::value<std::string>(), "COLUMN")
    ("ignore", "comma-separated columns (names or indices) left out of the features, e.g. an ID column", cxxopts::value<std::string>(), "COLUMNS")
    ("no-header", "the files have no header row: columns are named by their 0-based index")
    ("delimiter", "field separator (\\t or tab for a tab)", cxxopts::value<std::string>()->default_value(","), "CHAR");
  // clang-format on
}

CsvOptions csv_options(const cxxopts::ParseResult& r) {
  CsvOptions csv;
  csv.header = r.count("no-header") == 0;
  csv.delimiter = parse_delimiter(option_text(r, "delimiter"));
  csv.label = option_text(r, "label");
  // An empty value (an unset shell variable, say) must not quietly mean the default last column.
  if (r.count("label") && csv.label.empty())
    throw option_error("label", "empty column name " + quote(csv.label) + " (give a name or a 0-based index)");
  if (r.count("ignore")) csv.ignore = split_list(option_text(r, "ignore"));
  return csv;
}

}  // namespace knn::app
