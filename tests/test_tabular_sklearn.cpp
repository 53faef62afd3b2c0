// knn-cli and k-sweep on tables with text columns, missing cells, R's row names and an ID column
// only in the query file, against scikit-learn's answers recorded by tests/tabular/make_expected.py
// (see tests/tabular/README.md): a classification and a regression table, each with --impute mean,
// median and most_frequent (k = 5, uniform, l2, minmax) and --impute median --weights distance
// --metric l1 --scale standard.
//
// knn-cli predict runs as a process (its exit code is checked) with --id ID; every query not
// marked tied must get scikit-learn's class (the same text) or regression value (within 1e-9
// relative), and class probabilities within 1e-9. k-sweep runs in-process: --save-folds must
// write the recorded folds, the cross-validated mean and standard deviation must follow from
// scikit-learn's per-fold scores, and each fold run on its own (its training and held-out rows
// written as files, scored with --test) must give scikit-learn's score of that fold within 1e-9.
#include <gtest/gtest.h>

#include "app_runner.hpp"
#include "csv_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iostream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sweep.hpp"

#ifndef KNN_SOURCE_DIR
#error "KNN_SOURCE_DIR must be defined as the repository root"
#endif
#ifndef KNN_CLI_PATH
#error "KNN_CLI_PATH must be defined as the path of the built knn-cli"
#endif

namespace {

const std::string kTabular = std::string(KNN_SOURCE_DIR) + "/tests/tabular/";
const std::string kCli = KNN_CLI_PATH;

constexpr double kTolerance = 1e-9;  // relative, or absolute for values below 1
constexpr int kFolds = 5;

struct Case {
  const char* name;
  const char* task;   // knn-cli's --task
  const char* score;  // the per-fold score recorded: accuracy or rmse
  std::size_t train_rows;
  std::size_t queries;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

const Case kCases[] = {
    {"classification", "classify", "accuracy", 300, 100},
    {"regression", "regress", "rmse", 300, 100},
};

std::string data_file(const Case& c, const char* part) { return kTabular + "data/" + c.name + "-" + part + ".csv"; }
std::string expected_file(const std::string& name) { return kTabular + "expected/" + name; }

using knn::test::read_file;
using knn::test::temp_dir;
using knn::test::write_temp;

// ---------------------------------------------------------------------------------------------
// Plain CSV tables: the expected files and the tools' outputs (no quoted fields).

using knn::test::lines_of;
using knn::test::parse_table;
using knn::test::read_table;
using knn::test::split;
using knn::test::Table;

bool close(double got, double want) { return std::fabs(got - want) <= kTolerance * std::max(1.0, std::fabs(want)); }

// ---------------------------------------------------------------------------------------------
// The recorded configurations (expected/configs.csv).

struct Config {
  std::string name, impute, weights, metric, scale, k;
};

std::vector<Config> configs() {
  const Table t = read_table(expected_file("configs.csv"));
  std::vector<Config> out;
  for (std::size_t i = 0; i < t.rows.size(); ++i)
    out.push_back({t.at(i, "config"), t.at(i, "impute"), t.at(i, "weights"), t.at(i, "metric"), t.at(i, "scale"), t.at(i, "k")});
  EXPECT_EQ(out.size(), 4u);
  return out;
}

// The options both tools share; k is given apart (knn-cli's -k N, k-sweep's --k LIST).
std::vector<std::string> model_args(const Case& c, const Config& cfg) {
  return {"--task", c.task, "--impute", cfg.impute, "--weights", cfg.weights, "--metric", cfg.metric, "--scale", cfg.scale};
}

// ---------------------------------------------------------------------------------------------
// Running k-sweep in-process.

knn::test::AppResult sweep(const std::vector<std::string>& args) { return knn::test::run_app(knn::sweep::run, "k-sweep", args); }

// The one-row table of a k-sweep run for a single k that must succeed (notes may go to stderr).
Table sweep_table(const std::vector<std::string>& args) {
  const knn::test::AppResult r = sweep(args);
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_NE(r.err.find("best: k = "), std::string::npos) << r;
  EXPECT_EQ(r.err.find("error"), std::string::npos) << r;
  Table t = parse_table(r.out);
  EXPECT_EQ(t.rows.size(), 1u) << r;
  return t;
}

// The fold of every data row of the training file, as recorded.
std::vector<int> recorded_folds(const Case& c) {
  const Table t = read_table(expected_file(std::string(c.name) + "-folds.csv"));
  std::vector<int> fold(t.rows.size());
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    EXPECT_EQ(t.at(r, "row"), std::to_string(r));
    fold[r] = std::stoi(t.at(r, "fold"));
  }
  EXPECT_EQ(fold.size(), c.train_rows);
  return fold;
}

// scikit-learn's per-fold scores of one configuration, in fold order, and whether any is tied.
struct FoldScores {
  std::vector<double> score;
  std::vector<bool> tied;
  bool any_tied() const { return std::find(tied.begin(), tied.end(), true) != tied.end(); }
};

FoldScores recorded_scores(const Case& c, const Config& cfg) {
  const Table t = read_table(expected_file(std::string(c.name) + "-per-fold.csv"));
  FoldScores s;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    if (t.at(i, "config") != cfg.name) continue;
    EXPECT_EQ(t.at(i, "fold"), std::to_string(s.score.size()));
    s.score.push_back(t.number(i, c.score));
    s.tied.push_back(t.at(i, "tied") == "1");
  }
  EXPECT_EQ(s.score.size(), static_cast<std::size_t>(kFolds)) << cfg.name;
  return s;
}

