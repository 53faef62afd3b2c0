#pragma once
// Records of CSV text in memory. Lines end at '\n' (a final "\r" is dropped; a UTF-8 byte order
// mark at the start of a file is skipped; lines of 16 MiB or more are refused). A plain line is
// split in place; a line with a quote is unquoted into an owned buffer, joined with the next
// lines while a quoted field is open. The text holds no NUL byte (refuse_nul_bytes).
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace knn::detail {

class CsvReader {
 public:
  /// Records of [begin, end) (it must outlive the reader), named `name` in messages; line numbers
  /// start after `line_offset` lines. `file_start`: `begin` starts a file (where a byte order
  /// mark is skipped), rather than a part of one cut at a line end.
  CsvReader(std::string name, const char* begin, const char* end, char delimiter, std::size_t line_offset = 0,
            bool file_start = true);
  CsvReader(const CsvReader&) = delete;
  CsvReader& operator=(const CsvReader&) = delete;

  /// The next non-empty record, or false at the end. Cells stay valid until the next call.
  bool next();
  const std::vector<std::string_view>& cells() const { return cells_; }
  std::size_t line() const { return line_; }  // 1-based line where the record starts
  const std::string& name() const { return name_; }
  char delimiter() const { return delim_; }

  /// Whether a line of `bytes` (its "\r" counted, not its '\n') is longer than a reader accepts.
  static bool too_long(std::size_t bytes) { return bytes + 1 > (std::size_t{1} << 24); }

  /// For a faster reader of plain lines (io/plain_lines.hpp): the text not read yet, and the
  /// way to go past what it read, whole lines only.
  const char* position() const { return at_; }
  const char* end() const { return end_; }
  std::size_t lines_read() const { return line_offset_ + lines_; }
  void skip(const char* to, std::size_t lines) {
    at_ = to;
    lines_ += lines;
  }

 private:
  /// The next physical line, a view of the text without its line end; false at the end.
  bool next_line(std::string_view& line);
  void split_plain(std::string_view line);
  void split_quoted(std::string_view first);

  std::string name_;
  char delim_;
  const char* at_;
  const char* end_;
  std::size_t line_offset_;
  std::size_t lines_ = 0;  // lines read
  std::size_t line_ = 0;
  std::vector<std::string_view> cells_;
  std::string owned_;   // a quoted record's cells
  std::string joined_;  // its lines
  std::vector<std::pair<std::size_t, std::size_t>> spans_;
};

}  // namespace knn::detail
