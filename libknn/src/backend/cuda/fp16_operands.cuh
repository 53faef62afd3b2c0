#pragma once
// FP16 operands of the TF32 pass's l2 products (the fused pass's and the written ones): the same
// 10 mantissa bits as TF32 at twice mma.sync's rate and half the bytes. Their range is the catch:
// each query row is scaled by a power of 2 that puts its largest possible value just under 2^15,
// the training rows by one for all of them (from the largest squared norm), and fp16_limits()
// turns what rounding to FP16 loses, subnormals included, into each query's absolute margin
// (docs/exactness.md#fp16-operands).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace knn::cuda {

// Halves an FP16 row takes: d rounded up to 8, so that rows start 16-byte aligned.
constexpr int fp16_pitch(int d) { return (d + 7) / 8 * 8; }

constexpr int kFp16MinExponent = -40;  // rows smaller than 2^-40 are scaled as if they were that large

// The exponent e of a row's scaling from r2, an upper bound of its squared norm (so of each
// value's square): sqrt(r2) < 2^e, so the row times 2^(15 - e) has every value under 2^15 (FP16
// holds up to 65,504). At least kFp16MinExponent; 128 when r2 is not finite (every float is
// under 2^128).
__device__ __forceinline__ int fp16_exponent(double r2) {
  if (!(r2 < INFINITY)) return 128;
  int e = kFp16MinExponent;
  if (r2 > 0.0) frexp(sqrt(r2) * (1.0 + 0x1p-20), &e);
  return min(max(e, kFp16MinExponent), 128);
}

// Two floats rounded to FP16, the first in the lower half.
__device__ __forceinline__ unsigned fp16_pair(float lo, float hi) {
  return static_cast<unsigned>(__half_as_ushort(__float2half_rn(lo))) | static_cast<unsigned>(__half_as_ushort(__float2half_rn(hi))) << 16;
}

// A query's FP16 scaling, and what its products' bound must add: the query is scaled by
// 2^(15 - e_q), the training rows by 2^(15 - e_t), so v = acc 2^g with g = e_q + e_t - 30; what
// rounding to FP16 loses beyond TF32's relative bound is the absolute A = 2^g (h (1 + u) sqrt(d)
// (R_q + R_t) + d h^2) with u = 2^-11, h = 2^-25, taken 1.01 times, and the bound adds 2A, the
// unscaling's underflow and l2_abs. A query whose g leaves float's range gets abs = +inf: every
// row is its candidate.
struct Fp16Limits {
  float scale;  // 2^(15 - e_q)
  float inv2;   // -2^(g + 1): -2v = acc inv2 (-2 where abs is +inf)
  float abs;    // the bound's absolute margin, rounded up
};
__device__ __forceinline__ Fp16Limits fp16_limits(double qn, float max_tn, int et, int d, double l2_abs) {
  const int eq = fp16_exponent(qn), g = eq + et - 30;
  Fp16Limits r{ldexpf(1.0f, 15 - eq), -2.0f, INFINITY};
  if (g < -126 || g > 120) return r;
  r.inv2 = -ldexpf(1.0f, g + 1);
  const double rq = sqrt(qn) * (1.0 + 0x1p-20) * ldexp(1.0, 15 - eq);
  const double rt = sqrt(static_cast<double>(max_tn)) * (1.0 + 0x1p-20) * ldexp(1.0, 15 - et);
  const double a = 1.01 * ldexp(0x1p-25 * (1.0 + 0x1p-11) * sqrt(static_cast<double>(d)) * (rq + rt) + d * 0x1p-50, g);
  r.abs = __double2float_ru(2.0 * 1.001 * a + l2_abs + 0x1p-148);
  return r;
}

/// The training rows as FP16 operands: n rows of kh halves (zeros past d), each value times
/// 2^(15 - e), e = fp16_exponent(*max_tn) (the largest squared norm, rounded up). Queued on st.
void fp16_training_rows(const float* t, std::int64_t n, int d, int kh, const float* max_tn, __half* out, cudaStream_t st);

/// The queries as FP16 operands for written products: row i of `rows` scaled by its
/// fp16_limits().scale into kh halves (zeros past d), and per row the factor that turns a product
/// back into q.t (v_scale = 2^g, 1 where g leaves float's range) and the bound's absolute margin
/// (abs_up). qn: the rows' squared norms; max_tn as above. Queued on st.
void fp16_query_rows(const float* q, const double* qn, std::int64_t rows, int d, int kh, const float* max_tn, double l2_abs, __half* out,
                     float* v_scale, float* abs_up, cudaStream_t st);

}  // namespace knn::cuda
