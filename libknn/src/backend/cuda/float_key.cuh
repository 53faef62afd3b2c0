#pragma once
// Floats as unsigned keys in float order, and back: tau is kept as a key so that a block's
// selection compares integers. -0.0 keys below +0.0 and NaN above +inf or below -inf by its sign;
// the bounds never hold -0.0, and masked rows hold a positive NaN, above every finite bound.
#include <cuda_runtime.h>

namespace knn::cuda {

__device__ __forceinline__ unsigned ordered_key(float f) {
  const unsigned b = __float_as_uint(f);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

__device__ __forceinline__ float key_to_float(unsigned key) {
  return __uint_as_float((key & 0x80000000u) ? (key ^ 0x80000000u) : ~key);
}

}  // namespace knn::cuda
