#pragma once
// Floats as unsigned keys in float order (knn::prim's radix order: -0.0 as +0.0, every NaN above
// +inf), and back: tau is kept as a key so that a block's selection compares integers, and a
// masked row's NaN bound is never counted for it.
#include <cuda_runtime.h>

#include <knn/prim/detail/radix_traits.hpp>

namespace knn::cuda {

__device__ __forceinline__ unsigned ordered_key(float f) { return knn::prim::detail::RadixTraits<float>::to_ordered(f); }

__device__ __forceinline__ float key_to_float(unsigned key) { return knn::prim::detail::RadixTraits<float>::from_ordered(key); }

}  // namespace knn::cuda
