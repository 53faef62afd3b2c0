#pragma once
// Rounding bounds of the fast candidate passes (docs/exactness.md).
// Host and device code: plain arithmetic and square roots.
#include <cmath>
#include <cstddef>

#include "arith/host_device.hpp"

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
/// twice in case the accumulator truncates. (What underflow loses is dot_underflow()'s.)
KNN_HD inline double split_tf32_dot_bound(std::size_t d) {
  return (0x1p-22 * 3.001 + 2.0 * float_gamma(3 * d + 2)) * 1.05 + static_cast<double>(3 * d + 8) * 0x1p-50;
}

/// What underflow adds to any of the products above, an absolute term beside their relative one:
/// values, products and partial sums under float's normal range (2^-126) may be flushed to zero
/// (tensor cores, cuBLAS) or rounded to subnormals, each losing less than 2^-126. Per feature the
/// values lose at most 2^-126 (|q_i| + |t_i|), counted twice for split operands' parts, and each
/// of at most 3d products and 3d sums 2^-126: with |x|_1 <= sqrt(d) |x|, all of it is within
/// 2^-120 (sqrt(d) (|q| + |t|) + 2d + 4), a margin of 32 times or more on each part.
KNN_HD inline double dot_underflow(std::size_t d, double norm_q, double norm_t) {
  const double dd = static_cast<double>(d);
  return 0x1p-120 * (std::sqrt(dd) * (norm_q + norm_t) + 2.0 * dd + 4.0);
}

/// l2's absolute margin on a squared distance from dot_underflow(): twice it, with
/// |x| <= (1 + |x|^2) / 2 turning 2^-119 sqrt(d) (|q| + |t|) into 2^-119 sqrt(d) plus
/// 2^-120 sqrt(d) (|q|^2 + |t|^2), which each bound's relative slack (d + 8) 2^-50 holds many
/// times over beside the double arithmetic it is there for.
KNN_HD inline double l2_underflow(std::size_t d) {
  const double dd = static_cast<double>(d);
  return 0x1p-119 * (std::sqrt(dd) + 2.0 * dd + 4.0);
}

/// For an l2 distance r (the correctly rounded square root of a double sum of squares s), a sum
/// at or above every s whose root rounds to r or less: such an s has sqrt(s) <= r (1 + 2^-53), so
/// s <= r^2 (1 + 2^-52 + 2^-106), and fl(fl(r r) (1 + 2^-40)) >= r^2 (1 - 2^-53)^2 (1 + 2^-40)
/// is above that. A guessed tau at or above it took every row that ties with or beats r
/// (docs/exactness.md#guessed-tau).
KNN_HD inline double l2_sum_ceiling(double r) { return r * r * (1.0 + 0x1p-40); }

/// Relative bound of a float32 sum of |a_i - b_i| over d features (l1).
KNN_HD inline double fp32_l1_bound(std::size_t d) {
  return 2.0 * float_gamma(d + 2) * 1.01 + static_cast<double>(d + 8) * 0x1p-50;
}

}  // namespace knn::detail
