#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "knn/error.hpp"
#include "knn/vote.hpp"
#include "knn/weights.hpp"

namespace {

knn::Neighbors one_query(std::vector<std::int64_t> idx, std::vector<double> dist) {
  knn::Neighbors nb;
  nb.queries = 1;
  nb.k = idx.size();
  nb.index = std::move(idx);
  nb.distance = std::move(dist);
  return nb;
}

std::vector<double> weights_of(const std::string& spec, std::vector<double> d) {
  std::vector<double> w(d.size());
  knn::neighbor_weights(knn::Weights::parse(spec), d.data(), d.size(), w.data());
  return w;
}

}  // namespace

TEST(Weights, EachFunctionByHand) {
  EXPECT_EQ(weights_of("uniform", {1, 2}), (std::vector<double>{1, 1}));
  EXPECT_EQ(weights_of("distance", {0.5, 2}), (std::vector<double>{2, 0.5}));
  const auto g = weights_of("gaussian:2", {0, 2});
  EXPECT_EQ(g[0], 1.0);
  EXPECT_DOUBLE_EQ(g[1], std::exp(-4.0 / 8.0));
  EXPECT_DOUBLE_EQ(weights_of("gaussian", {1})[0], std::exp(-0.5));
  EXPECT_DOUBLE_EQ(weights_of("inverse", {0.4})[0], 1.0 / 0.5);
  EXPECT_DOUBLE_EQ(weights_of("inverse:1", {1})[0], 0.5);
  EXPECT_EQ(weights_of("subtract", {0.25, 2}), (std::vector<double>{0.75, 0}));
  EXPECT_EQ(weights_of("subtract:3", {1, 2}), (std::vector<double>{2, 1}));
}

TEST(Weights, ZeroDistancesTakeAllTheWeight) {
  EXPECT_EQ(weights_of("distance", {0, 0, 1}), (std::vector<double>{1, 1, 0}));
}

TEST(Weights, AllZeroWeightsFallBackToUniform) {
  EXPECT_EQ(weights_of("subtract:1", {1, 2, 5}), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(weights_of("gaussian:0.001", {10, 20}), (std::vector<double>{1, 1}));  // underflow to 0
}

TEST(Weights, ParseErrorsNameTheOption) {
  for (const char* bad : {"gaussian:0", "inverse:-1", "subtract:abc", "gaussian:nan", "gaussian:inf", "cubic", "uniform:2", "gaussian:"}) {
    try {
      knn::Weights::parse(bad);
      FAIL() << bad;
    } catch (const knn::Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("parameter weights: ", 0), 0u) << e.what();
    }
  }
  EXPECT_EQ(knn::Weights::parse("inverse:0.5").to_string(), "inverse:0.5");
}

TEST(Vote, WeightedMajorityAndTieToSmallerClass) {
  // classes of training rows 0..3: 2, 1, 1, 0
  const int cls[] = {2, 1, 1, 0};
  auto nb = one_query({0, 1, 2, 3}, {1, 2, 2, 4});
  int out[4];
  knn::vote_prefixes(nb, cls, 3, knn::Weights{}, {1, 2, 3, 4}, out);
  EXPECT_EQ(out[0], 2);  // k=1: class 2
  EXPECT_EQ(out[1], 1);  // k=2: tie 2 vs 1 -> smaller class 1
  EXPECT_EQ(out[2], 1);  // k=3: class 1 twice
  EXPECT_EQ(out[3], 1);
  const auto dist = knn::Weights::parse("distance");
  knn::vote_prefixes(nb, cls, 3, dist, {1, 2, 3, 4}, out);
  EXPECT_EQ(out[1], 2);  // 1/1 beats 1/2
  EXPECT_EQ(out[2], 1);  // class 2: 1, class 1: 1/2 + 1/2: a tie goes to the smaller class
}

