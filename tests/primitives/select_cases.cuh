#pragma once
// Matrices shared by the radix select tests (radix_select_k and radix_select_kth).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "test_util.cuh"

namespace knn::prim::test {

enum class Fill { random, all_equal, few_distinct, special, sorted, reversed };

inline std::vector<float> make_matrix(std::int64_t rows, std::int64_t cols, Fill fill, std::mt19937_64& rng) {
  std::vector<float> m(rows * cols);
  std::uniform_real_distribution<float> d(0.f, 100.f);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                            -0.f, 0.f, std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), 1.f, -1.f};
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    switch (fill) {
      case Fill::all_equal: m[i] = 3.5f; break;
      case Fill::few_distinct: m[i] = static_cast<float>(rng() % 3); break;
      case Fill::special: m[i] = rng() % 2 ? specials[rng() % 8] : d(rng) - 50.f; break;
      case Fill::sorted: m[i] = static_cast<float>(i % cols); break;
      case Fill::reversed: m[i] = static_cast<float>(cols - i % cols); break;
      default: m[i] = d(rng); break;
    }
  }
  return m;
}

// Random rows of each shape {rows, cols} (long rows skipped in quick runs), k from 1 to cols, both
// orders: check(matrix, rows, cols, k, largest) for each, until a check fails.
template <class Check>
void for_shapes_and_k(const std::vector<std::pair<std::int64_t, std::int64_t>>& shapes, std::mt19937_64& rng, Check check) {
  for (const auto& [rows, cols] : shapes) {
    if (quick_run() && cols > 20000) continue;
    const auto m = make_matrix(rows, cols, Fill::random, rng);
    for (std::int64_t k : {std::int64_t{1}, std::int64_t{2}, std::int64_t{10}, std::int64_t{100},
                           std::int64_t{1000}, cols / 2, cols - 1, cols}) {
      if (k < 1 || k > cols) continue;
      check(m, rows, cols, k, false);
      check(m, rows, cols, k, true);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// Ties and special values: rows all equal, of few distinct values, of NaN, +-0.0 and +-inf among
// others, sorted and reversed; 3 rows of 33, 5,000 and 40,000; k from 1 to cols; both orders.
template <class Check>
void for_ties_and_special_values(std::mt19937_64& rng, Check check) {
  for (Fill fill : {Fill::all_equal, Fill::few_distinct, Fill::special, Fill::sorted, Fill::reversed}) {
    SCOPED_TRACE("fill " + std::to_string(static_cast<int>(fill)));
    for (std::int64_t cols : {std::int64_t{33}, std::int64_t{5000}, std::int64_t{40000}}) {
      const std::int64_t rows = 3;
      const auto m = make_matrix(rows, cols, fill, rng);
      for (std::int64_t k : {std::int64_t{1}, std::int64_t{7}, std::int64_t{32}, cols / 2, cols}) {
        check(m, rows, cols, k, false);
        check(m, rows, cols, k, true);
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

}  // namespace knn::prim::test
