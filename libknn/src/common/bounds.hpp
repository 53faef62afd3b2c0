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

/// Relative bound of a float32 sum of |a_i - b_i| over d features (l1).
KNN_HD inline double fp32_l1_bound(std::size_t d) {
  return 2.0 * float_gamma(d + 2) * 1.01 + static_cast<double>(d + 8) * 0x1p-50;
}

}  // namespace knn::detail
