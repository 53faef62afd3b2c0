// Min-max scaling on the GPU (CudaBackend::fit_scaler, ::fit_scaler_prepared and ::scale) against
// the host's Scaler, the oracle, on fresh random data: offsets, scales and every scaled value
// identical bit for bit, and the same ScaleOverflow. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ios>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "knn/knn.hpp"
#include "require_gpu.hpp"
#include "test_util.hpp"

namespace {

std::shared_ptr<const knn::Backend> gpu_backend(std::size_t budget = 0, knn::Precision p = knn::Precision::fp32) {
  knn::BackendOptions o;
  o.device = knn::Device::cuda;
  o.precision = p;
  o.device_memory_budget = budget;
  return knn::make_backend(o);
}

knn::Neighbors search_with(const knn::Backend& b, const knn::Matrix& train, const knn::Matrix& queries, std::size_t k,
                           knn::Metric m, const knn::Scaler* scaler) {
  knn::SearchRequest r;
  r.train = &train;
  r.queries = queries;
  r.k = k;
  r.metric = m;
  r.scaler = scaler;
  return knn::search(b, r);
}

template <class T>
std::string bits_of(T v) {
  std::ostringstream s;
  s << std::hexfloat << v;
  return s.str();
}

// Equal sizes and equal bytes (so +0.0 and -0.0 differ); the first difference otherwise.
template <class T>
::testing::AssertionResult same_bits(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << got.size() << " values, expected " << want.size();
  if (got.empty() || std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) == 0) return ::testing::AssertionSuccess();
  for (std::size_t i = 0;; ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0)
      return ::testing::AssertionFailure() << "first difference at " << i << ": " << bits_of(got[i]) << ", expected "
                                           << bits_of(want[i]);
}

// Kinds of column, each with values for training rows and for queries (these reach up to four
// times the training extent beyond it, never far enough to overflow once scaled).
enum Kind { mixed, constant, negative, huge, tiny, zeros, zero_constant, far_offset, subnormal, kinds };
const char* const kKindNames[] = {"mixed signs", "constant", "negative", "huge (1e30)", "tiny (1e-30)", "with +-0 and minimum 0",
                                  "only +-0",    "1e6 + [0, 1)", "subnormal"};

float uniform(std::mt19937_64& rng, double lo, double hi) {
  return static_cast<float>(std::uniform_real_distribution<double>(lo, hi)(rng));
}

float signed_zero(std::mt19937_64& rng) { return rng() % 2 ? -0.0f : 0.0f; }

float train_value(Kind k, std::mt19937_64& rng) {
  switch (k) {
    case mixed: return uniform(rng, -1.0, 1.0);
    case constant: return 3.25f;
    case negative: return uniform(rng, -1000.0, -1.0);
    case huge: return uniform(rng, -1e30, 1e30);
    case tiny: return uniform(rng, -1e-30, 3e-30);
    case zeros: return rng() % 3 ? signed_zero(rng) : uniform(rng, 0.0, 5.0);
    case zero_constant: return signed_zero(rng);
    case far_offset: return uniform(rng, 1e6, 1e6 + 1.0);
    case subnormal: return uniform(rng, -1e-39, 1e-39);
    case kinds: break;
  }
  return 0.0f;
}

float query_value(Kind k, std::mt19937_64& rng) {
  switch (k) {
    case mixed: return uniform(rng, -4.0, 4.0);
    case constant: return rng() % 4 ? uniform(rng, -10.0, 10.0) : 3.25f;
    case negative: return uniform(rng, -4000.0, 3000.0);
    case huge: return uniform(rng, -4e30, 4e30);
    case tiny: return uniform(rng, -8e-30, 8e-30);
    case zeros: return rng() % 3 ? signed_zero(rng) : uniform(rng, -5.0, 10.0);
    case zero_constant: return rng() % 2 ? signed_zero(rng) : uniform(rng, -1.0, 1.0);
    case far_offset: return uniform(rng, 1e6 - 3.0, 1e6 + 4.0);
    case subnormal: return uniform(rng, -4e-39, 4e-39);
    case kinds: break;
  }
  return 0.0f;
}

