#include "io/rows_read.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <iterator>

#include <omp.h>

#include "io/csv_reader.hpp"
#include "io/level_dictionary.hpp"
#include "io/page_memory.hpp"
#include "io/plain_lines.hpp"
#include "io/row_writer.hpp"
#include "io/source.hpp"
#include "knn/error.hpp"
#include "knn/stage_times.hpp"

namespace knn::detail {

bool RowsFound::any_text() const { return std::find(text.begin(), text.end(), 1) != text.end(); }

PartCuts& part_cuts() {
  static PartCuts cuts;
  return cuts;
}

Error ragged_record(const CsvReader& reader, std::size_t ncols, const std::string& hint) {
  const auto& cells = reader.cells();
  const std::size_t col = std::min(cells.size(), ncols) + (cells.size() > ncols ? 1 : 0);
  return Error::at(reader.name(), reader.line(), col,
                   "expected " + std::to_string(ncols) + (ncols == 1 ? " field, found " : " fields, found ") + std::to_string(cells.size()) +
                       (cells.size() > ncols ? " (extra value " + quote(cells[ncols]) + ")" : " (last value " + quote(cells.back()) + ")") +
                       hint);
}

namespace {

// One record read by the record reader: a ragged row is refused, then each cell goes by its
// column's role.
void read_record(const CsvReader& reader, const ReadPlan& plan, RowWriter& w) {
  const auto& cells = reader.cells();
  const std::size_t ncols = plan.role.size();
  if (cells.size() != ncols) throw ragged_record(reader, ncols);
  float* out = w.slot(reader.line());
  RowCells row;
  for (std::size_t c = 0; c < ncols; ++c) {
    const long r = plan.role[c];
    if (r >= 0) {
      const auto f = static_cast<std::size_t>(r);
      if (plan.read_as[f] == ReadAs::text)
        w.text_cell(f, cells[c], out[f], row);
      else
        w.number_cell(reader.line(), c, f, cells[c], out[f], row);
    } else if (r == kLabel) {
      w.label_cell(reader.line(), c, cells[c], row);
    } else if (r == kId) {
      RowWriter::id_cell(cells[c], row);
    }
  }
  w.finish_row(reader.line(), row);
}

// Where the data rows of a file without quotes start: after the header record, or at the start
// (past a byte order mark).
std::size_t data_start(const Source& src, const CsvOptions& o) {
  if (o.header) {
    CsvReader reader(src.name(), src.data(), src.data() + src.size(), o.delimiter);
    reader.next();
    return static_cast<std::size_t>(reader.position() - src.data());
  }
  return src.text().substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
}

// The offsets where the parts of [start, stop) begin, then `stop`: one part, or (`split`) one per
// thread or where part_cuts() says, each cut moved forward to a line start.
std::vector<std::size_t> part_bounds(const Source& src, std::size_t start, std::size_t stop, bool split) {
  std::vector<std::size_t> cut{start};
  if (split) {
    std::vector<std::size_t> wanted = part_cuts().at;
    if (wanted.empty()) {
      const auto threads = static_cast<std::size_t>(std::max(1, omp_get_max_threads()));
      for (std::size_t t = 1; t < threads; ++t) wanted.push_back(start + (stop - start) / threads * t);
    }
    const char* const base = src.data();
    for (std::size_t at : wanted) {
      at = std::min(std::max(at, cut.back()), stop);
      if (at != start && at != stop && base[at - 1] != '\n') {
        const void* nl = std::memchr(base + at, '\n', stop - at);
        at = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - base) + 1 : stop;
      }
      cut.push_back(at);
    }
  }
  cut.push_back(stop);
  return cut;
}

// Adds the texts of one part's column to the whole file's dictionary, in the order the part met
// them (the order one reader would have met them in), and rewrites the part's codes to match.
void merge_levels(LevelDictionary& all, const LevelDictionary& part, Matrix& m, std::size_t col, std::size_t first,
                  std::size_t last) {
  std::vector<float> to(part.size());
  bool same = true;
  for (std::size_t k = 0; k < part.size(); ++k) {
    to[k] = all.code(part.texts()[k]);
    same = same && to[k] == static_cast<float>(k);
  }
  if (!same) remap_column(m, col, first, last, to);
}

// Reads the parts [cut[i], cut[i + 1]) of the source, in parallel where there are several, each
// by its own reader: plain lines by the plain-line reader, the others a record at a time.
// `skip_header`: one part, starting at the header. Each part writes its rows straight into the
// one matrix, at a place sized by its line count (a row takes at least one line); blank and
// dropped lines leave gaps, closed afterwards, so the features are never held twice. The first
// error in file order is the one thrown.
void read_parts(const Source& src, const std::vector<std::size_t>& cut, bool skip_header, const ReadPlan& plan,
                Dataset& data, PartState& st, char delimiter, bool allow_empty) {
  const std::size_t parts = cut.size() - 1, d = data.feature_names.size();
  const char* const base = src.data();
  std::vector<std::size_t> before(parts + 1), first_row(parts + 1, 0);
  for (std::size_t i = 0; i <= parts; ++i) before[i] = src.lines_before(cut[i]);
  for (std::size_t i = 0; i < parts; ++i) {
    const bool unended = cut[i + 1] > cut[i] && base[cut[i + 1] - 1] != '\n';  // a last line without '\n'
    first_row[i + 1] = first_row[i] + before[i + 1] - before[i] + (unended ? 1 : 0);
  }
  std::vector<float>& values = data.features.values;
  resize_prepared(values, first_row[parts] * d);
  stage_done("CSV: matrix pages mapped");
  data.features.cols = d;
  std::vector<Dataset> part(parts);
  std::vector<PartState> state;
  state.reserve(parts);
  for (std::size_t i = 0; i < parts; ++i) state.emplace_back(d);
  std::vector<std::exception_ptr> error(parts);
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(parts)) if (parts > 1)
  for (std::ptrdiff_t p = 0; p < static_cast<std::ptrdiff_t>(parts); ++p) {
    const auto i = static_cast<std::size_t>(p);
    try {
      Dataset& pd = part[i];
      pd.column_names = data.column_names;
      pd.feature_names = data.feature_names;
      CsvReader reader(src.name(), base + cut[i], base + cut[i + 1], delimiter, before[i], cut[i] == 0);
      if (skip_header) reader.next();
      RowWriter w(src.name(), plan, pd, state[i], values.data() + first_row[i] * d, first_row[i + 1] - first_row[i]);
      PlainLineReader plain(plan);
      for (;;) {
        plain.read(reader, w);
        if (!reader.next()) break;
        read_record(reader, plan, w);
      }
      pd.features.rows = w.rows();
    } catch (...) {
      error[i] = std::current_exception();
    }
  }
  for (const auto& e : error)
    if (e) std::rethrow_exception(e);
  stage_done("CSV: rows parsed");
  std::size_t at = 0;
  for (std::size_t i = 0; i < parts; ++i) {
    Dataset& p = part[i];
    const std::size_t rows = p.features.rows;
    if (at != first_row[i] && rows)
      std::memmove(values.data() + at * d, values.data() + first_row[i] * d, rows * d * sizeof(float));
    const std::size_t labels_before = data.labels.size();
    for (std::size_t m : p.missing_labels) data.missing_labels.push_back(labels_before + m);
    data.labels.insert(data.labels.end(), std::make_move_iterator(p.labels.begin()), std::make_move_iterator(p.labels.end()));
    data.ids.insert(data.ids.end(), std::make_move_iterator(p.ids.begin()), std::make_move_iterator(p.ids.end()));
    data.lines.insert(data.lines.end(), p.lines.begin(), p.lines.end());
    for (std::size_t f = 0; f < d; ++f) {
      st.text[f] = static_cast<char>(st.text[f] | state[i].text[f]);
      if (st.not_finite[f].second.empty()) st.not_finite[f] = std::move(state[i].not_finite[f]);
      if (plan.read_as[f] == ReadAs::text) merge_levels(st.levels[f], state[i].levels[f], data.features, f, at, at + rows);
    }
    for (std::size_t r : state[i].record_of_row) st.record_of_row.push_back(st.records + r);
    st.records += state[i].records;
    at += rows;
  }
  values.resize(at * d);
  data.features.rows = at;
  stage_done("CSV: parts merged");
  if (at == 0 && !allow_empty)
    throw Error::at(src.name(), 0, 0, st.records ? "no data rows left once rows with a missing value are dropped" : "no data rows");
}

