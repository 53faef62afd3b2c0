// The GPU backend against the CPU backend (the oracle) on fresh random data: neighbour indices and
// distances must be identical, bit for bit, and so must predictions. Skips without a GPU.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>

#include "knn/knn.hpp"
#include "require_gpu.hpp"
#include "test_util.hpp"

namespace {

knn::Neighbors run(knn::Device dev, const knn::Matrix& train, const knn::Matrix& q, std::size_t k, knn::Metric m,
                   const std::int64_t* exclude = nullptr, knn::Precision p = knn::Precision::fp32,
                   std::size_t budget = 0) {
  knn::BackendOptions o;
  o.device = dev;
  o.precision = p;
  o.device_memory_budget = budget;
  const auto b = knn::make_backend(o);
  knn::SearchRequest r;
  r.train = &train;
  r.queries = q;
  r.k = k;
  r.metric = m;
  r.exclude = exclude;
  return knn::search(*b, r);
}

void expect_identical(const knn::Neighbors& gpu, const knn::Neighbors& cpu, const std::string& what) {
  ASSERT_EQ(gpu.index.size(), cpu.index.size()) << what;
  for (std::size_t i = 0; i < cpu.index.size(); ++i) {
    ASSERT_EQ(gpu.index[i], cpu.index[i]) << what << " at " << i << " (query " << i / cpu.k << ")";
    ASSERT_EQ(gpu.distance[i], cpu.distance[i]) << what << " at " << i;
  }
}

const knn::Metric kMetrics[] = {knn::Metric::l2, knn::Metric::l1, knn::Metric::cosine};

}  // namespace

// Without a driver the CPU is taken without a word; a driver without a usable GPU gets one note.
TEST(CudaBackend, AutomaticFallsBackToTheCpuWithOneNote) {
  if (knn::cuda_available()) GTEST_SKIP() << "a GPU is usable here: nothing falls back";
  const bool driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL) != nullptr;
  std::vector<std::string> notes;
  knn::BackendOptions o;
  o.notice = [&](const std::string& line) { notes.push_back(line); };
  EXPECT_STREQ(knn::make_backend(o)->name(), "cpu");
  ASSERT_EQ(notes.size(), driver ? 1u : 0u);
  if (driver) {
    EXPECT_EQ(notes[0].rfind("no usable GPU", 0), 0u) << notes[0];
    EXPECT_EQ(knn::test::without_fallback_note("note: " + notes[0] + "\nrest"), "rest");
  }
  o.device = knn::Device::cuda;
  EXPECT_THROW(knn::make_backend(o), knn::Error);
}

TEST(CudaBackend, IsUsedWhenAGpuIsPresent) {
  REQUIRE_GPU();
  EXPECT_STREQ(knn::make_backend({knn::Device::cuda})->name(), "cuda");
  EXPECT_STREQ(knn::make_backend({knn::Device::automatic})->name(), "cuda");
}

TEST(CudaBackend, MatchesCpuOnRandomShapes) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // n, d, queries: one row, one feature, odd sizes, wide rows, more queries than training rows.
  const std::size_t shapes[][3] = {{1, 1, 1}, {7, 3, 5}, {1000, 1, 50}, {3000, 17, 333}, {513, 1024, 40}, {20000, 64, 100}, {50, 8, 2000}};
  for (const auto& s : shapes) {
    const auto train = knn::test::random_matrix(s[0], s[1], rng, -2.0f, 2.0f);
    const auto q = knn::test::random_matrix(s[2], s[1], rng, -2.0f, 2.0f);
    for (auto m : kMetrics)
      for (std::size_t k : {std::size_t{1}, std::size_t{10}, std::size_t{257}, s[0]}) {
        if (k > s[0]) continue;
        const std::string what = "n=" + std::to_string(s[0]) + " d=" + std::to_string(s[1]) + " q=" + std::to_string(s[2]) +
                                 " k=" + std::to_string(k) + " " + knn::to_string(m);
        const auto cpu = run(knn::Device::cpu, train, q, k, m);
        expect_identical(run(knn::Device::cuda, train, q, k, m), cpu, what);
        if (m != knn::Metric::l1)
          expect_identical(run(knn::Device::cuda, train, q, k, m, nullptr, knn::Precision::tf32), cpu, what + " tf32");
        // The default: the split pass below 8 columns, the TF32 pass from 8 on (l1 has one pass).
        if (m != knn::Metric::l1)
          expect_identical(run(knn::Device::cuda, train, q, k, m, nullptr, knn::Precision::automatic), cpu, what + " auto");
      }
  }
}

// The ranking passes read a warp's 32 candidate rows a chunk of 32 features at a time (float4
// loads where d is a multiple of 4): rows narrower than a chunk, rows that end inside one, both
// kinds of load, all three metrics, and the passes that rank (first-round lists of up to 512
// places and of more, a second round for a list that overflowed, and k above 2,048), each
// distance equal to the CPU's to the bit.
TEST(CudaBackend, RankingReadsRowsOfEveryWidth) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (std::size_t d : {1u, 3u, 4u, 31u, 32u, 33u, 36u, 65u, 130u}) {
    auto train = knn::test::random_matrix(2600, d, rng, -2.0f, 2.0f);
    // A block of 700 copies of row 0: a query there has more tied candidates than a first-round
    // list holds, so it is ranked again in a list of its own.
    for (std::size_t i = 1; i < 2100; i += 3) std::copy_n(train.row(0), d, train.row(i));
    auto q = knn::test::random_matrix(24, d, rng, -2.0f, 2.0f);
    std::copy_n(train.row(0), d, q.row(0));
    for (auto m : kMetrics)
      for (std::size_t k : {std::size_t{1}, std::size_t{7}, std::size_t{300}, std::size_t{2100}}) {
        const std::string what = "d=" + std::to_string(d) + " k=" + std::to_string(k) + " " + knn::to_string(m);
        expect_identical(run(knn::Device::cuda, train, q, k, m), run(knn::Device::cpu, train, q, k, m), what);
      }
  }
}

TEST(CudaBackend, DuplicatesAndNearTies) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::size_t d = 200;
  const auto base = knn::test::random_matrix(1, d, rng, 0.0f, 1.0f);
  knn::Matrix train(3000, d);
  for (std::size_t i = 0; i < train.rows; ++i) {
    std::copy_n(base.row(0), d, train.row(i));
    if (i % 4) {
      float& v = train(i, rng() % d);
      for (unsigned s = 0; s < 1 + rng() % 3; ++s) v = std::nextafter(v, 2.0f);
    }
  }
  knn::Matrix q(4, d);
  for (std::size_t j = 0; j < d; ++j) {
    q(0, j) = base(0, j);
    q(1, j) = base(0, j) + 0.5f;
    q(2, j) = 0.0f;
    q(3, j) = -base(0, j);
  }
  for (auto m : kMetrics)
    for (std::size_t k : {1u, 5u, 750u, 2500u, 3000u}) {
      const auto cpu = run(knn::Device::cpu, train, q, k, m);
      expect_identical(run(knn::Device::cuda, train, q, k, m), cpu, std::string(knn::to_string(m)) + " k=" + std::to_string(k));
      expect_identical(run(knn::Device::cuda, train, q, k, m, nullptr, knn::Precision::tf32), cpu, "tf32");
    }
}