// Column j is of kind (j + rotation) % kinds.
struct Data {
  knn::Matrix train, queries;
};

Data random_columns(std::size_t rows, std::size_t cols, std::size_t queries, std::size_t rotation, std::mt19937_64& rng) {
  Data d{knn::Matrix(rows, cols), knn::Matrix(queries, cols)};
  const auto kind = [&](std::size_t j) { return static_cast<Kind>((j + rotation) % kinds); };
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) d.train(i, j) = train_value(kind(j), rng);
  for (std::size_t i = 0; i < queries; ++i)
    for (std::size_t j = 0; j < cols; ++j)
      // Some queries repeat a training value: inside the range, at its ends.
      d.queries(i, j) = rows && rng() % 8 == 0 ? d.train(rng() % rows, j) : query_value(kind(j), rng);
  return d;
}

// The GPU's fit and transform against the host's on the same rows. The scaler the GPU fits starts
// from poisoned parameters (NaN, one column too many), so that any it leaves unset fails; the
// scaled rows are new or replace the input, which differs from them nearly everywhere.
void expect_same_scaling(const knn::Backend& gpu, const Data& d, const std::string& what) {
  SCOPED_TRACE(what);
  knn::Scaler host(knn::Scaling::minmax);
  const knn::Matrix want = host.fit_transform(d.train);
  const std::size_t cols = d.train.cols;
  const std::vector<double> nan(cols + 1, std::numeric_limits<double>::quiet_NaN());
  knn::Scaler fitted(knn::Scaling::minmax);
  fitted.set_min_max(nan, nan);
  const knn::Matrix got = gpu.fit_scaler(fitted, d.train);
  ASSERT_TRUE(same_bits(fitted.offset(), host.offset())) << "offsets";
  ASSERT_TRUE(same_bits(fitted.scale(), host.scale())) << "scales";
  ASSERT_EQ(got.rows, want.rows);
  ASSERT_EQ(got.cols, want.cols);
  ASSERT_TRUE(same_bits(got.values, want.values)) << "scaled training rows (" << want.cols << " columns)";

  knn::Matrix want_q = d.queries, got_q = d.queries;
  host.transform(want_q);
  gpu.scale(fitted, got_q);
  ASSERT_EQ(got_q.rows, want_q.rows);
  ASSERT_TRUE(same_bits(got_q.values, want_q.values)) << "scaled queries (" << want_q.cols << " columns)";

  // Fitted and kept on the device from one upload: the same parameters and rows, and the kept
  // rows (where the backend keeps them) are the scaled ones: searches with them give the CPU's
  // neighbours among the host's scaled rows.
  knn::Scaler kept_scaler(knn::Scaling::minmax);
  kept_scaler.set_min_max(nan, nan);
  std::shared_ptr<const knn::PreparedTrain> prepared;
  const knn::Matrix kept = gpu.fit_scaler_prepared(kept_scaler, d.train, prepared);
  ASSERT_TRUE(same_bits(kept_scaler.offset(), host.offset())) << "offsets, rows kept";
  ASSERT_TRUE(same_bits(kept_scaler.scale(), host.scale())) << "scales, rows kept";
  ASSERT_TRUE(same_bits(kept.values, want.values)) << "scaled training rows, rows kept";
  if (!prepared || want.rows == 0 || want_q.rows == 0) return;
  knn::SearchRequest r;
  r.train = &want;
  r.queries = want_q;
  r.k = std::min<std::size_t>(3, want.rows);
  const knn::Neighbors cpu = knn::search(*knn::make_backend({knn::Device::cpu}), r);
  r.prepared = prepared.get();
  const knn::Neighbors on_gpu = knn::search(gpu, r);
  ASSERT_EQ(on_gpu.index, cpu.index) << "neighbours among the rows kept on the device";
  ASSERT_TRUE(same_bits(on_gpu.distance, cpu.distance)) << "distances among the rows kept on the device";
}

// Shapes: one value, one row (every range 0, scale 1), a few odd rows, wide rows (784: MNIST's),
// many rows of few columns (above 65536 and not a multiple of a block).
const std::size_t kShapes[][3] = {{1, 1, 3}, {1, 7, 5}, {31, 3, 17}, {1000, 784, 200}, {100003, 5, 50001}};

