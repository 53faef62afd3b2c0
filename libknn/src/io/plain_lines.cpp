#include "io/plain_lines.hpp"

#include <cstring>

namespace knn::detail {

PlainLineReader::PlainLineReader(const ReadPlan& plan) : usable_(!plan.na.has_number()) {
  columns_.reserve(plan.role.size());
  for (std::size_t c = 0; c < plan.role.size(); ++c) {
    const long r = plan.role[c];
    Column col{Way::skip, 0};
    if (r >= 0) {
      col.feature = static_cast<std::uint32_t>(r);
      col.way = plan.read_as[static_cast<std::size_t>(r)] == ReadAs::text ? Way::text : Way::number;
    } else if (r == kLabel) {
      col.way = Way::label;
    } else if (r == kId) {
      col.way = Way::id;
    }
    if (col.way == Way::text || col.way == Way::label || col.way == Way::id) kept_.push_back(c);
    columns_.push_back(col);
  }
  cells_.resize(kept_.size());
}

void PlainLineReader::read(CsvReader& reader, RowWriter& w) {
  if (!usable_) return;
  const char* p = reader.position();
  const char* const end = reader.end();
  // Every line taken here ends with '\n', where each scan below stops; a last line without one
  // is left to the record reader.
  const char* stop = end;
  if (p != end && end[-1] != '\n') {
    const void* nl = ::memrchr(p, '\n', static_cast<std::size_t>(end - p));
    stop = nl ? static_cast<const char*>(nl) + 1 : p;
  }
  const char delim = reader.delimiter();
  const std::size_t ncols = columns_.size();
  const std::size_t lines_before = reader.lines_read();
  std::size_t line = lines_before;  // lines before p
  while (p != stop) {
    if (*p == '\n' || (*p == '\r' && p[1] == '\n')) {  // a blank line
      p += *p == '\n' ? 1 : 2;
      ++line;
      continue;
    }
    float* const out = w.slot(line + 1);
    const char* q = p;
    std::size_t kept = 0;
    bool taken = true;
    for (std::size_t c = 0; c < ncols && taken; ++c) {
      const Column col = columns_[c];
      if (col.way == Way::number) {
        q = scan_plain_number(q, stop, out[col.feature]);
        if (!q) {
          taken = false;
          break;
        }
      } else {
        const char* const b = q;
        while (*q != delim && *q != '\n' && *q != '"') ++q;
        if (*q == '"') {
          taken = false;
          break;
        }
        const char* e = q;
        if (*q == '\n' && e != b && e[-1] == '\r') --e;  // the line's final "\r"
        if (col.way != Way::skip) cells_[kept++] = std::string_view(b, static_cast<std::size_t>(e - b));
      }
      if (c + 1 < ncols) {
        taken = *q == delim;
        ++q;
      } else {
        if (*q == '\r' && q[1] == '\n') ++q;
        taken = *q == '\n';
      }
    }
    if (!taken || CsvReader::too_long(static_cast<std::size_t>(q - p))) break;
    RowCells row;
    for (std::size_t k = 0; k < kept; ++k) {
      const std::size_t c = kept_[k];
      const Column col = columns_[c];
      if (col.way == Way::text)
        w.text_cell(col.feature, cells_[k], out[col.feature], row);
      else if (col.way == Way::label)
        w.label_cell(line + 1, c, cells_[k], row);
      else
        RowWriter::id_cell(cells_[k], row);
    }
    w.finish_row(line + 1, row);
    p = q + 1;
    ++line;
  }
  reader.skip(p, line - lines_before);
}

}  // namespace knn::detail