// float32 products both ways: from split TF32 parts on tensor cores (precision fp32, and auto
// below 8 columns, where there are tensor cores) and the float32 FMA product (KNN_GPU_SGEMM=1, read when a backend is made), on values
// over six orders of magnitude and both signs, and on near-ties a float32 product cannot separate.
TEST(CudaBackend, BothKindsOfFloat32ProductGiveTheCpuAnswer) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> exponent(-3.0f, 3.0f);
  const auto wide = [&](std::size_t rows, std::size_t cols) {
    knn::Matrix m(rows, cols);
    for (auto& v : m.values) v = std::pow(10.0f, exponent(rng)) * (rng() % 2 ? 1.0f : -1.0f);
    return m;
  };
  knn::Matrix near(2000, 96);
  const auto base = knn::test::random_matrix(1, 96, rng, 0.0f, 1.0f);
  for (std::size_t i = 0; i < near.rows; ++i) {
    std::copy_n(base.row(0), 96, near.row(i));
    float& v = near(i, rng() % 96);
    for (unsigned s = 0; s < 1 + rng() % 4; ++s) v = std::nextafter(v, 2.0f);
  }
  const auto near_q = knn::test::random_matrix(3, 96, rng, 0.0f, 1.0f);
  struct Case {
    knn::Matrix train, q;
  };
  const Case cases[] = {{wide(5000, 33), wide(70, 33)}, {wide(300, 700), wide(20, 700)}, {near, near_q}};
  for (bool sgemm : {false, true}) {
    if (sgemm) setenv("KNN_GPU_SGEMM", "1", 1);
    for (const Case& c : cases)
      for (auto m : {knn::Metric::l2, knn::Metric::cosine})
        for (std::size_t k : {std::size_t{1}, std::size_t{16}, std::size_t{300}}) {
          const std::string what = std::string(sgemm ? "float32 FMA" : "split TF32") + " n=" + std::to_string(c.train.rows) +
                                   " d=" + std::to_string(c.train.cols) + " k=" + std::to_string(k) + " " + knn::to_string(m);
          expect_identical(run(knn::Device::cuda, c.train, c.q, k, m), run(knn::Device::cpu, c.train, c.q, k, m), what);
        }
    if (sgemm) unsetenv("KNN_GPU_SGEMM");
  }
}

// Values whose products fall under float's normal range, where tensor cores and cuBLAS may
// flush to zero: every precision keeps the CPU's answer (the bounds' absolute part).
TEST(CudaBackend, ValuesUnderFloatsNormalRangeStayExact) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto spread = [&](std::size_t rows, std::size_t cols, float lo_exp, float hi_exp) {
    return knn::test::log_spread_matrix(rows, cols, rng, lo_exp, hi_exp);
  };
  const knn::Matrix sets[][2] = {{spread(3000, 16, -30.0f, -25.0f), spread(40, 16, -30.0f, -25.0f)},
                                 {spread(3001, 40, -44.0f, -18.0f), spread(40, 40, -44.0f, -18.0f)}};
  for (const auto& set : sets)
    for (auto m : kMetrics)
      for (std::size_t k : {1u, 20u}) {
        const auto cpu = run(knn::Device::cpu, set[0], set[1], k, m);
        for (auto p : {knn::Precision::fp32, knn::Precision::tf32})
          expect_identical(run(knn::Device::cuda, set[0], set[1], k, m, nullptr, p), cpu,
                           std::string(p == knn::Precision::fp32 ? "fp32" : "tf32") + " n=" + std::to_string(set[0].rows) + " k=" + std::to_string(k) +
                               " " + knn::to_string(m));
      }
}

TEST(CudaBackend, MoreTiedRowsThanSharedMemoryRanks) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // 3,000 copies of one row and 2,000 of another among random ones: for a query at either row
  // every copy is a candidate, past what one block ranks in shared memory, so those lists are
  // ranked by the segmented sort (two in one group); queries elsewhere take the ordinary lists.
  // All must still equal the CPU's, ties by index.
  auto train = knn::test::random_matrix(9000, 24, rng);
  for (std::size_t i = 0; i < train.rows; i += 3) std::copy_n(train.row(1), train.cols, train.row(i));
  for (std::size_t i = 4; i < 6000; i += 3) std::copy_n(train.row(4), train.cols, train.row(i));
  knn::Matrix q(4, train.cols);
  std::copy_n(train.row(1), train.cols, q.row(0));
  std::copy_n(train.row(2), train.cols, q.row(1));
  for (std::size_t j = 0; j < q.cols; ++j) q(2, j) = 0.5f;
  std::copy_n(train.row(4), train.cols, q.row(3));
  for (auto m : kMetrics)
    for (std::size_t k : {1u, 3u, 64u, 2048u, 2049u}) {
      const std::string what = std::string(knn::to_string(m)) + " k=" + std::to_string(k);
      const auto cpu = run(knn::Device::cpu, train, q, k, m);
      expect_identical(run(knn::Device::cuda, train, q, k, m), cpu, what);
      if (m != knn::Metric::l1) expect_identical(run(knn::Device::cuda, train, q, k, m, nullptr, knn::Precision::tf32), cpu, what + " tf32");
    }
}

TEST(CudaBackend, OneBackendServesSearchesOfEveryShapeInTurn) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // The backend keeps its buffers between searches: large after small, small after large, and
  // k on both sides of the two-pass path's limit must all find the right neighbours.
  knn::BackendOptions o;
  o.device = knn::Device::cuda;
  const auto gpu = knn::make_backend(o);
  const auto cpu = knn::make_backend({knn::Device::cpu});
  const std::size_t shapes[][4] = {{50, 3, 7, 5}, {30000, 40, 300, 2100}, {100, 5, 3, 1}, {30000, 40, 300, 10}, {2000, 70, 900, 300}};
  for (const auto& s : shapes) {
    const auto train = knn::test::random_matrix(s[0], s[1], rng);
    const auto q = knn::test::random_matrix(s[2], s[1], rng);
    knn::SearchRequest r;
    r.train = &train;
    r.queries = q;
    r.k = s[3];
    expect_identical(knn::search(*gpu, r), knn::search(*cpu, r), "n=" + std::to_string(s[0]) + " k=" + std::to_string(s[3]));
  }
}

TEST(CudaBackend, ExcludedRows) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto train = knn::test::random_matrix(1500, 12, rng);
  std::vector<std::int64_t> ex(train.rows);
  for (std::size_t i = 0; i < ex.size(); ++i) ex[i] = static_cast<std::int64_t>(i);
  for (auto m : kMetrics)
    for (std::size_t k : {1u, 30u, 1499u})
      expect_identical(run(knn::Device::cuda, train, train, k, m, ex.data()), run(knn::Device::cpu, train, train, k, m, ex.data()),
                       "exclude");
}

