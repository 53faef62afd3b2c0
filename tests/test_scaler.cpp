#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "knn/error.hpp"
#include "knn/scaler.hpp"
#include "knn/search.hpp"
#include "test_util.hpp"

namespace {
knn::Matrix make(std::size_t r, std::size_t c, std::vector<float> v) {
  knn::Matrix m(r, c);
  m.values = std::move(v);
  return m;
}

// Equal sizes and equal bytes: +0.0 and -0.0 differ.
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Random columns of several magnitudes, a constant one, and one of signed zeros and positives
// (minimum 0, its first zero of either sign).
knn::Matrix varied(std::size_t rows, std::mt19937_64& rng) {
  knn::Matrix m(rows, 5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::size_t i = 0; i < rows; ++i) {
    m(i, 0) = static_cast<float>(u(rng));
    m(i, 1) = static_cast<float>(u(rng) * 1e30);
    m(i, 2) = static_cast<float>(u(rng) * 1e-30 - 5e-31);
    m(i, 3) = 2.5f;
    m(i, 4) = rng() % 2 ? (rng() % 2 ? -0.0f : 0.0f) : static_cast<float>(u(rng) + 1.0);
  }
  return m;
}
}  // namespace

TEST(Scaler, MinMaxFittedOnTrainingRowsOnly) {
  knn::Scaler s(knn::Scaling::minmax);
  auto train = make(3, 2, {0, 10, 5, 20, 10, 30});
  s.fit(train);
  EXPECT_EQ(s.offset(), (std::vector<double>{0, 10}));
  EXPECT_EQ(s.scale(), (std::vector<double>{10, 20}));
  auto q = make(1, 2, {20, 0});  // outside the training range: not clipped
  s.transform(q);
  EXPECT_EQ(q.values, (std::vector<float>{2.0f, -0.5f}));
  s.transform(train);
  EXPECT_EQ(train.values, (std::vector<float>{0, 0, 0.5f, 0.5f, 1, 1}));
}

TEST(Scaler, ZeroRangeColumnIsScaledByOne) {
  knn::Scaler s(knn::Scaling::minmax);
  auto train = make(2, 1, {7, 7});
  s.fit(train);
  auto q = make(1, 1, {9.5f});
  s.transform(q);
  EXPECT_EQ(q.values[0], 2.5f);  // q - min
  s.transform(train);
  EXPECT_EQ(train.values, (std::vector<float>{0, 0}));
}

TEST(Scaler, StandardUsesPopulationDeviation) {
  knn::Scaler s(knn::Scaling::standard);
  auto train = make(4, 2, {1, 5, 3, 5, 5, 5, 7, 5});
  s.fit(train);
  EXPECT_EQ(s.offset()[0], 4.0);
  EXPECT_DOUBLE_EQ(s.scale()[0], std::sqrt(5.0));
  EXPECT_EQ(s.scale()[1], 1.0);  // zero variance
  s.transform(train);
  EXPECT_FLOAT_EQ(train(0, 0), static_cast<float>(-3.0 / std::sqrt(5.0)));
  EXPECT_EQ(train(0, 1), 0.0f);
}

TEST(Scaler, RoundsOnceFromDouble) {
  knn::Scaler s(knn::Scaling::minmax);
  auto train = make(2, 1, {0.0f, 3.0f});
  s.fit(train);
  auto q = make(1, 1, {1.0f});
  s.transform(q);
  EXPECT_EQ(q.values[0], static_cast<float>(1.0 / 3.0));
}

TEST(Scaler, NoneLeavesValues) {
  knn::Scaler s(knn::Scaling::none);
  auto m = make(1, 2, {3, -4});
  s.fit(m);
  s.transform(m);
  EXPECT_EQ(m.values, (std::vector<float>{3, -4}));
}

TEST(Scaler, OverflowOnceScaledIsAnError) {
  knn::Scaler s(knn::Scaling::minmax);
  auto train = make(2, 1, {0.0f, 1e-30f});
  s.fit(train);
  auto q = make(1, 1, {3e38f});
  EXPECT_THROW(s.transform(q), knn::Error);
}

