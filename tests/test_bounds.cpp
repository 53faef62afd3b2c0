// The rounding bounds of the candidate passes (common/bounds.hpp) against products computed the
// way the GPU computes them, emulated on the host: a bound that is too small here would let the
// GPU miss a true neighbour.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "arith/bounds.hpp"

namespace {

float bits_to_float(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
std::uint32_t float_to_bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// x rounded to TF32 (10 explicit mantissa bits), to nearest, ties away from zero: what the GPU's
// split applies to both parts of every value.
float round_tf32(float x) {
  const std::uint32_t b = float_to_bits(x);
  if ((b & 0x7f800000u) == 0x7f800000u) return x;
  return bits_to_float((b + 0x1000u) & 0xffffe000u);
}

// A float sum that rounds each step toward zero (truncation) or to nearest, in the given order.
float accumulate(const std::vector<double>& terms, const std::vector<std::size_t>& order, bool truncate) {
  float s = 0.0f;
  for (std::size_t i : order) {
    const double exact = static_cast<double>(s) + terms[i];  // float + float product: exact in double here
    float r = static_cast<float>(exact);
    if (truncate && std::fabs(static_cast<double>(r)) > std::fabs(exact)) r = std::nextafter(r, 0.0f);
    s = r;
  }
  return s;
}

// |split product - q.t| / sum |q_i t_i| over one pair, for the worst of a few summation orders.
double split_error(const std::vector<float>& q, const std::vector<float>& t, std::mt19937_64& rng) {
  const std::size_t d = q.size();
  std::vector<double> terms;
  double exact = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < d; ++i) {
    const float qh = round_tf32(q[i]), ql = round_tf32(q[i] - qh);
    const float th = round_tf32(t[i]), tl = round_tf32(t[i] - th);
    // Products of TF32 values (11 significant bits each) are exact in float, and so in double.
    terms.push_back(static_cast<double>(qh) * th);
    terms.push_back(static_cast<double>(qh) * tl);
    terms.push_back(static_cast<double>(ql) * th);
    exact += static_cast<double>(q[i]) * t[i];
    scale += std::fabs(static_cast<double>(q[i]) * t[i]);
  }
  std::vector<std::size_t> order(terms.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  double worst = 0.0;
  for (int pass = 0; pass < 4; ++pass) {
    if (pass > 0) std::shuffle(order.begin(), order.end(), rng);
    for (bool truncate : {false, true}) {
      const double err = std::fabs(static_cast<double>(accumulate(terms, order, truncate)) - exact);
      worst = std::max(worst, scale > 0.0 ? err / scale : err);
    }
  }
  return worst;
}

// Values with their low 13 bits at a TF32 rounding tie, or just off it: the split's worst cases.
float near_tie(std::mt19937_64& rng) {
  std::uniform_int_distribution<std::uint32_t> exp(100, 150), mant(0, (1u << 10) - 1), off(0, 2), sign(0, 1);
  const std::uint32_t low = 0x1000u + off(rng) - 1u;
  return bits_to_float((sign(rng) << 31) | (exp(rng) << 23) | (mant(rng) << 13) | low);
}

TEST(Bounds, SplitTf32ProductStaysWithinItsBound) {
  const std::uint64_t seed = std::random_device{}();
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (std::size_t d : {1u, 2u, 7u, 128u, 784u}) {
    const double c = knn::detail::split_tf32_dot_bound(d);
    double worst = 0.0;
    for (int pair = 0; pair < 40; ++pair) {
      std::vector<float> q(d), t(d);
      for (std::size_t i = 0; i < d; ++i) {
        switch (pair % 4) {
          case 0: q[i] = normal(rng), t[i] = normal(rng); break;
          case 1: q[i] = unit(rng), t[i] = unit(rng); break;
          case 2: q[i] = near_tie(rng), t[i] = near_tie(rng); break;
          default:  // cancellation: t is q with every other sign flipped, so q.t is near 0
            q[i] = near_tie(rng), t[i] = (i % 2 ? -q[i] : q[i]) * (1.0f + 0x1p-12f);
        }
      }
      worst = std::max(worst, split_error(q, t, rng));
    }
    EXPECT_LE(worst, c) << "d = " << d << ", seed " << seed;
    // The bound is float32's order of accuracy, far under TF32's own (2^-9).
    EXPECT_LT(c, knn::detail::tf32_dot_bound(d) / 4.0) << "d = " << d;
  }
}

TEST(Bounds, SplitTf32TiesRoundAwayFromZero) {
  EXPECT_EQ(round_tf32(bits_to_float(0x3f801000u)), bits_to_float(0x3f802000u));
  EXPECT_EQ(round_tf32(bits_to_float(0xbf801000u)), bits_to_float(0xbf802000u));
  EXPECT_EQ(round_tf32(bits_to_float(0x3f800fffu)), 1.0f);
  // The split is exact: hi + lo gives x back before lo's own rounding.
  const float x = bits_to_float(0x3f8abcdeu), hi = round_tf32(x);
  EXPECT_EQ(hi + (x - hi), x);
}

// l2_sum_ceiling(r) is at or above every sum of squares whose rounded root is r or less: each s
// from a few ulps under r^2 up to the first whose root passes r is tried. fl(r r) alone is not
// (some sums above it still round to r), which the count of such sums shows.
TEST(Bounds, L2SumCeilingHoldsEverySumWhoseRootRoundsToIt) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-300, 300);
  int above_the_plain_square = 0;
  for (int i = 0; i < 20000; ++i) {
    const double r = std::ldexp(mantissa(rng), exponent(rng) / 2);
    double s = r * r;
    for (int u = 0; u < 4; ++u) s = std::nextafter(s, 0.0);
    for (int u = 0; u < 64 && std::sqrt(s) <= r; ++u, s = std::nextafter(s, INFINITY)) {
      ASSERT_LE(s, knn::detail::l2_sum_ceiling(r)) << "r = " << r << ", s = " << s;
      if (s > r * r) ++above_the_plain_square;
    }
  }
  EXPECT_GT(above_the_plain_square, 0);
}

}  // namespace
