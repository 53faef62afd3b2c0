#include "knn/dataset.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <cstring>
#include <iterator>
#include <map>

#include <omp.h>

#include "io/csv_reader.hpp"
#include "io/text_format.hpp"
#include "knn/error.hpp"
#include "knn/io.hpp"

namespace knn {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Whole numbers of up to 7 digits (pixel values, counts) are exact in float: a fast path for them.
bool parse_small_int(const char* b, const char* e, float& out) {
  bool neg = false;
  if (b != e && (*b == '-' || *b == '+')) neg = *b++ == '-';
  const std::ptrdiff_t len = e - b;
  if (len < 1 || len > 7) return false;
  int v = 0;
  for (const char* p = b; p != e; ++p) {
    const unsigned dgt = static_cast<unsigned>(*p - '0');
    if (dgt > 9) return false;
    v = v * 10 + static_cast<int>(dgt);
  }
  out = static_cast<float>(neg ? -v : v);
  return true;
}

std::string column_label(const std::vector<std::string>& names, std::size_t col) {
  return "column " + quote(names[col]);
}

// Resolves a column given by name or by 0-based index (negative from the end). A name that is a
// column's header wins over reading it as an index.
std::size_t resolve_column(const std::string& spec, const std::vector<std::string>& names, bool header,
                           const std::string& option, const std::string& file) {
  if (header) {
    std::size_t found = Dataset::npos, count = 0;
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == spec) {
        if (count++ == 0) found = i;
      }
    if (count > 1)
      throw Error::at(file, 1, 0, "column name " + quote(spec) + " given to " + param(option) +
                                      " appears " + std::to_string(count) + " times in the header");
    if (count == 1) return found;
  }
  const char* b = spec.c_str();
  char* e = nullptr;
  errno = 0;
  const long long v = std::strtoll(b, &e, 10);
  if (spec.empty() || *e != '\0' || errno == ERANGE)
    throw Error::parameter(option, "no column named " + quote(spec) + " in " + file);
  const long long n = static_cast<long long>(names.size());
  const long long idx = v < 0 ? n + v : v;
  if (idx < 0 || idx >= n)
    throw Error::parameter(option, "column index " + quote(spec) + " is out of range for " + file + " (" +
                                    std::to_string(n) + " columns: 0.." + std::to_string(n - 1) +
                                    " or -" + std::to_string(n) + "..-1)");
  return static_cast<std::size_t>(idx);
}

// Column roles: a feature's index, or one of these.
constexpr long kLabel = -1;
constexpr long kIgnore = -2;

// Reads the data rows; without a header the record already read is the first of them. A chunk of
// a larger file (allow_empty) may hold no rows. With `dest`, row i's features are written to
// dest + i * d (the caller has room for every row) instead of growing data.features.values.
void read_rows(detail::CsvReader& reader, const std::vector<long>& role, Dataset& data, bool header,
               bool allow_empty = false, float* dest = nullptr, std::size_t dest_rows = 0) {
  const std::size_t ncols = role.size(), d = data.feature_names.size();
  std::vector<float>& values = data.features.values;
  std::size_t rows = 0;
  for (bool have = header ? reader.next() : true; have; have = reader.next()) {
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
    for (std::size_t c = 0; c < ncols; ++c) {
      const long r = role[c];
      if (r >= 0) {
        const std::string_view cell = trim(cells[c]);
        float v;
        if (!parse_small_int(cell.data(), cell.data() + cell.size(), v)) {
          const auto parsed = parse_float(cell.data(), cell.data() + cell.size());
          if (!parsed) {
            std::string why = cell.empty() ? "empty value" : "not a finite number:";
            if (!cell.empty()) why += " " + quote(cells[c]);
            throw Error::at(reader.name(), reader.line(), c + 1,
                            why + " in " + column_label(data.column_names, c));
          }
          v = *parsed;
        }
        out[static_cast<std::size_t>(r)] = v;
      } else if (r == kLabel) {
        const std::string_view cell = trim(cells[c]);
        if (cell.empty())
          throw Error::at(reader.name(), reader.line(), c + 1, "empty label in " + column_label(data.column_names, c));
        data.labels.emplace_back(cell);
      }
    }
    data.lines.push_back(reader.line());
    ++rows;
  }
  data.features.rows = rows;
  data.features.cols = d;
  if (rows == 0 && !allow_empty) throw Error::at(reader.name(), 0, 0, "no data rows");
}