TEST(Scaler, DimensionMismatchIsAnError) {
  knn::Scaler s(knn::Scaling::minmax);
  auto train = make(1, 2, {1, 2});
  s.fit(train);
  auto q = make(1, 3, {1, 2, 3});
  EXPECT_THROW(s.transform(q), knn::Error);
}

TEST(Scaler, OverflowNamesRowFeatureValueAndScaler) {
  knn::Scaler s(knn::Scaling::minmax);
  s.fit(make(2, 2, {0.0f, 0.0f, 1.0f, 1e-30f}));
  auto q = make(2, 2, {0.5f, 0.0f, 0.5f, 3e38f});
  try {
    s.transform(q);
    FAIL() << "no overflow";
  } catch (const knn::ScaleOverflow& e) {
    EXPECT_EQ(e.row, 1u);
    EXPECT_EQ(e.col, 1u);
    EXPECT_EQ(e.value, 3e38f);
    const std::string text = e.what();
    EXPECT_EQ(text.rfind("row 2, feature 2: value \"", 0), 0u) << text;
    EXPECT_NE(text.find("overflows float32 once scaled by the minmax scaler"), std::string::npos) << text;
    EXPECT_STREQ(knn::ScaleOverflow(e.row, e.col, e.value, knn::Scaling::minmax).what(), e.what());
  }
  EXPECT_EQ(q.values, (std::vector<float>{0.5f, 0.0f, 0.5f, 3e38f}));  // unchanged
}

// Column minima and maxima found elsewhere, in double, give fit_transform's scaler and values.
// Reduced in row order, as here, a column of minimum 0 keeps its first zero, of either sign.
TEST(Scaler, SetMinMaxGivesTheScalerOfFit) {
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const std::size_t rows : {std::size_t{1}, std::size_t{2}, std::size_t{97}}) {
    const knn::Matrix train = varied(rows, rng);
    knn::Scaler want(knn::Scaling::minmax);
    const knn::Matrix want_rows = want.fit_transform(train);
    std::vector<double> lo(train.cols, std::numeric_limits<double>::infinity()), hi(train.cols, -std::numeric_limits<double>::infinity());
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < train.cols; ++j) {
        lo[j] = std::min(lo[j], static_cast<double>(train(i, j)));
        hi[j] = std::max(hi[j], static_cast<double>(train(i, j)));
      }
    knn::Scaler got(knn::Scaling::minmax);
    got.set_min_max(lo, hi);
    EXPECT_TRUE(same_bits(got.offset(), want.offset())) << rows << " rows";
    EXPECT_TRUE(same_bits(got.scale(), want.scale())) << rows << " rows";
    EXPECT_EQ(got.scale()[3], 1.0);  // zero range
    knn::Matrix got_rows = train;
    got.transform(got_rows);
    EXPECT_TRUE(same_bits(got_rows.values, want_rows.values)) << rows << " rows";
  }
}

TEST(Scaler, SetMinMaxNeedsMinMaxAndMatchingSizes) {
  knn::Scaler standard(knn::Scaling::standard);
  EXPECT_THROW(standard.set_min_max({0.0}, {1.0}), knn::Error);
  knn::Scaler s(knn::Scaling::minmax);
  EXPECT_THROW(s.set_min_max({0.0, 1.0}, {1.0}), knn::Error);
  s.set_min_max({-1.0, 4.0, 0.0}, {3.0, 4.0, -0.0});
  EXPECT_EQ(s.offset(), (std::vector<double>{-1.0, 4.0, 0.0}));
  EXPECT_EQ(s.scale(), (std::vector<double>{4.0, 1.0, 1.0}));
}

