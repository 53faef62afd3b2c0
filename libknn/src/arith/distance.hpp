#pragma once
// The defined distance (docs/design.md#distance): from the two float rows, accumulated in double
// in feature order, each operation rounded on its own. Every backend orders neighbours by this
// value and reports it.
#include <cmath>

#include "arith/host_device.hpp"
#include "knn/metric.hpp"

namespace knn::arith {

/// The defined distance's running sums, fed one feature at a time in feature order, and the value
/// they give: the one rule behind defined_distance and the GPU's warp-wide form
/// (backend/cuda/warp_distances.cuh), which feeds the same values in the same order.
/// l2: sqrt(sum (a_i - b_i)^2); l1: sum |a_i - b_i|; cosine: 1 - a.b / (|a| |b|), and 1 when
/// either row is all zeros.
template <Metric M>
struct DistanceSums {
  double s = 0.0;             // l2: sum of squares; l1: sum of absolute values; cosine: a.b
  double aa = 0.0, bb = 0.0;  // cosine: |a|^2 and |b|^2
  KNN_HD void feature(double x, double y) {
    if constexpr (M == Metric::l2) {
      const double t = sub(x, y);
      s = add(s, mul(t, t));
    } else if constexpr (M == Metric::l1) {
      s = add(s, fabs(sub(x, y)));
    } else {
      s = add(s, mul(x, y));
      aa = add(aa, mul(x, x));
      bb = add(bb, mul(y, y));
    }
  }
  KNN_HD double value() const {
    if constexpr (M == Metric::l2) {
      return sqrt(s);
    } else if constexpr (M == Metric::l1) {
      return s;
    } else {
      if (aa == 0.0 || bb == 0.0) return 1.0;
      return sub(1.0, div(s, sqrt(mul(aa, bb))));
    }
  }
};

template <Metric M, class Index>
KNN_HD inline double defined_distance(const float* a, const float* b, Index dims) {
  DistanceSums<M> sums;
  for (Index i = 0; i < dims; ++i) sums.feature(static_cast<double>(a[i]), static_cast<double>(b[i]));
  return sums.value();
}

/// The defined distance of rows a and b. Index is the type of the feature count (int on the
/// device).
template <class Index>
KNN_HD inline double defined_distance(const float* a, const float* b, Index dims, Metric metric) {
  switch (metric) {
    case Metric::l2: return defined_distance<Metric::l2>(a, b, dims);
    case Metric::l1: return defined_distance<Metric::l1>(a, b, dims);
    default: return defined_distance<Metric::cosine>(a, b, dims);
  }
}

}  // namespace knn::arith