TEST(Vote, ProbabilitiesAreVoteShares) {
  const int cls[] = {0, 1, 1};
  auto nb = one_query({0, 1, 2}, {1, 2, 4});
  int id;
  double p[2];
  knn::vote_prefixes(nb, cls, 2, knn::Weights::parse("distance"), {3}, &id, p);
  const double total = 1 + 0.5 + 0.25;
  EXPECT_DOUBLE_EQ(p[0], 1 / total);
  EXPECT_DOUBLE_EQ(p[1], 0.75 / total);
  EXPECT_EQ(id, 0);
}

TEST(Vote, RegressionWeightedMeanByHand) {
  const double y[] = {10, 20, 40};
  auto nb = one_query({0, 1, 2}, {1, 2, 4});
  double out[3];
  knn::average_prefixes(nb, y, knn::Weights::parse("distance"), {1, 2, 3}, out);
  EXPECT_EQ(out[0], 10.0);
  EXPECT_DOUBLE_EQ(out[1], (10 * 1.0 + 20 * 0.5) / 1.5);
  EXPECT_DOUBLE_EQ(out[2], (10 * 1.0 + 20 * 0.5 + 40 * 0.25) / 1.75);
  knn::average_prefixes(nb, y, knn::Weights::parse("subtract:1.5"), {1, 2, 3}, out);
  EXPECT_EQ(out[0], 10.0);
  EXPECT_EQ(out[1], 10.0);  // the second neighbour weighs 0
  auto far = one_query({0, 1}, {2, 3});
  knn::average_prefixes(far, y, knn::Weights::parse("subtract:1"), {2}, out);
  EXPECT_EQ(out[0], 15.0);  // all weights 0: uniform
}

TEST(Vote, ZeroDistanceRuleHoldsForEveryPrefix) {
  const double y[] = {1, 3, 100};
  auto nb = one_query({0, 1, 2}, {0, 0, 1});
  double out[3];
  knn::average_prefixes(nb, y, knn::Weights::parse("distance"), {1, 2, 3}, out);
  EXPECT_EQ(out[0], 1.0);
  EXPECT_EQ(out[1], 2.0);
  EXPECT_EQ(out[2], 2.0);
}

TEST(Vote, PrefixesEqualSingleK) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 3);
  const std::size_t nq = 50, kmax = 20, n = 100;
  knn::Neighbors nb;
  nb.queries = nq;
  nb.k = kmax;
  std::vector<int> cls(n);
  std::vector<double> y(n);
  for (std::size_t i = 0; i < n; ++i) {
    cls[i] = static_cast<int>(rng() % 4);
    y[i] = u(rng);
  }
  for (std::size_t q = 0; q < nq; ++q) {
    std::vector<double> d(kmax);
    for (auto& v : d) v = std::floor(u(rng) * 4) / 4;  // repeated values, zeros included
    std::sort(d.begin(), d.end());
    for (std::size_t j = 0; j < kmax; ++j) {
      nb.index.push_back(static_cast<std::int64_t>(rng() % n));
      nb.distance.push_back(d[j]);
    }
  }
  std::vector<std::size_t> all(kmax);
  for (std::size_t i = 0; i < kmax; ++i) all[i] = i + 1;
  for (const char* w : {"uniform", "distance", "gaussian:0.5", "inverse", "subtract:1"}) {
    const auto wt = knn::Weights::parse(w);
    std::vector<int> sweep(kmax * nq), one(nq);
    std::vector<double> rs(kmax * nq), r1(nq);
    knn::vote_prefixes(nb, cls.data(), 4, wt, all, sweep.data());
    knn::average_prefixes(nb, y.data(), wt, all, rs.data());
    for (std::size_t k = 1; k <= kmax; ++k) {
      knn::vote_prefixes(nb, cls.data(), 4, wt, {k}, one.data());
      knn::average_prefixes(nb, y.data(), wt, {k}, r1.data());
      for (std::size_t q = 0; q < nq; ++q) {
        ASSERT_EQ(sweep[(k - 1) * nq + q], one[q]) << w << " k=" << k;
        ASSERT_EQ(rs[(k - 1) * nq + q], r1[q]) << w << " k=" << k;
      }
    }
  }
}
