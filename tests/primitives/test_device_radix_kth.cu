// Batched k-th value (radix_select_kth) against nth_element over the ordered bits of each row:
// many shapes and k, both ways of running the passes (a block a row, rows split into chunks),
// ties, NaN and -0.0, sorted and reversed rows, and values computed on the fly.
#include <knn/prim/device/device_radix_select.cuh>
#include <knn/prim/reference/radix_sort.hpp>

#include <algorithm>
#include <limits>

#include "select_cases.cuh"
#include "test_util.cuh"

namespace {
using namespace knn::prim;
using knn::prim::test::DeviceBuffer;
using knn::prim::test::TempStorage;
using detail::KthPath;
using knn::prim::test::Fill;
using knn::prim::test::make_matrix;

// What radix_select_kth writes for an element of ordered key `o`: +0.0 for zeros, 0x7fffffff
// for NaN, the value itself otherwise.
float canonical(std::uint32_t o) {
  const std::uint32_t b = (o & 0x80000000u) ? (o ^ 0x80000000u) : ~o;
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

std::vector<float> expected_kth(const std::vector<float>& host, std::int64_t rows, std::int64_t cols, std::int64_t k,
                                bool largest) {
  std::vector<float> out(rows);
  std::vector<std::uint32_t> keys(cols);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      const std::uint32_t o = reference::ordered_bits(host[r * cols + c]);
      keys[c] = largest ? ~o : o;
    }
    std::nth_element(keys.begin(), keys.begin() + (k - 1), keys.end());
    out[r] = canonical(largest ? ~keys[k - 1] : keys[k - 1]);
  }
  return out;
}

// Runs radix_select_kth over `rows` (a dense matrix or a functor) on the given path into a
// poisoned output, and compares with `want` bit for bit.
template <typename Rows>
void run_and_compare(Rows rows_in, std::int64_t rows, std::int64_t cols, std::int64_t k, bool largest, KthPath path,
                     const std::vector<float>& want) {
  SCOPED_TRACE(std::string(path == KthPath::split_rows ? "split rows" : path == KthPath::row_blocks ? "row blocks" : "automatic") +
               ", rows " + std::to_string(rows) + " cols " + std::to_string(cols) + " k " + std::to_string(k) +
               (largest ? " largest" : " smallest"));
  DeviceBuffer<float> out(rows);
  std::size_t bytes = 0;
  PRIM_ASSERT(detail::radix_kth_dispatch(nullptr, bytes, rows_in, rows, cols, k, out.get(), largest, 0, path));
  TempStorage temp(bytes);
  PRIM_ASSERT(detail::radix_kth_dispatch(temp.get(), temp.bytes(), rows_in, rows, cols, k, out.get(), largest, 0, path));
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto got = out.download();
  for (std::int64_t r = 0; r < rows; ++r)
    ASSERT_TRUE(test::same_bits(got[r], want[r])) << "row " << r << ": got " << got[r] << ", want " << want[r];
}

void check(const std::vector<float>& host, std::int64_t rows, std::int64_t cols, std::int64_t k, bool largest) {
  const auto want = expected_kth(host, rows, cols, k, largest);
  DeviceBuffer<float> in(host);
  for (KthPath path : {KthPath::row_blocks, KthPath::split_rows})
    run_and_compare(detail::MatrixRows{in.get(), cols}, rows, cols, k, largest, path, want);
}

TEST(DeviceRadixKth, ShapesAndK) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  const std::int64_t chunk = detail::RadixKthPolicy::min_chunk_items;
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {
      {1, 1}, {3, 31}, {5, 32}, {4, 33}, {2, 1000}, {7, 4095}, {3, 4097}, {2, chunk}, {3, chunk + 1}, {5, 3 * chunk + 5}, {2, 100003}};
  test::for_shapes_and_k(shapes, rng, check);
}

TEST(DeviceRadixKth, TiesAndSpecialValues) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  test::for_ties_and_special_values(rng, check);
}

// Values that differ only in their lowest bits (the third pass's digit), and all of one sign
// or both: every digit of the key decides.
TEST(DeviceRadixKth, NeighbouringFloats) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  const std::int64_t rows = 4, cols = 3000;
  std::vector<float> m(rows * cols);
  for (std::int64_t r = 0; r < rows; ++r) {
    float v = r % 2 ? -1.5f : 1.5f;
    for (std::int64_t c = 0; c < cols; ++c) {
      m[r * cols + c] = v;
      if (rng() % 3) v = std::nextafter(v, r < 2 ? 10.f : -10.f);
    }
    std::shuffle(m.begin() + r * cols, m.begin() + (r + 1) * cols, rng);
  }
  for (std::int64_t k : {std::int64_t{1}, std::int64_t{999}, std::int64_t{1500}, cols}) {
    check(m, rows, cols, k, false);
    check(m, rows, cols, k, true);
  }
}

