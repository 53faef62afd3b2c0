// Tabular data on the GPU: models fitted on data sets with categorical columns and missing cells
// (imputed, one-hot encoded, the numeric columns scaled with the one-hot ones left as 0/1) give on
// the CUDA backend the neighbours, distances and predictions of the CPU backend, bit for bit, on
// fresh random files. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "knn/knn.hpp"
#include "require_gpu.hpp"
#include "test_util.hpp"

namespace {

// A CSV with a row-name column, three numeric and two text columns, ~6% missing cells, a label.
std::string random_csv(std::mt19937_64& rng, std::size_t rows, bool with_label) {
  const char* colors[] = {"red", "green", "blue", "teal"};
  const char* sizes[] = {"S", "M", "L"};
  std::uniform_real_distribution<double> u(-5.0, 5.0);
  std::uniform_int_distribution<int> pick(0, 99);
  std::string s = std::string("\"\",a,b,c,color,size") + (with_label ? ",y\n" : "\n");
  for (std::size_t i = 0; i < rows; ++i) {
    s += "\"" + std::to_string(i + 1) + "\"";
    for (int j = 0; j < 3; ++j) {
      s += ",";
      if (pick(rng) >= 6) s += std::to_string(std::round(u(rng) * 4.0) / 4.0);  // quarter steps: ties happen
      else s += "NA";
    }
    s += ",";
    s += pick(rng) < 6 ? "" : colors[pick(rng) % 4];
    s += ",";
    s += pick(rng) < 6 ? "?" : sizes[pick(rng) % 3];
    if (with_label) s += std::string(",") + (pick(rng) % 3 == 0 ? "x" : pick(rng) % 2 ? "y" : "z");
    s += "\n";
  }
  return s;
}

knn::ModelParams params(knn::Device device, knn::Scaling scaling, knn::Metric metric, knn::Impute impute) {
  knn::ModelParams p;
  p.k = 7;
  p.scaling = scaling;
  p.metric = metric;
  p.impute = impute;
  p.weights = knn::Weights::parse("distance");
  p.backend.device = device;
  return p;
}

TEST(CudaTabular, SameNeighboursAndPredictionsAsTheCpu) {
  REQUIRE_GPU();
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::string train_path = knn::test::write_temp("tab_train.csv", random_csv(rng, 700, true));
  const std::string query_path = knn::test::write_temp("tab_query.csv", random_csv(rng, 260, false));
  const knn::Dataset train = knn::load_csv(train_path, {});
  const knn::Dataset query = knn::load_query_csv(query_path, {}, train);
  ASSERT_EQ(train.feature_types[3], knn::ColumnType::categorical);
  for (knn::Scaling scaling : {knn::Scaling::minmax, knn::Scaling::standard})
    for (knn::Metric metric : {knn::Metric::l2, knn::Metric::l1, knn::Metric::cosine})
      for (knn::Impute impute : {knn::Impute::mean, knn::Impute::median, knn::Impute::most_frequent}) {
        SCOPED_TRACE(std::string(knn::to_string(scaling)) + " " + knn::to_string(metric) + " " + knn::to_string(impute));
        knn::KnnClassifier cpu(params(knn::Device::cpu, scaling, metric, impute));
        knn::KnnClassifier gpu(params(knn::Device::cuda, scaling, metric, impute));
        cpu.fit(train);
        gpu.fit(train);
        EXPECT_EQ(cpu.scaler().offset(), gpu.scaler().offset());
        EXPECT_EQ(cpu.scaler().scale(), gpu.scaler().scale());
        const knn::Neighbors a = cpu.kneighbors(query), b = gpu.kneighbors(query);
        EXPECT_EQ(a.index, b.index);
        ASSERT_EQ(a.distance.size(), b.distance.size());
        EXPECT_EQ(0, std::memcmp(a.distance.data(), b.distance.data(), a.distance.size() * sizeof(double)));
        EXPECT_EQ(cpu.predict(query), gpu.predict(query));
        const auto pa = cpu.predict_proba(cpu.encode(query)), pb = gpu.predict_proba(gpu.encode(query));
        ASSERT_EQ(pa.size(), pb.size());
        for (std::size_t i = 0; i < pa.size(); ++i) EXPECT_NEAR(pa[i], pb[i], 1e-9 * std::max(1.0, std::abs(pa[i])));
      }
}

TEST(CudaTabular, EvaluationFoldsAgreeWithTheCpu) {
  REQUIRE_GPU();
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const knn::Dataset data = knn::load_csv(knn::test::write_temp("tab_eval.csv", random_csv(rng, 400, true)), {});
  for (knn::FoldSpec::Kind kind : {knn::FoldSpec::Kind::kfold, knn::FoldSpec::Kind::loo}) {
    knn::EvalOptions o;
    o.ks = {1, 3, 5, 9};
    o.impute = knn::Impute::mean;
    o.folds.kind = kind;
    o.backend.device = knn::Device::cpu;
    const knn::EvalResult a = knn::evaluate(data, o);
    o.backend.device = knn::Device::cuda;
    const knn::EvalResult b = knn::evaluate(data, o);
    ASSERT_EQ(a.rows.size(), b.rows.size());
    for (std::size_t r = 0; r < a.rows.size(); ++r)
      for (std::size_t s = 0; s < a.rows[r].scores.size(); ++s) {
        EXPECT_EQ(a.rows[r].scores[s].mean, b.rows[r].scores[s].mean) << "k " << a.rows[r].k;
        EXPECT_EQ(a.rows[r].scores[s].std, b.rows[r].scores[s].std) << "k " << a.rows[r].k;
      }
    EXPECT_EQ(a.confusion, b.confusion);
  }
}

}  // namespace
