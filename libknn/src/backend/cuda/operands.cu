#include "backend/cuda/operands.cuh"

#include <algorithm>

#include "backend/cuda/cuda_check.cuh"

namespace knn::cuda {

namespace {

// Squared norms in double (for the bounds; any summation order will do), one warp per row.
__global__ void squared_norms_kernel(const float* x, std::int64_t rows, int d, double* out) {
  const std::int64_t row = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const float* r = x + row * d;
  double s = 0.0;
  for (int i = lane; i < d; i += 32) s += static_cast<double>(r[i]) * r[i];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if (lane == 0) out[row] = s;
}

// Squared norms rounded up and down to float, for the float bounds of l2.
__global__ void round_norms_kernel(const double* norms, std::int64_t n, float* up, float* dn) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  up[i] = __double2float_ru(norms[i]);
  dn[i] = __double2float_rd(norms[i]);
}

// x rounded to TF32 (10 explicit mantissa bits), to nearest, ties away from zero; infinities and
// NaN as they are. (Bit arithmetic rather than cvt.rna.tf32: the same result on any architecture.)
__device__ __forceinline__ float round_tf32(float x) {
  const unsigned b = __float_as_uint(x);
  if ((b & 0x7f800000u) == 0x7f800000u) return x;
  return __uint_as_float((b + 0x1000u) & 0xffffe000u);
}

// Float32's products on TF32 tensor cores: each value x of the rows x d matrix becomes hi and lo,
// hi = x rounded to TF32 and lo = x - hi (exact) rounded to TF32, laid out in rows of 3d so that
// one product of 3d terms gives q_hi.t_hi + q_hi.t_lo + q_lo.t_hi (split_tf32_dot_bound):
// training rows as [hi | lo | hi], queries as [hi | hi | lo]. A value that overflows in the
// rounding gives an infinite hi and a NaN product: the bounds keep such a row.
__global__ void split_tf32(const float* x, std::int64_t rows, int d, bool query_layout, float* out) {
  const std::int64_t count = rows * d;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / d;
    const int j = static_cast<int>(i - r * d);
    const float v = x[i], hi = round_tf32(v), lo = round_tf32(v - hi);
    float* o = out + r * 3 * d + j;
    o[0] = hi;
    o[d] = query_layout ? hi : lo;
    o[2 * d] = query_layout ? lo : hi;
  }
}

}  // namespace

void split_rows(const float* x, std::int64_t rows, int d, bool query_layout, float* out, cudaStream_t st) {
  if (rows == 0) return;
  split_tf32<<<blocks_for(std::min<std::int64_t>(rows * d, std::int64_t{1} << 26), 256), 256, 0, st>>>(x, rows, d, query_layout,
                                                                                                       out);
  KNN_LAUNCHED(split_tf32);
}

void squared_norms(const float* x, std::int64_t rows, int d, double* out, cudaStream_t st) {
  squared_norms_kernel<<<blocks_for(rows * 32, 256), 256, 0, st>>>(x, rows, d, out);
  KNN_LAUNCHED(squared_norms);
}

void TrainNorms::round_norms(const double* norms, std::int64_t n, float* up, float* dn, cudaStream_t st) {
  round_norms_kernel<<<blocks_for(n, 256), 256, 0, st>>>(norms, n, up, dn);
  KNN_LAUNCHED(round_norms);
}

}  // namespace knn::cuda
