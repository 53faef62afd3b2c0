// The order-preserving key mapping that every radix pass uses, checked on the host against the
// reference's independent definition and against the comparison it must reproduce; and its
// inverse, from_ordered, round trip both ways.
#include <gtest/gtest.h>

#include <knn/prim/detail/radix_traits.hpp>
#include <knn/prim/reference/radix_sort.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {
using knn::prim::detail::RadixTraits;

template <typename K>
std::vector<K> sample_keys(std::mt19937_64& rng) {
  using L = std::numeric_limits<K>;
  std::vector<K> v;
  if constexpr (std::is_floating_point_v<K>) {
    v = {L::quiet_NaN(), -L::quiet_NaN(), K(-0.0), K(0.0), L::infinity(), -L::infinity(),
         L::denorm_min(), -L::denorm_min(), L::min(), -L::min(), L::lowest(), L::max(), K(1), K(-1)};
    std::uniform_real_distribution<K> d(K(-1e3), K(1e3));
    for (int i = 0; i < 2000; ++i) v.push_back(d(rng));
  } else {
    v = {L::min(), L::max(), K(0), K(1), static_cast<K>(L::max() / 2)};
    for (int i = 0; i < 2000; ++i) v.push_back(static_cast<K>(rng()));
  }
  return v;
}

