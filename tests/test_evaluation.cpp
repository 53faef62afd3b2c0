#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/evaluation/eval_context.hpp"
#include "io/text_format.hpp"
#include "knn/dataset.hpp"
#include "knn/error.hpp"
#include "knn/evaluation.hpp"
#include "knn/scores.hpp"
#include "knn/model.hpp"
#include "test_util.hpp"

namespace {

knn::Dataset data_file(const char* name) { return knn::load_csv(std::string(KNN_SOURCE_DIR) + "/data/" + name, {}); }

knn::Dataset make_random_data(std::mt19937_64& rng, std::size_t n, std::size_t d, bool regress) {
  knn::Dataset data;
  data.source = "random";
  data.features = knn::test::random_matrix(n, d, rng);
  for (std::size_t j = 0; j < d; ++j) data.feature_names.push_back("f" + std::to_string(j));
  data.label_name = "y";
  data.label_column = d;
  for (std::size_t i = 0; i < n; ++i) {
    const float s = data.features(i, 0) + 0.5f * data.features(i, 1 % d);
    data.labels.push_back(regress ? knn::format_double(s * 3.0 + static_cast<double>(rng() % 7) / 10)
                                  : std::string(1, static_cast<char>('a' + (s > 0.3f) + (s > -0.4f) + (rng() % 10 == 0))));
    data.lines.push_back(i + 2);
  }
  return data;
}

knn::EvalOptions options(knn::Task task, std::vector<std::size_t> ks, const std::string& w) {
  knn::EvalOptions o;
  o.task = task;
  o.ks = std::move(ks);
  o.weights = {knn::Weights::parse(w)};
  o.backend.device = knn::Device::cpu;
  return o;
}

const char* kWeights[] = {"uniform", "distance", "gaussian:0.3", "inverse", "subtract:0.8"};

void expect_sweep_equals_single(const knn::Dataset& data, knn::Task task, knn::FoldSpec folds) {
  for (const char* w : kWeights) {
    std::vector<std::size_t> ks;
    for (std::size_t k = 1; k <= 25; k += 2) ks.push_back(k);
    auto o = options(task, ks, w);
    o.folds = folds;
    const auto sweep = knn::evaluate(data, o);
    ASSERT_EQ(sweep.rows.size(), ks.size());
    for (std::size_t i = 0; i < ks.size(); ++i) {
      auto one = options(task, {ks[i]}, w);
      one.folds = folds;
      const auto single = knn::evaluate(data, one);
      for (std::size_t s = 0; s < single.score_names.size(); ++s) {
        EXPECT_EQ(sweep.rows[i].scores[s].mean, single.rows[0].scores[s].mean) << w << " k=" << ks[i] << " " << single.score_names[s];
        EXPECT_EQ(sweep.rows[i].scores[s].std, single.rows[0].scores[s].std) << w << " k=" << ks[i];
      }
    }
  }
}

}  // namespace

TEST(Folds, StratifiedDeterministicAndBalanced) {
  std::vector<int> cls;
  for (int i = 0; i < 103; ++i) cls.push_back(i % 3 == 0 ? 0 : (i % 7 == 0 ? 2 : 1));
  const auto a = knn::assign_folds(cls.size(), &cls, 5, 42);
  EXPECT_EQ(a, knn::assign_folds(cls.size(), &cls, 5, 42));
  EXPECT_NE(a, knn::assign_folds(cls.size(), &cls, 5, 43));
  std::vector<std::vector<int>> per(5, std::vector<int>(3));
  for (std::size_t i = 0; i < cls.size(); ++i) per[static_cast<std::size_t>(a[i])][static_cast<std::size_t>(cls[i])]++;
  for (int c = 0; c < 3; ++c) {
    int lo = 1 << 30, hi = 0;
    for (int f = 0; f < 5; ++f) lo = std::min(lo, per[f][c]), hi = std::max(hi, per[f][c]);
    EXPECT_LE(hi - lo, 1) << "class " << c;
  }
  EXPECT_THROW(knn::assign_folds(3, nullptr, 5, 1), knn::Error);
  EXPECT_THROW(knn::assign_folds(30, nullptr, 1, 1), knn::Error);
}

TEST(Folds, FixedSplitMixSequence) {
  // The documented assignment for 6 rows, no classes, seed 42: a script reproduces exactly this.
  const auto a = knn::assign_folds(6, nullptr, 3, 42);
  std::vector<int> count(3);
  for (int f : a) count[static_cast<std::size_t>(f)]++;
  EXPECT_EQ(count, (std::vector<int>{2, 2, 2}));
}

TEST(Evaluation, SweepEqualsSingleKOnRealData) {
  expect_sweep_equals_single(data_file("iris.csv"), knn::Task::classify, {});
  expect_sweep_equals_single(data_file("diabetes.csv"), knn::Task::regress, {});
  knn::FoldSpec loo;
  loo.kind = knn::FoldSpec::Kind::loo;
  expect_sweep_equals_single(data_file("wine.csv"), knn::Task::classify, loo);
}