// k above the two-pass path's limit: tau is each query's k-th upper bound from knn::prim's radix
// select, which runs a block a query from 1,024 queries up and splits the rows of fewer queries
// into chunks. A third of the training rows are copies of others (ties at the k-th), and with
// every row excluded from its own query's list one row per query is masked.
TEST(CudaBackend, LargeKOnBothWaysOfTheRadixSelect) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto train = knn::test::random_matrix(2500, 16, rng);
  for (std::size_t i = 0; i < train.rows; i += 3) std::copy_n(train.row(rng() % train.rows), train.cols, train.row(i));
  const auto many = knn::test::random_matrix(1030, 16, rng);
  const auto few = knn::test::random_matrix(6, 16, rng);
  for (auto m : kMetrics)
    for (std::size_t k : {2049u, 2400u, 2500u}) {
      const std::string what = std::string(knn::to_string(m)) + " k=" + std::to_string(k);
      for (const knn::Matrix* q : {&many, &few}) {
        const auto cpu = run(knn::Device::cpu, train, *q, k, m);
        expect_identical(run(knn::Device::cuda, train, *q, k, m), cpu, what + " queries=" + std::to_string(q->rows));
        if (m != knn::Metric::l1)
          expect_identical(run(knn::Device::cuda, train, *q, k, m, nullptr, knn::Precision::tf32), cpu,
                           what + " tf32 queries=" + std::to_string(q->rows));
      }
    }
  std::vector<std::int64_t> ex(train.rows);
  for (std::size_t i = 0; i < ex.size(); ++i) ex[i] = static_cast<std::int64_t>(i);
  for (auto m : kMetrics)
    expect_identical(run(knn::Device::cuda, train, train, train.rows - 1, m, ex.data()),
                     run(knn::Device::cpu, train, train, train.rows - 1, m, ex.data()), std::string("exclude ") + knn::to_string(m));
}

// Large k with most rows rejected near tau: 20,000 training rows of which k = 2,100 to 3,000 are
// kept, a fifth of them copies of others (ties at the k-th), queries that are training rows with
// their own row excluded, in fp32, tf32 (FP16 operands for l2) and every metric. The candidate
// passes (count_candidates, write_candidates) must agree row for row, keep row order, and keep
// every row tied with the k-th.
TEST(CudaBackend, LargeKRejectsMostRowsAndKeepsTheTies) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto train = knn::test::random_matrix(20000, 24, rng);
  for (std::size_t i = 0; i < train.rows; i += 5) std::copy_n(train.row(rng() % train.rows), train.cols, train.row(i));
  knn::Matrix q(40, train.cols);
  std::vector<std::int64_t> ex(q.rows);
  for (std::size_t i = 0; i < q.rows; ++i) {
    ex[i] = static_cast<std::int64_t>(rng() % train.rows);
    std::copy_n(train.row(static_cast<std::size_t>(ex[i])), train.cols, q.row(i));
  }
  for (auto m : kMetrics)
    for (std::size_t k : {2100u, 3000u})
      for (const std::int64_t* exclude : {static_cast<const std::int64_t*>(nullptr), static_cast<const std::int64_t*>(ex.data())}) {
        const std::string what = std::string(knn::to_string(m)) + " k=" + std::to_string(k) + (exclude ? " excluded" : "");
        const auto cpu = run(knn::Device::cpu, train, q, k, m, exclude);
        expect_identical(run(knn::Device::cuda, train, q, k, m, exclude, knn::Precision::fp32), cpu, what + " fp32");
        if (m != knn::Metric::l1)
          expect_identical(run(knn::Device::cuda, train, q, k, m, exclude, knn::Precision::tf32), cpu, what + " tf32");
      }
}

// Training rows ordered from far to near: tau's pass reads a sample of each row (one step in
// several, for small k), and here the sample holds none of the nearest, so tau is loose, many
// rows become candidates, lists overflow into the second round and past shared memory to the
// host. The answer must not change.
TEST(CudaBackend, SampledThresholdFromFarRowsKeepsTheAnswer) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::size_t n = 40000, d = 8;
  auto train = knn::test::random_matrix(n, d, rng, -0.01f, 0.01f);
  for (std::size_t i = 0; i < n; ++i) train.values[i * d] += static_cast<float>(n - i) * 0.001f;  // row 0 farthest
  const auto q = knn::test::random_matrix(64, d, rng, -0.01f, 0.01f);
  for (const char* fused : {"0", "1"}) {  // the fused path's second round takes its own pass
    const knn::test::ScopedEnv env("KNN_GPU_FUSED", fused);
    for (auto p : {knn::Precision::fp32, knn::Precision::tf32})
      for (std::size_t k : {1u, 10u, 100u})
        expect_identical(run(knn::Device::cuda, train, q, k, knn::Metric::l2, nullptr, p),
                         run(knn::Device::cpu, train, q, k, knn::Metric::l2),
                         "far-to-near rows, k = " + std::to_string(k) + ", KNN_GPU_FUSED=" + fused);
  }
}

// Products and candidates in one kernel (l2, tensor cores, at most 128 product terms, k up to
// 2,048), which KNN_GPU_FUSED=1 asks for, and the default path: odd feature counts (copies
// of 4 bytes), split float32 operands of up to 126 terms, FP16 ones (tf32's default, fused or
// written) and TF32 ones (KNN_GPU_FP16=0) of up to 128, wider rows (200 and 784 features: the
// wide kernel on FP16 operands, the written products otherwise: 784 terms take the wgmma kernel
// on a Hopper build and device), more queries than a block holds
// and a part of one, excluded rows, and rows repeated so that ties cross blocks. FP16 operands of
// 33 to 128 terms take the fused pass's wgmma kernel on Hopper, and mma.sync's with
// KNN_GPU_WGMMA=0.
TEST(CudaBackend, FusedProductsAndCandidatesGiveTheCpuAnswer) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::size_t shapes[][3] = {{1, 1, 1},       {37, 5, 300},     {3000, 7, 129}, {9000, 42, 257},
                                   {6000, 128, 130}, {2000, 3, 50},    {3000, 200, 300}, {1500, 784, 133}};
  for (const auto& s : shapes) {
    auto train = knn::test::random_matrix(s[0], s[1], rng, -1.0f, 1.0f);
    for (std::size_t i = 1; i < train.rows; i += 3) std::copy_n(train.row(i - 1), train.cols, train.row(i));  // ties
    auto q = knn::test::random_matrix(s[2], s[1], rng, -1.0f, 1.0f);
    for (std::size_t i = 0; i < std::min(q.rows, train.rows); i += 2) std::copy_n(train.row(i), q.cols, q.row(i));  // exact hits
    std::vector<std::int64_t> ex(q.rows);
    for (std::size_t i = 0; i < ex.size(); ++i) ex[i] = i % 2 == 0 && i < train.rows ? static_cast<std::int64_t>(i) : -1;
    for (std::size_t k : {std::size_t{1}, std::size_t{10}, std::size_t{33}, std::size_t{300}}) {
      if (k > s[0]) continue;
      for (const std::int64_t* exclude : {static_cast<const std::int64_t*>(nullptr), static_cast<const std::int64_t*>(ex.data())}) {
        if (exclude && k >= s[0]) continue;  // a query's own row out leaves n - 1
        const auto cpu = run(knn::Device::cpu, train, q, k, knn::Metric::l2, exclude);
        for (const char* fused : {"1", "0"}) {
          const knn::test::ScopedEnv env("KNN_GPU_FUSED", fused);
          for (auto p : {knn::Precision::fp32, knn::Precision::tf32})
            for (const char* fp16 : {"", "0"}) {
              if (*fp16 && p != knn::Precision::tf32) continue;  // only the TF32 pass reads it
              const knn::test::ScopedEnv operands("KNN_GPU_FP16", fp16);
              for (const char* wgmma : {"", "0"}) {
                if (*wgmma && (*fp16 || p != knn::Precision::tf32)) continue;  // FP16 operands only
                const knn::test::ScopedEnv hopper("KNN_GPU_WGMMA", wgmma);
                const std::string what = "n=" + std::to_string(s[0]) + " d=" + std::to_string(s[1]) + " q=" + std::to_string(s[2]) +
                                         " k=" + std::to_string(k) + (exclude ? " excluded" : "") +
                                         (p == knn::Precision::tf32 ? " tf32" : " fp32") + " KNN_GPU_FUSED=" + fused +
                                         " KNN_GPU_FP16=" + fp16 + " KNN_GPU_WGMMA=" + wgmma;
                expect_identical(run(knn::Device::cuda, train, q, k, knn::Metric::l2, exclude, p), cpu, what);
              }
            }
        }
      }
    }
  }
}

