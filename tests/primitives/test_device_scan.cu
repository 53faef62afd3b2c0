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

// Both scans through the engine with a given tile policy, on arrays that start in_shift and
// out_shift elements into their allocations (a shift that breaks 16-byte alignment sends full
// tiles down the item-by-item path instead of the 16-byte one).
template <typename Policy, typename T, typename Op>
void check_policy(std::int64_t n, Op op, T init, std::mt19937_64& rng, int in_shift = 0, int out_shift = 0) {
  SCOPED_TRACE("n = " + std::to_string(n) + ", tile " + std::to_string(Policy::block_threads) + " x " +
               std::to_string(Policy::items_per_thread) + ", shifts " + std::to_string(in_shift) + "/" +
               std::to_string(out_shift));
  auto host = random_values<T>(n + in_shift, rng);
  std::vector<T> expect_incl(n), expect_excl(n);
  reference::inclusive_scan(host.data() + in_shift, expect_incl.data(), n, op);
  reference::exclusive_scan(host.data() + in_shift, expect_excl.data(), n, init, op);
  DeviceBuffer<T> in(host), out(n + out_shift);
  const T* src = in.get() + in_shift;
  T* dst = out.get() + out_shift;
  const detail::PointerLoad<T, const T*> load{src};
  const detail::PointerStore<T*> store{dst};
  for (const bool exclusive : {false, true}) {
    SCOPED_TRACE(exclusive ? "exclusive" : "inclusive");
    out.poison();
    std::size_t bytes = 0;
    const auto run = [&](void* temp) {
      return exclusive ? detail::scan_dispatch<T, true, Policy>(temp, bytes, load, store, op, init, n, 0)
                       : detail::scan_dispatch<T, false, Policy>(temp, bytes, load, store, op, init, n, 0);
    };
    PRIM_ASSERT(run(nullptr));
    TempStorage temp(bytes);
    PRIM_ASSERT(run(temp.get()));
    CUDA_ASSERT(cudaDeviceSynchronize());
    const auto got = out.download();
    const auto& expect = exclusive ? expect_excl : expect_incl;
    for (int i = 0; i < out_shift; ++i)
      ASSERT_EQ(reinterpret_cast<const unsigned char*>(&got[i])[0], test::poison_byte) << "written before out";
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(got[out_shift + i], expect[i]) << "i = " << i;
  }
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

TEST(DeviceScan, UnalignedArrays) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  for (auto n : scan_sizes<std::uint32_t>()) {
    check_policy<detail::ScanPolicy<std::uint32_t>>(n, Sum{}, 5u, rng, 1, 3);  // both unaligned
    check_policy<detail::ScanPolicy<std::uint32_t>>(n, Sum{}, 5u, rng, 4, 2);  // aligned in, unaligned out
  }
  for (auto n : scan_sizes<std::uint64_t>()) check_policy<detail::ScanPolicy<std::uint64_t>>(n, Sum{}, std::uint64_t{3}, rng, 1, 0);
}

// The shapes bench_primitives compares, and odd ones: one warp, items per thread that are not
// a multiple of a 16-byte chunk, tiles numbered by block index, pauses in the look-back.
TEST(DeviceScan, OtherTilePolicies) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  using detail::TilePolicy;
  const auto sizes = [](int tile) { return test::edge_sizes(tile); };
  using P1 = TilePolicy<32, 1>;
  using P2 = TilePolicy<64, 7, 50, 20>;
  using P3 = TilePolicy<256, 16, 0, 0, true>;
  using P4 = TilePolicy<96, 20>;
  using P5 = TilePolicy<128, 12, 0, 0, false, 8>;
  for (auto n : sizes(P1::tile_items)) check_policy<P1>(n, Sum{}, 5u, rng);
  for (auto n : sizes(P2::tile_items)) check_policy<P2>(n, Sum{}, 5u, rng);
  for (auto n : sizes(P3::tile_items)) check_policy<P3>(n, Sum{}, 5u, rng);
  for (auto n : sizes(P4::tile_items)) check_policy<P4>(n, Sum{}, 5u, rng, 1, 1);
  for (auto n : sizes(P5::tile_items)) check_policy<P5>(n, Compose{}, Affine{1u, 0u}, rng);
  for (auto n : sizes(P2::tile_items)) check_policy<P2>(n, Max{}, std::int64_t{INT64_MIN}, rng);
}

