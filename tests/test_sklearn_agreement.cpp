// libknn against scikit-learn: predictions and neighbour lists recorded by
// tests/sklearn/make_expected.py (see tests/sklearn/README.md) for six data sets, weights
// uniform/distance, metrics l2/l1, min-max or no scaling, and k = 1, 5, 15, on the CPU backend.
//
// Every row not marked tied must agree: class predictions as the same text, regression
// predictions within 1e-9 relative, neighbour indices equal and distances within 1e-12 relative.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "knn/dataset.hpp"
#include "knn/model.hpp"
#include "knn/search.hpp"

#if !defined(KNN_SOURCE_DIR) && defined(KNN_TEST_DATA_DIR)
#define KNN_SOURCE_DIR KNN_TEST_DATA_DIR
#endif
#ifndef KNN_SOURCE_DIR
#error "KNN_SOURCE_DIR must be defined as the repository root (a string literal)"
#endif

namespace {

const std::string kExpectedDir = KNN_SOURCE_DIR "/tests/sklearn/expected/";

constexpr double kPredictionRel = 1e-9;  // regression predictions
constexpr double kDistanceRel = 1e-12;   // neighbour distances
constexpr std::size_t kNeighbors = 15;   // length of the recorded neighbour lists
constexpr std::size_t kConfigs = 24;     // 2 weights x 2 metrics x 2 scalings x 3 values of k
constexpr std::size_t kListConfigs = 4;  // 2 metrics x 2 scalings
constexpr std::size_t kMaxReported = 20; // mismatches printed per test; the rest are counted

enum class Task { classification, regression };

struct CaseInfo {
  const char* name;
  Task task;
  std::size_t train_rows;
  std::size_t query_rows;
  std::size_t features;
};

void PrintTo(const CaseInfo& c, std::ostream* os) { *os << c.name; }

// Shapes as tests/sklearn/expected/cases.csv gives them: a file that lost rows fails here.
const CaseInfo kCases[] = {
    {"iris", Task::classification, 112, 38, 4},
    {"wine", Task::classification, 133, 45, 13},
    {"breast_cancer", Task::classification, 426, 143, 30},
    {"diabetes", Task::regression, 331, 111, 10},
    {"synthetic_classification", Task::classification, 300, 100, 7},
    {"synthetic_regression", Task::regression, 300, 100, 5},
};

// --- the expected-value files: plain CSV with a header, no quoting -------------------------

struct Table {
  std::string path;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  std::size_t column(const std::string& name) const {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    throw std::runtime_error(path + ": no column '" + name + "'");
  }
};

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

Table read_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  Table t;
  t.path = path;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto cells = split(line);
    if (t.header.empty()) {
      t.header = std::move(cells);
      continue;
    }
    if (cells.size() != t.header.size())
      throw std::runtime_error(path + ":" + std::to_string(number) + ": " +
                               std::to_string(cells.size()) + " fields, expected " +
                               std::to_string(t.header.size()));
    t.rows.push_back(std::move(cells));
  }
  if (t.header.empty()) throw std::runtime_error(path + ": empty file");
  return t;
}

double to_double(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size())
    throw std::runtime_error("not a number: '" + text + "'");
  return v;
}

std::size_t to_size(const std::string& text) {
  const double v = to_double(text);
  if (!(v >= 0) || v != std::floor(v)) throw std::runtime_error("not a count: '" + text + "'");
  return static_cast<std::size_t>(v);
}

bool close_rel(double a, double b, double rel) {
  if (a == b) return true;
  if (!std::isfinite(a) || !std::isfinite(b)) return false;
  return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b));
}

std::string format17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// --- libknn side -----------------------------------------------------------------------------

struct Loaded {
  knn::Dataset train;
  knn::Dataset queries;
};

Loaded load_case(const CaseInfo& c) {
  const knn::CsvOptions options;  // header row, label = last column
  Loaded d;
  d.train = knn::load_csv(kExpectedDir + c.name + "-train.csv", options);
  d.queries = knn::load_query_csv(kExpectedDir + c.name + "-query.csv", options, d.train);
  return d;
}

knn::ModelParams params(std::size_t k, const std::string& weights, const std::string& metric,
                        const std::string& scaling) {
  knn::ModelParams p;
  p.k = k;
  p.weights = knn::Weights::parse(weights);
  p.metric = knn::parse_metric(metric);
  p.scaling = knn::parse_scaling(scaling);
  p.backend.device = knn::Device::cpu;
  return p;
}

class SklearnAgreement : public ::testing::TestWithParam<CaseInfo> {};

TEST_P(SklearnAgreement, Shapes) {
  const CaseInfo& c = GetParam();
  const Loaded d = load_case(c);
  EXPECT_EQ(d.train.size(), c.train_rows);
  EXPECT_EQ(d.queries.size(), c.query_rows);
  EXPECT_EQ(d.train.dims(), c.features);
  EXPECT_EQ(d.queries.dims(), c.features);
  EXPECT_EQ(d.train.labels.size(), c.train_rows);
}