// a < b in the documented order: NaN greatest (all NaNs equal), -0.0 == +0.0.
template <typename K>
bool documented_less(K a, K b) {
  if constexpr (std::is_floating_point_v<K>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

template <typename K>
void check_mapping() {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto keys = sample_keys<K>(rng);
  for (K a : keys) {
    ASSERT_EQ(RadixTraits<K>::to_ordered(a), knn::prim::reference::ordered_bits(a));
    for (int j = 0; j < 50; ++j) {
      const K b = keys[rng() % keys.size()];
      const auto oa = RadixTraits<K>::to_ordered(a), ob = RadixTraits<K>::to_ordered(b);
      ASSERT_EQ(oa < ob, documented_less(a, b)) << a << " vs " << b;
      ASSERT_EQ(oa == ob, !documented_less(a, b) && !documented_less(b, a)) << a << " vs " << b;
    }
  }
}

TEST(RadixTraits, U32) { check_mapping<std::uint32_t>(); }
TEST(RadixTraits, I32) { check_mapping<std::int32_t>(); }
TEST(RadixTraits, U64) { check_mapping<std::uint64_t>(); }
TEST(RadixTraits, I64) { check_mapping<std::int64_t>(); }
TEST(RadixTraits, F32) { check_mapping<float>(); }
TEST(RadixTraits, F64) { check_mapping<double>(); }

template <typename K>
typename RadixTraits<K>::Bits bits_of(K key) {
  typename RadixTraits<K>::Bits b;
  std::memcpy(&b, &key, sizeof(K));
  return b;
}

// from_ordered(to_ordered(x)) is x, bit for bit, except -0.0 (comes back +0.0) and NaN (comes
// back as the one quiet NaN whose pattern is all ones but the sign).
template <typename K>
void check_key_round_trip(K key) {
  using T = RadixTraits<K>;
  using Bits = typename T::Bits;
  const K back = T::from_ordered(T::to_ordered(key));
  if constexpr (std::is_floating_point_v<K>) {
    constexpr Bits sign = Bits{1} << (8 * sizeof(K) - 1);
    if (std::isnan(key)) {
      ASSERT_EQ(bits_of(back), static_cast<Bits>(~sign)) << std::hex << bits_of(key);
      return;
    }
    if (bits_of(key) == sign) {
      ASSERT_EQ(bits_of(back), Bits{0}) << "-0.0 comes back as +0.0";
      return;
    }
  }
  ASSERT_EQ(bits_of(back), bits_of(key)) << std::hex << bits_of(key);
}

// to_ordered(from_ordered(b)) is b for every pattern to_ordered produces. For floats these are
// [to_ordered(-inf), to_ordered(+inf)] without -0.0's pattern (sign - 1), and ~0 (NaN); the
// others come back as a NaN (below -inf's, above +inf's) or as -0.0 (sign - 1), and so map to
// the NaN pattern or to +0.0's.
template <typename K>
void check_bits_round_trip(typename RadixTraits<K>::Bits b) {
  using T = RadixTraits<K>;
  using Bits = typename T::Bits;
  using L = std::numeric_limits<K>;
  const K key = T::from_ordered(b);
  if constexpr (std::is_floating_point_v<K>) {
    constexpr Bits sign = Bits{1} << (8 * sizeof(K) - 1);
    const Bits lowest = T::to_ordered(-L::infinity()), highest = T::to_ordered(L::infinity());
    if (b == static_cast<Bits>(sign - 1)) {
      ASSERT_EQ(bits_of(key), sign) << "-0.0's pattern";
      ASSERT_EQ(T::to_ordered(key), sign);
      return;
    }
    if (b == static_cast<Bits>(~Bits{0}) || b < lowest || b > highest) {
      ASSERT_TRUE(std::isnan(key)) << std::hex << b;
      ASSERT_EQ(T::to_ordered(key), static_cast<Bits>(~Bits{0})) << std::hex << b;
      return;
    }
  }
  ASSERT_EQ(T::to_ordered(key), b) << std::hex << b;
}

template <typename K>
void check_inverse() {
  using T = RadixTraits<K>;
  using Bits = typename T::Bits;
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (K key : sample_keys<K>(rng)) ASSERT_NO_FATAL_FAILURE(check_key_round_trip(key));
  constexpr Bits sign = Bits{1} << (8 * sizeof(K) - 1), ones = static_cast<Bits>(~Bits{0});
  std::vector<Bits> patterns = {0, 1, 2, static_cast<Bits>(sign - 2), static_cast<Bits>(sign - 1), sign,
                                static_cast<Bits>(sign + 1), static_cast<Bits>(ones - 1), ones};
  if constexpr (std::is_floating_point_v<K>) {
    using L = std::numeric_limits<K>;
    for (K edge : {-L::infinity(), L::infinity(), L::lowest(), L::max(), L::min(), -L::min(),
                   L::denorm_min(), -L::denorm_min()}) {
      const Bits o = T::to_ordered(edge);
      patterns.insert(patterns.end(), {static_cast<Bits>(o - 1), o, static_cast<Bits>(o + 1)});
    }
  }
  for (int i = 0; i < 100000; ++i) patterns.push_back(static_cast<Bits>(rng()));
  for (Bits b : patterns) {
    ASSERT_NO_FATAL_FAILURE(check_bits_round_trip<K>(b));
    // Random patterns as keys too: every NaN payload and sign, denormals, both zeros.
    K key;
    std::memcpy(&key, &b, sizeof(K));
    ASSERT_NO_FATAL_FAILURE(check_key_round_trip(key));
  }
}

TEST(RadixTraitsInverse, U32) { check_inverse<std::uint32_t>(); }
TEST(RadixTraitsInverse, I32) { check_inverse<std::int32_t>(); }
TEST(RadixTraitsInverse, U64) { check_inverse<std::uint64_t>(); }
TEST(RadixTraitsInverse, I64) { check_inverse<std::int64_t>(); }
TEST(RadixTraitsInverse, F32) { check_inverse<float>(); }
TEST(RadixTraitsInverse, F64) { check_inverse<double>(); }

// The keys the inverse gives back are the ones the search compares against: spot values.
TEST(RadixTraitsInverse, KnownFloats) {
  using F = RadixTraits<float>;
  EXPECT_EQ(F::from_ordered(F::to_ordered(1.5f)), 1.5f);
  EXPECT_EQ(F::from_ordered(F::to_ordered(-2.25f)), -2.25f);
  EXPECT_EQ(F::from_ordered(0x80000000u), 0.0f);
  EXPECT_FALSE(std::signbit(F::from_ordered(F::to_ordered(-0.0f))));
  EXPECT_EQ(bits_of(F::from_ordered(0xffffffffu)), 0x7fffffffu);
  EXPECT_EQ(F::from_ordered(0xff800000u), std::numeric_limits<float>::infinity());
  EXPECT_EQ(F::from_ordered(0x007fffffu), -std::numeric_limits<float>::infinity());
  using D = RadixTraits<double>;
  EXPECT_EQ(D::from_ordered(D::to_ordered(-1e300)), -1e300);
  EXPECT_EQ(bits_of(D::from_ordered(~0ull)), 0x7fffffffffffffffull);
}

TEST(RadixTraits, Digits) {
  using knn::prim::detail::radix_digit;
  EXPECT_EQ(radix_digit(0xABCD1234u, 0, 8), 0x34u);
  EXPECT_EQ(radix_digit(0xABCD1234u, 28, 4), 0xAu);
  EXPECT_EQ(radix_digit(0xFFFFFFFFFFFFFFFFull, 56, 8), 0xFFu);
  EXPECT_EQ(radix_digit(0x8000000000000000ull, 63, 1), 1u);
}

}  // namespace
