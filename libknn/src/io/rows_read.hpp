#pragma once
// Reading the data rows of a CSV file into a Dataset, by a plan that says what each column is:
// a feature (read as numbers, as text, or either until a text cell decides), the label, the
// identifier, or left out. Files without quotes are read by all threads, each its own part of
// the lines; a shard of a file reads only its own range of rows.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "io/cell_value.hpp"
#include "knn/dataset.hpp"
#include "knn/error.hpp"

namespace knn::detail {

// Column roles: a feature's index, or one of these.
constexpr long kLabel = -1;
constexpr long kIgnore = -2;
constexpr long kId = -3;

enum class ReadAs : char { infer, number, text };

struct ReadPlan {
  std::vector<long> role;        // per file column
  std::vector<ReadAs> read_as;   // per feature
  MissingTokens na{{}};
  char decimal = '.';            // CsvOptions::decimal
  char delimiter = ',';          // CsvOptions::delimiter, for the advice on a decimal comma
  bool training = true;          // a missing label is an error (or the row is dropped), not recorded
  bool drop_missing = false;     // training rows with a missing label are dropped
  bool drop_features = true;     // with drop_missing: rows with a missing feature too
  std::string numbers_from;      // query files: the training file whose numeric columns these are
};

/// What a read found beside the rows.
struct RowsFound {
  std::vector<char> text;        // per feature read as `infer`: a cell of text was seen
  std::size_t records = 0;       // data records read, dropped ones included
  /// A shard read only its own range: file_rows count from its first record, and dropped_rows
  /// is its own (else both are the whole file's).
  bool shard_relative = false;
  bool any_text() const;
};

/// How the rows of a file without quotes are cut among threads: from `parallel_from` bytes of
/// data rows on, into one part per thread at line ends. Tests cut small files where they choose
/// (`at`: offsets into the file, each moved forward to the next line start) instead.
struct PartCuts {
  std::size_t parallel_from = std::size_t{4} << 20;
  std::vector<std::size_t> at;
};
PartCuts& part_cuts();

class Source;
class CsvReader;

/// The error of a record whose cell count is not the header's `ncols`, at its first cell too
/// many or its last, then `hint` (a cause the caller knows of).
Error ragged_record(const CsvReader& reader, std::size_t ncols, const std::string& hint = "");

/// Reads every data row of `source` (with a header, its first record is skipped) into `data`,
/// whose column names and features are set, or with o.shards > 1 only shard o.shard's rows.
/// Features read as text get their levels (Dataset::levels) sorted.
RowsFound read_data_rows(const Source& source, const CsvOptions& o, const ReadPlan& plan, Dataset& data);

}  // namespace knn::detail
