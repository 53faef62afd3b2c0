// knn-cli inspect: what the tools would make of a CSV file before any model is fitted: each
// column's role and type, missing cells, distinct values, ranges, the label's classes, and the
// feature columns the current options give.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "arguments.hpp"
#include "errors.hpp"
#include "knn/evaluation.hpp"
#include "output_writer.hpp"
#include "subcommands.hpp"

namespace knn::cli {

namespace {

constexpr std::size_t kShown = 5;  // categories listed per column

struct ColumnInfo {
  std::string name, role, type;
  std::size_t missing = 0, distinct = 0;
  bool has_range = false;
  double min = 0.0, max = 0.0;
  std::vector<std::pair<std::string, std::size_t>> top;  // most frequent categories first
  bool identifier = false;  // every value differs
};

std::vector<std::pair<std::string, std::size_t>> by_count(const std::map<std::string, std::size_t>& counts) {
  std::vector<std::pair<std::string, std::size_t>> v(counts.begin(), counts.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

ColumnInfo feature_info(const Dataset& d, std::size_t f) {
  ColumnInfo c;
  c.name = d.feature_names[f];
  c.role = "feature";
  const bool cat = d.feature_types[f] == ColumnType::categorical;
  c.type = to_string(d.feature_types[f]);
  std::set<float> values;
  std::map<std::string, std::size_t> counts;
  for (std::size_t i = 0; i < d.size(); ++i) {
    const float v = d.features(i, f);
    if (std::isnan(v)) {
      ++c.missing;
      continue;
    }
    if (cat) {
      ++counts[d.levels[f][static_cast<std::size_t>(v)]];
      continue;
    }
    values.insert(v);
    if (!c.has_range || v < c.min) c.min = v;
    if (!c.has_range || v > c.max) c.max = v;
    c.has_range = true;
  }
  c.distinct = cat ? counts.size() : values.size();
  if (cat) {
    c.top = by_count(counts);
    c.identifier = c.distinct > 1 && c.distinct == d.size() - c.missing;
  }
  return c;
}

ColumnInfo label_info(const Dataset& d, std::map<std::string, std::size_t>& classes) {
  ColumnInfo c;
  c.name = d.label_name;
  c.role = "label";
  c.type = "label";
  c.missing = d.missing_labels.size();
  for (std::size_t i = 0; i < d.labels.size(); ++i)
    if (!d.labels[i].empty()) ++classes[d.labels[i]];
  c.distinct = classes.size();
  c.top = by_count(classes);
  return c;
}

std::string number(double v) {
  std::ostringstream s;
  s << std::setprecision(7) << v;
  return s.str();
}

std::string values_text(const ColumnInfo& c) {
  if (c.has_range) return number(c.min) + " .. " + number(c.max);
  std::string out;
  for (std::size_t i = 0; i < c.top.size() && i < kShown; ++i)
    out += (i ? ", " : "") + c.top[i].first + " (" + std::to_string(c.top[i].second) + ")";
  if (c.top.size() > kShown) out += ", ...";
  if (c.identifier) out += "  [all different: an identifier? --ignore it]";
  return out;
}

}  // namespace

std::string inspect(const cxxopts::ParseResult& r, const Settings& s, std::ostream&) {
  if (r.count("file") && r.count("train")) throw app::option_error("train", "names a second file: knn-cli inspect describes one");
  if (!r.count("file") && !r.count("train")) throw app::option_error("file", "is required by knn-cli inspect (knn-cli inspect FILE)");
  CsvOptions o = s.csv;
  o.lenient = true;
  o.query_file_follows = false;
  const Dataset d = load_csv(app::option_text(r, r.count("file") ? "file" : "train"), o);
  s.notes.guesses(d);  // the table shows the rest

  std::vector<ColumnInfo> cols(d.column_names.size());
  for (std::size_t c = 0; c < cols.size(); ++c) {
    cols[c].name = d.column_names[c];
    cols[c].role = "left out";
    cols[c].type = "-";
  }
  for (std::size_t c : d.unnamed_columns) cols[c].role = app::row_names_column(d, c) ? "row names" : "no name";
  for (std::size_t f = 0; f < d.dims(); ++f) cols[d.feature_columns[f]] = feature_info(d, f);
  std::map<std::string, std::size_t> classes;
  cols[d.label_column] = label_info(d, classes);
  if (d.has_ids()) {
    cols[d.id_column].role = "id";
    cols[d.id_column].distinct = std::set<std::string>(d.ids.begin(), d.ids.end()).size();
  }
  std::string task_note;
  try {
    check_class_labels(d, true);
  } catch (const Error& e) {
    task_note = "a regression target? (evaluate asks for --task)";
  }
  std::size_t numeric = 0, one_hot = 0, width = 0, missing = 0, missing_cols = 0;
  for (std::size_t f = 0; f < d.dims(); ++f) {
    const ColumnInfo& c = cols[d.feature_columns[f]];
    if (d.feature_types[f] == ColumnType::numeric) ++numeric, ++width;
    else ++one_hot, width += c.distinct;
    missing += c.missing;
    missing_cols += c.missing > 0;
  }

  if (s.format == "json") {
    app::Json doc;
    doc["file"] = d.source;
    doc["rows"] = d.size();
    app::Json& jc = doc["columns"] = app::Json::array();
    for (const ColumnInfo& c : cols) {
      app::Json j;
      j["name"] = c.name;
      j["role"] = c.role;
      j["type"] = c.type;
      j["missing"] = c.missing;
      j["distinct"] = c.distinct;
      if (c.has_range) j["min"] = c.min, j["max"] = c.max;
      if (!c.top.empty()) {
        app::Json& counts = j["counts"] = app::Json::object();
        for (const auto& [text, n] : c.top) counts[text] = n;
      }
      if (c.identifier) j["identifier"] = true;
      jc.push_back(std::move(j));
    }
    doc["features"] = {{"columns", d.dims()}, {"numeric", numeric}, {"categorical", one_hot}, {"encoded", width}};
    doc["missing_cells"] = missing;
    if (!task_note.empty()) doc["label_looks_numeric"] = true;
    return app::json_text(doc);
  }
  std::ostringstream out;
  out << "file      " << d.source << " (" << d.size() << " rows, " << d.column_names.size() << " columns)\n";
  out << "label     " << d.label_name << ": " << classes.size() << " distinct values";
  if (!d.missing_labels.empty()) out << ", " << d.missing_labels.size() << " missing";
  if (!task_note.empty()) out << "; " << task_note;
  out << "\nfeatures  " << d.dims() << " columns (" << numeric << " numeric, " << one_hot << " categorical), " << width
      << " once one-hot encoded\n";
  if (missing)
    out << "missing   " << missing << (missing == 1 ? " cell in " : " cells in ") << missing_cols
        << (missing_cols == 1 ? " column" : " columns") << " (fill them with --impute, or --drop-missing)\n";
  // A column's name as shown: "(N)", counted from 1, for one without a name.
  const auto shown = [&](std::size_t i) { return cols[i].name.empty() ? "(" + std::to_string(i + 1) + ")" : cols[i].name; };
  std::size_t w = 7;  // "column" and a space
  for (std::size_t i = 0; i < cols.size(); ++i) w = std::max(w, shown(i).size() + 2);
  out << "\n" << std::left << std::setw(static_cast<int>(w)) << "column" << std::setw(13) << "role" << std::setw(13) << "type"
      << std::setw(9) << "missing" << std::setw(10) << "distinct" << "values\n";
  for (std::size_t i = 0; i < cols.size(); ++i) {
    const ColumnInfo& c = cols[i];
    out << std::left << std::setw(static_cast<int>(w)) << shown(i) << std::setw(13) << c.role << std::setw(13) << c.type;
    if (c.role == "left out" || c.role == "row names" || c.role == "no name") {
      out << "\n";
      continue;
    }
    out << std::setw(9) << c.missing << std::setw(10) << c.distinct << values_text(c) << "\n";
  }
  return out.str();
}

}  // namespace knn::cli
