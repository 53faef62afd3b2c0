// Batched radix select (k smallest / largest per row) against a partial sort per row: many
// shapes and k, ties (all equal, few distinct), NaN and -0.0, sorted and reversed rows.
#include <knn/prim/device/device_radix_select.cuh>
#include <knn/prim/reference/radix_select.hpp>

#include <limits>

#include "select_cases.cuh"
#include "test_util.cuh"

namespace {
using namespace knn::prim;
using knn::prim::test::DeviceBuffer;
using knn::prim::test::TempStorage;
using knn::prim::test::Fill;
using knn::prim::test::make_matrix;

void check(const std::vector<float>& host, std::int64_t rows, std::int64_t cols, std::int64_t k, bool largest) {
  SCOPED_TRACE("rows " + std::to_string(rows) + " cols " + std::to_string(cols) + " k " + std::to_string(k) +
               (largest ? " largest" : " smallest"));
  std::vector<float> rv;
  std::vector<std::int32_t> ri;
  reference::select_k(host, rows, cols, k, largest, rv, ri);
  DeviceBuffer<float> in(host), values(rows * k);
  DeviceBuffer<std::int32_t> indices(rows * k);
  std::size_t bytes = 0;
  PRIM_ASSERT(radix_select_k(nullptr, bytes, in.get(), rows, cols, k, values.get(), indices.get(), largest));
  TempStorage temp(bytes);
  PRIM_ASSERT(radix_select_k(temp.get(), temp.bytes(), in.get(), rows, cols, k, values.get(), indices.get(), largest));
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto gv = values.download();
  const auto gi = indices.download();
  for (std::int64_t i = 0; i < rows * k; ++i) {
    ASSERT_EQ(gi[i], ri[i]) << "row " << i / k << " rank " << i % k;
    ASSERT_TRUE(test::same_bits(gv[i], rv[i])) << "row " << i / k << " rank " << i % k;
  }
}

TEST(DeviceRadixSelect, ShapesAndK) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  constexpr std::int64_t chunk = detail::RadixSelectPolicy::chunk_items;
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {
      {1, 1}, {3, 31}, {5, 32}, {4, 33}, {2, 1000}, {7, 4095}, {3, 4097}, {2, chunk}, {3, chunk + 1}, {2, 100003}};
  test::for_shapes_and_k(shapes, rng, check);
}

TEST(DeviceRadixSelect, TiesAndSpecialValues) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  test::for_ties_and_special_values(rng, check);
}

// Long rows take the sampled threshold; rows where it gathers too few or too many elements
// (all equal, sorted, reversed, a heavy minimum) go through the radix passes in the same call,
// beside rows it finished. Both load paths: rows of a multiple of 4 floats, and not.
TEST(DeviceRadixSelect, SampledThresholdAndRowsItMisses) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  for (std::int64_t cols : {std::int64_t{65536}, std::int64_t{40003}}) {
    const std::int64_t rows = 7;
    std::vector<float> m = make_matrix(rows, cols, Fill::random, rng);
    for (std::int64_t c = 0; c < cols; ++c) {
      m[1 * cols + c] = 2.5f;                                    // all equal
      m[2 * cols + c] = static_cast<float>(c);                   // sorted
      m[3 * cols + c] = static_cast<float>(cols - c);            // reversed
      m[4 * cols + c] = rng() % 4 ? m[4 * cols + c] : -1.f;      // a quarter tie at the minimum
      m[5 * cols + c] = static_cast<float>(rng() % 5);           // few distinct
    }
    for (std::int64_t k : {std::int64_t{1}, std::int64_t{10}, std::int64_t{100}, std::int64_t{1000}}) {
      check(m, rows, cols, k, false);
      check(m, rows, cols, k, true);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(DeviceRadixSelect, ManyRows) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  const std::int64_t rows = test::quick_run() ? 40 : 300, cols = 3000;
  const auto m = make_matrix(rows, cols, Fill::random, rng);
  check(m, rows, cols, 5, false);
  check(m, rows, cols, 100, false);
}

TEST(DeviceRadixSelect, RejectsBadArguments) {
  std::size_t bytes = 0;
  EXPECT_EQ(radix_select_k(nullptr, bytes, nullptr, 2, 10, 0, nullptr, nullptr).code, Errc::invalid_argument);
  EXPECT_EQ(radix_select_k(nullptr, bytes, nullptr, 2, 10, 11, nullptr, nullptr).code, Errc::invalid_argument);
  EXPECT_EQ(radix_select_k(nullptr, bytes, nullptr, -1, 10, 1, nullptr, nullptr).code, Errc::invalid_argument);
  EXPECT_TRUE(radix_select_k(nullptr, bytes, nullptr, 2, 10, 10, nullptr, nullptr).ok());
}

}  // namespace

namespace knn::prim::test {
Status all_headers_size_query(std::size_t& bytes);
}

TEST(AllHeaders, LinkTwiceAndAnswerSizeQueries) {
  std::size_t bytes = 0;
  EXPECT_TRUE(knn::prim::test::all_headers_size_query(bytes).ok());
  EXPECT_GT(bytes, 0u);
}