TEST(Evaluation, SweepEqualsSingleKOnRandomData) {
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  expect_sweep_equals_single(make_random_data(rng, 150, 4, false), knn::Task::classify, {});
  expect_sweep_equals_single(make_random_data(rng, 150, 3, true), knn::Task::regress, {});
}

TEST(Evaluation, TestFileScoresEqualTheModelsScore) {
  const auto data = data_file("iris.csv");
  knn::Dataset train = data, test = data;
  std::vector<std::size_t> tr, te;
  for (std::size_t i = 0; i < data.size(); ++i) (i % 3 ? tr : te).push_back(i);
  train.features = knn::take_rows(data.features, tr);
  test.features = knn::take_rows(data.features, te);
  train.labels.clear();
  test.labels.clear();
  for (auto i : tr) train.labels.push_back(data.labels[i]);
  for (auto i : te) test.labels.push_back(data.labels[i]);
  auto o = options(knn::Task::classify, {7}, "distance");
  o.folds.kind = knn::FoldSpec::Kind::test;
  o.folds.test = &test;
  const auto res = knn::evaluate(train, o);
  knn::ModelParams p;
  p.k = 7;
  p.weights = knn::Weights::parse("distance");
  p.backend.device = knn::Device::cpu;
  knn::KnnClassifier m(p);
  m.fit(train.features, train.labels);
  EXPECT_EQ(res.rows[0].scores[0].mean, m.score(test.features, test.labels));
  EXPECT_EQ(res.rows[0].scores[0].std, 0.0);
}

TEST(Evaluation, LeaveOneOutNeverUsesTheRowItself) {
  // Pairs of identical rows with different labels: with k = 1, leave-one-out must predict each
  // row from its twin, so every prediction is wrong.
  knn::Dataset data;
  data.source = "twins";
  data.feature_names = {"x"};
  data.label_name = "y";
  data.label_column = 1;
  data.features = knn::Matrix(8, 1);
  for (std::size_t i = 0; i < 8; ++i) {
    data.features(i, 0) = static_cast<float>(i / 2 * 10);
    data.labels.push_back(i % 2 ? "odd" : "even");
    data.lines.push_back(i + 2);
  }
  for (auto sc : {knn::Scaling::minmax, knn::Scaling::standard, knn::Scaling::none}) {
    auto o = options(knn::Task::classify, {1}, "uniform");
    o.folds.kind = knn::FoldSpec::Kind::loo;
    o.scaling = sc;
    EXPECT_EQ(knn::evaluate(data, o).rows[0].scores[0].mean, 0.0) << knn::to_string(sc);
  }
}

TEST(Evaluation, KLargerThanAFoldSaysTheLargestAllowed) {
  auto o = options(knn::Task::classify, {121}, "uniform");
  try {
    knn::evaluate(data_file("iris.csv"), o);
    FAIL();
  } catch (const knn::Error& e) {
    EXPECT_NE(std::string(e.what()).find("the largest allowed k is 120"), std::string::npos) << e.what();
  }
}

TEST(Evaluation, BestKAndConfusionMatrix) {
  auto o = options(knn::Task::classify, {1, 5, 9, 15}, "uniform");
  const auto res = knn::evaluate(data_file("iris.csv"), o);
  std::size_t total = 0;
  for (const auto& row : res.confusion[0])
    for (auto c : row) total += c;
  EXPECT_EQ(total, 150u);
  for (const auto& row : res.rows) EXPECT_LE(row.scores[0].mean, res.rows[res.best].scores[0].mean);
  EXPECT_EQ(res.classes, (std::vector<std::string>{"setosa", "versicolor", "virginica"}));
}

TEST(Folds, KfoldFoldsPartitionTheRows) {
  std::vector<int> cls;
  for (int i = 0; i < 23; ++i) cls.push_back(i % 4 == 0 ? 1 : 0);  // 23 rows: folds of 5 and 6 rows
  knn::FoldSpec spec;
  spec.folds = 4;
  const auto assigned = knn::assign_folds(cls.size(), &cls, spec.folds, spec.seed);
  const auto folds = knn::detail::kfold_folds(cls.size(), &cls, spec);
  ASSERT_EQ(folds.size(), 4u);
  for (std::size_t g = 0; g < folds.size(); ++g) {
    EXPECT_EQ(folds[g].train.size() + folds[g].test.size(), cls.size());
    EXPECT_TRUE(std::is_sorted(folds[g].train.begin(), folds[g].train.end()));
    EXPECT_TRUE(std::is_sorted(folds[g].test.begin(), folds[g].test.end()));
    for (std::size_t i : folds[g].test) EXPECT_EQ(assigned[i], static_cast<int>(g)) << "row " << i;
    for (std::size_t i : folds[g].train) EXPECT_NE(assigned[i], static_cast<int>(g)) << "row " << i;
  }
}

