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

void add_csv_options(cxxopts::Options& o, const char* second_file, const char* id_use) {
  const std::string ignore = std::string("comma-separated columns (names or indices) left out of the features, e.g. an ID column") +
                             (second_file ? std::string("; may name columns of ") + second_file + " only" : "");
  // clang-format off
  o.add_options("input")
    ("label", "label column by name or 0-based index, negative from the end (default: the last column)", cxxopts::value<std::string>(), "COLUMN")
    ("ignore", ignore, cxxopts::value<std::string>(), "COLUMNS")
    ("id", std::string("a column that is never a feature: ") + id_use, cxxopts::value<std::string>(), "COLUMN")
    ("categorical", "comma-separated columns read as categories (one-hot encoded) whatever they hold; a column with any text cell is categorical anyway", cxxopts::value<std::string>(), "COLUMNS")
    ("numeric", "comma-separated columns read as numbers: a text cell in them is an error", cxxopts::value<std::string>(), "COLUMNS")
    ("na-values", "comma-separated cells that mean a missing value (an empty item: the empty cell)", cxxopts::value<std::string>()->default_value(",NA,N/A,NaN,nan,?,null,NULL"), "LIST")
    ("drop-missing", "drop training rows with a missing label, and, unless --impute fills them, rows with a missing feature (row numbers in outputs stay the file's)")
    ("no-header", "the files have no header row: columns are named by their 0-based index")
    ("skip-lines", "lines passed over at the top of each CSV file, above its header (a title, comments); messages keep the file's line numbers", cxxopts::value<std::string>()->default_value("0"), "N")
    ("delimiter", "field separator (\\t or tab for a tab)", cxxopts::value<std::string>()->default_value(","), "CHAR")
    ("decimal", "decimal mark of the files' numbers: . or , (1,5 as spreadsheets write it in many locales, where the field separator is another, often ;)", cxxopts::value<std::string>()->default_value("."), "CHAR");
  // clang-format on
}

CsvOptions csv_options(const cxxopts::ParseResult& r) {
  CsvOptions csv;
  csv.header = r.count("no-header") == 0;
  csv.skip_lines = parse_count("skip-lines", option_text(r, "skip-lines"), 0);
  csv.delimiter = parse_delimiter(option_text(r, "delimiter"));
  const std::string decimal = option_text(r, "decimal");
  if (decimal.size() != 1) throw option_error("decimal", quote(decimal) + " is not a single character: give '.' or ','");
  csv.decimal = decimal[0];  // the loader refuses a character that is no decimal mark
  csv.label = option_text(r, "label");
  // An empty value (an unset shell variable, say) must not quietly mean the default last column.
  if (r.count("label") && csv.label.empty())
    throw option_error("label", "empty column name " + quote(csv.label) + " (give a name or a 0-based index)");
  if (r.count("ignore")) csv.ignore = split_list(option_text(r, "ignore"));
  for (const char* name : {"id", "categorical", "numeric"})
    if (r.count(name) && option_text(r, name).empty())
      throw option_error(name, "empty column name " + quote("") + " (give a name or a 0-based index)");
  csv.id = option_text(r, "id");
  if (r.count("categorical")) csv.categorical = split_list(option_text(r, "categorical"));
  if (r.count("numeric")) csv.numeric = split_list(option_text(r, "numeric"));
  csv.na_values = split_list(option_text(r, "na-values"));
  csv.drop_missing = r.count("drop-missing") > 0;
  // With --impute the features' missing cells are filled: --drop-missing then drops unlabelled rows only.
  csv.drop_missing_features = !(r.count("impute") && option_text(r, "impute") != "none");
  // --ignore and --id may name columns of the query or test file only.
  csv.query_file_follows = r.count("query") || r.count("test");
  return csv;
}

}  // namespace knn::app
