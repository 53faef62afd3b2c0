#include "data_notes.hpp"

#include <algorithm>
#include <map>

#include "knn/error.hpp"

namespace knn::app {

namespace {

// Up to three of `texts`, quoted, then "..." for the rest.
std::string some(const std::vector<std::string>& texts) {
  std::string list;
  for (std::size_t i = 0; i < std::min<std::size_t>(texts.size(), 3); ++i) list += (i ? ", " : "") + quote(texts[i]);
  return list + (texts.size() > 3 ? ", ..." : "");
}

// `rows_out`: the tool's output has rows that --id can label.
std::string unnamed(const Dataset& d, bool rows_out) {
  std::string cols;
  for (std::size_t c : d.unnamed_columns) cols += (cols.empty() ? "" : ", ") + std::to_string(c + 1);
  const bool one = d.unnamed_columns.size() == 1;
  const bool leading = std::all_of(d.unnamed_columns.begin(), d.unnamed_columns.end(), [&](std::size_t c) { return row_names_column(d, c); });
  // Options take 0-based indices, these notes count from 1: the hint names the option's index.
  return std::string(one ? "column " : "columns ") + cols + " of " + d.source + (one ? " has" : " have") + " no name in the header" +
         (leading ? " (row names, as R's write.csv and pandas write them)" : "") + ": left out of the features" +
         (one && leading && rows_out ? "; --id " + std::to_string(d.unnamed_columns.front()) + " carries them to the output" : "");
}

// A header row whose every named feature column is a number is most likely the first row of a
// file that has no header, or a title line above the header, which the tools would otherwise
// take as names and not as data (knn::names_are_numbers). Not where a program wrote the header:
// a row-names column before it (R, pandas), or names that are the columns' positions (pandas'
// for an array: 0, 1, 2, ...).
void header_of_numbers(const Dataset& d, std::vector<std::string>& lines) {
  if (!d.options.header || (!d.column_names.empty() && row_names_column(d, 0)) || !names_are_numbers(d.feature_names, d.options.decimal)) return;
  std::vector<std::string> names;
  for (const auto& name : d.feature_names)
    if (!name.empty()) names.push_back(name);
  const std::size_t skipped = d.options.skip_lines;
  lines.push_back("the header row of " + d.source + " names its feature columns with numbers (" + some(names) +
                  "): if the file has no header row, give --no-header, so that its first row is read as data; " +
                  (skipped == 0 ? std::string("if a title line stands above the header, --skip-lines 1 passes over it")
                                : "--skip-lines " + std::to_string(skipped) + " passes over " +
                                      (skipped == 1 ? std::string("the first line") : "the first " + std::to_string(skipped) + " lines") +
                                      " of every file the command reads: check that this file has that many above its header"));
}

// Where the decimal mark is a point and the delimiter no comma: the values of feature `f`, read as
// categories, with a comma, where every value would be a number were the comma a point (a
// spreadsheet's export in a locale that writes 1,5). Else none.
std::vector<std::string> decimal_commas(const Dataset& d, std::size_t f) {
  std::vector<std::string> commas;
  if (d.options.decimal != '.' || d.options.delimiter == ',') return commas;
  for (const auto& level : d.levels[f]) {
    if (!cell_is_number(level, ',')) return {};
    if (decimal_comma_number(level)) commas.push_back(level);
  }
  return commas;
}

// A column read as categories for a few texts among many numbers: most likely numbers with a
// stray line (a second header, a title) or a missing-value mark the options lack. Counted over
// the column's distinct values, which every rank of sharded data holds whole, so that the note
// is the same however the file is read. None where --categorical is given: its user is deciding
// the columns' types already.
void numbers_read_as_categories(const Dataset& d, std::vector<std::string>& lines) {
  if (!d.options.categorical.empty()) return;
  std::vector<std::string> comma_columns, comma_values;  // one note for all such columns
  for (std::size_t f = 0; f < d.dims(); ++f) {
    if (d.feature_types[f] != ColumnType::categorical) continue;
    const std::string& name = d.feature_names[f];
    if (auto commas = decimal_commas(d, f); !commas.empty()) {
      comma_columns.push_back(name);
      if (comma_values.empty()) comma_values = std::move(commas);
      continue;
    }
    std::size_t numbers = 0;
    std::vector<std::string> texts;
    for (const auto& level : d.levels[f]) {
      if (cell_is_number(level, d.options.decimal)) ++numbers;
      else texts.push_back(level);
    }
    if (texts.empty() || numbers <= texts.size()) continue;
    const bool one = texts.size() == 1;
    lines.push_back("column " + quote(name) + " of " + d.source + " is read as categories for " + std::to_string(texts.size()) +
                    (one ? " text (" : " texts (") + some(texts) + ") among " + std::to_string(numbers) + " distinct numbers: --numeric " +
                    quote(name) + (one ? " stops the run at it" : " stops the run at the first of them") + ", naming its line; --na-values makes " +
                    (one ? "it a missing value" : "them missing values") + " (the list replaces the default marks)");
  }
  if (comma_columns.empty()) return;
  const bool one = comma_columns.size() == 1;
  lines.push_back((one ? "column " : "columns ") + some(comma_columns) + (comma_columns.size() > 3 ? " (" + std::to_string(comma_columns.size()) + " in all)" : "") +
                  " of " + d.source + (one ? " is" : " are") + " read as categories, but " + (one ? "its" : "their") +
                  " values are numbers with a decimal comma (" + some(comma_values) + "): --decimal ',' reads them as numbers");
}

}  // namespace

bool row_names_column(const Dataset& d, std::size_t c) {
  if (!d.options.header) return false;
  for (std::size_t i = 0; i <= c; ++i)
    if (i >= d.column_names.size() || !d.column_names[i].empty()) return false;
  return true;
}

void DataNotes::guesses(const Dataset& data) {
  header_of_numbers(data, lines_);
  numbers_read_as_categories(data, lines_);
}

void DataNotes::training(const Dataset& data) {
  if (!data.unnamed_columns.empty()) lines_.push_back(unnamed(data, rows_out_));
  guesses(data);
  if (data.dropped_rows)
    lines_.push_back("dropped " + dropped_rows_text(data) + " from " + data.source + " (--drop-missing); " + std::to_string(data.all_rows()) +
                     " remain");
}

std::string dropped_rows_text(const Dataset& data) {
  return std::to_string(data.dropped_rows) + (data.dropped_rows == 1 ? " row" : " rows") +
         (data.options.drop_missing_features ? " with a missing value" : " with a missing label");
}

void DataNotes::query(const Dataset& data, const PrepReport& report) {
  if (!data.unnamed_columns.empty()) lines_.push_back(unnamed(data, rows_out_));
  if (report.unknown_categories)
    lines_.push_back(std::to_string(report.unknown_categories) + (report.unknown_categories == 1 ? " cell" : " cells") + " of " +
                     data.source + (report.unknown_categories == 1 ? " holds" : " hold") + " a category the training rows lack (in " +
                     some(report.unknown_in) + "): encoded as all zeros");
  if (report.imputed)
    lines_.push_back(std::to_string(report.imputed) + (report.imputed == 1 ? " missing cell" : " missing cells") + " of " +
                     data.source + " filled as fitted on the training rows (--impute)");
}

void DataNotes::single_row_classes(const Dataset& data, const FoldSpec& folds, Task task) {
  if (task != Task::classify || folds.kind == FoldSpec::Kind::test || data.total_rows != 0) return;
  std::map<std::string, std::size_t> rows;
  for (const auto& label : data.labels)
    if (!label.empty()) ++rows[label];  // a missing label is no class
  std::vector<std::string> single;
  for (const auto& [label, n] : rows)
    if (n == 1) single.push_back(label);
  if (single.empty()) return;
  const std::string names = some(single);
  const bool one = single.size() == 1;
  lines_.push_back(std::to_string(single.size()) + (one ? " class of " : " classes of ") + data.source + (one ? " has" : " have") +
                   " a single row (" + names + "): held out, such a row has no row of its class to learn from, so it always " +
                   "counts as misclassified");
}

void DataNotes::print(std::ostream& err) {
  for (const auto& l : lines_) err << "note: " << l << '\n';
  lines_.clear();
}

void check_guessed_task(const Dataset& train, bool task_given, bool label_given, const Communicator* comm) {
  if (!task_given) check_class_labels(train, label_given, comm);
}

}  // namespace knn::app
