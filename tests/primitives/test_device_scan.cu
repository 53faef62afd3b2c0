// Device-wide scans against the sequential reference: integer, floating and non-commutative
// operators, in place and out of place, over sizes around warps and tiles.
#include <knn/prim/device/device_scan.cuh>
#include <knn/prim/reference/scan.hpp>

#include "test_util.cuh"

namespace {
using namespace knn::prim;
using knn::prim::test::DeviceBuffer;
using knn::prim::test::TempStorage;

struct Affine {
  unsigned a, b;
};
struct Compose {
  KNN_PRIM_HD Affine operator()(const Affine& f, const Affine& g) const {
    return {f.a * g.a, f.b * g.a + g.b};
  }
};
bool operator==(const Affine& x, const Affine& y) { return x.a == y.a && x.b == y.b; }
std::ostream& operator<<(std::ostream& os, const Affine& f) { return os << "{" << f.a << "," << f.b << "}"; }

template <typename T>
std::vector<T> random_values(std::int64_t n, std::mt19937_64& rng) {
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_same_v<T, Affine>) x = {static_cast<unsigned>(rng()) | 1u, static_cast<unsigned>(rng())};
    // Small integers: float sums stay exact in any order up to n ~ 10^6.
    else if constexpr (std::is_floating_point_v<T>) x = static_cast<T>(rng() % 8);
    else x = static_cast<T>(rng());
  }
  return v;
}

template <typename T, typename Op>
void check_scans(std::int64_t n, Op op, T init, std::mt19937_64& rng) {
  SCOPED_TRACE("n = " + std::to_string(n));
  const auto host = random_values<T>(n, rng);
  std::vector<T> expect_incl(n), expect_excl(n);
  reference::inclusive_scan(host.data(), expect_incl.data(), n, op);
  reference::exclusive_scan(host.data(), expect_excl.data(), n, init, op);

  DeviceBuffer<T> in(host), out(n);
  std::size_t bytes = 0;
  PRIM_ASSERT(inclusive_scan(nullptr, bytes, in.get(), out.get(), op, n));
  {
    TempStorage temp(bytes);
    PRIM_ASSERT(inclusive_scan(temp.get(), temp.bytes(), in.get(), out.get(), op, n));
    CUDA_ASSERT(cudaDeviceSynchronize());
    const auto got = out.download();
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], expect_incl[i]) << "inclusive, i = " << i;
  }
  // Exclusive, in place.
  PRIM_ASSERT(exclusive_scan(nullptr, bytes, in.get(), in.get(), op, init, n));
  {
    TempStorage temp(bytes);
    PRIM_ASSERT(exclusive_scan(temp.get(), temp.bytes(), in.get(), in.get(), op, init, n));
    CUDA_ASSERT(cudaDeviceSynchronize());
    const auto got = in.download();
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], expect_excl[i]) << "exclusive, i = " << i;
  }
}

template <typename T>
std::vector<std::int64_t> scan_sizes() {
  return test::edge_sizes(detail::ScanPolicy<T>::tile_items);
}

TEST(DeviceScan, SumU32) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  for (auto n : scan_sizes<std::uint32_t>()) check_scans<std::uint32_t>(n, Sum{}, 5u, rng);
}

TEST(DeviceScan, SumU64) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  for (auto n : scan_sizes<std::uint64_t>()) check_scans<std::uint64_t>(n, Sum{}, std::uint64_t{1} << 40, rng);
}

TEST(DeviceScan, MaxI32AndMinI64) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  for (auto n : scan_sizes<std::int32_t>()) check_scans<std::int32_t>(n, Max{}, INT32_MIN, rng);
  for (auto n : scan_sizes<std::int64_t>()) check_scans<std::int64_t>(n, Min{}, INT64_MAX, rng);
}

TEST(DeviceScan, SumFloatAndDouble) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  for (auto n : scan_sizes<float>()) check_scans<float>(n, Sum{}, 0.5f, rng);
  for (auto n : scan_sizes<double>()) check_scans<double>(n, Sum{}, -2.0, rng);
}

TEST(DeviceScan, NonCommutativeOperatorKeepsOrder) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  for (auto n : scan_sizes<Affine>()) check_scans<Affine>(n, Compose{}, Affine{1u, 0u}, rng);
}

TEST(DeviceScan, AllEqualInputs) {
  KNN_PRIM_REQUIRE_GPU();
  const std::int64_t n = 1 << 20;
  DeviceBuffer<std::uint32_t> in(std::vector<std::uint32_t>(n, 1u)), out(n);
  std::size_t bytes = 0;
  PRIM_ASSERT(exclusive_sum(nullptr, bytes, in.get(), out.get(), n));
  TempStorage temp(bytes);
  PRIM_ASSERT(exclusive_sum(temp.get(), temp.bytes(), in.get(), out.get(), n));
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto got = out.download();
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], static_cast<std::uint32_t>(i));
}

TEST(DeviceScan, RejectsBadArguments) {
  std::size_t bytes = 0;
  const std::uint32_t* in = nullptr;
  std::uint32_t* out = nullptr;
  EXPECT_EQ(exclusive_sum(nullptr, bytes, in, out, -1).code, Errc::invalid_argument);
  ASSERT_TRUE(exclusive_sum(nullptr, bytes, in, out, 1000).ok());
  EXPECT_GT(bytes, 0u);
  std::size_t small = bytes - 1;
  // Never dereferenced: the checks fail before any work is queued.
  alignas(256) static unsigned char fake[16];
  auto* fake_data = reinterpret_cast<std::uint32_t*>(fake);
  EXPECT_EQ(exclusive_sum(fake, small, fake_data, fake_data, 1000).code, Errc::temp_too_small);
  EXPECT_EQ(exclusive_sum(fake, bytes, in, out, 1000).code, Errc::invalid_argument);  // null data
}

}  // namespace
