#pragma once
// Keys as order-preserving unsigned bit patterns, the form every radix pass works on.
// Floats: -0.0 and +0.0 map to the same pattern (they compare equal, so a stable sort keeps
// their input order), and every NaN maps to the largest pattern (after +inf ascending).
// from_ordered is the inverse on the patterns to_ordered produces: the key a threshold or a
// k-th value found on the bits stands for (for floats: +0.0 for either zero, and the quiet NaN
// 0x7fffffff / 0x7fffffffffffffff for the NaN pattern).
// Host and device, so the references can check the mapping itself.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "config.hpp"

namespace knn::prim::detail {

template <typename K, typename Enable = void>
struct RadixTraits;

template <typename K>
struct RadixTraits<K, std::enable_if_t<std::is_integral_v<K> && std::is_unsigned_v<K>>> {
  using Bits = K;
  KNN_PRIM_HD static Bits to_ordered(K key) { return key; }
  KNN_PRIM_HD static K from_ordered(Bits bits) { return bits; }
};

template <typename K>
struct RadixTraits<K, std::enable_if_t<std::is_integral_v<K> && std::is_signed_v<K>>> {
  using Bits = std::make_unsigned_t<K>;
  KNN_PRIM_HD static Bits to_ordered(K key) {
    return static_cast<Bits>(key) ^ (Bits{1} << (8 * sizeof(K) - 1));
  }
  KNN_PRIM_HD static K from_ordered(Bits bits) {
    return static_cast<K>(bits ^ (Bits{1} << (8 * sizeof(K) - 1)));
  }
};

template <typename K>
struct RadixTraits<K, std::enable_if_t<std::is_floating_point_v<K>>> {
  static_assert(sizeof(K) == 4 || sizeof(K) == 8, "float and double keys only");
  using Bits = std::conditional_t<sizeof(K) == 4, std::uint32_t, std::uint64_t>;
  KNN_PRIM_HD static Bits to_ordered(K key) {
    constexpr Bits sign = Bits{1} << (8 * sizeof(K) - 1);
    constexpr Bits exponent_all = static_cast<Bits>(sizeof(K) == 4 ? 0x7f800000ull : 0x7ff0000000000000ull);
    Bits b;
    std::memcpy(&b, &key, sizeof(K));
    if ((b & ~sign) > exponent_all) return ~Bits{0};  // NaN, any sign or payload
    if (b == sign) b = 0;                             // -0.0 -> +0.0
    return (b & sign) ? static_cast<Bits>(~b) : static_cast<Bits>(b ^ sign);
  }
  // Patterns to_ordered never produces (below -inf's, -0.0's, between +inf's and NaN's) come
  // back as the float whose bits they are under the same flip: NaNs and -0.0.
  KNN_PRIM_HD static K from_ordered(Bits bits) {
    constexpr Bits sign = Bits{1} << (8 * sizeof(K) - 1);
    const Bits b = (bits & sign) ? static_cast<Bits>(bits ^ sign) : static_cast<Bits>(~bits);
    K key;
    std::memcpy(&key, &b, sizeof(K));
    return key;
  }
};

// The digit of `bits` at [shift, shift + width).
template <typename Bits>
KNN_PRIM_HD unsigned radix_digit(Bits bits, int shift, int width) {
  return static_cast<unsigned>((bits >> shift) & ((Bits{1} << width) - 1));
}

}  // namespace knn::prim::detail