class TabularSklearn : public ::testing::TestWithParam<Case> {};

// ---------------------------------------------------------------------------------------------

TEST_P(TabularSklearn, PredictMatchesScikitLearn) {
  const Case& c = GetParam();
  const Table want = read_table(expected_file(std::string(c.name) + "-predictions.csv"));
  std::vector<std::string> proba_columns;
  for (const auto& h : want.header)
    if (h.rfind("p_", 0) == 0) proba_columns.push_back(h);
  const bool classify = std::string(c.task) == "classify";
  EXPECT_EQ(proba_columns.empty(), !classify);

  std::size_t compared = 0, tied = 0;
  for (const Config& cfg : configs()) {
    SCOPED_TRACE(cfg.name);
    std::vector<std::string> args = {"predict", "--train", data_file(c, "train"), "--query", data_file(c, "query"), "--id", "ID",
                                     "-k", cfg.k};
    const auto model = model_args(c, cfg);
    args.insert(args.end(), model.begin(), model.end());
    if (classify) args.push_back("--proba");
    const knn::test::AppResult r = knn::test::run_process(kCli, args);
    ASSERT_EQ(r.code, 0) << r;
    EXPECT_EQ(r.err.find("error"), std::string::npos) << r;
    const Table got = parse_table(r.out);

    // The ID column first, then the prediction and (classification) one p_<class> per class.
    std::vector<std::string> header = {"ID", "prediction"};
    header.insert(header.end(), proba_columns.begin(), proba_columns.end());
    ASSERT_EQ(got.header, header) << r;
    ASSERT_EQ(got.rows.size(), c.queries) << r;

    std::size_t q = 0;
    for (std::size_t i = 0; i < want.rows.size(); ++i) {
      if (want.at(i, "config") != cfg.name) continue;
      ASSERT_EQ(want.at(i, "query"), std::to_string(q));
      SCOPED_TRACE("query " + std::to_string(q) + " (" + want.at(i, "id") + ")");
      EXPECT_EQ(got.at(q, "ID"), want.at(i, "id"));
      if (want.at(i, "tied") == "1") {
        ++tied, ++q;
        continue;
      }
      if (classify) {
        EXPECT_EQ(got.at(q, "prediction"), want.at(i, "prediction"));
        for (const auto& p : proba_columns)
          EXPECT_NEAR(got.number(q, p), want.number(i, p), kTolerance) << p;
      } else {
        EXPECT_TRUE(close(got.number(q, "prediction"), want.number(i, "prediction")))
            << "knn-cli " << got.at(q, "prediction") << ", scikit-learn " << want.at(i, "prediction");
      }
      ++compared, ++q;
    }
    EXPECT_EQ(q, c.queries);
  }
  std::cout << c.name << ": " << compared << " predictions compared, " << tied << " skipped as tied\n";
  EXPECT_GE(compared, 4 * c.queries * 9 / 10);  // the ties are few by construction
}

