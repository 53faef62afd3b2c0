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
  /// Records of text already in memory (it must outlive the reader), named `name` in messages;
  /// line numbers start after `line_offset` lines.
  /// `chunk`: a quote-free slice of a larger file, read in parallel with others. Its lines are cut
  /// with memchr in place of LineReader, whose 48 MiB buffer per reader (three 16 MiB blocks)
  /// would be held once per thread; the rules are LineReader's (a final "\r" dropped, lines of
  /// 16 MiB or more refused).
  CsvReader(std::string name, const char* begin, const char* end, char delimiter, std::size_t line_offset = 0,
            bool chunk = false);
  ~CsvReader();
  CsvReader(const CsvReader&) = delete;
  CsvReader& operator=(const CsvReader&) = delete;

  /// The next non-empty record, or false at the end. Cells stay valid until the next call.
  bool next();
  const std::vector<std::string_view>& cells() const { return cells_; }
  std::size_t line() const { return line_; }  // 1-based line where the record starts
  const std::string& name() const { return name_; }
  /// Frees the line buffer once no more records will be read (next() then returns false).
  void release();

 private:
  /// The next physical line, without its line end; false at the end. In chunk mode the view is
  /// of the text itself, with no copy.
  bool next_line(std::string_view& line);
  std::size_t file_line() const;  // lines read so far
  void split_plain(std::string_view line);
  void split_quoted(std::string_view first);

  std::string name_;
  char delim_;
  std::string stdin_data_;
  std::unique_ptr<io::LineReader> reader_;
  std::vector<std::string_view> cells_;
  std::string owned_;
  std::vector<std::pair<std::size_t, std::size_t>> spans_;
  std::size_t line_ = 0;
  std::size_t line_offset_ = 0;
  // Chunk mode: the text not yet read and the count of lines read.
  const char* chunk_at_ = nullptr;
  const char* chunk_end_ = nullptr;
  std::size_t chunk_lines_ = 0;
};

/// The whole text of a file ("-": standard input): a regular file is mapped into memory (no copy),
/// anything else read. Throws knn::Error naming the path when it is a folder or cannot be read.
class Source {
 public:
  explicit Source(const std::string& path);
  ~Source();
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;
  const char* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::string_view text() const { return {data_, size_}; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::string owned_;
  const char* data_ = "";
  std::size_t size_ = 0;
  void* mapped_ = nullptr;
};

}  // namespace knn::detail
