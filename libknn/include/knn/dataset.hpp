#pragma once
// Data sets from CSV files: a header row of names (on by default), typed feature columns (numbers,
// or categories kept as text), missing cells, an optional identifier column, and a label column
// kept as text (classification) or parsed as a number (regression) (docs/design.md#tabular-input).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "knn/communicator.hpp"
#include "knn/matrix.hpp"

namespace knn {

/// The cells read as missing unless CsvOptions::na_values says otherwise: the empty cell, NA,
/// N/A, NaN, nan, ?, null and NULL.
const std::vector<std::string>& default_na_values();

struct CsvOptions {
  /// Lines passed over at the top of the file, before the header (a title, comments); line
  /// numbers in messages stay the file's. A property of the file read, not of the data: model
  /// files do not keep it.
  std::size_t skip_lines = 0;
  bool header = true;
  char delimiter = ',';
  /// The decimal mark of the file's numbers: '.' or ',' (as a spreadsheet writes them in many
  /// locales, with another delimiter, often ';'). With ',' a cell with a point is text: the point
  /// may be a thousands separator, which is not read. Like skip_lines, a property of the file
  /// read: model files do not keep it.
  char decimal = '.';
  /// Label column by name or 0-based index, negative from the end. Empty: the last column.
  /// Names match exactly, else without regard to case where that picks one column.
  std::string label;
  /// Columns left out of the features, by name or index (as label). A name the training file
  /// lacks is allowed where a query file follows (query_file_follows) and has it.
  std::vector<std::string> ignore;
  /// Feature columns read as categories, or as numbers, whatever their cells hold (as label).
  /// Otherwise a column is categorical when any of its cells is neither missing nor a number.
  std::vector<std::string> categorical, numeric;
  /// Cells equal to one of these (surrounding spaces aside) are missing.
  std::vector<std::string> na_values = default_na_values();
  /// A column carried to the output beside each row (as label); it may be in the query file only.
  std::string id;
  /// Training rows with a missing label are dropped (Dataset::dropped_rows), and so are rows with
  /// a missing feature where drop_missing_features says so (where nothing imputes them); without
  /// it a missing label is an error.
  bool drop_missing = false;
  bool drop_missing_features = true;
  /// A query file will be read against this training file: ignore may name its columns.
  bool query_file_follows = false;
  /// Describe the file, fit nothing: a column that looks like an identifier and a missing label
  /// (recorded in Dataset::missing_labels) are not refused.
  bool lenient = false;
  /// Sharded loading (load_csv only): the file's data rows are cut into `shards` row ranges at
  /// line ends, by bytes, and this loads range `shard` only, which may be empty. Files with
  /// quoted fields are read through and only the range's rows kept.
  std::size_t shard = 0, shards = 1;
};

enum class ColumnType { numeric, categorical };
const char* to_string(ColumnType t);

struct Dataset {
  std::string source;                      // file name for messages (printable_name of the path)
  std::vector<std::string> feature_names;  // one per feature column
  std::string label_name;                  // empty when the file had no label column
  /// rows x feature_names.size(): a numeric column's values; a categorical column's cells as the
  /// index of their text in levels[f]; NaN where a cell is missing.
  Matrix features;
  std::vector<ColumnType> feature_types;   // one per feature column
  /// Per feature: a categorical column's distinct texts in byte order (empty for numeric ones).
  /// Sharded, every rank holds the levels of the whole file.
  std::vector<std::vector<std::string>> levels;
  std::vector<std::string> labels;         // one per row, as written; empty when no label column
  std::vector<std::size_t> lines;          // 1-based line in the file where each row starts
  std::vector<std::string> column_names;   // every column of the file, in order
  std::vector<std::size_t> feature_columns;  // file column of each feature
  std::size_t label_column = npos;         // file column of the label, npos when absent
  std::size_t row_offset = 0;              // sharded: global index of the first row here
  std::size_t total_rows = 0;              // sharded: rows over all ranks (0 when not sharded)
  std::string id_name;                     // the identifier column, empty when absent
  std::size_t id_column = npos;            // its file column
  std::vector<std::string> ids;            // one per row when id_column is set
  /// File columns left out because their header is empty (R's and pandas' row names).
  std::vector<std::size_t> unnamed_columns;
  /// Rows dropped for a missing value (CsvOptions::drop_missing), over all ranks.
  std::size_t dropped_rows = 0;
  /// The 0-based data row of the file each row is (global, over all ranks); empty when it is the
  /// row's own index (no row was dropped).
  std::vector<std::size_t> file_rows;
  /// Query files: rows whose label cell is missing (their labels entry is empty).
  std::vector<std::size_t> missing_labels;
  /// ignore names this file lacks (CsvOptions::query_file_follows): the query file must have them.
  std::vector<std::string> ignore_elsewhere;
  /// The options the file was read with.
  CsvOptions options;
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  std::size_t size() const { return features.rows; }
  /// Rows of the whole file: size(), or over all ranks when sharded.
  std::size_t all_rows() const { return total_rows ? total_rows : features.rows; }
  /// The file's line of its first record: the header row, or without one the first data row, as
  /// the reader found it past the lines CsvOptions::skip_lines passes over and blank lines (1 for
  /// data not read from a CSV file). Messages about the header name it.
  std::size_t first_line = 1;
  /// The header row's line, 0 when the file has none.
  std::size_t header_line() const { return options.header ? first_line : 0; }
  std::size_t dims() const { return features.cols; }
  bool has_labels() const { return label_column != npos; }
  bool has_ids() const { return id_column != npos; }
  /// The file's data row of row i (0-based), dropped rows counted.
  std::size_t file_row(std::size_t i) const { return file_rows.empty() ? row_offset + i : file_rows[i]; }
  /// Whether any feature cell is missing (NaN).
  bool has_missing() const;
  /// The data set without its rows: its columns, their roles and types, and its options (one
  /// process's: not sharded), which is all load_query_csv() reads of a training file.
  Dataset layout() const;
};

/// Loads a training or test file: features plus a label column. "-" reads standard input.
/// Column types are decided from the whole file. Throws knn::Error naming file, line and column
/// for a number that is not finite, text in a column read as numbers, a missing label (without
/// drop_missing), a ragged row, an unknown column, a column that looks like an identifier (a
/// categorical column of 20 rows or more whose values all differ), or a file without data rows.
Dataset load_csv(const std::string& path, const CsvOptions& options);

/// Each rank of `comm` loads its shard of the training file's rows (CsvOptions::shard), sets
/// row_offset, and every rank fails together with the first error in file order. Without a
/// communicator of several ranks this is load_csv.
Dataset load_csv_sharded(const std::string& path, const CsvOptions& options, const Communicator* comm);

/// The file row (Dataset::file_row) of every row of `data`, over every rank of `comm` in rank
/// order: the global rows' numbers as the user knows them, where dropped rows shift nothing.
std::vector<std::size_t> all_file_rows(const Dataset& data, const Communicator* comm);

/// Loads a query file whose feature columns match `train`'s, each read as the training file's
/// column is typed: with a header, columns are found by name (the label and identifier columns
/// may be present or absent; other columns only where ignore names them); without one, the file
/// has either exactly the feature columns, or all of the training file's columns in the same
/// positions.
Dataset load_query_csv(const std::string& path, const CsvOptions& options, const Dataset& train);

/// Parses a regression target; throws knn::Error naming the file, line and label column.
std::vector<double> numeric_targets(const Dataset& data);

/// Whether a cell's text is a number as the CSV reader reads a cell of a file with this decimal
/// mark (CsvOptions::decimal): a finite float32 value, blanks around it allowed (so "0x1F",
/// "inf" and "1e99" are not).
bool cell_is_number(std::string_view cell, char decimal = '.');

/// Whether `cell` holds a comma and is a number where the decimal mark is a comma ("1,5"): the
/// sign of a file written with decimal commas, for the advice on CsvOptions::decimal.
bool decimal_comma_number(std::string_view cell);

/// A label's text as a number of a file with this decimal mark ("+" before it allowed), where it
/// reads whole as a finite double: regression targets, and labels that may be one.
std::optional<double> label_number(std::string_view text, char decimal = '.');

/// Whether a header row's names read as a row of data: every name that is not empty a number
/// (cell_is_number, with the file's decimal mark), at least one, and not the names a program
/// gives columns by their position (0, 1, 2, ... or 1, 2, 3, ...). A file without a header row,
/// or a title line read as its header.
bool names_are_numbers(const std::vector<std::string>& names, char decimal = '.');

/// Each label of `labels` once, in no particular order.
std::vector<std::string> distinct_labels(const std::vector<std::string>& labels);

/// Class labels encoded to ids 0..C-1 in sorted order: numeric order when every label parses as
/// a number, otherwise byte order (scikit-learn's order, which decides vote ties).
class LabelEncoder {
 public:
  void fit(const std::vector<std::string>& labels);
  /// The classes "0" .. "n-1": what fit() makes of those texts, for labels given as class ids.
  void fit_ids(std::size_t n);
  std::vector<int> encode(const std::vector<std::string>& labels) const;  // unknown label: -1
  int encode(const std::string& label) const;
  const std::string& decode(int id) const { return classes_.at(static_cast<std::size_t>(id)); }
  const std::vector<std::string>& classes() const { return classes_; }
  std::size_t size() const { return classes_.size(); }
  bool numeric() const { return numeric_; }

 private:
  std::vector<std::string> classes_;
  bool numeric_ = false;
};

/// Writes `data` (features, then the label column when present) as CSV with a header row.
void save_csv(const std::string& path, const Dataset& data, char delimiter = ',');

}  // namespace knn
