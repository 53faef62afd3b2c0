#pragma once
// Data sets from CSV files: a header row of names (on by default), numeric features, and a label
// column kept as text (classification) or parsed as a number (regression).
#include <cstddef>
#include <string>
#include <vector>

#include "knn/communicator.hpp"
#include "knn/matrix.hpp"

namespace knn {

struct CsvOptions {
  bool header = true;
  char delimiter = ',';
  /// Label column by name or 0-based index, negative from the end. Empty: the last column.
  std::string label;
  /// Columns left out of the features, by name or index (as label).
  std::vector<std::string> ignore;
  /// Sharded loading (load_csv only): the file's data rows are cut into `shards` row ranges at
  /// line ends, by bytes, and this loads range `shard` only, which may be empty. Files with
  /// quoted fields are read through and only the range's rows kept.
  std::size_t shard = 0, shards = 1;
};

struct Dataset {
  std::string source;                      // file name as given, for messages
  std::vector<std::string> feature_names;  // one per feature column
  std::string label_name;                  // empty when the file had no label column
  Matrix features;                         // rows x feature_names.size()
  std::vector<std::string> labels;         // one per row, as written; empty when no label column
  std::vector<std::size_t> lines;          // 1-based line in the file where each row starts
  std::vector<std::string> column_names;   // every column of the file, in order
  std::vector<std::size_t> feature_columns;  // file column of each feature
  std::size_t label_column = npos;         // file column of the label, npos when absent
  std::size_t row_offset = 0;              // sharded: global index of the first row here
  std::size_t total_rows = 0;              // sharded: rows over all ranks (0 when not sharded)
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  std::size_t size() const { return features.rows; }
  /// Rows of the whole file: size(), or over all ranks when sharded.
  std::size_t all_rows() const { return total_rows ? total_rows : features.rows; }
  std::size_t dims() const { return features.cols; }
  bool has_labels() const { return label_column != npos; }
};

/// Loads a training or test file: features plus a label column. "-" reads standard input.
/// Throws knn::Error naming file, line and column for any cell that is not a finite float, a
/// ragged row, an unknown label column, or a file without data rows.
Dataset load_csv(const std::string& path, const CsvOptions& options);

/// Each rank of `comm` loads its shard of the training file's rows (CsvOptions::shard), sets
/// row_offset, and every rank fails together with the first error in file order. Without a
/// communicator of several ranks this is load_csv.
Dataset load_csv_sharded(const std::string& path, const CsvOptions& options, const Communicator* comm);

/// Loads a query file whose feature columns match `train`'s: with a header, columns are found by
/// name (the label column may be present or absent); without one, the file has either exactly the
/// feature columns, or all of the training file's columns in the same positions.
Dataset load_query_csv(const std::string& path, const CsvOptions& options, const Dataset& train);

/// Parses a regression target; throws knn::Error naming the file, line and label column.
std::vector<double> numeric_targets(const Dataset& data);

/// Class labels encoded to ids 0..C-1 in sorted order: numeric order when every label parses as
/// a number, otherwise byte order (scikit-learn's order, which decides vote ties).
class LabelEncoder {
 public:
  void fit(const std::vector<std::string>& labels);
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