void run_shapes(const knn::Backend& gpu, std::mt19937_64& rng, const std::string& label) {
  for (const auto& s : kShapes)
    // Every kind of column in every position: small shapes have few columns.
    for (std::size_t rotation = 0; rotation < (s[1] >= kinds ? 1 : static_cast<std::size_t>(kinds)); ++rotation) {
      const Data d = random_columns(s[0], s[1], s[2], rotation, rng);
      expect_same_scaling(gpu, d,
                          label + std::to_string(s[0]) + "x" + std::to_string(s[1]) + ", first column " +
                              kKindNames[rotation]);
      if (::testing::Test::HasFatalFailure()) return;
    }
}

// The host's ScaleOverflow and the GPU's for the same queries: same row, column, value and
// message, and the GPU leaves the queries as they were, as the host does.
void expect_same_overflow(const knn::Backend& gpu, const knn::Scaler& scaler, const knn::Matrix& queries, std::size_t row,
                          std::size_t col) {
  knn::Matrix host_q = queries, gpu_q = queries;
  std::size_t host_row = 0, host_col = 0;
  std::string host_message;
  try {
    scaler.transform(host_q);
    FAIL() << "the host's transform did not throw";
  } catch (const knn::ScaleOverflow& e) {
    host_row = e.row;
    host_col = e.col;
    host_message = e.what();
  }
  ASSERT_EQ(host_row, row);
  ASSERT_EQ(host_col, col);
  try {
    gpu.scale(scaler, gpu_q);
    FAIL() << "the GPU's scale did not throw";
  } catch (const knn::ScaleOverflow& e) {
    EXPECT_EQ(e.row, host_row);
    EXPECT_EQ(e.col, host_col);
    EXPECT_EQ(bits_of(e.value), bits_of(queries(row, col)));
    EXPECT_EQ(e.what(), host_message);
  }
  EXPECT_TRUE(same_bits(gpu_q.values, queries.values)) << "queries changed by a scaling that threw";
}

}  // namespace

TEST(CudaScale, MatchesTheHostScalerBitForBit) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  run_shapes(*gpu_backend(), rng, "");
}

// A budget of 64 KiB makes tiles of a few rows: minima and maxima fold over tiles, a first zero
// may lie in any of them, and the rows are uploaded again to be scaled.
TEST(CudaScale, MatchesTheHostScalerInTiles) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  run_shapes(*gpu_backend(std::size_t{64} << 10), rng, "tiles of 64 KiB, ");
}

// Where a column's minimum is zero, the host's offset is its first zero in row order, +0.0 or
// -0.0, and that sign decides the sign of a scaled -0.0 query value.
TEST(CudaScale, FirstZeroGivesTheOffsetItsSign) {
  REQUIRE_GPU();
  const auto gpu = gpu_backend();
  Data d{knn::Matrix(4, 4), knn::Matrix(2, 4)};
  d.train.values = {5.0f, 5.0f, -0.0f, 0.0f,   // column 2: only zeros, -0.0 first; column 3: +0.0 first
                    -0.0f, 0.0f, 0.0f, -0.0f,  //
                    0.0f, -0.0f, -0.0f, 0.0f,  //
                    3.0f, 3.0f, 0.0f, -0.0f};
  d.queries.values = {-0.0f, -0.0f, -0.0f, -0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  expect_same_scaling(*gpu, d, "signed zeros");
  knn::Scaler s(knn::Scaling::minmax);
  gpu->fit_scaler(s, d.train);
  EXPECT_TRUE(std::signbit(s.offset()[0]));
  EXPECT_FALSE(std::signbit(s.offset()[1]));
  EXPECT_TRUE(std::signbit(s.offset()[2]));
  EXPECT_FALSE(std::signbit(s.offset()[3]));
  // A first zero beyond the first tile (tiles of one row here).
  expect_same_scaling(*gpu_backend(1), d, "signed zeros, one row per tile");
}

// A training column of range 1e-30 and a query value of 1e30 overflow float32 once scaled: the
// GPU throws the host's ScaleOverflow, at the lowest row, then the lowest column.
TEST(CudaScale, OverflowIsTheHostsScaleOverflow) {
  REQUIRE_GPU();
  knn::Matrix train(2, 4);
  train.values = {0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 1e-30f, 1e-30f, 1.0f};
  knn::Scaler scaler(knn::Scaling::minmax);
  const knn::Matrix want = scaler.fit_transform(train);
  knn::Scaler fitted(knn::Scaling::minmax);
  const knn::Matrix got = gpu_backend()->fit_scaler(fitted, train);
  ASSERT_TRUE(same_bits(fitted.scale(), scaler.scale()));
  ASSERT_TRUE(same_bits(got.values, want.values));

  knn::Matrix q(5, 4);
  q(4, 1) = 1e30f;   // a lower column, a later row
  q(3, 2) = -1e30f;  // the one reported
  q(3, 3) = 1e30f;   // range 1: no overflow
  for (const std::size_t budget : {std::size_t{0}, std::size_t{16}}) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    expect_same_overflow(*gpu_backend(budget), fitted, q, 3, 2);
  }

  // Far apart in many rows, in different tiles of the smaller budget: the lowest row wins over a
  // lower column in a later row.
  knn::Matrix many(100003, 4);
  many(88888, 1) = 1e30f;
  many(77777, 2) = 1e30f;
  many(100002, 1) = -1e30f;
  for (const std::size_t budget : {std::size_t{0}, std::size_t{64} << 10}) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    expect_same_overflow(*gpu_backend(budget), fitted, many, 77777, 2);
  }
}

