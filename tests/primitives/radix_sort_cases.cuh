#pragma once
// Inputs and checks shared by the radix sort tests.
#include <knn/prim/detail/radix_sort_kernels.cuh>
#include <knn/prim/reference/radix_sort.hpp>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "test_util.cuh"

namespace knn::prim::test {

enum class Shape { random, all_equal, sorted, reversed, few_distinct, special };

inline const char* shape_name(Shape s) {
  switch (s) {
    case Shape::random: return "random";
    case Shape::all_equal: return "all equal";
    case Shape::sorted: return "sorted";
    case Shape::reversed: return "reversed";
    case Shape::few_distinct: return "few distinct";
    case Shape::special: return "special values";
  }
  return "?";
}

template <typename K>
K random_key(std::mt19937_64& rng) {
  if constexpr (std::is_floating_point_v<K>) {
    std::uniform_real_distribution<K> d(K(-1e6), K(1e6));
    return d(rng);
  } else {
    return static_cast<K>(rng());
  }
}

// Special values: for floats NaN of both signs, -0.0, +0.0, +-inf, denormals; for integers the
// extremes. Mixed with random keys so each special value occurs many times.
template <typename K>
K special_key(std::mt19937_64& rng) {
  using L = std::numeric_limits<K>;
  std::vector<K> specials;
  if constexpr (std::is_floating_point_v<K>) {
    specials = {L::quiet_NaN(), -L::quiet_NaN(), K(-0.0), K(0.0), L::infinity(), -L::infinity(),
                L::denorm_min(), -L::denorm_min(), L::lowest(), L::max(), K(1), K(-1)};
  } else {
    specials = {L::min(), L::max(), K(0), K(1), static_cast<K>(L::max() / 2)};
  }
  return rng() % 2 ? specials[rng() % specials.size()] : random_key<K>(rng);
}

template <typename K>
std::vector<K> make_keys(std::int64_t n, Shape shape, std::mt19937_64& rng) {
  std::vector<K> keys(n);
  for (auto& k : keys) {
    switch (shape) {
      case Shape::all_equal: k = static_cast<K>(42); break;
      case Shape::few_distinct: k = static_cast<K>(static_cast<int>(rng() % 5) - 2); break;
      case Shape::special: k = special_key<K>(rng); break;
      default: k = random_key<K>(rng); break;
    }
  }
  if (shape == Shape::sorted || shape == Shape::reversed) {
    std::sort(keys.begin(), keys.end());
    if (shape == Shape::reversed) std::reverse(keys.begin(), keys.end());
  }
  return keys;
}

// Edge sizes of the onesweep tile that sorts these keys (and values).
template <typename K, typename V = detail::NoValue, bool HasValues = false>
std::vector<std::int64_t> sort_sizes() {
  return edge_sizes(detail::RadixSortPolicy<K, V, HasValues>::tile_items);
}

inline std::vector<Shape> all_shapes() {
  return {Shape::random, Shape::all_equal, Shape::sorted, Shape::reversed, Shape::few_distinct, Shape::special};
}

}  // namespace knn::prim::test
