#pragma once
// Records of a CSV file, read through fast-cpp-csv-parser's LineReader (buffered, BOM and CRLF
// aware) and split here: plain lines are split in place; a line with a quote is unquoted into an
// owned buffer, joined with the next lines while a quoted field is open.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace io {
class LineReader;
}

namespace knn::detail {

class CsvReader {
 public:
  /// "-" reads standard input. Throws knn::Error when the file cannot be opened.
  CsvReader(const std::string& path, char delimiter);
  ~CsvReader();
  CsvReader(const CsvReader&) = delete;
  CsvReader& operator=(const CsvReader&) = delete;

  /// The next non-empty record, or false at the end. Cells stay valid until the next call.
  bool next();
  const std::vector<std::string_view>& cells() const { return cells_; }
  std::size_t line() const { return line_; }  // 1-based line where the record starts
  const std::string& name() const { return name_; }

 private:
  void split_plain(char* line);
  void split_quoted(std::string_view first);

  std::string name_;
  char delim_;
  std::string stdin_data_;
  std::unique_ptr<io::LineReader> reader_;
  std::vector<std::string_view> cells_;
  std::string owned_;
  std::vector<std::pair<std::size_t, std::size_t>> spans_;
  std::size_t line_ = 0;
};

}  // namespace knn::detail
