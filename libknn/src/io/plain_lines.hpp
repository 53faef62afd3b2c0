#pragma once
// The fast way through a file's plain lines: a line without quotes whose numeric cells are plain
// numbers (scan_plain_number) is read in one pass, each number written to its place as it is
// scanned. Any other line is left to the record reader, which gives it the same row or the same
// error; the rules of each cell are RowWriter's either way.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "io/csv_reader.hpp"
#include "io/row_writer.hpp"
#include "io/rows_read.hpp"

namespace knn::detail {

class PlainLineReader {
 public:
  explicit PlainLineReader(const ReadPlan& plan);
  /// Whether any line can be taken: not where an NA token is itself a number, which a plain
  /// number must then be compared with first.
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
  std::vector<Column> columns_;     // per file column
  std::vector<std::size_t> kept_;   // the file columns whose cells are kept for after the scan
  std::vector<std::string_view> cells_;  // their cells in the line at hand
  bool usable_;
};

}  // namespace knn::detail
