#pragma once
// Rounding bounds of the fast candidate passes (see cpu/cpu_backend.cpp for the argument).
// Host and device code: plain arithmetic, no library calls.
#include <cstddef>

#if defined(__CUDACC__)
#define KNN_HD __host__ __device__
#else
#define KNN_HD
#endif

namespace knn::detail {

/// gamma_n = n u / (1 - n u) for float32's unit roundoff u = 2^-24.
KNN_HD inline double float_gamma(std::size_t n) {
  const double nu = static_cast<double>(n) * 0x1p-24;
  return nu / (1.0 - nu);
}

/// |fl(q.t) - q.t| <= c sum |q_i t_i| for a float32 dot product of length d in any order, plus a
/// term for the double arithmetic that turns it into a distance.
KNN_HD inline double fp32_dot_bound(std::size_t d) {
  return float_gamma(d + 2) * 1.01 + static_cast<double>(d + 8) * 0x1p-50;
}

/// The same for a TF32 tensor-core product: inputs cut to 10 mantissa bits (rounded or truncated:
/// relative error <= 2^-10 each, so 2^-9 for a product) and float accumulation, counted twice in
/// case the accumulator truncates.
KNN_HD inline double tf32_dot_bound(std::size_t d) {
  return (0x1p-9 + 0x1p-20 + 2.0 * float_gamma(d + 2)) * 1.05 + static_cast<double>(d + 8) * 0x1p-50;
}

/// The same for float32's products taken on TF32 tensor cores from split operands: each value
/// x = hi + lo, hi = x rounded to TF32 (|x - hi| <= 2^-11 |x|), lo = x - hi (exact in float) rounded
/// to TF32 once more (within 2^-11 |lo| <= 2^-22 |x|). q.t is taken as the 3d-term product
/// q_hi.t_hi + q_hi.t_lo + q_lo.t_hi: per feature, what is left out or rounded away is
/// q_hi (t_lo - t_lo') + (q_lo - q_lo') t_hi + q_lo t_lo, at most 2^-22 (3 + 2^-10) |q_i t_i|. The
/// products of TF32 values are exact in float; their float accumulation over 3d terms is counted
/// twice in case the accumulator truncates. (Values whose products underflow float are outside
/// this bound, as they are outside the two above.)
KNN_HD inline double split_tf32_dot_bound(std::size_t d) {
  return (0x1p-22 * 3.001 + 2.0 * float_gamma(3 * d + 2)) * 1.05 + static_cast<double>(3 * d + 8) * 0x1p-50;
}

/// Relative bound of a float32 sum of |a_i - b_i| over d features (l1).
KNN_HD inline double fp32_l1_bound(std::size_t d) {
  return 2.0 * float_gamma(d + 2) * 1.01 + static_cast<double>(d + 8) * 0x1p-50;
}

}  // namespace knn::detail