// The fused pass's cheap test (fused_cheap_limit) and the FP16 operands' scaling (fp16_limits),
// fused (16, 100 and 200 features: the fused pass's kernels, 100 a partial last 64 terms; on
// Hopper 100 takes the wgmma kernel, and mma.sync's with KNN_GPU_WGMMA=0) and written (KNN_GPU_FUSED=0, and k
// above 2,048, which the fused pass never takes), at scales where their limits change form: norms past 2^120 (every product takes the exact test),
// products under float's normal range (and rows under FP16's smallest scaling), columns 2^-2
// apart in scale (the small ones FP16 subnormals once scaled), zero rows, and values near 1 whose
// distances differ in their last bits (rows a few ulps apart).
TEST(CudaBackend, Fp16OperandsAndTheCheapTestKeepTheAnswerAtExtremeScales) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const std::size_t d : {std::size_t{16}, std::size_t{100}, std::size_t{200}})  // the fused pass's kernels
  for (const float scale : {0x1p60f, 0x1p-70f, 1.0f, 0.0f}) {  // 0: column f times 2^-2f
    auto train = knn::test::random_matrix(3000, d, rng, -1.0f, 1.0f);
    auto q = knn::test::random_matrix(200, d, rng, -1.0f, 1.0f);
    for (std::size_t i = 1; i < train.rows; i += 2) {  // each odd row a few ulps from the one before
      std::copy_n(train.row(i - 1), train.cols, train.row(i));
      float& x = train.row(i)[i % train.cols];
      for (std::size_t u = 0; u < 1 + i % 3; ++u) x = std::nextafter(x, 2.0f);
    }
    for (knn::Matrix* m : {&train, &q})
      for (std::size_t i = 0; i < m->values.size(); ++i)
        m->values[i] *= scale != 0.0f ? scale : std::ldexp(1.0f, -2 * static_cast<int>(i % m->cols));
    std::fill_n(train.row(5), train.cols, 0.0f);
    std::fill_n(q.row(3), q.cols, 0.0f);
    for (std::size_t k : {std::size_t{1}, std::size_t{10}, std::size_t{2100}}) {
      const auto cpu = run(knn::Device::cpu, train, q, k, knn::Metric::l2);
      for (const char* fused : {"1", "0"}) {
        if (k > 2048 && *fused == '1') continue;  // the same written path as "0"
        const knn::test::ScopedEnv env("KNN_GPU_FUSED", fused);
        for (auto p : {knn::Precision::fp32, knn::Precision::tf32})
          for (const char* fp16 : {"", "0"}) {
            if (*fp16 && p != knn::Precision::tf32) continue;
            const knn::test::ScopedEnv operands("KNN_GPU_FP16", fp16);
            for (const char* wgmma : {"", "0"}) {
              if (*wgmma && (*fp16 || p != knn::Precision::tf32)) continue;  // FP16 operands only
              const knn::test::ScopedEnv hopper("KNN_GPU_WGMMA", wgmma);
              expect_identical(run(knn::Device::cuda, train, q, k, knn::Metric::l2, nullptr, p), cpu,
                               "d=" + std::to_string(d) + " scale " + std::to_string(scale) + " k=" + std::to_string(k) +
                                   (p == knn::Precision::tf32 ? " tf32" : " fp32") + " KNN_GPU_FUSED=" + fused + " KNN_GPU_FP16=" + fp16 +
                                   " KNN_GPU_WGMMA=" + wgmma);
            }
          }
      }
    }
  }
}

// tau of the fused path is tight as well as valid: from the sample's pass in the product kernel
// (Hopper; KNN_GPU_TIMING names its stage "sample-tau") or from the sample's written products
// (KNN_GPU_WGMMA=0, "tau"), the first round's lists hold nearly every query's candidates, so few
// queries are collected again (KNN_GPU_TIMING prints how many). A tau left at +inf, or far above
// the sample's k-th bound, sends every query to the second round while the answer stays right.
// From k = 17 to 1,024 tau is a guess from a sparse sample (guessed_tau_rank), which the ranking
// checks: one too low sends its query to the second round too.
TEST(CudaBackend, FusedTauKeepsTheFirstRoundsListsShort) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto train = knn::test::random_matrix(40000, 64, rng, 0.0f, 1.0f);
  const auto q = knn::test::random_matrix(600, 64, rng, 0.0f, 1.0f);
  const knn::test::ScopedEnv fused("KNN_GPU_FUSED", "1"), timing("KNN_GPU_TIMING", "1");
  for (std::size_t k : {std::size_t{1}, std::size_t{10}, std::size_t{16}, std::size_t{300}, std::size_t{1000}})
    for (const char* wgmma : {"", "0"}) {
      const knn::test::ScopedEnv hopper("KNN_GPU_WGMMA", wgmma);
      testing::internal::CaptureStderr();
      const auto gpu = run(knn::Device::cuda, train, q, k, knn::Metric::l2, nullptr, knn::Precision::tf32);
      const std::string log = testing::internal::GetCapturedStderr();
      const bool in_kernel = log.find(" sample-tau ") != std::string::npos;
      const std::string what = "k=" + std::to_string(k) + " KNN_GPU_WGMMA=" + wgmma + (in_kernel ? ", tau in the kernel" : ", written sample");
      if (*wgmma) EXPECT_FALSE(in_kernel) << what << ": KNN_GPU_WGMMA=0 keeps the written sample";
      std::printf("%s\n", what.c_str());  // which path this device took
      expect_identical(gpu, run(knn::Device::cpu, train, q, k, knn::Metric::l2), what);
      const auto at = log.find(" queries collected again");
      ASSERT_NE(at, std::string::npos) << what << ": no count of the second round in\n" << log;
      const auto line = log.rfind("gpu stages: ", at);
      const std::size_t again = std::stoul(log.substr(line + 12, at - line - 12));
      EXPECT_LE(again, q.rows / 20) << what << ": " << log.substr(line, at - line);
    }
}