// Standard scaling, no scaling and empty matrices take the host's code: the same answers.
TEST(CudaScale, OtherKindsAndEmptyMatricesGiveTheHostAnswer) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto gpu = gpu_backend();
  for (const auto kind : {knn::Scaling::standard, knn::Scaling::none, knn::Scaling::minmax})
    for (const std::size_t rows : {std::size_t{0}, std::size_t{300}}) {
      SCOPED_TRACE(std::string(knn::to_string(kind)) + ", " + std::to_string(rows) + " rows");
      const Data d = random_columns(rows, 9, rows, 0, rng);
      knn::Scaler host(kind), fitted(kind);
      const knn::Matrix want = host.fit_transform(d.train);
      const knn::Matrix got = gpu->fit_scaler(fitted, d.train);
      EXPECT_TRUE(same_bits(fitted.offset(), host.offset()));
      EXPECT_TRUE(same_bits(fitted.scale(), host.scale()));
      EXPECT_TRUE(same_bits(got.values, want.values));
      knn::Matrix want_q = d.queries, got_q = d.queries;
      host.transform(want_q);
      gpu->scale(fitted, got_q);
      EXPECT_TRUE(same_bits(got_q.values, want_q.values));
    }
  // A scaler of other dimensions: the host's error.
  knn::Scaler s(knn::Scaling::minmax);
  gpu->fit_scaler(s, knn::test::random_matrix(10, 3, rng));
  knn::Matrix q = knn::test::random_matrix(2, 4, rng);
  EXPECT_THROW(gpu->scale(s, q), knn::Error);
}

// A model on the GPU scales its training rows and queries there, and predicts what the CPU's does.
TEST(CudaScale, ModelsScaleOnTheGpu) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Data d = random_columns(2000, 12, 300, 0, rng);
  std::vector<double> y(d.train.rows);
  for (auto& v : y) v = uniform(rng, -5.0, 5.0);
  std::vector<knn::Neighbors> nb;
  std::vector<std::vector<double>> pred;
  for (const auto dev : {knn::Device::cpu, knn::Device::cuda}) {
    knn::ModelParams p;
    p.k = 7;
    p.backend.device = dev;
    knn::KnnRegressor model(p);
    model.fit(d.train, y);
    nb.push_back(model.kneighbors(d.queries));
    pred.push_back(model.predict(d.queries));
    ASSERT_STREQ(model.backend().name(), knn::to_string(dev));
  }
  EXPECT_EQ(nb[1].index, nb[0].index);
  EXPECT_TRUE(same_bits(nb[1].distance, nb[0].distance));
  for (std::size_t i = 0; i < pred[0].size(); ++i) {
    const double a = pred[1][i], b = pred[0][i];
    EXPECT_TRUE(a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b))) << "query " << i << ": " << a << " vs " << b;
  }
}

