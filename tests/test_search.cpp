#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "knn/error.hpp"
#include "knn/model.hpp"
#include "backend/cuda/search_plan.cuh"
#include "knn/search.hpp"
#include "test_util.hpp"

namespace {

// The definition, by brute force: every distance, sorted by (distance, index).
knn::Neighbors reference(const knn::Matrix& train, const knn::Matrix& q, std::size_t k, knn::Metric m,
                         const std::int64_t* exclude = nullptr) {
  knn::Neighbors nb;
  nb.queries = q.rows;
  nb.k = k;
  for (std::size_t i = 0; i < q.rows; ++i) {
    std::vector<std::pair<double, std::int64_t>> all;
    for (std::size_t j = 0; j < train.rows; ++j)
      if (!exclude || exclude[i] != static_cast<std::int64_t>(j))
        all.emplace_back(knn::distance(q.row(i), train.row(j), train.cols, m), static_cast<std::int64_t>(j));
    std::sort(all.begin(), all.end());
    for (std::size_t r = 0; r < k; ++r) {
      nb.index.push_back(all[r].second);
      nb.distance.push_back(all[r].first);
    }
  }
  return nb;
}

void expect_same(const knn::Neighbors& got, const knn::Neighbors& want, std::uint64_t seed) {
  ASSERT_EQ(got.index.size(), want.index.size()) << "seed " << seed;
  for (std::size_t i = 0; i < want.index.size(); ++i) {
    ASSERT_EQ(got.index[i], want.index[i]) << "seed " << seed << " at " << i;
    ASSERT_EQ(got.distance[i], want.distance[i]) << "seed " << seed << " at " << i;  // bit for bit
  }
}

knn::Neighbors run(const knn::Matrix& train, const knn::Matrix& q, std::size_t k, knn::Metric m, int threads = 0,
                   const std::int64_t* exclude = nullptr) {
  knn::BackendOptions o;
  o.device = knn::Device::cpu;
  o.threads = threads;
  const auto b = knn::make_backend(o);
  knn::SearchRequest r;
  r.train = &train;
  r.queries = q;
  r.k = k;
  r.metric = m;
  r.exclude = exclude;
  return knn::search(*b, r);
}

const knn::Metric kMetrics[] = {knn::Metric::l2, knn::Metric::l1, knn::Metric::cosine};

}  // namespace

TEST(Search, HandComputedOrderAndTies) {
  knn::Matrix train(4, 1);
  train.values = {2, -1, 1, 0};
  knn::Matrix q(1, 1);
  q.values = {0.5f};
  const auto nb = run(train, q, 4, knn::Metric::l2);
  // distances 1.5, 1.5, 0.5, 0.5: ties go to the smaller index
  EXPECT_EQ(nb.index, (std::vector<std::int64_t>{2, 3, 0, 1}));
  EXPECT_EQ(nb.distance, (std::vector<double>{0.5, 0.5, 1.5, 1.5}));
}

TEST(Search, MatchesTheDefinitionOnRandomData) {
  const std::uint64_t seed = knn::test::fresh_seed();
  std::mt19937_64 rng(seed);
  // Sizes cross the query block (256) and training block (2048) boundaries.
  const std::size_t shapes[][3] = {{1, 1, 1}, {5, 3, 7}, {2100, 17, 300}, {700, 64, 257}, {3000, 5, 40}};
  for (const auto& s : shapes) {
    const auto train = knn::test::random_matrix(s[0], s[1], rng);
    const auto q = knn::test::random_matrix(s[2], s[1], rng);
    for (auto m : kMetrics)
      for (std::size_t k : {std::size_t{1}, std::size_t{5}, s[0]}) {
        if (k > s[0]) continue;
        SCOPED_TRACE("n=" + std::to_string(s[0]) + " d=" + std::to_string(s[1]) + " k=" + std::to_string(k) +
                     " metric=" + knn::to_string(m));
        expect_same(run(train, q, k, m), reference(train, q, k, m), seed);
      }
  }
}

