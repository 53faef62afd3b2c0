#pragma once
// Bounds of the defined distance from a pair's approximate value (a product, or a float l1 sum),
// as device code reads them: docs/exactness.md gives the argument, arith/bounds.hpp the margins.
#include <cuda_runtime.h>

#include <cstdint>

#include "arith/bounds.hpp"
#include "knn/metric.hpp"

namespace knn::cuda {

// l2's float bound (Bounds::Row::l2_bound) from v = q.t, the query's and the training row's
// squared norms rounded the bound's way (qn, tnj), 1 +- c rounded so (c) and the absolute margin
// rounded up (abs_up).
template <bool Upper>
__device__ __forceinline__ float l2_float_bound(float v, float qn, float tnj, float c, float abs_up) {
  const float m2v = -2.0f * v;  // exact, unless it overflows
  float b;
  if (Upper) {
    b = __fadd_ru(__fadd_ru(__fmul_ru(__fadd_ru(qn, tnj), c), m2v), abs_up) + 0.0f;
    if (isnan(b) || isinf(m2v)) b = INFINITY;
  } else {
    b = __fadd_rd(__fadd_rd(__fmul_rd(__fadd_rd(qn, tnj), c), m2v), -abs_up) + 0.0f;
    if (isnan(b) || isinf(m2v)) b = -INFINITY;
  }
  return b;
}

// The least float above x, for x from +0 to the largest float (which gives +inf): from a squared
// norm rounded down, a float at or above the value it was rounded from, as the upper bound needs.
__device__ __forceinline__ float float_above(float x) { return __uint_as_float(__float_as_uint(x) + 1u); }

// Bounds of the defined distance from a pair's approximate value s (metric 0: q.t for l2;
// 2: q.t for cosine; 1: the float l1 sum). U is rounded up and L down to float, so
// L <= defined <= U holds in float too. An excluded row gets NaN for both: NaN's ordered key is
// above +inf's, so it is never counted for tau nor taken as a candidate.
struct Bounds {
  const float* s;  // qt x n, row-major
  std::int64_t n;
  Metric metric;
  const double* qn;
  const double* tn;
  double c;
  const std::int64_t* exclude;  // indexed by q0 + row, or null
  std::int64_t q0;
  // l2 in float (the two-pass path): the training rows' squared norms rounded up and down to
  // float, and 1 + c rounded up, 1 - c rounded down.
  const float* tn_up = nullptr;
  const float* tn_dn = nullptr;
  float c_up = 1.0f, c_dn = 1.0f;
  // Absolute margins, for what underflow loses (bounds.hpp): l2's on a squared distance
  // (l2_underflow), in double and rounded up to float; cosine's from dot_underflow for d
  // features.
  double l2_abs = 0.0;
  float l2_abs_up = 0.0f;
  int d = 0;
  std::int64_t pitch = 0;  // floats from one query's values in s to the next (n, or more)
  // FP16 products (ProductKind::fp16), per query row as qn: the factor that turns a value of s
  // into q.t (a power of 2: exact unless the result leaves float's normal range, which the
  // margin holds) and the absolute margin that replaces l2_abs (fp16_limits). Null otherwise.
  const float* v_scale = nullptr;
  const float* q_abs = nullptr;

  // One query's bounds, with what is constant along its row read once.
  struct Row {
    const float* s;  // the query's approximate values
    const double* tn;
    double qn, c, l2_abs;
    std::int64_t n, excluded;
    Metric metric;
    int d;
    const float* tn_up;
    const float* tn_dn;
    float qn_up, qn_dn, c_up, c_dn, l2_abs_up;
    float v_scale;  // s holds q.t / v_scale

    // l2's upper (Upper) or lower bound of the squared distance from v = q.t and the training
    // row's squared norm rounded the same way, in float with every operation rounded away from
    // the true value: (|q|^2 + |t|^2)(1 +- c) - 2 q.t +- l2_abs bounds it as the double form of
    // at() does, with a few float roundings more (each 2^-24 of the norms, against c >= d 2^-24). A
    // product that overflowed gives NaN or an infinite bound: the row is kept (upper +inf,
    // lower -inf). Rows past the end and the excluded row are the caller's (masked()).
    template <bool Upper>
    __device__ float l2_bound(float v, float tnj) const {
      return l2_float_bound<Upper>(v * v_scale, Upper ? qn_up : qn_dn, tnj, Upper ? c_up : c_dn, l2_abs_up);
    }

    // Rows past the end and the excluded row get NaN for both bounds: NaN's ordered key is above
    // +inf's, so they are never counted for tau nor taken as candidates.
    __device__ bool masked(std::int64_t j) const { return j == excluded || j >= n; }

    // Bounds of a training row from its approximate value v and squared norm tnj (masked() is
    // the caller's).
    __device__ void at(double v, double tnj, float& u, float& l) const {
      v *= v_scale;  // exact in double
      double a, e;
      if (metric == Metric::l2) {
        const double norms = qn + tnj;
        a = norms - 2.0 * v;
        e = c * norms + l2_abs;
      } else if (metric == Metric::cosine) {
        const double nq = sqrt(qn), nt = sqrt(tnj);
        const bool zero = nq == 0.0 || nt == 0.0;  // the defined distance is 1, exactly
        a = zero ? 1.0 : 1.0 - v / (nq * nt);
        e = zero ? c : c + detail::dot_underflow(d, nq, nt) / (nq * nt);
      } else {
        a = v;
        e = c * v;
      }
      u = __double2float_ru(a + e) + 0.0f;  // + 0.0f: -0 becomes +0, so key order is float order
      l = __double2float_rd(a - e) + 0.0f;
      if (!(l <= u) || isinf(u) || isinf(l) || isnan(a)) {  // overflow in the fast pass: keep the row
        u = INFINITY;
        l = -INFINITY;
      }
    }

    // Bounds of training row j of this query's tile: NaN for both when masked().
    __device__ void bounds_at(std::int64_t j, float& u, float& l) const {
      at(s[j], metric == Metric::l1 ? 0.0 : tn[j], u, l);
      if (masked(j)) u = l = NAN;
    }
  };

  __device__ Row row_of(int row) const {
    const double q = qn[row];
    const std::int64_t at = static_cast<std::int64_t>(row) * pitch;
    const float abs_up = q_abs ? q_abs[row] : l2_abs_up;
    return Row{s + at, tn, q, c, q_abs ? abs_up : l2_abs, n, exclude ? exclude[q0 + row] : -1, metric, d, tn_up, tn_dn,
               __double2float_ru(q), __double2float_rd(q), c_up, c_dn, abs_up, v_scale ? v_scale[row] : 1.0f};
  }

  __device__ void operator()(int row, std::int64_t j, float& u, float& l) const { row_of(row).bounds_at(j, u, l); }
};

}  // namespace knn::cuda
