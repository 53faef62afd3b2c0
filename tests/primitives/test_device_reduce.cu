// Device-wide reductions and per-column min/max against the sequential reference.
#include <knn/prim/device/device_reduce.cuh>
#include <knn/prim/reference/reduce.hpp>

#include <cmath>
#include <limits>

#include "test_util.cuh"

namespace {
using namespace knn::prim;
using knn::prim::test::DeviceBuffer;
using knn::prim::test::TempStorage;

constexpr float nan_f = std::numeric_limits<float>::quiet_NaN();
constexpr float inf_f = std::numeric_limits<float>::infinity();

struct Xor {
  KNN_PRIM_HD std::int64_t operator()(std::int64_t a, std::int64_t b) const { return a ^ b; }
};

std::vector<std::int64_t> reduce_sizes() {
  // A "tile" of the reduction is one block's row of threads.
  auto s = test::edge_sizes(detail::ReducePolicy::block_threads);
  s.push_back(detail::ReducePolicy::block_threads * detail::ReducePolicy::max_blocks + 1);
  return s;
}

template <typename T, typename Run>
T run_to_host(Run run) {
  DeviceBuffer<T> out(1);
  std::size_t bytes = 0;
  EXPECT_TRUE(run(nullptr, bytes, out.get()).ok());
  TempStorage temp(bytes);
  const Status s = run(temp.get(), temp.bytes(), out.get());
  EXPECT_TRUE(s.ok()) << s.message << " " << s.where;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return out.download()[0];
}

TEST(DeviceReduce, SumMinMaxIntegers) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  for (auto n : reduce_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    std::vector<std::int64_t> host(n);
    // Signed values of 40 bits: sums of 10^6 of them cannot overflow.
    for (auto& x : host) x = static_cast<std::int64_t>(rng() >> 24) - (std::int64_t{1} << 39);
    DeviceBuffer<std::int64_t> in(host);
    const std::int64_t* p = in.get();
    EXPECT_EQ(run_to_host<std::int64_t>([&](void* t, std::size_t& b, std::int64_t* o) { return reduce_sum(t, b, p, o, n); }),
              reference::reduce(host.data(), n, Sum{}, std::int64_t{0}));
    EXPECT_EQ(run_to_host<std::int64_t>([&](void* t, std::size_t& b, std::int64_t* o) { return reduce_min(t, b, p, o, n); }),
              reference::reduce(host.data(), n, Min{}, std::numeric_limits<std::int64_t>::max()));
    EXPECT_EQ(run_to_host<std::int64_t>([&](void* t, std::size_t& b, std::int64_t* o) { return reduce_max(t, b, p, o, n); }),
              reference::reduce(host.data(), n, Max{}, std::numeric_limits<std::int64_t>::lowest()));
    // Custom operator and init: xor.
    EXPECT_EQ(run_to_host<std::int64_t>([&](void* t, std::size_t& b, std::int64_t* o) { return reduce(t, b, p, o, n, Xor{}, std::int64_t{12345}); }),
              reference::reduce(host.data(), n, Xor{}, std::int64_t{12345}));
  }
}

TEST(DeviceReduce, FloatsWithNaNAndSignedZero) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  for (auto n : reduce_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    std::vector<float> host(n);
    for (auto& x : host) x = static_cast<float>(static_cast<int>(rng() % 17) - 8);  // exact sums
    DeviceBuffer<float> in(host);
    const float* p = in.get();
    EXPECT_EQ(run_to_host<float>([&](void* t, std::size_t& b, float* o) { return reduce_sum(t, b, p, o, n); }),
              reference::reduce(host.data(), n, Sum{}, 0.f));
    // NaN and -0.0 sprinkled in: min/max skip NaN.
    for (std::int64_t i = 0; i < n; i += 97) host[i] = (i / 97) % 2 ? nan_f : -0.f;
    in.upload(host);
    const float mn = run_to_host<float>([&](void* t, std::size_t& b, float* o) { return reduce_min(t, b, p, o, n); });
    const float mx = run_to_host<float>([&](void* t, std::size_t& b, float* o) { return reduce_max(t, b, p, o, n); });
    EXPECT_EQ(mn, reference::reduce(host.data(), n, Min{}, inf_f));
    EXPECT_EQ(mx, reference::reduce(host.data(), n, Max{}, -inf_f));
  }
}

TEST(DeviceReduce, ArgMinArgMaxTiesToSmallerIndex) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  using KV = KeyValuePair<std::int64_t, float>;
  for (auto n : reduce_sizes()) {
    if (n == 0) continue;
    SCOPED_TRACE("n = " + std::to_string(n));
    std::vector<float> host(n);
    for (auto& x : host) x = static_cast<float>(rng() % 5);  // few distinct values: ties
    if (n > 40) host[n / 3] = nan_f;
    DeviceBuffer<float> in(host);
    const float* p = in.get();
    const KV mn = run_to_host<KV>([&](void* t, std::size_t& b, KV* o) { return arg_min(t, b, p, o, n); });
    const KV mx = run_to_host<KV>([&](void* t, std::size_t& b, KV* o) { return arg_max(t, b, p, o, n); });
    const KV rmn = reference::arg_reduce(host.data(), n, ArgMin{}, 0.f);
    const KV rmx = reference::arg_reduce(host.data(), n, ArgMax{}, 0.f);
    EXPECT_EQ(mn.key, rmn.key);
    EXPECT_TRUE(test::same_bits(mn.value, rmn.value));
    EXPECT_EQ(mx.key, rmx.key);
    EXPECT_TRUE(test::same_bits(mx.value, rmx.value));
  }
  std::size_t bytes = 0;
  EXPECT_EQ(arg_min(nullptr, bytes, static_cast<const float*>(nullptr), static_cast<KV*>(nullptr), 0).code,
            Errc::invalid_argument);
}

TEST(DeviceReduce, ColumnMinMax) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  const std::int64_t shapes[][2] = {{0, 3}, {1, 1}, {1, 300}, {7, 4}, {1000, 1}, {999, 13},
                                    {513, 255}, {300, 256}, {300, 257}, {50, 1000}, {100003, 5}};
  for (const auto& shape : shapes) {
    const std::int64_t rows = shape[0], cols = shape[1];
    SCOPED_TRACE("rows " + std::to_string(rows) + " cols " + std::to_string(cols));
    std::vector<float> host(rows * cols);
    std::uniform_real_distribution<float> dist(-1e3f, 1e3f);
    for (auto& x : host) x = dist(rng);
    if (rows * cols > 10) host[rows * cols / 2] = nan_f;
    std::vector<float> rmin(cols), rmax(cols);
    reference::column_min_max(host.data(), rows, cols, rmin.data(), rmax.data());
    DeviceBuffer<float> in(host), dmin(cols), dmax(cols);
    std::size_t bytes = 0;
    PRIM_ASSERT(column_min_max(nullptr, bytes, in.get(), rows, cols, dmin.get(), dmax.get()));
    TempStorage temp(bytes);
    PRIM_ASSERT(column_min_max(temp.get(), temp.bytes(), in.get(), rows, cols, dmin.get(), dmax.get()));
    CUDA_ASSERT(cudaDeviceSynchronize());
    const auto gmin = dmin.download(), gmax = dmax.download();
    for (std::int64_t c = 0; c < cols; ++c) {
      ASSERT_EQ(gmin[c], rmin[c]) << "min, column " << c;
      ASSERT_EQ(gmax[c], rmax[c]) << "max, column " << c;
    }
  }
}

}  // namespace
