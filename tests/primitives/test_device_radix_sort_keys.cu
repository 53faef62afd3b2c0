// Device radix sort of keys: every key type, both orders, bit ranges, adversarial inputs.
#include <knn/prim/device/device_radix_sort.cuh>

#include "radix_sort_cases.cuh"

namespace {
using namespace knn::prim;
using knn::prim::test::DeviceBuffer;
using knn::prim::test::Shape;
using knn::prim::test::TempStorage;

template <typename K>
void check_sort_keys(const std::vector<K>& keys, bool descending, int begin_bit, int end_bit) {
  const std::int64_t n = static_cast<std::int64_t>(keys.size());
  const auto expect = reference::permute(keys, reference::sort_order(keys, descending, begin_bit, end_bit));
  DeviceBuffer<K> in(keys), out(n);
  std::size_t bytes = 0;
  auto run = [&](void* t, std::size_t& b) {
    return descending ? radix_sort_keys_descending(t, b, in.get(), out.get(), n, begin_bit, end_bit)
                      : radix_sort_keys(t, b, in.get(), out.get(), n, begin_bit, end_bit);
  };
  PRIM_ASSERT(run(nullptr, bytes));
  TempStorage temp(bytes);
  PRIM_ASSERT(run(temp.get(), temp.bytes()));
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto got = out.download();
  // Bitwise: the stable order decides which of -0.0/+0.0 or which NaN comes where.
  for (std::int64_t i = 0; i < n; ++i)
    ASSERT_TRUE(test::same_bits(got[i], expect[i])) << "i = " << i << ": " << got[i] << " vs " << expect[i];
  // Bitwise too: NaN keys never compare equal to themselves.
  const auto after = in.download();
  ASSERT_EQ(after.size(), keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_TRUE(test::same_bits(after[i], keys[i])) << "input modified at " << i;
}

template <typename K>
void check_all(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (auto n : test::sort_sizes<K>())
    for (Shape shape : test::all_shapes()) {
      if (n > 100000 && shape != Shape::random && shape != Shape::special) continue;  // keep it quick
      SCOPED_TRACE("n = " + std::to_string(n) + ", " + test::shape_name(shape));
      const auto keys = test::make_keys<K>(n, shape, rng);
      for (bool descending : {false, true}) {
        SCOPED_TRACE(descending ? "descending" : "ascending");
        check_sort_keys(keys, descending, 0, 8 * sizeof(K));
        if (::testing::Test::HasFailure()) return;
      }
    }
}

TEST(DeviceRadixSortKeys, U32) { KNN_PRIM_REQUIRE_GPU(); KNN_PRIM_SEED(seed); check_all<std::uint32_t>(seed); }
TEST(DeviceRadixSortKeys, I32) { KNN_PRIM_REQUIRE_GPU(); KNN_PRIM_SEED(seed); check_all<std::int32_t>(seed); }
TEST(DeviceRadixSortKeys, F32) { KNN_PRIM_REQUIRE_GPU(); KNN_PRIM_SEED(seed); check_all<float>(seed); }
TEST(DeviceRadixSortKeys, U64) { KNN_PRIM_REQUIRE_GPU(); KNN_PRIM_SEED(seed); check_all<std::uint64_t>(seed); }
TEST(DeviceRadixSortKeys, I64) { KNN_PRIM_REQUIRE_GPU(); KNN_PRIM_SEED(seed); check_all<std::int64_t>(seed); }
TEST(DeviceRadixSortKeys, F64) { KNN_PRIM_REQUIRE_GPU(); KNN_PRIM_SEED(seed); check_all<double>(seed); }

TEST(DeviceRadixSortKeys, BitRanges) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  const std::int64_t n = 70001;
  const auto u32 = test::make_keys<std::uint32_t>(n, Shape::random, rng);
  for (auto range : {std::pair{0, 0}, std::pair{4, 20}, std::pair{0, 1}, std::pair{31, 32}, std::pair{8, 16}, std::pair{3, 32}}) {
    SCOPED_TRACE("bits [" + std::to_string(range.first) + ", " + std::to_string(range.second) + ")");
    check_sort_keys(u32, false, range.first, range.second);
    check_sort_keys(u32, true, range.first, range.second);
  }
  const auto f32 = test::make_keys<float>(n, Shape::special, rng);
  check_sort_keys(f32, false, 16, 32);
  const auto u64 = test::make_keys<std::uint64_t>(n, Shape::random, rng);
  check_sort_keys(u64, false, 0, 40);
  check_sort_keys(u64, true, 20, 64);
}

// Keys that do not start on a 16-byte boundary: the histogram reads the first few one by one,
// then whole 16-byte vectors, then the rest one by one. Every offset of a 4-byte key within a
// vector, and of an 8-byte key, at sizes around a vector's.
template <typename K>
void check_offsets(std::mt19937_64& rng) {
  for (std::int64_t n : {1, 2, 3, 4, 5, 7, 9, 33, 4099}) {
    const auto keys = test::make_keys<K>(n + 3, Shape::random, rng);
    const auto all_out = static_cast<std::int64_t>(keys.size());
    DeviceBuffer<K> in(keys), out(all_out);
    for (std::int64_t off = 0; off < 4 && off + n <= all_out; ++off) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", offset " + std::to_string(off));
      const std::vector<K> part(keys.begin() + off, keys.begin() + off + n);
      const auto expect = reference::permute(part, reference::sort_order(part, false, 0, 8 * sizeof(K)));
      std::size_t bytes = 0;
      PRIM_ASSERT(radix_sort_keys(nullptr, bytes, in.get() + off, out.get(), n));
      TempStorage temp(bytes);
      PRIM_ASSERT(radix_sort_keys(temp.get(), temp.bytes(), in.get() + off, out.get(), n));
      CUDA_ASSERT(cudaDeviceSynchronize());
      const auto got = out.download();
      for (std::int64_t i = 0; i < n; ++i) ASSERT_TRUE(test::same_bits(got[i], expect[i])) << "i = " << i;
    }
  }
}

TEST(DeviceRadixSortKeys, InputNotOnA16ByteBoundary) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  check_offsets<std::uint32_t>(rng);
  check_offsets<std::uint64_t>(rng);
}

TEST(DeviceRadixSortKeys, RejectsBadArguments) {
  std::size_t bytes = 0;
  const unsigned* in = nullptr;
  unsigned* out = nullptr;
  EXPECT_EQ(radix_sort_keys(nullptr, bytes, in, out, 10, 5, 4).code, Errc::invalid_argument);
  EXPECT_EQ(radix_sort_keys(nullptr, bytes, in, out, 10, 0, 33).code, Errc::invalid_argument);
  EXPECT_EQ(radix_sort_keys(nullptr, bytes, in, out, -1).code, Errc::invalid_argument);
  ASSERT_TRUE(radix_sort_keys(nullptr, bytes, in, out, 10).ok());
  alignas(256) static unsigned char fake[1 << 16];
  std::size_t fake_bytes = sizeof(fake);
  ASSERT_LE(bytes, fake_bytes);
  auto* same = reinterpret_cast<unsigned*>(fake);
  EXPECT_EQ(radix_sort_keys(fake, fake_bytes, same, same, 10).code, Errc::invalid_argument);
}

}  // namespace
