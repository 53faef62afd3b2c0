// Block-wide bitonic sort in shared memory against std::sort / std::stable_sort, one problem per
// block: keys with many ties, all equal, reversed, and distinct; block sizes that are and are not
// powers of two or multiples of a warp; sizes from 1 to 4096.
#include <knn/prim/block/block_bitonic_sort.cuh>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>

#include "test_util.cuh"

namespace {
using namespace knn::prim;
using knn::prim::test::DeviceBuffer;

constexpr unsigned char guard_byte = 0x5A;

template <typename T>
__device__ void set_guard(T& x) {
  unsigned char* p = reinterpret_cast<unsigned char*>(&x);
  for (int b = 0; b < static_cast<int>(sizeof(T)); ++b) p[b] = guard_byte;
}
template <typename T>
__device__ bool is_guard(const T& x) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(&x);
  for (int b = 0; b < static_cast<int>(sizeof(T)); ++b)
    if (p[b] != guard_byte) return false;
  return true;
}

// Block b sorts items [b * size, (b + 1) * size) in shared memory of Capacity items; the places
// from size to Capacity hold guard bytes that the sort must leave alone (broken[b] counts those
// it changed). The items are read back in another order than they were loaded, so a missing
// barrier at the end shows.
template <int Capacity, int BlockThreads, typename K, typename V, typename Compare>
__global__ void sort_pairs_kernel(const K* keys_in, const V* values_in, K* keys_out, V* values_out, int size,
                                  Compare less, int* broken) {
  __shared__ K keys[Capacity];
  __shared__ V values[Capacity];
  const long long base = static_cast<long long>(blockIdx.x) * size;
  for (int i = threadIdx.x; i < Capacity; i += blockDim.x) {
    if (i < size) {
      keys[i] = keys_in[base + i];
      values[i] = values_in[base + i];
    } else {
      set_guard(keys[i]);
      set_guard(values[i]);
    }
  }
  __syncthreads();
  block_bitonic_sort_pairs<BlockThreads>(keys, values, size, less);
  for (int i = threadIdx.x; i < Capacity; i += blockDim.x) {
    const int j = Capacity - 1 - i;
    if (j < size) {
      keys_out[base + j] = keys[j];
      values_out[base + j] = values[j];
    } else if (!is_guard(keys[j]) || !is_guard(values[j])) {
      atomicAdd(broken + blockIdx.x, 1);
    }
  }
}

template <int Capacity, int BlockThreads, typename K, typename Compare>
__global__ void sort_keys_kernel(const K* keys_in, K* keys_out, int size, Compare less, int* broken) {
  __shared__ K keys[Capacity];
  const long long base = static_cast<long long>(blockIdx.x) * size;
  for (int i = threadIdx.x; i < Capacity; i += blockDim.x) {
    if (i < size) keys[i] = keys_in[base + i];
    else set_guard(keys[i]);
  }
  __syncthreads();
  block_bitonic_sort<BlockThreads>(keys, size, less);
  for (int i = threadIdx.x; i < Capacity; i += blockDim.x) {
    const int j = Capacity - 1 - i;
    if (j < size) keys_out[base + j] = keys[j];
    else if (!is_guard(keys[j])) atomicAdd(broken + blockIdx.x, 1);
  }
}

// Problems of one launch, one per block: many ties, all keys equal, keys in reverse order,
// (nearly) distinct keys. `key(r)` makes a key from a random number r in [0, 2^32).
enum Shape { ties, all_equal, reversed, distinct, shapes };

template <typename K, typename KeyOf>
std::vector<K> make_keys(int size, std::mt19937& rng, KeyOf key) {
  std::vector<K> keys;
  const unsigned distinct_ties = static_cast<unsigned>(std::max(1, size / 8));  // ~8 of each key
  for (int s = 0; s < shapes; ++s) {
    for (int i = 0; i < size; ++i) {
      unsigned r = static_cast<unsigned>(rng());
      if (s == ties) r %= distinct_ties;
      if (s == all_equal) r = 12345u;
      keys.push_back(key(r));
    }
    if (s == reversed) std::sort(keys.end() - size, keys.end(), [](const K& a, const K& b) { return b < a; });
  }
  return keys;
}

// Keys from r: a few values around zero of either sign (both zeros and infinities included) for
// floating point, r itself for unsigned, a signed spread for signed.
template <typename K>
K key_of(unsigned r) {
  if constexpr (std::is_floating_point_v<K>) {
    switch (r % 97) {
      case 0: return K(0.0);
      case 1: return K(-0.0);
      case 2: return std::numeric_limits<K>::infinity();
      case 3: return -std::numeric_limits<K>::infinity();
      default: return static_cast<K>(static_cast<int>(r % 2001) - 1000) / K(8);
    }
  } else if constexpr (std::is_signed_v<K>) {
    return static_cast<K>(static_cast<long long>(r) - (1ll << 31));
  } else {
    return static_cast<K>(r);
  }
}

