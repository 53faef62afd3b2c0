#include "io/rows_read.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>

#include <omp.h>

#include "io/csv_reader.hpp"
#include "io/level_dictionary.hpp"
#include "knn/error.hpp"

namespace knn::detail {

bool RowsFound::any_text() const { return std::find(text.begin(), text.end(), 1) != text.end(); }

namespace {

constexpr float kMissing = std::numeric_limits<float>::quiet_NaN();

std::string column_label(const std::vector<std::string>& names, std::size_t col) { return "column " + quote(names[col]); }

// One reader's state beside the rows it adds to its Dataset.
struct PartState {
  std::vector<char> text;              // per feature read as infer: a text cell was seen
  std::vector<LevelDictionary> levels;  // per feature read as text
  std::vector<std::size_t> record_of_row;  // with drop_missing: the part's record index of each kept row
  std::size_t records = 0;
  std::size_t dropped_whole = 0;
  // Per feature read as infer: the first number that float32 cannot hold (line, message). An
  // error unless a text cell makes the column categorical after all.
  std::vector<std::pair<std::size_t, std::string>> not_finite;  // a shard read from the whole file: the rows the whole file dropped

  explicit PartState(std::size_t features) : text(features, 0), levels(features), not_finite(features) {}
};

// Reads the data rows: the next records, or (advance_first false) the one already read first. A chunk of
// a larger file (allow_empty) may hold no rows. With `dest`, row i's features are written to
// dest + i * d (the caller has room for every record) instead of growing data.features.values.
void read_rows(CsvReader& reader, const ReadPlan& plan, Dataset& data, PartState& st, bool advance_first,
               bool allow_empty = false, float* dest = nullptr, std::size_t dest_rows = 0) {
  const std::size_t ncols = plan.role.size(), d = data.feature_names.size();
  std::vector<float>& values = data.features.values;
  std::size_t rows = 0;
  std::string_view label, id;
  for (bool have = advance_first ? reader.next() : true; have; have = reader.next()) {
    const auto& cells = reader.cells();
    if (cells.size() != ncols) {
      const std::size_t col = std::min(cells.size(), ncols) + (cells.size() > ncols ? 1 : 0);
      throw Error::at(reader.name(), reader.line(), col,
                      "expected " + std::to_string(ncols) + " fields, found " + std::to_string(cells.size()) +
                          (cells.size() > ncols ? " (extra value " + quote(cells[ncols]) + ")"
                                                : " (last value " + quote(cells.back()) + ")"));
    }
    float* out = nullptr;
    if (dest) {
      if (rows == dest_rows) throw Error::at(reader.name(), reader.line(), 0, "more rows than lines (internal error)");
      out = dest + rows * d;
    } else {
      const std::size_t base = values.size();
      values.resize(base + d);
      out = values.data() + base;
    }
    bool missing_feature = false, missing_label = false, has_label = false, has_id = false;
    for (std::size_t c = 0; c < ncols; ++c) {
      const long r = plan.role[c];
      if (r >= 0) {
        const auto f = static_cast<std::size_t>(r);
        float v = kMissing;
        if (plan.read_as[f] == ReadAs::text) {
          const std::string_view t = trim(cells[c]);
          if (plan.na.contains(t)) missing_feature = true;
          else v = st.levels[f].code(t);
        } else {
          switch (classify_cell(cells[c], plan.na, v)) {
            case CellKind::number: break;
            case CellKind::missing: missing_feature = true; v = kMissing; break;
            case CellKind::not_finite: {
              std::string message = Error::at(reader.name(), reader.line(), c + 1,
                                              "not a finite number: " + quote(cells[c]) + " in " + column_label(data.column_names, c))
                                        .detail();
              if (plan.read_as[f] == ReadAs::number) throw Error(message);
              if (st.not_finite[f].second.empty()) st.not_finite[f] = {reader.line(), std::move(message)};
              v = kMissing;
              break;
            }
            case CellKind::text:
              if (plan.read_as[f] == ReadAs::number)
                throw Error::at(reader.name(), reader.line(), c + 1,
                                "not a finite number: " + quote(cells[c]) + " in " + column_label(data.column_names, c) +
                                    (plan.numbers_from.empty() ? ", which " + param("numeric") + " reads as numbers"
                                                               : ", a numeric column in " + plan.numbers_from));
              st.text[f] = 1;  // the column is categorical: the caller reads the file again
              v = kMissing;
              break;
          }
        }
        out[f] = v;
      } else if (r == kLabel) {
        label = trim(cells[c]);
        has_label = true;
        if (label.empty() || plan.na.contains(label)) {
          missing_label = true;
          if (plan.training && !plan.drop_missing)
            throw Error::at(reader.name(), reader.line(), c + 1,
                            "missing label " + quote(cells[c]) + " in " + column_label(data.column_names, c) +
                                " (rows with a missing label can be dropped with " + param("drop_missing") + ")");
        }
      } else if (r == kId) {
        id = trim(cells[c]);
        has_id = true;
      }
    }
    const std::size_t record = st.records++;
    if (plan.training && plan.drop_missing && (missing_label || (plan.drop_features && missing_feature))) {
      if (!dest) values.resize(values.size() - d);
      continue;
    }
    if (has_label) {
      if (missing_label) {
        data.missing_labels.push_back(data.labels.size());
        data.labels.emplace_back();
      } else {
        data.labels.emplace_back(label);
      }
    }
    if (has_id) data.ids.emplace_back(id);
    if (plan.drop_missing) st.record_of_row.push_back(record);
    data.lines.push_back(reader.line());
    ++rows;
  }
  data.features.rows = rows;
  data.features.cols = d;
  if (rows == 0 && !allow_empty) throw Error::at(reader.name(), 0, 0, st.records ? "no data rows left once rows with a missing value are dropped" : "no data rows");
}

// Large files without quotes are parsed in parallel: the rows after `start` are cut into one
// chunk per thread at line ends, each chunk read by its own reader, and the parts joined in file
// order. The first error in file order is the one reported. (With quotes, a line end may sit
// inside a field, so such files are read in order.) Every chunk writes its rows straight into the
// one matrix, at a place sized by its line count (a row takes at least one line); blank and
// dropped lines leave gaps, closed afterwards, so the features are never held twice.
void read_rows_parallel(const std::string& name, std::string_view content, std::size_t start, const ReadPlan& plan,
                        Dataset& data, PartState& st, char delimiter, bool allow_empty) {
  const int threads = omp_get_max_threads();
  const char* base = content.data();
  const std::size_t size = content.size();
  std::vector<std::size_t> cut{start};
  for (int t = 1; t < threads; ++t) {
    std::size_t at = std::max(cut.back(), start + (size - start) / static_cast<std::size_t>(threads) * static_cast<std::size_t>(t));
    const void* nl = at < size ? std::memchr(base + at, '\n', size - at) : nullptr;
    cut.push_back(nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - base) + 1 : size);
  }
  cut.push_back(size);
  const std::size_t parts = cut.size() - 1, d = data.feature_names.size();
  std::vector<std::size_t> first_row(parts + 1, 0);
  for (std::size_t i = 0; i < parts; ++i)
    first_row[i + 1] = first_row[i] + (cut[i + 1] > cut[i] ? static_cast<std::size_t>(std::count(base + cut[i], base + cut[i + 1], '\n')) + 1 : 0);
  std::vector<float>& values = data.features.values;
  values.assign(first_row[parts] * d, 0.0f);
  std::vector<Dataset> part(parts);
  std::vector<PartState> state(parts, PartState(d));
  std::vector<std::string> error(parts);
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(parts))
  for (std::ptrdiff_t p = 0; p < static_cast<std::ptrdiff_t>(parts); ++p) {
    const auto i = static_cast<std::size_t>(p);
    try {
      Dataset& pd = part[i];
      pd.column_names = data.column_names;
      pd.feature_names = data.feature_names;
      const auto lines_before = static_cast<std::size_t>(std::count(base, base + cut[i], '\n'));
      CsvReader reader(name, base + cut[i], base + cut[i + 1], delimiter, lines_before, true);
      read_rows(reader, plan, pd, state[i], true, true, values.data() + first_row[i] * d, first_row[i + 1] - first_row[i]);
    } catch (const std::exception& e) {
      error[i] = e.what();
    }
  }
  for (const auto& e : error)
    if (!e.empty()) throw Error(e);
  std::size_t rows = 0;
  for (const auto& pd : part) rows += pd.features.rows;
  if (rows == 0 && !allow_empty) throw Error::at(name, 0, 0, "no data rows");
  std::size_t at = 0;
  for (std::size_t i = 0; i < parts; ++i) {
    Dataset& p = part[i];
    if (at != first_row[i] && p.features.rows)
      std::memmove(values.data() + at * d, values.data() + first_row[i] * d, p.features.rows * d * sizeof(float));
    const std::size_t labels_before = data.labels.size();
    for (std::size_t m : p.missing_labels) data.missing_labels.push_back(labels_before + m);
    at += p.features.rows;
    data.labels.insert(data.labels.end(), std::make_move_iterator(p.labels.begin()), std::make_move_iterator(p.labels.end()));
    data.ids.insert(data.ids.end(), std::make_move_iterator(p.ids.begin()), std::make_move_iterator(p.ids.end()));
    data.lines.insert(data.lines.end(), p.lines.begin(), p.lines.end());
    for (std::size_t f = 0; f < d; ++f) {
      st.text[f] = static_cast<char>(st.text[f] | state[i].text[f]);
      if (st.not_finite[f].second.empty()) st.not_finite[f] = std::move(state[i].not_finite[f]);
    }
    for (std::size_t r : state[i].record_of_row) st.record_of_row.push_back(st.records + r);
    st.records += state[i].records;
  }
  values.resize(rows * d);
  data.features.rows = rows;
  data.features.cols = d;
}

