// Segmented scans (head flags and offsets) against the sequential reference.
#include <knn/prim/device/device_segmented_scan.cuh>
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
T random_value(std::mt19937_64& rng) {
  if constexpr (std::is_same_v<T, Affine>) return {static_cast<unsigned>(rng()) | 1u, static_cast<unsigned>(rng())};
  else return static_cast<T>(rng() % 1000);
}

// head_every: 0 = no heads, 1 = every element a head, k = a head with probability 1/k.
template <typename T, typename Op>
void check_flags(std::int64_t n, int head_every, Op op, T init, std::mt19937_64& rng) {
  SCOPED_TRACE("n = " + std::to_string(n) + ", head every " + std::to_string(head_every));
  std::vector<T> host(n);
  std::vector<std::uint8_t> heads(n);
  for (std::int64_t i = 0; i < n; ++i) {
    host[i] = random_value<T>(rng);
    heads[i] = head_every == 0 ? 0 : (rng() % head_every == 0);
  }
  std::vector<T> ri(n), re(n);
  reference::inclusive_segmented_scan(host.data(), heads.data(), ri.data(), n, op);
  reference::exclusive_segmented_scan(host.data(), heads.data(), re.data(), n, init, op);
  DeviceBuffer<T> in(host), out(n);
  DeviceBuffer<std::uint8_t> dheads(heads);
  std::size_t bytes = 0;
  PRIM_ASSERT(inclusive_segmented_scan(nullptr, bytes, in.get(), dheads.get(), out.get(), op, n));
  {
    TempStorage temp(bytes);
    PRIM_ASSERT(inclusive_segmented_scan(temp.get(), temp.bytes(), in.get(), dheads.get(), out.get(), op, n));
    CUDA_ASSERT(cudaDeviceSynchronize());
    const auto got = out.download();
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], ri[i]) << "inclusive, i = " << i;
  }
  out.poison();
  PRIM_ASSERT(exclusive_segmented_scan(nullptr, bytes, in.get(), dheads.get(), out.get(), op, init, n));
  {
    TempStorage temp(bytes);
    PRIM_ASSERT(exclusive_segmented_scan(temp.get(), temp.bytes(), in.get(), dheads.get(), out.get(), op, init, n));
    CUDA_ASSERT(cudaDeviceSynchronize());
    const auto got = out.download();
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], re[i]) << "exclusive, i = " << i;
  }
}

std::vector<std::int64_t> sizes() {
  return test::edge_sizes(detail::ScanPolicy<detail::HeadValue<std::uint32_t>>::tile_items);
}

TEST(DeviceSegmentedScan, HeadFlagsSumU32) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  for (auto n : sizes())
    for (int every : {0, 1, 3, 50, 5000}) check_flags<std::uint32_t>(n, every, Sum{}, 7u, rng);
}

TEST(DeviceSegmentedScan, HeadFlagsNonCommutativeAndMax) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  for (auto n : sizes()) {
    check_flags<Affine>(n, 40, Compose{}, Affine{1u, 0u}, rng);
    check_flags<float>(n, 40, Max{}, -1.f, rng);
  }
}

TEST(DeviceSegmentedScan, OffsetsWithEmptySegmentsAndUncoveredEnds) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  for (std::int64_t n : {1, 33, 4097, 100000, test::quick_run() ? 12345 : 999983}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    // Covered range [lo, hi) with segments of random length, some empty.
    const std::int64_t lo = n > 10 ? static_cast<std::int64_t>(rng() % 5) : 0;
    const std::int64_t hi = n > 10 ? n - static_cast<std::int64_t>(rng() % 5) : n;
    std::vector<std::int64_t> offsets{lo};
    while (offsets.back() < hi) {
      const std::int64_t len = rng() % 4 == 0 ? 0 : static_cast<std::int64_t>(rng() % 300);
      offsets.push_back(std::min(hi, offsets.back() + len));
    }
    const std::int64_t segments = static_cast<std::int64_t>(offsets.size()) - 1;
    std::vector<double> host(n);
    for (auto& x : host) x = static_cast<double>(rng() % 100);
    const double poison = -12345.0;  // uncovered elements must keep it
    std::vector<double> ri(n, poison), re(n, poison);
    reference::inclusive_segmented_scan_by_offsets(host.data(), ri.data(), offsets.data(), segments, Sum{});
    reference::exclusive_segmented_scan_by_offsets(host.data(), re.data(), offsets.data(), segments, 0.5, Sum{});
    DeviceBuffer<double> in(host), out(std::vector<double>(n, poison));
    DeviceBuffer<std::int64_t> doff(offsets);
    std::size_t bytes = 0;
    PRIM_ASSERT(inclusive_segmented_scan_by_offsets(nullptr, bytes, in.get(), out.get(), n, doff.get(), segments, Sum{}));
    {
      TempStorage temp(bytes);
      PRIM_ASSERT(inclusive_segmented_scan_by_offsets(temp.get(), temp.bytes(), in.get(), out.get(), n, doff.get(), segments, Sum{}));
      CUDA_ASSERT(cudaDeviceSynchronize());
      const auto got = out.download();
      for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], ri[i]) << "inclusive, i = " << i;
    }
    out.upload(std::vector<double>(n, poison));
    PRIM_ASSERT(exclusive_segmented_scan_by_offsets(nullptr, bytes, in.get(), out.get(), n, doff.get(), segments, Sum{}, 0.5));
    {
      TempStorage temp(bytes);
      PRIM_ASSERT(exclusive_segmented_scan_by_offsets(temp.get(), temp.bytes(), in.get(), out.get(), n, doff.get(), segments, Sum{}, 0.5));
      CUDA_ASSERT(cudaDeviceSynchronize());
      const auto got = out.download();
      for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], re[i]) << "exclusive, i = " << i;
    }
  }
}

}  // namespace