// The automatic choice: a block a row (and no temp storage) from 1,024 rows up, chunks below.
TEST(DeviceRadixKth, AutomaticPathAndItsTempStorage) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  const std::int64_t many = detail::RadixKthPolicy::row_blocks_min_rows, cols = 300;
  for (std::int64_t rows : {many - 1, many + 5}) {
    const auto m = make_matrix(rows, cols, Fill::random, rng);
    std::size_t bytes = 0;
    PRIM_ASSERT(radix_select_kth(nullptr, bytes, static_cast<const float*>(nullptr), rows, cols, 5, nullptr));
    if (rows >= many) EXPECT_EQ(bytes, 1u);
    else EXPECT_GE(bytes, static_cast<std::size_t>(rows) * detail::RadixKthPolicy::bins * sizeof(unsigned));
    DeviceBuffer<float> in(m), out(rows);
    TempStorage temp(bytes);
    for (std::int64_t k : {std::int64_t{5}, std::int64_t{150}}) {
      PRIM_ASSERT(radix_select_kth(temp.get(), temp.bytes(), in.get(), rows, cols, k, out.get()));
      CUDA_ASSERT(cudaDeviceSynchronize());
      const auto want = expected_kth(m, rows, cols, k, false);
      const auto got = out.download();
      for (std::int64_t r = 0; r < rows; ++r) ASSERT_TRUE(test::same_bits(got[r], want[r])) << "rows " << rows << " row " << r;
      out.poison();
    }
  }
}

// Values computed on the fly: rows of a pitched matrix, negated, with every seventh element
// masked to NaN (as a kNN search masks rows it must not count).
struct NegatedMasked {
  const float* p;
  long long pitch;
  struct Row {
    const float* p;
    __device__ float operator()(long long c) const { return c % 7 == 3 ? __int_as_float(0x7fc00000) : -p[c]; }
  };
  __device__ Row row(long long r) const { return Row{p + r * pitch}; }
};

TEST(DeviceRadixKth, ValuesComputedOnTheFly) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  const std::int64_t rows = 6, cols = 20001, pitch = 20032;
  const auto m = make_matrix(rows, pitch, Fill::random, rng);
  std::vector<float> seen(rows * cols);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      seen[r * cols + c] = c % 7 == 3 ? std::numeric_limits<float>::quiet_NaN() : -m[r * pitch + c];
  DeviceBuffer<float> in(m);
  for (std::int64_t k : {std::int64_t{1}, std::int64_t{4000}, std::int64_t{17143}, std::int64_t{17144}, cols}) {
    for (bool largest : {false, true}) {
      const auto want = expected_kth(seen, rows, cols, k, largest);
      for (KthPath path : {KthPath::row_blocks, KthPath::split_rows})
        run_and_compare(NegatedMasked{in.get(), pitch}, rows, cols, k, largest, path, want);
      if (::testing::Test::HasFailure()) return;
    }
  }
  // The public entry point takes such rows too.
  DeviceBuffer<float> out(rows);
  std::size_t bytes = 0;
  PRIM_ASSERT(radix_select_kth(nullptr, bytes, NegatedMasked{in.get(), pitch}, rows, cols, 10, out.get()));
  TempStorage temp(bytes);
  PRIM_ASSERT(radix_select_kth(temp.get(), temp.bytes(), NegatedMasked{in.get(), pitch}, rows, cols, 10, out.get()));
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto want = expected_kth(seen, rows, cols, 10, false);
  const auto got = out.download();
  for (std::int64_t r = 0; r < rows; ++r) ASSERT_TRUE(test::same_bits(got[r], want[r])) << "row " << r;
}

TEST(DeviceRadixKth, RejectsBadArguments) {
  std::size_t bytes = 0;
  const float* none = nullptr;
  EXPECT_EQ(radix_select_kth(nullptr, bytes, none, 2, 10, 0, nullptr).code, Errc::invalid_argument);
  EXPECT_EQ(radix_select_kth(nullptr, bytes, none, 2, 10, 11, nullptr).code, Errc::invalid_argument);
  EXPECT_EQ(radix_select_kth(nullptr, bytes, none, -1, 10, 1, nullptr).code, Errc::invalid_argument);
  EXPECT_EQ(radix_select_kth(nullptr, bytes, none, 2, std::int64_t{1} << 31, 1, nullptr).code, Errc::invalid_argument);
  EXPECT_TRUE(radix_select_kth(nullptr, bytes, none, 2, 10, 10, nullptr).ok());
  EXPECT_TRUE(radix_select_kth(nullptr, bytes, none, 0, 0, 0, nullptr).ok());
  int fake = 0;
  EXPECT_EQ(radix_select_kth(&fake, bytes, none, 2, 10, 3, nullptr).code, Errc::invalid_argument);  // null input
}

}  // namespace