// Large files without quotes are parsed in parallel: the rows after `start` are cut into one
// chunk per thread at line ends, each chunk read by its own reader, and the parts joined in file
// order. The first error in file order is the one reported. (With quotes, a line end may sit
// inside a field, so such files are read in order.) Every chunk writes its rows straight into the
// one matrix, at a place sized by its line count (a row takes at least one line); blank lines
// leave gaps, closed afterwards, so the features are never held twice.
void read_rows_parallel(const std::string& name, std::string_view content, std::size_t start,
                        const std::vector<long>& role, Dataset& data, char delimiter = ',', bool allow_empty = false) {
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
  std::vector<std::string> error(parts);
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(parts))
  for (std::ptrdiff_t p = 0; p < static_cast<std::ptrdiff_t>(parts); ++p) {
    const auto i = static_cast<std::size_t>(p);
    try {
      Dataset& d = part[i];
      d.column_names = data.column_names;
      d.feature_names = data.feature_names;
      const auto lines_before = static_cast<std::size_t>(std::count(base, base + cut[i], '\n'));
      detail::CsvReader reader(name, base + cut[i], base + cut[i + 1], delimiter, lines_before, true);
      read_rows(reader, role, d, true, true, values.data() + first_row[i] * d.feature_names.size(), first_row[i + 1] - first_row[i]);
    } catch (const std::exception& e) {
      error[i] = e.what();
    }
  }
  for (const auto& e : error)
    if (!e.empty()) throw Error(e);
  std::size_t rows = 0;
  for (const auto& d : part) rows += d.features.rows;
  if (rows == 0 && !allow_empty) throw Error::at(name, 0, 0, "no data rows");
  std::size_t at = 0;
  for (std::size_t i = 0; i < parts; ++i) {
    Dataset& p = part[i];
    if (at != first_row[i] && p.features.rows)
      std::memmove(values.data() + at * d, values.data() + first_row[i] * d, p.features.rows * d * sizeof(float));
    at += p.features.rows;
    data.labels.insert(data.labels.end(), std::make_move_iterator(p.labels.begin()), std::make_move_iterator(p.labels.end()));
    data.lines.insert(data.lines.end(), p.lines.begin(), p.lines.end());
  }
  values.resize(rows * d);
  data.features.rows = rows;
  data.features.cols = data.feature_names.size();
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

// Reads the data rows of `content`, whose first record the reader has read.
void read_all_rows(detail::CsvReader& reader, std::string_view content, const CsvOptions& o,
                   const std::vector<long>& role, Dataset& data) {
  if (o.delimiter == ',' && content.size() >= kParallelFrom && omp_get_max_threads() > 1 &&
      content.find('"') == std::string_view::npos) {
    const std::string name = reader.name();
    reader.release();  // its buffer is not needed by the chunks
    read_rows_parallel(name, content, data_start(content, o), role, data);
    return;
  }
  read_rows(reader, role, data, o.header);
}

// Sharded loading (CsvOptions::shard): without quotes, the data bytes are cut into equal ranges
// moved forward to line starts, and only this shard's range is parsed; every shard computes the
// same cuts, so each row belongs to exactly one. With quotes a line end may sit inside a field:
// the file is read through and the shard's share of the rows kept.
void read_shard_rows(detail::CsvReader& reader, std::string_view content, const CsvOptions& o,
                     const std::vector<long>& role, Dataset& data) {
  if (content.find('"') != std::string_view::npos) {
    read_rows(reader, role, data, o.header, true);
    const std::size_t n = data.features.rows, d = data.feature_names.size();
    const std::size_t b = n * o.shard / o.shards, e = n * (o.shard + 1) / o.shards;
    auto& v = data.features.values;
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(e * d), v.end());
    v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(b * d));
    v.shrink_to_fit();
    if (!data.labels.empty()) {
      data.labels.erase(data.labels.begin() + static_cast<std::ptrdiff_t>(e), data.labels.end());
      data.labels.erase(data.labels.begin(), data.labels.begin() + static_cast<std::ptrdiff_t>(b));
    }
    data.lines.erase(data.lines.begin() + static_cast<std::ptrdiff_t>(e), data.lines.end());
    data.lines.erase(data.lines.begin(), data.lines.begin() + static_cast<std::ptrdiff_t>(b));
    data.features.rows = e - b;
    return;
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
  const std::string name = reader.name();
  reader.release();
  if (e - b >= kParallelFrom && omp_get_max_threads() > 1) {
    read_rows_parallel(name, content.substr(0, e), b, role, data, o.delimiter, true);
    return;
  }
  const auto lines_before = static_cast<std::size_t>(std::count(content.data(), content.data() + b, '\n'));
  detail::CsvReader part(name, content.data() + b, content.data() + e, o.delimiter, lines_before, true);
  read_rows(part, role, data, true, true);
}

std::vector<std::string> default_names(std::size_t n) {
  std::vector<std::string> names(n);
  for (std::size_t i = 0; i < n; ++i) names[i] = std::to_string(i);
  return names;
}