struct Greater {
  template <typename T>
  KNN_PRIM_HD bool operator()(const T& a, const T& b) const { return b < a; }
};
// Keys descending, equal keys by the smaller value.
struct KeyDescending {
  template <typename K, typename V>
  KNN_PRIM_HD bool operator()(const K& ka, const V& va, const K& kb, const V& vb) const {
    return kb < ka || (ka == kb && va < vb);
  }
};
// Keys only: not a total order on the pairs, so equal keys may carry their values in any order.
struct KeyOnly {
  template <typename K, typename V>
  KNN_PRIM_HD bool operator()(const K& ka, const V&, const K& kb, const V&) const { return ka < kb; }
};

enum class Values { positions, random_with_ties };

// The expected order: for PairLess, std::sort of (key, value) pairs; else std::stable_sort by
// the comparator, which for a total order is the only sorted order.
template <typename K, typename V, typename Compare>
void host_sort(std::vector<std::pair<K, V>>& items, Compare less) {
  if constexpr (std::is_same_v<Compare, PairLess>) {
    std::sort(items.begin(), items.end());
  } else {
    std::stable_sort(items.begin(), items.end(), [&](const std::pair<K, V>& a, const std::pair<K, V>& b) {
      return less(a.first, a.second, b.first, b.second);
    });
  }
}

template <typename K, typename V, int Capacity, int BlockThreads = 0, typename Compare = PairLess>
void check_pairs(int size, int threads, Values value_kind, std::mt19937& rng, Compare less = {},
                 bool total_order = true) {
  SCOPED_TRACE("size " + std::to_string(size) + ", " + std::to_string(threads) + " threads");
  ASSERT_LE(size, Capacity);
  const auto keys = make_keys<K>(size, rng, key_of<K>);
  std::vector<V> values(keys.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = value_kind == Values::positions ? static_cast<V>(i % size) : static_cast<V>(rng() % 5);
  DeviceBuffer<K> dkeys(keys), kout(keys.size());
  DeviceBuffer<V> dvalues(values), vout(values.size());
  DeviceBuffer<int> broken(std::vector<int>(shapes, 0));
  sort_pairs_kernel<Capacity, BlockThreads><<<shapes, threads>>>(dkeys.get(), dvalues.get(), kout.get(),
                                                                  vout.get(), size, less, broken.get());
  CUDA_ASSERT(cudaGetLastError());
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto got_k = kout.download();
  const auto got_v = vout.download();
  const auto got_broken = broken.download();
  for (int b = 0; b < shapes; ++b) {
    SCOPED_TRACE("problem shape " + std::to_string(b));
    ASSERT_EQ(got_broken[b], 0) << "places past size changed";
    std::vector<std::pair<K, V>> expect, got;
    for (int i = 0; i < size; ++i) {
      expect.emplace_back(keys[b * size + i], values[b * size + i]);
      got.emplace_back(got_k[b * size + i], got_v[b * size + i]);
    }
    host_sort(expect, less);
    if (total_order) {
      for (int i = 0; i < size; ++i) {
        ASSERT_EQ(got[i].first, expect[i].first) << "key " << i;
        ASSERT_EQ(got[i].second, expect[i].second) << "value " << i;
        // Unique values: -0.0 and +0.0 have their places too. (With random values, (-0.0, v)
        // and (+0.0, v) are equal pairs in either order.)
        if (value_kind == Values::positions)
          ASSERT_TRUE(test::same_bits(got[i].first, expect[i].first)) << "key bits " << i;
      }
    } else {
      for (int i = 0; i < size; ++i) ASSERT_EQ(got[i].first, expect[i].first) << "key " << i;
      // The same pairs, whatever the order of equal keys.
      auto by_bits = [](const std::pair<K, V>& a, const std::pair<K, V>& b) { return a < b; };
      std::sort(got.begin(), got.end(), by_bits);
      std::sort(expect.begin(), expect.end(), by_bits);
      ASSERT_TRUE(got == expect) << "pairs lost or mixed up";
    }
  }
}

template <typename K, int Capacity, int BlockThreads = 0, typename Compare = Less>
void check_keys(int size, int threads, std::mt19937& rng, Compare less = {}) {
  SCOPED_TRACE("size " + std::to_string(size) + ", " + std::to_string(threads) + " threads");
  ASSERT_LE(size, Capacity);
  const auto keys = make_keys<K>(size, rng, key_of<K>);
  DeviceBuffer<K> dkeys(keys), kout(keys.size());
  DeviceBuffer<int> broken(std::vector<int>(shapes, 0));
  sort_keys_kernel<Capacity, BlockThreads><<<shapes, threads>>>(dkeys.get(), kout.get(), size, less, broken.get());
  CUDA_ASSERT(cudaGetLastError());
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto got = kout.download();
  const auto got_broken = broken.download();
  for (int b = 0; b < shapes; ++b) {
    SCOPED_TRACE("problem shape " + std::to_string(b));
    ASSERT_EQ(got_broken[b], 0) << "places past size changed";
    std::vector<K> expect(keys.begin() + b * size, keys.begin() + (b + 1) * size);
    std::stable_sort(expect.begin(), expect.end(), less);
    // Equal keys are indistinguishable except -0.0 and +0.0, whose order among themselves is
    // not defined: compare values.
    for (int i = 0; i < size; ++i) ASSERT_EQ(got[b * size + i], expect[i]) << "key " << i;
  }
}

// 1 and 2: no step, one step; 32: a warp; 1024: more items than most blocks have threads; 4096:
// more than any block has threads (each thread takes 4 or more items a step).
const std::vector<int> sizes = {1, 2, 32, 1024, 4096};
// 32 and 1024: a warp and the largest block; 33 and 96: not powers of two (96 a multiple of a
// warp, 33 not); 256: the block of libknn's selection kernels.
const std::vector<int> block_sizes = {32, 33, 96, 256, 1024};

TEST(BlockBitonicSort, PairsDoubleInt64ByKeyThenIndex) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937 rng(seed);
  // (distance, row) as a search ranks its candidates; values are positions, so ties by key keep
  // input order (std::sort on the pairs is then std::stable_sort on the keys). 16 bytes an item:
  // up to 2048 in 32 KiB of static shared memory.
  for (int size : {1, 2, 32, 1024, 2048})
    for (int threads : block_sizes)
      ASSERT_NO_FATAL_FAILURE((check_pairs<double, std::int64_t, 2048>(size, threads, Values::positions, rng)));
}

