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

// select_if and partition through the engine with a given tile policy, on arrays that start
// in_shift and out_shift elements into their allocations (a shift that breaks 16-byte alignment
// sends full tiles down the item-by-item path instead of the 16-byte one).
template <typename Policy, typename T, typename Pred>
void check_policy(const std::vector<T>& host, Pred pred, int in_shift, int out_shift) {
  const std::int64_t n = static_cast<std::int64_t>(host.size());
  SCOPED_TRACE("n = " + std::to_string(n) + ", tile " + std::to_string(Policy::block_threads) + " x " +
               std::to_string(Policy::items_per_thread) + ", shifts " + std::to_string(in_shift) + "/" +
               std::to_string(out_shift));
  std::vector<T> shifted(in_shift);
  shifted.insert(shifted.end(), host.begin(), host.end());
  DeviceBuffer<T> in(shifted), out(n + out_shift);
  DeviceBuffer<std::int64_t> count(1);
  const T* src = in.get() + in_shift;
  T* dst = out.get() + out_shift;
  for (const bool partition : {false, true}) {
    SCOPED_TRACE(partition ? "partition" : "select_if");
    out.poison();
    const detail::PredicateSelector<Pred> select{pred};
    std::size_t bytes = 0;
    const auto run = [&](void* temp) {
      return partition ? detail::select_dispatch<true, Policy>(temp, bytes, src, dst, count.get(), n, select, 0)
                       : detail::select_dispatch<false, Policy>(temp, bytes, src, dst, count.get(), n, select, 0);
    };
    PRIM_ASSERT(run(nullptr));
    TempStorage temp(bytes);
    PRIM_ASSERT(run(temp.get()));
    CUDA_ASSERT(cudaDeviceSynchronize());
    const auto got = out.download();
    for (int i = 0; i < out_shift; ++i)
      ASSERT_EQ(reinterpret_cast<const unsigned char*>(&got[i])[0], test::poison_byte) << "written before out";
    const std::vector<T> got_from(got.begin() + out_shift, got.end());
    if (partition) {
      std::vector<T> expect(n);
      const std::int64_t kept = reference::stable_partition(host.data(), expect.data(), n, pred);
      ASSERT_EQ(count.download()[0], kept);
      for (std::int64_t i = 0; i < n; ++i) ASSERT_TRUE(test::same_bits(got_from[i], expect[i])) << "i = " << i;
    } else {
      expect_prefix_equal(got_from, reference::select_if(host.data(), n, pred), count.download()[0]);
    }
  }
}

std::vector<std::int64_t> sizes() { return test::edge_sizes(detail::SelectPolicy<std::uint32_t>::tile_items); }

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
  for (auto n : test::edge_sizes(detail::SelectPolicy<std::uint64_t>::tile_items)) {
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

TEST(DeviceSelect, UnalignedArrays) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937 rng(seed);
  for (auto n : sizes()) {
    std::vector<std::uint32_t> host(n);
    for (auto& x : host) x = rng();
    check_policy<detail::SelectPolicy<std::uint32_t>>(host, KeepFraction{1, 2}, 1, 3);
    check_policy<detail::SelectPolicy<std::uint32_t>>(host, KeepFraction{3, 4}, 3, 0);
  }
}

// The shapes bench_primitives compares, and odd ones: one warp, items per thread that are not
// a multiple of a 16-byte chunk, tiles numbered by block index, pauses in the look-back.
TEST(DeviceSelect, OtherTilePolicies) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937 rng(seed);
  using detail::TilePolicy;
  const auto run = [&](auto policy, std::int64_t n) {
    using P = decltype(policy);
    std::vector<std::uint32_t> host(n);
    for (auto& x : host) x = rng();
    check_policy<P>(host, KeepFraction{1, 2}, 0, 0);
    check_policy<P>(host, KeepFraction{9, 10}, 0, 1);
  };
  using P1 = TilePolicy<32, 1>;
  using P2 = TilePolicy<64, 7, 50, 20>;
  using P3 = TilePolicy<256, 16, 0, 0, true>;
  using P4 = TilePolicy<128, 24, 0, 0, false, 4>;
  for (auto n : test::edge_sizes(P1::tile_items)) run(P1{}, n);
  for (auto n : test::edge_sizes(P2::tile_items)) run(P2{}, n);
  for (auto n : test::edge_sizes(P3::tile_items)) run(P3{}, n);
  for (auto n : test::edge_sizes(P4::tile_items)) run(P4{}, n);
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
