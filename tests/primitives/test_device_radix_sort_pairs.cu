// Device radix sort of key-value pairs: values follow their keys, ties keep input order
// (checked by carrying the input index as the value).
#include <knn/prim/device/device_radix_sort.cuh>

#include "radix_sort_cases.cuh"

namespace {
using namespace knn::prim;
using knn::prim::test::DeviceBuffer;
using knn::prim::test::Shape;
using knn::prim::test::TempStorage;

template <typename K, typename V>
void check_sort_pairs(const std::vector<K>& keys, bool descending) {
  const std::int64_t n = static_cast<std::int64_t>(keys.size());
  std::vector<V> values(n);
  for (std::int64_t i = 0; i < n; ++i) values[i] = static_cast<V>(i);
  const auto order = reference::sort_order(keys, descending);
  const auto expect_keys = reference::permute(keys, order);
  const auto expect_values = reference::permute(values, order);
  DeviceBuffer<K> kin(keys), kout(n);
  DeviceBuffer<V> vin(values), vout(n);
  auto run = [&](void* t, std::size_t& b) {
    return descending ? radix_sort_pairs_descending(t, b, kin.get(), kout.get(), vin.get(), vout.get(), n)
                      : radix_sort_pairs(t, b, kin.get(), kout.get(), vin.get(), vout.get(), n);
  };
  std::size_t bytes = 0;
  PRIM_ASSERT(run(nullptr, bytes));
  TempStorage temp(bytes);
  PRIM_ASSERT(run(temp.get(), temp.bytes()));
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto gk = kout.download();
  const auto gv = vout.download();
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_TRUE(test::same_bits(gk[i], expect_keys[i])) << "key, i = " << i;
    ASSERT_EQ(gv[i], expect_values[i]) << "value (input index), i = " << i;
  }
}

template <typename K, typename V>
void check_all(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (auto n : test::sort_sizes<K, V, true>())
    for (Shape shape : test::all_shapes()) {
      if (n > 100000 && shape != Shape::random && shape != Shape::few_distinct) continue;
      SCOPED_TRACE("n = " + std::to_string(n) + ", " + test::shape_name(shape));
      const auto keys = test::make_keys<K>(n, shape, rng);
      for (bool descending : {false, true}) {
        SCOPED_TRACE(descending ? "descending" : "ascending");
        check_sort_pairs<K, V>(keys, descending);
        if (::testing::Test::HasFailure()) return;
      }
    }
}

// float -> u32: the libknn case (distances with row indices).
TEST(DeviceRadixSortPairs, F32ToU32) { KNN_PRIM_REQUIRE_GPU(); KNN_PRIM_SEED(seed); check_all<float, std::uint32_t>(seed); }
TEST(DeviceRadixSortPairs, U32ToU32) { KNN_PRIM_REQUIRE_GPU(); KNN_PRIM_SEED(seed); check_all<std::uint32_t, std::uint32_t>(seed); }
TEST(DeviceRadixSortPairs, I64ToU32) { KNN_PRIM_REQUIRE_GPU(); KNN_PRIM_SEED(seed); check_all<std::int64_t, std::uint32_t>(seed); }
TEST(DeviceRadixSortPairs, F64ToI64) { KNN_PRIM_REQUIRE_GPU(); KNN_PRIM_SEED(seed); check_all<double, std::int64_t>(seed); }

}  // namespace
