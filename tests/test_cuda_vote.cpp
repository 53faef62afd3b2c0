// The GPU's votes and weighted means (CudaBackend::vote and ::average) against the host's
// vote_prefixes and average_prefixes, the oracle, on fresh random neighbour lists: class
// predictions identical, vote shares and means within 1e-9 relative. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "knn/knn.hpp"
#include "test_util.hpp"

namespace {

const char* const kWeights[] = {"uniform", "distance", "gaussian", "gaussian:0.05", "inverse", "subtract", "subtract:0.4"};

bool near(double a, double b) { return a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

// Neighbour lists of nq queries and kmax neighbours among n training rows, with their classes
// and targets.
struct Lists {
  knn::Neighbors nb;
  std::size_t classes = 2;
  std::vector<int> cls;
  std::vector<double> y;
};

// Ascending distances with repeats; some queries start at distance 0 (several zeros: the rule of
// Kind::distance), some lie beyond 1 (subtract's weights all 0, gaussian:0.05's underflow).
Lists random_lists(std::size_t nq, std::size_t kmax, std::size_t classes, std::mt19937_64& rng) {
  Lists l;
  const std::size_t n = 5000;
  l.classes = classes;
  l.cls.resize(n);
  l.y.resize(n);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (std::size_t i = 0; i < n; ++i) {
    l.cls[i] = static_cast<int>(rng() % classes);
    l.y[i] = i % 7 == 0 ? (u(rng) - 0.5) * 1e6 : u(rng) * 10.0 - 5.0;
  }
  l.nb.queries = nq;
  l.nb.k = kmax;
  for (std::size_t q = 0; q < nq; ++q) {
    const unsigned kind = static_cast<unsigned>(rng() % 4);
    double d = kind == 0 ? 0.0 : kind == 1 ? 1.0 + u(rng) : 0.05 * u(rng);
    for (std::size_t i = 0; i < kmax; ++i) {
      if (!(kind == 0 && i < 3) && rng() % 5) d += u(rng) * 2.0 / static_cast<double>(kmax);
      l.nb.distance.push_back(d);
      l.nb.index.push_back(static_cast<std::int64_t>(rng() % n));
    }
  }
  return l;
}

// k lists for lists of kmax: one k, every k, and a sparse ascending list ending at kmax.
std::vector<std::vector<std::size_t>> k_lists(std::size_t kmax, std::mt19937_64& rng) {
  std::vector<std::vector<std::size_t>> out{{1 + rng() % kmax}, {}, {}};
  for (std::size_t k = 1; k <= kmax; ++k) {
    out[1].push_back(k);
    if (k == kmax || rng() % 7 == 0) out[2].push_back(k);
  }
  return out;
}

void expect_votes_match(const knn::Backend& gpu, const Lists& l, const knn::Weights& w, const std::vector<std::size_t>& ks,
                        const std::string& what) {
  const std::size_t nq = l.nb.queries, nc = l.classes;
  const bool shares = ks.size() == 1;
  std::vector<int> want(ks.size() * nq), got(ks.size() * nq, -1);
  std::vector<double> want_p(shares ? nq * nc : 0), got_p(want_p.size(), std::numeric_limits<double>::quiet_NaN());
  knn::vote_prefixes(l.nb, l.cls.data(), nc, w, ks, want.data(), shares ? want_p.data() : nullptr);
  gpu.vote(l.nb, l.cls.data(), nc, w, ks, got.data(), shares ? got_p.data() : nullptr);
  for (std::size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(got[i], want[i]) << what << ": k=" << ks[i / nq] << " query " << i % nq;
  for (std::size_t i = 0; i < want_p.size(); ++i)
    ASSERT_TRUE(near(got_p[i], want_p[i])) << what << ": share of class " << i % nc << ", query " << i / nc << ": "
                                           << got_p[i] << " vs " << want_p[i];
}

void expect_means_match(const knn::Backend& gpu, const Lists& l, const knn::Weights& w, const std::vector<std::size_t>& ks,
                        const std::string& what) {
  const std::size_t nq = l.nb.queries;
  std::vector<double> want(ks.size() * nq), got(ks.size() * nq, std::numeric_limits<double>::quiet_NaN());
  knn::average_prefixes(l.nb, l.y.data(), w, ks, want.data());
  gpu.average(l.nb, l.y.data(), w, ks, got.data());
  for (std::size_t i = 0; i < want.size(); ++i)
    ASSERT_TRUE(near(got[i], want[i])) << what << ": k=" << ks[i / nq] << " query " << i % nq << ": " << got[i] << " vs "
                                       << want[i];
}

// Both comparisons for every weight function and k list.
void expect_all_match(const knn::Backend& gpu, const Lists& l, std::mt19937_64& rng, const std::string& what) {
  for (const char* name : kWeights) {
    const auto w = knn::Weights::parse(name);
    for (const auto& ks : k_lists(l.nb.k, rng)) {
      const std::string about = what + " " + name + " ks=" + std::to_string(ks.size()) + ".." + std::to_string(ks.back());
      expect_votes_match(gpu, l, w, ks, about);
      expect_means_match(gpu, l, w, ks, about);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// Each test: the GPU backend, and fresh random data whose seed every failure message names.
class CudaVote : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!knn::cuda_available()) GTEST_SKIP() << "no usable GPU";
    knn::BackendOptions o;
    o.device = knn::Device::cuda;
    gpu = knn::make_backend(o);
  }
  const std::uint64_t seed = knn::test::fresh_seed();
  const ::testing::ScopedTrace trace{__FILE__, __LINE__, "seed " + std::to_string(seed)};
  std::mt19937_64 rng{seed};
  std::uniform_real_distribution<double> u{0.0, 1.0};
  std::shared_ptr<const knn::Backend> gpu;
};

}  // namespace

TEST_F(CudaVote, MatchesTheHostOnRandomLists) {
  // queries, kmax, classes: one of each; odd sizes; many short lists; long lists; the most
  // classes the GPU takes (64) and more (70: the host's); a list of more than a scan tile.
  const std::size_t shapes[][3] = {{1, 1, 2},    {7, 5, 3},    {3000, 20, 2}, {500, 300, 10},
                                   {1000, 64, 64}, {200, 100, 70}, {40, 2000, 4}, {2500, 9, 2}};
  for (const auto& s : shapes) {
    const Lists l = random_lists(s[0], s[1], s[2], rng);
    expect_all_match(*gpu, l, rng,
                     "queries=" + std::to_string(s[0]) + " kmax=" + std::to_string(s[1]) + " classes=" + std::to_string(s[2]));
    if (HasFatalFailure()) return;
  }
}

// Every query: pairs of neighbours at equal distances, one of class 0 and one of class 1, so that
// both classes' votes are equal at every even k whatever the weights (exact ties: class 0 wins);
// in some queries the last pair's second distance is one ulp larger (votes within an ulp or
// equal). The GPU's sums of the two classes run through the scan in different orders.
TEST_F(CudaVote, MirroredNeighboursTieExactlyAsOnTheHost) {
  for (const std::size_t kmax : {std::size_t{2}, std::size_t{64}, std::size_t{300}}) {
    Lists l;
    const std::size_t nq = 400;
    l.classes = 3;
    l.nb.queries = nq;
    l.nb.k = kmax;
    for (std::size_t q = 0; q < nq; ++q) {
      double d = q % 5 == 0 ? 0.0 : 0.3 * u(rng);
      for (std::size_t i = 0; i < kmax; i += 2) {
        if (i > 0 || q % 5) d += u(rng) * 1.5 / static_cast<double>(kmax);
        const bool nudge = q % 3 == 1 && i + 2 >= kmax;
        for (std::size_t j = 0; j < 2 && i + j < kmax; ++j) {
          l.nb.distance.push_back(j == 1 && nudge ? std::nextafter(d, 10.0) : d);
          // Rows 2r are class 0, rows 2r + 1 class 1 (class 2 has no rows, so no votes).
          l.nb.index.push_back(static_cast<std::int64_t>(2 * (rng() % 1000) + (q % 2 ? 1 - j : j)));
        }
      }
    }
    l.cls.resize(2000);
    l.y.resize(2000);
    for (std::size_t r = 0; r < 2000; ++r) {
      l.cls[r] = static_cast<int>(r % 2);
      // Targets of opposite sign on the two sides of a pair, half of them of equal size: weighted
      // sums cancel, exactly or in part.
      l.y[r] = (r % 2 ? -1.0 : 1.0) * (r / 2 % 2 ? 1.0 : 1.0 + static_cast<double>(r / 2 % 10) / 3.0);
    }
    expect_all_match(*gpu, l, rng, "kmax=" + std::to_string(kmax));
    if (HasFatalFailure()) return;
  }
}

// Distances where some weights are not usable: all beyond subtract's c (sum 0: counts decide),
// gaussian weights that underflow to 0 or lie in the subnormal range, and distances so small that
// 1/d overflows to infinity.
TEST_F(CudaVote, UnusableWeightSumsFallBackAsOnTheHost) {
  const std::size_t nq = 300, kmax = 40;
  Lists l = random_lists(nq, kmax, 5, rng);
  for (std::size_t q = 0; q < nq; ++q) {
    double* d = l.nb.distance.data() + q * kmax;
    // gaussian:0.05 has exp(-d^2 / 0.005): 0 beyond d = 1.93, subnormal from d = 1.88.
    const double start = q % 4 == 0 ? 1.85 + 0.1 * u(rng) : q % 4 == 1 ? 1e-310 * (1.0 + u(rng)) : 2.0 + u(rng);
    for (std::size_t i = 0; i < kmax; ++i) d[i] = start + (q % 4 == 1 ? 1e-310 : 0.003) * static_cast<double>(i);
  }
  for (const char* name : {"uniform", "distance", "gaussian:0.05", "subtract:1", "inverse:1e-300"}) {
    const auto w = knn::Weights::parse(name);
    for (const auto& ks : k_lists(kmax, rng)) {
      expect_votes_match(*gpu, l, w, ks, name);
      expect_means_match(*gpu, l, w, ks, name);
      if (HasFatalFailure()) return;
    }
  }
}

// KNN_GPU_VOTE=0 (read when a backend is made) makes the GPU backend vote on the host: the same
// answers.
TEST_F(CudaVote, HostPathOnRequest) {
  const Lists l = random_lists(100, 30, 4, rng);
  const knn::test::ScopedEnv env("KNN_GPU_VOTE", "0");
  knn::BackendOptions o;
  o.device = knn::Device::cuda;
  expect_all_match(*knn::make_backend(o), l, rng, "KNN_GPU_VOTE=0");
}