TEST(Evaluation, GivenSplitsOfTheKfoldFoldsScoreAsKfold) {
  // Another program's folds, passed as splits (training rows in any order, repeated), give the
  // k-fold run's scores exactly.
  const auto data = data_file("wine.csv");
  for (knn::Task task : {knn::Task::classify, knn::Task::regress}) {
    knn::Dataset d = data;
    if (task == knn::Task::regress)
      for (std::size_t i = 0; i < d.size(); ++i) d.labels[i] = knn::format_double(d.features(i, 0));
    auto o = options(task, {1, 4, 9, 20}, "distance");
    o.folds.folds = 4;
    const auto kfold = knn::evaluate(d, o);
    knn::LabelEncoder enc;
    enc.fit(d.labels);
    const auto cls = enc.encode(d.labels);
    auto given = o;
    given.folds.kind = knn::FoldSpec::Kind::splits;
    for (auto f : knn::detail::kfold_folds(d.size(), task == knn::Task::classify ? &cls : nullptr, o.folds)) {
      std::reverse(f.train.begin(), f.train.end());
      f.train.push_back(f.train.front());
      given.folds.splits.push_back(f);
    }
    const auto res = knn::evaluate(d, given);
    ASSERT_EQ(res.folds, 4u);
    ASSERT_EQ(res.rows.size(), kfold.rows.size());
    for (std::size_t r = 0; r < res.rows.size(); ++r)
      for (std::size_t s = 0; s < res.score_names.size(); ++s) {
        EXPECT_EQ(res.rows[r].scores[s].mean, kfold.rows[r].scores[s].mean) << knn::to_string(task) << " row " << r;
        EXPECT_EQ(res.rows[r].scores[s].std, kfold.rows[r].scores[s].std) << knn::to_string(task) << " row " << r;
      }
  }
}

TEST(Evaluation, GivenSplitsAreChecked) {
  const auto data = data_file("iris.csv");
  auto o = options(knn::Task::classify, {3}, "uniform");
  o.folds.kind = knn::FoldSpec::Kind::splits;
  const auto message = [&](std::vector<knn::Split> splits) {
    o.folds.splits = std::move(splits);
    try {
      knn::evaluate(data, o);
    } catch (const knn::Error& e) {
      EXPECT_EQ(e.parameter_name(), "splits") << e.what();
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({}), "parameter splits: no split given");
  EXPECT_EQ(message({{{0, 1, 2, 3}, {4}}, {{0, 1, 2}, {}}}), "parameter splits: split 2 of 2 has no test rows");
  EXPECT_EQ(message({{{0, 150}, {4}}}),
            "parameter splits: split 1 of 1 names row 150; the data has 150 rows (0-based: the last is 149)");
  // A split whose training rows are fewer than k.
  o.folds.splits = {{{0, 1}, {4, 5}}};
  EXPECT_THROW(knn::evaluate(data, o), knn::Error);
}

TEST(Evaluation, BestRowTiesGoToTheSmallerKThenTheEarlierRow) {
  const auto row = [](std::size_t k, double first) {
    knn::SweepRow r;
    r.k = k;
    r.scores = {{first, 0.0}};
    return r;
  };
  // Accuracy: highest wins; a tie goes to the smaller k, then to the earlier row.
  EXPECT_EQ(knn::detail::best_row({row(5, 0.9), row(3, 0.9), row(7, 0.95), row(1, 0.95)}, knn::Task::classify), 3u);
  EXPECT_EQ(knn::detail::best_row({row(3, 0.9), row(3, 0.9)}, knn::Task::classify), 0u);
  // RMSE: lowest wins.
  EXPECT_EQ(knn::detail::best_row({row(1, 2.0), row(2, 1.5), row(3, 1.5)}, knn::Task::regress), 1u);
}

TEST(Metrics, HandComputedScores) {
  const std::vector<int> t{0, 0, 1, 1, 2}, p{0, 1, 1, 1, 0};
  EXPECT_DOUBLE_EQ(knn::accuracy(t, p), 3.0 / 5);
  EXPECT_DOUBLE_EQ(knn::balanced_accuracy(t, p), (0.5 + 1.0 + 0.0) / 3);
  // F1: class 0: tp 1, fp 1, fn 1 -> 0.5; class 1: tp 2, fp 1, fn 0 -> 0.8; class 2: 0
  EXPECT_DOUBLE_EQ(knn::f1_macro(t, p), (0.5 + 0.8 + 0.0) / 3);
  const std::vector<double> y{1, 2, 3}, f{1, 2, 5};
  EXPECT_DOUBLE_EQ(knn::rmse(y, f), std::sqrt(4.0 / 3));
  EXPECT_DOUBLE_EQ(knn::mae(y, f), 2.0 / 3);
  EXPECT_DOUBLE_EQ(knn::r2(y, f), 1.0 - 4.0 / 2.0);
  EXPECT_EQ(knn::r2({2, 2}, {2, 2}), 1.0);
  EXPECT_EQ(knn::r2({2, 2}, {2, 3}), 0.0);
}