TEST(BlockBitonicSort, PairsFloatIntRandomValues) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937 rng(seed);
  // Values with ties too: equal (key, value) pairs are the same item, so the order is unique.
  for (int size : sizes)
    for (int threads : block_sizes)
      ASSERT_NO_FATAL_FAILURE((check_pairs<float, int, 4096>(size, threads, Values::random_with_ties, rng)));
}

TEST(BlockBitonicSort, PairsCustomOrders) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937 rng(seed);
  for (int size : sizes)
    for (int threads : {33, 256}) {
      ASSERT_NO_FATAL_FAILURE(
          (check_pairs<unsigned, unsigned, 4096>(size, threads, Values::positions, rng, KeyDescending{})));
      ASSERT_NO_FATAL_FAILURE(
          (check_pairs<int, int, 4096>(size, threads, Values::positions, rng, KeyOnly{}, /*total_order=*/false)));
    }
}

TEST(BlockBitonicSort, KeysUnsigned) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937 rng(seed);
  for (int size : sizes)
    for (int threads : block_sizes) ASSERT_NO_FATAL_FAILURE((check_keys<unsigned, 4096>(size, threads, rng)));
}

TEST(BlockBitonicSort, KeysFloatAndDescending) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937 rng(seed);
  for (int size : sizes)
    for (int threads : {32, 96}) {
      ASSERT_NO_FATAL_FAILURE((check_keys<float, 4096>(size, threads, rng)));
      ASSERT_NO_FATAL_FAILURE((check_keys<long long, 4096>(size, threads, rng, Greater{})));
    }
}

// The thread count given at compile time (BlockThreads) takes the same steps.
TEST(BlockBitonicSort, CompileTimeBlockThreads) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937 rng(seed);
  for (int size : sizes) {
    ASSERT_NO_FATAL_FAILURE((check_keys<unsigned, 4096, 256>(size, 256, rng)));
    ASSERT_NO_FATAL_FAILURE((check_pairs<float, int, 4096, 96>(size, 96, Values::positions, rng)));
  }
}

TEST(BlockBitonicSort, Pow2AtLeast) {
  static_assert(pow2_at_least(0) == 1 && pow2_at_least(1) == 1 && pow2_at_least(2) == 2);
  static_assert(pow2_at_least(3) == 4 && pow2_at_least(1024) == 1024 && pow2_at_least(1025) == 2048);
  static_assert(pow2_at_least(1ll << 30) == (1 << 30));
  EXPECT_EQ(pow2_at_least(-5), 1);
  EXPECT_EQ(pow2_at_least(4097), 8192);
}

}  // namespace