TEST(Search, DuplicatesAndNearTiesThatFloatProductsCannotSeparate) {
  const std::uint64_t seed = knn::test::fresh_seed();
  std::mt19937_64 rng(seed);
  const std::size_t d = 300;
  auto base = knn::test::random_matrix(1, d, rng, 0.0f, 1.0f);
  knn::Matrix train(400, d);
  for (std::size_t i = 0; i < train.rows; ++i) {
    std::copy_n(base.row(0), d, train.row(i));
    // Rows differ from the base in one coordinate by a few units in the last place, or not at all.
    if (i % 3 != 0) {
      float& v = train(i, rng() % d);
      for (unsigned s = 0; s < 1 + rng() % 4; ++s) v = std::nextafter(v, 2.0f);
    }
  }
  knn::Matrix q(3, d);
  std::copy_n(base.row(0), d, q.row(0));
  for (std::size_t j = 0; j < d; ++j) q(1, j) = base(0, j) + 0.25f;
  for (std::size_t j = 0; j < d; ++j) q(2, j) = 0.0f;
  for (auto m : kMetrics)
    for (std::size_t k : {1u, 10u, 133u, 400u}) {
      SCOPED_TRACE(std::string("metric=") + knn::to_string(m) + " k=" + std::to_string(k));
      expect_same(run(train, q, k, m), reference(train, q, k, m), seed);
    }
}

TEST(Search, ExcludedRowIsNeverItsOwnNeighbour) {
  const std::uint64_t seed = knn::test::fresh_seed();
  std::mt19937_64 rng(seed);
  const auto train = knn::test::random_matrix(300, 4, rng);
  std::vector<std::int64_t> ex(train.rows);
  std::iota(ex.begin(), ex.end(), 0);
  for (auto m : kMetrics) {
    const auto nb = run(train, train, 299, m, 0, ex.data());
    expect_same(nb, reference(train, train, 299, m, ex.data()), seed);
    for (std::size_t i = 0; i < train.rows; ++i)
      for (std::size_t j = 0; j < nb.k; ++j) ASSERT_NE(nb.index_row(i)[j], static_cast<std::int64_t>(i));
  }
}

TEST(Model, KneighborsAtAnotherKAndOfTheTrainingRows) {
  // The model's search at a k of the call's own, and each training row's neighbours among the
  // others: the plain search with the row excluded, on the scaled rows.
  const std::uint64_t seed = knn::test::fresh_seed();
  std::mt19937_64 rng(seed);
  const auto train = knn::test::random_matrix(200, 5, rng);
  const auto q = knn::test::random_matrix(30, 5, rng);
  for (auto m : kMetrics) {
    SCOPED_TRACE(std::string("metric=") + knn::to_string(m));
    knn::ModelParams p;
    p.k = 3;
    p.metric = m;
    p.scaling = knn::Scaling::standard;
    p.backend.device = knn::Device::cpu;
    knn::NearestNeighbors model(p);
    model.fit(train);
    knn::Matrix scaled = train, scaled_q = q;
    knn::Scaler sc(knn::Scaling::standard);
    sc.fit(train);
    sc.transform(scaled);
    sc.transform(scaled_q);
    expect_same(model.kneighbors(q, 17), reference(scaled, scaled_q, 17, m), seed);
    EXPECT_EQ(model.kneighbors(q).k, 3u);
    std::vector<std::int64_t> ex(train.rows);
    std::iota(ex.begin(), ex.end(), 0);
    expect_same(model.kneighbors_of_train(199), reference(scaled, scaled, 199, m, ex.data()), seed);
    EXPECT_THROW(model.kneighbors_of_train(200), knn::Error);
    EXPECT_THROW(model.kneighbors(q, 201), knn::Error);
  }
}

TEST(Search, SameBitsWithOneOrTwoThreads) {
  const std::uint64_t seed = knn::test::fresh_seed();
  std::mt19937_64 rng(seed);
  const auto train = knn::test::random_matrix(2500, 20, rng);
  const auto q = knn::test::random_matrix(600, 20, rng);
  for (auto m : kMetrics) expect_same(run(train, q, 9, m, 1), run(train, q, 9, m, 2), seed);
}

