#pragma once
// Matrices shared by the radix select tests (radix_select_k and radix_select_kth).
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

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

}  // namespace knn::prim::test
