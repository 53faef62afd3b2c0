#pragma once
// Floats as unsigned keys in float order (knn::prim's radix order: -0.0 as +0.0, every NaN above
// +inf), and back: tau is kept as a key so that a block's selection compares integers, and a
// masked row's NaN bound is never counted for it.
#include <cuda_runtime.h>

#include <knn/prim/detail/radix_traits.hpp>

namespace knn::cuda {

__device__ __forceinline__ unsigned ordered_key(float f) { return knn::prim::detail::RadixTraits<float>::to_ordered(f); }

__device__ __forceinline__ float key_to_float(unsigned key) { return knn::prim::detail::RadixTraits<float>::from_ordered(key); }

// Inserts `key` into the ascending keys `best`, the largest dropping out: a thread's M smallest
// keys, kept in registers (tau's passes).
template <int M>
__device__ __forceinline__ void insert_key(unsigned (&best)[M], unsigned key) {
#pragma unroll
  for (int m = 0; m < M; ++m) {
    const unsigned lo = min(best[m], key);
    key = max(best[m], key);
    best[m] = lo;
  }
}

}  // namespace knn::cuda
