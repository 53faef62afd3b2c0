#pragma once
// Bitonic sort of `size` items (a power of two) by the whole block, in place, in shared memory as
// a rule: for lists of up to a few thousand items that are already there (a query's candidates,
// the union of per-thread bests), it needs no storage besides the items and takes any order.
// Any blockDim.x: in each step thread t takes the compare-exchanges of items t, t + blockDim.x,
// ...; a step is one stride of the network, and a __syncthreads() follows it.
//
// Contract: every thread of the block calls with the same arguments; the items are written and
// visible to the block before the call (the caller synchronises); the block is synchronised when
// it returns (size 1 or 0: nothing to do, no barrier). `less` must be a strict weak order (floats
// under < with NaN are not). A sorting network is not stable: items that compare equal end in an
// order that depends on their places, so give a total order (for pairs: ties by value, as
// PairLess does) where the order of ties matters.
//
// BlockThreads: blockDim.x when it is known at compile time, so that a thread's share of a step
// has a fixed trip count; 0 (the default) reads blockDim.x.
#include "../detail/config.hpp"

namespace knn::prim {

// Keys ascending by operator<.
struct Less {
  template <typename T>
  KNN_PRIM_HD bool operator()(const T& a, const T& b) const { return a < b; }
};

// (key, value) pairs ascending by key, equal keys by the smaller value. Operands by value: the
// sort then loads all four before the test, which compiles to fewer instructions than loading
// the values only on a tie.
struct PairLess {
  template <typename K, typename V>
  KNN_PRIM_HD bool operator()(K ka, V va, K kb, V vb) const {
    return ka < kb || (ka == kb && va < vb);
  }
};

// The smallest power of two >= m (1 for m <= 1): the size to pad a list to before sorting it.
// m at most 2^30.
KNN_PRIM_HD constexpr int pow2_at_least(long long m) {
  int size = 1;
  while (size < m) size <<= 1;
  return size;
}

namespace detail {

// The network: for each merge length len = 2, 4, ..., size and stride len/2, ..., 1, item x and
// item y = x ^ stride > x are exchanged when out of order, ascending where bit `len` of x is 0
// and descending where it is 1, so that each merge takes two sorted halves in opposite orders.
// exchange(x, y, up) does one compare-exchange.
template <int BlockThreads, typename Exchange>
KNN_PRIM_DEVICE void bitonic_network(int size, Exchange exchange) {
  for (int len = 2; len <= size; len <<= 1)
    for (int stride = len >> 1; stride > 0; stride >>= 1) {
      const auto step = [&](int x) {
        const int y = x ^ stride;
        if (y > x) exchange(x, y, (x & len) == 0);
      };
      if constexpr (BlockThreads > 0) {
        for (int x = threadIdx.x; x < size; x += BlockThreads) step(x);
      } else {
        for (int x = threadIdx.x; x < size; x += blockDim.x) step(x);
      }
      __syncthreads();
    }
}

}  // namespace detail

// Sorts keys[0, size) ascending by less(a, b) ("a before b"). The test is up == less(b, a), so a
// descending exchange also swaps keys that compare equal: one comparison, where a test for each
// direction compiles to two and selects.
template <int BlockThreads = 0, typename Key, typename Compare = Less>
__device__ void block_bitonic_sort(Key* keys, int size, Compare less = {}) {
  detail::bitonic_network<BlockThreads>(size, [&](int x, int y, bool up) {
    const Key a = keys[x], b = keys[y];
    if (up == less(b, a)) {
      keys[x] = b;
      keys[y] = a;
    }
  });
}

// Sorts the pairs (keys[i], values[i]), i < size, ascending by
// less(key_a, value_a, key_b, value_b) ("a before b"), by default by key then value.
template <int BlockThreads = 0, typename Key, typename Value, typename Compare = PairLess>
__device__ void block_bitonic_sort_pairs(Key* keys, Value* values, int size, Compare less = {}) {
  detail::bitonic_network<BlockThreads>(size, [&](int x, int y, bool up) {
    if (up ? less(keys[y], values[y], keys[x], values[x]) : less(keys[x], values[x], keys[y], values[y])) {
      const Key k = keys[x];
      keys[x] = keys[y];
      keys[y] = k;
      const Value v = values[x];
      values[x] = values[y];
      values[y] = v;
    }
  });
}

}  // namespace knn::prim