// Reads the first record: the header, or (without one) the first data row, kept for re-reading.
std::vector<std::string> first_record(detail::CsvReader& reader, const CsvOptions& o) {
  if (!reader.next()) throw Error::at(reader.name(), 0, 0, o.header ? "empty file (no header row)" : "no data rows");
  std::vector<std::string> names;
  for (auto c : reader.cells()) names.emplace_back(o.header ? trim(c) : std::string_view{});
  return o.header ? names : default_names(names.size());
}

}  // namespace

Dataset load_csv(const std::string& path, const CsvOptions& o) {
  const detail::Source source(path);
  const std::string_view content = source.text();
  detail::CsvReader reader(source.name(), content.data(), content.data() + content.size(), o.delimiter);
  Dataset data;
  data.source = reader.name();
  data.column_names = first_record(reader, o);
  const std::size_t ncols = data.column_names.size();
  std::vector<long> role(ncols, 0);
  data.label_column = o.label.empty() ? ncols - 1 : resolve_column(o.label, data.column_names, o.header, "label", data.source);
  role[data.label_column] = kLabel;
  for (const auto& spec : o.ignore) {
    const std::size_t c = resolve_column(spec, data.column_names, o.header, "ignore", data.source);
    if (c == data.label_column)
      throw Error::parameter("ignore", quote(spec) + " is the label column of " + data.source);
    role[c] = kIgnore;
  }
  for (std::size_t c = 0; c < ncols; ++c)
    if (role[c] == 0) {
      role[c] = static_cast<long>(data.feature_columns.size());
      data.feature_columns.push_back(c);
      data.feature_names.push_back(data.column_names[c]);
    }
  if (data.feature_columns.empty())
    throw Error::at(data.source, 1, 0, "no feature columns (only the label " + quote(data.column_names[data.label_column]) +
                                           std::string(o.ignore.empty() ? "" : " and ignored columns") + ")");
  data.label_name = data.column_names[data.label_column];
  if (o.shards > 1) read_shard_rows(reader, content, o, role, data);
  else read_all_rows(reader, content, o, role, data);
  return data;
}

Dataset load_csv_sharded(const std::string& path, const CsvOptions& o, const Communicator* comm) {
  if (!distributed(comm)) return load_csv(path, o);
  if (path == "-") throw Error::parameter("path", "standard input cannot be shared by several ranks; give a file");
  CsvOptions so = o;
  so.shard = static_cast<std::size_t>(comm->rank());
  so.shards = static_cast<std::size_t>(comm->size());
  Dataset d;
  collective(comm, [&] { d = load_csv(path, so); });
  const ShardRange r = shard_range(*comm, d.size());
  if (r.total == 0) throw Error::at(d.source, 0, 0, "no data rows");
  d.row_offset = r.offset;
  d.total_rows = r.total;
  return d;
}

Dataset load_query_csv(const std::string& path, const CsvOptions& o, const Dataset& train) {
  const detail::Source source(path);
  const std::string_view content = source.text();
  detail::CsvReader reader(source.name(), content.data(), content.data() + content.size(), o.delimiter);
  Dataset data;
  data.source = reader.name();
  data.column_names = first_record(reader, o);
  const std::size_t ncols = data.column_names.size(), d = train.dims();
  std::vector<long> role(ncols, kIgnore);
  data.feature_names = train.feature_names;
  data.feature_columns.assign(d, Dataset::npos);
  if (o.header) {
    // Columns are matched by name, so a name must not stand for two features of the training file
    // (one query column would fill both), nor for two query columns that are read (a second
    // label column would give two labels per row).
    std::map<std::string, std::size_t> train_pos;
    for (std::size_t f = 0; f < d; ++f)
      if (!train_pos.emplace(train.feature_names[f], f).second)
        throw Error::at(train.source, 1, train.feature_columns[f] + 1,
                        "column name " + quote(train.feature_names[f]) + " appears twice, so the columns of " +
                            data.source + " cannot be matched to it by name");
    std::map<std::string, std::size_t> pos;
    for (std::size_t c = 0; c < ncols; ++c) {
      const std::string& name = data.column_names[c];
      const bool read = train_pos.count(name) > 0 || (train.has_labels() && name == train.label_name);
      if (!pos.emplace(name, c).second && read)
        throw Error::at(data.source, 1, c + 1, "column name " + quote(name) + " appears twice");
    }
    for (std::size_t f = 0; f < d; ++f) {
      auto it = pos.find(train.feature_names[f]);
      if (it == pos.end())
        throw Error::at(data.source, 1, 0, "no column " + quote(train.feature_names[f]) + ", a feature of " + train.source);
      role[it->second] = static_cast<long>(f);
      data.feature_columns[f] = it->second;
    }
    for (std::size_t c = 0; c < ncols; ++c) {
      if (role[c] >= 0) continue;
      const std::string& name = data.column_names[c];
      if (train.has_labels() && name == train.label_name) {
        role[c] = kLabel;
        data.label_column = c;
      } else if (std::find(train.column_names.begin(), train.column_names.end(), name) == train.column_names.end()) {
        throw Error::at(data.source, 1, c + 1, "column " + quote(name) + " is not a column of " + train.source);
      }
    }
  } else if (ncols == d) {
    for (std::size_t f = 0; f < d; ++f) {
      role[f] = static_cast<long>(f);
      data.feature_columns[f] = f;
    }
  } else if (ncols == train.column_names.size()) {
    for (std::size_t f = 0; f < d; ++f) {
      role[train.feature_columns[f]] = static_cast<long>(f);
      data.feature_columns[f] = train.feature_columns[f];
    }
    if (train.has_labels()) {
      role[train.label_column] = kLabel;
      data.label_column = train.label_column;
    }
  } else {
    throw Error::at(data.source, 1, 0, "has " + std::to_string(ncols) + " columns; expected " + std::to_string(d) +
                                           " (the features of " + train.source + ") or " +
                                           std::to_string(train.column_names.size()) + " (all of its columns)");
  }
  if (data.label_column != Dataset::npos) data.label_name = data.column_names[data.label_column];
  read_all_rows(reader, content, o, role, data);
  return data;
}

