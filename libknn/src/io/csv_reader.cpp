#include "io/csv_reader.hpp"

#include <cstring>

#include "knn/error.hpp"

namespace knn::detail {

CsvReader::CsvReader(std::string name, const char* begin, const char* end, char delimiter, std::size_t line_offset,
                     bool file_start)
    : name_(std::move(name)), delim_(delimiter), at_(begin), end_(end), line_offset_(line_offset) {
  if (file_start && end - begin >= 3 && std::memcmp(begin, "\xEF\xBB\xBF", 3) == 0) at_ += 3;
}

bool CsvReader::next_line(std::string_view& line) {
  if (at_ == end_) return false;
  ++lines_;
  const auto* nl = static_cast<const char*>(std::memchr(at_, '\n', static_cast<std::size_t>(end_ - at_)));
  const char* e = nl ? nl : end_;
  if (too_long(static_cast<std::size_t>(e - at_)))
    throw Error::at(name_, lines_read(), 0, "line longer than the 16 MiB the reader accepts");
  line = std::string_view(at_, static_cast<std::size_t>(e - at_));
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  at_ = nl ? nl + 1 : end_;
  return true;
}

bool CsvReader::next() {
  for (;;) {
    std::string_view line;
    if (!next_line(line)) return false;
    line_ = lines_read();
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
  std::string& record = joined_;
  record.assign(first);
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