// A guessed tau (k = 17 to 1,024 on the fused path's written sample, here every 8th row) that the
// training rows make wrong in each way it can be, the answer the CPU's all the same. The queries
// sit at one point; `near` of the sample's rows lie at squared distance 1 from it, the rest of the
// sample far (9), and the other rows in a band from 1 up, rho rows to a unit of squared distance.
// The guess (the sample's bound of rank ceil((k + 4 sqrt(8k)) / 8), one of the near rows) lies
// just above 1, and the band's density decides what the ranking finds: a sparse band leaves fewer
// than k candidates; a middle one k or more, but a k-th distance above the guess (rows within the
// margin under it, beyond it in truth); a dense one more candidates than the first round's lists
// hold. Each sends its queries to the second round with a valid tau (the k-th distance's, or the
// sample's k-th bound); a query's excluded row is one of the near sample rows.
namespace {

void expect_guessed_tau_checked(std::size_t k, std::size_t near, std::initializer_list<double> rhos) {
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + ", k " + std::to_string(k));
  std::mt19937_64 rng(seed);
  const std::size_t n = 40000, d = 48;
  auto q = knn::test::random_matrix(200, d, rng, -1e-4f, 1e-4f);
  for (float& v : q.values) v += 0.5f;
  std::vector<std::int64_t> ex(q.rows);
  for (std::size_t i = 0; i < ex.size(); ++i) ex[i] = static_cast<std::int64_t>(8 * (i % near));
  const knn::test::ScopedEnv fused("KNN_GPU_FUSED", "1"), stride("KNN_GPU_FUSED_STRIDE", "8"), timing("KNN_GPU_TIMING", "1");
  std::size_t again_somewhere = 0;
  for (const double rho : rhos) {
    knn::Matrix train(n, d);
    std::fill(train.values.begin(), train.values.end(), 0.5f);
    std::size_t band = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double s = i % 8 == 0 ? (i < 8 * near ? 1.0 : 9.0) : 1.0 + static_cast<double>(band++) / rho;
      train.row(i)[i % d] += static_cast<float>(std::sqrt(s));
    }
    for (const std::int64_t* exclude : {static_cast<const std::int64_t*>(nullptr), static_cast<const std::int64_t*>(ex.data())}) {
      const auto cpu = run(knn::Device::cpu, train, q, k, knn::Metric::l2, exclude);
      for (const char* wgmma : {"", "0"}) {
        const knn::test::ScopedEnv hopper("KNN_GPU_WGMMA", wgmma);
        const std::string what = "rho " + std::to_string(rho) + (exclude ? " excluded" : "") + " KNN_GPU_WGMMA=" + wgmma;
        testing::internal::CaptureStderr();
        const auto gpu = run(knn::Device::cuda, train, q, k, knn::Metric::l2, exclude, knn::Precision::tf32);
        const std::string log = testing::internal::GetCapturedStderr();
        expect_identical(gpu, cpu, what);
        const auto at = log.find(" queries collected again");
        ASSERT_NE(at, std::string::npos) << what << ": no count of the second round in\n" << log;
        const auto line = log.rfind("gpu stages: ", at);
        const std::size_t again = std::stoul(log.substr(line + 12, at - line - 12));
        std::printf("k %zu, %s: %zu of %zu queries collected again\n", k, what.c_str(), again, q.rows);
        again_somewhere += again;
      }
    }
  }
  EXPECT_GT(again_somewhere, 0u) << "no guess was refuted: the test no longer reaches the second round";
}

}  // namespace

// k = 1,000: the guess is the sample's 170th bound of 400 near rows; the lists are long
// (rank_candidates).
TEST(CudaBackend, FusedGuessedTauIsCheckedByTheRanking) {
  REQUIRE_GPU();
  expect_guessed_tau_checked(1000, 400, {1000.0, 4000.0, 8000.0, 16000.0, 32000.0, 64000.0, 200000.0});
}

// k = 24: the guess is the sample's 10th bound of 12 near rows, and the band's densities put the
// first round's lists on both sides of the 64 candidates that rank_short_lists takes, so that its
// own check of the guess (fewer than k, or a k-th distance above it) is reached as well as
// rank_candidates'.
TEST(CudaBackend, FusedGuessedTauIsCheckedByTheShortListRanking) {
  REQUIRE_GPU();
  expect_guessed_tau_checked(24, 12, {100.0, 1000.0, 4000.0, 16000.0, 64000.0, 200000.0, 1000000.0});
}

// Queries that tie with many training rows, so that the fused pass appends thousands of
// candidates a block. 2,000 queries (8 blocks, so that a block's part of the training rows spans
// barriers), every other one near a row repeated so that it ties with many: 20 rows repeated in
// turn (some 1,600 candidates a block between two barriers, and at k = 300 lists that overflow the
// first round), and one row repeated 5,000 times (32,000 candidates: past the first round's
// lists, and then in the second round's pass, whose lists hold them all). The answer is the
// CPU's, ties by index, on the default kernel for the device (wgmma on Hopper) and on mma.sync's.
TEST(CudaBackend, FusedPassKeepsEveryCandidateOfManyTies) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const knn::test::ScopedEnv env("KNN_GPU_FUSED", "1");
  for (const std::size_t d : {std::size_t{64}, std::size_t{100}})
    for (const std::size_t repeated : {std::size_t{20}, std::size_t{1}}) {
      auto train = knn::test::random_matrix(9000, d, rng, -1.0f, 1.0f);
      const std::size_t copies = repeated == 1 ? 5000 : 4000;
      for (std::size_t i = repeated; i < copies; ++i) std::copy_n(train.row(i % repeated), d, train.row(i));
      auto q = knn::test::random_matrix(2000, d, rng, -1.0f, 1.0f);
      for (std::size_t i = 0; i < q.rows; i += 2) {  // every other query near a repeated row
        std::copy_n(train.row(i % repeated), d, q.row(i));
        q.row(i)[i % d] += 0.01f;
      }
      for (std::size_t k : {std::size_t{1}, std::size_t{10}, std::size_t{300}}) {
        const auto cpu = run(knn::Device::cpu, train, q, k, knn::Metric::l2);
        for (const char* wgmma : {"", "0"}) {
          const knn::test::ScopedEnv hopper("KNN_GPU_WGMMA", wgmma);
          expect_identical(run(knn::Device::cuda, train, q, k, knn::Metric::l2, nullptr, knn::Precision::tf32), cpu,
                           "d=" + std::to_string(d) + " rows repeated " + std::to_string(repeated) + " k=" + std::to_string(k) +
                               " KNN_GPU_WGMMA=" + wgmma);
        }
      }
    }
}