std::vector<double> numeric_targets(const Dataset& data) {
  std::vector<double> y(data.labels.size());
  for (std::size_t i = 0; i < y.size(); ++i) {
    const std::string& s = data.labels[i];
    const char* b = s.data();
    const char* e = b + s.size();
    if (e - b > 1 && *b == '+' && b[1] != '-') ++b;
    auto [p, ec] = std::from_chars(b, e, y[i]);
    if (ec != std::errc() || p != e || !std::isfinite(y[i]))
      throw Error::at(data.source, data.lines[i], data.label_column + 1,
                      "regression target " + quote(s) + " is not a finite number (column " + quote(data.label_name) +
                          "; use " + param("task") + " classify for class labels)");
  }
  return y;
}

void LabelEncoder::fit(const std::vector<std::string>& labels) {
  std::vector<std::string> u(labels);
  std::sort(u.begin(), u.end());
  u.erase(std::unique(u.begin(), u.end()), u.end());
  std::vector<double> num(u.size());
  numeric_ = !u.empty();
  for (std::size_t i = 0; i < u.size() && numeric_; ++i) {
    auto [p, ec] = std::from_chars(u[i].data(), u[i].data() + u[i].size(), num[i]);
    numeric_ = ec == std::errc() && p == u[i].data() + u[i].size() && std::isfinite(num[i]);
  }
  if (numeric_) {
    std::vector<std::size_t> order(u.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return num[a] < num[b]; });
    classes_.clear();
    for (std::size_t i : order) classes_.push_back(u[i]);
  } else {
    classes_ = std::move(u);
  }
}

int LabelEncoder::encode(const std::string& label) const {
  if (numeric_) {
    auto it = std::find(classes_.begin(), classes_.end(), label);
    return it == classes_.end() ? -1 : static_cast<int>(it - classes_.begin());
  }
  auto it = std::lower_bound(classes_.begin(), classes_.end(), label);
  return it != classes_.end() && *it == label ? static_cast<int>(it - classes_.begin()) : -1;
}

std::vector<int> LabelEncoder::encode(const std::vector<std::string>& labels) const {
  std::map<std::string, int> ids;
  for (std::size_t i = 0; i < classes_.size(); ++i) ids.emplace(classes_[i], static_cast<int>(i));
  std::vector<int> out(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    auto it = ids.find(labels[i]);
    out[i] = it == ids.end() ? -1 : it->second;
  }
  return out;
}

void save_csv(const std::string& path, const Dataset& data, char delimiter) {
  std::string out;
  auto sep = [&](bool first) {
    if (!first) out += delimiter;
  };
  for (std::size_t f = 0; f < data.dims(); ++f) {
    sep(f == 0);
    out += csv_field(data.feature_names[f], delimiter);
  }
  if (data.has_labels()) {
    sep(data.dims() == 0);
    out += csv_field(data.label_name, delimiter);
  }
  out += '\n';
  for (std::size_t i = 0; i < data.size(); ++i) {
    for (std::size_t f = 0; f < data.dims(); ++f) {
      sep(f == 0);
      char buf[32];
      const auto r = std::to_chars(buf, buf + sizeof buf, data.features(i, f));
      out.append(buf, r.ptr);
    }
    if (data.has_labels()) {
      sep(data.dims() == 0);
      out += csv_field(data.labels[i], delimiter);
    }
    out += '\n';
  }
  write_file_atomic(path, out);
}

}  // namespace knn