// The look-back on a hand-made tile state (blocks that run one after another, as on the CPU
// emulation, never leave a predecessor unfinished): whatever mix of aggregates and inclusive
// prefixes the tiles before have published, the total comes out in order; tiles before the
// nearest inclusive one may have published nothing, and the walk must not wait for them.
template <typename T>
__global__ void publish_tiles(detail::TileState<T> state, const T* values, const unsigned* status, long long num_tiles) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < num_tiles && status[t] != detail::tile_invalid) state.publish(t, status[t], values[t]);
}
template <typename T, typename Op>
__global__ void lookback_once(detail::TileState<T> state, long long tile, Op op, T* out) {
  const T prefix = detail::lookback_prefix<T, 0, 0>(state, tile, op);
  if (threadIdx.x == 0) *out = prefix;
}

template <typename T, typename Op>
void check_lookback(const std::vector<T>& aggregates, const std::vector<unsigned>& status, long long tile, Op op) {
  const long long num_tiles = static_cast<long long>(aggregates.size());
  std::vector<T> values(num_tiles);
  T running = aggregates[0];
  for (long long t = 0; t < num_tiles; ++t) {
    if (t > 0) running = op(running, aggregates[t]);
    values[t] = status[t] == detail::tile_inclusive ? running : aggregates[t];
  }
  T expect = aggregates[0];
  for (long long t = 1; t < tile; ++t) expect = op(expect, aggregates[t]);
  using Layout = detail::TileStateLayout<T>;
  DeviceBuffer<unsigned char> memory(Layout::bytes(num_tiles));
  CUDA_ASSERT(cudaMemset(memory.get(), 0, Layout::clear_bytes(num_tiles)));
  const auto state = Layout::make(memory.get(), num_tiles);
  DeviceBuffer<T> dvalues(values), out(1);
  DeviceBuffer<unsigned> dstatus(status);
  publish_tiles<T><<<static_cast<unsigned>((num_tiles + 127) / 128), 128>>>(state, dvalues.get(), dstatus.get(), num_tiles);
  CUDA_ASSERT(cudaGetLastError());
  lookback_once<T><<<1, 32>>>(state, tile, op, out.get());
  CUDA_ASSERT(cudaGetLastError());
  CUDA_ASSERT(cudaDeviceSynchronize());
  ASSERT_EQ(out.download()[0], expect);
}

template <typename T, typename Op>
void check_lookback_cases(Op op, std::mt19937_64& rng) {
  const long long num_tiles = 200, tile = 150;
  std::vector<T> aggregates = random_values<T>(num_tiles, rng);
  std::vector<unsigned> status(num_tiles, detail::tile_aggregate);
  status[0] = detail::tile_inclusive;
  for (long long t = tile; t < num_tiles; ++t) status[t] = detail::tile_invalid;  // not started yet
  {
    SCOPED_TRACE("only tile 0 inclusive: five windows");
    check_lookback(aggregates, status, tile, op);
  }
  {
    SCOPED_TRACE("inclusive at random");
    auto s = status;
    for (long long t = 1; t < tile; ++t) s[t] = rng() % 40 == 0 ? detail::tile_inclusive : detail::tile_aggregate;
    check_lookback(aggregates, s, tile, op);
  }
  {
    SCOPED_TRACE("unpublished tiles behind the nearest inclusive one");
    auto s = status;
    s[tile - 6] = detail::tile_inclusive;
    s[tile - 7] = s[tile - 20] = s[tile - 40] = detail::tile_invalid;
    check_lookback(aggregates, s, tile, op);
  }
  {
    SCOPED_TRACE("the predecessor inclusive");
    auto s = status;
    s[tile - 1] = detail::tile_inclusive;
    for (long long t = 1; t < tile - 1; ++t) s[t] = detail::tile_invalid;
    check_lookback(aggregates, s, tile, op);
  }
}

TEST(DeviceScan, LookbackOnMadeUpTileStates) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  check_lookback_cases<std::uint32_t>(Sum{}, rng);
  check_lookback_cases<Affine>(Compose{}, rng);  // not commutative, and apart from its status
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
