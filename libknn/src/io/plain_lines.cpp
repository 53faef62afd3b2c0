#include "io/plain_lines.hpp"

#include <cstring>

namespace knn::detail {

PlainLineReader::PlainLineReader(const ReadPlan& plan) : usable_(!plan.na.has_number() && plan.decimal == '.') {
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
    columns_.push_back(col);
  }
  pending_.reserve(columns_.size());
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
    pending_.clear();
    bool taken = true;
    for (std::size_t c = 0; c < ncols && taken; ++c) {
      const Column col = columns_[c];
      const char* const b = q;
      const char* e = col.way == Way::number ? scan_plain_number(b, stop, out[col.feature]) : nullptr;
      if (e && (*e == delim || *e == '\n' || *e == '\r')) {
        q = e;
      } else {
        // A cell for after the scan: text, a label, an identifier, or a number that is not plain.
        q = b;
        while (*q != delim && *q != '\n' && *q != '"') ++q;
        if (*q == '"') break;
        e = q;
        if (*q == '\n' && e != b && e[-1] == '\r') --e;  // the line's final "\r"
        if (col.way != Way::skip) pending_.emplace_back(c, std::string_view(b, static_cast<std::size_t>(e - b)));
      }
      if (c + 1 < ncols) {
        taken = *q == delim;
        ++q;
      } else {
        if (*q == '\r' && q[1] == '\n') ++q;
        taken = *q == '\n';
      }
    }
    if (!taken || *q == '"' || CsvReader::too_long(static_cast<std::size_t>(q - p))) break;
    // The kept cells in column order, as the record reader takes them: the same rules, the same
    // first error.
    RowCells row;
    for (const auto& [c, cell] : pending_) {
      const Column col = columns_[c];
      switch (col.way) {
        case Way::number: w.number_cell(line + 1, c, col.feature, cell, out[col.feature], row); break;
        case Way::text: w.text_cell(col.feature, cell, out[col.feature], row); break;
        case Way::label: w.label_cell(line + 1, c, cell, row); break;
        case Way::id: RowWriter::id_cell(cell, row); break;
        case Way::skip: break;
      }
    }
    w.finish_row(line + 1, row);
    p = q + 1;
    ++line;
  }
  reader.skip(p, line - lines_before);
}

}  // namespace knn::detail
