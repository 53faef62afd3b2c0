// Loading training and query files: which column is what (features, label, identifier, left
// out), the feature columns' types, and the rows (io/rows_read.cpp).
#include "knn/dataset.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "distributed/gather.hpp"
#include "io/cell_value.hpp"
#include "io/column_names.hpp"
#include "io/csv_reader.hpp"
#include "io/level_dictionary.hpp"
#include "io/rows_read.hpp"
#include "io/separator_guess.hpp"
#include "io/source.hpp"
#include "knn/error.hpp"

namespace knn {

const std::vector<std::string>& default_na_values() {
  static const std::vector<std::string> tokens{"", "NA", "N/A", "NaN", "nan", "?", "null", "NULL"};
  return tokens;
}

const char* to_string(ColumnType t) { return t == ColumnType::categorical ? "categorical" : "numeric"; }

bool Dataset::has_missing() const {
  // Every cell on every core: a query file of 10^7 cells is read in a few milliseconds.
  const float* v = features.values.data();
  const auto n = static_cast<std::ptrdiff_t>(features.values.size());
  bool any = false;
#pragma omp parallel for reduction(|| : any) schedule(static) if (n > (std::ptrdiff_t{1} << 16))
  for (std::ptrdiff_t i = 0; i < n; ++i) any = any || std::isnan(v[i]);
  return any;
}

namespace detail {

namespace {

std::vector<std::string> default_names(std::size_t n) {
  std::vector<std::string> names(n);
  for (std::size_t i = 0; i < n; ++i) names[i] = std::to_string(i);
  return names;
}

// What --skip-lines may do about a title line read as the header (or as the first data row).
std::string skip_lines_advice(const CsvOptions& o) {
  if (o.skip_lines == 0) return "a title line above the " + std::string(o.header ? "header" : "data") + "? (" + param("skip_lines") +
                                " passes over lines at the top of each file read)";
  return param("skip_lines") + " " + std::to_string(o.skip_lines) + " passes over lines of every file read, and may have passed over " +
         (o.header ? "this one's header" : "too few of this one's lines");
}

// What a training and a query file start with: the lines to skip passed over, NUL bytes
// refused, and the first record (the header, or without one the first data row) read into the
// data set's column names and first line. A second record wider than the first is refused here,
// with the question whether the first was a title ("Student survey, 1992" above a header of 13
// names): read later, row by row, it would say only that the record has too many fields.
Dataset open_dataset(Source& source, const CsvOptions& o) {
  if (o.decimal != '.' && o.decimal != ',')
    throw Error::parameter("decimal", quote(std::string(1, o.decimal)) + " is not a decimal mark: give '.' or ','");
  if (o.decimal == o.delimiter)
    throw Error::parameter("decimal", "',' is the delimiter too: give the files' field separator with " + param("delimiter") +
                                          " (';' where numbers have decimal commas, as spreadsheets write them)");
  source.skip_lines(o.skip_lines);
  refuse_nul_bytes(source, o.delimiter);
  Dataset d;
  d.source = printable_name(source.name());  // embedded in messages, so one printable line
  d.options = o;
  CsvReader reader(d.source, source.data(), source.data() + source.size(), o.delimiter, source.lines_before(0));
  if (!reader.next()) throw Error::at(reader.name(), 0, 0, o.header ? "empty file (no header row)" : "no data rows");
  d.first_line = reader.line();
  std::vector<std::string> names;
  for (auto c : reader.cells()) names.emplace_back(o.header ? trim(c) : std::string_view{});
  d.column_names = o.header ? names : default_names(names.size());
  if (reader.next() && reader.cells().size() > names.size()) {
    const std::string separator = names.size() == 1 ? separator_advice(source.text(), o.delimiter) : "";
    throw ragged_record(reader, names.size(),
                        "; line " + std::to_string(d.first_line) + (o.header ? " (the header)" : " (the first row)") + " has " +
                            std::to_string(names.size()) + ": " + (separator.empty() ? skip_lines_advice(o) : separator));
  }
  return d;
}

// Where a file lacks a column by name, or has no feature: a header row of numbers and empty
// names only (the title line of a file such as scikit-learn's copy of the Boston housing data),
// or of one name, was most likely a title read as the header; a first line of one field that
// splits as the next lines do at another separator, a file read with the wrong one.
std::string title_hint(const Dataset& d, const Source& source) {
  const auto& names = d.column_names;
  const std::string separator = names.size() == 1 ? separator_advice(source.text(), d.options.delimiter) : "";
  if (!d.options.header) return separator.empty() ? "" : "; " + separator;
  if (!separator.empty()) return "; its header row holds one name: " + separator;
  const bool numbers = names_are_numbers(names, d.options.decimal);
  // Past skipped lines, a data row read as the header: numbers among its names.
  const bool some_numbers = d.options.skip_lines > 0 && std::any_of(names.begin(), names.end(), [&](const std::string& n) {
                              return !n.empty() && cell_is_number(n, d.options.decimal);
                            });
  if (!numbers && names.size() != 1 && !some_numbers) return "";
  return std::string("; its header row holds ") + (numbers ? "numbers only" : names.size() == 1 ? "one name" : "numbers among its names") +
         ": " + skip_lines_advice(d.options);
}

void clear_rows(Dataset& d) {
  d.features.values.clear();
  d.features.rows = 0;
  d.labels.clear();
  d.lines.clear();
  d.ids.clear();
  d.missing_labels.clear();
  d.file_rows.clear();
  d.dropped_rows = 0;
}

// Which role `c` has, for messages about a column given to a second option.
std::string taken_as(long role) {
  if (role == kLabel) return "the label column";
  if (role == kId) return "the identifier column";
  return "a column left out of the features";
}

// The features named by `specs` (a categorical or numeric list).
std::set<std::size_t> named_features(const std::vector<std::string>& specs, const std::string& parameter,
                                     const Dataset& data, const std::vector<long>& role) {
  std::set<std::size_t> out;
  for (const auto& spec : specs) {
    const std::size_t c = resolve_column(spec, data.column_names, data.header_line(), parameter, data.source);
    if (role[c] < 0)
      throw Error::parameter(parameter, quote(spec) + " is " + taken_as(role[c]) + " of " + data.source);
    out.insert(static_cast<std::size_t>(role[c]));
  }
  return out;
}

}  // namespace

// Every part of loading a training file but the checks that need all of its rows; `text`: per
// feature, read as categories whatever the cells hold (a shard told by the other ranks).
Dataset load_training(const std::string& path, const CsvOptions& o, const std::vector<char>* text, RowsFound* found_out) {
  Source source(path);
  Dataset data = open_dataset(source, o);
  const std::size_t ncols = data.column_names.size();
  std::vector<long> role(ncols, 0);
  if (o.header)
    for (std::size_t c = 0; c < ncols; ++c)
      if (data.column_names[c].empty()) role[c] = kIgnore;
  data.label_column = o.label.empty() ? ncols - 1
                                      : resolve_column(o.label, data.column_names, data.header_line(), "label", data.source, title_hint(data, source));
  role[data.label_column] = kLabel;
  if (!o.id.empty()) {
    if (const auto c = find_column(o.id, data.column_names, data.header_line(), "id", data.source)) {
      if (*c == data.label_column) throw Error::parameter("id", quote(o.id) + " is the label column of " + data.source);
      role[*c] = kId;
      data.id_column = *c;
      data.id_name = data.column_names[*c];
    }
  }
  for (const auto& spec : o.ignore) {
    const auto c = find_column(spec, data.column_names, data.header_line(), "ignore", data.source);
    if (!c) {
      if (o.query_file_follows) {
        data.ignore_elsewhere.push_back(spec);
        continue;
      }
      resolve_column(spec, data.column_names, data.header_line(), "ignore", data.source);  // throws, naming the columns
    }
    if (*c == data.label_column) throw Error::parameter("ignore", quote(spec) + " is the label column of " + data.source);
    if (role[*c] == kId) throw Error::parameter("ignore", quote(spec) + " is the identifier column of " + data.source);
    role[*c] = kIgnore;
  }
  for (std::size_t c = 0; c < ncols; ++c) {
    if (role[c] == kIgnore && o.header && data.column_names[c].empty()) data.unnamed_columns.push_back(c);
    if (role[c] != 0) continue;
    role[c] = static_cast<long>(data.feature_columns.size());
    data.feature_columns.push_back(c);
    data.feature_names.push_back(data.column_names[c]);
  }
  if (data.feature_columns.empty())
    throw Error::at(data.source, data.first_line, 0, "no feature columns (only the label " + quote(data.column_names[data.label_column]) +
                                           std::string(ncols > 1 ? " and columns left out" : "") + ")" + title_hint(data, source));
  data.label_name = data.column_names[data.label_column];
  const std::size_t d = data.feature_columns.size();
  ReadPlan plan;
  plan.role = role;
  plan.na = MissingTokens(o.na_values);
  plan.decimal = o.decimal;
  plan.delimiter = o.delimiter;
  plan.drop_missing = o.drop_missing && !o.lenient;
  plan.drop_features = o.drop_missing_features;
  plan.training = !o.lenient;
  plan.read_as.assign(d, ReadAs::infer);
  const auto categorical = named_features(o.categorical, "categorical", data, role);
  for (std::size_t f : named_features(o.numeric, "numeric", data, role)) {
    if (categorical.count(f))
      throw Error::parameter("numeric", quote(data.feature_names[f]) + " is also given to " + param("categorical"));
    plan.read_as[f] = ReadAs::number;
  }
  for (std::size_t f : categorical) plan.read_as[f] = ReadAs::text;
  if (text)
    for (std::size_t f = 0; f < d; ++f)
      if ((*text)[f]) plan.read_as[f] = ReadAs::text;
  RowsFound found = read_data_rows(source, o, plan, data);
  if (found.any_text()) {
    // A text cell makes its column categorical: the rows are read again with those columns as text.
    for (std::size_t f = 0; f < d; ++f)
      if (found.text[f]) plan.read_as[f] = ReadAs::text;
    clear_rows(data);
    found = read_data_rows(source, o, plan, data);
  }
  data.feature_types.assign(d, ColumnType::numeric);
  for (std::size_t f = 0; f < d; ++f)
    if (plan.read_as[f] == ReadAs::text) data.feature_types[f] = ColumnType::categorical;
  if (found_out) *found_out = found;
  return data;
}

// A categorical column whose every value differs (a name, a key) carries nothing to a neighbour
// and makes every row far from every other: refused unless given to `categorical`. Only from 20
// rows on, where all-distinct values are no accident of a small file.
void check_identifiers(const Dataset& data, const CsvOptions& o, const std::vector<std::vector<long long>>& counts) {
  constexpr long long kFrom = 20;
  std::vector<std::size_t> found;  // file columns, every one of them named at once
  std::size_t distinct_first = 0;
  for (std::size_t f = 0; f < data.dims(); ++f) {
    if (data.feature_types[f] != ColumnType::categorical) continue;
    const std::size_t c = data.feature_columns[f];
    const bool forced = std::any_of(o.categorical.begin(), o.categorical.end(), [&](const std::string& spec) {
      return find_column(spec, data.column_names, data.header_line(), "categorical", data.source) == c;
    });
    if (forced) continue;
    long long present = 0, distinct = 0, most = 0;
    for (long long n : counts[f]) present += n, distinct += n > 0, most = std::max(most, n);
    if (present < kFrom || most != 1) continue;
    if (found.empty()) distinct_first = static_cast<std::size_t>(distinct);
    found.push_back(c);
  }
  if (found.empty()) return;
  std::string names, list;
  for (std::size_t c : found) {
    names += (names.empty() ? "" : ", ") + quote(data.column_names[c]);
    list += (list.empty() ? "" : ",") + data.column_names[c];
  }
  const bool one = found.size() == 1;
  throw Error::at(data.source, data.first_line, found.front() + 1,
                  std::string(one ? "column " : "columns ") + names + (one ? " looks like an identifier: its " : " look like identifiers: the first one's ") +
                      std::to_string(distinct_first) + " values are all different; leave " + (one ? "it" : "them") + " out with " +
                      param("ignore") + " " + quote(list) + " (or keep " + (one ? "it" : "them") + " as categories with " +
                      param("categorical") + ")");
}

std::vector<std::vector<long long>> level_counts(const Dataset& data) {
  std::vector<std::vector<long long>> counts(data.dims());
  for (std::size_t f = 0; f < data.dims(); ++f) {
    if (data.feature_types[f] != ColumnType::categorical) continue;
    counts[f].assign(data.levels[f].size(), 0);
    for (std::size_t i = 0; i < data.size(); ++i) {
      const float v = data.features(i, f);
      if (!std::isnan(v)) ++counts[f][static_cast<std::size_t>(v)];
    }
  }
  return counts;
}

}  // namespace detail

bool cell_is_number(std::string_view cell, char decimal) {
  static const detail::MissingTokens none({});
  float value = 0.0f;
  return detail::classify_cell(cell, none, decimal, value) == detail::CellKind::number;
}

bool decimal_comma_number(std::string_view cell) { return cell.find(',') != std::string_view::npos && cell_is_number(cell, ','); }

bool names_are_numbers(const std::vector<std::string>& names, char decimal) {
  std::size_t named = 0, first = 0;  // names that are not empty; the position the first one would be
  bool positions = true;
  for (const auto& name : names) {
    if (name.empty()) continue;
    if (!cell_is_number(name, decimal)) return false;
    if (named == 0) first = name == "1" ? 1 : 0;
    positions = positions && name == std::to_string(first + named);
    ++named;
  }
  return named > 0 && !(positions && named > 1);
}

Dataset load_csv(const std::string& path, const CsvOptions& o) {
  Dataset data = detail::load_training(path, o, nullptr, nullptr);
  if (o.shards <= 1 && !o.lenient) detail::check_identifiers(data, o, detail::level_counts(data));
  return data;
}

Dataset load_csv_sharded(const std::string& path, const CsvOptions& o, const Communicator* comm) {
  if (!distributed(comm)) return load_csv(path, o);
  if (path == "-") throw Error::parameter("path", "standard input cannot be shared by several ranks; give a file");
  CsvOptions so = o;
  so.shard = static_cast<std::size_t>(comm->rank());
  so.shards = static_cast<std::size_t>(comm->size());
  Dataset d;
  detail::RowsFound found;
  collective(comm, [&] { d = detail::load_training(path, so, nullptr, &found); });
  // Column types are the whole file's: a column with text on any rank is categorical on all.
  std::vector<int> mine(d.dims());
  for (std::size_t f = 0; f < d.dims(); ++f) mine[f] = d.feature_types[f] == ColumnType::categorical;
  const std::vector<int> all = detail::gather_all(*comm, mine);
  std::vector<char> text(d.dims(), 0);
  for (std::size_t i = 0; i < all.size(); ++i) text[i % d.dims()] = static_cast<char>(text[i % d.dims()] | all[i]);
  // Every rank reads again where any rank's types differ from the whole file's (a collective step).
  bool differs = false;
  for (std::size_t i = 0; i < all.size(); ++i) differs = differs || (all[i] != 0) != (text[i % d.dims()] != 0);
  if (differs) collective(comm, [&] { d = detail::load_training(path, so, &text, &found); });
  // One sorted list of levels per categorical column, so a code means one text on every rank.
  for (std::size_t f = 0; f < d.dims(); ++f) {
    if (d.feature_types[f] != ColumnType::categorical) continue;
    std::vector<std::string> union_of = detail::all_labels(*comm, d.levels[f]);
    detail::recode_column(d.features, f, d.levels[f], union_of);
    d.levels[f] = std::move(union_of);
  }
  const ShardRange r = shard_range(*comm, d.size());
  if (r.total == 0) throw Error::at(d.source, 0, 0, "no data rows");
  d.row_offset = r.offset;
  d.total_rows = r.total;
  if (found.shard_relative && so.drop_missing) {
    const auto records = detail::gather_all(*comm, std::vector<unsigned long long>{found.records});
    const auto dropped = detail::gather_all(*comm, std::vector<unsigned long long>{d.dropped_rows});
    std::size_t before = 0;
    for (int k = 0; k < comm->rank(); ++k) before += records[static_cast<std::size_t>(k)];
    for (std::size_t& fr : d.file_rows) fr += before;
    d.dropped_rows = 0;
    for (auto n : dropped) d.dropped_rows += n;
  }
  auto counts = detail::level_counts(d);
  for (auto& c : counts) {
    if (c.empty()) continue;
    const auto every = detail::gather_all(*comm, c);
    std::fill(c.begin(), c.end(), 0);
    for (std::size_t i = 0; i < every.size(); ++i) c[i % c.size()] += every[i];
  }
  collective(comm, [&] { detail::check_identifiers(d, o, counts); });
  return d;
}

Dataset load_query_csv(const std::string& path, const CsvOptions& o, const Dataset& train) {
  using namespace detail;
  Source source(path);
  Dataset data = open_dataset(source, o);
  const std::size_t ncols = data.column_names.size(), d = train.dims();
  // An identifier column that the training file holds as a feature or as the label cannot be an
  // identifier of the query rows: the model searches by it (an identifier of the training file
  // is given when the model is fitted). A column the training file left out (row names) can.
  const auto read_as_data = [&](std::size_t c) {
    return c == train.label_column || std::find(train.feature_columns.begin(), train.feature_columns.end(), c) != train.feature_columns.end();
  };
  if (const auto c = o.id.empty() || train.has_ids() ? std::nullopt : find_column(o.id, train.column_names, train.header_line(), "id", train.source);
      c && read_as_data(*c))
    throw Error::parameter("id", quote(o.id) + " names a column of " + train.source + ", which was read without " + param("id") +
                                     " (an identifier column of the training file is given when the model is fitted)");
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
        throw Error::at(train.source, train.first_line, train.feature_columns[f] + 1,
                        "column name " + quote(train.feature_names[f]) + " appears twice, so the columns of " +
                            data.source + " cannot be matched to it by name");
    // A column that is read must not have its name twice: the second is named.
    const NameIndex query_names(data.column_names), train_names(train.column_names);
    const auto once = [&](std::size_t c) {
      if (const auto other = query_names.next_same(c))
        throw Error::at(data.source, data.first_line, *other + 1, "column name " + quote(data.column_names[c]) + " appears twice");
    };
    for (std::size_t f = 0; f < d; ++f) {
      const auto c = query_names.match(train.feature_names[f]);
      if (!c)
        throw Error::at(data.source, data.first_line, 0, "no column " + quote(train.feature_names[f]) + ", a feature of " + train.source +
                                               columns_hint(train.feature_names[f], data.column_names) + title_hint(data, source));
      once(*c);
      role[*c] = static_cast<long>(f);
      data.feature_columns[f] = *c;
    }
    if (train.has_labels())
      if (const auto c = query_names.match(train.label_name); c && role[*c] == kIgnore) {
        once(*c);
        role[*c] = kLabel;
        data.label_column = *c;
      }
    if (!o.id.empty())
      if (const auto c = find_column(o.id, data.column_names, data.header_line(), "id", data.source); c && role[*c] == kIgnore) {
        role[*c] = kId;
        data.id_column = *c;
        data.id_name = data.column_names[*c];
      }
    std::vector<char> named(ncols, 0);
    for (const auto& spec : o.ignore)
      if (const auto c = find_column(spec, data.column_names, data.header_line(), "ignore", data.source)) named[*c] = 1;
    for (const auto& spec : train.ignore_elsewhere)
      if (!find_column(spec, data.column_names, data.header_line(), "ignore", data.source))
        throw Error::parameter("ignore", "no column named " + quote(spec) + " in " + train.source + " or " + data.source +
                                             columns_hint(spec, data.column_names));
    for (std::size_t c = 0; c < ncols; ++c) {
      if (role[c] != kIgnore || named[c]) continue;
      const std::string& name = data.column_names[c];
      if (name.empty()) {
        data.unnamed_columns.push_back(c);
        continue;
      }
      if (!train_names.match(name))
        throw Error::at(data.source, data.first_line, c + 1,
                        "column " + quote(name) + " is not a column of " + train.source + " (leave it out with " +
                            param("ignore") + ", or carry it to the output with " + param("id") + ")");
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
    if (train.has_ids()) {
      role[train.id_column] = kId;
      data.id_column = train.id_column;
      data.id_name = train.id_name;
    }
  } else {
    throw Error::at(data.source, data.first_line, 0, "has " + std::to_string(ncols) + " columns; expected " + std::to_string(d) +
                                           " (the features of " + train.source + ") or " +
                                           std::to_string(train.column_names.size()) + " (all of its columns)");
  }
  if (data.label_column != Dataset::npos) data.label_name = data.column_names[data.label_column];
  ReadPlan plan;
  plan.role = role;
  plan.na = MissingTokens(o.na_values);
  plan.decimal = o.decimal;
  plan.delimiter = o.delimiter;
  plan.training = false;
  plan.numbers_from = train.source;
  plan.read_as.assign(d, ReadAs::number);
  for (std::size_t f = 0; f < d; ++f)
    if (train.feature_types.size() == d && train.feature_types[f] == ColumnType::categorical) plan.read_as[f] = ReadAs::text;
  read_data_rows(source, o, plan, data);
  data.feature_types = train.feature_types.size() == d ? train.feature_types : std::vector<ColumnType>(d, ColumnType::numeric);
  return data;
}

}  // namespace knn