TEST_P(SklearnAgreement, Predictions) {
  const CaseInfo& c = GetParam();
  const Loaded d = load_case(c);
  const Table t = read_table(kExpectedDir + c.name + "-predictions.csv");
  const std::size_t col_case = t.column("case"), col_weights = t.column("weights"),
                    col_metric = t.column("metric"), col_scaling = t.column("scaling"),
                    col_k = t.column("k"), col_query = t.column("query"),
                    col_pred = t.column("prediction"), col_tied = t.column("tied");

  using Config = std::tuple<std::string, std::string, std::string, std::size_t>;
  std::map<Config, std::vector<const std::vector<std::string>*>> groups;
  for (const auto& row : t.rows) {
    ASSERT_EQ(row[col_case], c.name) << t.path;
    groups[Config{row[col_weights], row[col_metric], row[col_scaling], to_size(row[col_k])}]
        .push_back(&row);
  }
  ASSERT_EQ(groups.size(), kConfigs) << t.path;
  ASSERT_EQ(t.rows.size(), kConfigs * d.queries.size()) << t.path;

  std::vector<double> targets;
  if (c.task == Task::regression) targets = knn::numeric_targets(d.train);

  std::size_t checked = 0, mismatches = 0;
  for (const auto& [config, rows] : groups) {
    const auto& [weights, metric, scaling, k] = config;
    const knn::ModelParams p = params(k, weights, metric, scaling);
    std::vector<std::string> labels;
    std::vector<double> values;
    if (c.task == Task::classification) {
      knn::KnnClassifier model(p);
      model.fit(d.train.features, d.train.labels);
      labels = model.predict(d.queries.features);
      ASSERT_EQ(labels.size(), d.queries.size());
    } else {
      knn::KnnRegressor model(p);
      model.fit(d.train.features, targets);
      values = model.predict(d.queries.features);
      ASSERT_EQ(values.size(), d.queries.size());
    }
    for (const auto* row : rows) {
      if ((*row)[col_tied] != "0") continue;
      const std::size_t q = to_size((*row)[col_query]);
      ASSERT_LT(q, d.queries.size()) << t.path;
      const std::string& want = (*row)[col_pred];
      bool ok;
      std::string got;
      if (c.task == Task::classification) {
        got = labels[q];
        ok = got == want;
      } else {
        got = format17(values[q]);
        ok = close_rel(values[q], to_double(want), kPredictionRel);
      }
      ++checked;
      if (!ok && ++mismatches <= kMaxReported)
        ADD_FAILURE() << c.name << " weights=" << weights << " metric=" << metric
                      << " scaling=" << scaling << " k=" << k << " query " << q
                      << ": libknn " << got << ", scikit-learn " << want;
    }
  }
  EXPECT_EQ(mismatches, 0u) << "predictions differing from scikit-learn, of " << checked
                            << " checked";
  // Not vacuous: nearly all rows are untied (tests/sklearn/expected/cases.csv has the counts).
  EXPECT_GE(checked * 10, t.rows.size() * 9) << "too few untied predictions were checked";
  EXPECT_GT(checked, 0u);
}

TEST_P(SklearnAgreement, Neighbors) {
  const CaseInfo& c = GetParam();
  const Loaded d = load_case(c);
  const Table t = read_table(kExpectedDir + c.name + "-neighbors.csv");
  const std::size_t col_case = t.column("case"), col_metric = t.column("metric"),
                    col_scaling = t.column("scaling"), col_query = t.column("query"),
                    col_rank = t.column("rank"), col_index = t.column("index"),
                    col_distance = t.column("distance"), col_tied = t.column("tied");

  using Config = std::tuple<std::string, std::string>;
  std::map<Config, std::vector<const std::vector<std::string>*>> groups;
  for (const auto& row : t.rows) {
    ASSERT_EQ(row[col_case], c.name) << t.path;
    groups[Config{row[col_metric], row[col_scaling]}].push_back(&row);
  }
  ASSERT_EQ(groups.size(), kListConfigs) << t.path;
  ASSERT_EQ(t.rows.size(), kListConfigs * kNeighbors * d.queries.size()) << t.path;

  std::size_t checked = 0, mismatches = 0;
  for (const auto& [config, rows] : groups) {
    const auto& [metric, scaling] = config;
    // The neighbour search does not depend on the weights; the model scales as it predicts.
    knn::KnnModel* model = nullptr;
    knn::KnnClassifier classifier(params(kNeighbors, "uniform", metric, scaling));
    knn::KnnRegressor regressor(params(kNeighbors, "uniform", metric, scaling));
    if (c.task == Task::classification) {
      classifier.fit(d.train.features, d.train.labels);
      model = &classifier;
    } else {
      regressor.fit(d.train.features, knn::numeric_targets(d.train));
      model = &regressor;
    }
    const knn::Neighbors nb = model->kneighbors(d.queries.features);
    ASSERT_EQ(nb.queries, d.queries.size());
    ASSERT_EQ(nb.k, kNeighbors);

    for (const auto* row : rows) {
      if ((*row)[col_tied] != "0") continue;
      const std::size_t q = to_size((*row)[col_query]);
      const std::size_t rank = to_size((*row)[col_rank]);
      ASSERT_LT(q, d.queries.size()) << t.path;
      ASSERT_GE(rank, 1u) << t.path;
      ASSERT_LE(rank, kNeighbors) << t.path;
      const auto want_index = static_cast<std::int64_t>(to_size((*row)[col_index]));
      const double want_distance = to_double((*row)[col_distance]);
      const std::int64_t got_index = nb.index_row(q)[rank - 1];
      const double got_distance = nb.distance_row(q)[rank - 1];
      ++checked;
      if ((got_index != want_index || !close_rel(got_distance, want_distance, kDistanceRel)) &&
          ++mismatches <= kMaxReported)
        ADD_FAILURE() << c.name << " metric=" << metric << " scaling=" << scaling << " query "
                      << q << " rank " << rank << ": libknn row " << got_index << " at "
                      << format17(got_distance) << ", scikit-learn row " << want_index << " at "
                      << (*row)[col_distance];
    }
  }
  EXPECT_EQ(mismatches, 0u) << "neighbours differing from scikit-learn, of " << checked
                            << " checked";
  EXPECT_GE(checked * 10, t.rows.size() * 9) << "too few untied neighbours were checked";
  EXPECT_GT(checked, 0u);
}

INSTANTIATE_TEST_SUITE_P(Cases, SklearnAgreement, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<CaseInfo>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
