#include <gtest/gtest.h>

#include <cmath>

#include "knn/error.hpp"
#include "knn/scaler.hpp"

namespace {
knn::Matrix make(std::size_t r, std::size_t c, std::vector<float> v) {
  knn::Matrix m(r, c);
  m.values = std::move(v);
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