TEST(Search, HugeValuesStayExact) {
  knn::Matrix train(3, 2);
  train.values = {3e38f, 3e38f, -3e38f, -3e38f, 1.0f, 2.0f};
  knn::Matrix q(1, 2);
  q.values = {3e38f, -3e38f};
  for (auto m : kMetrics) expect_same(run(train, q, 3, m), reference(train, q, 3, m), 0);
}

// Values whose products fall under float's normal range (down to zero): float products lose
// them, so the bounds need an absolute part besides the relative one.
TEST(Search, TinyValuesStayExact) {
  const std::uint64_t seed = knn::test::fresh_seed();
  std::mt19937_64 rng(seed);
  const auto spread = [&](std::size_t rows, std::size_t cols, float lo_exp, float hi_exp) {
    return knn::test::log_spread_matrix(rows, cols, rng, lo_exp, hi_exp);
  };
  const auto tiny = spread(500, 16, -30.0f, -25.0f), tiny_q = spread(20, 16, -30.0f, -25.0f);
  const auto mixed = spread(500, 40, -44.0f, -18.0f), mixed_q = spread(20, 40, -44.0f, -18.0f);
  for (auto m : kMetrics)
    for (std::size_t k : {1u, 20u}) {
      SCOPED_TRACE(std::string("metric=") + knn::to_string(m) + " k=" + std::to_string(k));
      expect_same(run(tiny, tiny_q, k, m), reference(tiny, tiny_q, k, m), seed);
      expect_same(run(mixed, mixed_q, k, m), reference(mixed, mixed_q, k, m), seed);
    }
}

TEST(Search, ValidatesKAndDimensions) {
  knn::Matrix train(3, 2), q(1, 2), wrong(1, 3);
  const auto b = knn::make_backend({knn::Device::cpu});
  knn::SearchRequest r;
  r.train = &train;
  r.queries = q;
  for (std::size_t k : {0u, 4u}) {
    r.k = k;
    try {
      knn::search(*b, r);
      FAIL() << k;
    } catch (const knn::Error& e) {
      EXPECT_NE(std::string(e.what()).find("parameter k: \"" + std::to_string(k) + "\" is out of range: it must be from 1 to 3"),
                std::string::npos)
          << e.what();
    }
  }
  r.k = 1;
  r.queries = wrong;
  EXPECT_THROW(knn::search(*b, r), knn::Error);
}

// A scaler in the request: the search takes scaler.transform(queries), bit for bit, leaves the
// caller's queries as they were, and throws the transform's errors.
TEST(Search, ScalerInTheRequestScalesTheQueries) {
  const std::uint64_t seed = knn::test::fresh_seed();
  std::mt19937_64 rng(seed);
  const auto b = knn::make_backend({knn::Device::cpu});
  const knn::Matrix raw = knn::test::random_matrix(500, 6, rng, -40.0f, 900.0f);
  const knn::Matrix q = knn::test::random_matrix(60, 6, rng, -100.0f, 1000.0f);
  for (const auto kind : {knn::Scaling::minmax, knn::Scaling::standard, knn::Scaling::none}) {
    SCOPED_TRACE(knn::to_string(kind));
    knn::Scaler scaler(kind);
    const knn::Matrix train = scaler.fit_transform(raw);
    knn::Matrix scaled = q;
    scaler.transform(scaled);
    for (const auto m : kMetrics) {
      knn::SearchRequest r;
      r.train = &train;
      r.queries = q;
      r.k = 9;
      r.metric = m;
      r.scaler = &scaler;
      const knn::Matrix before = q;
      const knn::Neighbors got = knn::search(*b, r);
      EXPECT_EQ(q.values, before.values);
      expect_same(got, reference(train, scaled, 9, m), seed);
    }
  }
  // A value far outside a tiny training range overflows once scaled; a scaler of other width.
  knn::Matrix tiny(2, 2);
  tiny.values = {0.0f, 0.0f, 1e-30f, 1.0f};
  knn::Scaler scaler(knn::Scaling::minmax);
  const knn::Matrix train = scaler.fit_transform(tiny);
  knn::Matrix far(3, 2);
  far(2, 0) = 1e30f;
  knn::SearchRequest r;
  r.train = &train;
  r.queries = far;
  r.k = 1;
  r.scaler = &scaler;
  try {
    knn::search(*b, r);
    FAIL() << "no ScaleOverflow";
  } catch (const knn::ScaleOverflow& e) {
    EXPECT_EQ(e.row, 2u);
    EXPECT_EQ(e.col, 0u);
  }
  knn::Scaler wide(knn::Scaling::minmax);
  wide.fit(knn::test::random_matrix(4, 3, rng));
  r.queries = tiny;
  r.scaler = &wide;
  EXPECT_THROW(knn::search(*b, r), knn::Error);
}

