// The order-preserving key mapping that every radix pass uses, checked on the host against the
// reference's independent definition and against the comparison it must reproduce.
#include <gtest/gtest.h>

#include <knn/prim/detail/radix_traits.hpp>
#include <knn/prim/reference/radix_sort.hpp>

#include <cmath>
#include <cstdint>
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

TEST(RadixTraits, Digits) {
  using knn::prim::detail::radix_digit;
  EXPECT_EQ(radix_digit(0xABCD1234u, 0, 8), 0x34u);
  EXPECT_EQ(radix_digit(0xABCD1234u, 28, 4), 0xAu);
  EXPECT_EQ(radix_digit(0xFFFFFFFFFFFFFFFFull, 56, 8), 0xFFu);
  EXPECT_EQ(radix_digit(0x8000000000000000ull, 63, 1), 1u);
}

}  // namespace