TEST_P(TabularSklearn, CrossValidationMatchesScikitLearn) {
  const Case& c = GetParam();
  const std::string want_folds = read_file(expected_file(std::string(c.name) + "-folds.csv"));
  for (const Config& cfg : configs()) {
    SCOPED_TRACE(cfg.name);
    const std::string folds_path = (temp_dir() / (std::string(c.name) + "_" + cfg.name + "_folds.csv")).string();
    std::vector<std::string> args = {"--data", data_file(c, "train"), "--k", cfg.k, "--save-folds", folds_path};
    const auto model = model_args(c, cfg);
    args.insert(args.end(), model.begin(), model.end());
    const Table got = sweep_table(args);
    if (got.rows.size() != 1) continue;
    EXPECT_EQ(read_file(folds_path), want_folds) << "k-sweep --save-folds";

    const FoldScores want = recorded_scores(c, cfg);
    if (want.any_tied()) continue;
    // libknn's mean and population standard deviation of the folds' scores, in fold order.
    double sum = 0.0;
    for (double v : want.score) sum += v;
    const double mean = sum / kFolds;
    double sq = 0.0;
    for (double v : want.score) sq += (v - mean) * (v - mean);
    const std::string score = c.score;
    EXPECT_TRUE(close(got.number(0, score + "_mean"), mean)) << "k-sweep " << got.at(0, score + "_mean") << ", scikit-learn " << mean;
    EXPECT_NEAR(got.number(0, score + "_std"), std::sqrt(sq / kFolds), kTolerance);
  }
}

TEST_P(TabularSklearn, EveryFoldOnItsOwn) {
  const Case& c = GetParam();
  std::vector<std::string> lines = lines_of(read_file(data_file(c, "train")));
  const std::vector<int> fold = recorded_folds(c);
  ASSERT_EQ(lines.size(), fold.size() + 1);
  std::size_t compared = 0, tied = 0;
  for (int f = 0; f < kFolds; ++f) {
    // The fold's training and held-out rows, in file order, under the file's header.
    std::string train = lines[0] + "\n", test = lines[0] + "\n";
    for (std::size_t r = 0; r < fold.size(); ++r) (fold[r] == f ? test : train) += lines[r + 1] + "\n";
    const std::string tag = std::string(c.name) + "_fold" + std::to_string(f);
    const std::string train_path = write_temp(tag + "_train.csv", train), test_path = write_temp(tag + "_test.csv", test);
    for (const Config& cfg : configs()) {
      SCOPED_TRACE(cfg.name + ", fold " + std::to_string(f));
      const FoldScores want = recorded_scores(c, cfg);
      if (want.tied.at(f)) {
        ++tied;
        continue;
      }
      std::vector<std::string> args = {"--data", train_path, "--test", test_path, "--k", cfg.k};
      const auto model = model_args(c, cfg);
      args.insert(args.end(), model.begin(), model.end());
      const Table got = sweep_table(args);
      if (got.rows.size() != 1) continue;
      const std::string col = std::string(c.score) + "_mean";
      EXPECT_TRUE(close(got.number(0, col), want.score.at(f)))
          << "k-sweep " << got.at(0, col) << ", scikit-learn " << want.score.at(f);
      EXPECT_EQ(got.at(0, std::string(c.score) + "_std"), "0");
      ++compared;
    }
  }
  std::cout << c.name << ": " << compared << " fold scores compared, " << tied << " skipped as tied\n";
  EXPECT_GE(compared, 16u);  // of 4 configurations x 5 folds
}

INSTANTIATE_TEST_SUITE_P(Cases, TabularSklearn, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

}  // namespace
