#include "knn/preprocess.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "io/text_format.hpp"

namespace knn {

Impute parse_impute(const std::string& text) {
  if (text == "none") return Impute::none;
  if (text == "mean") return Impute::mean;
  if (text == "median") return Impute::median;
  if (text == "most_frequent") return Impute::most_frequent;
  throw Error::parameter("impute", "unknown strategy " + quote(text) + " (expected none, mean, median or most_frequent)");
}

const char* to_string(Impute i) {
  switch (i) {
    case Impute::none: return "none";
    case Impute::mean: return "mean";
    case Impute::median: return "median";
    case Impute::most_frequent: return "most_frequent";
  }
  return "?";
}

Error MissingValue::at(const std::string& file, std::size_t line, std::size_t column) const {
  return Error::at(file, line, column, detail());
}

namespace {

const std::string& impute_hint() {
  static const std::string hint = "; fill them with " + param("impute") + " mean, median or most_frequent";
  return hint;
}

// "(N cells in M columns<where> are missing)", in the singular for one cell.
std::string missing_count(std::size_t cells, std::size_t columns, const char* where) {
  return " (" + std::to_string(cells) + (cells == 1 ? " cell in " : " cells in ") + std::to_string(columns) +
         (columns == 1 ? " column" : " columns") + where + (cells == 1 ? " is missing)" : " are missing)");
}

// Numeric imputation: the mean in double in row order, the median (the mean of the two middle
// values for an even count) or the most frequent value (ties: the smallest), as float.
float numeric_fill(std::vector<float> v, Impute how) {
  if (how == Impute::mean) {
    double sum = 0.0;
    for (float x : v) sum += x;
    return static_cast<float>(sum / static_cast<double>(v.size()));
  }
  std::sort(v.begin(), v.end());
  if (how == Impute::median) {
    const std::size_t n = v.size();
    if (n % 2) return v[n / 2];
    return static_cast<float>((static_cast<double>(v[n / 2 - 1]) + static_cast<double>(v[n / 2])) / 2.0);
  }
  float best = v[0];
  std::size_t best_n = 0;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j < v.size() && v[j] == v[i]) ++j;
    if (j - i > best_n) best = v[i], best_n = j - i;
    i = j;
  }
  return best;
}

std::vector<std::size_t> all_rows(std::size_t n) {
  std::vector<std::size_t> r(n);
  std::iota(r.begin(), r.end(), std::size_t{0});
  return r;
}

}  // namespace

Preprocessor Preprocessor::numeric(std::size_t features) {
  Preprocessor p(Impute::none);
  p.features_.resize(features);
  for (std::size_t f = 0; f < features; ++f) p.features_[f].name = std::to_string(f);
  return p;
}

Preprocessor Preprocessor::from_parts(Impute impute, std::vector<FeaturePrep> features) {
  Preprocessor p(impute);
  p.features_ = std::move(features);
  return p;
}

void Preprocessor::fit(const Dataset& data, const std::vector<std::size_t>* rows) { fit(data, rows, Gather{}); }