// Queries given unscaled with the scaler in the request: the GPU scales them in device memory as
// they arrive, and every search equals the CPU's among the same rows with the host's scaled
// queries, bit for bit; the caller's queries stay as they were. Budgets of 2 MiB and 256 KiB make
// many tiles of queries, and training rows searched in parts (each part scales the queries again).
TEST(CudaScale, SearchesScaleTheQueriesOnTheGpu) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto cpu = knn::make_backend({knn::Device::cpu});
  const std::size_t shapes[][3] = {{1, 1, 3}, {3000, 12, 700}, {2000, 130, 300}};
  for (const auto& s : shapes)
    for (const auto kind : {knn::Scaling::minmax, knn::Scaling::standard}) {
      const Data d = random_columns(s[0], s[1], s[2], s[0] % kinds, rng);
      knn::Scaler scaler(kind);
      const knn::Matrix train = scaler.fit_transform(d.train);
      knn::Matrix scaled = d.queries;
      scaler.transform(scaled);
      for (const auto m : {knn::Metric::l2, knn::Metric::l1, knn::Metric::cosine})
        for (const std::size_t k : {std::size_t{1}, std::size_t{7}, std::size_t{300}}) {
          if (k > train.rows) continue;
          const knn::Neighbors want = search_with(*cpu, train, scaled, k, m, nullptr);
          for (const auto p : {knn::Precision::fp32, knn::Precision::tf32})
            for (const std::size_t budget : {std::size_t{0}, std::size_t{2} << 20, std::size_t{256} << 10})
              for (const char* fused : {"", "1"}) {
                if (*fused && (m != knn::Metric::l2 || k > 10 || budget)) continue;  // the fused pass: l2, small k
                const knn::test::ScopedEnv env("KNN_GPU_FUSED", fused);
                const std::string what = std::to_string(s[0]) + "x" + std::to_string(s[1]) + ", " + std::to_string(s[2]) + " queries, " +
                                         knn::to_string(kind) + ", " + knn::to_string(m) + ", k=" + std::to_string(k) +
                                         (p == knn::Precision::tf32 ? ", tf32" : ", fp32") + ", budget " + std::to_string(budget) +
                                         (*fused ? ", KNN_GPU_FUSED=1" : "");
                SCOPED_TRACE(what);
                knn::Matrix before = d.queries;
                const knn::Neighbors got = search_with(*gpu_backend(budget, p), train, d.queries, k, m, &scaler);
                ASSERT_EQ(got.index, want.index);
                ASSERT_TRUE(same_bits(got.distance, want.distance));
                ASSERT_TRUE(same_bits(d.queries.values, before.values)) << "the caller's queries changed";
              }
        }
    }
}

// 3,000 copies of one training row: a query there has more candidates than a block ranks in
// shared memory, so its list is ranked by the segmented sort, with the query as the device scaled it.
TEST(CudaScale, LongListsRankTheScaledQueries) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  knn::Matrix raw = knn::test::random_matrix(9000, 24, rng, -50.0f, 300.0f);
  for (std::size_t i = 0; i < raw.rows; i += 3)
    if (i / 3 < 6000) std::copy_n(raw.row(1), raw.cols, raw.row(i));
  knn::Matrix q(3, raw.cols);
  std::copy_n(raw.row(1), raw.cols, q.row(0));
  std::copy_n(raw.row(2), raw.cols, q.row(1));
  for (std::size_t j = 0; j < q.cols; ++j) q(2, j) = 0.5f;
  knn::Scaler scaler(knn::Scaling::minmax);
  const knn::Matrix train = scaler.fit_transform(raw);
  knn::Matrix scaled = q;
  scaler.transform(scaled);
  const auto cpu = knn::make_backend({knn::Device::cpu});
  for (const auto p : {knn::Precision::fp32, knn::Precision::tf32})
    for (const std::size_t k : {std::size_t{3}, std::size_t{2048}}) {
      SCOPED_TRACE("k=" + std::to_string(k) + (p == knn::Precision::tf32 ? ", tf32" : ", fp32"));
      const knn::Neighbors want = search_with(*cpu, train, scaled, k, knn::Metric::l2, nullptr);
      const knn::Neighbors got = search_with(*gpu_backend(0, p), train, q, k, knn::Metric::l2, &scaler);
      ASSERT_EQ(got.index, want.index);
      ASSERT_TRUE(same_bits(got.distance, want.distance));
    }
}

