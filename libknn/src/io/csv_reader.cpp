#include "io/csv_reader.hpp"

#include <libfccp/csv.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>

#include "knn/error.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace knn::detail {

CsvReader::CsvReader(const std::string& path, char delimiter) : name_(path), delim_(delimiter) {
  try {
    if (path == "-") {
      name_ = "<stdin>";
      stdin_data_.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
      reader_ = std::make_unique<io::LineReader>(name_, stdin_data_.data(), stdin_data_.data() + stdin_data_.size());
      return;
    }
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw Error::at(path, 0, 0, "is a directory, not a CSV file");
    reader_ = std::make_unique<io::LineReader>(path);
  } catch (const io::error::can_not_open_file& e) {
    throw Error::at(path, 0, 0, std::string("cannot open: ") + std::strerror(e.errno_value));
  }
}

namespace {

// LineReader ends a line at its first NUL byte, so the rest of the line would be dropped without
// a word. A NUL byte means binary data, not CSV text: the file is refused where the first one is
// (its field counted by delimiters on its line, as quotes do not matter in binary data).
void refuse_nul_bytes(const std::string& name, const char* begin, const char* end, char delim,
                      std::size_t line_offset) {
  const auto* nul = static_cast<const char*>(std::memchr(begin, '\0', static_cast<std::size_t>(end - begin)));
  if (!nul) return;
  const char* line_begin = nul;
  while (line_begin != begin && line_begin[-1] != '\n') --line_begin;
  const char* cell_begin = nul;
  while (cell_begin != line_begin && cell_begin[-1] != delim) --cell_begin;
  const char* cell_end = nul;
  while (cell_end != end && *cell_end != delim && *cell_end != '\n') ++cell_end;
  const auto line = line_offset + 1 + static_cast<std::size_t>(std::count(begin, line_begin, '\n'));
  const auto column = 1 + static_cast<std::size_t>(std::count(line_begin, nul, delim));
  const std::string_view cell(cell_begin, static_cast<std::size_t>(cell_end - cell_begin));
  throw Error::at(name, line, column, "NUL byte in " + quote(cell) + ": binary data, not CSV text");
}

}  // namespace

CsvReader::CsvReader(std::string name, const char* begin, const char* end, char delimiter, std::size_t line_offset,
                     bool chunk)
    : name_(std::move(name)), delim_(delimiter), line_offset_(line_offset) {
  refuse_nul_bytes(name_, begin, end, delim_, line_offset_);
  if (chunk) {
    chunk_at_ = begin;
    chunk_end_ = end;
    return;
  }
  reader_ = std::make_unique<io::LineReader>(name_, begin, end);
}

Source::Source(const std::string& path) : name_(path) {
  if (path == "-") {
    name_ = "<stdin>";
    owned_.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    data_ = owned_.data();
    size_ = owned_.size();
    return;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error::at(path, 0, 0, "is a directory, not a CSV file");
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw Error::at(path, 0, 0, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    void* m = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (m != MAP_FAILED) {
      ::close(fd);
      mapped_ = m;
      data_ = static_cast<const char*>(m);
      size_ = static_cast<std::size_t>(st.st_size);
      return;
    }
  }
  // Not a regular file (a pipe, a device) or not mappable: read it to its end.
  char buf[1 << 16];
  ssize_t got;
  while ((got = ::read(fd, buf, sizeof buf)) > 0) owned_.append(buf, static_cast<std::size_t>(got));
  const int err = errno;
  ::close(fd);
  if (got < 0) throw Error::at(path, 0, 0, std::string("read failed: ") + std::strerror(err));
  data_ = owned_.data();
  size_ = owned_.size();
}

Source::~Source() {
  if (mapped_) ::munmap(mapped_, size_);
}

CsvReader::~CsvReader() = default;

void CsvReader::release() {
  reader_.reset();
  chunk_at_ = chunk_end_ = nullptr;
}

std::size_t CsvReader::file_line() const { return reader_ ? reader_->get_file_line() : chunk_lines_; }

bool CsvReader::next_line(std::string_view& line) {
  if (!reader_) {
    if (chunk_at_ == chunk_end_) return false;
    ++chunk_lines_;
    const auto* nl = static_cast<const char*>(std::memchr(chunk_at_, '\n', static_cast<std::size_t>(chunk_end_ - chunk_at_)));
    const char* e = nl ? nl : chunk_end_;
    if (static_cast<std::size_t>(e - chunk_at_) + 1 > (std::size_t{1} << 24))
      throw Error::at(name_, chunk_lines_ + line_offset_, 0, "line longer than the 16 MiB the reader accepts");
    line = std::string_view(chunk_at_, static_cast<std::size_t>(e - chunk_at_));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    chunk_at_ = nl ? nl + 1 : chunk_end_;
    return true;
  }
  try {
    // LineReader ends a line at its NUL terminator (refuse_nul_bytes has ruled out NUL bytes).
    const char* l = reader_->next_line();
    if (!l) return false;
    line = std::string_view(l);
    return true;
  } catch (const io::error::line_length_limit_exceeded&) {
    // LineReader has already counted the line it refuses.
    throw Error::at(name_, file_line() + line_offset_, 0,
                    "line longer than the 16 MiB the reader accepts");
  }
}

bool CsvReader::next() {
  for (;;) {
    std::string_view line;
    if (!next_line(line)) return false;
    line_ = file_line() + line_offset_;
    if (line.empty()) continue;  // blank lines are skipped, as most CSV readers do
    if (std::memchr(line.data(), '"', line.size()))
      split_quoted(line);
    else
      split_plain(line);
    return true;
  }
}

void CsvReader::split_plain(std::string_view line) {
  cells_.clear();
  // Cells are short (a pixel is one to three bytes): a plain scan beats a call per cell.
  const char* b = line.data();
  const char* const end = b + line.size();
  for (const char* p = b; p != end; ++p)
    if (*p == delim_) {
      cells_.emplace_back(b, static_cast<std::size_t>(p - b));
      b = p + 1;
    }
  cells_.emplace_back(b, static_cast<std::size_t>(end - b));
}

// RFC 4180 quoting: a field that starts with a quote runs to the closing quote, "" inside it is
// one quote, and it may span lines. Text after a closing quote up to the delimiter is kept.
void CsvReader::split_quoted(std::string_view first) {
  owned_.clear();
  spans_.clear();
  std::string record(first);
  std::size_t i = 0;
  std::size_t start = 0;
  bool quoted = false, at_field_start = true;
  for (;;) {
    if (i == record.size()) {
      if (!quoted) break;
      std::string_view more;  // a quoted field goes on on the next line
      if (!next_line(more)) throw Error::at(name_, line_, spans_.size() + 1, "quoted field is not closed before the end of the file");
      record += '\n';
      record += more;
      continue;
    }
    const char ch = record[i++];
    if (quoted) {
      if (ch == '"') {
        if (i < record.size() && record[i] == '"') {
          owned_ += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        owned_ += ch;
      }
    } else if (ch == delim_) {
      spans_.emplace_back(start, owned_.size() - start);
      start = owned_.size();
      at_field_start = true;
      continue;
    } else if (ch == '"' && at_field_start) {
      quoted = true;
    } else {
      owned_ += ch;
    }
    at_field_start = false;
  }
  spans_.emplace_back(start, owned_.size() - start);
  cells_.clear();
  for (const auto& s : spans_) cells_.emplace_back(owned_.data() + s.first, s.second);
}

}  // namespace knn::detail
