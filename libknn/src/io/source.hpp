#pragma once
// The whole text of a CSV file, and what the readers must know of it before they parse: where
// its first NUL byte is, whether it holds a quote, and how many lines end before a given byte (so
// that threads start their parts with the right line numbers and rows). All threads find these
// at once, in blocks, touching the text for the first time.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace knn::detail {

class Source {
 public:
  /// Reads `path` ("-": standard input): a regular file is mapped into memory (no copy), anything
  /// else read to its end. Text compressed by gzip (found by its first bytes, whatever the name)
  /// is read as the text it holds. Throws knn::Error naming the path when it is a folder, cannot
  /// be read, is not a whole gzip stream, or is another compressed or binary format that a CSV
  /// reader would only misread (zip, xz, bzip2, zstd, Parquet), saying how to get the text.
  /// A binary file (a model file, so named in errors) is not indexed: its line ends, NUL bytes and quotes mean nothing.
  enum class Kind { text, binary };
  explicit Source(const std::string& path, Kind kind = Kind::text);
  ~Source();
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  /// The text the readers see: after the lines skip_lines() passed over.
  const char* data() const { return data_ + begin_; }
  std::size_t size() const { return size_ - begin_; }
  std::string_view text() const { return {data(), size()}; }
  const std::string& name() const { return name_; }

  /// Passes over the first `lines` lines (a title, comments above the header): the readers start
  /// after them, and line numbers stay the file's. Throws knn::Error when the file has fewer.
  void skip_lines(std::size_t lines);

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  /// Offset of the first NUL byte of text(), npos when there is none.
  std::size_t first_nul() const { return first_nul_; }
  /// Whether text() holds a quote.
  bool has_quote() const { return has_quote_; }
  /// Line ends ('\n') before byte `offset` of text(), the skipped lines' included: a line number
  /// of the file.
  std::size_t lines_before(std::size_t offset) const;

 private:
  void map_file(int fd, std::size_t size);
  void read_stream(int fd);
  // The text's own bytes: gzip inflated in place of the file's, other formats refused; then index().
  void open_text();
  void inflate_gzip();
  void scan_block(std::size_t k);
  void index();

  std::string name_;
  Kind kind_;
  void* mapped_ = nullptr;
  std::string owned_;
  const char* data_ = "";
  std::size_t size_ = 0;
  std::size_t begin_ = 0;  // where text() begins: past the skipped lines
  // Per block of the text: its line ends (then, once summed, the line ends before it), its first
  // NUL byte, whether it holds a quote.
  std::vector<std::size_t> block_lines_;
  std::vector<std::size_t> block_nul_;
  std::vector<char> block_quote_;
  std::size_t first_nul_ = npos;
  bool has_quote_ = false;
};

/// Refuses a text with a NUL byte (binary data, whose lines a reader would end at the NUL),
/// naming the line and field of the first one.
void refuse_nul_bytes(const Source& source, char delimiter);

}  // namespace knn::detail
