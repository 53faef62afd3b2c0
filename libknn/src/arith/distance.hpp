#pragma once
// The defined distance (docs/design.md#distance): from the two float rows, accumulated in double
// in feature order, each operation rounded on its own. Every backend orders neighbours by this
// value and reports it.
#include <cmath>

#include "arith/host_device.hpp"
#include "knn/metric.hpp"

namespace knn::arith {

/// l2: sqrt(sum (a_i - b_i)^2); l1: sum |a_i - b_i|; cosine: 1 - a.b / (|a| |b|), and 1 when
/// either row is all zeros. Index is the type of the feature count (int on the device).
template <class Index>
KNN_HD inline double defined_distance(const float* a, const float* b, Index dims, Metric metric) {
  if (metric == Metric::l2) {
    double s = 0.0;
    for (Index i = 0; i < dims; ++i) {
      const double t = sub(static_cast<double>(a[i]), static_cast<double>(b[i]));
      s = add(s, mul(t, t));
    }
    return sqrt(s);
  }
  if (metric == Metric::l1) {
    double s = 0.0;
    for (Index i = 0; i < dims; ++i) s = add(s, fabs(sub(static_cast<double>(a[i]), static_cast<double>(b[i]))));
    return s;
  }
  double ab = 0.0, aa = 0.0, bb = 0.0;
  for (Index i = 0; i < dims; ++i) {
    const double x = a[i], y = b[i];
    ab = add(ab, mul(x, y));
    aa = add(aa, mul(x, x));
    bb = add(bb, mul(y, y));
  }
  if (aa == 0.0 || bb == 0.0) return 1.0;
  return sub(1.0, div(ab, sqrt(mul(aa, bb))));
}

}  // namespace knn::arith
