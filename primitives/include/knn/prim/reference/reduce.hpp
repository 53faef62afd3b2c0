#pragma once
// Sequential host versions of the reductions, for tests.
#include <cstdint>
#include <limits>
#include <vector>

#include "../operators.hpp"

namespace knn::prim::reference {

// op(...op(op(init, in[0]), in[1])..., in[n-1]); init alone when n == 0.
template <typename T, typename Op>
T reduce(const T* in, std::int64_t n, Op op, T init) {
  T acc = init;
  for (std::int64_t i = 0; i < n; ++i) acc = op(acc, in[i]);
  return acc;
}

// Index and value of the smallest (ArgMin) or largest (ArgMax) element; {-1, init} when n == 0.
template <typename T, typename Op>
KeyValuePair<std::int64_t, T> arg_reduce(const T* in, std::int64_t n, Op op, T empty_value) {
  KeyValuePair<std::int64_t, T> best{-1, empty_value};
  for (std::int64_t i = 0; i < n; ++i) best = i == 0 ? KeyValuePair<std::int64_t, T>{0, in[0]}
                                                     : op(best, KeyValuePair<std::int64_t, T>{i, in[i]});
  return best;
}

// Per-column minimum and maximum of a row-major rows x cols matrix; NaN is skipped (+inf and
// -inf for a column with no number).
inline void column_min_max(const float* in, std::int64_t rows, std::int64_t cols, float* col_min,
                           float* col_max) {
  for (std::int64_t c = 0; c < cols; ++c) {
    col_min[c] = std::numeric_limits<float>::infinity();
    col_max[c] = -std::numeric_limits<float>::infinity();
  }
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      const float v = in[r * cols + c];
      if (v != v) continue;
      if (v < col_min[c]) col_min[c] = v;
      if (v > col_max[c]) col_max[c] = v;
    }
}

}  // namespace knn::prim::reference