// The fused pass's kernels for rows wider than 128 terms (KNN_GPU_FUSED=1, FP16 operands): on
// Hopper the warpgroup kernel for the first round, and the mma.sync one (KNN_GPU_WGMMA=0, and the
// second round everywhere). Small enough for compute-sanitizer: two blocks of queries (one
// partial), training tiles with a partial last one, 200 features (a partial last stage of terms)
// and 784 (Fashion-MNIST's 13 stages a tile), rows repeated so that ties cross tiles, queries that
// are training rows, and each query's own row excluded, at k = 1 and 5 and at k = 300 (lists that
// overflow the first round).
TEST(CudaBackend, WideFusedPassGivesTheCpuAnswer) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const std::size_t d : {std::size_t{200}, std::size_t{784}}) {
    auto train = knn::test::random_matrix(700, d, rng, 0.0f, 1.0f);
    for (std::size_t i = 1; i < train.rows; i += 5) std::copy_n(train.row(i - 1), train.cols, train.row(i));
    auto q = knn::test::random_matrix(300, d, rng, 0.0f, 1.0f);
    std::vector<std::int64_t> ex(q.rows);
    for (std::size_t i = 0; i < q.rows; ++i) {
      if (i % 3 == 0) std::copy_n(train.row(i * 2), train.cols, q.row(i));
      ex[i] = i % 3 == 0 ? static_cast<std::int64_t>(i * 2) : -1;
    }
    const knn::test::ScopedEnv env("KNN_GPU_FUSED", "1");
    for (std::size_t k : {std::size_t{1}, std::size_t{5}, std::size_t{300}})
      for (const std::int64_t* exclude : {static_cast<const std::int64_t*>(nullptr), static_cast<const std::int64_t*>(ex.data())}) {
        const auto cpu = run(knn::Device::cpu, train, q, k, knn::Metric::l2, exclude);
        for (const char* wgmma : {"", "0"}) {
          const knn::test::ScopedEnv hopper("KNN_GPU_WGMMA", wgmma);
          expect_identical(run(knn::Device::cuda, train, q, k, knn::Metric::l2, exclude, knn::Precision::tf32), cpu,
                           "d=" + std::to_string(d) + " k=" + std::to_string(k) + (exclude ? " excluded" : "") + " KNN_GPU_WGMMA=" + wgmma);
        }
      }
  }
}

// The wide warpgroup kernel's lists pruned before they are ranked (prune_lists): rows of values
// 0 to 3 only, so that many rows lie at the same distance from a query and the k-th nearest ties
// with others, whole groups of rows repeated, queries that are training rows, and the queries'
// own rows excluded; k = 1, 5 and 32 (at 32 a guessed tau from the written sample), where the
// first round prunes on Hopper, and k = 33, where it does not; lists of up to 16 are ranked two a
// warp (rank_short_lists), the last of an odd count alone. Against the CPU backend; the stage
// times say whether the lists were pruned, and with KNN_GPU_WGMMA=0 (no bounds kept) or
// KNN_GPU_PRUNE=0 they are not.
TEST(CudaBackend, WideFusedPrunedListsGiveTheCpuAnswer) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> level(0, 3);
  knn::Matrix train(6000, 300), q(701, 300);  // an odd count: the last list has no partner
  for (auto& v : train.values) v = static_cast<float>(level(rng));
  for (auto& v : q.values) v = static_cast<float>(level(rng));
  for (std::size_t i = 8; i < train.rows; i += 40) std::copy_n(train.row(i - 8), 8 * train.cols, train.row(i));
  std::vector<std::int64_t> ex(q.rows);
  for (std::size_t i = 0; i < q.rows; ++i) {
    if (i % 4 == 0) std::copy_n(train.row(i * 7), train.cols, q.row(i));
    ex[i] = i % 4 == 0 ? static_cast<std::int64_t>(i * 7) : -1;
  }
  const knn::test::ScopedEnv env("KNN_GPU_FUSED", "1"), timing("KNN_GPU_TIMING", "1");
  for (std::size_t k : {std::size_t{1}, std::size_t{5}, std::size_t{32}, std::size_t{33}})
    for (const std::int64_t* exclude : {static_cast<const std::int64_t*>(nullptr), static_cast<const std::int64_t*>(ex.data())}) {
      const auto cpu = run(knn::Device::cpu, train, q, k, knn::Metric::l2, exclude);
      for (const char* wgmma : {"", "0"})
        for (const char* whole : {"", "0"}) {
          if (*wgmma && *whole) continue;
          const knn::test::ScopedEnv hopper("KNN_GPU_WGMMA", wgmma), prune("KNN_GPU_PRUNE", whole);
          testing::internal::CaptureStderr();
          const auto gpu = run(knn::Device::cuda, train, q, k, knn::Metric::l2, exclude, knn::Precision::tf32);
          const std::string log = testing::internal::GetCapturedStderr();
          const bool pruned = log.find(" prune ") != std::string::npos;
          const std::string what = "k=" + std::to_string(k) + (exclude ? " excluded" : "") + " KNN_GPU_WGMMA=" + wgmma + " KNN_GPU_PRUNE=" + whole +
                                   (pruned ? ", pruned" : "");
          if (*wgmma || *whole || k > 32) EXPECT_FALSE(pruned) << what << ": only the wide warpgroup kernel keeps bounds, for k <= 32";
          // The sample's pass in the kernel runs on the warpgroup kernels alone: there the lists are pruned.
          if (!*whole && log.find(" sample-tau ") != std::string::npos) EXPECT_TRUE(pruned) << what << ": the wide warpgroup kernel ran";
          std::printf("%s\n", what.c_str());  // which path this device took
          expect_identical(gpu, cpu, what);
        }
    }
}

// The wide fused pass where a block takes many tiles of training rows: 10,000 queries (40 blocks
// of 256) against 5,000 rows (40 tiles of 128) leave each block of the candidate pass about 14
// tiles and each of the sample's pass several, so that a block starts a tile's sums afresh, and
// reuses the places of earlier tiles' norms, many times. KNN_GPU_FUSED=1 (on Hopper the
// warpgroup kernel, as by default for this shape; elsewhere wide_fused_collect) against the CPU
// backend, with rows repeated so that ties cross tiles.
TEST(CudaBackend, WideFusedPassOverManyTilesGivesTheCpuAnswer) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto train = knn::test::random_matrix(5000, 200, rng, 0.0f, 1.0f);
  for (std::size_t i = 1; i < train.rows; i += 97) std::copy_n(train.row(i - 1), train.cols, train.row(i));
  auto q = knn::test::random_matrix(10000, 200, rng, 0.0f, 1.0f);
  for (std::size_t i = 0; i < q.rows; i += 13) std::copy_n(train.row(i % train.rows), train.cols, q.row(i));
  const knn::test::ScopedEnv env("KNN_GPU_FUSED", "1");
  for (std::size_t k : {std::size_t{1}, std::size_t{5}, std::size_t{16}})
    expect_identical(run(knn::Device::cuda, train, q, k, knn::Metric::l2, nullptr, knn::Precision::tf32),
                     run(knn::Device::cpu, train, q, k, knn::Metric::l2), "k=" + std::to_string(k));
}