// The rows of the whole file.
void read_all_rows(const Source& src, const CsvOptions& o, const ReadPlan& plan, Dataset& data, PartState& st) {
  if (src.has_quote()) {  // a line end may sit inside a field: one reader, in order
    read_parts(src, {0, src.size()}, o.header, plan, data, st, o.delimiter, false);
    return;
  }
  const std::size_t start = data_start(src, o);
  const bool split = src.size() - start >= part_cuts().parallel_from;
  read_parts(src, part_bounds(src, start, src.size(), split), false, plan, data, st, o.delimiter, false);
}

template <class T>
void keep_range(std::vector<T>& v, std::size_t b, std::size_t e) {
  v.erase(v.begin() + static_cast<std::ptrdiff_t>(std::min(e, v.size())), v.end());
  v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(b, v.size())));
}

// Sharded loading (CsvOptions::shard): without quotes, the data bytes are cut into equal ranges
// moved forward to line starts, and only this shard's range is parsed; every shard computes the
// same cuts, so each row belongs to exactly one. With quotes a line end may sit inside a field:
// the file is read through and the shard's share of the rows kept. Returns whether the records
// counted are the shard's own (true) or the whole file's.
bool read_shard_rows(const Source& src, const CsvOptions& o, const ReadPlan& plan, Dataset& data, PartState& st) {
  if (src.has_quote()) {
    read_parts(src, {0, src.size()}, o.header, plan, data, st, o.delimiter, true);
    const std::size_t n = data.features.rows, d = data.feature_names.size();
    const std::size_t b = n * o.shard / o.shards, e = n * (o.shard + 1) / o.shards;
    st.dropped_whole = st.records - n;
    keep_range(data.features.values, b * d, e * d);
    data.features.values.shrink_to_fit();
    keep_range(data.labels, b, e);
    keep_range(data.ids, b, e);
    keep_range(data.lines, b, e);
    keep_range(st.record_of_row, b, e);
    std::vector<std::size_t> missing;
    for (std::size_t m : data.missing_labels)
      if (m >= b && m < e) missing.push_back(m - b);
    data.missing_labels = missing;
    data.features.rows = e - b;
    return false;
  }
  const std::string_view content = src.text();
  const std::size_t start = data_start(src, o), size = content.size();
  const auto cut = [&](std::size_t t) -> std::size_t {
    const std::size_t at = start + (size - start) / o.shards * t + (size - start) % o.shards * t / o.shards;
    if (t == 0 || at <= start) return start;
    if (t == o.shards) return size;
    const auto nl = content.find('\n', at - 1);
    return nl == std::string_view::npos ? size : nl + 1;
  };
  const std::size_t b = cut(o.shard), e = cut(o.shard + 1);
  read_parts(src, part_bounds(src, b, e, e - b >= part_cuts().parallel_from), false, plan, data, st, o.delimiter, true);
  return true;
}

}  // namespace