// A query value that overflows once scaled makes the search throw the host's ScaleOverflow (lowest
// row, then lowest column; the same message), with no result, from whichever tile or part holds
// it; a model on the GPU throws what a model on the CPU throws.
TEST(CudaScale, SearchesThrowTheHostsScaleOverflow) {
  REQUIRE_GPU();
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  knn::Matrix raw = knn::test::random_matrix(3000, 4, rng);
  for (std::size_t i = 0; i < raw.rows; ++i) raw(i, 1) = raw(i, 2) = i % 2 ? 1e-30f : 0.0f;  // range 1e-30
  knn::Scaler scaler(knn::Scaling::minmax);
  const knn::Matrix train = scaler.fit_transform(raw);
  knn::Matrix q = knn::test::random_matrix(5000, 4, rng);
  for (std::size_t i = 0; i < q.rows; ++i) q(i, 1) = q(i, 2) = 0.0f;
  q(4444, 1) = 1e30f;   // a lower column, a later row
  q(3333, 2) = -1e30f;  // the one reported
  q(3333, 3) = 1e30f;   // range about 2: no overflow
  std::string host_message;
  try {
    knn::Matrix h = q;
    scaler.transform(h);
    FAIL() << "the host's transform did not throw";
  } catch (const knn::ScaleOverflow& e) {
    ASSERT_EQ(e.row, 3333u);
    ASSERT_EQ(e.col, 2u);
    host_message = e.what();
  }
  for (const auto p : {knn::Precision::fp32, knn::Precision::tf32})
    for (const std::size_t budget : {std::size_t{0}, std::size_t{2} << 20, std::size_t{256} << 10}) {
      SCOPED_TRACE("budget " + std::to_string(budget) + (p == knn::Precision::tf32 ? ", tf32" : ", fp32"));
      try {
        search_with(*gpu_backend(budget, p), train, q, 5, knn::Metric::l2, &scaler);
        ADD_FAILURE() << "the search did not throw";
      } catch (const knn::ScaleOverflow& e) {
        EXPECT_EQ(e.row, 3333u);
        EXPECT_EQ(e.col, 2u);
        EXPECT_EQ(bits_of(e.value), bits_of(-1e30f));
        EXPECT_EQ(e.what(), host_message);
      }
      // The same backend's next search, without the overflow, is whole.
      knn::Matrix fine = q;
      fine(4444, 1) = fine(3333, 2) = 0.0f;
      knn::Matrix scaled = fine;
      scaler.transform(scaled);
      const knn::Neighbors want = search_with(*knn::make_backend({knn::Device::cpu}), train, scaled, 5, knn::Metric::l2, nullptr);
      const auto gpu = gpu_backend(budget, p);
      EXPECT_THROW(search_with(*gpu, train, q, 5, knn::Metric::l2, &scaler), knn::ScaleOverflow);
      const knn::Neighbors got = search_with(*gpu, train, fine, 5, knn::Metric::l2, &scaler);
      EXPECT_EQ(got.index, want.index);
      EXPECT_TRUE(same_bits(got.distance, want.distance));
    }
  std::vector<std::string> messages;
  for (const auto dev : {knn::Device::cpu, knn::Device::cuda}) {
    knn::ModelParams params;
    params.k = 3;
    params.backend.device = dev;
    knn::KnnRegressor model(params);
    model.fit(raw, std::vector<double>(raw.rows, 1.0));
    try {
      model.predict(q);
      ADD_FAILURE() << "predict did not throw on " << knn::to_string(dev);
    } catch (const knn::ScaleOverflow& e) {
      messages.push_back(e.what());
    }
  }
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[1], messages[0]);
  EXPECT_EQ(messages[0], host_message);
}
