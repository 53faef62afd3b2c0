#pragma once
// The fast way through a file's plain lines: a line without quotes is read in one pass, each
// plain number (scan_plain_number) written to its place as it is scanned, the other cells kept
// and given to RowWriter in column order once the line has its fields. A line with a quote, the
// wrong count of fields or 16 MiB or more is left to the record reader, which gives it the same
// row or the same error; the rules of each cell are RowWriter's either way.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "io/csv_reader.hpp"
#include "io/row_writer.hpp"
#include "io/rows_read.hpp"

namespace knn::detail {

class PlainLineReader {
 public:
  explicit PlainLineReader(const ReadPlan& plan);
  /// Whether any line can be taken: not where an NA token is itself a number, which a plain
  /// number must then be compared with first, nor where the decimal mark is a comma.
  bool usable() const { return usable_; }
  /// Reads the lines at the reader's position into `w`, up to the first line it leaves to the
  /// record reader, or the end.
  void read(CsvReader& reader, RowWriter& w);

 private:
  enum class Way : unsigned char { number, text, label, id, skip };
  struct Column {
    Way way;
    std::uint32_t feature;
  };
  std::vector<Column> columns_;  // per file column
  // The line's cells other than plain numbers (file column, text), kept for after the scan.
  std::vector<std::pair<std::size_t, std::string_view>> pending_;
  bool usable_;
};

}  // namespace knn::detail
