#pragma once
// Sequential host version of the batched k-selection, for tests.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "radix_sort.hpp"

namespace knn::prim::reference {

// Row r's k smallest (or largest) values by the documented float order, ties to the smaller
// index, in (value, index) order; values and indices are rows x k.
inline void select_k(const std::vector<float>& in, std::int64_t rows, std::int64_t cols,
                     std::int64_t k, bool largest, std::vector<float>& values,
                     std::vector<std::int32_t>& indices) {
  values.assign(rows * k, 0.f);
  indices.assign(rows * k, 0);
  std::vector<std::int32_t> order(cols);
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = in.data() + r * cols;
    std::iota(order.begin(), order.end(), 0);
    auto key = [&](std::int32_t i) {
      const auto b = ordered_bits(row[i]);
      return largest ? static_cast<std::uint32_t>(~b) : b;
    };
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](std::int32_t a, std::int32_t b) {
      const auto ka = key(a), kb = key(b);
      return ka != kb ? ka < kb : a < b;
    });
    for (std::int64_t j = 0; j < k; ++j) {
      indices[r * k + j] = order[j];
      values[r * k + j] = row[order[j]];
    }
  }
}

}  // namespace knn::prim::reference