void Preprocessor::fit(const Dataset& data, const std::vector<std::size_t>* rows_given, const Gather& gather) {
  const auto floats = gather.floats ? gather.floats : [](std::vector<float> v) { return v; };
  const auto counts = gather.counts ? gather.counts : [](std::vector<long long> v) { return v; };
  const auto collective = gather.collective ? gather.collective : [](const std::function<void()>& f) { f(); };
  const std::vector<std::size_t> every = rows_given ? std::vector<std::size_t>{} : all_rows(data.size());
  const std::vector<std::size_t>& rows = rows_given ? *rows_given : every;
  const std::size_t d = data.dims();
  const auto type_of = [&](std::size_t f) {
    return f < data.feature_types.size() ? data.feature_types[f] : ColumnType::numeric;
  };

  // Missing cells: counted over every rank; the first (in row order) named by the rank holding it.
  // All cores: each thread counts its share of the rows and notes its first missing cell; the
  // first of all is the one at the earliest position in `rows`.
  std::vector<long long> missing(d, 0);
  std::size_t first_at = rows.size(), first_feature = 0;
#pragma omp parallel
  {
    std::vector<long long> mine(d, 0);
    std::size_t my_first = rows.size(), my_feature = 0;
#pragma omp for schedule(static) nowait
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const float* row = data.features.row(rows[i]);
      for (std::size_t f = 0; f < d; ++f)
        if (std::isnan(row[f])) {
          if (my_first == rows.size()) my_first = i, my_feature = f;
          ++mine[f];
        }
    }
#pragma omp critical(knn_preprocess_missing)
    {
      for (std::size_t f = 0; f < d; ++f) missing[f] += mine[f];
      if (my_first < first_at) first_at = my_first, first_feature = my_feature;
    }
  }
  const std::size_t first_row = first_at < rows.size() ? rows[first_at] : data.size();
  {
    const auto all = counts(missing);
    std::fill(missing.begin(), missing.end(), 0);
    for (std::size_t i = 0; i < all.size(); ++i) missing[i % d] += all[i];
  }
  const long long cells = std::accumulate(missing.begin(), missing.end(), 0LL);
  const auto columns = std::count_if(missing.begin(), missing.end(), [](long long n) { return n > 0; });
  if (impute_ == Impute::none && cells > 0)
    collective([&] {
      if (first_row == data.size()) return;
      const std::size_t c = data.feature_columns.at(first_feature);
      throw Error::at(data.source, data.lines.at(first_row), c + 1,
                      "missing value in column " + quote(data.column_names.at(c)) + missing_count(cells, columns, " of the training rows") +
                          impute_hint() +
                          ", or drop their rows with " + param("drop_missing"));
    });

  std::vector<FeaturePrep> out(d);
  for (std::size_t f = 0; f < d; ++f) {
    FeaturePrep& fp = out[f];
    fp.name = data.feature_names[f];
    fp.type = type_of(f);
    const auto nothing_to_impute = [&] {
      const std::size_t c = data.feature_columns.at(f);
      return Error::at(data.source, data.first_line, c + 1,
                       "column " + quote(data.column_names.at(c)) + " has no value in the training rows to impute from; leave it out with " +
                           param("ignore"));
    };
    if (fp.type == ColumnType::numeric) {
      if (impute_ == Impute::none) continue;
      std::vector<float> values;
      for (std::size_t r : rows)
        if (!std::isnan(data.features(r, f))) values.push_back(data.features(r, f));
      values = floats(std::move(values));
      if (values.empty()) throw nothing_to_impute();
      fp.fill = numeric_fill(std::move(values), impute_);
      fp.has_fill = true;
      continue;
    }
    const std::vector<std::string>& levels = data.levels.at(f);
    std::vector<long long> n(levels.size(), 0);
    for (std::size_t r : rows) {
      const float v = data.features(r, f);
      if (!std::isnan(v)) ++n[static_cast<std::size_t>(v)];
    }
    if (!n.empty()) {
      const auto all = counts(n);
      std::fill(n.begin(), n.end(), 0);
      for (std::size_t i = 0; i < all.size(); ++i) n[i % levels.size()] += all[i];
    }
    long long best = 0;
    for (std::size_t l = 0; l < levels.size(); ++l) {
      if (n[l] == 0) continue;
      if (impute_ != Impute::none && n[l] > best) {
        best = n[l];
        fp.fill_category = static_cast<long>(fp.categories.size());
      }
      fp.categories.push_back(levels[l]);
    }
    if (impute_ != Impute::none && fp.categories.empty()) throw nothing_to_impute();
  }
  features_ = std::move(out);
}

bool Preprocessor::plain() const {
  return std::all_of(features_.begin(), features_.end(), [](const FeaturePrep& f) { return f.type == ColumnType::numeric; });
}

std::size_t Preprocessor::width() const {
  std::size_t w = 0;
  for (const auto& f : features_) w += f.type == ColumnType::numeric ? 1 : f.categories.size();
  return w;
}

std::vector<bool> Preprocessor::one_hot_columns() const {
  std::vector<bool> out;
  for (const auto& f : features_) {
    if (f.type == ColumnType::numeric) out.push_back(false);
    else out.insert(out.end(), f.categories.size(), true);
  }
  return out;
}

