// Large scans and sorts (2^28 and above 2^31 elements), checked on the GPU by properties:
// a scan of ones counts up, a sort is ordered and keeps the multiset (checksums), a pair sort
// keeps equal keys in input order. Label gpu_large: long, no sanitizer, about 30 GB of GPU memory.
#include <knn/prim/device/device_radix_sort.cuh>
#include <knn/prim/device/device_scan.cuh>

#include "test_util.cuh"

namespace {
using namespace knn::prim;
using knn::prim::test::DeviceBuffer;
using knn::prim::test::TempStorage;

constexpr std::int64_t n_2_28 = std::int64_t{1} << 28;
constexpr std::int64_t n_above_2_31 = (std::int64_t{1} << 31) + 4099;  // not a multiple of a tile

__device__ std::uint32_t mix(std::uint64_t i, std::uint32_t seed) {
  std::uint64_t x = i * 0x9e3779b97f4a7c15ull ^ seed;
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 29;
  return static_cast<std::uint32_t>(x);
}

__global__ void fill_ones(std::uint32_t* p, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) p[i] = 1u;
}
__global__ void fill_random(std::uint32_t* p, long long n, std::uint32_t seed, std::uint32_t modulus) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    p[i] = modulus ? mix(i, seed) % modulus : mix(i, seed);
}
__global__ void fill_index(std::uint32_t* p, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) p[i] = static_cast<std::uint32_t>(i);
}
// Counts positions where a scan of ones is wrong (out[i] must be i mod 2^32).
__global__ void count_scan_errors(const std::uint32_t* out, long long n, unsigned long long* errors) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    if (out[i] != static_cast<std::uint32_t>(i)) atomicAdd(errors, 1ull);
}
// sums[0] += key, sums[1] += mix(key): equal for a permutation of the same keys.
__global__ void checksum(const std::uint32_t* keys, long long n, unsigned long long* sums) {
  unsigned long long a = 0, b = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    a += keys[i];
    b += mix(keys[i], 7u);
  }
  atomicAdd(sums, a);
  atomicAdd(sums + 1, b);
}
// Counts descents; with values, also equal-key neighbours whose values (input indices) descend.
__global__ void count_order_errors(const std::uint32_t* keys, const std::uint32_t* values, long long n,
                                   unsigned long long* errors) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i + 1 < n; i += (long long)gridDim.x * blockDim.x) {
    if (keys[i] > keys[i + 1]) atomicAdd(errors, 1ull);
    else if (values && keys[i] == keys[i + 1] && values[i] >= values[i + 1]) atomicAdd(errors + 1, 1ull);
  }
}

bool enough_memory(std::size_t bytes) {
  std::size_t free_bytes = 0, total = 0;
  return cudaMemGetInfo(&free_bytes, &total) == cudaSuccess && free_bytes > bytes + (std::size_t{1} << 30);
}

void check_scan(std::int64_t n) {
  SCOPED_TRACE("n = " + std::to_string(n));
  if (!enough_memory(2 * n * sizeof(std::uint32_t))) GTEST_SKIP() << "not enough GPU memory";
  DeviceBuffer<std::uint32_t> in(n), out(n);
  DeviceBuffer<unsigned long long> errors(1);
  CUDA_ASSERT(cudaMemset(errors.get(), 0, 8));
  fill_ones<<<4096, 256>>>(in.get(), n);
  std::size_t bytes = 0;
  PRIM_ASSERT(exclusive_sum(nullptr, bytes, in.get(), out.get(), n));
  TempStorage temp(bytes);
  PRIM_ASSERT(exclusive_sum(temp.get(), temp.bytes(), in.get(), out.get(), n));
  count_scan_errors<<<4096, 256>>>(out.get(), n, errors.get());
  CUDA_ASSERT(cudaDeviceSynchronize());
  EXPECT_EQ(errors.download()[0], 0u);
  std::uint32_t last = 0;
  CUDA_ASSERT(cudaMemcpy(&last, out.get() + n - 1, 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(last, static_cast<std::uint32_t>(n - 1));
}

void check_sort(std::int64_t n, bool pairs, std::uint32_t modulus, unsigned seed) {
  SCOPED_TRACE("n = " + std::to_string(n) + (pairs ? " pairs" : " keys") + " modulus " + std::to_string(modulus));
  if (!enough_memory((pairs ? 6 : 3) * n * sizeof(std::uint32_t))) GTEST_SKIP() << "not enough GPU memory";
  DeviceBuffer<std::uint32_t> kin(n), kout(n);
  DeviceBuffer<std::uint32_t> vin(pairs ? n : 0), vout(pairs ? n : 0);
  DeviceBuffer<unsigned long long> sums(4), errors(2);
  CUDA_ASSERT(cudaMemset(sums.get(), 0, 32));
  CUDA_ASSERT(cudaMemset(errors.get(), 0, 16));
  fill_random<<<4096, 256>>>(kin.get(), n, seed, modulus);
  if (pairs) fill_index<<<4096, 256>>>(vin.get(), n);
  std::size_t bytes = 0;
  auto run = [&](void* t, std::size_t& b) {
    return pairs ? radix_sort_pairs(t, b, kin.get(), kout.get(), static_cast<const std::uint32_t*>(vin.get()), vout.get(), n)
                 : radix_sort_keys(t, b, kin.get(), kout.get(), n);
  };
  PRIM_ASSERT(run(nullptr, bytes));
  TempStorage temp(bytes);
  PRIM_ASSERT(run(temp.get(), temp.bytes()));
  checksum<<<4096, 256>>>(kin.get(), n, sums.get());
  checksum<<<4096, 256>>>(kout.get(), n, sums.get() + 2);
  count_order_errors<<<4096, 256>>>(kout.get(), pairs ? vout.get() : nullptr, n, errors.get());
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto s = sums.download();
  const auto e = errors.download();
  EXPECT_EQ(s[0], s[2]) << "key sum";
  EXPECT_EQ(s[1], s[3]) << "key hash sum";
  EXPECT_EQ(e[0], 0u) << "descents";
  EXPECT_EQ(e[1], 0u) << "equal keys out of input order";
}

TEST(LargeScan, ExclusiveSum2To28) { KNN_PRIM_REQUIRE_GPU(); check_scan(n_2_28); }
TEST(LargeScan, ExclusiveSumAbove2To31) { KNN_PRIM_REQUIRE_GPU(); check_scan(n_above_2_31); }
TEST(LargeSort, Keys2To28) { KNN_PRIM_REQUIRE_GPU(); KNN_PRIM_SEED(seed); check_sort(n_2_28, false, 0, seed); }
TEST(LargeSort, PairsFewDistinct2To28) { KNN_PRIM_REQUIRE_GPU(); KNN_PRIM_SEED(seed); check_sort(n_2_28, true, 1000, seed); }
TEST(LargeSort, KeysAbove2To31) { KNN_PRIM_REQUIRE_GPU(); KNN_PRIM_SEED(seed); check_sort(n_above_2_31, false, 0, seed); }
TEST(LargeSort, PairsAbove2To31) { KNN_PRIM_REQUIRE_GPU(); KNN_PRIM_SEED(seed); check_sort(n_above_2_31, true, 1u << 20, seed); }

}  // namespace
