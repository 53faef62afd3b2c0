// Stream compaction (select_if, select_flagged, stable partition) against the references.
#include <knn/prim/device/device_select.cuh>
#include <knn/prim/reference/select.hpp>

#include <limits>

#include "test_util.cuh"

namespace {
using namespace knn::prim;
using knn::prim::test::DeviceBuffer;
using knn::prim::test::TempStorage;

// Keeps x when x % modulus < keep: keep/modulus of uniformly random items.
struct KeepFraction {
  std::uint32_t keep, modulus;
  KNN_PRIM_HD bool operator()(std::uint32_t x) const { return x % modulus < keep; }
};
// Negative floats; NaN and -0.0 are not negative.
struct IsNegative {
  KNN_PRIM_HD bool operator()(float x) const { return x < 0.f; }
};

template <typename T>
void expect_prefix_equal(const std::vector<T>& got, const std::vector<T>& expect, std::int64_t count) {
  ASSERT_EQ(count, static_cast<std::int64_t>(expect.size()));
  for (std::int64_t i = 0; i < count; ++i)
    ASSERT_TRUE(test::same_bits(got[i], expect[i])) << "i = " << i;
}

template <typename T, typename Pred>
void check_select_if(const std::vector<T>& host, Pred pred, bool in_place) {
  const std::int64_t n = static_cast<std::int64_t>(host.size());
  const auto expect = reference::select_if(host.data(), n, pred);
  DeviceBuffer<T> in(host), out(n);
  DeviceBuffer<std::int64_t> count(1);
  T* dst = in_place ? in.get() : out.get();
  std::size_t bytes = 0;
  PRIM_ASSERT(select_if(nullptr, bytes, in.get(), dst, count.get(), n, pred));
  TempStorage temp(bytes);
  PRIM_ASSERT(select_if(temp.get(), temp.bytes(), in.get(), dst, count.get(), n, pred));
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto got = in_place ? in.download() : out.download();
  expect_prefix_equal(got, expect, count.download()[0]);
  if (!in_place)  // nothing written past the kept items
    for (std::int64_t i = static_cast<std::int64_t>(expect.size()); i < n; ++i)
      ASSERT_EQ(reinterpret_cast<const unsigned char*>(&got[i])[0], test::poison_byte) << "i = " << i;
}

template <typename T, typename Pred>
void check_partition(const std::vector<T>& host, Pred pred) {
  const std::int64_t n = static_cast<std::int64_t>(host.size());
  std::vector<T> expect(n);
  const std::int64_t kept = reference::stable_partition(host.data(), expect.data(), n, pred);
  DeviceBuffer<T> in(host), out(n);
  DeviceBuffer<std::int64_t> count(1);
  std::size_t bytes = 0;
  PRIM_ASSERT(partition(nullptr, bytes, in.get(), out.get(), count.get(), n, pred));
  TempStorage temp(bytes);
  PRIM_ASSERT(partition(temp.get(), temp.bytes(), in.get(), out.get(), count.get(), n, pred));
  CUDA_ASSERT(cudaDeviceSynchronize());
  ASSERT_EQ(count.download()[0], kept);
  const auto got = out.download();
  for (std::int64_t i = 0; i < n; ++i) ASSERT_TRUE(test::same_bits(got[i], expect[i])) << "i = " << i;
}

std::vector<std::int64_t> sizes() { return test::edge_sizes(detail::ScanPolicy<std::uint32_t>::tile_items); }

TEST(DeviceSelect, SelectIfFractions) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937 rng(seed);
  for (auto n : sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    std::vector<std::uint32_t> host(n);
    for (auto& x : host) x = rng();
    for (KeepFraction f : {KeepFraction{0, 2}, KeepFraction{1, 2}, KeepFraction{2, 2}, KeepFraction{1, 100}}) {
      SCOPED_TRACE("keep " + std::to_string(f.keep) + "/" + std::to_string(f.modulus));
      check_select_if(host, f, false);
      check_select_if(host, f, true);
    }
  }
}

TEST(DeviceSelect, SelectIfFloatsWithNaNAndSignedZero) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937 rng(seed);
  for (auto n : sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    std::vector<float> host(n);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (auto& x : host) {
      const unsigned r = rng() % 10;
      x = r == 0 ? std::numeric_limits<float>::quiet_NaN() : r == 1 ? -0.f : dist(rng);
    }
    check_select_if(host, IsNegative{}, false);
  }
}

TEST(DeviceSelect, SelectFlaggedU64) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  for (auto n : test::edge_sizes(detail::ScanPolicy<std::uint64_t>::tile_items)) {
    SCOPED_TRACE("n = " + std::to_string(n));
    std::vector<std::uint64_t> host(n);
    std::vector<std::uint8_t> flags(n);
    for (std::int64_t i = 0; i < n; ++i) {
      host[i] = rng();
      flags[i] = rng() % 3 == 0 ? static_cast<std::uint8_t>(1 + rng() % 255) : 0;
    }
    const auto expect = reference::select_flagged(host.data(), flags.data(), n);
    DeviceBuffer<std::uint64_t> in(host), out(n);
    DeviceBuffer<std::uint8_t> dflags(flags);
    DeviceBuffer<std::int64_t> count(1);
    std::size_t bytes = 0;
    PRIM_ASSERT(select_flagged(nullptr, bytes, in.get(), dflags.get(), out.get(), count.get(), n));
    TempStorage temp(bytes);
    PRIM_ASSERT(select_flagged(temp.get(), temp.bytes(), in.get(), dflags.get(), out.get(), count.get(), n));
    CUDA_ASSERT(cudaDeviceSynchronize());
    expect_prefix_equal(out.download(), expect, count.download()[0]);
  }
}

TEST(DeviceSelect, StablePartition) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937 rng(seed);
  for (auto n : sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    std::vector<std::uint32_t> host(n);
    for (std::int64_t i = 0; i < n; ++i) host[i] = static_cast<std::uint32_t>(i) * 2654435761u;
    for (KeepFraction f : {KeepFraction{0, 2}, KeepFraction{1, 2}, KeepFraction{2, 2}, KeepFraction{3, 7}})
      check_partition(host, f);
  }
  std::size_t bytes = 0;
  std::uint32_t* same = reinterpret_cast<std::uint32_t*>(&bytes);
  PRIM_ASSERT(partition(nullptr, bytes, same, same, static_cast<std::int64_t*>(nullptr), 10, IsNegative{}));
  alignas(256) static unsigned char fake[4096];
  std::size_t fake_bytes = sizeof(fake);
  EXPECT_EQ(partition(fake, fake_bytes, same, same, reinterpret_cast<std::int64_t*>(fake), 10, KeepFraction{1, 2}).code,
            Errc::invalid_argument);
}

}  // namespace