TEST(Backend, CpuAlwaysExistsAndCudaIsExplained) {
  EXPECT_STREQ(knn::make_backend({knn::Device::cpu})->name(), "cpu");
  if (!knn::cuda_available()) {
    EXPECT_THROW(knn::make_backend({knn::Device::cuda}), knn::Error);
    EXPECT_STREQ(knn::make_backend({knn::Device::automatic})->name(), "cpu");
  }
  EXPECT_THROW(knn::parse_device("tpu"), knn::Error);
}

// The default precision is chosen by the rows' columns, and "auto" names it. (The GPU's searches
// under it, with rows kept on the device or not, are compared with the CPU in test_cuda_backend.)
TEST(Search, PrecisionAutoIsTheDefaultAndChoosesByColumns) {
  EXPECT_EQ(knn::BackendOptions{}.precision, knn::Precision::automatic);
  EXPECT_EQ(knn::parse_precision("auto"), knn::Precision::automatic);
  EXPECT_EQ(knn::parse_precision("fp32"), knn::Precision::fp32);
  EXPECT_EQ(knn::parse_precision("tf32"), knn::Precision::tf32);
  try {
    knn::parse_precision("fp16");
    FAIL() << "fp16 accepted";
  } catch (const knn::Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected auto, fp32 or tf32"), std::string::npos) << e.what();
  }
  for (std::size_t cols : {1, 4, 7}) {
    EXPECT_FALSE(knn::cuda::tf32_pass(knn::Precision::automatic, cols, true)) << cols;
    EXPECT_TRUE(knn::cuda::tf32_pass(knn::Precision::tf32, cols, true)) << cols;
  }
  for (std::size_t cols : {8, 17, 784}) {
    EXPECT_TRUE(knn::cuda::tf32_pass(knn::Precision::automatic, cols, true)) << cols;
    EXPECT_FALSE(knn::cuda::tf32_pass(knn::Precision::fp32, cols, true)) << cols;
    // Without the TF32 kernel (or with KNN_GPU_SGEMM=1) auto keeps float32 products; tf32 asks.
    EXPECT_FALSE(knn::cuda::tf32_pass(knn::Precision::automatic, cols, false)) << cols;
    EXPECT_TRUE(knn::cuda::tf32_pass(knn::Precision::tf32, cols, false)) << cols;
  }
}

// search_on_device is for a backend that searches GPU memory: the CPU backend refuses it, naming
// the way out, and the request is validated first.
TEST(Search, OnDeviceNeedsTheGpuBackendAndAValidRequest) {
  const knn::Matrix train(10, 3);
  float queries[6] = {};
  std::int64_t index[4] = {};
  double distance[4] = {};
  knn::DeviceSearchRequest r;
  r.train = &train;
  r.queries = queries;
  r.rows = 2;
  r.k = 2;
  r.index = index;
  r.distance = distance;
  const auto cpu = knn::make_backend({knn::Device::cpu});
  const auto message = [&] {
    try {
      knn::search_on_device(*cpu, r);
    } catch (const knn::Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message().find("cpu: this backend searches host memory"), std::string::npos) << message();
  EXPECT_NE(message().find("cuda backend"), std::string::npos) << message();
  r.k = 11;
  EXPECT_NE(message().find("out of range: it must be from 1 to 10"), std::string::npos) << message();
  r.k = 2;
  r.distance = nullptr;
  EXPECT_NE(message().find("pointers are required"), std::string::npos) << message();
  r.distance = distance;
  r.train = nullptr;
  EXPECT_NE(message().find("training rows are required"), std::string::npos) << message();
}