RowsFound read_data_rows(const Source& source, const CsvOptions& o, const ReadPlan& plan, Dataset& data) {
  const std::size_t d = data.feature_names.size();
  PartState st(d);
  const bool shard_relative = o.shards > 1 ? read_shard_rows(source, o, plan, data, st) : false;
  if (o.shards <= 1) read_all_rows(source, o, plan, data, st);
  // A number float32 cannot hold, in a column that no text cell made categorical: the first in
  // file order is the error.
  const std::pair<std::size_t, std::string>* bad = nullptr;
  for (std::size_t f = 0; f < d; ++f)
    if (!st.text[f] && !st.not_finite[f].second.empty() && (!bad || st.not_finite[f].first < bad->first)) bad = &st.not_finite[f];
  if (bad) throw Error(bad->second);
  data.levels.assign(d, {});
  for (std::size_t f = 0; f < d; ++f)
    if (plan.read_as[f] == ReadAs::text) data.levels[f] = st.levels[f].finish(data.features, f);
  if (plan.drop_missing && st.records > data.size())
    for (std::size_t f = 0; f < d; ++f) {
      if (plan.read_as[f] != ReadAs::text) continue;
      // Texts seen only in dropped rows are no levels of the data.
      std::vector<char> used(data.levels[f].size(), 0);
      for (std::size_t i = 0; i < data.size(); ++i)
        if (!std::isnan(data.features(i, f))) used[static_cast<std::size_t>(data.features(i, f))] = 1;
      std::vector<std::string> kept;
      for (std::size_t l = 0; l < used.size(); ++l)
        if (used[l]) kept.push_back(data.levels[f][l]);
      recode_column(data.features, f, data.levels[f], kept);
      data.levels[f] = std::move(kept);
    }
  RowsFound found;
  if (plan.drop_missing) {
    data.file_rows = std::move(st.record_of_row);
    data.dropped_rows = o.shards > 1 && !shard_relative ? st.dropped_whole : st.records - data.size();
  }
  found.text = std::move(st.text);
  found.records = st.records;
  found.shard_relative = shard_relative;
  return found;
}

}  // namespace knn::detail
