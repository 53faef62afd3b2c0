#pragma once
// Associative operators for reductions and scans; usable on host (references) and device.
#include <cstdint>
#include <type_traits>

#include "detail/config.hpp"

namespace knn::prim {

namespace detail {
// NaN compares false with everything, itself included; x != x is the portable test.
template <typename T>
KNN_PRIM_HD bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) return x != x;
  else return false;
}
// A strict weak order in which NaN is greater than everything else (and equal to itself),
// so min/arg-min skip NaN and max/arg-max return it: reductions stay associative.
template <typename T>
KNN_PRIM_HD bool nan_last_less(T a, T b) {
  if (is_nan(a)) return false;
  if (is_nan(b)) return true;
  return a < b;
}
}  // namespace detail

struct Sum {
  template <typename T>
  KNN_PRIM_HD T operator()(const T& a, const T& b) const { return a + b; }
};

// Minimum that ignores NaN unless both are NaN (like fmin); returns the left operand on ties.
struct Min {
  template <typename T>
  KNN_PRIM_HD T operator()(const T& a, const T& b) const {
    if (detail::is_nan(a)) return b;
    if (detail::is_nan(b)) return a;
    return b < a ? b : a;
  }
};

// Maximum that ignores NaN unless both are NaN (like fmax); returns the left operand on ties.
struct Max {
  template <typename T>
  KNN_PRIM_HD T operator()(const T& a, const T& b) const {
    if (detail::is_nan(a)) return b;
    if (detail::is_nan(b)) return a;
    return a < b ? b : a;
  }
};

// (index, value) pair for arg-min / arg-max reductions.
template <typename Index, typename Value>
struct KeyValuePair {
  Index key;
  Value value;
};

// Smallest value, ties to the smaller index. NaN counts as greater than every number, so it is
// returned only when every value is NaN.
struct ArgMin {
  template <typename I, typename V>
  KNN_PRIM_HD KeyValuePair<I, V> operator()(const KeyValuePair<I, V>& a,
                                            const KeyValuePair<I, V>& b) const {
    if (detail::nan_last_less(b.value, a.value)) return b;
    if (detail::nan_last_less(a.value, b.value)) return a;
    return b.key < a.key ? b : a;
  }
};

// Largest value, ties to the smaller index. NaN counts as greater than every number, so the
// first NaN wins (as numpy.argmax does).
struct ArgMax {
  template <typename I, typename V>
  KNN_PRIM_HD KeyValuePair<I, V> operator()(const KeyValuePair<I, V>& a,
                                            const KeyValuePair<I, V>& b) const {
    if (detail::nan_last_less(a.value, b.value)) return b;
    if (detail::nan_last_less(b.value, a.value)) return a;
    return b.key < a.key ? b : a;
  }
};

}  // namespace knn::prim