// The shapes where the fused pass runs by default (TF32, k <= 10, 10^6 training rows or more),
// with 16 and 128 features (one chunk of terms a stage, and two of FP16 or four of TF32
// operands), rows repeated so that ties cross its blocks and stages, and queries that are
// training rows: the default (FP16 operands; on Hopper the wgmma kernel, and mma.sync's with
// KNN_GPU_WGMMA=0), TF32 operands (KNN_GPU_FP16=0) and the written products (KNN_GPU_FUSED=0), and the default with the training rows prepared (which keeps their
// FP16 operands), against the CPU backend.
TEST(CudaBackend, MillionRowsTf32GiveTheCpuAnswer) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (std::size_t d : {std::size_t{16}, std::size_t{128}}) {
    auto train = knn::test::random_matrix(1000000, d, rng, 0.0f, 1.0f);
    for (std::size_t i = 1; i < train.rows; i += 1000) std::copy_n(train.row(i - 1), train.cols, train.row(i));
    auto q = knn::test::random_matrix(300, d, rng, 0.0f, 1.0f);
    for (std::size_t i = 0; i < q.rows; i += 7) std::copy_n(train.row(i * 3331), d, q.row(i));  // exact hits, some tied
    for (std::size_t k : {std::size_t{1}, std::size_t{10}, std::size_t{1000}}) {
      if (k == 1000 && d == 16) continue;  // the written sample's guessed tau: one width is enough
      const auto cpu = run(knn::Device::cpu, train, q, k, knn::Metric::l2);
      for (const char* fused : {"", "0"})
        for (const char* fp16 : {"", "0"})
          for (const char* wgmma : {"", "0"}) {
            if ((*fused && *fp16) || (*wgmma && (*fused || *fp16))) continue;
            const knn::test::ScopedEnv env("KNN_GPU_FUSED", fused), operands("KNN_GPU_FP16", fp16), hopper("KNN_GPU_WGMMA", wgmma);
            expect_identical(run(knn::Device::cuda, train, q, k, knn::Metric::l2, nullptr, knn::Precision::tf32), cpu,
                             "10^6 x " + std::to_string(d) + ", k=" + std::to_string(k) + " KNN_GPU_FUSED=" + fused + " KNN_GPU_FP16=" + fp16 +
                                 " KNN_GPU_WGMMA=" + wgmma);
          }
      knn::BackendOptions o;
      o.device = knn::Device::cuda;
      o.precision = knn::Precision::tf32;
      const auto b = knn::make_backend(o);
      const auto prepared = b->prepare(train);
      ASSERT_NE(prepared, nullptr) << "10^6 x " << d << " is kept on the GPU";
      knn::SearchRequest r;
      r.train = &train;
      r.queries = q;
      r.k = k;
      r.prepared = prepared.get();
      expect_identical(knn::search(*b, r), cpu, "10^6 x " + std::to_string(d) + ", k=" + std::to_string(k) + ", prepared");
    }
  }
}

TEST(CudaBackend, SmallMemoryBudgetGivesTheSameAnswer) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto train = knn::test::random_matrix(40000, 32, rng);
  const auto q = knn::test::random_matrix(700, 32, rng);
  const auto cpu = run(knn::Device::cpu, train, q, 16, knn::Metric::l2);
  // 8 MiB: the training rows (5 MiB) plus bounds for a few dozen queries per tile.
  expect_identical(run(knn::Device::cuda, train, q, 16, knn::Metric::l2, nullptr, knn::Precision::fp32, 8u << 20), cpu, "8 MiB");
  // 1 MiB cannot hold the training rows: they are searched in parts, with the same answer.
  expect_identical(run(knn::Device::cuda, train, q, 16, knn::Metric::l2, nullptr, knn::Precision::fp32, 1u << 20), cpu, "1 MiB");
  try {
    run(knn::Device::cuda, train, q, 16, knn::Metric::l2, nullptr, knn::Precision::fp32, 1u << 10);
    FAIL() << "a 1 KiB budget cannot hold one training row and one query";
  } catch (const knn::Error& e) {
    EXPECT_NE(std::string(e.what()).find("too small"), std::string::npos) << e.what();
  }
}

TEST(CudaBackend, TrainingRowsLargerThanTheBudgetAreSearchedInParts) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // 20,000 x 48 floats (3.8 MB) against a 512 KiB budget: parts of about 1,000 rows. Duplicated
  // rows put ties across the parts' borders; k = 1,500 exceeds a part; every metric; and each
  // query excluding a row (leave-one-out) where the query is a training row.
  auto train = knn::test::random_matrix(20000, 48, rng);
  for (std::size_t i = 0; i < 3000; ++i) {
    const std::size_t from = rng() % train.rows, to = rng() % train.rows;
    std::copy(train.row(from), train.row(from) + train.cols, train.row(to));
  }
  const auto q = knn::test::random_matrix(150, 48, rng);
  for (const auto metric : {knn::Metric::l2, knn::Metric::l1, knn::Metric::cosine})
    for (const std::size_t k : {std::size_t{1}, std::size_t{10}, std::size_t{1500}}) {
      const std::string what = std::string(knn::to_string(metric)) + " k=" + std::to_string(k);
      expect_identical(run(knn::Device::cuda, train, q, k, metric, nullptr, knn::Precision::fp32, 512u << 10),
                       run(knn::Device::cpu, train, q, k, metric), what);
    }
  std::vector<std::size_t> rows(200);
  for (auto& r : rows) r = rng() % train.rows;
  const auto own = knn::take_rows(train, rows);
  const std::vector<std::int64_t> exclude(rows.begin(), rows.end());
  for (const std::size_t k : {std::size_t{5}, std::size_t{1200}})
    expect_identical(run(knn::Device::cuda, train, own, k, knn::Metric::l2, exclude.data(), knn::Precision::tf32, 512u << 10),
                     run(knn::Device::cpu, train, own, k, knn::Metric::l2, exclude.data()), "excluded rows, k=" + std::to_string(k));
  // A model fitted under the budget keeps no copy on the GPU, and predicts as the CPU does.
  knn::ModelParams p;
  p.k = 7;
  p.backend.device = knn::Device::cuda;
  p.backend.device_memory_budget = 512u << 10;
  std::vector<double> target(train.rows);
  for (auto& t : target) t = static_cast<double>(rng() % 1000);
  knn::KnnRegressor gpu(p);
  gpu.fit(train, target);
  p.backend.device = knn::Device::cpu;
  knn::KnnRegressor cpu(p);
  cpu.fit(train, target);
  EXPECT_EQ(gpu.predict(q), cpu.predict(q));
}

// The model with weights `w` and k fitted on the same rows on each backend, then check(cpu, gpu).
template <class Model, class Target, class Check>
void on_both_backends(const char* w, std::size_t k, const knn::Matrix& x, const Target& t, Check&& check) {
  knn::ModelParams p;
  p.k = k;
  p.weights = knn::Weights::parse(w);
  p.backend.device = knn::Device::cpu;
  Model cpu(p);
  p.backend.device = knn::Device::cuda;
  Model gpu(p);
  cpu.fit(x, t);
  gpu.fit(x, t);
  check(cpu, gpu);
}

const char* const kModelWeights[] = {"uniform", "distance", "gaussian:0.5", "inverse", "subtract:0.5"};

TEST(CudaBackend, ModelsPredictTheSameOnRealData) {
  REQUIRE_GPU();
  for (const char* name : {"iris.csv", "wine.csv", "breast_cancer.csv"}) {
    const auto data = knn::load_csv(std::string(KNN_SOURCE_DIR) + "/data/" + name, {});
    for (const char* w : kModelWeights)
      on_both_backends<knn::KnnClassifier>(w, 7, data.features, data.labels, [&](const auto& cpu, const auto& gpu) {
        EXPECT_EQ(gpu.predict(data.features), cpu.predict(data.features)) << name << " " << w;
        const auto pc = cpu.predict_proba(data.features), pg = gpu.predict_proba(data.features);
        ASSERT_EQ(pc.size(), pg.size());
        for (std::size_t i = 0; i < pc.size(); ++i) EXPECT_NEAR(pg[i], pc[i], 1e-9 * std::max(1.0, std::fabs(pc[i])));
      });
  }
  const auto diabetes = knn::load_csv(std::string(KNN_SOURCE_DIR) + "/data/diabetes.csv", {});
  const auto y = knn::numeric_targets(diabetes);
  for (const char* w : kModelWeights)
    on_both_backends<knn::KnnRegressor>(w, 9, diabetes.features, y, [&](const auto& cpu, const auto& gpu) {
      const auto yc = cpu.predict(diabetes.features), yg = gpu.predict(diabetes.features);
      ASSERT_EQ(yc.size(), yg.size());
      for (std::size_t i = 0; i < yc.size(); ++i) EXPECT_NEAR(yg[i], yc[i], 1e-9 * std::fabs(yc[i])) << w;
    });
}