// Every backend that keeps the defaults (the CPU's) scales as the host's Scaler does, bit for bit,
// for every kind of scaling.
TEST(Backend, DefaultScalingIsTheHostScaler) {
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  knn::BackendOptions options;
  options.device = knn::Device::cpu;
  const auto cpu = knn::make_backend(options);
  for (const auto kind : {knn::Scaling::minmax, knn::Scaling::standard, knn::Scaling::none})
    for (const std::size_t rows : {std::size_t{0}, std::size_t{1}, std::size_t{500}}) {
      SCOPED_TRACE(std::string(knn::to_string(kind)) + ", " + std::to_string(rows) + " rows");
      const knn::Matrix train = varied(rows, rng), queries = varied(20, rng);
      knn::Scaler want(kind), got(kind);
      const knn::Matrix want_rows = want.fit_transform(train);
      const knn::Matrix got_rows = cpu->fit_scaler(got, train);
      EXPECT_TRUE(same_bits(got.offset(), want.offset()));
      EXPECT_TRUE(same_bits(got.scale(), want.scale()));
      EXPECT_EQ(got_rows.rows, want_rows.rows);
      EXPECT_TRUE(same_bits(got_rows.values, want_rows.values));
      knn::Matrix want_q = queries, got_q = queries;
      want.transform(want_q);
      cpu->scale(got, got_q);
      EXPECT_TRUE(same_bits(got_q.values, want_q.values));
    }
  knn::Scaler s(knn::Scaling::minmax);
  cpu->fit_scaler(s, make(2, 1, {0.0f, 1e-30f}));
  auto q = make(3, 1, {0.0f, 1e30f, 1e30f});
  try {
    cpu->scale(s, q);
    FAIL() << "no overflow";
  } catch (const knn::ScaleOverflow& e) {
    EXPECT_EQ(e.row, 1u);
    EXPECT_EQ(e.col, 0u);
  }
}

// Large enough that the fit takes every core: the minima and maxima are the one loop's in row
// order, a column of minimum 0 keeping its first zero's sign, for every thread count.
TEST(Scaler, MinMaxOnEveryCoreIsTheOneLoopsBitForBit) {
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const knn::Matrix train = varied(300'000, rng);  // 1.5 million values
  std::vector<double> lo(train.row(0), train.row(0) + train.cols), hi = lo;
  for (std::size_t i = 1; i < train.rows; ++i)
    for (std::size_t j = 0; j < train.cols; ++j) {
      lo[j] = std::min(lo[j], static_cast<double>(train(i, j)));
      hi[j] = std::max(hi[j], static_cast<double>(train(i, j)));
    }
  knn::Scaler want(knn::Scaling::minmax);
  want.set_min_max(lo, hi);
  const int before = omp_get_max_threads();
  for (const int threads : {1, 2, 3, 7}) {
    omp_set_num_threads(threads);
    knn::Scaler got(knn::Scaling::minmax);
    got.fit(train);
    omp_set_num_threads(before);
    EXPECT_TRUE(same_bits(got.offset(), want.offset())) << threads << " threads";
    EXPECT_TRUE(same_bits(got.scale(), want.scale())) << threads << " threads";
  }
}

// transformed() gives transform()'s values in a new matrix and its error on overflow, leaving its
// input as it was.
TEST(Scaler, TransformedIsTransformIntoANewMatrix) {
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const knn::Scaling kind : {knn::Scaling::minmax, knn::Scaling::standard, knn::Scaling::none}) {
    for (const std::size_t rows : {std::size_t{1}, std::size_t{97}, std::size_t{300'000}}) {
      const knn::Matrix train = varied(rows, rng);
      knn::Scaler s(kind);
      s.fit(train);
      knn::Matrix want = train;
      s.transform(want);
      const knn::Matrix got = s.transformed(train);
      EXPECT_EQ(got.rows, train.rows);
      EXPECT_EQ(got.cols, train.cols);
      EXPECT_TRUE(same_bits(got.values, want.values)) << knn::to_string(kind) << ", " << rows << " rows";
    }
  }
  knn::Scaler s(knn::Scaling::minmax);
  s.fit(make(2, 2, {0.0f, 0.0f, 1.0f, 1e-30f}));
  const knn::Matrix q = make(3, 2, {0.5f, 0.0f, 0.5f, 3e38f, 0.5f, 3e38f});
  try {
    (void)s.transformed(q);
    FAIL() << "no overflow";
  } catch (const knn::ScaleOverflow& e) {
    EXPECT_EQ(e.row, 1u);
    EXPECT_EQ(e.col, 1u);
  }
  EXPECT_EQ(q.values, (std::vector<float>{0.5f, 0.0f, 0.5f, 3e38f, 0.5f, 3e38f}));
  EXPECT_THROW((void)s.transformed(make(1, 3, {1, 2, 3})), knn::Error);
}