std::size_t Preprocessor::feature_of(std::size_t column) const {
  std::size_t at = 0;
  for (std::size_t f = 0; f < features_.size(); ++f) {
    at += features_[f].type == ColumnType::numeric ? 1 : features_[f].categories.size();
    if (column < at) return f;
  }
  return features_.size();
}

std::vector<std::string> Preprocessor::column_names() const {
  std::vector<std::string> out;
  for (const auto& f : features_) {
    if (f.type == ColumnType::numeric) out.push_back(f.name);
    else
      for (const auto& c : f.categories) out.push_back(f.name + "=" + c);
  }
  return out;
}

Matrix Preprocessor::transform(const Matrix& raw, const std::vector<std::vector<std::string>>& levels, PrepReport* report) const {
  if (!fitted()) throw Error("the preprocessing is not fitted");
  const std::size_t d = features_.size();
  if (raw.cols != d)
    throw Error("rows have " + std::to_string(raw.cols) + " features, the preprocessing was fitted on " + std::to_string(d));
  // Each categorical feature's levels (the rows' own texts) mapped to the fitted categories.
  std::vector<std::vector<long>> slot(d);
  std::vector<std::size_t> at(d);
  std::size_t width = 0;
  for (std::size_t f = 0; f < d; ++f) {
    at[f] = width;
    const FeaturePrep& fp = features_[f];
    if (fp.type == ColumnType::numeric) {
      ++width;
      continue;
    }
    width += fp.categories.size();
    const auto& lv = levels.at(f);
    slot[f].resize(lv.size());
    for (std::size_t l = 0; l < lv.size(); ++l) {
      const auto it = std::lower_bound(fp.categories.begin(), fp.categories.end(), lv[l]);
      slot[f][l] = it != fp.categories.end() && *it == lv[l] ? static_cast<long>(it - fp.categories.begin()) : -1;
    }
  }
  Matrix out(raw.rows, width);
  PrepReport seen;
  std::vector<bool> unknown(d, false);  // the features with a category the training rows lack
  for (std::size_t r = 0; r < raw.rows; ++r) {
    const float* in = raw.row(r);
    float* o = out.row(r);
    for (std::size_t f = 0; f < d; ++f) {
      const FeaturePrep& fp = features_[f];
      const float v = in[f];
      if (std::isnan(v) && !fp.has_fill && fp.fill_category < 0) {
        std::size_t cells = 0, cols = 0;
        for (std::size_t g = 0; g < d; ++g) {
          std::size_t n = 0;
          for (std::size_t i = 0; i < raw.rows; ++i) n += std::isnan(raw(i, g));
          cells += n, cols += n > 0;
        }
        throw MissingValue(r, f, "missing value in column " + quote(fp.name) + missing_count(cells, cols, "") + impute_hint());
      }
      if (fp.type == ColumnType::numeric) {
        if (std::isnan(v)) ++seen.imputed;
        o[at[f]] = std::isnan(v) ? fp.fill : v;
        continue;
      }
      long s = -1;
      if (std::isnan(v)) {
        ++seen.imputed;
        s = fp.fill_category;
      } else {
        s = slot[f].at(static_cast<std::size_t>(v));
        if (s < 0) {
          ++seen.unknown_categories;
          unknown[f] = true;
        }
      }
      if (s >= 0) o[at[f] + static_cast<std::size_t>(s)] = 1.0f;
    }
  }
  if (report) {
    report->imputed += seen.imputed;
    report->unknown_categories += seen.unknown_categories;
    for (std::size_t f = 0; f < d; ++f)
      if (unknown[f] && std::find(report->unknown_in.begin(), report->unknown_in.end(), features_[f].name) == report->unknown_in.end())
        report->unknown_in.push_back(features_[f].name);
  }
  return out;
}

Matrix Preprocessor::transform(const Dataset& data, PrepReport* report, const std::vector<std::size_t>* rows) const {
  try {
    if (!rows) return transform(data.features, data.levels, report);
    return transform(take_rows(data.features, *rows), data.levels, report);
  } catch (const MissingValue& e) {
    const std::size_t row = rows ? (*rows)[e.row] : e.row;
    throw e.at(data.source, row < data.lines.size() ? data.lines[row] : 0,
               e.feature < data.feature_columns.size() ? data.feature_columns[e.feature] + 1 : 0);
  }
}

}  // namespace knn