// Rows kept on the device under the default precision hold the operands of the pass auto takes for
// their columns: split parts below 8 columns, none from 8, FP16 copies for the fused pass from
// 10^6 rows. Searches of them answer as the CPU, on fresh random rows.
TEST(CudaBackend, RowsKeptUnderPrecisionAutoAnswerAsTheCpu) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  knn::BackendOptions o;
  o.device = knn::Device::cuda;
  ASSERT_EQ(o.precision, knn::Precision::automatic);
  const auto gpu = knn::make_backend(o);
  const std::size_t shapes[][3] = {{20000, 6, 200}, {20000, 40, 200}, {1000000, 24, 64}};
  for (const auto& s : shapes) {
    const auto train = knn::test::random_matrix(s[0], s[1], rng, -2.0f, 2.0f);
    const auto q = knn::test::random_matrix(s[2], s[1], rng, -2.0f, 2.0f);
    const auto kept = gpu->prepare(train);
    ASSERT_NE(kept, nullptr) << s[0] << " x " << s[1];
    for (const auto m : {knn::Metric::l2, knn::Metric::cosine})
      for (const std::size_t k : {std::size_t{1}, std::size_t{10}, std::size_t{300}}) {
        knn::SearchRequest r;
        r.train = &train;
        r.prepared = kept.get();
        r.queries = q;
        r.k = k;
        r.metric = m;
        const std::string what = std::to_string(s[0]) + " x " + std::to_string(s[1]) + " k=" + std::to_string(k) + " " + knn::to_string(m);
        expect_identical(knn::search(*gpu, r), run(knn::Device::cpu, train, q, k, m), what);
      }
  }
}

// A model read on the CPU backend and moved to the GPU (set_backend, as knn-cli does with a model
// file) keeps its rows on the GPU and answers as the CPU, on fresh random rows.
TEST(CudaBackend, ModelMovedToTheGpuAnswersAsTheCpu) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const knn::Matrix train = knn::test::random_matrix(3000, 24, rng, -2.0f, 2.0f);
  const knn::Matrix queries = knn::test::random_matrix(500, 24, rng, -2.5f, 2.5f);
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < train.rows; ++i) labels.push_back("c" + std::to_string(rng() % 4));
  knn::ModelParams p;
  p.k = 9;
  p.weights = knn::Weights::parse("distance");
  p.scaling = knn::Scaling::minmax;
  p.backend.device = knn::Device::cpu;
  knn::KnnClassifier cpu(p);
  cpu.fit(train, labels);
  const std::vector<std::uint8_t> bytes = cpu.save();
  knn::KnnClassifier moved = knn::KnnClassifier::load(bytes.data(), bytes.size(), p.backend);
  knn::BackendOptions gpu;
  gpu.device = knn::Device::cuda;
  moved.set_backend(gpu);
  EXPECT_STREQ(moved.backend().name(), "cuda");
  const knn::Neighbors a = moved.kneighbors(queries), b = cpu.kneighbors(queries);
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.distance, b.distance);
  EXPECT_EQ(moved.predict(queries), cpu.predict(queries));
  EXPECT_EQ(moved.save(), bytes);
}

// A fit while prepare_backend() is still starting the GPU scales the rows on the host meanwhile
// (KnnModel::fit_encoded); a fit with the GPU ready scales them on the GPU. Same model, bit for
// bit, and the same answers. Which branch the first fit takes depends on the timing (the backend
// is usually still starting: it was asked for just before); both must agree either way.
TEST(CudaBackend, FitWhileTheGpuStartsEqualsAFitOnTheGpu) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const knn::Matrix train = knn::test::random_matrix(4000, 31, rng, -3.0f, 5.0f);
  const knn::Matrix queries = knn::test::random_matrix(400, 31, rng, -4.0f, 6.0f);
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < train.rows; ++i) labels.push_back("c" + std::to_string(rng() % 5));
  knn::ModelParams p;
  p.k = 7;
  p.scaling = knn::Scaling::minmax;
  p.backend.device = knn::Device::cuda;
  p.backend.threads = 3;  // options of their own, so that no earlier test's backend is taken
  knn::prepare_backend(p.backend);
  knn::KnnClassifier starting(p);
  starting.fit(train, labels);
  knn::KnnClassifier ready(p);
  ready.fit(train, labels);
  EXPECT_STREQ(starting.backend().name(), "cuda");
  EXPECT_EQ(starting.save(), ready.save());
  const knn::Neighbors a = starting.kneighbors(queries), b = ready.kneighbors(queries);
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.distance, b.distance);
  EXPECT_EQ(starting.predict(queries), ready.predict(queries));
}

TEST(CudaBackend, SweepOnTheGpuEqualsTheCpu) {
  REQUIRE_GPU();
  const auto data = knn::load_csv(std::string(KNN_SOURCE_DIR) + "/data/wine.csv", {});
  knn::EvalOptions o;
  o.ks.clear();
  for (std::size_t k = 1; k <= 40; ++k) o.ks.push_back(k);
  o.weights = {knn::Weights::parse("uniform"), knn::Weights::parse("distance"), knn::Weights::parse("gaussian:0.3"),
               knn::Weights::parse("subtract:0.5")};
  o.metrics = {knn::Metric::l2, knn::Metric::l1};
  const auto evaluate_on = [&](const knn::Dataset& d, knn::Device device) {
    o.backend.device = device;
    return knn::evaluate(d, o);
  };
  const auto cpu = evaluate_on(data, knn::Device::cpu), gpu = evaluate_on(data, knn::Device::cuda);
  ASSERT_EQ(cpu.rows.size(), gpu.rows.size());
  for (std::size_t i = 0; i < cpu.rows.size(); ++i)
    for (std::size_t s = 0; s < cpu.rows[i].scores.size(); ++s) EXPECT_EQ(gpu.rows[i].scores[s].mean, cpu.rows[i].scores[s].mean);
  EXPECT_EQ(gpu.confusion, cpu.confusion);
  EXPECT_EQ(gpu.best, cpu.best);
  // Regression: the means, and so the scores, within 1e-9 relative.
  const auto diabetes = knn::load_csv(std::string(KNN_SOURCE_DIR) + "/data/diabetes.csv", {});
  o.task = knn::Task::regress;
  const auto rc = evaluate_on(diabetes, knn::Device::cpu), rg = evaluate_on(diabetes, knn::Device::cuda);
  ASSERT_EQ(rc.rows.size(), rg.rows.size());
  for (std::size_t i = 0; i < rc.rows.size(); ++i)
    for (std::size_t s = 0; s < rc.rows[i].scores.size(); ++s)
      EXPECT_NEAR(rg.rows[i].scores[s].mean, rc.rows[i].scores[s].mean, 1e-9 * std::max(1.0, std::fabs(rc.rows[i].scores[s].mean)));
}
