#pragma once
// Sequential host versions of the sorts, for tests: std::stable_sort with a comparator written
// from the documented order, independent of the radix-digit code.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

namespace knn::prim::reference {

// The documented key order as an unsigned pattern, written independently of the device code:
// signed keys shift by the sign bit, floats order by sign-magnitude with -0 == +0, NaN last.
template <typename K>
auto ordered_bits(K key) {
  if constexpr (std::is_floating_point_v<K>) {
    using U = std::conditional_t<sizeof(K) == 4, std::uint32_t, std::uint64_t>;
    constexpr U top = U{1} << (8 * sizeof(K) - 1);
    if (std::isnan(key)) return static_cast<U>(~U{0});
    if (key == K(0)) return top;  // both zeros in the middle
    U b;
    std::memcpy(&b, &key, sizeof(K));
    return key < 0 ? static_cast<U>(~b) : static_cast<U>(b | top);
  } else {
    using U = std::make_unsigned_t<K>;
    if constexpr (std::is_signed_v<K>) return static_cast<U>(static_cast<U>(key) ^ (U{1} << (8 * sizeof(K) - 1)));
    else return static_cast<U>(key);
  }
}

template <typename K>
auto sort_digits(K key, int begin_bit, int end_bit, bool descending) {
  auto b = ordered_bits(key);
  using U = decltype(b);
  if (descending) b = static_cast<U>(~b);
  const int width = end_bit - begin_bit;
  if (width == 0) return U{0};
  const U mask = width >= static_cast<int>(8 * sizeof(U)) ? static_cast<U>(~U{0}) : static_cast<U>((U{1} << width) - 1);
  return static_cast<U>((b >> begin_bit) & mask);
}

// The stable sorting permutation: order[i] = input index of the i-th output.
template <typename K>
std::vector<std::int64_t> sort_order(const std::vector<K>& keys, bool descending, int begin_bit = 0,
                                     int end_bit = 8 * sizeof(K)) {
  std::vector<std::int64_t> order(keys.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return sort_digits(keys[a], begin_bit, end_bit, descending) <
           sort_digits(keys[b], begin_bit, end_bit, descending);
  });
  return order;
}

template <typename T>
std::vector<T> permute(const std::vector<T>& v, const std::vector<std::int64_t>& order) {
  std::vector<T> out(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) out[i] = v[order[i]];
  return out;
}

}  // namespace knn::prim::reference