constexpr std::size_t kParallelFrom = 4 << 20;

// Where the data rows of a file without quotes start: after the header line, or after a BOM.
std::size_t data_start(std::string_view content, const CsvOptions& o) {
  if (o.header) {
    const auto nl = content.find('\n');
    return nl == std::string_view::npos ? content.size() : nl + 1;
  }
  return content.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
}

bool reads_text(const ReadPlan& plan) {
  return std::find(plan.read_as.begin(), plan.read_as.end(), ReadAs::text) != plan.read_as.end();
}

// The rows of the whole file.
void read_all_rows(const std::string& name, std::string_view content, const CsvOptions& o, const ReadPlan& plan,
                   Dataset& data, PartState& st) {
  // Text columns are read in order: their codes come from one dictionary.
  if (o.delimiter == ',' && content.size() >= kParallelFrom && omp_get_max_threads() > 1 && !reads_text(plan) &&
      content.find('"') == std::string_view::npos) {
    read_rows_parallel(name, content, data_start(content, o), plan, data, st, o.delimiter, false);
    return;
  }
  CsvReader reader(name, content.data(), content.data() + content.size(), o.delimiter);
  if (o.header) reader.next();
  read_rows(reader, plan, data, st, true);
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
bool read_shard_rows(const std::string& name, std::string_view content, const CsvOptions& o, const ReadPlan& plan,
                     Dataset& data, PartState& st) {
  if (content.find('"') != std::string_view::npos) {
    CsvReader reader(name, content.data(), content.data() + content.size(), o.delimiter);
    if (o.header) reader.next();
    read_rows(reader, plan, data, st, true, true);
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
  const std::size_t start = data_start(content, o), size = content.size();
  const auto cut = [&](std::size_t t) -> std::size_t {
    const std::size_t at = start + (size - start) / o.shards * t + (size - start) % o.shards * t / o.shards;
    if (t == 0 || at <= start) return start;
    if (t == o.shards) return size;
    const auto nl = content.find('\n', at - 1);
    return nl == std::string_view::npos ? size : nl + 1;
  };
  const std::size_t b = cut(o.shard), e = cut(o.shard + 1);
  if (e - b >= kParallelFrom && omp_get_max_threads() > 1 && !reads_text(plan)) {
    read_rows_parallel(name, content.substr(0, e), b, plan, data, st, o.delimiter, true);
    return true;
  }
  const auto lines_before = static_cast<std::size_t>(std::count(content.data(), content.data() + b, '\n'));
  CsvReader part(name, content.data() + b, content.data() + e, o.delimiter, lines_before, true);
  read_rows(part, plan, data, st, true, true);
  return true;
}

}  // namespace

RowsFound read_data_rows(const std::string& name, std::string_view content, const CsvOptions& o, const ReadPlan& plan,
                         Dataset& data) {
  const std::size_t d = data.feature_names.size();
  PartState st(d);
  const bool shard_relative = o.shards > 1 ? read_shard_rows(name, content, o, plan, data, st) : false;
  if (o.shards <= 1) read_all_rows(name, content, o, plan, data, st);
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
